package search_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"vitrine/edge/search"
	"vitrine/schema"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// doc makes a document; ids order their creation (a higher id is newer) unless age says otherwise.
func doc(id int, title, desc string) *search.Doc {
	return &search.Doc{
		ID: schema.ProductID(id), Slug: fmt.Sprintf("p-%d", id), Title: title, Description: desc,
		Price: int64(id * 100), Availability: schema.InStock, CreatedAt: t0.Add(time.Duration(id) * time.Hour),
	}
}

func ids(res search.Result) []schema.ProductID {
	out := make([]schema.ProductID, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.ID
	}
	return out
}

func pids(xs ...int) []schema.ProductID {
	out := make([]schema.ProductID, len(xs))
	for i, x := range xs {
		out[i] = schema.ProductID(x)
	}
	return out
}

func TestRanking(t *testing.T) {
	older := func(d *search.Doc, id int) *search.Doc {
		d.CreatedAt = t0.Add(-time.Duration(id) * time.Hour)
		return d
	}
	for _, c := range []struct {
		name  string
		docs  []*search.Doc
		opts  search.Options
		query string
		want  []int // exact order of the hits
		// prefix: want is only the start of the hits.
		prefix bool
	}{
		{
			name: "title beats description",
			docs: []*search.Doc{
				doc(1, "Oak desk", "lamp lamp lamp lamp lamp"),
				doc(2, "A reading lamp with a very long title about many other things", ""),
				doc(3, "Chair", "nothing"),
			},
			query: "lamp ", want: []int{2, 1},
		},
		{
			name: "more query words beat fewer, all beat partial",
			docs: []*search.Doc{
				doc(1, "Blue Blue Blue", "blue blue"),
				doc(2, "Cup", "a blue vase for the table"),
				doc(3, "Blue vase", ""),
				doc(4, "Vase vase", ""),
			},
			query: "blue vase ", want: []int{3, 2}, prefix: true,
		},
		{
			name: "both words in the title beat one in the title and one in the description",
			docs: []*search.Doc{
				doc(1, "Red", "lamp"),
				doc(2, "Red lamp", ""),
			},
			query: "red lamp ", want: []int{2, 1},
		},
		{
			name:  "BM25: a shorter title ranks higher",
			docs:  []*search.Doc{doc(1, "Lamp with shade and stand", ""), doc(2, "Lamp", ""), doc(3, "Lamp shade", "")},
			query: "lamp ", want: []int{2, 3, 1},
		},
		{
			name:  "BM25: rarer word weighs more",
			docs:  []*search.Doc{doc(1, "Lamp", "x"), doc(2, "Lamp", "y"), doc(3, "Lamp", "z"), doc(4, "Velvet", "")},
			query: "lamp velvet ", want: []int{4, 3, 2, 1},
		},
		{
			name:  "typo: substitution",
			docs:  []*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Oak chair", "")},
			query: "lamb ", want: []int{1},
		},
		{
			name:  "typo: transposition",
			docs:  []*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Oak chair", "")},
			query: "lapm ", want: []int{1},
		},
		{
			name:  "typo: insertion",
			docs:  []*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Oak chair", "")},
			query: "laamp ", want: []int{1},
		},
		{
			name:  "typo: deletion",
			docs:  []*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Oak chair", "")},
			query: "chir ", want: []int{2},
		},
		{
			name:  "typo: in the description",
			docs:  []*search.Doc{doc(1, "Brass", "a lamp"), doc(2, "Oak chair", "")},
			query: "lmap ", want: []int{1},
		},
		{
			name:  "typo: 3-letter words are not fuzzed",
			docs:  []*search.Doc{doc(1, "Red car", ""), doc(2, "Brass lamp", "")},
			query: "cat lmp ", want: []int{},
		},
		{
			name:  "typo: shorter minimum length",
			docs:  []*search.Doc{doc(1, "Red car", ""), doc(2, "Brass lamp", "")},
			opts:  search.Options{FuzzyMinLen: 3},
			query: "cat lmp ", want: []int{2, 1},
		},
		{
			name:  "typo: turned off",
			docs:  []*search.Doc{doc(1, "Brass lamp", "")},
			opts:  search.Options{FuzzyMinLen: -1},
			query: "lapm ", want: []int{},
		},
		{
			name:  "typo: two edits do not match",
			docs:  []*search.Doc{doc(1, "Brass lamp", "")},
			query: "lpma ", want: []int{},
		},
		{
			name:  "typo: numbers are not fuzzed",
			docs:  []*search.Doc{doc(1, "Model 2024", "")},
			query: "2025 ", want: []int{},
		},
		{
			name:  "typo: an exact word is not fuzzed",
			docs:  []*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Lamb stew", "")},
			query: "lamb ", want: []int{2},
		},
		{
			name:  "typo: exact match of another word ranks above a typo match",
			docs:  []*search.Doc{doc(1, "Lamp", ""), doc(2, "Desk", "")},
			query: "lamo desk ", want: []int{2, 1},
		},
		{
			name:  "prefix: last word as you type, exact first",
			docs:  []*search.Doc{doc(1, "Lampshade", ""), doc(2, "Lamp", ""), doc(3, "Clamp", "")},
			query: "lamp", want: []int{2, 1},
		},
		{
			name:  "prefix: not after a separator",
			docs:  []*search.Doc{doc(1, "Lampshade", ""), doc(2, "Lamp", "")},
			query: "lamp ", want: []int{2},
		},
		{
			name:  "prefix: only the last word",
			docs:  []*search.Doc{doc(1, "Lampshade", ""), doc(2, "Red", "")},
			query: "lam red", want: []int{2},
		},
		{
			name:  "prefix: a title prefix beats an exact description word",
			docs:  []*search.Doc{doc(1, "Chair", "lamp"), doc(2, "Lampshade", "")},
			query: "lamp", want: []int{2, 1},
		},
		{
			name:  "prefix and typo together",
			docs:  []*search.Doc{doc(1, "Lampshade", ""), doc(2, "Lamps", "")},
			query: "lampsh", want: []int{1, 2},
		},
		{
			name:  "diacritics in the document",
			docs:  []*search.Doc{doc(1, "Café crème", ""), doc(2, "Tea", "")},
			query: "cafe creme ", want: []int{1},
		},
		{
			name:  "diacritics in the query",
			docs:  []*search.Doc{doc(1, "Cafe creme", ""), doc(2, "Tea", "")},
			query: "CAFÉ ", want: []int{1},
		},
		{
			name:  "decomposed diacritics",
			docs:  []*search.Doc{doc(1, "Cafe\u0301", ""), doc(2, "Tea", "")},
			query: "café ", want: []int{1},
		},
		{
			name:  "case and punctuation",
			docs:  []*search.Doc{doc(1, "T-Shirt (XL)", ""), doc(2, "Shirt", "")},
			query: "t-shirt, xl!", want: []int{1, 2},
		},
		{
			name:  "stop words are ignored with other words",
			docs:  []*search.Doc{doc(1, "The lamp", ""), doc(2, "Lamp", ""), doc(3, "The chair", "")},
			query: "the lamp ", want: []int{2, 1},
		},
		{
			name:  "a query of stop words still works",
			docs:  []*search.Doc{doc(1, "The Who", ""), doc(2, "Lamp", "")},
			query: "the ", want: []int{1},
		},
		{
			name: "ties: newer first, then lower id",
			docs: []*search.Doc{
				older(doc(1, "Lamp", ""), 1), older(doc(2, "Lamp", ""), 5), older(doc(3, "Lamp", ""), 1),
				doc(4, "Lamp", ""),
			},
			query: "lamp", want: []int{4, 1, 3, 2},
		},
		{
			name:  "no match",
			docs:  []*search.Doc{doc(1, "Lamp", "")},
			query: "zebra ", want: []int{},
		},
		{
			name:  "punctuation only is an empty query: newest first",
			docs:  []*search.Doc{doc(1, "Lamp", ""), doc(2, "Chair", "")},
			query: "?!", want: []int{2, 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := search.BuildWithOptions(c.docs, c.opts)
			res := ix.Search(search.Query{Text: c.query, Limit: 50})
			got := ids(res)
			if c.prefix {
				if len(got) < len(c.want) || !slices.Equal(got[:len(c.want)], pids(c.want...)) {
					t.Fatalf("Search(%q) = %v, want it to start with %v", c.query, got, c.want)
				}
				return
			}
			if !slices.Equal(got, pids(c.want...)) {
				t.Fatalf("Search(%q) = %v, want %v (hits %+v)", c.query, got, c.want, res.Hits)
			}
			if res.Total != len(c.want) {
				t.Fatalf("Total = %d, want %d", res.Total, len(c.want))
			}
			// Scores never increase down the list.
			for i := 1; i < len(res.Hits); i++ {
				if res.Hits[i].Score > res.Hits[i-1].Score {
					t.Fatalf("hit %d scores %v above hit %d (%v)", i, res.Hits[i].Score, i-1, res.Hits[i-1].Score)
				}
			}
		})
	}
}

