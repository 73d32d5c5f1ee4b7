package replica_test

import (
	"slices"
	"testing"

	"vitrine/edge/replica"
	"vitrine/edge/search"
	"vitrine/schema"
)

// indexed returns the ids a text search finds in the tenant's current snapshot.
func indexed(tn *replica.Tenant, text string) []schema.ProductID {
	ix, _ := tn.Snapshot().SearchIndex()
	var out []schema.ProductID
	for _, h := range ix.Search(search.Query{Text: text, Limit: 100}).Hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchIndexFollowsBatches(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	ix, cur := tn.Snapshot().SearchIndex()
	if cur != "USD" || ix.Len() != 3 {
		t.Fatalf("bootstrap index: %d documents in %q, want the 3 public products in USD", ix.Len(), cur)
	}
	sn := tn.Snapshot()
	tests := []struct {
		name  string
		write func(tx *txn)
		check func(t *testing.T, ix *search.Index)
	}{
		{"a retitled product is found by its new title only", func(tx *txn) {
			old := sn.Product(10, replica.Public)
			p := *old
			p.Title = "Walnut Stool"
			tx.putProduct(old, &p)
		}, func(t *testing.T, ix *search.Index) {
			if got := indexed(tn, "walnut"); len(got) != 1 || got[0] != 10 {
				t.Errorf("search walnut = %v, want [10]", got)
			}
			if got := indexed(tn, "product "); slices.Contains(got, 10) || len(got) != 2 {
				t.Errorf("search product = %v: want 11 and 12, the old title of 10 no longer indexed", got)
			}
		}},
		{"a product moved to draft leaves the index", func(tx *txn) {
			old := sn.Product(11, replica.Public)
			p := *old
			p.Status = schema.ProductDraft
			tx.putProduct(old, &p)
		}, func(t *testing.T, ix *search.Index) {
			if _, ok := ix.Get(11); ok || ix.Len() != 2 {
				t.Errorf("draft product still indexed (%d documents)", ix.Len())
			}
		}},
		{"a deleted product leaves the index", func(tx *txn) {
			tx.putProduct(sn.Product(12, replica.Public), nil)
		}, func(t *testing.T, ix *search.Index) {
			if _, ok := ix.Get(12); ok {
				t.Error("deleted product still indexed")
			}
		}},
		{"a variant's availability reaches its product's document", func(tx *txn) {
			p := sn.Product(10, replica.Public)
			for _, v := range sn.Variants(10) {
				nv := *v
				nv.Availability = schema.OutOfStock
				tx.putVariant(p, p, v, &nv)
			}
		}, func(t *testing.T, ix *search.Index) {
			if d, _ := ix.Get(10); d == nil || d.Availability != schema.OutOfStock {
				t.Errorf("document of product 10 = %+v, want out_of_stock", d)
			}
			res := ix.Search(search.Query{Availability: []schema.Availability{schema.OutOfStock}, Limit: 10})
			if res.Total != 3 { // 11 and 12 have no variants: out of stock too
				t.Errorf("out_of_stock filter found %d products, want 3", res.Total)
			}
		}},
		{"a new product's price is the default currency's", func(tx *txn) {
			p := product(13, "delta", t0)
			p.Prices = schema.Prices{"USD": 4200, "EUR": 3900}
			tx.putProduct(nil, p)
		}, func(t *testing.T, ix *search.Index) {
			if d, _ := ix.Get(13); d == nil || d.Price != 4200 {
				t.Errorf("document of product 13 = %+v, want price 4200", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, replica.Config{})
			tn = s.bootstrap("e")
			sn = tn.Snapshot()
			before, _ := sn.SearchIndex()
			tx := s.log("shop").begin()
			tt.write(tx)
			feed(s.r, tx.commit())
			after, _ := tn.Snapshot().SearchIndex()
			tt.check(t, after)
			// The snapshot read before the batch keeps its own index, unchanged.
			if again, _ := sn.SearchIndex(); again != before || before.Len() != 3 {
				t.Error("the previous snapshot's index changed")
			}
		})
	}
}

func TestSearchIndexFollowsDefaultCurrency(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	version := tn.Version()
	e := *s.entries["shop"]
	e.Currencies = []string{"EUR", "USD"}
	feed(s.r, s.register(&e))
	ix, cur := tn.Snapshot().SearchIndex()
	if cur != "EUR" {
		t.Fatalf("index currency %q after the default became EUR", cur)
	}
	if d, _ := ix.Get(10); d == nil || d.Price != 910 { // product(10) costs 900+id in EUR
		t.Fatalf("document of product 10 = %+v, want the EUR price 910", d)
	}
	if tn.Version() != version || tn.Snapshot().ProductCount() != 3 {
		t.Fatalf("re-pricing changed the snapshot: version %d → %d", version, tn.Version())
	}
}

// A tenant's log may apply before the registry names the tenant: its index has no currency
// until then, and is re-priced when the registry entry arrives.
func TestSearchIndexBeforeRegistry(t *testing.T) {
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.seedShop("shop"))
	tn := s.r.TenantBySlug("shop")
	if tn != nil {
		t.Fatal("tenant served before the registry named it")
	}
	feed(s.r, s.register(tenantEntry("shop", 1, schema.TenantActive)))
	s.r.Checkpoint()
	tn = s.r.TenantBySlug("shop")
	ix, cur := tn.Snapshot().SearchIndex()
	if cur != "USD" || ix.Len() != 3 {
		t.Fatalf("index of %d documents in %q, want 3 in USD", ix.Len(), cur)
	}
	if d, _ := ix.Get(10); d == nil || d.Price != 1010 {
		t.Fatalf("document of product 10 = %+v, want the USD price 1010", d)
	}
}
