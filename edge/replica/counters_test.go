package replica_test

import (
	"slices"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

func TestCounters(t *testing.T) {
	type deltas struct {
		site, catalog, taxonomy, currencies, posts bool
		listing                                    bool
		items                                      []int64 // product ids whose item counter moves
		postItems                                  []int64
	}
	tests := []struct {
		name   string
		change func(s *site, tn *replica.Tenant) []*schema.Change
		want   deltas
	}{
		{"product update", func(s *site, tn *replica.Tenant) []*schema.Change {
			old := tn.Snapshot().Product(10, replica.Public)
			p := *old
			p.Title = "x"
			tx := s.log("shop").begin()
			tx.putProduct(old, &p)
			return tx.commit()
		}, deltas{catalog: true, items: []int64{10}}},
		{"product deletion", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putProduct(tn.Snapshot().Product(12, replica.Public), nil)
			return tx.commit()
		}, deltas{catalog: true, listing: true, items: []int64{12}}},
		{"product creation", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putProduct(nil, product(13, "new-boots", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return tx.commit()
		}, deltas{catalog: true, listing: true, items: []int64{13}}},
		{"product price change", func(s *site, tn *replica.Tenant) []*schema.Change {
			old := tn.Snapshot().Product(10, replica.Public)
			p := *old
			p.Prices = schema.Prices{"USD": 123456}
			tx := s.log("shop").begin()
			tx.putProduct(old, &p)
			return tx.commit()
		}, deltas{catalog: true, items: []int64{10}}},
		{"product creation time moved", func(s *site, tn *replica.Tenant) []*schema.Change {
			old := tn.Snapshot().Product(10, replica.Public)
			p := *old
			p.CreatedAt = p.CreatedAt.Add(time.Minute)
			tx := s.log("shop").begin()
			tx.putProduct(old, &p)
			return tx.commit()
		}, deltas{catalog: true, listing: true, items: []int64{10}}},
		{"product moved to draft", func(s *site, tn *replica.Tenant) []*schema.Change {
			old := tn.Snapshot().Product(11, replica.Public)
			p := *old
			p.Status = schema.ProductDraft
			tx := s.log("shop").begin()
			tx.putProduct(old, &p)
			return tx.commit()
		}, deltas{catalog: true, listing: true, items: []int64{11}}},
		{"variant update", func(s *site, tn *replica.Tenant) []*schema.Change {
			sn := tn.Snapshot()
			p := sn.Product(10, replica.Public)
			v := sn.Variants(10)[0]
			nv := *v
			nv.Availability = schema.OutOfStock
			tx := s.log("shop").begin()
			tx.putVariant(p, p, v, &nv)
			return tx.commit()
		}, deltas{catalog: true, items: []int64{10}}},
		{"category change", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putCategory(true, category(1, "boots", 0), 1)
			return tx.commit()
		}, deltas{taxonomy: true}},
		{"category creation", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putCategory(false, category(2, "hats", 0), 2)
			return tx.commit()
		}, deltas{taxonomy: true}},
		{"currency change", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putCurrency(true, currency("EUR", "€", 2, "0.95"), "EUR")
			return tx.commit()
		}, deltas{currencies: true}},
		{"currency deletion", func(s *site, tn *replica.Tenant) []*schema.Change {
			tx := s.log("shop").begin()
			tx.putCurrency(true, nil, "EUR")
			return tx.commit()
		}, deltas{currencies: true}},
		{"post change", func(s *site, tn *replica.Tenant) []*schema.Change {
			old := tn.Snapshot().Post(30, replica.Full)
			p := *old
			p.Title = "Hello again"
			tx := s.log("shop").begin()
			tx.putPost(old, &p)
			return tx.commit()
		}, deltas{posts: true, postItems: []int64{30}}},
		{"registry change of the tenant", func(s *site, tn *replica.Tenant) []*schema.Change {
			e := *s.entries["shop"]
			e.Name = "Renamed store"
			return s.register(&e)
		}, deltas{site: true}},
		{"registry change of the default currency", func(s *site, tn *replica.Tenant) []*schema.Change {
			e := *s.entries["shop"]
			e.Currencies = []string{"EUR", "USD"}
			return s.register(&e)
		}, deltas{site: true, catalog: true}}, // the search index's prices are re-priced
		{"registry change of another tenant", func(s *site, tn *replica.Tenant) []*schema.Change {
			return s.register(tenantEntry("newco", 1, schema.TenantActive))
		}, deltas{}},
		{"a head alone", func(s *site, tn *replica.Tenant) []*schema.Change {
			w := s.log("shop")
			w.version += 3
			return []*schema.Change{head("shop", w.version)}
		}, deltas{}},
	}
	classes := []struct {
		name string
		c    replica.Class
		get  func(d deltas) bool
	}{
		{"Site", replica.Site, func(d deltas) bool { return d.site }},
		{"Catalog", replica.Catalog, func(d deltas) bool { return d.catalog }},
		{"Taxonomy", replica.Taxonomy, func(d deltas) bool { return d.taxonomy }},
		{"Currencies", replica.Currencies, func(d deltas) bool { return d.currencies }},
		{"Posts", replica.Posts, func(d deltas) bool { return d.posts }},
		{"Listing", replica.Listing, func(d deltas) bool { return d.listing }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, replica.Config{})
			tn := s.bootstrap("e")
			var before [6]uint64
			for i, c := range classes {
				before[i] = tn.Counter(c.c).Load()
			}
			items := map[int64]uint64{}
			for _, id := range []int64{10, 11, 12, 13} {
				items[id] = tn.ItemCounter(schema.KindProduct, id).Load()
			}
			postItems := map[int64]uint64{}
			for _, id := range []int64{30, 31} {
				postItems[id] = tn.ItemCounter(schema.KindPost, id).Load()
			}
			feed(s.r, tt.change(s, tn))
			for i, c := range classes {
				after := tn.Counter(c.c).Load()
				if moved, want := after > before[i], c.get(tt.want); moved != want {
					t.Errorf("Counter(%s) %d → %d: moved=%v, want %v", c.name, before[i], after, moved, want)
				}
			}
			for id, b := range items {
				after := tn.ItemCounter(schema.KindProduct, id).Load()
				if moved, want := after > b, slices.Contains(tt.want.items, id); moved != want {
					t.Errorf("ItemCounter(product %d) %d → %d: moved=%v, want %v", id, b, after, moved, want)
				}
			}
			for id, b := range postItems {
				after := tn.ItemCounter(schema.KindPost, id).Load()
				if moved, want := after > b, slices.Contains(tt.want.postItems, id); moved != want {
					t.Errorf("ItemCounter(post %d) %d → %d: moved=%v, want %v", id, b, after, moved, want)
				}
			}
		})
	}
}

func TestItemCounterIsShared(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	a, b := tn.ItemCounter(schema.KindProduct, 10), tn.ItemCounter(schema.KindProduct, 10)
	if a != b {
		t.Fatalf("ItemCounter returned two counters for the same product")
	}
	if tn.ItemCounter(schema.KindPost, 10) == a {
		t.Fatalf("ItemCounter shares a counter between a product and a post of the same id")
	}
}
