// Package schema is Vitrine's contract: the domain types every process shares, the change
// messages that carry them from the origin to the replicas, the error values and their codes,
// the route table, the capabilities of staff roles, and the JSON shapes the two HTTP interfaces
// render.
//
// # Invariants
//
//   - schema imports only the standard library. It holds nouns, validation and encoding; nothing
//     in it performs I/O.
//   - Money is integer minor units of a currency; a currency's exponent says how many of them make
//     a major unit (JPY 0, USD 2, KWD 3). No float ever holds money.
//   - Every replicated entity carries the log version at which it was last written. Versions are
//     per tenant and strictly increasing; a newer version of an entity always replaces an older one.
//   - A Change is immutable once written to the replication outbox: any process that publishes or
//     applies it must produce the same bytes and the same state.
//   - Ids exposed by the CMS interface are integers below 2^53 (MaxExposedID).
//   - DecodeChange and DecodeEntity give exactly encoding/json's result (value and error) for every
//     input; their reflection-free paths hand whatever they do not handle to encoding/json.
package schema
