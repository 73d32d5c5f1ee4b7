package search_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge/search"
	"vitrine/schema"
)

// modelWords has near neighbours (typos, prefixes), diacritics, stop words and numbers, so that
// random queries exercise every matching path.
const modelWords = `lamp lamps lampshade clamp lamb chair chairs char table tablet red
reddish blue oak café cafe désk desk deck vintage velvet velour brass the and with for 2024 2025
x an straße strasse`

// modelGen makes random documents and queries.
type modelGen struct {
	r     *rand.Rand
	vocab []string
}

func newModelGen(seed uint64) modelGen {
	return modelGen{r: rand.New(rand.NewPCG(seed, 1234)), vocab: strings.Fields(modelWords)}
}

func (g modelGen) words(lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	ws := make([]string, n)
	for i := range ws {
		w := g.vocab[g.r.IntN(len(g.vocab))]
		switch g.r.IntN(6) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			w += ","
		}
		ws[i] = w
	}
	return strings.Join(ws, " ")
}

func (g modelGen) doc(id schema.ProductID) *search.Doc {
	var cats []schema.CategoryID
	for c := 1; c <= 6; c++ {
		if g.r.IntN(4) == 0 {
			cats = append(cats, schema.CategoryID(c))
		}
	}
	if g.r.IntN(10) == 0 && len(cats) > 0 {
		cats = append(cats, cats[0]) // a duplicate
	}
	avails := []schema.Availability{schema.InStock, schema.LowStock, schema.OutOfStock, "preorder"}
	return &search.Doc{
		ID:           id,
		Slug:         fmt.Sprintf("p-%d", id),
		Title:        g.words(1, 5),
		Description:  g.words(0, 12),
		CategoryIDs:  cats,
		Price:        int64(100 * (1 + g.r.IntN(10))),
		Availability: avails[g.r.IntN(len(avails))],
		Featured:     g.r.IntN(5) == 0,
		CreatedAt:    time.Date(2025, 1, 1+g.r.IntN(5), 0, 0, 0, 0, time.UTC),
	}
}

// mutate returns a changed copy of d: a whole new document, or one field changed. Some retitles
// keep the title's words and length (its case changed, its words reversed) or all its words but
// one, so that most suggestion entries stay as they were.
func (g modelGen) mutate(d *search.Doc) *search.Doc {
	n := *d
	switch g.r.IntN(9) {
	case 6:
		if g.r.IntN(2) == 0 {
			n.Title = strings.ToUpper(n.Title)
		} else {
			n.Title = strings.ToLower(n.Title)
		}
	case 7:
		ws := strings.Fields(n.Title)
		slices.Reverse(ws)
		n.Title = strings.Join(ws, " ")
	case 8:
		ws := strings.Fields(n.Title)
		ws[g.r.IntN(len(ws))] = g.vocab[g.r.IntN(len(g.vocab))]
		n.Title = strings.Join(ws, " ")
	case 0:
		return g.doc(d.ID)
	case 1:
		n.Price = int64(100 * (1 + g.r.IntN(10)))
	case 2:
		n.Featured = !n.Featured
	case 3:
		n.Title = g.words(1, 5)
	case 4:
		n.Description = g.words(0, 12)
	case 5:
		n.CategoryIDs = g.doc(d.ID).CategoryIDs
	}
	return &n
}

func (g modelGen) queryText() string {
	var parts []string
	for range g.r.IntN(4) {
		w := g.vocab[g.r.IntN(len(g.vocab))]
		switch g.r.IntN(5) {
		case 0: // a typo
			if len(w) > 2 {
				i := g.r.IntN(len(w) - 1)
				w = w[:i] + w[i+1:i+2] + w[i:i+1] + w[i+2:]
			}
		case 1: // a prefix
			w = w[:1+g.r.IntN(len(w))]
		case 2:
			w = strings.ToUpper(w)
		}
		parts = append(parts, w)
	}
	text := strings.Join(parts, " ")
	if g.r.IntN(2) == 0 {
		text += " "
	}
	return text
}

