package replica_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// The replica's memory budget (budget.go): which tenant is shed, what shedding drops, what it
// keeps (versions), stickiness, and re-admission at a later bootstrap.

// catalog returns the changes of one transaction writing n products to a fresh log of slug,
// and its head. Every product has the same encoded size (three-digit ids, same-length slugs).
func catalog(slug string, n int) []*schema.Change {
	w := &logWriter{log: slug, version: 100} // three-digit versions: every product is one size
	tx := w.begin()
	for i := range n {
		tx.putProduct(nil, product(int64(100+i), fmt.Sprintf("p-%03d", i), t0.Add(time.Duration(i)*time.Minute)))
	}
	return tx.commit()
}

// registry returns the platform batch registering active tenants of shard 1.
func registry(slugs ...string) []*schema.Change {
	s := newSite(nil, replica.Config{})
	var es []*schema.Tenant
	for _, slug := range slugs {
		e := tenantEntry(slug, 1, schema.TenantActive, slug+".example.com")
		e.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(es))
		es = append(es, e)
	}
	return s.register(es...)
}

// unitBytes is what one product of catalog counts against the budget (both of its states).
func unitBytes(t *testing.T) int64 {
	t.Helper()
	r := newReplica(replica.Config{})
	r.Reset("e1")
	feed(r, registry("one", "ten"), catalog("one", 1), catalog("ten", 10))
	r.Checkpoint()
	u := r.TenantBySlug("one").Snapshot().Bytes
	if u <= 0 || r.TenantBySlug("ten").Snapshot().Bytes != 10*u || r.Budget().HeldBytes != 11*u {
		t.Fatalf("catalog products are not of one size: one %d, ten %d, held %d", u, r.TenantBySlug("ten").Snapshot().Bytes, r.Budget().HeldBytes)
	}
	return u
}

// bootWith resets r to epoch e1 and delivers the registry of sizes' tenants, then their catalogs
// (sizes[slug] products) in order, then checkpoints.
func bootWith(r *replica.Replica, order []string, sizes map[string]int) {
	r.Reset("e1")
	feed(r, registry(order...))
	for _, slug := range order {
		feed(r, catalog(slug, sizes[slug]))
	}
	r.Checkpoint()
}

func TestBudgetShedsTheLargestTenant(t *testing.T) {
	u := unitBytes(t)
	sizes := map[string]int{"aa": 10, "bb": 20, "cc": 10}
	for _, order := range [][]string{{"aa", "bb", "cc"}, {"aa", "cc", "bb"}, {"bb", "aa", "cc"}, {"bb", "cc", "aa"}, {"cc", "aa", "bb"}, {"cc", "bb", "aa"}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			// 35 products' worth: a and c fit, not all three; b is the largest.
			r := newReplica(replica.Config{MaxBytes: 35 * u})
			bootWith(r, order, sizes)
			b := r.TenantBySlug("bb")
			if !r.Ready() || !b.Ready() {
				t.Fatalf("ready %v, b ready %v: a shed tenant is still served (forwarded)", r.Ready(), b.Ready())
			}
			got := r.Budget()
			if !slices.Equal(got.Shed, []string{"bb"}) || got.HeldBytes != 20*u || got.MaxBytes != 35*u {
				t.Fatalf("budget %+v, want b shed and 20 products held (%d bytes)", got, 20*u)
			}
			if !b.Shed() || r.TenantBySlug("aa").Shed() || r.TenantBySlug("cc").Shed() {
				t.Fatal("shed flags")
			}
			if s := b.Snapshot(); s.ProductCount() != 0 || s.Bytes != 0 || s.ProductBySlug("p-000") != nil {
				t.Fatalf("b's state was not dropped: %d products, %d bytes", s.ProductCount(), s.Bytes)
			}
			if b.Version() != 120 { // its head's
				t.Fatalf("b at version %d, want its head's 120", b.Version())
			}
			for _, slug := range []string{"aa", "cc"} {
				if n := r.TenantBySlug(slug).Snapshot().ProductCount(); n != 10 {
					t.Fatalf("%s holds %d products, want 10", slug, n)
				}
			}
		})
	}
}

