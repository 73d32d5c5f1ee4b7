package replica_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

func TestVersionGating(t *testing.T) {
	tests := []struct {
		name  string
		apply func(t *testing.T, s *site, tn *replica.Tenant)
	}{
		{"an older change for a slot is ignored", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			old := tn.Snapshot().Product(10, replica.Public)
			p := *old
			p.Title = "new"
			tx := w.begin()
			tx.putProduct(old, &p)
			feed(s.r, tx.commit())
			stale := *old
			stale.Title = "stale"
			w.version++
			feed(s.r, []*schema.Change{chg("shop", schema.KindProduct, "10", schema.Pub, &stale, old.Version), head("shop", w.version)})
			if got := tn.Snapshot().Product(10, replica.Public).Title; got != "new" {
				t.Fatalf("title = %q after an older change, want %q", got, "new")
			}
			if got := tn.Version(); got != w.version {
				t.Fatalf("Version() = %d, want the head's %d", got, w.version)
			}
		}},
		{"an older tombstone is ignored", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			old := tn.Snapshot().Product(10, replica.Public)
			w.version++
			feed(s.r, []*schema.Change{chg("shop", schema.KindProduct, "10", schema.Pub, nil, old.Version-1), head("shop", w.version)})
			if tn.Snapshot().ProductBySlug("alpha") == nil {
				t.Fatalf("an older tombstone deleted product 10")
			}
		}},
		{"the same-version change is ignored", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			old := tn.Snapshot().Product(10, replica.Public)
			other := *old
			other.Title = "same version, other data"
			w.version++
			feed(s.r, []*schema.Change{chg("shop", schema.KindProduct, "10", schema.Pub, &other, old.Version), head("shop", w.version)})
			if got := tn.Snapshot().Product(10, replica.Public).Title; got != old.Title {
				t.Fatalf("title = %q after a change at the slot's own version, want %q", got, old.Title)
			}
		}},
		{"duplicate delivery of a batch is idempotent", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			old := tn.Snapshot().Product(11, replica.Public)
			p := *old
			p.Title = "renamed"
			tx := w.begin()
			tx.putProduct(old, &p)
			tx.putVariant(nil, &p, nil, variant(22, 11, 0, schema.OutOfStock))
			batch := tx.commit()
			feed(s.r, batch)
			sn := tn.Snapshot()
			want := sn.Digest("shop", schema.Pub, schema.Priv).Sum()
			cat, item := tn.Counter(replica.Catalog).Load(), tn.ItemCounter(schema.KindProduct, 11).Load()
			feed(s.r, batch)
			s.r.Checkpoint()
			if got := tn.Snapshot().Digest("shop", schema.Pub, schema.Priv).Sum(); got != want {
				t.Fatalf("digest after a duplicate batch = %s, want %s", got, want)
			}
			if tn.Snapshot() != sn {
				t.Fatalf("a duplicate batch published a new snapshot")
			}
			if got := tn.Counter(replica.Catalog).Load(); got != cat {
				t.Fatalf("Counter(Catalog) = %d after a duplicate batch, want %d", got, cat)
			}
			if got := tn.ItemCounter(schema.KindProduct, 11).Load(); got != item {
				t.Fatalf("ItemCounter(product 11) = %d after a duplicate batch, want %d", got, item)
			}
			if got := len(tn.Snapshot().Variants(11)); got != 1 {
				t.Fatalf("len(Variants(11)) = %d after a duplicate batch, want 1", got)
			}
		}},
		{"redelivering the whole bootstrap after updates changes nothing", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			old := tn.Snapshot().Product(12, replica.Public)
			p := *old
			p.Title = "newer"
			tx := w.begin()
			tx.putProduct(old, &p)
			feed(s.r, tx.commit())
			want := tn.Snapshot().Digest("shop", schema.Pub, schema.Priv).Sum()
			// The seeded batch again, at its original versions.
			s2 := newSite(t, replica.Config{})
			again := s2.seedShop("shop")
			feed(s.r, again)
			if got := tn.Snapshot().Digest("shop", schema.Pub, schema.Priv).Sum(); got != want {
				t.Fatalf("digest after redelivering older changes = %s, want %s", got, want)
			}
			if got := tn.Snapshot().Product(12, replica.Public).Title; got != "newer" {
				t.Fatalf("title = %q, want %q", got, "newer")
			}
		}},
		{"slots are gated independently", func(t *testing.T, s *site, tn *replica.Tenant) {
			// The public slot of post 30 is at a higher version than the private slot has ever been.
			w := s.log("shop")
			pub := tn.Snapshot().Post(30, replica.Public)
			priv := *pub
			priv.Title = "private view"
			w.version++
			feed(s.r, []*schema.Change{chg("shop", schema.KindPost, "30", schema.Priv, &priv, pub.Version-1), head("shop", w.version)})
			if got := tn.Snapshot().Post(30, replica.Full).Title; got != "private view" {
				t.Fatalf("Full title = %q, want the private slot's %q", got, "private view")
			}
			if got := tn.Snapshot().Post(30, replica.Public).Title; got != pub.Title {
				t.Fatalf("Public title = %q, want %q", got, pub.Title)
			}
		}},
		{"the same-version change of a private slot is ignored", func(t *testing.T, s *site, tn *replica.Tenant) {
			w := s.log("shop")
			draft := tn.Snapshot().Post(31, replica.Full)
			other := *draft
			other.Title = "same version, other data"
			w.version++
			feed(s.r, []*schema.Change{chg("shop", schema.KindPost, "31", schema.Priv, &other, draft.Version), head("shop", w.version)})
			if got := tn.Snapshot().Post(31, replica.Full).Title; got != draft.Title {
				t.Fatalf("draft title = %q after a change at the slot's own version, want %q", got, draft.Title)
			}
		}},
		{"a head below the tenant's version does not move it back", func(t *testing.T, s *site, tn *replica.Tenant) {
			v := tn.Version()
			sn := tn.Snapshot()
			feed(s.r, []*schema.Change{head("shop", 1)})
			if tn.Version() != v || tn.Snapshot() != sn {
				t.Fatalf("Version() = %d after an old head, want %d and the same snapshot", tn.Version(), v)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, replica.Config{})
			tn := s.bootstrap("e")
			tt.apply(t, s, tn)
		})
	}
}

