package cache_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/edge/cache"
)

func newCache(t testing.TB, cfg cache.Config) *cache.Cache {
	t.Helper()
	c, err := cache.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func counter(v uint64) *atomic.Uint64 {
	c := new(atomic.Uint64)
	c.Store(v)
	return c
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     cache.Config
		wantErr bool
		wantMax int64
	}{
		{"defaults", cache.Config{}, false, cache.DefaultMaxBytes},
		{"explicit", cache.Config{MaxBytes: 1 << 20, NumCounters: 1000, MaxEntryBytes: 1 << 10}, false, 1 << 20},
		{"tiny budget", cache.Config{MaxBytes: 1}, false, 1},
		{"negative MaxBytes", cache.Config{MaxBytes: -1}, true, 0},
		{"negative NumCounters", cache.Config{NumCounters: -1}, true, 0},
		{"negative MaxEntryBytes", cache.Config{MaxEntryBytes: -1}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cache.New(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New(%+v) error = %v, want error %v", tc.cfg, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			defer c.Close()
			if got := c.Metrics().MaxBytes; got != tc.wantMax {
				t.Errorf("MaxBytes = %d, want %d", got, tc.wantMax)
			}
		})
	}
}

func TestGetPut(t *testing.T) {
	key := []byte("t1:/products/42")
	body := productsJSON(2 << 10)
	moveGen := func(gen, _ *atomic.Uint64) { gen.Add(1) }
	moveProduct := func(_, product *atomic.Uint64) { product.Add(1) }

	tests := []struct {
		name    string
		expires bool          // the entry expires an hour from now
		at      time.Duration // Get's now, relative to Expires (or to an arbitrary instant)
		mutate  func(gen, product *atomic.Uint64)
		getKey  []byte // Get's key, with the hash of key: a forced collision; nil means key
		wantHit bool
	}{
		{name: "hit", wantHit: true},
		{name: "hit before expiry", expires: true, at: -1, wantHit: true},
		{name: "miss at expiry", expires: true, at: 0},
		{name: "miss after expiry", expires: true, at: time.Hour},
		{name: "miss when the generation moved", mutate: moveGen},
		{name: "miss when the entity moved", mutate: moveProduct},
		{name: "miss for another key under the same hash", getKey: []byte("t1:/products/43")},
		{name: "miss for a key prefix", getKey: key[:len(key)-1]},
		{name: "miss for a longer key", getKey: []byte("t1:/products/420")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, cache.Config{MaxBytes: 1 << 20})
			gen, product := counter(3), counter(10)
			base := int64(1_700_000_000_000_000_000)
			var expires int64
			if tc.expires {
				// Put checks expiry against the wall clock; Get takes an explicit now.
				expires = time.Now().Add(time.Hour).UnixNano()
				base = expires
			}
			e := cache.Build(key, 200, "application/json", body,
				[]cache.Dep{{Ctr: gen, Val: 3}, {Ctr: product, Val: 10}}, expires, nil, 1)
			h := cache.Hash(key)
			c.Put(h, e)
			c.Wait()
			if tc.mutate != nil {
				tc.mutate(gen, product)
			}
			getKey := key
			if tc.getKey != nil {
				getKey = tc.getKey
			}
			got := c.Get(h, getKey, base+int64(tc.at))
			if tc.wantHit && got != e {
				t.Fatalf("Get = %v, want the entry put", got)
			}
			if !tc.wantHit && got != nil {
				t.Fatalf("Get returned an entry, want a miss")
			}
		})
	}
}

