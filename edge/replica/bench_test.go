package replica_test

import (
	"fmt"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

const (
	benchProducts           = 20_000
	benchVariantsPerProduct = 3
)

// benchCatalog returns the registry batch and one bootstrap batch of benchProducts products with
// benchVariantsPerProduct variants each, ending with the log's head.
func benchCatalog() (reg, batch []*schema.Change) {
	s := newSite(nil, replica.Config{})
	reg = s.register(tenantEntry("shop", 0, schema.TenantActive))
	w := s.log("shop")
	batch = make([]*schema.Change, 0, benchProducts*(1+benchVariantsPerProduct)+1)
	for i := int64(1); i <= benchProducts; i++ {
		tx := w.begin()
		p := product(i, fmt.Sprintf("product-%d", i), t0.Add(time.Duration(i)*time.Second))
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
	reg, batch := benchCatalog()
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
		if !tn.Ready() || tn.Snapshot().ProductCount() != benchProducts {
			b.Fatalf("bootstrap not applied: ready=%v products=%d", tn.Ready(), tn.Snapshot().ProductCount())
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(len(batch)), "changes/op")
}

func BenchmarkApplyIncremental(b *testing.B) {
	reg, batch := benchCatalog()
	r := newReplica(replica.Config{})
	r.Reset("e")
	feed(r, reg, batch)
	r.Checkpoint()
	tn := r.TenantBySlug("shop")
	version := tn.Version()
	// The stored states of the products, to resend as updates at new versions.
	data := make([][]byte, benchProducts+1)
	for _, c := range batch {
		if c.Kind == schema.KindProduct {
			var id int
			fmt.Sscan(c.ID, &id)
			data[id] = c.Data
		}
	}
	c := &schema.Change{Schema: schema.ChangeSchemaVersion, Log: "shop", Kind: schema.KindProduct, Vis: schema.Pub}
	h := head("shop", 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := 1 + (i*7919)%benchProducts
		version++
		c.ID, c.Data = schema.IDString(int64(id)), data[id]
		c.Version, c.TxnFirst, c.TxnLast = version, version, version
		h.Version = version
		r.Change(c)
		r.Change(h)
	}
	b.StopTimer()
	if tn.Version() != version {
		b.Fatalf("Version() = %d, want %d", tn.Version(), version)
	}
}
