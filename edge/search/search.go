package search

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benbjohnson/immutable"
	"github.com/cespare/xxhash/v2"

	"vitrine/schema"
)

// Doc is what the index knows of one product. The index keeps the pointer: a Doc must not be
// modified once it has been given to Build or With (give a new Doc to change a product).
type Doc struct {
	ID           schema.ProductID
	Slug         string              // returned in suggestions
	Title        string              // searched, weighted above the description; suggestions match it
	Description  string              // searched, plain text
	CategoryIDs  []schema.CategoryID // for category filters
	Price        int64               // in the store's default currency, minor units (for price filters and sorts)
	Availability schema.Availability // best availability of the product's variants
	Featured     bool                // ranks suggestions
	CreatedAt    time.Time           // breaks ties, newest first; the Newest sort
}

// DocOf makes the Doc of a public product as the commerce views show it: its own price in the
// store's default currency (0 when it has none there, as the product view shows it) and the best
// availability of its public variants (schema.BestAvailability: none is out of stock). It keeps
// p's strings and category slice: they must not be modified afterwards.
func DocOf(p *schema.Product, variants []*schema.Variant, defaultCurrency string) *Doc {
	return &Doc{
		ID:           p.ID,
		Slug:         p.Slug,
		Title:        p.Title,
		Description:  p.Description,
		CategoryIDs:  p.CategoryIDs,
		Price:        p.Prices[defaultCurrency],
		Availability: schema.BestAvailability(variants),
		Featured:     p.Featured,
		CreatedAt:    p.CreatedAt,
	}
}

// DefaultFuzzyMinLen is the default length, in characters, from which a query term with no exact
// match is also matched with one typo.
const DefaultFuzzyMinLen = 4

// Options tune an index. The zero Options are the defaults.
type Options struct {
	// FuzzyMinLen is the length in characters from which a query term that matches no indexed
	// word exactly also matches the words at Damerau-Levenshtein distance 1. 0 means
	// DefaultFuzzyMinLen, 1 means 2 (a one-character word is one edit from every other one), and
	// a negative value turns typo tolerance off. It is fixed when the index is made: indexes
	// derived by With keep it.
	FuzzyMinLen int
}

func (o Options) fuzzyMin() int {
	switch {
	case o.FuzzyMinLen == 0:
		return DefaultFuzzyMinLen
	case o.FuzzyMinLen < 0:
		return 0
	case o.FuzzyMinLen < 2:
		return 2 // a one-character term is one typo away from every other one
	}
	return o.FuzzyMinLen
}

// Index is an immutable search index of one store's public products. All methods are safe for
// concurrent use; With returns a new Index and leaves the receiver unchanged (persistent,
// structure-sharing updates: cost proportional to the documents changed, never to the catalog).
// The zero Index is not usable: make one with New, NewWithOptions, Build or BuildWithOptions.
type Index struct {
	fuzzyMin   int // 0: no typo tolerance
	n          int
	nextOrd    uint32 // ordinals below it have been handed out
	sumT, sumD int64  // total title and description tokens, for the average field lengths
	minT, minD uint16 // at most the fewest title and description tokens of a document (bounds scores)
	free       *freeOrd
	// built reports that the index is one New or Build made, not changed by With since: ordinals
	// are dense and every list is in Build's blocks, so AppendImage can make its image.
	built bool

	ids      *immutable.Map[schema.ProductID, uint32]
	recs     pvec[rec]
	terms    *immutable.Map[string, term]
	vocab    *immutable.SortedMap[string, struct{}] // the keys of terms, in order, for prefixes
	fuzz     *immutable.Map[uint64, []string]
	words    *immutable.SortedMap[string, sentSet]
	prefixes *immutable.Map[string, sentSet]
	cats     *immutable.Map[schema.CategoryID, ordSet]
}

// A document has a dense internal ordinal: its slot in recs and its key in posting lists. The
// ordinals of deleted documents go to a persistent free list and are handed out again.
type freeOrd struct {
	ord  uint32
	next *freeOrd
}