// TestOlderChangeAfterDeleteIgnored redelivers a product's creation after the product was
// deleted. The creation's version is below the tombstone's, so it must be ignored like any other
// older change of the slot (package doc: "Within a slot, a change is applied only if its version
// is above the slot's version").
// It guards a regression: an emptied slot once dropped its versions, and the redelivered creation
// passed the version gate and resurrected the product in the public index.
func TestOlderChangeAfterDeleteIgnored(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")

	p12 := tn.Snapshot().Product(12, replica.Public)
	recreate := chg("shop", schema.KindProduct, "12", schema.Pub, p12, p12.Version)

	tx := w.begin()
	tx.putProduct(p12, nil)
	feed(s.r, tx.commit())
	if tn.Snapshot().ProductBySlug("gamma") != nil {
		t.Fatalf("product 12 still public after its deletion")
	}
	w.version++
	feed(s.r, []*schema.Change{recreate, head("shop", w.version)})
	if got := tn.Snapshot().ProductBySlug("gamma"); got != nil {
		t.Fatalf("ProductBySlug(gamma) = product %d (version %d) after redelivering its creation below the tombstone, want nil", got.ID, got.Version)
	}
	if got := tn.Snapshot().Product(12, replica.Full); got != nil {
		t.Fatalf("Product(12, Full) = version %d, want nil", got.Version)
	}
}

// TestOlderChangeAfterVisibilityMoveIgnored redelivers a product's old public state after the
// product moved to the private read model (pub tombstone then priv state, as UpdateProduct writes
// it).
// On an edge, which only follows pub subjects, any stale pub state after the product left the
// public model must likewise stay out of ProductBySlug/Products.
func TestOlderChangeAfterVisibilityMoveIgnored(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	old := tn.Snapshot().Product(11, replica.Public)
	stale := chg("shop", schema.KindProduct, "11", schema.Pub, old, old.Version)
	p := *old
	p.Status = schema.ProductDraft
	tx := w.begin()
	tx.putProduct(old, &p)
	feed(s.r, tx.commit())
	w.version++
	feed(s.r, []*schema.Change{stale, head("shop", w.version)})
	if got := tn.Snapshot().ProductBySlug("beta"); got != nil {
		t.Fatalf("ProductBySlug(beta) = version %d after redelivering its public state below the tombstone, want nil", got.Version)
	}
}