func (g modelGen) query() search.Query {
	q := search.Query{Text: g.queryText(), Sort: search.Sort(g.r.IntN(6)), Offset: g.r.IntN(5) - 1, Limit: g.r.IntN(12) - 1}
	if g.r.IntN(3) == 0 {
		q.Categories = []schema.CategoryID{schema.CategoryID(1 + g.r.IntN(7)), schema.CategoryID(1 + g.r.IntN(7))}
	}
	if g.r.IntN(4) == 0 {
		v := int64(100 * g.r.IntN(11))
		q.MinPrice = &v
	}
	if g.r.IntN(4) == 0 {
		v := int64(100 * g.r.IntN(11))
		q.MaxPrice = &v
	}
	if g.r.IntN(4) == 0 {
		q.Availability = []schema.Availability{schema.InStock, "preorder"}[:1+g.r.IntN(2)]
	}
	return q
}

func (g modelGen) prefix() string {
	if g.r.IntN(3) == 0 {
		return g.queryText()
	}
	w := g.vocab[g.r.IntN(len(g.vocab))]
	return w[:1+g.r.IntN(len(w))]
}

// answers is what an index answers to a fixed set of queries.
type answers struct {
	search  []search.Result
	suggest [][]search.Suggestion
}

func answer(ix *search.Index, qs []search.Query, ps []string) answers {
	var a answers
	for _, q := range qs {
		a.search = append(a.search, ix.Search(q))
	}
	for _, p := range ps {
		a.suggest = append(a.suggest, ix.Suggest(p, 5))
	}
	return a
}

// TestModel applies random batches through With and checks, after each, that the index answers
// random searches and suggestions exactly (scores included) like an index built from scratch over
// the same documents, and that the versions kept from before still answer as they did.
func TestModel(t *testing.T) {
	for _, c := range []struct {
		name      string
		ids       int
		bootstrap int // documents of a first With on an empty index (the rebuild path)
		steps     int
	}{
		{"small", 40, 0, 300},
		{"bootstrap", 400, 300, 60},
	} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", c.name, seed), func(t *testing.T) {
				g := newModelGen(seed)
				model := map[schema.ProductID]*search.Doc{}
				ix := search.New()
				if c.bootstrap > 0 {
					var docs []*search.Doc
					for i := 1; i <= c.bootstrap; i++ {
						d := g.doc(schema.ProductID(i))
						docs = append(docs, d)
						model[d.ID] = d
					}
					ix = ix.With(docs, nil)
				}
				type kept struct {
					ix   *search.Index
					qs   []search.Query
					ps   []string
					want answers
				}
				var old []kept
				for step := 0; step < c.steps; step++ {
					var ups []*search.Doc
					var dels []schema.ProductID
					for range 1 + g.r.IntN(8) {
						id := schema.ProductID(1 + g.r.IntN(c.ids))
						switch cur, ok := model[id]; {
						case g.r.IntN(4) == 0:
							dels = append(dels, id)
						case ok:
							ups = append(ups, g.mutate(cur))
						default:
							ups = append(ups, g.doc(id))
						}
					}
					for _, d := range ups {
						model[d.ID] = d
					}
					for _, id := range dels {
						delete(model, id)
					}
					ix = ix.With(ups, dels)

					docs := make([]*search.Doc, 0, len(model))
					for _, d := range model {
						docs = append(docs, d) // map order: Build must not depend on it
					}
					fresh := search.Build(docs)
					if ix.Len() != fresh.Len() || ix.Len() != len(model) {
						t.Fatalf("step %d: Len %d, fresh %d, model %d", step, ix.Len(), fresh.Len(), len(model))
					}
					qs := make([]search.Query, 12)
					for i := range qs {
						qs[i] = g.query()
					}
					ps := make([]string, 6)
					for i := range ps {
						ps[i] = g.prefix()
					}
					got, want := answer(ix, qs, ps), answer(fresh, qs, ps)
					for i := range qs {
						if !reflect.DeepEqual(got.search[i], want.search[i]) {
							t.Fatalf("step %d: Search(%+v)\n got  %+v\n want %+v", step, qs[i], got.search[i], want.search[i])
						}
					}
					for i := range ps {
						if !reflect.DeepEqual(got.suggest[i], want.suggest[i]) {
							t.Fatalf("step %d: Suggest(%q)\n got  %+v\n want %+v", step, ps[i], got.suggest[i], want.suggest[i])
						}
					}
					if step%10 == 0 {
						old = append(old, kept{ix, qs, ps, got})
					}
				}
				for i, k := range old {
					if got := answer(k.ix, k.qs, k.ps); !reflect.DeepEqual(got, k.want) {
						t.Fatalf("kept version %d answers differently after later batches", i)
					}
				}
			})
		}
	}
}
