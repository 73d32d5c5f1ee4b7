package cache

import (
	"bytes"
	"errors"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
)

// DefaultMaxBytes is the default of Config.MaxBytes, 256 MiB.
const DefaultMaxBytes = 256 << 20

const (
	// expectedEntrySize is what New divides MaxBytes by to estimate the number of entries when
	// full, for the default NumCounters.
	expectedEntrySize = 8 << 10
	minNumCounters    = 1 << 10
)

// entryOverhead is the fixed cost Put adds to every entry on top of its bytes, an estimate of the
// memory an entry takes besides them: the Entry struct (256 bytes on 64-bit platforms) and its
// lines cell (16), its ristretto store item and map slot, its policy key-cost record and
// expiration bucket slot, and the malloc rounding of the entry's allocations. The header lines a
// server keeps with the entry once it is served (Entry.Lines, a few hundred bytes) are not
// counted.
const entryOverhead = 400

// Config configures a Cache.
type Config struct {
	// MaxBytes is the budget for all entries (keys + bodies + headers + a fixed per-entry
	// overhead); default 256 MiB. The process's RSS for the cache runs up to about 2x MaxBytes.
	MaxBytes int64
	// NumCounters is the number of TinyLFU counters; ristretto wants about 10 per entry the cache
	// holds when full. Default: 10 × MaxBytes / 8 KiB (at least 1024).
	NumCounters int64
	// MaxEntryBytes is the largest entry cost Put stores; larger entries are not cached, so that
	// one huge response cannot evict a large part of the cache. Default: MaxBytes / 8; values
	// above MaxBytes mean MaxBytes (ristretto replaces an entry in place without checking the
	// budget, so Put must never hand it an entry larger than the whole budget).
	MaxEntryBytes int64
}

// Cache is the rendered-response cache: a ristretto cache of *Entry keyed by Hash(Entry.Key).
// All its methods are safe for concurrent use, except Close.
type Cache struct {
	store    *ristretto.Cache[uint64, *Entry]
	maxEntry int64

	// Rare outcomes, counted for Metrics; never touched on a plain hit or miss.
	stale      atomic.Uint64
	collisions atomic.Uint64
	oversize   atomic.Uint64
}

