package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/benbjohnson/immutable"
	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"

	"vitrine/schema"
)

// imageFormat is the version of the image layout and of everything an image holds the result
// of: the tokeniser, the records' derived fields, the codecs and the splitting of lists into
// blocks. Bump it whenever any of those changes (TestImageGolden fails until it is), so that an
// image made by another build is refused instead of loading an index Build would not make.
const imageFormat = 1

// Fixed parts of an image.
const (
	imageMagic     = "VSIX"
	imageHeaderLen = 4 + 4 + 8 + 8 // magic, format, layout fingerprint, documents hash
	imageSumLen    = 8             // the trailing xxhash64 of everything before it
)

// Errors of images. Every error of LoadImage wraps ErrImage; one for an image that is well
// formed but does not apply (made over other documents or options, or by another format or
// tokeniser: build the index instead) also wraps ErrImageStale.
var (
	// ErrNoImage is returned by AppendImage for an index it cannot image: one that With changed.
	ErrNoImage = errors.New("search: the index was not made by Build: no image")
	// ErrImage is wrapped by every error of LoadImage.
	ErrImage = errors.New("search: index image refused")
	// ErrImageStale is wrapped by the errors of LoadImage for an image of other documents,
	// options, format or tokeniser.
	ErrImageStale = fmt.Errorf("%w: made over other documents or options, or by another build", ErrImage)
)

// AppendImage appends to b the image of ix and returns it: what Build derived from the
// documents by tokenising them, so that LoadImage rebuilds the same index from the image and the
// same documents several times faster than Build. It exists for snapshots: a snapshot carries
// the image of each index beside the documents, and an edge that bootstraps from it loads the
// index instead of building it. The image holds, after a header (format, layout fingerprint,
// hash of the documents and options), each document's title and description lengths and title
// key, the words with their posting lists and title suggestion sets, and the prefix suggestion
// sets, lists as Build encodes them; a checksum ends it (see the package documentation, Images).
// It is deterministic: the same documents and options make the same bytes.
//
// Only an index made by New, Build or their WithOptions variants (and With applied as a rebuild)
// has an image: AppendImage returns b and ErrNoImage for one With changed.
func (ix *Index) AppendImage(b []byte) ([]byte, error) {
	if !ix.built || ix.free != nil || int(ix.nextOrd) != ix.n || ix.recs.len != ix.n {
		return b, ErrNoImage
	}
	start := len(b)
	b = append(b, imageMagic...)
	b = binary.BigEndian.AppendUint32(b, imageFormat)
	b = binary.BigEndian.AppendUint64(b, imageLayout())
	h := newDocsHasher()
	ix.recs.each(func(_ int, r *rec) bool {
		h.add(r.document())
		return true
	})
	b = binary.BigEndian.AppendUint64(b, h.sum(ix.fuzzyMin))
	b = binary.AppendUvarint(b, uint64(ix.fuzzyMin))
	b = binary.AppendUvarint(b, uint64(ix.n))
	ix.recs.each(func(_ int, r *rec) bool {
		b = binary.AppendUvarint(b, uint64(r.tlen))
		b = binary.AppendUvarint(b, uint64(r.dlen))
		b = binary.BigEndian.AppendUint64(b, r.titleKey)
		return true
	})

	words := make([]string, 0, ix.vocab.Len())
	for it := ix.vocab.Iterator(); !it.Done(); {
		w, _, _ := it.Next()
		words = append(words, w)
	}
	b = appendStrings(b, words)
	titleWords := 0
	for _, w := range words {
		t, ok := ix.terms.Get(w)
		if !ok || t.post.n == 0 {
			return b[:start], fmt.Errorf("%w: word %q has no postings", ErrNoImage, w)
		}
		b = binary.AppendUvarint(b, uint64(t.post.n))
		b = appendBlocks(b, t.post)
		if t.nT > 0 {
			set, ok := ix.words.Get(w)
			if !ok || set.n != int(t.nT) {
				return b[:start], fmt.Errorf("%w: the suggestion set of word %q is not its titles", ErrNoImage, w)
			}
			b = appendBlocks(b, set) // of nT entries
			titleWords++
		}
	}
	if titleWords != ix.words.Len() {
		return b[:start], fmt.Errorf("%w: %d title words, %d suggestion sets", ErrNoImage, titleWords, ix.words.Len())
	}

	prefixes := make([]string, 0, ix.prefixes.Len())
	for it := ix.prefixes.Iterator(); !it.Done(); {
		p, _, _ := it.Next()
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	b = appendStrings(b, prefixes)
	for _, p := range prefixes {
		set, _ := ix.prefixes.Get(p)
		b = binary.AppendUvarint(b, uint64(set.n))
		b = appendBlocks(b, set)
	}
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(b[start:])), nil
}