// rec is the per-ordinal record: what scoring, filters and sorts read of a document without
// following a pointer, and the rest of it (txt). A zero rec (nil txt) is a free slot. Together they
// hold the whole Doc (rec.document), in less memory than a copy of it: a Doc is 144 bytes of
// struct, a stored 80.
type rec struct {
	txt      *stored
	id       schema.ProductID
	price    int64
	sec      int64
	titleKey uint64 // the first 8 bytes of the normalised title, for TitleAsc
	nsec     int32
	tlen     uint16 // tokens in the title
	dlen     uint16 // tokens in the description
	srank    uint16 // suggestion rank: notFeatured<<10 | title length in characters (capped)
	avail    uint8  // availability bit (availOther for unknown values)
}

// stored is what a rec keeps of a document besides its fields of its own: the strings and lists
// that suggestions, category filters and updates read back. The strings and the category slice
// are the Doc's (hence the product's): never modified.
type stored struct {
	slug, title, description string
	cats                     []schema.CategoryID
	other                    *schema.Availability // the availability when it is none of the known ones (availOther)
}

func storedOf(d *Doc) *stored {
	st := &stored{slug: d.Slug, title: d.Title, description: d.Description, cats: d.CategoryIDs}
	if availBit(d.Availability) == availOther {
		a := d.Availability
		st.other = &a
	}
	return st
}

// availability is the document's Availability.
func (r *rec) availability() schema.Availability {
	switch r.avail {
	case availInStock:
		return schema.InStock
	case availLow:
		return schema.LowStock
	case availOut:
		return schema.OutOfStock
	}
	return *r.txt.other
}

// document makes the Doc the record was made of (equal to it; CreatedAt in UTC).
func (r *rec) document() *Doc {
	return &Doc{ID: r.id, Slug: r.txt.slug, Title: r.txt.title, Description: r.txt.description, CategoryIDs: r.txt.cats,
		Price: r.price, Availability: r.availability(), Featured: r.srank&notFeatured == 0,
		CreatedAt: time.Unix(r.sec, int64(r.nsec)).UTC()}
}

// term is an indexed word: its posting list and how many documents have it in each field.
type term struct {
	post   postList
	nT, nD int32
}

// A posting packs ordinal<<16 | title term frequency<<8 | description term frequency; posting
// lists are ordered by ordinal. Frequencies saturate at 255.
func cmpPost(a, b uint64) int { return cmp.Compare(a>>16, b>>16) }

func posting(ord uint32, tfT, tfD int) uint64 { return uint64(ord)<<16 | uint64(tfT)<<8 | uint64(tfD) }

func postOrd(p uint64) uint32 { return uint32(p >> 16) }
func postTfT(p uint64) int    { return int(p>>8) & 0xff }
func postTfD(p uint64) int    { return int(p) & 0xff }

// sent is an entry of a suggestion set: the documents whose title has a word (or a word with a
// prefix), best first. rank packs, from the top: notFirst (the title's first word is not the
// word, or has not the prefix) <<43 | srank <<32 | ordinal. Entries order by rank without the
// ordinal, then id.
type sent struct {
	rank uint64
	id   schema.ProductID
}

func cmpSent(a, b sent) int {
	return cmp.Or(cmp.Compare(a.rank>>32, b.rank>>32), cmp.Compare(a.id, b.id))
}

func (s sent) ord() uint32 { return uint32(s.rank) }

func makeSent(first bool, srank uint16, ord uint32, id schema.ProductID) sent {
	r := uint64(srank)<<32 | uint64(ord)
	if !first {
		r |= 1 << 43
	}
	return sent{rank: r, id: id}
}

func cmpOrd(a, b uint32) int { return cmp.Compare(a, b) }

// Availability bits.
const (
	availInStock uint8 = 1 << iota
	availLow
	availOut
	availOther
)

func availBit(a schema.Availability) uint8 {
	switch a {
	case schema.InStock:
		return availInStock
	case schema.LowStock:
		return availLow
	case schema.OutOfStock:
		return availOut
	}
	return availOther
}

// suggestPrefixMax is the longest prefix, in characters, that has a suggestion set of its own;
// longer prefixes merge the sets of the words that have them, which are few.
const suggestPrefixMax = 3

// Hashers for the persistent maps: the library's defaults use reflection for named types.
type idHasher struct{}