func TestGetDeletesInvalidEntry(t *testing.T) {
	c := newCache(t, cache.Config{MaxBytes: 1 << 20})
	gen := counter(1)
	key := []byte("t1:/posts")
	h := cache.Hash(key)
	c.Put(h, cache.Build(key, 200, "application/json", productsJSON(1<<10), []cache.Dep{{Ctr: gen, Val: 1}}, 0, nil, 0))
	c.Wait()
	gen.Store(2)
	if c.Get(h, key, 0) != nil {
		t.Fatal("Get returned an entry whose generation moved")
	}
	gen.Store(1) // the entry would be valid again, but it has been deleted
	if c.Get(h, key, 0) != nil {
		t.Fatal("the invalid entry was not deleted")
	}
	m := c.Metrics()
	if m.Stale != 1 || m.Hits != 0 || m.Misses != 2 {
		t.Errorf("Metrics Stale, Hits, Misses = %d, %d, %d, want 1, 0, 2", m.Stale, m.Hits, m.Misses)
	}
}

func TestPutSkips(t *testing.T) {
	body := productsJSON(2 << 10)
	tests := []struct {
		name  string
		entry func() *cache.Entry
	}{
		{"expired", func() *cache.Entry {
			return cache.Build([]byte("k"), 200, "", body, nil, time.Now().Add(-time.Second).UnixNano(), nil, 0)
		}},
		{"already invalid", func() *cache.Entry {
			return cache.Build([]byte("k"), 200, "", body, []cache.Dep{{Ctr: counter(2), Val: 1}}, 0, nil, 0)
		}},
		{"nil", func() *cache.Entry { return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, cache.Config{MaxBytes: 1 << 20})
			c.Put(cache.Hash([]byte("k")), tc.entry())
			c.Wait()
			if m := c.Metrics(); m.Added != 0 || m.Used != 0 {
				t.Errorf("Put stored the entry: Added %d, Used %d", m.Added, m.Used)
			}
		})
	}
}

func TestPutHashZeroAndReplace(t *testing.T) {
	c := newCache(t, cache.Config{MaxBytes: 1 << 20})
	key := []byte("t1:/pages/about")
	first := cache.Build(key, 200, "text/html", []byte("first"), nil, 0, nil, 0)
	c.Put(0, first) // 0: Put hashes the key itself
	c.Wait()
	if got := c.Get(cache.Hash(key), key, 0); got != first {
		t.Fatalf("Get after Put(0, e) = %v, want the entry", got)
	}
	second := cache.Build(key, 200, "text/html", []byte("second"), nil, 0, nil, 0)
	c.Put(cache.Hash(key), second)
	c.Wait()
	if got := c.Get(cache.Hash(key), key, 0); got != second {
		t.Fatalf("Get after a second Put returned %q, want the second entry", got.Identity)
	}
}

func TestPutOverBudget(t *testing.T) {
	huge := bytes.Repeat(productsJSON(20<<10), 100) // 2 MB, more than the whole budget
	tests := []struct {
		name string
		cfg  cache.Config
	}{
		// Put refuses the entry itself: it costs more than MaxEntryBytes (default MaxBytes/8).
		{"over MaxEntryBytes", cache.Config{MaxBytes: 1 << 20}},
		// MaxEntryBytes is clamped to MaxBytes: ristretto replaces an existing key's entry
		// without checking the budget, so Put must never pass it an entry over MaxBytes.
		{"MaxEntryBytes above MaxBytes", cache.Config{MaxBytes: 1 << 20, MaxEntryBytes: 1 << 40}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, tc.cfg)
			small := cache.Build([]byte("small"), 200, "application/json", productsJSON(2<<10), nil, 0, nil, 0)
			c.Put(0, small)
			c.Wait()
			big := &cache.Entry{Key: []byte("huge"), Identity: huge}
			c.Put(0, big)
			// Over an existing key too: ristretto updates in place without checking the budget.
			c.Put(0, &cache.Entry{Key: []byte("small"), Identity: huge})
			c.Wait()
			if c.Get(cache.Hash([]byte("huge")), []byte("huge"), 0) != nil {
				t.Error("the entry over budget was stored")
			}
			if got := c.Get(cache.Hash([]byte("small")), []byte("small"), 0); got != small {
				t.Errorf("the small entry was lost or replaced by the huge one: %v", got != nil)
			}
			if m := c.Metrics(); m.Used > m.MaxBytes {
				t.Errorf("Used %d > MaxBytes %d", m.Used, m.MaxBytes)
			}
		})
	}
}