// appendStrings appends the count of ss, the length of each, then their bytes.
func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
	}
	for _, s := range ss {
		b = append(b, s...)
	}
	return b
}

// appendBlocks appends the length in bytes of l's blocks, then the blocks, in order.
func appendBlocks[E any, C codec[E]](b []byte, l plist[E, C]) []byte {
	size := 0
	l.eachBlock(func(bl *block[E]) { size += len(bl.data) })
	b = binary.AppendUvarint(b, uint64(size))
	l.eachBlock(func(bl *block[E]) { b = append(b, bl.data...) })
	return b
}

// eachBlock calls f with each block of l, in order.
func (l plist[E, C]) eachBlock(f func(*block[E])) {
	if l.tree.root == nil {
		if l.n > 0 {
			f(l.one)
		}
		return
	}
	l.tree.each(func(b *block[E]) bool {
		f(b)
		return true
	})
}

// ImageDocsHash returns the hash of docs and o that an image of BuildWithOptions(docs, o)
// carries: a hash made of xxhash64s (docsHasher) of every field of the documents the index reads
// (ID, Slug, Title, Description, CategoryIDs, Price, Availability, Featured, CreatedAt's
// instant), after Build's deduplication and in its order, and of the options as the index keeps
// them. LoadImage refuses
// an image whose hash is not ImageDocsHash of the documents and options it is given.
func ImageDocsHash(docs []*Doc, o Options) uint64 {
	return docsHash(distinctDocs(docs), o.fuzzyMin())
}

func docsHash(list []*Doc, fuzzyMin int) uint64 {
	h := newDocsHasher()
	for _, d := range list {
		h.add(d)
	}
	return h.sum(fuzzyMin)
}

// docsHasher hashes documents for images. A document's hash is the xxhash64 of its fixed-size
// fields and the lengths of the others, each a little-endian uint64, then the xxhash64 of each
// string, one-shot over the string itself (copying the strings into one buffer to hash it is
// slower); the hashes of the documents in order make the hash of the list, streamed.
type docsHasher struct {
	buf  []byte // a document's fixed-size fields and lengths
	sums []byte // the hashes of the documents not yet written to d
	d    *xxhash.Digest
	n    uint64
}

func newDocsHasher() *docsHasher {
	return &docsHasher{buf: make([]byte, 0, 256), sums: make([]byte, 0, 4096), d: xxhash.New()}
}