func TestVisibilityMoves(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	pub10, pub11 := sn.Product(10, replica.Public), sn.Product(11, replica.Public)
	vs := sn.Variants(10)
	if len(vs) != 2 {
		t.Fatalf("len(Variants(10)) = %d, want 2", len(vs))
	}

	// Product 10 (with variants) and featured product 11 become drafts, as UpdateProduct writes it.
	tx := w.begin()
	d10, d11 := *pub10, *pub11
	d10.Status, d11.Status = schema.ProductDraft, schema.ProductArchived
	tx.putProduct(pub10, &d10)
	var moved []*schema.Variant
	for _, v := range vs {
		nv := *v
		tx.putVariant(pub10, &d10, v, &nv)
		moved = append(moved, &nv)
	}
	tx.putProduct(pub11, &d11)
	feed(s.r, tx.commit())

	sn = tn.Snapshot()
	if got := sn.ProductBySlug("alpha"); got != nil {
		t.Fatalf("ProductBySlug(alpha) = %+v after the move to draft, want nil", got)
	}
	if got := sn.ProductBySlug("beta"); got != nil {
		t.Fatalf("ProductBySlug(beta) = %+v after archiving, want nil", got)
	}
	if ps, total := sn.Products(0, 10); total != 1 || len(ps) != 1 || ps[0].ID != 12 {
		t.Fatalf("Products(0, 10) = %v (total %d), want [gamma] (total 1)", productSlugs(ps), total)
	}
	if got := sn.ProductCount(); got != 1 {
		t.Fatalf("ProductCount() = %d, want 1", got)
	}
	if got := sn.Featured(10); len(got) != 0 {
		t.Fatalf("Featured(10) = %v, want none", productSlugs(got))
	}
	if got := sn.Product(10, replica.Public); got != nil {
		t.Fatalf("Product(10, Public) = %+v, want nil", got)
	}
	if got := sn.Product(10, replica.Full); got == nil || got.Status != schema.ProductDraft || got.Version != d10.Version {
		t.Fatalf("Product(10, Full) = %+v, want the draft at version %d", got, d10.Version)
	}
	if got := sn.Product(11, replica.Full); got == nil || got.Status != schema.ProductArchived {
		t.Fatalf("Product(11, Full) = %+v, want the archived product", got)
	}
	if got := sn.Variants(10); len(got) != 0 {
		t.Fatalf("len(Variants(10)) = %d after the move, want 0", len(got))
	}

	// And back to active.
	tx = w.begin()
	a10, a11 := d10, d11
	a10.Status, a11.Status = schema.ProductActive, schema.ProductActive
	tx.putProduct(&d10, &a10)
	for _, v := range moved {
		nv := *v
		tx.putVariant(&d10, &a10, v, &nv)
	}
	tx.putProduct(&d11, &a11)
	feed(s.r, tx.commit())

	sn = tn.Snapshot()
	if got := sn.ProductBySlug("alpha"); got == nil || got.Version != a10.Version {
		t.Fatalf("ProductBySlug(alpha) = %+v after moving back, want version %d", got, a10.Version)
	}
	if ps, total := sn.Products(0, 10); total != 3 || strings.Join(productSlugs(ps), ",") != "gamma,beta,alpha" {
		t.Fatalf("Products(0, 10) = %v (total %d), want [gamma beta alpha] (total 3)", productSlugs(ps), total)
	}
	if got := sn.Featured(10); len(got) != 1 || got[0].ID != 11 {
		t.Fatalf("Featured(10) = %v, want [beta]", productSlugs(got))
	}
	if got := sn.Variants(10); len(got) != 2 || got[0].ID != 21 || got[1].ID != 20 {
		t.Fatalf("Variants(10) = %d variants, want 21 then 20", len(got))
	}
	if got := sn.Product(10, replica.Full); got == nil || got.Status != schema.ProductActive {
		t.Fatalf("Product(10, Full) = %+v, want the active product", got)
	}
}