func TestBudgetShedTenantTracksVersionsNotChanges(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 35 * u})
	bootWith(r, []string{"aa", "bb", "cc"}, map[string]int{"aa": 10, "bb": 20, "cc": 10})
	b := r.TenantBySlug("bb")
	site := b.Counter(replica.Site).Load()
	held := r.Budget().HeldBytes

	// A later transaction of b: its version is tracked, its state is not held.
	w := &logWriter{log: "bb", version: b.Version()}
	tx := w.begin()
	tx.putProduct(nil, product(900, "p-900", t0))
	feed(r, tx.commit())
	if b.Version() != w.version || b.Seen() != w.version || !b.WaitFor(w.version, time.Millisecond) {
		t.Fatalf("b at version %d (seen %d), want %d", b.Version(), b.Seen(), w.version)
	}
	if b.Snapshot().ProductCount() != 0 || r.Budget().HeldBytes != held {
		t.Fatalf("a shed tenant's change was held: %d products, held %d (was %d)", b.Snapshot().ProductCount(), r.Budget().HeldBytes, held)
	}
	if b.Counter(replica.Site).Load() != site {
		t.Fatal("a shed tenant's counters moved without a change to its cached bodies")
	}

	// A checkpoint with a batch in flight claims nothing past the last head; the batch's head
	// does.
	v := b.Version()
	tx = w.begin()
	tx.putProduct(nil, product(901, "p-901", t0))
	batch := tx.commit()
	feed(r, body(batch))
	r.Checkpoint()
	if b.Version() != v {
		t.Fatalf("b at version %d after a checkpoint with a batch in flight, want %d", b.Version(), v)
	}
	feed(r, batch[len(batch)-1:])
	if b.Version() != w.version {
		t.Fatalf("b at version %d after the batch's head, want %d", b.Version(), w.version)
	}
}

// A shed tenant's digests are not checked (it holds nothing to check): a head's version is
// claimed whatever its digest, no re-bootstrap is asked for, and with digests stamped a
// checkpoint claims nothing past the last head.
func TestBudgetShedTenantSkipsDigests(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 35 * u})
	bootWith(r, []string{"aa", "bb", "cc"}, map[string]int{"aa": 10, "bb": 20, "cc": 10})
	b := r.TenantBySlug("bb")
	w := &logWriter{log: "bb", version: b.Version()}
	tx := w.begin()
	tx.putProduct(nil, product(900, "p-900", t0))
	cs := tx.commit()
	cs[len(cs)-1].Digest = &schema.LogDigest{PubCount: 12345, PubSum: 1}
	feed(r, cs)
	r.Checkpoint()
	headAt := w.version
	if b.Version() != headAt || b.Held() || r.ResyncWanted() != "" || r.Stats().Disagreements != 0 {
		t.Fatalf("version %d (want %d), held %v, resync %q, disagreements %d", b.Version(), headAt, b.Held(), r.ResyncWanted(), r.Stats().Disagreements)
	}
	tx = w.begin()
	tx.putProduct(nil, product(901, "p-901", t0))
	feed(r, body(tx.commit()))
	r.Checkpoint()
	if b.Version() != headAt {
		t.Fatalf("with digests stamped, a checkpoint claimed %d past the last head %d", b.Version(), headAt)
	}
}

// Shedding bumps every counter a cached body of the tenant depends on, after the empty snapshot
// is published.
func TestBudgetShedInvalidatesCachedBodies(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 35 * u})
	r.Reset("e1")
	feed(r, registry("aa", "bb", "cc"), catalog("aa", 10), catalog("bb", 20))
	r.Checkpoint()
	b := r.TenantBySlug("bb")
	if b.Shed() {
		t.Fatal("b shed while it fits")
	}
	classes := []replica.Class{replica.Site, replica.Catalog, replica.Taxonomy, replica.Currencies, replica.Posts, replica.Sales, replica.Sections, replica.Listing}
	before := make([]uint64, len(classes))
	for i, c := range classes {
		before[i] = b.Counter(c).Load()
	}
	feed(r, catalog("cc", 10))
	if !b.Shed() {
		t.Fatal("b not shed")
	}
	for i, c := range classes {
		if b.Counter(c).Load() == before[i] {
			t.Errorf("class %d's counter did not move when b was shed", c)
		}
	}
}