// add hashes a document.
func (h *docsHasher) add(d *Doc) {
	featured := uint64(0)
	if d.Featured {
		featured = 1
	}
	b := h.buf[:0]
	for _, x := range [...]uint64{uint64(d.ID), uint64(d.Price), uint64(d.CreatedAt.Unix()),
		uint64(d.CreatedAt.Nanosecond()), featured, uint64(len(d.Slug)), uint64(len(d.Title)),
		uint64(len(d.Description)), uint64(len(d.Availability)), uint64(len(d.CategoryIDs))} {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	for _, c := range d.CategoryIDs {
		b = binary.LittleEndian.AppendUint64(b, uint64(c))
	}
	h.buf = b
	sums := h.sums
	for _, x := range [...]uint64{xxhash.Sum64(b), xxhash.Sum64String(d.Slug), xxhash.Sum64String(d.Title),
		xxhash.Sum64String(d.Description), xxhash.Sum64String(string(d.Availability))} {
		sums = binary.LittleEndian.AppendUint64(sums, x)
	}
	if len(sums) > cap(sums)-64 {
		h.d.Write(sums)
		sums = sums[:0]
	}
	h.sums = sums
	h.n++
}

// sum returns the hash of the documents added and of the index's fuzzy minimum.
func (h *docsHasher) sum(fuzzyMin int) uint64 {
	b := binary.LittleEndian.AppendUint64(h.sums, h.n)
	b = binary.LittleEndian.AppendUint64(b, uint64(fuzzyMin))
	h.d.Write(b)
	return h.d.Sum64()
}

// imageProbe is text whose tokens the layout fingerprint covers: letters the tokeniser folds
// (diacritics, special letters, ligatures, wide and compatibility forms), marks, digits,
// separators, scripts without case.
const imageProbe = "Café Crème brûlée Straße Øresund Æther ŁÓDŹ Þorn ŒUVRE ﬁne ＡＢＣ iPhone-15 pro_max " +
	"日本語 テキスト Ünïcödé123abc a\u0301\u0301b \u0301x ǅ ΣΊΣΥΦΟΣ İstanbul ½ ① ⅻ ¹²³ Ǆemal"

// imageLayout returns the fingerprint of what an image's content depends on besides the
// documents and the code that imageFormat versions: the format, the sizes and layouts the
// content reflects, the Unicode tables, and what the tokeniser, the records and the codecs make
// of a probe. An image is refused by a build whose fingerprint differs: a Go release with other
// Unicode tables, say, changes it without anyone bumping imageFormat.
func imageLayout() uint64 {
	d := xxhash.New()
	fmt.Fprintf(d, "format %d block %d prefix %d token %d notFeatured %d unicode %s norm %s\n",
		imageFormat, blockMax, suggestPrefixMax, maxTokenLen, notFeatured, unicode.Version, norm.Version)
	var tk tokenizer
	probe := &Doc{ID: 7, Title: imageProbe, Description: strings.Repeat("é", maxTokenLen+1) + " " + imageProbe}
	a := analyze(probe, &tk)
	for _, t := range a.terms {
		fmt.Fprintf(d, "%s %d %d\n", t.term, t.tfT, t.tfD)
	}
	r := makeRec(probe, &a)
	b := binary.AppendUvarint(nil, r.titleKey)
	b = binary.AppendUvarint(b, uint64(r.tlen))
	b = binary.AppendUvarint(b, uint64(r.dlen))
	b = binary.AppendUvarint(b, uint64(r.srank))
	b = postCodec{}.encode(b, []uint64{posting(3, 1, 0), posting(9, 0, 1), posting(10, 1, 1), posting(300, 2, 255)})
	b = sentCodec{}.encode(b, []sent{makeSent(true, r.srank, 5, 7), makeSent(false, r.srank, 6, 9), makeSent(false, 3, 1, -2)})
	d.Write(b)
	return d.Sum64()
}

// LoadImage returns the index BuildWithOptions(docs, o) returns, read from img, an image
// AppendImage made, instead of tokenising docs: the records, ids and category sets are made from
// docs as Build makes them, the rest read from img into memory of the index's own (img may be
// reused once LoadImage returns). It fails, with an error wrapping ErrImage, and never panics nor
// allocates much more than the sizes of img and docs justify, when img is malformed or
// corrupted; and, with an error wrapping ErrImageStale too, when it was made by another image
// format or tokeniser, with other options, or over other documents (ImageDocsHash).
func LoadImage(img []byte, docs []*Doc, o Options) (*Index, error) {
	ix := NewWithOptions(o)
	if err := ix.load(img, docs); err != nil {
		return nil, err
	}
	return ix, nil
}

// load sets the fields of ix, a new index, from img and the documents.
func (ix *Index) load(img []byte, docs []*Doc) error {
	if len(img) < imageHeaderLen+imageSumLen || string(img[:len(imageMagic)]) != imageMagic {
		return fmt.Errorf("%w: not an index image", ErrImage)
	}
	if f := binary.BigEndian.Uint32(img[4:]); f != imageFormat {
		return fmt.Errorf("%w: image format %d, this build reads %d", ErrImageStale, f, imageFormat)
	}
	if binary.BigEndian.Uint64(img[8:]) != imageLayout() {
		return fmt.Errorf("%w: made by another tokeniser or index layout", ErrImageStale)
	}
	body := img[:len(img)-imageSumLen]
	if got, want := xxhash.Sum64(body), binary.BigEndian.Uint64(img[len(body):]); got != want {
		return fmt.Errorf("%w: checksum %016x, the image says %016x", ErrImage, got, want)
	}
	r := &imageReader{b: body, off: imageHeaderLen}
	fm := r.int("fuzzy minimum", 1<<20)
	n := r.int("documents", len(body))
	if r.err != nil {
		return r.err
	}
	if fm != ix.fuzzyMin {
		return fmt.Errorf("%w: made with fuzzy minimum length %d, not %d", ErrImageStale, fm, ix.fuzzyMin)
	}
	// The documents of an image are Build's list, distinct: documents as many as the image's
	// need no deduplication when their hash is the image's (the common case; when they have
	// the same id twice, the hash differs).
	list := docs
	if len(list) != n || slices.Contains(list, nil) {
		if list = distinctDocs(docs); len(list) != n {
			return fmt.Errorf("%w: made over %d documents, not %d", ErrImageStale, n, len(list))
		}
	}

	// One pass over the documents: their records, read from the image, their ids and category
	// sets, as Build makes them, and their hash, which must be the image's.
	l := loader{r: r, ix: ix, list: list, ids: newIDsBuilder(n)}
	ix.recs, l.leaves = vecMake[rec](n)
	sum, ok := l.records()
	if !ok {
		return r.err
	}
	if want := binary.BigEndian.Uint64(img[16:]); sum != want {
		return fmt.Errorf("%w: made over other documents (hash %016x, the image's %016x)", ErrImageStale, sum, want)
	}
	ix.n, ix.nextOrd = n, uint32(n)

	// The ids and category sets, then the fuzzy map, are made while the lists are read: each
	// part sets fields of its own.
	var wg sync.WaitGroup
	wg.Go(func() { l.ids.set(ix) })
	ok = l.vocabulary()
	if ok {
		wg.Go(func() { ix.fuzz = ix.fuzzOf(l.words) })
		ok = l.terms() && l.prefixes()
	}
	wg.Wait()
	switch {
	case !ok:
	case r.off != len(r.b):
		r.failf("%d bytes after the prefix sets", len(r.b)-r.off)
	case ix.ids.Len() != n:
		r.failf("the image's documents are not distinct")
	default:
		return nil
	}
	return r.err
}

// imageReader reads an image's body. The first error sticks: reads after it return zeros.
type imageReader struct {
	b   []byte
	off int
	err error
}

func (r *imageReader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrImage, r.off, fmt.Sprintf(format, args...))
	}
}