// TestTitleAlwaysBeatsDescription checks the ranking rule on many documents: any title match of
// a word ranks above every description-only match, whatever the lengths and frequencies.
func TestTitleAlwaysBeatsDescription(t *testing.T) {
	var docs []*search.Doc
	for i := 1; i <= 200; i++ {
		title, desc := "Item", ""
		for k := 0; k < i%13; k++ {
			title += " filler"
		}
		for k := 0; k < i%7; k++ {
			desc += " lamp word"
		}
		if i%3 == 0 {
			title += " lamp"
		}
		docs = append(docs, doc(i, title, desc))
	}
	ix := search.Build(docs)
	res := ix.Search(search.Query{Text: "lamp ", Limit: 1000})
	inTitle := func(id schema.ProductID) bool { return id%3 == 0 }
	seenDesc := false
	for _, h := range res.Hits {
		if inTitle(h.ID) && seenDesc {
			t.Fatalf("title match %d ranks below a description-only match", h.ID)
		}
		if !inTitle(h.ID) {
			seenDesc = true
		}
	}
	if !seenDesc || res.Total < 100 {
		t.Fatalf("unexpected corpus: total %d", res.Total)
	}
}

func TestFiltersSortsPages(t *testing.T) {
	mk := func(id int, title string, price int64, avail schema.Availability, age int, cats ...schema.CategoryID) *search.Doc {
		d := doc(id, title, "")
		d.Price, d.Availability, d.CategoryIDs = price, avail, cats
		d.CreatedAt = t0.Add(time.Duration(age) * time.Hour)
		return d
	}
	docs := []*search.Doc{
		mk(1, "Brass lamp", 5000, schema.InStock, 1, 10),
		mk(2, "Oak lamp", 2500, schema.LowStock, 5, 10, 20),
		mk(3, "Zinc lamp", 9900, schema.OutOfStock, 3, 20),
		mk(4, "Ash chair", 2500, schema.InStock, 4, 30),
		mk(5, "Élan lamp", 100, schema.InStock, 2),
		mk(6, "Mystery box", 700, "preorder", 6, 30),
	}
	ix := search.Build(docs)
	p := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name  string
		q     search.Query
		want  []int
		total int
	}{
		{"all, newest first", search.Query{Limit: 10}, []int{6, 2, 4, 3, 5, 1}, 6},
		{"category", search.Query{Categories: []schema.CategoryID{10}, Limit: 10}, []int{2, 1}, 2},
		{"categories: any", search.Query{Categories: []schema.CategoryID{10, 30}, Limit: 10}, []int{6, 2, 4, 1}, 4},
		{"unknown category", search.Query{Categories: []schema.CategoryID{99}, Limit: 10}, []int{}, 0},
		{"min price inclusive", search.Query{MinPrice: p(5000), Limit: 10}, []int{3, 1}, 2},
		{"max price inclusive", search.Query{MaxPrice: p(2500), Limit: 10}, []int{6, 2, 4, 5}, 4},
		{"price range", search.Query{MinPrice: p(700), MaxPrice: p(5000), Limit: 10}, []int{6, 2, 4, 1}, 4},
		{"empty price range", search.Query{MinPrice: p(6000), MaxPrice: p(5000), Limit: 10}, []int{}, 0},
		{"availability", search.Query{Availability: []schema.Availability{schema.InStock}, Limit: 10}, []int{4, 5, 1}, 3},
		{"availability: any", search.Query{Availability: []schema.Availability{schema.LowStock, schema.OutOfStock}, Limit: 10}, []int{2, 3}, 2},
		{"availability: unknown class", search.Query{Availability: []schema.Availability{"preorder"}, Limit: 10}, []int{6}, 1},
		{"availability: other unknown class", search.Query{Availability: []schema.Availability{"backorder"}, Limit: 10}, []int{}, 0},
		{"text and filters", search.Query{Text: "lamp ", Categories: []schema.CategoryID{20}, MaxPrice: p(9000), Limit: 10}, []int{2}, 1},
		{"text and availability", search.Query{Text: "lamp ", Availability: []schema.Availability{schema.InStock}, Limit: 10}, []int{5, 1}, 2},
		{"price asc", search.Query{Sort: search.PriceAsc, Limit: 10}, []int{5, 6, 2, 4, 1, 3}, 6},
		{"price desc", search.Query{Sort: search.PriceDesc, Limit: 10}, []int{3, 1, 2, 4, 6, 5}, 6},
		{"newest", search.Query{Text: "lamp ", Sort: search.Newest, Limit: 10}, []int{2, 3, 5, 1}, 4},
		{"title asc, diacritics folded", search.Query{Sort: search.TitleAsc, Limit: 10}, []int{4, 1, 5, 6, 2, 3}, 6},
		{"text, price asc", search.Query{Text: "lamp ", Sort: search.PriceAsc, Limit: 10}, []int{5, 2, 1, 3}, 4},
		{"page 1", search.Query{Limit: 2}, []int{6, 2}, 6},
		{"page 2", search.Query{Offset: 2, Limit: 2}, []int{4, 3}, 6},
		{"last page, short", search.Query{Offset: 4, Limit: 4}, []int{5, 1}, 6},
		{"past the end", search.Query{Offset: 6, Limit: 4}, []int{}, 6},
		{"limit 0: total only", search.Query{Text: "lamp ", Limit: 0}, []int{}, 4},
		{"negative offset and limit", search.Query{Offset: -3, Limit: -1}, []int{}, 6},
		{"negative offset", search.Query{Offset: -3, Limit: 1}, []int{6}, 6},
		{"huge offset and limit", search.Query{Offset: 1 << 62, Limit: 1 << 62}, []int{}, 6},
		{"huge limit", search.Query{Offset: 5, Limit: 1<<63 - 1}, []int{1}, 6},
		{"text page 2", search.Query{Text: "lamp ", Offset: 1, Limit: 2, Sort: search.PriceDesc}, []int{1, 2}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ix.Search(c.q)
			if got := ids(res); !slices.Equal(got, pids(c.want...)) || res.Total != c.total {
				t.Fatalf("got %v total %d, want %v total %d", got, res.Total, c.want, c.total)
			}
			if c.q.Text == "" {
				for _, h := range res.Hits {
					if h.Score != 0 {
						t.Fatalf("score %v without text", h.Score)
					}
				}
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	feat := func(d *search.Doc) *search.Doc { d.Featured = true; return d }
	ix := search.Build([]*search.Doc{
		doc(1, "Lamp Brass", "red"),
		doc(2, "Red Lamp", ""),
		doc(3, "Lampshade", ""),
		feat(doc(4, "Lamp", "")),
		doc(5, "Vintage red lamp", ""),
		doc(6, "Café Table", "lamp"),
		doc(7, "Lamp", ""),
		doc(8, "Redwood lampstand", ""),
	})
	for _, c := range []struct {
		prefix string
		limit  int
		want   []int
	}{
		// First-word matches (featured first, then shorter, then id), then the others.
		{"la", 10, []int{4, 7, 3, 1, 2, 5, 8}},
		{"LA", 10, []int{4, 7, 3, 1, 2, 5, 8}},
		{"lamp", 10, []int{4, 7, 3, 1, 2, 5, 8}},
		{"lamps", 10, []int{3, 8}},
		{"lamp ", 10, []int{4, 7, 1, 2, 5}},
		{"la", 3, []int{4, 7, 3}},
		{"red la", 10, []int{2, 5}},
		{"red lamp", 10, []int{2, 5}},
		{"red lamp ", 10, []int{2, 5}},
		{"vintage lamp", 10, []int{5}},
		{"lamp red", 10, []int{2, 5}},
		{"red", 10, []int{2, 8, 5}},
		{"caf", 10, []int{6}},
		{"café t", 10, []int{6}},
		{"cafe", 10, []int{6}},
		{"brass", 10, []int{1}},
		{"zz", 10, nil},
		{"red zz", 10, nil},
		{"zz lamp", 10, nil},
		{"", 10, nil},
		{"  ", 10, nil},
		{"la", 0, nil},
		{"la", -1, nil},
	} {
		t.Run(c.prefix, func(t *testing.T) {
			got := ix.Suggest(c.prefix, c.limit)
			var gotIDs []schema.ProductID
			for _, s := range got {
				gotIDs = append(gotIDs, s.ID)
				d, _ := ix.Get(s.ID)
				if s.Slug != d.Slug || s.Title != d.Title {
					t.Fatalf("suggestion %+v does not carry the document's slug and title", s)
				}
			}
			if !slices.Equal(gotIDs, pids(c.want...)) {
				t.Fatalf("Suggest(%q, %d) = %v, want %v", c.prefix, c.limit, gotIDs, c.want)
			}
		})
	}
}

// TestSuggestManyCandidates covers both strategies of multi-word suggestions: walking the first
// word's set, and checking the candidates of a much rarer word.
func TestSuggestManyCandidates(t *testing.T) {
	var docs []*search.Doc
	for i := 1; i <= 300; i++ {
		title := "Red chair"
		switch {
		case i%100 == 0:
			title = "Red velvet chair"
		case i%7 == 0:
			title = "Chair red"
		}
		docs = append(docs, doc(i, title, ""))
	}
	ix := search.Build(docs)
	for _, c := range []struct {
		prefix string
		want   []int
	}{
		{"red vel", []int{100, 200, 300}},
		{"red velvet ch", []int{100, 200, 300}},
		{"chair red", []int{7, 14, 21}},
		{"red ch", []int{1, 2, 3}},
		{"chair velv", []int{100, 200, 300}},
	} {
		got := ix.Suggest(c.prefix, 3)
		var gotIDs []schema.ProductID
		for _, s := range got {
			gotIDs = append(gotIDs, s.ID)
		}
		if !slices.Equal(gotIDs, pids(c.want...)) {
			t.Errorf("Suggest(%q) = %v, want %v", c.prefix, gotIDs, c.want)
		}
	}
}

// TestPersistence checks that With leaves the old index answering exactly as before.
func TestPersistence(t *testing.T) {
	v1 := search.Build([]*search.Doc{doc(1, "Brass lamp", ""), doc(2, "Oak chair", ""), doc(3, "Red lamp", "")})
	queries := []search.Query{{Text: "lamp", Limit: 10}, {Text: "chair ", Limit: 10}, {Limit: 10}, {Text: "lapm ", Limit: 10}}
	before := make([]search.Result, len(queries))
	for i, q := range queries {
		before[i] = v1.Search(q)
	}
	sugg := v1.Suggest("la", 10)

	v2 := v1.With([]*search.Doc{doc(2, "Oak lamp", ""), doc(4, "Lamp post", "")}, []schema.ProductID{1, 99})
	if v1.Len() != 3 || v2.Len() != 3 {
		t.Fatalf("Len: v1 %d, v2 %d", v1.Len(), v2.Len())
	}
	for i, q := range queries {
		if got := v1.Search(q); !slices.Equal(got.Hits, before[i].Hits) || got.Total != before[i].Total {
			t.Fatalf("v1.Search(%+v) changed: %v, was %v", q, got, before[i])
		}
	}
	if got := v1.Suggest("la", 10); !slices.Equal(got, sugg) {
		t.Fatalf("v1.Suggest changed: %v, was %v", got, sugg)
	}
	if got := ids(v2.Search(search.Query{Text: "lamp ", Limit: 10})); !slices.Equal(got, pids(4, 3, 2)) {
		t.Fatalf("v2 lamp = %v", got)
	}
	if got := ids(v2.Search(search.Query{Text: "chair", Limit: 10})); len(got) != 0 {
		t.Fatalf("v2 chair = %v", got)
	}
	if _, ok := v2.Get(1); ok {
		t.Fatal("v2 still has product 1")
	}
	if d, ok := v1.Get(1); !ok || d.Title != "Brass lamp" {
		t.Fatal("v1 lost product 1")
	}
	if v3 := v2.With(nil, nil); v3 != v2 {
		t.Fatal("an empty batch made a new index")
	}
	// Upsert then delete of the same id in one batch: the delete wins.
	if v3 := v2.With([]*search.Doc{doc(9, "Lamp", "")}, []schema.ProductID{9}); v3.Len() != 3 {
		t.Fatalf("Len = %d", v3.Len())
	}
	// Two upserts of one id: the last wins.
	v4 := v2.With([]*search.Doc{doc(9, "Lamp", ""), doc(9, "Chair", "")}, nil)
	if got := ids(v4.Search(search.Query{Text: "chair ", Limit: 10})); !slices.Equal(got, pids(9)) {
		t.Fatalf("chair = %v", got)
	}
}

func TestEmptyIndex(t *testing.T) {
	for _, ix := range []*search.Index{search.New(), search.Build(nil), search.Build([]*search.Doc{nil})} {
		if ix.Len() != 0 {
			t.Fatalf("Len = %d", ix.Len())
		}
		if res := ix.Search(search.Query{Text: "lamp", Limit: 10}); res.Total != 0 || len(res.Hits) != 0 {
			t.Fatalf("Search = %+v", res)
		}
		if res := ix.Search(search.Query{Limit: 10}); res.Total != 0 {
			t.Fatalf("Search = %+v", res)
		}
		if s := ix.Suggest("la", 10); len(s) != 0 {
			t.Fatalf("Suggest = %v", s)
		}
	}
	// Deleting everything gives an empty index again.
	ix := search.Build([]*search.Doc{doc(1, "Lamp", "a b"), doc(2, "Chair", "c")}).With(nil, []schema.ProductID{1, 2})
	if ix.Len() != 0 || ix.Search(search.Query{Text: "lamp", Limit: 1}).Total != 0 || len(ix.Suggest("l", 5)) != 0 {
		t.Fatal("index not empty after deleting everything")
	}
	ix = ix.With([]*search.Doc{doc(3, "Lamp", "")}, nil)
	if got := ids(ix.Search(search.Query{Text: "lamp", Limit: 10})); !slices.Equal(got, pids(3)) {
		t.Fatalf("after re-adding: %v", got)
	}
}

func TestBuildDuplicatesAndNil(t *testing.T) {
	ix := search.Build([]*search.Doc{doc(1, "Lamp", ""), nil, doc(2, "Desk", ""), doc(1, "Chair", "")})
	if ix.Len() != 2 {
		t.Fatalf("Len = %d, want 2", ix.Len())
	}
	if got := ids(ix.Search(search.Query{Text: "chair ", Limit: 10})); !slices.Equal(got, pids(1)) {
		t.Fatalf("chair = %v: the later document of an id must win", got)
	}
	if got := ix.Search(search.Query{Text: "lamp ", Limit: 10}); got.Total != 0 {
		t.Fatalf("lamp = %+v: the earlier document of an id must be gone", got)
	}
}

func TestDocOf(t *testing.T) {
	p := &schema.Product{
		ID: 7, Slug: "brass-lamp", Title: "Brass lamp", Description: "Warm.", Status: schema.ProductActive,
		Featured: true, Prices: schema.Prices{"EUR": 1999, "USD": 2199}, CategoryIDs: []schema.CategoryID{3},
		CreatedAt: t0,
	}
	vs := []*schema.Variant{{ID: 1, Availability: schema.OutOfStock}, {ID: 2, Availability: schema.LowStock}}
	d := search.DocOf(p, vs, "EUR")
	want := search.Doc{
		ID: 7, Slug: "brass-lamp", Title: "Brass lamp", Description: "Warm.", CategoryIDs: []schema.CategoryID{3},
		Price: 1999, Availability: schema.LowStock, Featured: true, CreatedAt: t0,
	}
	if !reflect.DeepEqual(*d, want) {
		t.Fatalf("DocOf = %+v, want %+v", *d, want)
	}
	if d := search.DocOf(p, nil, "JPY"); d.Price != 0 || d.Availability != schema.OutOfStock {
		t.Fatalf("DocOf without variants or price = %+v", *d)
	}
}

// Get gives back the document as indexed, whether by Build, by With or by a rebuild, every field
// (the index keeps a document in its own compact form).
func TestGetReturnsTheIndexedDoc(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	var docs []*search.Doc
	for i, a := range []schema.Availability{schema.InStock, schema.LowStock, schema.OutOfStock, "preorder", ""} {
		for j, featured := range []bool{false, true} {
			id := 1 + i*2 + j
			d := doc(id, fmt.Sprintf("Lamp %d", id), fmt.Sprintf("Brass, number %d.", id))
			d.Availability, d.Featured = a, featured
			d.CategoryIDs = []schema.CategoryID{schema.CategoryID(id), 3}
			d.Price = int64(-5 + id*1000)
			d.CreatedAt = time.Date(2024, 2, id, 10, 11, 12, 123456789*j, paris)
			docs = append(docs, d)
		}
	}
	check := func(name string, ix *search.Index, want []*search.Doc) {
		t.Helper()
		for _, d := range want {
			g, ok := ix.Get(d.ID)
			if !ok {
				t.Errorf("%s: Get(%d) found nothing", name, d.ID)
				continue
			}
			if !g.CreatedAt.Equal(d.CreatedAt) {
				t.Errorf("%s: Get(%d).CreatedAt = %v, want %v", name, d.ID, g.CreatedAt, d.CreatedAt)
			}
			gc, dc := *g, *d
			gc.CreatedAt, dc.CreatedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(gc, dc) {
				t.Errorf("%s: Get(%d) = %+v, want %+v", name, d.ID, gc, dc)
			}
		}
	}
	check("Build", search.Build(docs), docs)
	grown := search.Build(nil)
	for _, d := range docs {
		grown = grown.With([]*search.Doc{d}, nil)
	}
	check("With", grown, docs)
	// Change every field of every document, one batch each, then all at once (a rebuild).
	var changed []*search.Doc
	for _, d := range docs {
		c := *d
		c.Title, c.Description, c.Slug = d.Title+" again", "", d.Slug+"-2"
		c.Featured, c.Price = !d.Featured, d.Price+1
		c.CategoryIDs = []schema.CategoryID{7}
		c.Availability = map[schema.Availability]schema.Availability{schema.InStock: "backorder", "preorder": schema.InStock}[d.Availability]
		c.CreatedAt = d.CreatedAt.Add(time.Nanosecond)
		changed = append(changed, &c)
		grown = grown.With([]*search.Doc{&c}, nil)
	}
	check("With, changed", grown, changed)
	rebuilt := search.Build(docs)
	many := slices.Repeat(changed, 30) // past the rebuild threshold
	check("rebuilt", rebuilt.With(many, nil), changed)
}
