package search_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"vitrine/edge/search"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

// TestBoundsExact: Search, which skips the matches whose score bound cannot enter the page,
// answers exactly as scoring every match, for one-list and many-list queries, with and without
// filters, every sort, pages of no hits, and on an index whose length bounds are stale (With
// deleted its shortest documents and changed others).
func TestBoundsExact(t *testing.T) {
	docs := searchtest.Catalog(5000, 7)
	built := search.Build(docs)
	// A derived index: the shortest titles and descriptions deleted, others rewritten.
	r := rand.New(rand.NewPCG(3, 5))
	var dels []schema.ProductID
	var ups []*search.Doc
	for i, d := range docs {
		switch {
		case len(d.Title) < 18 || len(d.Description) < 200:
			dels = append(dels, d.ID)
		case i%7 == 0:
			c := *d
			o := docs[r.IntN(len(docs))]
			c.Title, c.Description = o.Title+" "+d.Title, o.Description
			ups = append(ups, &c)
		}
	}
	derived := built.With(ups[:200], nil).With(ups[200:], dels)
	qs, _ := goldenQueries(rand.New(rand.NewPCG(11, 13)))
	extra := []search.Query{
		{Text: "lamp ", Limit: 20}, {Text: "lamp", Limit: 5}, {Text: "red lamp ", Limit: 20},
		{Text: "lapm ", Limit: 20}, {Text: "velvte ", Limit: 20}, {Text: "red lamp chair oak", Limit: 3, Offset: 2},
		{Text: "lamp ", Limit: 0}, {Text: "red lamp", Limit: 0, Sort: search.PriceAsc},
		{Text: "lamp ", Limit: 1000}, {Text: "l", Limit: 20}, {Text: "the lamp", Limit: 20},
	}
	qs = append(qs, extra...)
	for _, q := range qs[:len(qs)-len(extra)] {
		q.Limit = 0
		qs = append(qs, q)
	}
	for name, ix := range map[string]*search.Index{"built": built, "derived": derived} {
		for _, q := range qs {
			if got, want := ix.Search(q), search.SearchExhaustive(ix, q); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %+v: got %+v, want %+v", name, q, got, want)
			}
		}
	}
}