// uvarint reads a varint of at most max, in its shortest encoding.
func (r *imageReader) uvarint(what string, max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b[r.off:])
	switch {
	case k <= 0:
		r.failf("truncated or overlong %s", what)
		return 0
	case k > 1 && r.b[r.off+k-1] == 0:
		r.failf("%s not in its shortest encoding", what)
		return 0
	case v > max:
		r.failf("%s %d, at most %d", what, v, max)
		return 0
	}
	r.off += k
	return v
}

// int reads a count or length of at most max.
func (r *imageReader) int(what string, max int) int { return int(r.uvarint(what, uint64(max))) }

// bytes reads the next n bytes (the image's, not a copy).
func (r *imageReader) bytes(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.failf("%s of %d bytes, %d left", what, n, len(r.b)-r.off)
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

// block reads a list's length in bytes, then its bytes.
func (r *imageReader) block(what string) []byte {
	return r.bytes(what, r.int("list length", len(r.b)-r.off))
}

// strings reads what appendStrings wrote: strings of 1 to maxLen bytes, sharing one allocation.
func (r *imageReader) strings(what string, maxLen int) []string {
	count := r.int(what, len(r.b)-r.off) // a length byte each at least
	lens := make([]int, 0, count)
	total := 0
	lenWhat := "length of " + what
	for range count {
		n := r.int(lenWhat, maxLen)
		if n == 0 && r.err == nil {
			r.failf("empty %s", what)
		}
		if r.err != nil {
			return nil
		}
		lens = append(lens, n)
		total += n
	}
	data := r.bytes(what, total)
	if r.err != nil {
		return nil
	}
	all := string(data)
	out := make([]string, count)
	for i, n := range lens {
		out[i], all = all[:n], all[n:]
	}
	return out
}

// loader reads the body of an image after its header, checking it as it goes.
//
// Every list is checked exactly: its count, its blocks, their encoding (the one Build writes,
// byte for byte), its entries in order and of ordinals of the index. What the lists say is
// checked against the documents and each other as far as it can be without tokenising the
// documents, each check costing a few operations per entry (no lookup at all for the entries of
// suggestion sets):
//   - the frequencies of all postings add up to the documents' token counts, plainly and
//     weighted by ordinal (unless a frequency saturated or a count was capped);
//   - the suggestion set of a word holds exactly the documents with the word in their title,
//     with their ids and ranks (sums of entryHash over the set and over the title postings: a
//     multiset hash, a chance of 2⁻⁶⁴ of missing a difference);
//   - a document with a title has one first word, which its title key starts with;
//   - the prefix sets are those of the prefixes of the title words, each with at least the
//     documents of its most frequent word and at most those of all its words, and with the
//     documents whose first word has the prefix as its entries of a first word (firstHash sums).
//
// What tokenising alone would tell (which words a document has, the rest of its title key, which
// documents but those of a first word a prefix set has, and their ids and ranks) is left to the
// image's checksum.
type loader struct {
	r      *imageReader
	ix     *Index
	list   []*Doc
	leaves [][]rec // of ix.recs, to set
	ids    *idsBuilder

	words []string // the vocabulary, in order

	// The title words (those with title postings) in order, with their number of documents,
	// and their number of documents whose title starts with them and the sum of firstHash over
	// those.
	titleWords  []string
	titleDocs   []int32
	firstDocs   []int32
	firstHashes []uint64

	hashes []uint64 // per ordinal: the entryHash of the document's suggestion entries
	first  []int32  // per ordinal: the first word of the title, by its suggestion set (in words), -1 none

	// The token counts of the records and the frequencies of the postings, summed; a saturated
	// frequency counts fewer tokens than there are, a capped count fewer than the frequencies.
	lens, tfs fieldSums
	capped    bool // a record's token count is capped
	saturated bool // a posting's frequency is saturated

	// The list being read: its first entry of each block and where each block ends; the
	// ordinals of the entries of a title's first word.
	firstPosts []uint64
	firstSents []sent
	ends       []int
	firstOrds  []uint32
}

// fieldSums are token counts (or frequencies) of titles and descriptions summed over documents
// (or postings), plainly and weighted by ordinal+1 (wrapping).
type fieldSums struct{ t, tw, d, dw uint64 }

// add adds the counts of the document of ordinal ord.
func (s *fieldSums) add(ord uint64, t, d uint64) {
	s.t += t
	s.tw += t * (ord + 1)
	s.d += d
	s.dw += d * (ord + 1)
}

// rec returns the record of an ordinal.
func (l *loader) rec(ord int) *rec { return &l.leaves[ord>>vecBits][ord&vecMask] }

// entryHash hashes what a suggestion entry holds of its document: ordinal, id and rank.
func entryHash(ord uint32, id schema.ProductID, srank uint16) uint64 {
	return mixHash(uint64(id)*0x9e3779b97f4a7c15 ^ uint64(ord)<<16 ^ uint64(srank))
}

// firstHash hashes the ordinal of a suggestion entry of the title's first word.
func firstHash(ord uint32) uint64 { return mixHash(uint64(ord) ^ 0x5851f42d4c957f2d) }

// mixHash is splitmix64's finalizer: a bijection whose output bits all depend on every input bit.
func mixHash(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// records reads each document's token counts and title key, makes its record as Build does,
// adds it to l.ids and sets the index's token totals and minimums. It returns the documents'
// hash (docsHash).
func (l *loader) records() (uint64, bool) {
	r, ix := l.r, l.ix
	h := newDocsHasher()
	l.hashes = make([]uint64, len(l.list))
	for ord, d := range l.list {
		tlen := r.int("title length", 0xffff)
		dlen := r.int("description length", 0xffff)
		var key uint64
		if p := r.bytes("title key", 8); p != nil {
			key = binary.BigEndian.Uint64(p)
		}
		if r.err != nil {
			return 0, false
		}
		if !validTitleKey(key, tlen) {
			r.failf("title key %016x of a title of %d tokens", key, tlen)
			return 0, false
		}
		h.add(d)
		rc := l.rec(ord)
		*rc = makeRec(d, &analysis{tlen: tlen, dlen: dlen, titleKey: key})
		l.ids.add(d)
		l.hashes[ord] = entryHash(uint32(ord), d.ID, rc.srank)
		l.lens.add(uint64(ord), uint64(tlen), uint64(dlen))
		l.capped = l.capped || tlen == 0xffff || dlen == 0xffff
		ix.sumT += int64(tlen)
		ix.sumD += int64(dlen)
		ix.minT = min(ix.minT, uint16(tlen))
		ix.minD = min(ix.minD, uint16(dlen))
	}
	return h.sum(ix.fuzzyMin), true
}

// validTitleKey reports whether key can be the title key of a title of tlen tokens: the first
// bytes of the tokens joined by spaces, none of them zero, then zeros; zero for no tokens.
func validTitleKey(key uint64, tlen int) bool {
	if tlen == 0 || key>>56 == 0 {
		return tlen == 0 && key == 0
	}
	used := 8
	for used > 0 && byte(key>>(8*(8-used))) == 0 {
		used--
	}
	for i := range used {
		if byte(key>>(56-8*i)) == 0 {
			return false
		}
	}
	return true
}

// titleKeyStarts reports whether key, the title key of a title of tlen tokens, starts with the
// title's first token w.
func titleKeyStarts(key uint64, w string, tlen int) bool {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], key)
	m := min(len(w), 8)
	if string(k[:m]) != w[:m] {
		return false
	}
	if m == 8 {
		return true
	}
	if tlen > 1 {
		return k[m] == ' '
	}
	return k[m] == 0
}