func TestSlugChange(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	old := tn.Snapshot().Product(10, replica.Public)
	p := *old
	p.Slug = "alpha-2"
	tx := w.begin()
	tx.putProduct(old, &p)
	feed(s.r, tx.commit())
	sn := tn.Snapshot()
	if got := sn.ProductBySlug("alpha"); got != nil {
		t.Fatalf("ProductBySlug(alpha) = product %d after the slug change, want nil", got.ID)
	}
	if got := sn.ProductBySlug("alpha-2"); got == nil || got.ID != 10 {
		t.Fatalf("ProductBySlug(alpha-2) = %+v, want product 10", got)
	}

	// Another product takes the freed slug in a later transaction; renaming it away again must
	// not disturb product 10's new slug.
	tx = w.begin()
	q := product(13, "alpha", t0.Add(9*time.Hour))
	tx.putProduct(nil, q)
	feed(s.r, tx.commit())
	if got := tn.Snapshot().ProductBySlug("alpha"); got == nil || got.ID != 13 {
		t.Fatalf("ProductBySlug(alpha) = %+v, want product 13", got)
	}
	tx = w.begin()
	q2 := *q
	q2.Slug = "omega"
	tx.putProduct(q, &q2)
	feed(s.r, tx.commit())
	sn = tn.Snapshot()
	if sn.ProductBySlug("alpha") != nil || sn.ProductBySlug("omega") == nil || sn.ProductBySlug("alpha-2") == nil {
		t.Fatalf("slugs after the second rename: alpha=%v omega=%v alpha-2=%v, want nil, 13, 10",
			sn.ProductBySlug("alpha"), sn.ProductBySlug("omega"), sn.ProductBySlug("alpha-2"))
	}
}

func TestSlugSwapInOneTransaction(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	a, b := sn.Product(10, replica.Public), sn.Product(11, replica.Public)
	// alpha→tmp, beta→alpha, tmp→beta: three writes of two products in one transaction.
	a1, b1 := *a, *b
	a1.Slug = "tmp"
	b1.Slug = "alpha"
	a2 := a1
	a2.Slug = "beta"
	tx := w.begin()
	tx.putProduct(a, &a1)
	tx.putProduct(b, &b1)
	tx.putProduct(&a1, &a2)
	feed(s.r, tx.commit())
	sn = tn.Snapshot()
	if got := sn.ProductBySlug("alpha"); got == nil || got.ID != 11 {
		t.Fatalf("ProductBySlug(alpha) = %+v, want product 11", got)
	}
	if got := sn.ProductBySlug("beta"); got == nil || got.ID != 10 {
		t.Fatalf("ProductBySlug(beta) = %+v, want product 10", got)
	}
	if got := sn.ProductBySlug("tmp"); got != nil {
		t.Fatalf("ProductBySlug(tmp) = product %d, want nil", got.ID)
	}
}

// TestSlugTakenBeforeItsOwnerMoves applies a slug swap whose taker is written first: when the
// previous owner's change is applied, the index already maps its old slug to the taker, which
// must keep it.
func TestSlugTakenBeforeItsOwnerMoves(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	a, b := sn.Product(10, replica.Public), sn.Product(11, replica.Public)
	a1, b1 := *a, *b
	a1.Slug, b1.Slug = "beta", "alpha"
	tx := w.begin()
	tx.putProduct(b, &b1)
	tx.putProduct(a, &a1)
	feed(s.r, tx.commit())
	sn = tn.Snapshot()
	if got := sn.ProductBySlug("alpha"); got == nil || got.ID != 11 {
		t.Fatalf("ProductBySlug(alpha) = %+v, want product 11", got)
	}
	if got := sn.ProductBySlug("beta"); got == nil || got.ID != 10 {
		t.Fatalf("ProductBySlug(beta) = %+v, want product 10", got)
	}
}

