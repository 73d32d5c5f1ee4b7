package search

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	"github.com/benbjohnson/immutable"

	"vitrine/schema"
)

// Build makes an index of many documents at once with the default options: much faster than
// repeated With (a bootstrap). Of two documents with the same id the later wins; nil ones are
// skipped.
func Build(docs []*Doc) *Index { return BuildWithOptions(docs, Options{}) }

// termBuild gathers one word's postings during Build.
type termBuild struct {
	word   string
	post   []uint64
	last   uint32 // ordinal+1 of the document of the last posting
	nT, nD int32
}

// suggestBuild gathers one suggestion set during Build: the entries of documents whose first
// title word matches, then the others, each in document rank order.
type suggestBuild struct{ first, rest []sent }

// BuildWithOptions is Build with options o.
func BuildWithOptions(docs []*Doc, o Options) *Index {
	ix := NewWithOptions(o)
	list := distinctDocs(docs)
	if len(list) == 0 {
		return ix
	}

	recs := make([]rec, len(list))
	words := make([][]string, len(list)) // distinct title words of each document

	// Tokenise in contiguous ranges of documents in parallel, then merge the ranges' words in
	// range order: the posting lists come out in ordinal order whatever the parallelism.
	parts := 1
	if len(list) >= 2*buildChunkMin {
		parts = min(runtime.GOMAXPROCS(0), len(list)/buildChunkMin, 8)
	}
	scans := make([]scan, parts)
	var wg sync.WaitGroup
	for i := range scans {
		lo, hi := i*len(list)/parts, (i+1)*len(list)/parts
		wg.Go(func() { scans[i] = scanDocs(list, lo, hi, recs, words) })
	}
	wg.Wait()
	dict := scans[0].dict
	for _, sc := range scans {
		ix.sumT += sc.sumT
		ix.sumD += sc.sumD
		ix.minT = min(ix.minT, sc.minT)
		ix.minD = min(ix.minD, sc.minD)
	}
	for _, sc := range scans[1:] {
		for w, tb := range sc.dict {
			to := dict[w]
			if to == nil {
				dict[w] = tb
				continue
			}
			to.post = append(to.post, tb.post...)
			to.nT += tb.nT
			to.nD += tb.nD
		}
	}
	ix.n = len(list)
	ix.nextOrd = uint32(len(list))

	// Three independent parts, each writing its own fields of ix: the records, ids and categories;
	// the words; the suggestion sets. Each is deterministic, so the index is too.
	wg.Go(func() { ix.buildDocs(list, recs) })
	wg.Go(func() { ix.buildWords(dict) })
	ix.buildSuggestions(list, recs, words, len(dict))
	wg.Wait()
	return ix
}

// distinctDocs returns the documents Build indexes, in ordinal order: the non-nil ones, the last
// of each id in the place of the first.
func distinctDocs(docs []*Doc) []*Doc {
	at := make(map[schema.ProductID]int, len(docs))
	list := make([]*Doc, 0, len(docs))
	for _, d := range docs {
		if d == nil {
			continue
		}
		if i, ok := at[d.ID]; ok {
			list[i] = d
			continue
		}
		at[d.ID] = len(list)
		list = append(list, d)
	}
	return list
}

// buildChunkMin is the fewest documents Build tokenises in a goroutine of its own.
const buildChunkMin = 2048

// scan is what Build gathers of a range of documents: their words and token counts.
type scan struct {
	dict       map[string]*termBuild
	sumT, sumD int64
	minT, minD uint16
}