// vocabulary reads the words of the index, in order.
func (l *loader) vocabulary() bool {
	r := l.r
	l.words = r.strings("words", maxTokenLen)
	if r.err != nil {
		return false
	}
	for i, w := range l.words {
		if i > 0 && w <= l.words[i-1] || !utf8.ValidString(w) {
			r.failf("word %d (%q) out of order or not UTF-8", i, w)
			return false
		}
	}
	return true
}

// terms reads each word's posting list and, for a title word, its suggestion set, and sets the
// words, the suggestion sets of words and the vocabulary of the index.
func (l *loader) terms() bool {
	r, ix, n := l.r, l.ix, len(l.list)
	l.first = make([]int32, n)
	for ord := range l.first {
		l.first[ord] = -1
	}
	terms := immutable.NewMapBuilder[string, term](strHasher{})
	vocab := immutable.NewSortedMapBuilder[string, struct{}](strComparer{})
	wsets := immutable.NewSortedMapBuilder[string, sentSet](strComparer{})
	for i, w := range l.words {
		cnt := r.int("postings", n)
		data := r.block("postings")
		if r.err != nil {
			return false
		}
		t, titles, err := l.readPosts(data, cnt)
		if err != nil {
			r.failf("postings of %q: %v", w, err)
			return false
		}
		t.post = listOf[uint64, postCodec](data, cnt, l.firstPosts, l.ends)
		terms.Set(w, t)
		vocab.Set(w, struct{}{})
		if t.nT == 0 {
			continue
		}

		// The word's suggestion set: the documents with the word in their title.
		data = r.block("word suggestions")
		if r.err != nil {
			return false
		}
		sum, firsts, err := l.readSents(data, int(t.nT), true)
		if err != nil {
			r.failf("suggestions of word %q: %v", w, err)
			return false
		}
		if sum != titles {
			r.failf("suggestions of word %q: not the documents with the word in their title", w)
			return false
		}
		for _, ord := range l.firstOrds {
			if l.first[ord] >= 0 {
				r.failf("suggestions of word %q: document %d has two first words", w, ord)
				return false
			}
			l.first[ord] = int32(i)
		}
		wsets.Set(w, listOf[sent, sentCodec](data, int(t.nT), l.firstSents, l.ends))
		l.titleWords = append(l.titleWords, w)
		l.titleDocs = append(l.titleDocs, t.nT)
		l.firstDocs = append(l.firstDocs, int32(len(l.firstOrds)))
		l.firstHashes = append(l.firstHashes, firsts)
	}

	// The postings' frequencies add up to the records' token counts, and a document with a
	// title has one first word, which its title key starts with.
	if got, want := l.tfs, l.lens; !l.capped && (l.saturated && (got.t > want.t || got.d > want.d) || !l.saturated && got != want) {
		r.failf("the postings' frequencies add up to %+v, the records' token counts to %+v", got, want)
		return false
	}
	for ord := range l.list {
		rc, fw := l.rec(ord), l.first[ord]
		if (fw >= 0) != (rc.tlen > 0) || fw >= 0 && !titleKeyStarts(rc.titleKey, l.words[fw], int(rc.tlen)) {
			r.failf("document %d: a title of %d tokens, title key %016x, first word %d", ord, rc.tlen, rc.titleKey, fw)
			return false
		}
	}
	ix.terms, ix.vocab, ix.words = terms.Map(), vocab.Map(), wsets.Map()
	return true
}

