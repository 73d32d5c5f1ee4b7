package search_test

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"vitrine/edge/search"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden.json from the current implementation")

// golden is what an index answered, recorded from the B+tree implementation of postings that the
// compressed blocks replaced: the differential test of the change.
type golden struct {
	Search  []search.Result       `json:"search"`
	Suggest [][]search.Suggestion `json:"suggest"`
}

// goldenCase makes a catalog, an index reached through Build and one reached through batches of
// With (updates and deletions included), and random queries and prefixes over its vocabulary.
func goldenCase() (built, derived *search.Index, qs []search.Query, ps []string) {
	docs := searchtest.Catalog(3000, 5)
	built = search.Build(docs)
	r := rand.New(rand.NewPCG(9, 9))
	derived = search.New()
	for i := 0; i < len(docs); i += 100 {
		derived = derived.With(docs[i:min(i+100, len(docs))], nil)
	}
	// Churn: rewrite and delete some documents, then put the originals back.
	var dels []schema.ProductID
	var ups []*search.Doc
	for i := range 200 {
		d := *docs[r.IntN(len(docs))]
		if i%3 == 0 {
			dels = append(dels, d.ID)
			continue
		}
		o := docs[r.IntN(len(docs))]
		d.Title, d.Description = o.Title, o.Description
		ups = append(ups, &d)
	}
	derived = derived.With(ups, dels)
	var back []*search.Doc
	for _, d := range docs {
		if g, ok := derived.Get(d.ID); !ok || g.Title != d.Title || g.Description != d.Description {
			back = append(back, d)
		}
	}
	for i := 0; i < len(back); i += 50 {
		derived = derived.With(back[i:min(i+50, len(back))], nil)
	}

	qs, ps = goldenQueries(r)
	return built, derived, qs, ps
}

// goldenQueries makes random queries and prefixes over the catalog's frequent words.
func goldenQueries(r *rand.Rand) (qs []search.Query, ps []string) {
	vocab := searchtest.Vocabulary()[:600]
	word := func() string {
		w := vocab[int(float64(len(vocab))*r.Float64()*r.Float64())]
		switch r.IntN(6) {
		case 0: // a typo
			if len(w) > 3 {
				i := r.IntN(len(w) - 1)
				w = w[:i] + w[i+1:i+2] + w[i:i+1] + w[i+2:]
			}
		case 1: // a prefix
			w = w[:1+r.IntN(len(w))]
		}
		return w
	}
	for range 400 {
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, word())
		}
		text := strings.Join(parts, " ")
		if r.IntN(2) == 0 {
			text += " "
		}
		q := search.Query{Text: text, Sort: search.Sort(r.IntN(5)), Offset: r.IntN(4), Limit: 1 + r.IntN(10)}
		if r.IntN(4) == 0 {
			q.Categories = []schema.CategoryID{schema.CategoryID(1 + r.IntN(searchtest.Categories)), schema.CategoryID(1 + r.IntN(20))}
		}
		if r.IntN(4) == 0 {
			lo, hi := int64(r.IntN(5000)), int64(5000+r.IntN(20000))
			q.MinPrice, q.MaxPrice = &lo, &hi
		}
		if r.IntN(5) == 0 {
			q.Availability = []schema.Availability{schema.InStock}
		}
		qs = append(qs, q)
	}
	for range 200 {
		p := word()
		if r.IntN(3) == 0 {
			p = word() + " " + p
		}
		ps = append(ps, p)
	}
	return qs, ps
}

// TestGolden checks that indexes reached through Build and through With answer recorded queries
// exactly as the previous implementation did (hits, order, scores, totals, suggestions).
func TestGolden(t *testing.T) {
	built, derived, qs, ps := goldenCase()
	answer := func(ix *search.Index) golden {
		var g golden
		for _, q := range qs {
			g.Search = append(g.Search, ix.Search(q))
		}
		for _, p := range ps {
			g.Suggest = append(g.Suggest, ix.Suggest(p, 8))
		}
		return g
	}
	got := answer(built)
	const path = "testdata/golden.json"
	if *updateGolden {
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want golden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, res := range want.Search {
		hits += len(res.Hits)
	}
	if len(want.Search) != len(qs) || len(want.Suggest) != len(ps) || hits < len(qs) {
		t.Fatalf("golden file has %d searches (%d hits) and %d suggestions for %d and %d", len(want.Search), hits, len(want.Suggest), len(qs), len(ps))
	}
	for name, g := range map[string]golden{"Build": got, "With": answer(derived)} {
		for i := range qs {
			if !reflect.DeepEqual(norm(g.Search[i]), norm(want.Search[i])) {
				t.Fatalf("%s: Search(%+v)\n got  %+v\n want %+v", name, qs[i], g.Search[i], want.Search[i])
			}
		}
		for i := range ps {
			if !reflect.DeepEqual(g.Suggest[i], want.Suggest[i]) {
				t.Fatalf("%s: Suggest(%q)\n got  %+v\n want %+v", name, ps[i], g.Suggest[i], want.Suggest[i])
			}
		}
	}
}

// norm makes an empty hit list nil, as JSON decoding does.
func norm(r search.Result) search.Result {
	if len(r.Hits) == 0 {
		r.Hits = nil
	}
	return r
}

// TestBuildParallel checks that Build, tokenising ranges of a catalog in parallel, answers like an
// index made document by document through With.
func TestBuildParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	// Three ranges of at least buildChunkMin documents: enough to merge unequal ranges, small
	// enough for the race detector.
	docs := searchtest.Catalog(6400, 3) // buildChunkMin is 2048; With below takes batches of 200
	built := search.Build(docs)
	derived := search.New()
	for i := 0; i < len(docs); i += 200 {
		derived = derived.With(docs[i:i+200], nil)
	}
	qs, ps := goldenQueries(rand.New(rand.NewPCG(4, 4)))
	for _, q := range qs {
		if got, want := built.Search(q), derived.Search(q); !reflect.DeepEqual(got, want) {
			t.Fatalf("Search(%+v)\n Build %+v\n With  %+v", q, got, want)
		}
	}
	for _, p := range ps {
		if got, want := built.Suggest(p, 8), derived.Suggest(p, 8); !reflect.DeepEqual(got, want) {
			t.Fatalf("Suggest(%q)\n Build %+v\n With  %+v", p, got, want)
		}
	}
}