// scanDocs tokenises list[lo:hi], setting their records and distinct title words.
func scanDocs(list []*Doc, lo, hi int, recs []rec, words [][]string) scan {
	sc := scan{dict: make(map[string]*termBuild, 1024), minT: 0xffff, minD: 0xffff}
	var tk tokenizer
	var wordBuf []string
	for ord := lo; ord < hi; ord++ {
		d := list[ord]
		tk.reset()
		tk.add(d.Title)
		nt := tk.n()
		tk.add(d.Description)
		key := uint32(ord) + 1
		first := len(wordBuf)
		for i := 0; i < tk.n(); i++ {
			b := tk.tok(i)
			tb := sc.dict[string(b)]
			if tb == nil {
				w := string(b)
				tb = &termBuild{word: w}
				sc.dict[w] = tb
			}
			if tb.last != key {
				tb.post = appendDoubling(tb.post, uint64(ord)<<16)
				tb.last = key
			}
			p := &tb.post[len(tb.post)-1]
			if i < nt {
				if postTfT(*p) == 0 {
					tb.nT++
					wordBuf = append(wordBuf, tb.word)
				}
				if postTfT(*p) < 0xff {
					*p += 1 << 8
				}
			} else {
				if postTfD(*p) == 0 {
					tb.nD++
				}
				if postTfD(*p) < 0xff {
					*p++
				}
			}
		}
		words[ord] = wordBuf[first:len(wordBuf):len(wordBuf)]
		a := analysis{tlen: min(nt, 0xffff), dlen: min(tk.n()-nt, 0xffff), titleKey: titleKey(&tk, nt)}
		recs[ord] = makeRec(d, &a)
		sc.sumT += int64(a.tlen)
		sc.sumD += int64(a.dlen)
		sc.minT = min(sc.minT, uint16(a.tlen))
		sc.minD = min(sc.minD, uint16(a.dlen))
	}
	return sc
}

// appendDoubling is append with the capacity doubled when full. append grows large slices by
// about a quarter, so a word's postings list (up to one entry per document) would be copied
// about four times its final size while it grows; doubling copies it about once, for at most
// twice its size held until Build encodes it.
func appendDoubling(s []uint64, v uint64) []uint64 {
	if len(s) == cap(s) {
		n := make([]uint64, len(s), max(8, 2*cap(s)))
		copy(n, s)
		s = n
	}
	return append(s, v)
}

// buildDocs sets the records, the ids and the category sets of Build.
func (ix *Index) buildDocs(list []*Doc, recs []rec) {
	ix.recs = vecOf(recs)
	ix.buildIDs(list)
}

// buildIDs sets the ids and the category sets of Build.
func (ix *Index) buildIDs(list []*Doc) {
	b := newIDsBuilder(len(list))
	for _, d := range list {
		b.add(d)
	}
	b.set(ix)
}

// idsBuilder gathers the ids and the category sets of documents given in ordinal order.
type idsBuilder struct {
	ids   []schema.ProductID // by ordinal
	csets map[schema.CategoryID][]uint32
}

func newIDsBuilder(n int) *idsBuilder {
	return &idsBuilder{ids: make([]schema.ProductID, 0, n), csets: make(map[schema.CategoryID][]uint32)}
}

// add adds the document of the next ordinal.
func (b *idsBuilder) add(d *Doc) {
	ord := uint32(len(b.ids))
	b.ids = append(b.ids, d.ID)
	for i, c := range d.CategoryIDs {
		if slices.Contains(d.CategoryIDs[:i], c) {
			continue
		}
		b.csets[c] = append(b.csets[c], ord)
	}
}

// set sets the ids and the category sets of ix.
func (b *idsBuilder) set(ix *Index) {
	// Inserted grouped by the low bits of their hashes, which pick the children of the first two
	// levels of the hash trie: consecutive inserts walk nodes still in cache, much faster than in
	// ordinal order for a large catalog. The map is the same.
	const groupBits = 10
	var starts [1<<groupBits + 1]int32
	for _, id := range b.ids {
		starts[idHasher{}.Hash(id)&(1<<groupBits-1)+1]++
	}
	for g := 1; g < len(starts); g++ {
		starts[g] += starts[g-1]
	}
	order := make([]uint32, len(b.ids))
	for ord, id := range b.ids {
		g := idHasher{}.Hash(id) & (1<<groupBits - 1)
		order[starts[g]] = uint32(ord)
		starts[g]++
	}
	ids := immutable.NewMapBuilder[schema.ProductID, uint32](idHasher{})
	for _, ord := range order {
		ids.Set(b.ids[ord], ord)
	}
	ix.ids = ids.Map()
	var scratch []byte
	cb := immutable.NewMapBuilder[schema.CategoryID, ordSet](catHasher{})
	for c, ords := range b.csets {
		var set ordSet
		set, scratch = plistOf[uint32, ordCodec](ords, scratch)
		cb.Set(c, set)
	}
	ix.cats = cb.Map()
}