func (idHasher) Hash(k schema.ProductID) uint32   { return mix64(uint64(k)) }
func (idHasher) Equal(a, b schema.ProductID) bool { return a == b }

type catHasher struct{}

func (catHasher) Hash(k schema.CategoryID) uint32   { return mix64(uint64(k)) }
func (catHasher) Equal(a, b schema.CategoryID) bool { return a == b }

type u64Hasher struct{}

func (u64Hasher) Hash(k uint64) uint32   { return uint32(k ^ k>>32) }
func (u64Hasher) Equal(a, b uint64) bool { return a == b }

type strHasher struct{}

func (strHasher) Hash(s string) uint32   { return uint32(xxhash.Sum64String(s)) }
func (strHasher) Equal(a, b string) bool { return a == b }

type strComparer struct{}

func (strComparer) Compare(a, b string) int { return strings.Compare(a, b) }

func mix64(x uint64) uint32 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return uint32(x)
}

// New returns an empty index with the default options.
func New() *Index { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty index with options o; indexes derived from it by With keep them.
func NewWithOptions(o Options) *Index {
	return &Index{
		built:    true,
		fuzzyMin: o.fuzzyMin(),
		minT:     0xffff,
		minD:     0xffff,
		ids:      immutable.NewMap[schema.ProductID, uint32](idHasher{}),
		terms:    immutable.NewMap[string, term](strHasher{}),
		vocab:    immutable.NewSortedMap[string, struct{}](strComparer{}),
		fuzz:     immutable.NewMap[uint64, []string](u64Hasher{}),
		words:    immutable.NewSortedMap[string, sentSet](strComparer{}),
		prefixes: immutable.NewMap[string, sentSet](strHasher{}),
		cats:     immutable.NewMap[schema.CategoryID, ordSet](catHasher{}),
	}
}

// Len returns the number of documents.
func (ix *Index) Len() int { return ix.n }

// Options returns the options the index was made with.
func (ix *Index) Options() Options {
	if ix.fuzzyMin == 0 {
		return Options{FuzzyMinLen: -1}
	}
	return Options{FuzzyMinLen: ix.fuzzyMin}
}

// Get returns the document with the given id: a new Doc equal to the one indexed (CreatedAt in
// UTC), made from the index's own compact record of it.
func (ix *Index) Get(id schema.ProductID) (*Doc, bool) {
	ord, ok := ix.ids.Get(id)
	if !ok {
		return nil, false
	}
	return ix.recs.get(int(ord)).document(), true
}

// fuzzable reports whether a word takes part in typo matching.
func (ix *Index) fuzzable(s string) bool {
	return ix.fuzzyMin > 0 && !allDigits(s) && runeLen(s) >= ix.fuzzyMin
}

// analysis is what indexing needs of a document's text.
type analysis struct {
	terms      []termTF // distinct, ordered by term
	tlen, dlen int
	words      []string // distinct title words, the first one first
	titleKey   uint64
}

type termTF struct {
	term     string
	tfT, tfD int
}

// analyze tokenises a document the way Build does.
func analyze(d *Doc, tk *tokenizer) analysis { return analyzeText(d.Title, d.Description, tk) }

// analyzeText is analyze of a document's title and description.
func analyzeText(title, description string, tk *tokenizer) analysis {
	tk.reset()
	tk.add(title)
	nt := tk.n()
	tk.add(description)
	var a analysis
	a.tlen, a.dlen = min(nt, 0xffff), min(tk.n()-nt, 0xffff)
	a.titleKey = titleKey(tk, nt)
	toks := make([]termTF, tk.n())
	for i := range toks {
		toks[i].term = string(tk.tok(i))
		if i < nt {
			toks[i].tfT = 1
			if !slices.Contains(a.words, toks[i].term) {
				a.words = append(a.words, toks[i].term)
			}
		} else {
			toks[i].tfD = 1
		}
	}
	slices.SortStableFunc(toks, func(x, y termTF) int { return strings.Compare(x.term, y.term) })
	for _, t := range toks {
		if k := len(a.terms) - 1; k >= 0 && a.terms[k].term == t.term {
			a.terms[k].tfT = min(a.terms[k].tfT+t.tfT, 0xff)
			a.terms[k].tfD = min(a.terms[k].tfD+t.tfD, 0xff)
			continue
		}
		a.terms = append(a.terms, t)
	}
	return a
}

// titleKey packs the first 8 bytes of the normalised title (its first nt tokens joined by spaces).
func titleKey(tk *tokenizer, nt int) uint64 {
	var k [8]byte
	j := 0
	for i := 0; i < nt && j < len(k); i++ {
		if i > 0 {
			k[j] = ' '
			j++
		}
		j += copy(k[j:], tk.tok(i))
	}
	var x uint64
	for _, c := range k {
		x = x<<8 | uint64(c)
	}
	return x
}

// notFeatured is the bit of a rec's srank set when the document is not featured.
const notFeatured = 1 << 10

// makeRec makes the record of a document.
func makeRec(d *Doc, a *analysis) rec {
	srank := uint16(min(utf8.RuneCountInString(d.Title), 1023))
	if !d.Featured {
		srank |= notFeatured
	}
	return rec{
		txt:      storedOf(d),
		id:       d.ID,
		price:    d.Price,
		sec:      d.CreatedAt.Unix(),
		nsec:     int32(d.CreatedAt.Nanosecond()),
		titleKey: a.titleKey,
		tlen:     uint16(a.tlen),
		dlen:     uint16(a.dlen),
		srank:    srank,
		avail:    availBit(d.Availability),
	}
}

// prefixesOf calls f with each distinct prefix of 1 to suggestPrefixMax characters of the words
// and whether the first word has it. seen is scratch space, returned for reuse.
func prefixesOf(words []string, seen []string, f func(p string, first bool)) []string {
	seen = seen[:0]
	var many map[string]bool // for long titles, where a linear search would be quadratic
	if len(words) > 16 {
		many = make(map[string]bool, len(words)*suggestPrefixMax)
	}
	for _, w := range words {
		n := 0
		for i := 1; i <= len(w) && n < suggestPrefixMax; i++ {
			if i < len(w) && !utf8.RuneStart(w[i]) {
				continue
			}
			n++
			p := w[:i]
			if many != nil {
				if many[p] {
					continue
				}
				many[p] = true
			} else {
				if slices.Contains(seen, p) {
					continue
				}
				seen = append(seen, p)
			}
			f(p, strings.HasPrefix(words[0], p))
		}
	}
	return seen
}

// hashDelete hashes a deletion variant for the fuzzy map.
func hashDelete(v []byte) uint64 { return xxhash.Sum64(v) }

// txn applies a batch of changes to a copy of an index. Touched posting lists, suggestion sets
// and category sets are gathered in maps and written back to the persistent maps once each.
type txn struct {
	ix       Index
	terms    map[string]*pendingTerm
	words    map[string]*pending[sent, sentCodec]
	prefixes map[string]*pending[sent, sentCodec]
	cats     map[schema.CategoryID]*pending[uint32, ordCodec]
	tk       tokenizer
	buf      []byte
	seen     []string
	sugg     []suggestion
	postWork work[uint64]
	sentWork work[sent]
	ordWork  work[uint32]
}

// pendingTerm is a touched word: its document frequencies, already updated, and the changes to
// its posting list, applied at commit.
type pendingTerm struct {
	term
	existed bool
	ops     pending[uint64, postCodec]
}

// With applies upserts and deletions (by id) and returns the new index; the receiver is
// unchanged. Upserts are applied in order (the last of two with the same id wins), then deletes;
// a nil Doc or the id of an absent document is ignored. The cost is proportional to the
// documents changed (their words, categories and title prefixes) times the logarithm of the
// catalog size; a batch at least as large as the index is applied by rebuilding, which costs the
// same order.
func (ix *Index) With(upserts []*Doc, deletes []schema.ProductID) *Index {
	if len(upserts) == 0 && len(deletes) == 0 {
		return ix
	}
	if c := len(upserts) + len(deletes); c >= rebuildMin && c >= ix.n {
		return ix.rebuild(upserts, deletes)
	}
	t := &txn{
		ix:       *ix,
		terms:    map[string]*pendingTerm{},
		words:    map[string]*pending[sent, sentCodec]{},
		prefixes: map[string]*pending[sent, sentCodec]{},
		cats:     map[schema.CategoryID]*pending[uint32, ordCodec]{},
	}
	t.ix.built = false // ordinals may be freed and lists no longer in Build's blocks
	for _, d := range upserts {
		if d != nil {
			t.upsert(d)
		}
	}
	for _, id := range deletes {
		t.remove(id)
	}
	return t.commit()
}

// rebuildMin is the smallest batch With applies by rebuilding.
const rebuildMin = 256

func (ix *Index) rebuild(upserts []*Doc, deletes []schema.ProductID) *Index {
	docs := make([]*Doc, 0, ix.n+len(upserts))
	ix.recs.each(func(_ int, r *rec) bool {
		if r.txt != nil {
			docs = append(docs, r.document())
		}
		return true
	})
	docs = append(docs, upserts...)
	if len(deletes) > 0 {
		gone := make(map[schema.ProductID]bool, len(deletes))
		for _, id := range deletes {
			gone[id] = true
		}
		docs = slices.DeleteFunc(docs, func(d *Doc) bool { return d == nil || gone[d.ID] })
	}
	return BuildWithOptions(docs, ix.Options())
}

func (t *txn) term(s string) *pendingTerm {
	if p, ok := t.terms[s]; ok {
		return p
	}
	tm, ok := t.ix.terms.Get(s)
	p := &pendingTerm{term: tm, existed: ok}
	p.ops.list = tm.post
	t.terms[s] = p
	return p
}

// putPost sets the frequencies of word s in document ord; oldT and oldD are the ones the index
// has now (0 and 0: none).
func (t *txn) putPost(s string, ord uint32, tfT, tfD, oldT, oldD int) {
	p := t.term(s)
	p.ops.put(posting(ord, tfT, tfD))
	p.flag(oldT, oldD, -1)
	p.flag(tfT, tfD, 1)
}

// delPost removes word s, with frequencies oldT and oldD, from document ord.
func (t *txn) delPost(s string, ord uint32, oldT, oldD int) {
	p := t.term(s)
	p.ops.del(posting(ord, 0, 0))
	p.flag(oldT, oldD, -1)
}

func (p *pendingTerm) flag(tfT, tfD int, d int32) {
	if tfT > 0 {
		p.nT += d
	}
	if tfD > 0 {
		p.nD += d
	}
}

// pendingSet returns the pending changes of a suggestion set, loading it from src the first time.
func (t *txn) pendingSet(m map[string]*pending[sent, sentCodec], src interface {
	Get(string) (sentSet, bool)
}, key string) *pending[sent, sentCodec] {
	if s, ok := m[key]; ok {
		return s
	}
	s, _ := src.Get(key)
	p := &pending[sent, sentCodec]{list: s}
	m[key] = p
	return p
}

func (t *txn) catSet(c schema.CategoryID) *pending[uint32, ordCodec] {
	if s, ok := t.cats[c]; ok {
		return s
	}
	s, _ := t.ix.cats.Get(c)
	p := &pending[uint32, ordCodec]{list: s}
	t.cats[c] = p
	return p
}

// suggestion is one entry of one suggestion set: a word's set, or a prefix's.
type suggestion struct {
	prefix bool
	key    string
	e      sent
}

func cmpSuggestion(a, b suggestion) int {
	if a.prefix != b.prefix {
		if a.prefix {
			return 1
		}
		return -1
	}
	return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.e.rank, b.e.rank), cmp.Compare(a.e.id, b.e.id))
}

