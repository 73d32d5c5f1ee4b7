package search_test

import (
	"testing"
	"unicode"

	"vitrine/edge/search"
	"vitrine/schema"
)

func fuzzCorpus() *search.Index {
	return search.Build([]*search.Doc{
		doc(1, "Brass lamp", "A warm light for the desk."),
		doc(2, "Café crème cup", "Ceramic, 250 ml. Dishwasher-safe"),
		doc(3, "Straße sign", "Enamel; Größe 30×20 cm"),
		doc(4, "日本の茶碗", "手作り tea bowl"),
		doc(5, "Lampshade", "Linen shade for lamps"),
		doc(6, "Oak chair", "Solid oak chair with a lamp holder"),
		doc(7, "Red lamp", ""),
		doc(8, "The the the", "and and"),
	})
}

// FuzzSearch: arbitrary query text never panics; hits are distinct corpus documents, within the
// page bounds, and consistent with the total. Suggest holds the same on the same text, and a
// document made of the text is found by it.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"", "lamp", "lapm ", "café", "CAFE CRÈME", "the", "日本", "l", "red la",
		"\u0301", "a\u0301", "ǅ", "ﬁ", "straße", "\xff\xfe", "lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp lamp"} {
		f.Add(s, 0, 5, 0)
	}
	f.Add("lamp", 2, 1, int(search.PriceDesc))
	f.Add("o", -1, 100, 9)
	ix := fuzzCorpus()
	f.Fuzz(func(t *testing.T, text string, offset, limit, sort int) {
		q := search.Query{Text: text, Offset: offset % 20, Limit: limit % 20, Sort: search.Sort(sort % 8)}
		res := ix.Search(q)
		off, lim := max(q.Offset, 0), max(q.Limit, 0)
		if res.Total < 0 || res.Total > ix.Len() {
			t.Fatalf("Total %d of %d documents", res.Total, ix.Len())
		}
		if want := max(0, min(lim, res.Total-off)); len(res.Hits) != want {
			t.Fatalf("%d hits, want %d (total %d, offset %d, limit %d)", len(res.Hits), want, res.Total, off, lim)
		}
		seen := map[schema.ProductID]bool{}
		for _, h := range res.Hits {
			if seen[h.ID] {
				t.Fatalf("hit %d twice", h.ID)
			}
			seen[h.ID] = true
			if _, ok := ix.Get(h.ID); !ok {
				t.Fatalf("hit %d is not a document", h.ID)
			}
		}
		sugg := ix.Suggest(text, 3)
		if len(sugg) > 3 {
			t.Fatalf("%d suggestions", len(sugg))
		}
		seen = map[schema.ProductID]bool{}
		for _, s := range sugg {
			if seen[s.ID] {
				t.Fatalf("suggestion %d twice", s.ID)
			}
			seen[s.ID] = true
		}
		if hasWordChar(text) {
			ix2 := ix.With([]*search.Doc{{ID: 100, Title: text, Description: text}}, nil)
			found := false
			for _, h := range ix2.Search(search.Query{Text: text, Limit: 100}).Hits {
				found = found || h.ID == 100
			}
			if !found {
				t.Fatalf("a document titled %q is not found by its title", text)
			}
			if s := ix2.Suggest(text, 100); len(s) == 0 {
				t.Fatalf("a document titled %q is not suggested for it", text)
			}
		}
	})
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