// prefixes reads the prefix suggestion sets, checking that they are those of the prefixes of the
// title words, and sets them.
func (l *loader) prefixes() bool {
	r, n := l.r, len(l.list)
	keys := r.strings("prefixes", suggestPrefixMax*utf8.UTFMax)
	if r.err != nil {
		return false
	}
	for i, p := range keys {
		if i > 0 && p <= keys[i-1] || !utf8.ValidString(p) || utf8.RuneCountInString(p) > suggestPrefixMax {
			r.failf("prefix %d (%q) out of order, not UTF-8 or too long", i, p)
			return false
		}
	}
	// As many as the distinct prefixes of the title words (those of k characters of words in
	// order are in order too), and each one of them (below).
	want := 0
	for k := 1; k <= suggestPrefixMax; k++ {
		prev := ""
		for _, w := range l.titleWords {
			if p, ok := runePrefix(w, k); ok && p != prev {
				want++
				prev = p
			}
		}
	}
	if len(keys) != want {
		r.failf("%d prefix sets, the title words have %d prefixes", len(keys), want)
		return false
	}
	sets := immutable.NewMapBuilder[string, sentSet](strHasher{})
	for _, p := range keys {
		cnt := r.int("prefix suggestions", n)
		data := r.block("prefix suggestions")
		if r.err != nil {
			return false
		}
		// The title words with the prefix: the set has the documents of each, and those whose
		// title starts with one as its entries of a first word.
		most, all, firstDocs, firstHashes := 0, 0, 0, uint64(0)
		w, _ := slices.BinarySearch(l.titleWords, p)
		for ; w < len(l.titleWords) && strings.HasPrefix(l.titleWords[w], p); w++ {
			most = max(most, int(l.titleDocs[w]))
			all += int(l.titleDocs[w])
			firstDocs += int(l.firstDocs[w])
			firstHashes += l.firstHashes[w]
		}
		if most == 0 || cnt < most || cnt > all {
			r.failf("prefix %q: %d suggestions, its title words have %d to %d documents", p, cnt, most, all)
			return false
		}
		_, firsts, err := l.readSents(data, cnt, false)
		if err != nil {
			r.failf("suggestions of prefix %q: %v", p, err)
			return false
		}
		if firsts != firstHashes || len(l.firstOrds) != firstDocs {
			r.failf("suggestions of prefix %q: not of the documents whose first word has it", p)
			return false
		}
		sets.Set(p, listOf[sent, sentCodec](data, cnt, l.firstSents, l.ends))
	}
	l.ix.prefixes = sets.Map()
	return true
}