// suggestionsOf appends to dst the suggestion entries of a document whose title has words (an
// entry in the set of each word and of each of their prefixes), sorted, each once.
func (t *txn) suggestionsOf(dst []suggestion, r *rec, ord uint32, words []string) []suggestion {
	n := len(dst)
	for i, w := range words {
		dst = append(dst, suggestion{key: w, e: makeSent(i == 0, r.srank, ord, r.id)})
	}
	t.seen = prefixesOf(words, t.seen, func(p string, first bool) {
		dst = append(dst, suggestion{prefix: true, key: p, e: makeSent(first, r.srank, ord, r.id)})
	})
	slices.SortFunc(dst[n:], cmpSuggestion)
	return append(dst[:n], slices.Compact(dst[n:])...)
}

// retitle moves a document's suggestion entries from those of its old title words (old is nil
// for a new document) to those of its new ones (nr is nil for a removed one), touching only the
// sets whose entry differs: a retitle that keeps a word and the title's rank (its length, the
// featured flag) leaves that word's set and its prefixes' sets as they are, where removing and
// adding the same entry would re-encode a block of each. The sets end as removing every old entry
// and then adding every new one would leave them.
func (t *txn) retitle(old *rec, oldWords []string, nr *rec, newWords []string, ord uint32) {
	all := t.sugg[:0]
	if old != nil {
		all = t.suggestionsOf(all, old, ord, oldWords)
	}
	n := len(all)
	if nr != nil {
		all = t.suggestionsOf(all, nr, ord, newWords)
	}
	was, now := all[:n], all[n:]
	set := func(s suggestion) *pending[sent, sentCodec] {
		if s.prefix {
			return t.pendingSet(t.prefixes, t.ix.prefixes, s.key)
		}
		return t.pendingSet(t.words, t.ix.words, s.key)
	}
	i, j := 0, 0
	for i < len(was) || j < len(now) {
		c := 0
		switch {
		case i == len(was):
			c = 1
		case j == len(now):
			c = -1
		default:
			c = cmpSuggestion(was[i], now[j])
		}
		switch {
		case c < 0:
			set(was[i]).del(was[i].e)
			i++
		case c > 0:
			set(now[j]).put(now[j].e)
			j++
		default:
			i++
			j++
		}
	}
	t.sugg = all[:0]
}