func TestEvictionKeepsBudget(t *testing.T) {
	c := newCache(t, cache.Config{MaxBytes: 256 << 10})
	body := productsJSON(4 << 10)
	var keys [][]byte
	for i := range 500 {
		key := []byte("t1:/products?page=" + strconv.Itoa(i))
		keys = append(keys, key)
		c.Put(0, cache.Build(key, 200, "application/json", body, nil, 0, nil, 0))
	}
	c.Wait()
	m := c.Metrics()
	if m.Used > m.MaxBytes {
		t.Errorf("Used %d > MaxBytes %d", m.Used, m.MaxBytes)
	}
	if m.Added == 0 || m.Added+m.Rejected+m.Dropped < 500 {
		t.Errorf("Added %d, Rejected %d, Dropped %d of 500 Puts", m.Added, m.Rejected, m.Dropped)
	}
	hits := 0
	for _, key := range keys {
		if e := c.Get(cache.Hash(key), key, 0); e != nil {
			hits++
			if !bytes.Equal(e.Key, key) {
				t.Fatalf("Get(%s) returned the entry of %s", key, e.Key)
			}
		}
	}
	if hits == 0 || hits == len(keys) {
		t.Errorf("%d of %d entries kept, want some but not all with a budget for a fraction", hits, len(keys))
	}
}

func TestZeroAllocs(t *testing.T) {
	c := newCache(t, cache.Config{MaxBytes: 1 << 20})
	gen := counter(1)
	key := []byte("t1:/wp-json/wp/v2/posts?per_page=10")
	stale := []byte("t1:/wp-json/wp/v2/pages")
	c.Put(0, cache.Build(key, 200, "application/json", productsJSON(2<<10), []cache.Dep{{Ctr: gen, Val: 1}}, 0,
		[][2][]byte{{[]byte("X-WP-Total"), []byte("10")}}, 0))
	c.Put(0, cache.Build(stale, 200, "application/json", productsJSON(2<<10), []cache.Dep{{Ctr: counter(5), Val: 4}}, 0, nil, 0))
	c.Wait()
	h := cache.Hash(key)
	e := c.Get(h, key, 0)
	if e == nil {
		t.Fatal("no hit")
	}
	// After its first Get deleted it, the stale key is a plain miss.
	c.Get(cache.Hash(stale), stale, 0)
	accept := []byte("gzip, deflate, br, zstd")

	// Ristretto's access buffer allocates one 512-byte slice per 64 Gets (BufferItems) when it
	// hands a full stripe to its policy; AllocsPerRun's integer division rounds that to 0,
	// which is the truth for this package's code.
	tests := []struct {
		name string
		f    func()
	}{
		{"Get hit", func() {
			if c.Get(h, key, 0) == nil {
				panic("miss")
			}
		}},
		{"Get hit and Body", func() { c.Get(h, key, 0).Body(accept) }},
		{"Get miss, absent", func() { c.Get(12345, []byte("absent"), 0) }},
		{"Get miss, collision", func() { c.Get(h, []byte("t1:/other"), 0) }},
		{"Get miss, deleted stale entry", func() { c.Get(cache.Hash(stale), stale, 0) }},
		{"Get miss, expired at now", func() { e := c.Get(h, key, 0); _ = e.Valid(1) }},
		{"Body", func() { e.Body(accept) }},
		{"Body, no header", func() { e.Body(nil) }},
		{"Valid", func() { e.Valid(0) }},
		{"Hash", func() { cache.Hash(key) }},
	}
	for _, tc := range tests {
		if n := testing.AllocsPerRun(1000, tc.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tc.name, n)
		}
	}
}

