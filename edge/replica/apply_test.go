package replica_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

func TestApplyIsAtomicAtHead(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	before := tn.Snapshot()
	v0 := tn.Version()

	w := s.log("shop")
	tx := w.begin()
	old10 := *before.Product(10, replica.Public)
	p10 := old10
	p10.Title = "Alpha renamed"
	tx.putProduct(&old10, &p10)
	tx.putProduct(nil, product(13, "delta", t0.Add(3*time.Hour)))
	tx.putProduct(before.Product(12, replica.Public), nil)
	c1 := category(1, "boots", 0)
	tx.putCategory(true, c1, 1)
	tx.putPost(nil, post(32, "news", "News", schema.StatusPublish, t0.Add(5*time.Hour)))
	batch := tx.commit()

	feed(s.r, body(batch))
	if got := tn.Snapshot(); got != before {
		t.Fatalf("Snapshot() changed before the head, want the previous snapshot")
	}
	if got := tn.Version(); got != v0 {
		t.Fatalf("Version() = %d before the head, want %d", got, v0)
	}
	if got := tn.Seen(); got != w.version {
		t.Fatalf("Seen() = %d before the head, want %d", got, w.version)
	}
	sn := tn.Snapshot()
	if got := sn.Product(10, replica.Public).Title; got != "Product alpha" {
		t.Fatalf("product 10 title = %q before the head, want %q", got, "Product alpha")
	}
	if sn.ProductBySlug("delta") != nil || sn.ProductBySlug("gamma") == nil || sn.Category(1).Slug != "shoes" || sn.Post(32, replica.Public) != nil {
		t.Fatalf("part of the batch is visible before its head")
	}

	feed(s.r, batch[len(batch)-1:])
	sn = tn.Snapshot()
	if got := tn.Version(); got != w.version {
		t.Fatalf("Version() = %d after the head, want %d", got, w.version)
	}
	if sn.Version != w.version {
		t.Fatalf("Snapshot().Version = %d after the head, want %d", sn.Version, w.version)
	}
	if got := sn.Product(10, replica.Public).Title; got != "Alpha renamed" {
		t.Fatalf("product 10 title = %q after the head, want %q", got, "Alpha renamed")
	}
	if sn.ProductBySlug("delta") == nil {
		t.Fatalf("ProductBySlug(delta) = nil after the head, want the new product")
	}
	if sn.ProductBySlug("gamma") != nil || sn.Product(12, replica.Full) != nil {
		t.Fatalf("deleted product 12 still visible after the head")
	}
	if got := sn.Category(1).Slug; got != "boots" {
		t.Fatalf("category 1 slug = %q after the head, want boots", got)
	}
	if sn.Post(32, replica.Public) == nil {
		t.Fatalf("post 32 = nil after the head, want the new post")
	}
	if got := sn.ProductCount(); got != 3 {
		t.Fatalf("ProductCount() = %d after the head, want 3", got)
	}
	// The previous snapshot is immutable: it still answers with the old state.
	if got := before.Product(10, replica.Public).Title; got != "Product alpha" {
		t.Fatalf("the previous snapshot changed: product 10 title = %q, want %q", got, "Product alpha")
	}
	if before.ProductBySlug("gamma") == nil || before.ProductBySlug("delta") != nil || before.ProductCount() != 3 || before.Category(1).Slug != "shoes" {
		t.Fatalf("the previous snapshot changed after a later apply")
	}
}

// TestSnapshotsAreImmutable applies many batches and checks that every snapshot taken along the way
// still answers as it did when it was current, both for the snapshot the bootstrap filled in place
// and for those path-copied from it.
func TestSnapshotsAreImmutable(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	type seen struct {
		sn     *replica.Snapshot
		titles string
		count  int
	}
	describe := func(sn *replica.Snapshot) string {
		ps, _ := sn.Products(0, 1000)
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%d:%s:%s;", p.ID, p.Slug, p.Title)
			for _, v := range sn.Variants(p.ID) {
				fmt.Fprintf(&b, "v%d@%d;", v.ID, v.Position)
			}
		}
		for _, c := range sn.Categories() {
			fmt.Fprintf(&b, "c%d:%s;", c.ID, c.Name)
		}
		return b.String()
	}
	var history []seen
	cur := map[int64]*schema.Product{}
	for _, id := range []int64{10, 11, 12} {
		cur[id] = tn.Snapshot().Product(schema.ProductID(id), replica.Public)
	}
	for i := 0; i < 60; i++ {
		sn := tn.Snapshot()
		history = append(history, seen{sn, describe(sn), sn.ProductCount()})
		tx := w.begin()
		id := int64(100 + i)
		p := product(id, fmt.Sprintf("p-%d", id), t0.Add(time.Duration(i)*time.Minute))
		tx.putProduct(nil, p)
		cur[id] = p
		tx.putVariant(nil, p, nil, variant(1000+id, id, i%3, schema.InStock))
		if i%4 == 0 {
			victim := int64(100 + i/2)
			if old := cur[victim]; old != nil {
				np := *old
				np.Title = fmt.Sprintf("renamed %d", i)
				tx.putProduct(old, &np)
				cur[victim] = &np
			}
		}
		if i%7 == 0 {
			tx.putCategory(true, category(1, "shoes", 0), 1)
		}
		feed(s.r, tx.commit())
	}
	for i, h := range history {
		if got := describe(h.sn); got != h.titles {
			t.Fatalf("snapshot %d (version %d) changed after later applies:\n got %s\nwant %s", i, h.sn.Version, got, h.titles)
		}
		if got := h.sn.ProductCount(); got != h.count {
			t.Fatalf("snapshot %d ProductCount() = %d, want %d", i, got, h.count)
		}
	}
}