func distinctCats(cs []schema.CategoryID) []schema.CategoryID {
	out := slices.Clone(cs)
	slices.Sort(out)
	return slices.Compact(out)
}

func (t *txn) upsert(d *Doc) {
	ord, exists := t.ix.ids.Get(d.ID)
	var old rec
	if exists {
		old = *t.ix.recs.get(int(ord))
	} else {
		ord = t.allocOrd()
	}
	// A change that leaves the text alone (price, stock, flags) touches no posting list.
	sameText := exists && old.txt.title == d.Title && old.txt.description == d.Description
	var na, oa analysis
	if sameText {
		na = analysis{tlen: int(old.tlen), dlen: int(old.dlen), titleKey: old.titleKey}
	} else {
		na = analyze(d, &t.tk)
		if exists {
			oa = analyzeText(old.txt.title, old.txt.description, &t.tk)
		}
	}
	nr := makeRec(d, &na)

	if !sameText {
		// Postings: only the words whose frequencies changed.
		i, j := 0, 0
		for i < len(oa.terms) || j < len(na.terms) {
			switch {
			case j == len(na.terms) || i < len(oa.terms) && oa.terms[i].term < na.terms[j].term:
				t.delPost(oa.terms[i].term, ord, oa.terms[i].tfT, oa.terms[i].tfD)
				i++
			case i == len(oa.terms) || na.terms[j].term < oa.terms[i].term:
				t.putPost(na.terms[j].term, ord, na.terms[j].tfT, na.terms[j].tfD, 0, 0)
				j++
			default:
				if oa.terms[i] != na.terms[j] {
					t.putPost(na.terms[j].term, ord, na.terms[j].tfT, na.terms[j].tfD, oa.terms[i].tfT, oa.terms[i].tfD)
				}
				i++
				j++
			}
		}
		t.ix.sumT += int64(na.tlen - oa.tlen)
		t.ix.sumD += int64(na.dlen - oa.dlen)
		// Lowered, never raised: a bound, exact after Build.
		t.ix.minT = min(t.ix.minT, uint16(na.tlen))
		t.ix.minD = min(t.ix.minD, uint16(na.dlen))
	}

	// Suggestions: redone when the title or the featured flag changed.
	if !exists || old.txt.title != d.Title || old.srank != nr.srank {
		if sameText {
			na.words = analyze(d, &t.tk).words
			oa.words = na.words
		}
		var was *rec
		if exists {
			was = &old
		}
		t.retitle(was, oa.words, &nr, na.words, ord)
	}

	// Categories.
	oc, nc := []schema.CategoryID(nil), distinctCats(d.CategoryIDs)
	if exists {
		oc = distinctCats(old.txt.cats)
	}
	for _, c := range oc {
		if _, ok := slices.BinarySearch(nc, c); !ok {
			t.catSet(c).del(ord)
		}
	}
	for _, c := range nc {
		if _, ok := slices.BinarySearch(oc, c); !ok {
			t.catSet(c).put(ord)
		}
	}

	t.ix.recs = t.ix.recs.set(int(ord), nr)
	if !exists {
		t.ix.ids = t.ix.ids.Set(d.ID, ord)
		t.ix.n++
	}
}