// runePrefix returns the first k characters of w, and whether w has that many.
func runePrefix(w string, k int) (string, bool) {
	for i := range w {
		if k == 0 {
			return w[:i], true
		}
		k--
	}
	return w, k == 0
}

// Errors of reading lists, wrapped with where.
var (
	errListShort = errors.New("truncated")
	errVarint    = errors.New("a varint truncated, overlong or not in its shortest encoding")
)

// uvarintAt reads the varint at data[off], which must be in its shortest encoding, and returns
// it and the offset after it; -1 when there is none. The loops inline the one- and two-byte
// cases (uvarint12) and call it for the others: three bytes here, more in binary.Uvarint.
func uvarintAt(data []byte, off int) (uint64, int) {
	if off+2 < len(data) && data[off] >= 0x80 && data[off+1] >= 0x80 && data[off+2]-1 < 0x7f {
		return uint64(data[off]&0x7f) | uint64(data[off+1]&0x7f)<<7 | uint64(data[off+2])<<14, off + 3
	}
	if off >= len(data) {
		return 0, -1
	}
	v, k := binary.Uvarint(data[off:])
	if k <= 0 || k > 1 && data[off+k-1] == 0 {
		return 0, -1
	}
	return v, off + k
}

// uvarint12 reads a varint of one or two bytes at data[off] as uvarintAt does, returning the
// offset after it; or off itself when the varint is longer, not there or not in its shortest
// encoding (uvarintAt then reads or refuses it).
func uvarint12(data []byte, off int) (uint64, int) {
	if uint(off+1) < uint(len(data)) {
		b0, b1 := uint64(data[off]), uint64(data[off+1])
		if b0 < 0x80 {
			return b0, off + 1
		}
		if b1-1 < 0x7f { // 1 <= b1 < 0x80: the last byte of two, not zero
			return b0&0x7f | b1<<7, off + 2
		}
	}
	return 0, off
}

// blockStart returns where block b of the k blocks plistOf splits n entries into starts.
func blockStart(b, k, n int) int { return b * n / k }

// readPosts reads data, the n postings of a word as Build encodes them (plistOf's blocks of
// postCodec): it fails unless data is exactly that encoding of postings in order, of ordinals of
// the index, each with a frequency. It adds the frequencies to l.tfs, sets l.firstPosts and
// l.ends, and returns the word's document frequencies and the sum of the entryHash of the
// documents of its title postings.
func (l *loader) readPosts(data []byte, n int) (t term, titles uint64, err error) {
	l.firstPosts, l.ends = l.firstPosts[:0], l.ends[:0]
	if n == 0 || n > len(data) {
		return t, 0, fmt.Errorf("%d postings in %d bytes", n, len(data))
	}
	hashes := l.hashes
	docs := uint64(len(hashes))
	tfs := l.tfs
	k := (n + blockMax - 1) / blockMax
	off := 0
	next := uint64(0) // the lowest ordinal the next posting may have
	for b := range k {
		lo, hi := blockStart(b, k, n), blockStart(b+1, k, n)
		ord := uint64(0) // a block is encoded from the zero posting
		for j := lo; j < hi; j++ {
			v, o := uvarint12(data, off)
			if o == off {
				if v, o = uvarintAt(data, off); o < 0 {
					return t, 0, fmt.Errorf("posting %d: %w", j, errVarint)
				}
			}
			off = o
			ord += v >> 2
			if ord-next >= docs-next { // ord < next or ord >= docs, next <= docs
				return t, 0, fmt.Errorf("posting %d: ordinal %d after %d, of %d documents", j, ord, int64(next)-1, docs)
			}
			next = ord + 1
			// Codes 1, 2, 3: frequencies (1, 0), (0, 1), (1, 1); 0: two bytes follow.
			tfT, tfD := v&1, v>>1&1
			if v&3 == 0 {
				if off+2 > len(data) {
					return t, 0, fmt.Errorf("posting %d: %w", j, errListShort)
				}
				tfT, tfD = uint64(data[off]), uint64(data[off+1])
				off += 2
				if tfT <= 1 && tfD <= 1 {
					return t, 0, fmt.Errorf("posting %d: frequencies %d %d written in full", j, tfT, tfD)
				}
				l.saturated = l.saturated || tfT == 0xff || tfD == 0xff
			}
			if j == lo {
				l.firstPosts = append(l.firstPosts, ord<<16|tfT<<8|tfD)
			}
			tfs.add(ord, tfT, tfD)
			t.nD += int32((tfD + 0xff) >> 8) // 1 when tfD > 0
			if tfT > 0 {
				t.nT++
				titles += hashes[ord]
			}
		}
		l.ends = append(l.ends, off)
	}
	if off != len(data) {
		return t, 0, fmt.Errorf("%d bytes after the last block", len(data)-off)
	}
	l.tfs = tfs
	return t, titles, nil
}

