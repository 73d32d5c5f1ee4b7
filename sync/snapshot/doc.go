// Package snapshot writes and reads per-shard snapshots of the state stream's public subjects,
// kept in a JetStream object store bucket ("vitrine-snapshots"), so that a new edge loads its
// shards' state in one read per shard and follows the stream only from the point each snapshot
// stands at, instead of reading the last message of every subject from the stream.
//
// # Format
//
// A snapshot is: the magic "VTSNAP\x00\x01", the format version, its total length, the length of
// its header, the header (stream epoch and creation time, shard token, stream sequence S, time
// taken, time of the full pass it descends from, for the registry the shards listed and the
// sequence they were listed at, every log's head version, the record count), the records
// (sequence delta, subject, message data, and the message's change envelope as the writer decoded
// it: changes.go) compressed with zstd, the annexes (annex.go; their length is the header's last
// field), and an xxhash64 of every byte before it. Format 2 added the envelopes, format 3 the
// annexes; this build writes 3, reads 2 (as a snapshot without annexes) and 3, and refuses 1 like
// any unknown version.
//
// # Annexes
//
// An annex is state derived from the records that a reader may use instead of deriving it
// itself (feed.Annex): a shard's snapshot carries the search index image of each of its tenants
// when the Writer is given an Annexes function (the relay's: edge/replica.SnapshotAnnexes, which
// loads the shard into a replica as an edge does); a pass keeps the annexes of the logs whose
// head (and the registry) did not move since its previous snapshot, and has the others made from
// those logs' records alone. Annexes are never needed: a reader that
// cannot use one derives the state from the records, and a writer that fails to make them writes
// the snapshot without. A malformed annex section (which the checksum cannot catch when a writer
// made it so) makes the Source refuse the snapshot, as malformed records do.
//
// # Loading
//
// Changes reads the records the way an edge loads them: into blocks of about 1 MiB that the
// records' data slices point into, with each change built from its envelope (no JSON scan of
// the message) in blocks of 256 changes. What a load allocates for the records is thus a few
// large blocks, freed whole once the replica has applied the changes, and never shares memory
// pages with the entities the replica keeps: with one small allocation per record, freed
// amid the entities decoded at the same time, a snapshot bootstrap left the heap with about 30%
// more memory in use than the live data, which the process could not return to the system. Open refuses a wrong magic, an unknown version, a length that does not match
// (truncated, or bytes after the end) and a wrong checksum; Check refuses another epoch, another
// incarnation of the stream (creation time), another shard and too great an age. Decoding never
// panics and never allocates much more than the bytes it is given justify, whatever they hold.
//
// # Writing
//
// A Writer runs in the relay process, and writes only while that relay holds its lease (Run's
// leader function). A pass reads the stream's last sequence L and the head subjects present at
// L (one request), which name the shards with public subjects; then, per shard and for the
// registry, it reads the shard's public filter with an ordered consumer until nothing is
// pending, and Puts the result as "shard-<n>" or "platform", replacing the previous object (the
// object store writes the new chunks, then the meta message, then purges the old chunks).
//
// Incremental passes start from the previous snapshot (the bytes this writer last wrote, or the
// bucket's) and read only the messages after its S (DeliverByStartSequence). That is valid only
// for the same stream (epoch and creation time), when the previous snapshot is younger than
// half the tombstone horizon and the full pass it descends from too (so a snapshot never keeps
// tombstones the stream expired for long); otherwise the pass is full (DeliverLastPerSubject).
// A shard with nothing new is left as it is, unless its snapshot is older than a quarter of the
// horizon.
//
// Two writers overlapping at a lease hand-over are harmless: each snapshot is a consistent
// point of the stream (below), whichever writer's Put lands last.
//
// # Invariants
//
//   - A snapshot at S holds, for every subject of its shard's public filter, exactly the last
//     message with a sequence <= S, in stream order: S = max(L read before the consumer was
//     created, the highest sequence delivered), and the consumer is read until nothing is
//     pending.
//   - The registry's snapshot lists every shard that had a public message at or below its
//     ListedAt: a shard it does not list needs no snapshot up to there.
//   - A Source hands a Follower a snapshot only after verifying its checksum, stream identity,
//     shard and age (younger than half the tombstone horizon, so every deletion after S is
//     still in the stream); any failure makes the Follower bootstrap from the stream alone.
package snapshot
