package search_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"vitrine/edge/search"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

// imageCorpus is a named set of documents for the image tests.
type imageCorpus struct {
	name string
	docs []*search.Doc
}

// imageCorpora returns the corpora the image tests load: edge cases of Build (nothing, nil and
// duplicate documents, empty and long texts, saturated frequencies and lengths, unknown
// availabilities, repeated categories, non-ASCII words) and catalogs of the package's
// generators, 20k documents among them unless short.
func imageCorpora(short bool) []imageCorpus {
	withCats := func(d *search.Doc, cs ...schema.CategoryID) *search.Doc { d.CategoryIDs = cs; return d }
	other := doc(3, "Preorder lamp", "ships next month")
	other.Availability = "preorder"
	low := doc(4, "Low lamp", "")
	low.Availability = schema.LowStock
	featured := doc(5, "Featured lamp", "shiny")
	featured.Featured = true
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprintf("w%dx", i%23) // repeated words in a long title
	}
	cs := []imageCorpus{
		{"empty", nil},
		{"nil docs", []*search.Doc{nil, nil}},
		{"one doc", []*search.Doc{doc(1, "Brass lamp", "A warm light for the desk.")}},
		{"duplicates", []*search.Doc{
			doc(1, "Brass lamp", "first version"), doc(2, "Oak chair", "solid"), nil,
			doc(1, "Copper lamp", "the later one wins"), doc(3, "Oak table", ""), doc(2, "Pine chair", "later again"),
		}},
		{"diacritics", []*search.Doc{
			doc(1, "Café crème cup", "Ceramic, 250 ml. Dishwasher-safe"),
			doc(2, "Straße sign", "Enamel; Größe 30×20 cm"),
			doc(3, "日本の茶碗", "手作り tea bowl"),
			doc(4, "Ünïcödé ŁÓDŹ Øresund Æther", "ﬁne ＡＢＣ a\u0301\u0301b \u0301x"),
			doc(5, "Cafe creme", "cafe"),
			doc(6, strings.Repeat("é", 80), strings.Repeat("ß", 70)),
		}},
		{"long titles", []*search.Doc{
			doc(1, strings.Join(long, " "), "long title"),
			doc(2, strings.Join(long[:17], " "), strings.Join(long, " ")),
			doc(3, "w1x", ""),
		}},
		{"empty texts", []*search.Doc{
			doc(1, "", ""), doc(2, "", "description only words"), doc(3, "Title only", ""),
			doc(4, "—!! ...", "?"), doc(5, "2024 2025", "12345"), doc(6, "a", "a b c"),
		}},
		{"saturated", []*search.Doc{
			doc(1, strings.Repeat("lamp ", 300), strings.Repeat("lamp desk ", 300)),
			doc(2, "lamp", strings.Repeat("x ", 70_000)),
			doc(3, strings.Repeat("t ", 70_000), "short"),
		}},
		{"availability and categories", []*search.Doc{
			other, low, featured,
			withCats(doc(6, "Red lamp", "red"), 3, 1, 3, 3),
			withCats(doc(7, "Blue lamp", "blue"), 1, 2),
			withCats(doc(8, "Green lamp", "green"), 2, 2),
			withCats(doc(9, "Oak lamp", "oak")),
		}},
	}
	g := newModelGen(11)
	var model []*search.Doc
	for i := range 600 {
		model = append(model, g.doc(schema.ProductID(1+i%450))) // duplicates too
	}
	cs = append(cs, imageCorpus{"model", model}, imageCorpus{"catalog 3k", searchtest.Catalog(3000, 5)})
	if !short {
		cs = append(cs, imageCorpus{"catalog 20k", searchtest.Catalog(20_000, 3)})
	}
	return cs
}

// corpusNamed returns the documents of a small corpus of imageCorpora.
func corpusNamed(name string) []*search.Doc {
	for _, c := range imageCorpora(true) {
		if c.name == name {
			return c.docs
		}
	}
	panic("no corpus " + name)
}

// imageOptions are the options the image tests build with.
var imageOptions = []search.Options{{}, {FuzzyMinLen: -1}, {FuzzyMinLen: 1}, {FuzzyMinLen: 6}}

