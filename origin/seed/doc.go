// Package seed fills a tenant with a realistic demo catalog: currencies, a category tree,
// products with variants and stock, and CMS posts. `vitrine dev` uses it to seed the demo tenant
// on first start, and load tests use it to build large catalogs.
//
// # Invariants
//
//   - Deterministic: everything is generated from math/rand/v2 PCG sources seeded from
//     Options.Seed, never from global state or the clock, so the same Seed and Options give the
//     same catalog (ids, slugs, SKUs, prices, stock, texts) on an empty tenant. Products and posts
//     use separate random streams, so changing Options.Posts leaves the products unchanged. Post
//     dates are offsets from the clock of the transaction that writes them (store.Tx.Now), so a
//     store with a fixed clock gives identical timestamps too.
//   - Generation happens before each transaction, never inside the function given to
//     store.DB.WriteTx: a retried transaction writes the same values again.
//   - Bounded transactions: products are written in batches of at most Options.BatchProducts
//     products with their variants, capped so that a batch records at most
//     schema.MaxChangesPerTxn changes (one per product and one per variant, at most 1+6 per
//     product); categories and posts are batched likewise.
//   - Only an empty store is seeded: Demo returns ErrNotEmpty, having written nothing, when the
//     tenant already has products. The check and the first writes share one transaction.
package seed