func TestDeleteProductWithVariants(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	p := sn.Product(10, replica.Public)
	// DeleteProduct: a tombstone per variant, then the product's.
	tx := w.begin()
	for _, v := range sn.Variants(10) {
		tx.putVariant(p, p, v, nil)
	}
	tx.putProduct(p, nil)
	feed(s.r, tx.commit())
	sn = tn.Snapshot()
	if got := sn.Variants(10); len(got) != 0 {
		t.Fatalf("len(Variants(10)) = %d after the delete, want 0", len(got))
	}
	if sn.Product(10, replica.Full) != nil || sn.ProductBySlug("alpha") != nil {
		t.Fatalf("product 10 still visible after its delete")
	}
	if ps, total := sn.Products(0, 10); total != 2 || strings.Join(productSlugs(ps), ",") != "gamma,beta" {
		t.Fatalf("Products(0, 10) = %v (total %d), want [gamma beta] (total 2)", productSlugs(ps), total)
	}
	d := sn.Digest("shop", schema.Pub, schema.Priv)
	for _, line := range d.Diff(&schema.Digest{}, 100) {
		if strings.Contains(line, "/variant/20:") || strings.Contains(line, "/variant/21:") || strings.Contains(line, "/product/10:") {
			t.Fatalf("digest still lists a deleted entity: %s", line)
		}
	}
}

func TestVariantChanges(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	sn := tn.Snapshot()
	p := sn.Product(10, replica.Public)
	v20 := sn.Variants(10)[1]
	if v20.ID != 20 {
		t.Fatalf("second variant = %d, want 20", v20.ID)
	}
	// Position change reorders; a deleted variant disappears; a new one slots in.
	tx := w.begin()
	nv := *v20
	nv.Position = 0 // ties with 21: the id breaks the tie
	nv.Availability = schema.OutOfStock
	tx.putVariant(p, p, v20, &nv)
	tx.putVariant(nil, p, nil, variant(19, 10, 5, schema.InStock))
	feed(s.r, tx.commit())
	got := tn.Snapshot().Variants(10)
	var vids []schema.VariantID
	for _, v := range got {
		vids = append(vids, v.ID)
	}
	if want := []schema.VariantID{20, 21, 19}; !slices.Equal(vids, want) {
		t.Fatalf("Variants(10) = %v, want %v", vids, want)
	}
	if got[0].Availability != schema.OutOfStock {
		t.Fatalf("variant 20 availability = %q, want %q", got[0].Availability, schema.OutOfStock)
	}
	tx = w.begin()
	tx.putVariant(p, p, got[1], nil)
	feed(s.r, tx.commit())
	vids = vids[:0]
	for _, v := range tn.Snapshot().Variants(10) {
		vids = append(vids, v.ID)
	}
	if want := []schema.VariantID{20, 19}; !slices.Equal(vids, want) {
		t.Fatalf("Variants(10) after deleting 21 = %v, want %v", vids, want)
	}
	if got := tn.Snapshot().Variants(999); len(got) != 0 {
		t.Fatalf("Variants(999) = %d variants, want 0", len(got))
	}

	// The store never moves a variant to another product, but the index follows one that moves.
	v19 := tn.Snapshot().Variants(10)[1]
	mv := *v19
	mv.ProductID = 11
	p11 := tn.Snapshot().Product(11, replica.Public)
	tx = w.begin()
	tx.putVariant(p, p11, v19, &mv)
	feed(s.r, tx.commit())
	if got := ids(tn.Snapshot().Variants(10)); !slices.Equal(got, []int64{20}) {
		t.Fatalf("Variants(10) after moving 19 away = %v, want [20]", got)
	}
	if got := ids(tn.Snapshot().Variants(11)); !slices.Equal(got, []int64{19}) {
		t.Fatalf("Variants(11) after moving 19 in = %v, want [19]", got)
	}
}

