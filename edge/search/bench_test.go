package search_test

import (
	"fmt"
	"runtime"
	"testing"

	"vitrine/edge/search"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

const (
	benchDocs = 100_000
	benchSeed = 42
)

func BenchmarkBuild100k(b *testing.B) {
	docs := searchtest.Catalog(benchDocs, benchSeed)
	before := searchtest.HeapInUse()
	ix := search.Build(docs)
	overhead := float64(searchtest.HeapInUse()-before) / benchDocs
	runtime.KeepAlive(ix)
	ix = nil
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ix = search.Build(docs)
	}
	if ix.Len() != benchDocs {
		b.Fatalf("Len = %d", ix.Len())
	}
	b.ReportMetric(float64(benchDocs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(overhead, "index-bytes/doc")
}

// BenchmarkWithOne updates one product of a 100k index per operation: "text" rewrites its title
// and description (the worst case: every word changes), "price" changes only its price.
func BenchmarkWithOne(b *testing.B) {
	docs := searchtest.Catalog(benchDocs, benchSeed)
	others := searchtest.Catalog(1000, benchSeed+1)
	base := search.Build(docs)
	for _, kind := range []string{"text", "price"} {
		b.Run(kind, func(b *testing.B) {
			ix := base
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				old := docs[(i*7919)%benchDocs]
				d := *old
				if kind == "text" {
					o := others[i%len(others)]
					d.Title, d.Description = o.Title, o.Description
				} else {
					d.Price++
				}
				ix = ix.With([]*search.Doc{&d}, nil)
				i++
			}
		})
	}
}

func benchQueries() []struct {
	name string
	q    search.Query
} {
	cat := schema.CategoryID(17)
	return []struct {
		name string
		q    search.Query
	}{
		{"one-word", search.Query{Text: "lamp ", Limit: 20}},
		{"one-word-prefix", search.Query{Text: "lamp", Limit: 20}},
		{"two-words", search.Query{Text: "red lamp ", Limit: 20}},
		{"typo", search.Query{Text: "lapm ", Limit: 20}},
		{"typo-rare-word", search.Query{Text: "velvte ", Limit: 20}},
		{"typo-lookup-no-match", search.Query{Text: "qzxvwk ", Limit: 20}},
		{"rare-word", search.Query{Text: "velvet ", Limit: 20}},
		{"empty-text-category", search.Query{Categories: []schema.CategoryID{cat}, Limit: 20}},
		{"empty-text-price", search.Query{MinPrice: ptr(int64(1000)), MaxPrice: ptr(int64(2000)), Limit: 20}},
	}
}

func ptr[T any](v T) *T { return &v }

// benchIndexes returns the benchmark catalog's index as Build makes it ("built") and as an edge
// loads it from a snapshot's image ("image"), for comparing their queries in one run.
func benchIndexes(b *testing.B) []struct {
	name string
	ix   *search.Index
} {
	docs := searchtest.Catalog(benchDocs, benchSeed)
	built := search.Build(docs)
	img, err := built.AppendImage(nil)
	if err != nil {
		b.Fatal(err)
	}
	loaded, err := search.LoadImage(img, docs, search.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		ix   *search.Index
	}{{"built", built}, {"image", loaded}}
}

func BenchmarkSearch(b *testing.B) {
	for _, x := range benchIndexes(b) {
		for _, c := range benchQueries() {
			b.Run(x.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				var res search.Result
				for b.Loop() {
					res = x.ix.Search(c.q)
				}
				b.ReportMetric(float64(res.Total), "matches")
			})
		}
	}
}

func BenchmarkSuggest(b *testing.B) {
	for _, x := range benchIndexes(b) {
		for _, p := range []string{"l", "la", "lam", "lamp", "vintag", "red la", "red lamp", "zzz"} {
			b.Run(fmt.Sprintf("%s/%q", x.name, p), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					x.ix.Suggest(p, 8)
				}
			})
		}
	}
}

// BenchmarkIndexHeap reports the live heap of an index of 20k catalog products per product,
// made by Build ("build") and by batches of 500 through With ("with", as a replica following the
// stream makes it), and the time to make it.
func BenchmarkIndexHeap(b *testing.B) {
	const n = 20_000
	docs := searchtest.Catalog(n, benchSeed)
	for _, how := range []string{"build", "with"} {
		b.Run(how, func(b *testing.B) {
			var overhead float64
			for b.Loop() {
				before := searchtest.HeapInUse()
				var ix *search.Index
				if how == "build" {
					ix = search.Build(docs)
				} else {
					ix = search.New()
					for i := 0; i < n; i += 500 {
						ix = ix.With(docs[i:i+500], nil)
					}
				}
				overhead = float64(searchtest.HeapInUse()-before) / n
				if ix.Len() != n {
					b.Fatalf("Len = %d", ix.Len())
				}
				runtime.KeepAlive(ix)
			}
			b.ReportMetric(overhead, "index-bytes/doc")
		})
	}
}

// BenchmarkBuild20k is Build of a 20k catalog.
func BenchmarkBuild20k(b *testing.B) {
	docs := searchtest.Catalog(20_000, benchSeed)
	b.ReportAllocs()
	for b.Loop() {
		search.Build(docs)
	}
}