func TestBudgetIsSticky(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 35 * u})
	bootWith(r, []string{"aa", "bb", "cc"}, map[string]int{"aa": 10, "bb": 20, "cc": 10})
	b := r.TenantBySlug("bb")
	// a empties its catalog: b would fit now, but stays shed for this generation.
	w := &logWriter{log: "aa", version: r.TenantBySlug("aa").Version()}
	tx := w.begin()
	for i := range 10 {
		tx.putProduct(product(int64(100+i), fmt.Sprintf("p-%03d", i), t0.Add(time.Duration(i)*time.Minute)), nil)
	}
	feed(r, tx.commit())
	r.Checkpoint()
	if r.TenantBySlug("aa").Snapshot().ProductCount() != 0 || r.Budget().HeldBytes >= 15*u {
		t.Fatalf("a's deletions: %d products, held %d", r.TenantBySlug("aa").Snapshot().ProductCount(), r.Budget().HeldBytes)
	}
	bw := &logWriter{log: "bb", version: b.Version()}
	tx = bw.begin()
	tx.putProduct(nil, product(900, "p-900", t0))
	feed(r, tx.commit())
	r.Checkpoint()
	if !b.Shed() || b.Snapshot().ProductCount() != 0 {
		t.Fatal("b was re-admitted within its generation")
	}
	// c grows past the budget on its own: the largest tenant not shed is now c.
	cw := &logWriter{log: "cc", version: r.TenantBySlug("cc").Version()}
	tx = cw.begin()
	for i := range 30 {
		tx.putProduct(nil, product(int64(500+i), fmt.Sprintf("q-%03d", i), t0))
	}
	feed(r, tx.commit())
	if got := r.Budget(); !slices.Equal(got.Shed, []string{"bb", "cc"}) || got.HeldBytes > 35*u {
		t.Fatalf("budget %+v, want b and c shed", got)
	}
}

// A later bootstrap re-admits a tenant shed by the state it replaces only when it fits the
// budget with 10% headroom; tenants never shed are admitted as long as they fit.
func TestBudgetReadmitsWithHeadroomAtBootstrap(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 35 * u})
	order := []string{"aa", "bb", "cc"}
	bootWith(r, order, map[string]int{"aa": 10, "bb": 20, "cc": 10})
	if got := r.Budget().Shed; !slices.Equal(got, []string{"bb"}) {
		t.Fatalf("shed %v, want [b]", got)
	}
	for _, tt := range []struct {
		name  string
		a     int
		shed  []string
		held  int64
		order []string
	}{
		// 34 of 35 fits, but not with headroom (31.5): b is shed again, even delivered before c.
		{"fits without headroom", 4, []string{"bb"}, 14, order},
		{"fits without headroom, b last", 4, []string{"bb"}, 14, []string{"aa", "cc", "bb"}},
		// 31 of 35: b is back.
		{"fits with headroom", 1, nil, 31, order},
		// The state b was re-admitted to did not shed it: the next bootstrap admits it as any
		// tenant (35 of 35).
		{"admitted tenants fit to the byte", 5, nil, 35, order},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bootWith(r, tt.order, map[string]int{"aa": tt.a, "bb": 20, "cc": 10})
			got := r.Budget()
			if !slices.Equal(got.Shed, tt.shed) || got.HeldBytes != tt.held*u {
				t.Fatalf("budget %+v, want shed %v and %d products held", got, tt.shed, tt.held)
			}
			if want := 20; tt.shed == nil && r.TenantBySlug("bb").Snapshot().ProductCount() != want {
				t.Fatalf("re-admitted b holds %d products", r.TenantBySlug("bb").Snapshot().ProductCount())
			}
		})
	}
}

// The registry is never shed: with a budget nothing fits, every tenant is shed, still resolves
// and is ready.
func TestBudgetNeverShedsTheRegistry(t *testing.T) {
	r := newReplica(replica.Config{MaxBytes: 1})
	bootWith(r, []string{"aa", "bb"}, map[string]int{"aa": 1, "bb": 2})
	if !r.Ready() || r.Lookup([]byte("aa.example.com"), nil) == nil || r.TenantBySlug("bb") == nil {
		t.Fatal("the registry did not survive a budget of one byte")
	}
	if got := r.Budget(); !slices.Equal(got.Shed, []string{"aa", "bb"}) || got.HeldBytes != 0 {
		t.Fatalf("budget %+v", got)
	}
}