// buildWords sets the words of Build, in order, and the fuzzy map of their deletion variants.
func (ix *Index) buildWords(dict map[string]*termBuild) {
	vocab := make([]*termBuild, 0, len(dict))
	for _, tb := range dict {
		vocab = append(vocab, tb)
	}
	slices.SortFunc(vocab, func(a, b *termBuild) int { return cmp.Compare(a.word, b.word) })
	terms := immutable.NewMapBuilder[string, term](strHasher{})
	sorted := immutable.NewSortedMapBuilder[string, struct{}](strComparer{})
	words := make([]string, len(vocab))
	var scratch []byte
	for i, tb := range vocab {
		var post postList
		post, scratch = plistOf[uint64, postCodec](tb.post, scratch)
		terms.Set(tb.word, term{post: post, nT: tb.nT, nD: tb.nD})
		sorted.Set(tb.word, struct{}{})
		words[i] = tb.word
	}
	ix.terms = terms.Map()
	ix.vocab = sorted.Map()
	ix.fuzz = ix.fuzzOf(words)
}

// fuzzOf makes the fuzzy map of the words of an index, in order: the hash of each deletion
// variant of each fuzzable word to the words that have it, in the words' order.
func (ix *Index) fuzzOf(words []string) *immutable.Map[uint64, []string] {
	type variant struct {
		h    uint64
		word int32
	}
	var vs []variant
	var buf []byte
	for i, w := range words {
		if ix.fuzzable(w) {
			buf = deletes(w, buf, func(v []byte) { vs = append(vs, variant{hashDelete(v), int32(i)}) })
		}
	}
	// Grouped by hash, each group (of one word, nearly always) in the words' order.
	slices.SortFunc(vs, func(a, b variant) int { return cmp.Compare(a.h, b.h) })
	// The lists share one array, each with no room after it: With copies a list to change it.
	all := make([]string, len(vs))
	for i, v := range vs {
		all[i] = words[v.word]
	}
	fuzz := immutable.NewMapBuilder[uint64, []string](u64Hasher{})
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j].h == vs[i].h {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(vs[i:j], func(a, b variant) int { return cmp.Compare(a.word, b.word) })
			for k := i; k < j; k++ {
				all[k] = words[vs[k].word]
			}
		}
		fuzz.Set(vs[i].h, all[i:j:j])
		i = j
	}
	return fuzz.Map()
}

// buildSuggestions sets the suggestion sets of Build: documents in rank order, each appended to
// the sets of its title words and prefixes, so that every set comes out sorted.
func (ix *Index) buildSuggestions(list []*Doc, recs []rec, words [][]string, nwords int) {
	order := make([]uint32, len(list))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(recs[a].srank, recs[b].srank), cmp.Compare(list[a].ID, list[b].ID))
	})
	wsets := make(map[string]*suggestBuild, nwords/2)
	psets := make(map[string]*suggestBuild, 4096)
	add := func(m map[string]*suggestBuild, key string, first bool, e sent) {
		sb := m[key]
		if sb == nil {
			sb = &suggestBuild{}
			m[key] = sb
		}
		if first {
			sb.first = append(sb.first, e)
		} else {
			sb.rest = append(sb.rest, e)
		}
	}
	var seen []string
	for _, ord := range order {
		ws := words[ord]
		if len(ws) == 0 {
			continue
		}
		r, id := &recs[ord], list[ord].ID
		for i, w := range ws {
			add(wsets, w, i == 0, makeSent(i == 0, r.srank, ord, id))
		}
		seen = prefixesOf(ws, seen, func(p string, first bool) {
			add(psets, p, first, makeSent(first, r.srank, ord, id))
		})
	}
	var scratch []byte
	wb := immutable.NewSortedMapBuilder[string, sentSet](strComparer{})
	for _, w := range sortedKeys(wsets) {
		sb := wsets[w]
		var set sentSet
		set, scratch = plistOf[sent, sentCodec](append(sb.first, sb.rest...), scratch)
		wb.Set(w, set)
	}
	ix.words = wb.Map()
	pb := immutable.NewMapBuilder[string, sentSet](strHasher{})
	for p, sb := range psets {
		var set sentSet
		set, scratch = plistOf[sent, sentCodec](append(sb.first, sb.rest...), scratch)
		pb.Set(p, set)
	}
	ix.prefixes = pb.Map()
}
