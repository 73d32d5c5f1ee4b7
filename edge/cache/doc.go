// Package cache is the edge's rendered-response cache. It keeps the response bodies of anonymous
// public reads rendered once and compressed once per coding (gzip, zstd, brotli: the coding the
// filling request prefers at fill, another when a request first prefers it: BuildFor, Upgrade),
// so that a cache hit does no encoding, no compression and no allocation: it is a map lookup, a
// key comparison, a few atomic loads and an Accept-Encoding parse.
//
// The truth lives elsewhere (the edge's in-memory replica). The cache holds nothing but bodies
// rendered from it, and may drop any of them at any time.
//
// # Use
//
//	h := cache.Hash(key)
//	if e := c.Get(h, key, now); e != nil {
//		body, enc := e.Body(acceptEncoding)
//		// write e.Status, e.ContentType, e.ETag, e.Headers, Vary: Accept-Encoding,
//		// Content-Encoding: enc (when not nil) and body
//		return
//	}
//	deps := []cache.Dep{{Ctr: gen, Val: gen.Load()}} // loaded BEFORE reading the replica
//	body := render(replica)
//	e := cache.Build(key, 200, "application/json", body, deps, expires, headers, route)
//	c.Put(h, e)
//
// # Invariants
//
//   - Zero allocations on reads: Get (hit or miss) and Entry.Body allocate nothing. The one
//     exception is the first Get that finds an invalid entry: deleting it makes ristretto queue
//     one small item; the next Gets of that key are plain misses. Ristretto's access buffer also
//     amortises one 512-byte slice per 64 Gets when its policy goroutine takes a batch (measured
//     1-2 B/op, 0 allocs/op).
//   - Entries are immutable after Build and shared by every reader. The slices Get and Body
//     return must never be modified.
//   - Storage is best effort. Put may be dropped (ristretto's buffers or admission policy, an
//     entry over Config.MaxEntryBytes, an entry already invalid); correctness never depends on a
//     Put being kept, only hit ratio does.
//   - Validity: an entry is returned only while every Dep still holds (Ctr.Load() == Val) and
//     Expires has not passed. For this to be sound a writer must change the state before it bumps
//     a counter, and a renderer must load the counter values before it reads the state it
//     renders: then an entry rendered from state older than a counter can never be served.
//   - A hash collision is a miss, never a wrong body: Get compares the full key.
//   - Memory: MaxBytes counts keys, bodies and headers plus a fixed per-entry overhead, but the
//     process RSS attributable to the cache runs up to about 2x MaxBytes (ristretto's bookkeeping,
//     garbage awaiting collection, TinyLFU counters). Size MaxBytes to half the memory you grant
//     the cache. Ristretto replaces an existing key's entry without evicting, so the cost held
//     may pass MaxBytes by the growth of replaced entries until the next new entry evicts. The
//     compressors' state is outside the budget too: the shared zstd encoder keeps ~1.6 MiB per
//     concurrent Build (up to GOMAXPROCS), fasthttp pools its gzip and brotli writers.
//   - Responses served through Entry.Body vary by Accept-Encoding; the caller must send
//     "Vary: Accept-Encoding" with them so that shared caches downstream do not mix encodings.
package cache