// imageQueries returns queries and prefixes over the words of docs and of the catalogs.
func imageQueries(docs []*search.Doc, seed uint64) ([]search.Query, []string) {
	qs, ps := goldenQueries(rand.New(rand.NewPCG(seed, seed)))
	qs, ps = qs[:100], ps[:60]
	for i, d := range docs {
		if d == nil || i%max(1, len(docs)/40) != 0 {
			continue
		}
		words := strings.Fields(d.Title + " " + d.Description)
		for k, w := range words[:min(len(words), 3)] {
			qs = append(qs, search.Query{Text: w + " ", Limit: 10}, search.Query{Text: w, Limit: 5, Sort: search.Sort(k % 5)})
			if len(w) > 4 {
				qs = append(qs, search.Query{Text: w[:len(w)-1] + "q ", Limit: 5}) // a typo
			}
			ps = append(ps, w, w[:min(len(w), 2)], w+" ")
		}
	}
	return qs, ps
}

func TestImageRoundTrip(t *testing.T) {
	for _, c := range imageCorpora(testing.Short()) {
		for _, o := range imageOptions {
			if len(c.docs) > 10_000 && o != (search.Options{}) {
				continue // the large catalog with the default options only: 4 s each under -race
			}
			t.Run(fmt.Sprintf("%s/fuzzy%d", c.name, o.FuzzyMinLen), func(t *testing.T) {
				built := search.BuildWithOptions(c.docs, o)
				img, err := built.AppendImage([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(img, []byte("prefix")) {
					t.Fatal("AppendImage did not append")
				}
				img = img[len("prefix"):]
				if got, want := binary.BigEndian.Uint64(img[16:]), search.ImageDocsHash(c.docs, o); got != want {
					t.Fatalf("documents hash %x, ImageDocsHash %x", got, want)
				}
				loaded, err := search.LoadImage(img, c.docs, o)
				if err != nil {
					t.Fatalf("LoadImage: %v", err)
				}
				if d := search.DiffIndex(built, loaded); d != "" {
					t.Fatalf("loaded index differs from Build's: %s", d)
				}
				// The index owns its lists: the image can go.
				kept := bytes.Clone(img)
				clear(img)
				if d := search.DiffIndex(built, loaded); d != "" {
					t.Fatalf("loaded index changed with its image: %s", d)
				}
				img = kept
				again, err := loaded.AppendImage(nil)
				if err != nil || !bytes.Equal(again, img) {
					t.Fatalf("the loaded index's image differs (%v)", err)
				}
				if again, _ := search.BuildWithOptions(c.docs, o).AppendImage(nil); !bytes.Equal(again, img) {
					t.Fatal("two images of the same documents differ")
				}
				qs, ps := imageQueries(c.docs, uint64(len(c.docs)))
				if got, want := answer(loaded, qs, ps), answer(built, qs, ps); !reflect.DeepEqual(got, want) {
					t.Fatal("the loaded index answers differently")
				}
				for _, d := range c.docs {
					if d == nil {
						continue
					}
					got, ok1 := loaded.Get(d.ID)
					want, ok2 := built.Get(d.ID)
					if !ok1 || !ok2 || !reflect.DeepEqual(got, want) {
						t.Fatalf("Get(%d) = %+v, Build's %+v", d.ID, got, want)
					}
				}
				// Both go on alike.
				ups := []*search.Doc{doc(1, "Changed lamp", "new text"), doc(99999, "New lamp", "")}
				dels := []schema.ProductID{2, 3}
				if d := search.DiffIndex(built.With(ups, dels), loaded.With(ups, dels)); d != "" {
					t.Fatalf("after With: %s", d)
				}
				if len(c.docs) > 1000 {
					return // the checks below tokenise and hash the corpus several times
				}
				// Another order of the same documents is other ordinals: another image.
				if len(built.Search(search.Query{Limit: 3}).Hits) > 1 {
					rev := make([]*search.Doc, 0, len(c.docs))
					for i := len(c.docs) - 1; i >= 0; i-- {
						rev = append(rev, c.docs[i])
					}
					if _, err := search.LoadImage(img, rev, o); !errors.Is(err, search.ErrImageStale) {
						t.Fatalf("LoadImage over the documents reversed: %v", err)
					}
				}
			})
		}
	}
}

// TestImageOptions: options that make the same index read the same image; others refuse it.
func TestImageOptions(t *testing.T) {
	docs := corpusNamed("diacritics")
	img, err := search.Build(docs).AppendImage(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := search.LoadImage(img, docs, search.Options{FuzzyMinLen: search.DefaultFuzzyMinLen}); err != nil {
		t.Fatalf("the default fuzzy minimum spelled out: %v", err)
	}
	for _, o := range []search.Options{{FuzzyMinLen: -1}, {FuzzyMinLen: 5}, {FuzzyMinLen: 2}} {
		if _, err := search.LoadImage(img, docs, o); !errors.Is(err, search.ErrImageStale) {
			t.Fatalf("options %+v: %v", o, err)
		}
	}
	img1, _ := search.BuildWithOptions(docs, search.Options{FuzzyMinLen: 1}).AppendImage(nil)
	if _, err := search.LoadImage(img1, docs, search.Options{FuzzyMinLen: 2}); err != nil {
		t.Fatalf("fuzzy minimum 1 is 2: %v", err)
	}
}

// TestImageScope: With's indexes have no image, but a rebuild or a batch that changes nothing
// keep it.
func TestImageScope(t *testing.T) {
	docs := searchtest.Catalog(400, 9)
	ix := search.Build(docs[:100])
	if _, err := ix.With(nil, nil).AppendImage(nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	for name, changed := range map[string]*search.Index{
		"upsert": ix.With(docs[100:101], nil),
		"delete": ix.With(nil, []schema.ProductID{docs[0].ID}),
		"absent": ix.With(nil, []schema.ProductID{-5}),
		"new":    search.New().With(docs[:10], nil),
	} {
		if b, err := changed.AppendImage([]byte{1}); !errors.Is(err, search.ErrNoImage) || !bytes.Equal(b, []byte{1}) {
			t.Fatalf("%s: %v, %d bytes", name, err, len(b))
		}
	}
	rebuilt := search.New().With(docs, nil) // a batch of at least 256: a rebuild
	img, err := rebuilt.AppendImage(nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := search.LoadImage(img, docs, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := search.DiffIndex(search.Build(docs), loaded); d != "" {
		t.Fatal(d)
	}
	for _, empty := range []*search.Index{search.New(), search.Build(nil)} {
		img, err := empty.AppendImage(nil)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := search.LoadImage(img, []*search.Doc{nil}, search.Options{})
		if err != nil || loaded.Len() != 0 {
			t.Fatalf("empty: %v", err)
		}
	}
}

// reseal replaces the checksum that ends an image with that of its (changed) bytes, as a
// corruption that happened before the checksum was made.
func reseal(img []byte) []byte {
	if len(img) < 8 {
		return img
	}
	body := img[:len(img)-8]
	return binary.BigEndian.AppendUint64(body[:len(body):len(body)], xxhash.Sum64(body))
}

// TestImageRefused: images of other documents, options or formats are stale; malformed ones are
// refused, before and after their checksum.
func TestImageRefused(t *testing.T) {
	base := corpusNamed("availability and categories") // availability and categories
	img, err := search.Build(base).AppendImage(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := search.LoadImage(img, base, search.Options{}); err != nil {
		t.Fatal(err)
	}
	// Every field of a document the index reads is in the hash.
	for _, change := range []func(d *search.Doc){
		func(d *search.Doc) { d.ID = 1000 },
		func(d *search.Doc) { d.Slug += "x" },
		func(d *search.Doc) { d.Title += " x" },
		func(d *search.Doc) { d.Title += "!" }, // the same tokens
		func(d *search.Doc) { d.Description += "x" },
		func(d *search.Doc) { d.CategoryIDs = append(d.CategoryIDs, 9) },
		func(d *search.Doc) { d.Price++ },
		func(d *search.Doc) { d.Availability = schema.OutOfStock },
		func(d *search.Doc) { d.Featured = !d.Featured },
		func(d *search.Doc) { d.CreatedAt = d.CreatedAt.Add(time.Nanosecond) },
	} {
		for i := range base {
			docs := make([]*search.Doc, len(base))
			for j, d := range base {
				c := *d
				docs[j] = &c
			}
			change(docs[i])
			if _, err := search.LoadImage(img, docs, search.Options{}); !errors.Is(err, search.ErrImageStale) {
				t.Fatalf("document %d changed: %v", i, err)
			}
		}
	}
	if _, err := search.LoadImage(img, append(base[:len(base):len(base)], doc(77, "More", "")), search.Options{}); !errors.Is(err, search.ErrImageStale) {
		t.Fatalf("one more document: %v", err)
	}
	if _, err := search.LoadImage(img, base[1:], search.Options{}); !errors.Is(err, search.ErrImageStale) {
		t.Fatalf("one document fewer: %v", err)
	}
	// A time in another location is the same instant: the same document.
	moved := make([]*search.Doc, len(base))
	for i, d := range base {
		c := *d
		c.CreatedAt = c.CreatedAt.In(time.FixedZone("x", 3600))
		moved[i] = &c
	}
	if _, err := search.LoadImage(img, moved, search.Options{}); err != nil {
		t.Fatalf("CreatedAt in another location: %v", err)
	}

	at := func(i int, b byte) func([]byte) []byte {
		return func(p []byte) []byte { p = bytes.Clone(p); p[i] = b; return p }
	}
	for _, c := range []struct {
		name  string
		edit  func([]byte) []byte
		stale bool
	}{
		{"empty", func([]byte) []byte { return nil }, false},
		{"magic", at(0, 'X'), false},
		{"format", func(p []byte) []byte { return reseal(at(7, p[7]+1)(p)) }, true},
		{"layout", func(p []byte) []byte { return reseal(at(9, p[9]^1)(p)) }, true},
		{"documents hash", func(p []byte) []byte { return reseal(at(20, p[20]^1)(p)) }, true},
		{"checksum", func(p []byte) []byte { return at(len(p)-1, p[len(p)-1]^1)(p) }, false},
		{"body", func(p []byte) []byte { return at(len(p)/2, p[len(p)/2]^1)(p) }, false},
		{"trailing byte", func(p []byte) []byte { return reseal(append(bytes.Clone(p[:len(p)-8]), 0, 0, 0, 0, 0, 0, 0, 0, 0)) }, false},
		{"truncated", func(p []byte) []byte { return p[:len(p)-1] }, false},
		{"truncated and resealed", func(p []byte) []byte { return reseal(bytes.Clone(p[:len(p)-9])) }, false},
		{"header only", func(p []byte) []byte { return reseal(bytes.Clone(p[:24+8])) }, false},
	} {
		_, err := search.LoadImage(c.edit(img), base, search.Options{})
		if !errors.Is(err, search.ErrImage) || errors.Is(err, search.ErrImageStale) != c.stale {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestImageCorruptions flips every bit of an image, sets every byte to a few values and cuts it
// at every length, with the checksum made again (a corruption before the checksum was made):
// LoadImage must never panic nor allocate much more than for the valid image, and an index it
// accepts must be in the canonical form of its image (its own image is the bytes loaded) and
// answer queries and take changes. What only tokenising would tell (which words a document has,
// say) goes unnoticed: the checksum is there for that.
func TestImageCorruptions(t *testing.T) {
	docs := corpusNamed("diacritics") // diacritics
	docs = append(docs, corpusNamed("availability and categories")...)
	img, err := search.Build(docs).AppendImage(nil)
	if err != nil {
		t.Fatal(err)
	}
	qs, ps := imageQueries(docs, 1)
	allocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	validAlloc := allocs(func() { search.LoadImage(img, docs, search.Options{}) })
	accepted := 0
	try := func(p []byte, measure bool) {
		p = reseal(p)
		var ix *search.Index
		var err error
		f := func() { ix, err = search.LoadImage(p, docs, search.Options{}) }
		if measure {
			if a := allocs(f); a > 2*validAlloc+64<<10 {
				t.Fatalf("a corrupt image allocates %d bytes, a valid one %d", a, validAlloc)
			}
		} else {
			f()
		}
		if err != nil {
			if !errors.Is(err, search.ErrImage) {
				t.Fatalf("error not wrapping ErrImage: %v", err)
			}
			return
		}
		accepted++
		if again, _ := ix.AppendImage(nil); !bytes.Equal(again, p) {
			t.Fatalf("accepted an image not in its canonical form")
		}
		answer(ix, qs, ps)
		ix.With([]*search.Doc{doc(1, "Changed lamp", "")}, []schema.ProductID{2})
	}
	for i := range len(img) - 8 {
		for bit := range 8 {
			p := bytes.Clone(img)
			p[i] ^= 1 << bit
			try(p, false)
		}
		for _, v := range []byte{0, 0x7f, 0x80, 0xff} {
			p := bytes.Clone(img)
			p[i] = v
			try(p, i%7 == 0)
		}
		try(bytes.Clone(img[:i]), false)
	}
	t.Logf("%d bytes; %d corruptions accepted (each the exact image of an index)", len(img), accepted)
}

// goldenImage pins the image of a fixed corpus (its header's layout fingerprint zeroed, its
// checksum left out: the fingerprint changes by itself with what it covers).
const (
	goldenImageFormat = 1
	goldenImageHash   = uint64(0x349332f84dffe8d9)
)

// TestImageGolden fails when the image of a fixed corpus changes: the tokeniser, the records, the
// codecs or the layout changed, and an image made by an older build would no longer load as
// the index Build makes. Bump imageFormat then (old images are refused), and pin the new hash.
func TestImageGolden(t *testing.T) {
	docs := goldenImageDocs()
	img, err := search.Build(docs).AppendImage(nil)
	if err != nil {
		t.Fatal(err)
	}
	format := binary.BigEndian.Uint32(img[4:])
	p := bytes.Clone(img[:len(img)-8])
	clear(p[8:16])
	if h := xxhash.Sum64(p); format != goldenImageFormat || h != goldenImageHash {
		t.Fatalf("the image of the golden corpus changed: format %d, hash %#x; pinned format %d, hash %#x.\n"+
			"The tokeniser, the records, the codecs or the image layout changed: bump imageFormat in image.go "+
			"(so that images of older builds are refused instead of loading a different index), then pin "+
			"goldenImageFormat and goldenImageHash to the new values.", format, h, goldenImageFormat, goldenImageHash)
	}
}

// goldenImageDocs is the fixed corpus of TestImageGolden: a catalog slice and the edge cases.
func goldenImageDocs() []*search.Doc {
	var docs []*search.Doc
	for _, c := range imageCorpora(true)[2:10] {
		docs = append(docs, c.docs...)
	}
	for _, d := range searchtest.Catalog(300, 1) {
		c := *d
		c.ID += 1000
		docs = append(docs, &c)
	}
	return docs
}

// FuzzLoadImage: LoadImage never panics; an image it accepts as is yields the index Build makes
// (a corruption that keeps the checksum is out of reach); one accepted after its checksum is made
// again is the canonical image of the index it yields, which answers queries.
func FuzzLoadImage(f *testing.F) {
	docs := append(corpusNamed("diacritics"), corpusNamed("availability and categories")...)
	docs = append(docs, doc(20, "Lamp lamp lampshade", "the lamp"))
	built := search.Build(docs)
	img, err := built.AppendImage(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(img, false)
	f.Add(img, true)
	for _, n := range []int{0, 4, 24, 30, len(img) / 3, len(img) / 2, len(img) - 9, len(img) - 1} {
		f.Add(img[:n], false)
		f.Add(img[:n], true)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 16 {
		p := bytes.Clone(img)
		p[r.IntN(len(p))] ^= 1 << r.IntN(8)
		f.Add(p, r.IntN(2) == 0)
	}
	qs, ps := imageQueries(docs, 2)
	f.Fuzz(func(t *testing.T, p []byte, resealed bool) {
		if resealed {
			p = reseal(p)
		}
		ix, err := search.LoadImage(p, docs, search.Options{})
		if err != nil {
			if !errors.Is(err, search.ErrImage) {
				t.Fatalf("error not wrapping ErrImage: %v", err)
			}
			return
		}
		if !resealed {
			if d := search.DiffIndex(built, ix); d != "" {
				t.Fatalf("accepted an image of another index: %s", d)
			}
		}
		if again, _ := ix.AppendImage(nil); !bytes.Equal(again, p) {
			t.Fatal("accepted an image not in its canonical form")
		}
		answer(ix, qs, ps)
		ix.With([]*search.Doc{doc(1, "Changed lamp", "")}, []schema.ProductID{2, 20})
	})
}

// BenchmarkLoadImage compares Build and LoadImage over the same 100k catalog (run with -cpu 1
// for the single-core cost), and reports the image's size.
func BenchmarkLoadImage(b *testing.B) {
	docs := searchtest.Catalog(benchDocs, benchSeed)
	img, err := search.Build(docs).AppendImage(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			search.Build(docs)
		}
	})
	b.Run("LoadImage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := search.LoadImage(img, docs, search.Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(img)), "image-bytes")
	})
	b.Run("AppendImage", func(b *testing.B) {
		ix := search.Build(docs)
		b.ReportAllocs()
		buf := make([]byte, 0, len(img))
		for b.Loop() {
			buf, _ = ix.AppendImage(buf[:0])
		}
	})
}