// New returns a Cache configured by cfg, with defaults for its zero fields.
func New(cfg Config) (*Cache, error) {
	if cfg.MaxBytes < 0 || cfg.NumCounters < 0 || cfg.MaxEntryBytes < 0 {
		return nil, errors.New("cache: negative Config value")
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.NumCounters == 0 {
		cfg.NumCounters = max(10*cfg.MaxBytes/expectedEntrySize, minNumCounters)
	}
	if cfg.MaxEntryBytes == 0 {
		cfg.MaxEntryBytes = cfg.MaxBytes / 8
	}
	cfg.MaxEntryBytes = min(cfg.MaxEntryBytes, cfg.MaxBytes)
	store, err := ristretto.NewCache(&ristretto.Config[uint64, *Entry]{
		NumCounters: cfg.NumCounters,
		MaxCost:     cfg.MaxBytes,
		BufferItems: 64,
		Metrics:     true,
		// Keys are already xxhash values; ristretto's default would box them through an
		// interface. The conflict hash is 0: Get compares the full key instead.
		KeyToHash: func(h uint64) (uint64, uint64) { return h, 0 },
		// Costs are bytes and include a per-entry overhead; ristretto's internal ~56 bytes per
		// item would otherwise be added and, with small costs, crowd out most entries.
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, err
	}
	return &Cache{store: store, maxEntry: cfg.MaxEntryBytes}, nil
}

// Close stops the cache's goroutines and drops every entry. It must be called once, after every
// other use of the cache has returned; methods called after Close miss and store nothing.
func (c *Cache) Close() {
	c.store.Close()
}

// Hash returns the 64-bit hash used as the ristretto key for a cache key (xxhash).
func Hash(key []byte) uint64 {
	return xxhash.Sum64(key)
}

// Get returns the entry for key, whose hash is Hash(key), if it is present, its Key equals key
// and it is Valid(now); otherwise nil. An invalid entry found is deleted (best effort: a fresh
// entry Put concurrently under the same hash may be deleted with it; the deletion is queued to
// ristretto's policy goroutine, and waits for room when that queue is full). Get does not
// allocate, except for that deletion.
func (c *Cache) Get(hash uint64, key []byte, now int64) *Entry {
	e, ok := c.store.Get(hash)
	if !ok || e == nil {
		return nil
	}
	if !bytes.Equal(e.Key, key) {
		c.collisions.Add(1)
		return nil
	}
	if !e.Valid(now) {
		c.stale.Add(1)
		c.store.Del(hash)
		return nil
	}
	return e
}

// Put stores e under hash, which must be Hash(e.Key) (the hash given to Get); 0 means compute it.
// The cost is the bytes of the key, bodies, content type, ETag and headers plus a fixed per-entry
// overhead. Put is best effort: ristretto may drop or refuse the entry, and Put itself skips an
// entry that is already invalid or costs more than Config.MaxEntryBytes. An entry with Expires
// also gets a ristretto TTL, so that its memory is reclaimed even if it is never read again.
func (c *Cache) Put(hash uint64, e *Entry) {
	if e == nil {
		return
	}
	if hash == 0 {
		hash = Hash(e.Key)
	}
	cost := entryCost(e)
	if cost > c.maxEntry {
		c.oversize.Add(1)
		return
	}
	now := time.Now().UnixNano()
	if !e.Valid(now) {
		return
	}
	var ttl time.Duration
	if e.Expires != 0 {
		ttl = time.Duration(e.Expires - now) // > 0: e is valid at now
	}
	c.store.SetWithTTL(hash, e, cost, ttl)
}

// entryCost is the budget an entry takes: its bytes plus entryOverhead.
func entryCost(e *Entry) int64 {
	n := len(e.Key) + len(e.ContentType) + len(e.ETag) +
		len(e.Identity) + len(e.Gzip) + len(e.Zstd) + len(e.Brotli) +
		len(e.Deps)*16
	for _, h := range e.Headers {
		n += 48 + len(h[0]) + len(h[1]) // 48: the two slice headers of a pair
	}
	return int64(n) + entryOverhead
}

// Wait blocks until the Puts made before it are applied (or dropped). Tests use it; production
// code has no reason to.
func (c *Cache) Wait() {
	c.store.Wait()
}

// Metrics is a snapshot of the cache's counters. Counters are updated without locks and read
// one by one, so a snapshot taken under load is approximate.
type Metrics struct {
	// Hits and Misses count Get calls that returned an entry and nil.
	Hits, Misses uint64
	// Stale counts Gets that found an invalid entry (and deleted it); Collisions counts Gets
	// that found another key's entry under the same hash. Both are included in Misses.
	Stale, Collisions uint64
	// Oversize counts Puts skipped because the entry cost more than Config.MaxEntryBytes.
	Oversize uint64
	// Added, Updated and Evicted count entries ristretto admitted, replaced in place and evicted.
	Added, Updated, Evicted uint64
	// Dropped counts Puts ristretto dropped because its buffer was full; Rejected counts Puts its
	// admission policy refused.
	Dropped, Rejected uint64
	// CostAdded and CostEvicted are the total costs admitted and evicted, in bytes.
	CostAdded, CostEvicted uint64
	// Used is the cost of the entries held now, in bytes, and MaxBytes the budget.
	Used, MaxBytes int64
}

// Metrics returns a snapshot of the cache's counters.
func (c *Cache) Metrics() Metrics {
	m := c.store.Metrics
	stale, collisions := c.stale.Load(), c.collisions.Load()
	found := m.Hits()
	hits := uint64(0)
	if found > stale+collisions {
		hits = found - stale - collisions
	}
	return Metrics{
		Hits:        hits,
		Misses:      m.Misses() + (found - hits),
		Stale:       stale,
		Collisions:  collisions,
		Oversize:    c.oversize.Load(),
		Added:       m.KeysAdded(),
		Updated:     m.KeysUpdated(),
		Evicted:     m.KeysEvicted(),
		Dropped:     m.SetsDropped(),
		Rejected:    m.SetsRejected(),
		CostAdded:   m.CostAdded(),
		CostEvicted: m.CostEvicted(),
		Used:        c.store.MaxCost() - c.store.RemainingCost(),
		MaxBytes:    c.store.MaxCost(),
	}
}
