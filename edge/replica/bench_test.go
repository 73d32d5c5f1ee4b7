package replica_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

const (
	benchProducts           = 20_000
	benchVariantsPerProduct = 3
	benchSeed               = 42
)

// benchCatalog returns the registry batch and one bootstrap batch of n products with
// benchVariantsPerProduct variants each, ending with the log's head. Titles, descriptions,
// categories and prices come from searchtest's synthetic catalog, so that the search index kept
// beside the snapshot has realistic text to index.
func benchCatalog(n int) (reg, batch []*schema.Change) {
	s := newSite(nil, replica.Config{})
	reg = s.register(tenantEntry("shop", 0, schema.TenantActive))
	w := s.log("shop")
	docs := searchtest.Catalog(n, benchSeed)
	batch = make([]*schema.Change, 0, n*(1+benchVariantsPerProduct)+1)
	for i := int64(1); i <= int64(n); i++ {
		tx := w.begin()
		d := docs[i-1]
		p := product(i, fmt.Sprintf("product-%d", i), t0.Add(time.Duration(i)*time.Second))
		p.Title, p.Description, p.CategoryIDs = d.Title, d.Description, d.CategoryIDs
		p.Prices["USD"] = d.Price
		p.Featured = i%50 == 0
		tx.putProduct(nil, p)
		for k := int64(0); k < benchVariantsPerProduct; k++ {
			tx.putVariant(nil, p, nil, variant(1_000_000+i*10+k, i, int(k), schema.InStock))
		}
		batch = append(batch, body(tx.commit())...)
	}
	return reg, append(batch, head("shop", w.version))
}

func BenchmarkApplyBootstrap(b *testing.B) {
	reg, batch := benchCatalog(benchProducts)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newReplica(replica.Config{})
		r.Reset("e")
		feed(r, reg)
		b.StartTimer()
		feed(r, batch)
		b.StopTimer()
		tn := r.TenantBySlug("shop")
		ix, _ := tn.Snapshot().SearchIndex()
		if !tn.Ready() || tn.Snapshot().ProductCount() != benchProducts || ix.Len() != benchProducts {
			b.Fatalf("bootstrap not applied: ready=%v products=%d indexed=%d", tn.Ready(), tn.Snapshot().ProductCount(), ix.Len())
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(len(batch)), "changes/op")
}

// BenchmarkApplyIncremental applies one single-product transaction per operation to a catalog of
// benchProducts: "same" resends a product's stored state at a new version (nothing the search
// index sees changes), "price" changes its price, "text" gives it another product's title and
// description (every indexed word changes), "rename" gives it the title "Bench Renamed N" (every
// title word and the title's length change, as in the first rename of a product by `vitrine
// bench freshness`), "renumber" moves it between two such titles of the same length (one word
// changes, as in that bench's later renames of a product), "availability"
// changes one of its variants' availability (the product's document changes through its variants).
func BenchmarkApplyIncremental(b *testing.B) {
	reg, batch := benchCatalog(benchProducts)
	others := searchtest.Catalog(1000, benchSeed+1)
	for _, kind := range []string{"same", "price", "text", "rename", "renumber", "availability"} {
		b.Run(kind, func(b *testing.B) {
			r := newReplica(replica.Config{})
			r.Reset("e")
			feed(r, reg, batch)
			r.Checkpoint()
			tn := r.TenantBySlug("shop")
			version := tn.Version()
			// The stored states, to resend (changed or not) at new versions.
			products := make([]*schema.Product, benchProducts+1)
			for _, c := range batch {
				if c.Kind == schema.KindProduct {
					var id int
					fmt.Sscan(c.ID, &id)
					products[id] = tn.Snapshot().Product(schema.ProductID(id), replica.Public)
				}
			}
			// Transactions prepared outside the timer: txns[0][k] changes product ids[k] (or all
			// its variants), txns[1][k] restores it, and operations alternate between the two,
			// so that every operation changes what its kind says.
			const states = 64
			var txns [2][states][]*schema.Change
			for k := range states {
				id := int64(1 + (k*7919)%benchProducts)
				orig := *products[id]
				changed := orig
				switch kind {
				case "price":
					changed.Prices = schema.Prices{"USD": orig.Prices["USD"] + int64(k) + 1}
				case "text":
					o := others[k%len(others)]
					changed.Title, changed.Description = o.Title, o.Description
				case "rename":
					changed.Title = "Bench Renamed " + strconv.Itoa(k)
				case "renumber":
					changed.Title = "Bench Renamed " + strconv.Itoa(1000+k)
					orig.Title = "Bench Renamed " + strconv.Itoa(2000+k)
				}
				if kind != "availability" {
					txns[0][k] = []*schema.Change{chg("shop", schema.KindProduct, schema.IDString(id), schema.Pub, &changed, 0)}
					txns[1][k] = []*schema.Change{chg("shop", schema.KindProduct, schema.IDString(id), schema.Pub, &orig, 0)}
					continue
				}
				// Every variant out of stock, then back in stock: the product's best availability
				// moves each time.
				for j, avail := range []schema.Availability{schema.OutOfStock, schema.InStock} {
					for v := int64(0); v < benchVariantsPerProduct; v++ {
						vid := 1_000_000 + id*10 + v
						txns[j][k] = append(txns[j][k], chg("shop", schema.KindVariant, schema.IDString(vid), schema.Pub, variant(vid, id, int(v), avail), 0))
					}
				}
			}
			h := head("shop", 0)
			apply := func(tx []*schema.Change) {
				first := version + 1
				for _, c := range tx {
					version++
					c.Version, c.TxnFirst, c.TxnLast = version, first, first+int64(len(tx))-1
					r.Change(c)
				}
				h.Version = version
				r.Change(h)
			}
			if kind == "renumber" {
				for _, tx := range txns[1] {
					apply(tx) // the products start with their "restored" titles
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				apply(txns[(i/states)%2][i%states])
			}
			b.StopTimer()
			if tn.Version() != version {
				b.Fatalf("Version() = %d, want %d", tn.Version(), version)
			}
		})
	}
}