func TestConcurrent(t *testing.T) {
	c := newCache(t, cache.Config{MaxBytes: 512 << 10})
	const keys = 64
	type slot struct {
		key []byte
		ctr *atomic.Uint64
	}
	var slots [keys]slot
	for i := range slots {
		slots[i] = slot{key: []byte(fmt.Sprintf("t%d:/products?page=%d", i%4, i)), ctr: new(atomic.Uint64)}
	}
	render := func(key []byte, v uint64) []byte {
		return fmt.Appendf(nil, `{"key":%q,"version":%d,"pad":%q}`, key, v, bytes.Repeat([]byte("x"), 300))
	}

	var wg sync.WaitGroup
	var hits atomic.Int64
	deadline := time.Now().Add(500 * time.Millisecond)
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(deadline) {
				s := &slots[r.IntN(keys)]
				h := cache.Hash(s.key)
				switch op := r.IntN(10); {
				case op == 0: // a write: the state changes, then the counter moves
					s.ctr.Add(1)
				case op < 4: // a miss path: load the counter, render, put
					v := s.ctr.Load()
					c.Put(h, cache.Build(s.key, 200, "application/json", render(s.key, v),
						[]cache.Dep{{Ctr: s.ctr, Val: v}}, 0, nil, 0))
				default:
					e := c.Get(h, s.key, time.Now().UnixNano())
					if e == nil {
						continue
					}
					hits.Add(1)
					if !bytes.Equal(e.Key, s.key) {
						t.Errorf("Get(%s) returned the entry of %s", s.key, e.Key)
						return
					}
					v := e.Deps[0].Val
					if v > s.ctr.Load() {
						t.Errorf("entry from the future: version %d > counter", v)
						return
					}
					if body, _ := e.Body(nil); !bytes.Equal(body, render(s.key, v)) {
						t.Errorf("Get(%s) body %q does not match its version %d", s.key, body, v)
						return
					}
					if gz, enc := e.Body([]byte("gzip")); enc != nil && len(gz) == 0 {
						t.Errorf("empty gzip body")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	c.Wait()
	if hits.Load() == 0 {
		t.Error("no hits at all")
	}
	t.Logf("hits %d, metrics %+v", hits.Load(), c.Metrics())
}

func BenchmarkGetHit(b *testing.B) {
	c := newCache(b, cache.Config{MaxBytes: 64 << 20})
	gen, product := counter(1), counter(1)
	key := []byte("tenant-42:/wp-json/wc/store/v1/products?page=1&per_page=20")
	c.Put(0, cache.Build(key, 200, "application/json", productsJSON(20<<10),
		[]cache.Dep{{Ctr: gen, Val: 1}, {Ctr: product, Val: 1}}, 0, nil, 0))
	c.Wait()
	h := cache.Hash(key)
	now := time.Now().UnixNano()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if c.Get(h, key, now) == nil {
				b.Fatal("miss")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if c.Get(h, key, now) == nil {
					panic("miss")
				}
			}
		})
	})
	b.Run("hash+get+body", func(b *testing.B) {
		b.ReportAllocs()
		accept := []byte("gzip, deflate, br, zstd")
		for b.Loop() {
			e := c.Get(cache.Hash(key), key, now)
			if body, _ := e.Body(accept); len(body) == 0 {
				b.Fatal("empty body")
			}
		}
	})
}

func BenchmarkGetMiss(b *testing.B) {
	c := newCache(b, cache.Config{MaxBytes: 64 << 20})
	key := []byte("tenant-42:/wp-json/wc/store/v1/products?page=1&per_page=20")
	h := cache.Hash(key)
	b.ReportAllocs()
	for b.Loop() {
		if c.Get(h, key, 0) != nil {
			b.Fatal("hit")
		}
	}
}

func BenchmarkBody(b *testing.B) {
	e := cache.Build([]byte("k"), 200, "application/json", productsJSON(20<<10), nil, 0, nil, 0)
	for _, header := range []string{"gzip, deflate, br, zstd", "gzip, deflate", "br;q=1.0, gzip;q=0.8, *;q=0.1", ""} {
		h := []byte(header)
		b.Run(strconv.Quote(header), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Body(h)
			}
		})
	}
}