func (t *txn) remove(id schema.ProductID) {
	ord, ok := t.ix.ids.Get(id)
	if !ok {
		return
	}
	old := *t.ix.recs.get(int(ord))
	oa := analyzeText(old.txt.title, old.txt.description, &t.tk)
	for _, tt := range oa.terms {
		t.delPost(tt.term, ord, tt.tfT, tt.tfD)
	}
	t.ix.sumT -= int64(oa.tlen)
	t.ix.sumD -= int64(oa.dlen)
	t.retitle(&old, oa.words, nil, nil, ord)
	for _, c := range distinctCats(old.txt.cats) {
		t.catSet(c).del(ord)
	}
	t.ix.recs = t.ix.recs.set(int(ord), rec{})
	t.ix.ids = t.ix.ids.Delete(id)
	t.ix.free = &freeOrd{ord: ord, next: t.ix.free}
	t.ix.n--
}

func (t *txn) allocOrd() uint32 {
	if f := t.ix.free; f != nil {
		t.ix.free = f.next
		return f.ord
	}
	ord := t.ix.nextOrd
	t.ix.nextOrd++
	return ord
}

// commit writes the touched sets back, in key order so that the result does not depend on map
// iteration, and maintains the fuzzy map for words that appeared or disappeared.
func (t *txn) commit() *Index {
	ix := &t.ix
	for _, s := range sortedKeys(t.terms) {
		p := t.terms[s]
		p.post = p.ops.done(&t.postWork)
		switch {
		case p.post.n == 0 && p.existed:
			ix.terms = ix.terms.Delete(s)
			ix.vocab = ix.vocab.Delete(s)
			if ix.fuzzable(s) {
				t.fuzzEdit(s, false)
			}
		case p.post.n > 0:
			ix.terms = ix.terms.Set(s, p.term)
			if !p.existed {
				ix.vocab = ix.vocab.Set(s, struct{}{})
				if ix.fuzzable(s) {
					t.fuzzEdit(s, true)
				}
			}
		}
	}
	for _, w := range sortedKeys(t.words) {
		if s := t.words[w].done(&t.sentWork); s.n == 0 {
			ix.words = ix.words.Delete(w)
		} else {
			ix.words = ix.words.Set(w, s)
		}
	}
	for _, p := range sortedKeys(t.prefixes) {
		if s := t.prefixes[p].done(&t.sentWork); s.n == 0 {
			ix.prefixes = ix.prefixes.Delete(p)
		} else {
			ix.prefixes = ix.prefixes.Set(p, s)
		}
	}
	cats := make([]schema.CategoryID, 0, len(t.cats))
	for c := range t.cats {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	for _, c := range cats {
		if s := t.cats[c].done(&t.ordWork); s.n == 0 {
			ix.cats = ix.cats.Delete(c)
		} else {
			ix.cats = ix.cats.Set(c, s)
		}
	}
	out := t.ix
	return &out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fuzzEdit adds word s to (or removes it from) the lists of its deletion variants.
func (t *txn) fuzzEdit(s string, add bool) {
	t.buf = deletes(s, t.buf, func(v []byte) {
		h := hashDelete(v)
		list, _ := t.ix.fuzz.Get(h)
		if add {
			if slices.Contains(list, s) {
				return
			}
			t.ix.fuzz = t.ix.fuzz.Set(h, append(slices.Clip(list), s))
			return
		}
		i := slices.Index(list, s)
		if i < 0 {
			return
		}
		if len(list) == 1 {
			t.ix.fuzz = t.ix.fuzz.Delete(h)
			return
		}
		t.ix.fuzz = t.ix.fuzz.Set(h, slices.Delete(slices.Clone(list), i, i+1))
	})
}
