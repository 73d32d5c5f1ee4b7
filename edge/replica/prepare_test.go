package replica_test

import (
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// prepareAll calls Prepare on every change from several goroutines, in no particular order, as a
// follower's decode pool would.
func prepareAll(r *replica.Replica, cs []*schema.Change) {
	var wg sync.WaitGroup
	workers := max(2, runtime.GOMAXPROCS(0))
	for w := range workers {
		wg.Go(func() {
			for i := len(cs) - 1 - w; i >= 0; i -= workers {
				r.Prepare(cs[i])
			}
		})
	}
	wg.Wait()
}

// TestPrepare checks that a replica whose changes were prepared concurrently ends in exactly the
// state of one that decoded every change at apply: same entities, same indexes, same skipped
// changes; and that a change whose data was replaced after Prepare is decoded again.
func TestPrepare(t *testing.T) {
	build := func(rig *site) []*schema.Change {
		reg := rig.register(tenantEntry("shop", 1, schema.TenantActive))
		batch := body(rig.seedShop("shop"))
		w := rig.log("shop")
		tx := w.begin()
		p := product(13, "delta", t0.Add(3*time.Hour))
		p.Description = "<b>bold</b> «quoted» \u2028"
		tx.putProduct(nil, p)
		tx.putVariant(nil, p, nil, variant(22, 13, 2, schema.OutOfStock))
		tx.putVariant(nil, p, nil, variant(23, 13, 1, schema.InStock))
		batch = append(batch, body(tx.commit())...)
		bad := chg("shop", schema.KindProduct, "14", schema.Pub, product(14, "bad", t0), w.version+1)
		bad.Data = []byte(`{"id":"fourteen"}`) // malformed: skipped by both
		term := chg("shop", schema.KindTerm, "5", schema.Pub, &schema.Term{ID: 5, Taxonomy: schema.TaxTag, Name: "News", Slug: "news"}, w.version+2)
		tomb := chg("shop", schema.KindVariant, "22", schema.Pub, nil, w.version+3)
		w.version += 3
		batch = append(batch, bad, term, tomb)
		return append(append(reg, batch...), head("shop", w.version))
	}
	plain, pre := newSite(t, replica.Config{}), newSite(t, replica.Config{})
	plainBatch, preBatch := build(plain), build(pre)
	// Data replaced after Prepare: the stale decoded entity must not be used.
	var swapped *schema.Change
	for _, c := range preBatch {
		if c.Kind == schema.KindProduct && c.ID == "11" {
			swapped = c
		}
	}
	prepareAll(pre.r, preBatch)
	if swapped.Decoded == nil {
		t.Fatal("Prepare left no decoded entity on a product change")
	}
	renamed := *plainProduct(t, swapped)
	renamed.Title = "Beta, renamed"
	swapped.Data = schema.NewChange("shop", schema.KindProduct, "11", schema.Pub, &renamed).Data
	for _, c := range plainBatch {
		if c.Kind == schema.KindProduct && c.ID == "11" {
			c.Data = swapped.Data
		}
	}
	for _, s := range []*site{plain, pre} {
		s.r.Reset("e")
	}
	feed(plain.r, plainBatch)
	feed(pre.r, preBatch)
	for _, s := range []*site{plain, pre} {
		s.r.Checkpoint()
	}
	a, b := plain.r.TenantBySlug("shop").Snapshot(), pre.r.TenantBySlug("shop").Snapshot()
	for _, vis := range []schema.Visibility{schema.Pub, schema.Priv} {
		if da, db := a.Digest("shop", vis), b.Digest("shop", vis); da.Sum() != db.Sum() {
			t.Fatalf("%s digests differ: %v", vis, da.Diff(db, 10))
		}
	}
	if a.Version != b.Version || a.Bytes != b.Bytes || a.LogDigest != b.LogDigest {
		t.Fatalf("snapshots differ: version %d/%d bytes %d/%d", a.Version, b.Version, a.Bytes, b.Bytes)
	}
	for _, id := range []schema.ProductID{10, 11, 12, 13, 14} {
		if pa, pb := a.Product(id, replica.Public), b.Product(id, replica.Public); !reflect.DeepEqual(pa, pb) {
			t.Errorf("product %d: %+v, prepared %+v", id, pa, pb)
		}
		if va, vb := a.Variants(id), b.Variants(id); !reflect.DeepEqual(va, vb) {
			t.Errorf("variants of %d: %+v, prepared %+v", id, va, vb)
		}
	}
	if got := b.Product(11, replica.Public); got == nil || got.Title != "Beta, renamed" {
		t.Fatalf("product 11 = %+v, want the data it carried when applied", got)
	}
	if b.Product(14, replica.Public) != nil {
		t.Fatal("a malformed prepared product was applied")
	}
	if vs := b.Variants(13); len(vs) != 1 || vs[0].ID != 23 {
		t.Fatalf("variants of 13 = %+v, want [23]", vs)
	}
	if !reflect.DeepEqual(a.Post(30, replica.Public), b.Post(30, replica.Public)) || b.Post(30, replica.Public) == nil {
		t.Fatal("post 30 differs or is missing")
	}
	if !reflect.DeepEqual(a.Currency("EUR"), b.Currency("EUR")) || !reflect.DeepEqual(a.Category(1), b.Category(1)) || b.Term(5) == nil {
		t.Fatal("currency, category or term differs")
	}
	for _, c := range preBatch {
		if c.Decoded != nil {
			t.Fatalf("change %s still holds its prepared entity after apply", c.Key())
		}
	}
}

func plainProduct(t *testing.T, c *schema.Change) *schema.Product {
	t.Helper()
	var p schema.Product
	if err := schema.DecodeEntity(c.Data, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// BenchmarkApplyBootstrapPrepared is BenchmarkApplyBootstrap with the entities decoded by Prepare
// on GOMAXPROCS goroutines first (timed), as a follower with a decode pool does.
func BenchmarkApplyBootstrapPrepared(b *testing.B) {
	reg, batch := benchCatalog(benchProducts)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newReplica(replica.Config{})
		r.Reset("e")
		feed(r, reg)
		b.StartTimer()
		prepareAll(r, batch)
		feed(r, batch)
		b.StopTimer()
		if tn := r.TenantBySlug("shop"); !tn.Ready() || tn.Snapshot().ProductCount() != benchProducts {
			b.Fatal("bootstrap not applied")
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(len(batch)), "changes/op")
}

// TestMerchBootstrapInPlace checks that the merchandising maps a bootstrap fills in place
// (reviews, statistics, terms, authors, markers, media files) end as the same state as the same
// changes applied one checkpoint at a time, and that a later batch leaves the bootstrap's
// snapshot untouched.
func TestMerchBootstrapInPlace(t *testing.T) {
	att := &schema.Post{ID: 40, Type: schema.TypeAttachment, Status: schema.StatusInherit, Slug: "photo", DateGMT: t0,
		Attachment: &schema.Attachment{File: "2026/11/photo.jpg", MimeType: "image/jpeg", FileSize: 10}}
	changes := func() []*schema.Change {
		var cs []*schema.Change
		for i := int64(1); i <= 40; i++ {
			cs = append(cs,
				chg("shop", schema.KindReview, schema.IDString(i), schema.Pub, &schema.Review{ID: schema.ReviewID(i), ProductID: schema.ProductID(1 + i%3), Rating: 5, CreatedAt: t0.Add(time.Duration(i) * time.Minute)}, 0),
				chg("shop", schema.KindStats, schema.IDString(i), schema.Pub, &schema.ProductStats{ProductID: schema.ProductID(i), Purchases7d: i}, 0),
				chg("shop", schema.KindTerm, schema.IDString(i), schema.Pub, &schema.Term{ID: schema.TermID(i), Taxonomy: schema.TaxTag, Name: "t", Slug: "t-" + schema.IDString(i)}, 0),
				chg("shop", schema.KindAuthor, schema.IDString(i), schema.Pub, &schema.Author{ID: schema.UserID(i), Name: "a"}, 0),
				chg("shop", schema.KindPostMarker, schema.IDString(100+i), schema.Pub, &schema.PostMarker{ID: schema.PostID(100 + i), Type: "post", Status: schema.StatusDraft}, 0))
		}
		cs = append(cs, chg("shop", schema.KindPost, "40", schema.Pub, att, 0),
			chg("shop", schema.KindReview, "7", schema.Pub, nil, 0), // a tombstone within the bootstrap
			chg("shop", schema.KindTerm, "8", schema.Pub, &schema.Term{ID: 8, Taxonomy: schema.TaxTag, Name: "renamed", Slug: "t-8"}, 0))
		for i, c := range cs {
			c.Version, c.TxnFirst, c.TxnLast = int64(i+1), int64(i+1), int64(i+1)
		}
		return cs
	}
	reg := newSite(t, replica.Config{}).register(tenantEntry("shop", 1, schema.TenantActive))
	whole, steps := newReplica(replica.Config{}), newReplica(replica.Config{})
	for _, r := range []*replica.Replica{whole, steps} {
		r.Reset("e")
		feed(r, reg)
	}
	all := changes()
	feed(whole, all, []*schema.Change{head("shop", int64(len(all)))})
	for _, c := range changes() {
		feed(steps, []*schema.Change{c, head("shop", c.Version)})
	}
	a, b := whole.TenantBySlug("shop").Snapshot(), steps.TenantBySlug("shop").Snapshot()
	if da, db := a.Digest("shop", schema.Pub), b.Digest("shop", schema.Pub); da.Sum() != db.Sum() || da.Len() == 0 {
		t.Fatalf("bootstrap and step-by-step states differ (%d states): %v", da.Len(), da.Diff(db, 10))
	}
	ra, na := a.Reviews(2, 0, 100)
	rb, nb := b.Reviews(2, 0, 100)
	if na != nb || !reflect.DeepEqual(ra, rb) || na == 0 {
		t.Fatalf("reviews of product 2: %d %v, step by step %d %v", na, ra, nb, rb)
	}
	if a.Term(8) == nil || a.Term(8).Name != "renamed" || a.Stats(5) == nil || a.Author(3) == nil || a.PostMarker(105) == nil {
		t.Fatal("a bootstrapped merchandising state is missing")
	}
	if _, ok := a.MediaFile("tid", "2026/11/photo.jpg"); !ok || a.MediaFileCount() != 1 {
		t.Fatalf("media index after bootstrap: count %d", a.MediaFileCount())
	}
	// A later batch path-copies from the bootstrap's maps and leaves its snapshot as it was.
	next := int64(len(all) + 1)
	feed(whole, []*schema.Change{chg("shop", schema.KindTerm, "99", schema.Pub, &schema.Term{ID: 99, Taxonomy: schema.TaxTag, Name: "new", Slug: "new"}, next),
		chg("shop", schema.KindStats, "5", schema.Pub, nil, next+1), head("shop", next+1)})
	if a.Term(99) != nil || a.Stats(5) == nil {
		t.Fatal("a later batch changed the bootstrap's snapshot")
	}
	if s := whole.TenantBySlug("shop").Snapshot(); s.Term(99) == nil || s.Stats(5) != nil {
		t.Fatal("the later batch was not applied")
	}
}