// TestConcurrentReadersSeeWholeBatches renames two products to the same generation in every batch
// while readers hammer Snapshot(): a reader must never see the two names disagree. Run with -race.
func TestConcurrentReadersSeeWholeBatches(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	cur10, cur11 := sn.Product(10, replica.Public), sn.Product(11, replica.Public)
	rename := func(gen int) []*schema.Change {
		tx := w.begin()
		n10, n11 := *cur10, *cur11
		n10.Title, n11.Title = fmt.Sprintf("gen %d", gen), fmt.Sprintf("gen %d", gen)
		tx.putProduct(cur10, &n10)
		tx.putProduct(cur11, &n11)
		cur10, cur11 = &n10, &n11
		return tx.commit()
	}
	feed(s.r, rename(0))

	const readers, batches = 4, 400
	stop := make(chan struct{})
	errs := make(chan string, readers)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lastVersion int64
			lastGen := -1
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = tn.ItemCounter(schema.KindProduct, 10).Load()
				_ = tn.Counter(replica.Catalog).Load()
				sn := tn.Snapshot()
				a, b := sn.Product(10, replica.Public), sn.Product(11, replica.Public)
				if a == nil || b == nil {
					errs <- fmt.Sprintf("version %d: product missing (10: %v, 11: %v)", sn.Version, a != nil, b != nil)
					return
				}
				if a.Title != b.Title {
					errs <- fmt.Sprintf("version %d shows a partial batch: product 10 %q, product 11 %q", sn.Version, a.Title, b.Title)
					return
				}
				ps, _ := sn.Products(0, 10)
				for _, p := range ps {
					if (p.ID == 10 || p.ID == 11) && p.Title != a.Title {
						errs <- fmt.Sprintf("version %d: Products() shows %q for product %d, Product() shows %q", sn.Version, p.Title, p.ID, a.Title)
						return
					}
				}
				var gen int
				fmt.Sscanf(a.Title, "gen %d", &gen)
				if sn.Version < lastVersion || gen < lastGen {
					errs <- fmt.Sprintf("went back in time: version %d gen %d after version %d gen %d", sn.Version, gen, lastVersion, lastGen)
					return
				}
				lastVersion, lastGen = sn.Version, gen
			}
		}()
	}
	for g := 1; g <= batches; g++ {
		feed(s.r, rename(g))
		if g%50 == 0 {
			s.r.Checkpoint()
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got, want := tn.Snapshot().Product(10, replica.Public).Title, fmt.Sprintf("gen %d", batches); got != want {
		t.Fatalf("final title = %q, want %q", got, want)
	}
}

func TestCheckpoint(t *testing.T) {
	t.Run("keeps a batch in flight buffered until its head", func(t *testing.T) {
		// The relay's changes reach the stream one message at a time before their head, and a
		// consumer reading between two of them is told nothing is pending: the follower
		// checkpoints there.
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		w := s.log("shop")
		v0, sn := tn.Version(), tn.Snapshot()
		tx := w.begin()
		tx.putProduct(nil, product(13, "delta", t0.Add(3*time.Hour)))
		tx.putProduct(nil, product(14, "epsilon", t0.Add(4*time.Hour)))
		batch := tx.commit()
		for i := 1; i < len(batch); i++ {
			feed(s.r, batch[i-1:i])
			s.r.Checkpoint()
			if tn.Version() != v0 || tn.Snapshot() != sn {
				t.Fatalf("after %d of %d changes and a checkpoint: version %d (want %d), snapshot replaced: part of a transaction shown",
					i, len(batch)-1, tn.Version(), v0)
			}
		}
		feed(s.r, batch[len(batch)-1:])
		if got := tn.Version(); got != w.version {
			t.Fatalf("Version() = %d after the head, want %d", got, w.version)
		}
		if tn.Snapshot().ProductBySlug("delta") == nil || tn.Snapshot().ProductBySlug("epsilon") == nil {
			t.Fatalf("the head did not apply its batch")
		}
		// Nothing buffered: a checkpoint publishes nothing new.
		sn = tn.Snapshot()
		s.r.Checkpoint()
		if tn.Snapshot() != sn {
			t.Fatalf("an idle Checkpoint published a new snapshot")
		}
	})
	t.Run("applies buffered states its head covers", func(t *testing.T) {
		// A state republished at or below the latest head's version (a relay's repair sends its
		// states in batches before its head) is no batch in flight: a checkpoint applies it.
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		v := tn.Version()
		p := product(99, "omega", t0.Add(5*time.Hour))
		p.Version = v
		feed(s.r, []*schema.Change{chg("shop", schema.KindProduct, "99", schema.Pub, p, v)})
		if tn.Snapshot().ProductBySlug("omega") != nil {
			t.Fatalf("a buffered state visible before the checkpoint")
		}
		s.r.Checkpoint()
		if tn.Snapshot().ProductBySlug("omega") == nil || tn.Version() != v {
			t.Fatalf("after the checkpoint: omega %v, version %d (want %d)", tn.Snapshot().ProductBySlug("omega") != nil, tn.Version(), v)
		}
	})
	t.Run("does not make a head-less log ready", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		s.r.Reset("e")
		feed(s.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
		batch := s.seedShop("shop")
		feed(s.r, body(batch))
		s.r.Checkpoint()
		tn := s.r.TenantBySlug("shop")
		if tn == nil {
			t.Fatalf("TenantBySlug(shop) = nil, want the registered tenant")
		}
		if tn.Ready() {
			t.Fatalf("Ready() = true after Checkpoint without a head, want false")
		}
		if got := tn.Version(); got != 0 {
			t.Fatalf("Version() = %d after Checkpoint without a head, want 0", got)
		}
		if got := tn.Snapshot().ProductCount(); got != 0 {
			t.Fatalf("ProductCount() = %d after Checkpoint without a head, want 0", got)
		}
		if s.r.Ready() {
			t.Fatalf("replica Ready() = true with a registered tenant not ready, want false")
		}
		feed(s.r, batch[len(batch)-1:])
		if !tn.Ready() || tn.Snapshot().ProductCount() != 3 || !s.r.Ready() {
			t.Fatalf("after the head: tenant ready=%v products=%d replica ready=%v, want true, 3, true",
				tn.Ready(), tn.Snapshot().ProductCount(), s.r.Ready())
		}
	})
	t.Run("platform log changes wait for their head", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		s.bootstrap("e")
		reg := s.register(tenantEntry("newco", 0, schema.TenantActive))
		feed(s.r, body(reg))
		s.r.Checkpoint()
		if s.r.TenantBySlug("newco") != nil {
			t.Fatalf("a registry entry whose batch is in flight resolves after a checkpoint")
		}
		feed(s.r, reg[len(reg)-1:])
		if s.r.TenantBySlug("newco") == nil {
			t.Fatalf("a registry entry does not resolve after its head")
		}
	})
}

