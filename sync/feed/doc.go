// Package feed is the replication stream as both of its ends see it: the JetStream stream
// configuration, the subject layout, the fenced publish the relay uses, and the Follower
// that bootstraps a replica from the stream and keeps it current.
//
// # Subjects
//
// Tenant logs: <prefix>.<shard>.<tenant>.<pub|priv>.<kind>.<id>, and each log's head marker at
// <prefix>.<shard>.<tenant>.pub.log.head. The tenant registry: <prefix>._platform.tenant.<slug>,
// head <prefix>._platform.log.head. The stream keeps one message per subject (the latest state
// or a tombstone); tombstones carry a per-message TTL, the tombstone horizon. Domain events go
// to a separate stream on <prefix>_events.<tenant>.<kind>, and origins hint relays on the core
// subject <prefix>_wake; neither overlaps the state stream's <prefix>.>.
//
// # Publishing
//
// The relay publishes a log's changes in version order, whole transactions at a time, each
// publish ending with the log's head marker (Publish). Every message carries
// Nats-Expected-Last-Subject-Sequence for the head subject, so a publisher that does not know the
// current head (a zombie that lost its lease) has everything refused from the moment the head
// moved, and the head is sent only once everything before it was stored. A publish that fails
// part-way leaves changes above the head; readers hold such changes until a head covers them, and
// the retry sends them all again, in order, without Nats-Msg-Ids (Message.MsgID). (Atomic
// batches, used before, cost nats-server a file store per batch and never isolated consumers
// from a batch being stored.)
//
// # Following
//
// A Follower creates an ordered consumer with DeliverLastPerSubject on its subject filter and
// hands every change to a Sink. Two kinds of checkpoint tell the Sink when buffered changes may
// be applied: a log's head marker (everything of that log up to the head's version is in), and a
// message delivered with nothing pending (everything published so far is in). A change of the
// stream's epoch, the stream's disappearance, or an absence longer than the tombstone horizon
// makes the Follower start over with Sink.Reset.
//
// # Snapshots
//
// A Follower given a SnapshotSource (UseSnapshots; edges, whose filters are public shard
// filters) starts each bootstrap from the snapshots of its shards and of the registry: it hands
// their annexes to the Sink when it is an AnnexSink (derived state, such as a tenant's search
// index, that the Sink may use instead of deriving it), then their changes (prepared on a worker
// pool when the Sink is a Preparer, delivered in order), then reads the stream from the lowest snapshot's sequence + 1, skipping each shard's
// messages at or below its own snapshot's. Checkpoints work as above. Any snapshot it cannot use
// makes it count the reason, Reset the Sink and bootstrap from the stream alone; so does a
// bootstrap the Sink asked for (Resyncer).
//
// # Regional mirrors
//
// A Follower may read a region's mirror of the state stream (package region) exactly as the
// stream itself: the mirror keeps the source's sequences, and its metadata names the source's
// epoch and creation time (StreamIdentity), so the centre's snapshots apply to it. While the
// mirror hears nothing from its source, the Follower does not report the stream as heard from
// (StreamCurrent).
package feed