// readSents reads data, the n entries of a suggestion set as Build encodes it (plistOf's blocks
// of sentCodec): it fails unless data is exactly that encoding of entries in order, of ordinals
// of the index. It sets l.firstSents, l.ends and l.firstOrds, the ordinals of the entries of the
// title's first word, and returns the sum of firstHash over those and, when hashing, of
// entryHash over all the entries.
func (l *loader) readSents(data []byte, n int, hashing bool) (sum, firstSum uint64, err error) {
	l.firstSents, l.ends, l.firstOrds = l.firstSents[:0], l.ends[:0], l.firstOrds[:0]
	if n == 0 || n > len(data)/2 {
		return 0, 0, fmt.Errorf("%d entries in %d bytes", n, len(data))
	}
	docs := uint64(len(l.list))
	k := (n + blockMax - 1) / blockMax
	off := 0
	var last sent // the entry before, in the list
	for b := range k {
		lo, hi := blockStart(b, k, n), blockStart(b+1, k, n)
		var prev sent // the entry before, in the block: the zero sent before the first
		for j := lo; j < hi; j++ {
			v, o := uvarint12(data, off)
			if o == off {
				if v, o = uvarintAt(data, off); o < 0 {
					return 0, 0, fmt.Errorf("entry %d: %w", j, errVarint)
				}
			}
			off = o
			e := prev
			if v&1 == 0 {
				// The rank of the entry before, and the distance from its id.
				if d := v >> 1; j == lo || d >= 1<<62 {
					return 0, 0, fmt.Errorf("entry %d: an id distance of %d in a block's entry %d", j, d, j-lo)
				}
				e.id += schema.ProductID(v >> 1)
			} else {
				id, o := uvarint12(data, off)
				if o == off {
					if id, o = uvarintAt(data, off); o < 0 {
						return 0, 0, fmt.Errorf("entry %d: %w", j, errVarint)
					}
				}
				off = o
				if v>>1 >= 1<<12 || j > lo && v>>1 == prev.rank>>32 && id-uint64(prev.id) < 1<<62 {
					return 0, 0, fmt.Errorf("entry %d: rank %d and id %d written in full", j, v>>1, id)
				}
				e = sent{rank: v >> 1 << 32, id: schema.ProductID(id)}
			}
			ord, o := uvarint12(data, off)
			if o == off {
				if ord, o = uvarintAt(data, off); o < 0 {
					return 0, 0, fmt.Errorf("entry %d: %w", j, errVarint)
				}
			}
			off = o
			if ord >= docs {
				return 0, 0, fmt.Errorf("entry %d: ordinal %d of %d documents", j, ord, docs)
			}
			e.rank = e.rank>>32<<32 | ord
			if j > 0 && (last.rank>>32 > e.rank>>32 || last.rank>>32 == e.rank>>32 && last.id >= e.id) {
				return 0, 0, fmt.Errorf("entry %d out of order", j)
			}
			if j == lo {
				l.firstSents = append(l.firstSents, e)
			}
			if hashing {
				sum += entryHash(uint32(ord), e.id, uint16(e.rank>>32&0x7ff))
			}
			if e.rank&(1<<43) == 0 { // of the title's first word
				firstSum += firstHash(uint32(ord))
				l.firstOrds = append(l.firstOrds, uint32(ord))
			}
			prev, last = e, e
		}
		l.ends = append(l.ends, off)
	}
	if off != len(data) {
		return 0, 0, fmt.Errorf("%d bytes after the last block", len(data)-off)
	}
	return sum, firstSum, nil
}

// listOf makes the list of n entries read from data, firsts the first entry of each block and
// ends where each block ends, as plistOf makes it: the blocks share one copy of data.
func listOf[E any, C codec[E]](data []byte, n int, firsts []E, ends []int) plist[E, C] {
	arena := slices.Clone(data)
	if len(ends) == 1 {
		return plist[E, C]{one: &block[E]{first: firsts[0], data: arena, n: int32(n)}, n: n}
	}
	k := len(ends)
	bs := make([]block[E], k)
	ptrs := make([]*block[E], k)
	from := 0
	for b := range bs {
		bs[b] = block[E]{first: firsts[b], data: arena[from:ends[b]:ends[b]], n: int32(blockStart(b+1, k, n) - blockStart(b, k, n))}
		ptrs[b] = &bs[b]
		from = ends[b]
	}
	return plist[E, C]{tree: bulk(ptrs), n: n}
}
