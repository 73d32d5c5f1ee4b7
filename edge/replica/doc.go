// Package replica is Vitrine's read engine: an in-memory replica of the replicated state, fed by
// the state stream (it implements feed.Sink), and the queries every read route answers from.
// Edges run it over the public subjects; the origin runs the same code over all subjects, so both
// give the same answer for the same entity.
//
// # Overview
//
// A Replica holds a generation: the tenant registry and one Tenant per log. A Tenant's state is
// an immutable Snapshot (persistent maps, so that a transaction changes a few paths instead of
// copying the catalog) swapped atomically when a batch of changes is applied. Readers load the
// current Snapshot and never lock. A Snapshot carries the search index of its public products
// (package search), updated with the products and variants each batch changes, so the swap that
// publishes a batch publishes its index too. A tenant's first index is built in one pass over
// its products, or read from the search index image a snapshot carries (Annex, a feed.AnnexSink;
// SnapshotAnnexes makes the images for the snapshot writer) when the image is of the state that
// first apply reaches: the same index either way, at a fraction of the build's cost.
//
// Changes are buffered per log and applied at checkpoints: the log's head marker, and the
// follower's "nothing pending" checkpoint for states the latest head already covers. The relay
// ends every publish of whole transactions with the head, sent after the changes it covers, and
// a change above the latest head waits for its own (a consumer between two messages of a
// publish is told that nothing is pending), so a Snapshot never shows part of a transaction. A tenant is
// served only once its log has had a head (its first checkpoint); until then it answers
// not-ready.
//
// Decoding a change's entity is most of what applying it costs and depends on the change alone:
// Prepare (feed.Preparer) decodes it ahead on the follower's decode pool and leaves it on the
// change; apply takes it when the change's data is still the data it was decoded from, and
// decodes otherwise, with the same decoder (schema.DecodeEntityInterned: encoding/json's result
// without reflection for the hot kinds, with the price maps and option lists a catalog repeats
// shared through the replica's schema.Interner).
//
// Every entity has two slots, one per visibility. A tombstone empties one slot; an edge only ever
// fills the public one. Public queries read public slots; the origin's authenticated reads prefer
// the private slot (drafts, protected content).
//
// # Invariants
//
//   - A Tenant's version only grows, and a Snapshot of version N contains every change of its log
//     up to N that the stream still holds, but for a tenant shed to keep within the memory budget
//     (Tenant.Shed, budget.go): its Snapshot is empty, its version still advances with its heads,
//     and nothing may answer from it.
//   - Within a slot, a change is applied only if its version is above the slot's version.
//   - A Snapshot's search index holds exactly its public, active products, priced in the currency
//     SearchIndex names (the store's default; a new default re-prices it in a new Snapshot).
//   - Apply and the Sink methods run on the follower's goroutine only. Everything readers touch
//     (Snapshot pointers, versions, counters, the registry) is read atomically.
//   - Counters used as cache dependencies are bumped after the Snapshot they describe is
//     published, so a cache filler that read the counter before the Snapshot never stores a body
//     newer counters would vouch for.
//   - Entities are never modified once decoded: Snapshots share them with their successors, and
//     entities share their price maps and option lists with each other.
package replica