func TestMalformedChangesAreSkipped(t *testing.T) {
	raw := func(kind schema.Kind, id string, vis schema.Visibility, data string) func(v int64) *schema.Change {
		return func(v int64) *schema.Change {
			c := &schema.Change{Schema: schema.ChangeSchemaVersion, Log: "shop", Kind: kind, ID: id, Vis: vis,
				Version: v, TxnFirst: v, TxnLast: v, Data: []byte(data)}
			return c
		}
	}
	tests := []struct {
		name  string
		bad   func(v int64) *schema.Change
		check func(sn *replica.Snapshot) string
	}{
		{"truncated product JSON", raw(schema.KindProduct, "10", schema.Pub, `{"id":10,"slug":`), func(sn *replica.Snapshot) string {
			if p := sn.Product(10, replica.Public); p == nil || p.Slug != "alpha" {
				return "product 10 changed"
			}
			return ""
		}},
		{"product field of the wrong type", raw(schema.KindProduct, "10", schema.Pub, `{"id":10,"slug":42}`), func(sn *replica.Snapshot) string {
			if p := sn.Product(10, replica.Public); p == nil || p.Slug != "alpha" {
				return "product 10 changed"
			}
			return ""
		}},
		{"product id differs from its data", raw(schema.KindProduct, "10", schema.Pub, `{"id":99,"slug":"hijack","status":"active"}`), func(sn *replica.Snapshot) string {
			if sn.ProductBySlug("hijack") != nil || sn.Product(99, replica.Full) != nil {
				return "the mismatched product was applied"
			}
			if p := sn.ProductBySlug("alpha"); p == nil || p.ID != 10 {
				return "product 10 changed"
			}
			return ""
		}},
		{"non-numeric product id", raw(schema.KindProduct, "abc", schema.Pub, `{"id":0,"slug":"abc"}`), func(sn *replica.Snapshot) string {
			if sn.ProductBySlug("abc") != nil {
				return "a product with a non-numeric id was applied"
			}
			return ""
		}},
		{"zero product id", raw(schema.KindProduct, "0", schema.Pub, `{"id":0,"slug":"zero"}`), func(sn *replica.Snapshot) string {
			if sn.ProductBySlug("zero") != nil {
				return "a product with id 0 was applied"
			}
			return ""
		}},
		{"malformed variant", raw(schema.KindVariant, "20", schema.Pub, `[1,2,3]`), func(sn *replica.Snapshot) string {
			if len(sn.Variants(10)) != 2 {
				return "variants of product 10 changed"
			}
			return ""
		}},
		{"malformed category", raw(schema.KindCategory, "1", schema.Pub, `{"id":"one"}`), func(sn *replica.Snapshot) string {
			if c := sn.Category(1); c == nil || c.Slug != "shoes" {
				return "category 1 changed"
			}
			return ""
		}},
		{"malformed currency", raw(schema.KindCurrency, "USD", schema.Pub, `{"code":`), func(sn *replica.Snapshot) string {
			if c := sn.Currency("USD"); c == nil || c.Symbol != "$" {
				return "currency USD changed"
			}
			return ""
		}},
		{"malformed post", raw(schema.KindPost, "30", schema.Pub, `"just a string"`), func(sn *replica.Snapshot) string {
			if p := sn.Post(30, replica.Public); p == nil || p.Slug != "hello" {
				return "post 30 changed"
			}
			return ""
		}},
		{"unknown kind", raw("widget", "1", schema.Pub, `{"id":1}`), func(sn *replica.Snapshot) string { return "" }},
		{"a registry entry on a tenant log", raw(schema.KindTenant, "shop", schema.Pub, `{"slug":"shop"}`), func(sn *replica.Snapshot) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, replica.Config{})
			tn := s.bootstrap("e")
			w := s.log("shop")
			old := tn.Snapshot().Product(11, replica.Public)
			p := *old
			p.Title = "still applied"
			tx := w.begin()
			tx.putProduct(old, &p)
			tx.putProduct(nil, product(13, "delta", t0.Add(3*time.Hour)))
			good := tx.commit()
			w.version++
			bad := tt.bad(w.version)
			// The bad change sits in the middle of the batch.
			batch := append([]*schema.Change{good[0], bad}, good[1:len(good)-1]...)
			batch = append(batch, head("shop", w.version))
			feed(s.r, batch)
			sn := tn.Snapshot()
			if got := sn.Product(11, replica.Public).Title; got != "still applied" {
				t.Fatalf("product 11 title = %q, want the batch's %q", got, "still applied")
			}
			if sn.ProductBySlug("delta") == nil {
				t.Fatalf("product 13 of the batch not applied")
			}
			if got := tn.Version(); got != w.version {
				t.Fatalf("Version() = %d, want the head's %d", got, w.version)
			}
			if msg := tt.check(sn); msg != "" {
				t.Fatalf("%s", msg)
			}
		})
	}
}