// Without a budget nothing is shed, and the held bytes are the tenants' Snapshot.Bytes.
func TestBudgetUnlimitedAccountsOnly(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{})
	bootWith(r, []string{"aa", "bb"}, map[string]int{"aa": 100, "bb": 300})
	if got := r.Budget(); got.Shed != nil || got.MaxBytes != 0 || got.HeldBytes != 400*u {
		t.Fatalf("budget %+v, want 400 products held (%d bytes)", got, 400*u)
	}
}

// Changes buffered before a checkpoint count: a tenant whose first batch alone passes the budget
// is shed while it is delivered, before anything is applied.
func TestBudgetCountsBufferedChanges(t *testing.T) {
	u := unitBytes(t)
	r := newReplica(replica.Config{MaxBytes: 15 * u})
	r.Reset("e1")
	feed(r, registry("big", "small"), catalog("small", 5))
	big := catalog("big", 20)
	feed(r, big[:len(big)-1]) // no head yet
	tn := r.TenantBySlug("big")
	if !tn.Shed() || tn.Ready() || r.Budget().HeldBytes != 5*u {
		t.Fatalf("shed %v ready %v held %d: the buffered batch was held", tn.Shed(), tn.Ready(), r.Budget().HeldBytes)
	}
	feed(r, big[len(big)-1:])
	r.Checkpoint()
	if !tn.Ready() || tn.Version() != 120 || !r.Ready() {
		t.Fatalf("after its head: ready %v, version %d", tn.Ready(), tn.Version())
	}
}

// Readers never lock and never see a shed tenant's empty state without its flag: the flag is set
// before the empty snapshot is published. Run with -race.
func TestBudgetShedIsPublishedBeforeItsEmptySnapshot(t *testing.T) {
	u := unitBytes(t)
	for range 20 {
		r := newReplica(replica.Config{MaxBytes: 35 * u})
		r.Reset("e1")
		feed(r, registry("aa", "bb", "cc"), catalog("aa", 10), catalog("bb", 20))
		r.Checkpoint()
		b := r.TenantBySlug("bb")
		var stop atomic.Bool
		var bad atomic.Int64
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					if b.Snapshot().ProductCount() == 0 && !b.Shed() {
						bad.Add(1)
					}
				}
			}()
		}
		feed(r, catalog("cc", 10))
		stop.Store(true)
		wg.Wait()
		if bad.Load() != 0 || !b.Shed() {
			t.Fatalf("%d reads saw b's empty state without its shed flag", bad.Load())
		}
	}
}

// A tenant growing far past the budget leaves the live heap where it was; the same stream into
// a replica without a budget holds it (the control that makes the bound mean something).
func TestBudgetBoundsTheHeap(t *testing.T) {
	grow := func(r *replica.Replica) (heap int64) {
		r.Reset("e1")
		feed(r, registry("aa", "bb"), catalog("aa", 5))
		r.Checkpoint()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := &logWriter{log: "bb", version: 1000}
		desc := strings.Repeat("Made by hand from brass and oak, built to last and to be repaired. ", 30)
		for batch := range 40 {
			tx := w.begin()
			for i := range 50 {
				p := product(int64(10000+batch*50+i), fmt.Sprintf("p-%05d", batch*50+i), t0)
				p.Description = desc
				tx.putProduct(nil, p)
			}
			feed(r, tx.commit())
		}
		r.Checkpoint()
		runtime.GC()
		runtime.ReadMemStats(&after)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	u := unitBytes(t)
	budgeted := newReplica(replica.Config{MaxBytes: 20 * u})
	held := grow(budgeted)
	free := newReplica(replica.Config{})
	control := grow(free)
	raw := free.TenantBySlug("bb").Snapshot().Bytes
	t.Logf("%d bytes of JSON delivered: live heap +%d with the budget, +%d without", raw, held, control)
	if !budgeted.TenantBySlug("bb").Shed() || budgeted.TenantBySlug("bb").Version() != 3000 {
		t.Fatal("bb was not shed, or did not track its versions")
	}
	if raw < 3<<20 || control < raw {
		t.Fatalf("the control holds %d bytes of heap for %d of JSON: the bound below proves nothing", control, raw)
	}
	if held > raw/10 {
		t.Fatalf("the budgeted replica's heap grew by %d bytes for %d of JSON shed", held, raw)
	}
	runtime.KeepAlive(budgeted)
	runtime.KeepAlive(free)
}
