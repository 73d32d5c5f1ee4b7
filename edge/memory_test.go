package edge_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
)

// BenchmarkReplicaHeap loads 20,000 products with two variants each into an edge's replica and
// reports the live heap they take against their raw JSON (heap/raw), the figure behind the
// coldstart scenario's steady RSS (which adds the garbage collector's headroom). Profile it with
// -memprofile to see where the bytes go.
func BenchmarkReplicaHeap(b *testing.B) {
	words := []string{"brass", "lamp", "oak", "table", "linen", "chair", "wool", "rug", "glass", "vase", "steel", "shelf"}
	for range b.N {
		f := newFixture(b, edge.Config{CacheBytes: -1})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		raw := 0
		for i := int64(0); i < 20000; i++ {
			title := fmt.Sprintf("%s %s %s %d", words[i%12], words[(i/12)%12], words[(i/144)%12], i)
			p := product(100000+i, fmt.Sprintf("p-%d", i), title, 1000+i)
			p.Description = title + " is made by hand in small batches from materials we source ourselves; it is built to last for years and to be repaired when it does not."
			j, _ := json.Marshal(p)
			raw += len(j)
			f.feed.put("demo", schema.KindProduct, schema.IDString(p.ID), schema.Pub, p)
			for v := int64(0); v < 2; v++ {
				vr := &schema.Variant{ID: schema.VariantID(1000000 + i*2 + v), ProductID: p.ID, SKU: fmt.Sprintf("SKU-%d-%d", i, v),
					Title: fmt.Sprint("Size ", v), Options: []schema.Option{{Name: "size", Value: fmt.Sprint(v)}}, Availability: schema.InStock}
				j, _ := json.Marshal(vr)
				raw += len(j)
				f.feed.put("demo", schema.KindVariant, schema.IDString(vr.ID), schema.Pub, vr)
			}
			if i%500 == 0 {
				f.feed.head("demo")
			}
		}
		f.feed.head("demo")
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(raw), "heap/raw")
		b.ReportMetric(float64(raw)/(1<<20), "rawMiB")
		runtime.KeepAlive(f)
	}
}
