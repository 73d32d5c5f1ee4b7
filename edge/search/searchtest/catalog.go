// Package searchtest makes deterministic synthetic catalogs for the tests and benchmarks of
// package search and its comparisons: product-like titles of 3 to 6 words and descriptions of 30
// to 60 words (about a quarter of them stop words) drawn with a Zipf distribution from a
// vocabulary of a few thousand words.
package searchtest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"vitrine/edge/search"
	"vitrine/schema"
)

// Catalog shape.
const (
	// VocabularySize is the number of distinct content words.
	VocabularySize = 4000
	// TitleVocabulary is how many of the most frequent words titles draw from.
	TitleVocabulary = 1500
	// Categories is the number of category ids (1..Categories).
	Categories = 200
)

// realWords lead the vocabulary, so that they are frequent and tests can query them.
const realWords = `lamp chair table desk sofa shelf rug mirror clock vase bowl mug
plate candle pillow blanket curtain stool bench cabinet drawer basket frame poster cushion throw
light bulb shade stand hook rack tray jar bottle kettle pan pot knife spoon fork glass cup towel
red blue green black white grey brown yellow orange pink purple beige navy olive teal gold silver
oak pine walnut bamboo linen cotton wool leather velvet ceramic marble steel brass copper glass
small large mini tall wide round square classic modern rustic vintage industrial nordic minimal
soft warm bright matte gloss handmade organic recycled premium compact portable foldable outdoor
indoor kitchen bedroom office garden bath kids travel dining living wall floor ceiling table`

// Vocabulary returns the content words, the most frequent first: real product words, then
// pronounceable made-up words. It is the same on every call.
func Vocabulary() []string {
	seen := make(map[string]bool, VocabularySize)
	words := make([]string, 0, VocabularySize)
	for _, w := range strings.Fields(realWords) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pl pr sk sl st tr")
	vowels := strings.Fields("a e i o u ai ea io ou")
	codas := []string{"", "", "", "n", "r", "s", "l", "x", "nd", "st", "rk"}
	for len(words) < VocabularySize {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		b.WriteString(codas[r.IntN(len(codas))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// stopWords are mixed into descriptions.
const stopWords = "the and with for of a to in on is this that it from by"

// Catalog returns n products with ids 1..n, the same for the same n and seed.
func Catalog(n int, seed uint64) []*search.Doc {
	vocab := Vocabulary()
	stops := strings.Fields(stopWords)
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	titleZipf := rand.NewZipf(r, 1.1, 8, TitleVocabulary-1)
	descZipf := rand.NewZipf(r, 1.05, 20, VocabularySize-1)
	docs := make([]*search.Doc, n)
	var b strings.Builder
	for i := range docs {
		id := schema.ProductID(i + 1)
		b.Reset()
		for k := range 3 + r.IntN(4) {
			if k > 0 {
				b.WriteByte(' ')
			}
			w := vocab[titleZipf.Uint64()]
			if k == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		title := b.String()
		b.Reset()
		for k := range 30 + r.IntN(31) {
			if k > 0 {
				b.WriteByte(' ')
			}
			if r.IntN(4) == 0 {
				b.WriteString(stops[r.IntN(len(stops))])
			} else {
				b.WriteString(vocab[descZipf.Uint64()])
			}
			if r.IntN(12) == 0 {
				b.WriteByte('.')
			}
		}
		cats := []schema.CategoryID{schema.CategoryID(1 + r.IntN(Categories))}
		if r.IntN(3) == 0 {
			cats = append(cats, schema.CategoryID(1+r.IntN(Categories)))
		}
		avail := schema.InStock
		switch r.IntN(10) {
		case 0:
			avail = schema.LowStock
		case 1:
			avail = schema.OutOfStock
		}
		docs[i] = &search.Doc{
			ID:           id,
			Slug:         fmt.Sprintf("%s-%d", schema.Slugify(title), id),
			Title:        title,
			Description:  b.String(),
			CategoryIDs:  cats,
			Price:        int64(100 + r.IntN(100_000)),
			Availability: avail,
			Featured:     r.IntN(20) == 0,
			CreatedAt:    base.Add(time.Duration(r.IntN(3*365*24*3600)) * time.Second),
		}
	}
	return docs
}

// HeapInUse returns the live heap after two full collections (the second frees what the first's
// finalizers released), so that the difference of two readings measures an index's memory.
func HeapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