func TestReady(t *testing.T) {
	s := newSite(t, replica.Config{Shards: []int{1}})
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"new replica", func() {}, false},
		{"reset", func() { s.r.Reset("e") }, false},
		{"registry with head, not checkpointed", func() {
			feed(s.r, s.register(
				tenantEntry("shop", 1, schema.TenantActive),
				tenantEntry("sleepy", 1, schema.TenantSuspended),
				tenantEntry("faraway", 2, schema.TenantActive)))
		}, false},
		{"checkpoint with a tenant not ready", func() { s.r.Checkpoint() }, false},
		{"the tenant's head", func() { feed(s.r, s.seedShop("shop")) }, true},
		{"a new tenant is registered", func() { feed(s.r, s.register(tenantEntry("newco", 1, schema.TenantActive))) }, false},
		{"the new tenant's data without head", func() { feed(s.r, body(s.seedShop("newco"))) }, false},
		{"a checkpoint does not stand for the new tenant's head", func() { s.r.Checkpoint() }, false},
		{"the new tenant's head", func() { feed(s.r, []*schema.Change{head("newco", s.log("newco").version)}) }, true},
		{"the new tenant is suspended", func() {
			e := *s.entries["newco"]
			e.Status = schema.TenantSuspended
			feed(s.r, s.register(&e))
		}, true},
		{"reset to another epoch", func() { s.r.Reset("f") }, false},
		{"tenant head before the registry", func() { feed(s.r, []*schema.Change{head("shop", 5)}) }, false},
		{"registry head", func() {
			feed(s.r, []*schema.Change{chg(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, s.entries["shop"], s.entries["shop"].Version),
				head(schema.PlatformLog, s.platform.version)})
		}, false},
		{"checkpoint", func() { s.r.Checkpoint() }, true},
	}
	for _, st := range steps {
		st.do()
		if got := s.r.Ready(); got != st.want {
			t.Fatalf("after %q: Ready() = %v, want %v", st.name, got, st.want)
		}
	}
}

func TestCheckpointWithoutPlatformHeadIsNotReady(t *testing.T) {
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.seedShop("shop"))
	s.r.Checkpoint()
	if s.r.Ready() {
		t.Fatalf("Ready() = true without a platform head, want false")
	}
	if s.r.Lookup(nil, []byte("shop")) != nil {
		t.Fatalf("Lookup(shop) resolves a tenant the registry does not name")
	}
}
