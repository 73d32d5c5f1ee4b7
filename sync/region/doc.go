// Package region keeps a region's copies of the central streams: it runs beside a region's NATS
// leaf node (a JetStream domain of its own, such as "eu") and makes the leaf hold mirrors of
// what the region's edges read from the central cluster (JetStream domain "central"):
//
//   - the state stream (VITRINE_STATE), filtered to the public subjects and the tenant
//     registry (StateFilters, what feed.Config.PublicFilters reads): private subjects never
//     reach the region;
//   - the snapshot bucket's stream (OBJ_vitrine-snapshots) and the media bucket's stream
//     (OBJ_vitrine-media), whole.
//
// Each mirror has the name of its source, so edges connected to the leaf node without a
// JetStream domain use them unchanged, and every read they make is answered in the region.
//
// # Invariants
//
//   - Sequences: a mirror stores each message at the sequence it has at the source, and fills
//     what its filter leaves out with skipped sequences (nats-server's mirror protocol), so a
//     snapshot's sequence and a follower's resume point mean the same at the hub and in the
//     region.
//   - Identity: a mirror's metadata carries its source's epoch (vitrine_epoch) and creation
//     time (vitrine_source_created, RFC 3339 with nanoseconds). When the source was recreated
//     (a database reset, `vitrine replica rebuild`), Mirror deletes the mirror and creates it
//     anew: a Follower then sees a new stream and bootstraps again. A mirror is never pointed
//     at a source other than the one its metadata names.
//   - Compaction: the state mirror keeps one message per subject and honours per-message TTLs,
//     like its source. Object bucket mirrors do not see the source's purges (mirrors copy
//     messages, not deletions): Mirror purges the subjects the source no longer holds, so
//     replaced snapshots and deleted media do not pile up in the region.
//   - A source that cannot be reached (the region cut off from the centre) leaves every mirror
//     as it is: the region's edges keep reading the last data, and the mirror catches up from
//     its last sequence when the link returns. Mirror answers the leaf node's own consumer
//     requests to an unreachable centre with an error (Run), so that nats-server's mirror is
//     not left waiting 30 s on a request the partition swallowed when the link returns.
//   - A Follower of a mirror reports the stream as heard from only while the mirror hears from
//     its source (feed.StreamCurrent): an edge of a cut-off region shows its staleness.
//
// Mirror is safe to run twice for the same region: every step reads the current state and
// converges on the same configuration.
package region
