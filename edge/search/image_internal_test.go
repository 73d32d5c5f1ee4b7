package search

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"
)

// diffIndex compares two indexes field by field and returns the first difference, "" for none:
// the counters, the free list, every record (a stored document's strings and category slice must
// be the very same memory, not equal copies), and every persistent map, iterated, with each
// compressed list compared block by block (first entry, count, bytes), decoded entry by entry and
// in the shape of its B+tree.
func diffIndex(a, b *Index) string {
	switch {
	case a.fuzzyMin != b.fuzzyMin:
		return fmt.Sprintf("fuzzyMin %d, %d", a.fuzzyMin, b.fuzzyMin)
	case a.n != b.n || a.nextOrd != b.nextOrd:
		return fmt.Sprintf("n %d, %d; nextOrd %d, %d", a.n, b.n, a.nextOrd, b.nextOrd)
	case a.sumT != b.sumT || a.sumD != b.sumD || a.minT != b.minT || a.minD != b.minD:
		return fmt.Sprintf("sums %d %d, %d %d; mins %d %d, %d %d", a.sumT, a.sumD, b.sumT, b.sumD, a.minT, a.minD, b.minT, b.minD)
	case a.built != b.built:
		return fmt.Sprintf("built %v, %v", a.built, b.built)
	}
	fa, fb := a.free, b.free
	for ; fa != nil && fb != nil; fa, fb = fa.next, fb.next {
		if fa.ord != fb.ord {
			return fmt.Sprintf("free list: %d, %d", fa.ord, fb.ord)
		}
	}
	if fa != nil || fb != nil {
		return "free lists of different lengths"
	}
	if d := diffRecs(a.recs, b.recs); d != "" {
		return d
	}
	if a.ids.Len() != b.ids.Len() {
		return fmt.Sprintf("ids: %d, %d", a.ids.Len(), b.ids.Len())
	}
	for it := a.ids.Iterator(); !it.Done(); {
		id, ord, _ := it.Next()
		if o, ok := b.ids.Get(id); !ok || o != ord {
			return fmt.Sprintf("ids[%d]: %d, %d (%v)", id, ord, o, ok)
		}
	}
	if a.terms.Len() != b.terms.Len() {
		return fmt.Sprintf("terms: %d, %d", a.terms.Len(), b.terms.Len())
	}
	for it := a.terms.Iterator(); !it.Done(); {
		w, ta, _ := it.Next()
		tb, ok := b.terms.Get(w)
		if !ok || ta.nT != tb.nT || ta.nD != tb.nD {
			return fmt.Sprintf("term %q: nT %d %d, nD %d %d (%v)", w, ta.nT, tb.nT, ta.nD, tb.nD, ok)
		}
		if d := diffList(ta.post, tb.post); d != "" {
			return fmt.Sprintf("postings of %q: %s", w, d)
		}
	}
	if a.vocab.Len() != b.vocab.Len() {
		return fmt.Sprintf("vocab: %d, %d", a.vocab.Len(), b.vocab.Len())
	}
	for ia, ib := a.vocab.Iterator(), b.vocab.Iterator(); !ia.Done(); {
		wa, _, _ := ia.Next()
		wb, _, _ := ib.Next()
		if wa != wb {
			return fmt.Sprintf("vocab: %q, %q", wa, wb)
		}
	}
	if a.fuzz.Len() != b.fuzz.Len() {
		return fmt.Sprintf("fuzz: %d, %d", a.fuzz.Len(), b.fuzz.Len())
	}
	for it := a.fuzz.Iterator(); !it.Done(); {
		h, la, _ := it.Next()
		if lb, ok := b.fuzz.Get(h); !ok || !slices.Equal(la, lb) {
			return fmt.Sprintf("fuzz[%x]: %q, %q", h, la, lb)
		}
	}
	if a.words.Len() != b.words.Len() {
		return fmt.Sprintf("words: %d, %d", a.words.Len(), b.words.Len())
	}
	for ia, ib := a.words.Iterator(), b.words.Iterator(); !ia.Done(); {
		wa, sa, _ := ia.Next()
		wb, sb, _ := ib.Next()
		if wa != wb {
			return fmt.Sprintf("words: %q, %q", wa, wb)
		}
		if d := diffList(sa, sb); d != "" {
			return fmt.Sprintf("suggestions of word %q: %s", wa, d)
		}
	}
	if a.prefixes.Len() != b.prefixes.Len() {
		return fmt.Sprintf("prefixes: %d, %d", a.prefixes.Len(), b.prefixes.Len())
	}
	for it := a.prefixes.Iterator(); !it.Done(); {
		p, sa, _ := it.Next()
		sb, ok := b.prefixes.Get(p)
		if !ok {
			return fmt.Sprintf("prefix %q missing", p)
		}
		if d := diffList(sa, sb); d != "" {
			return fmt.Sprintf("suggestions of prefix %q: %s", p, d)
		}
	}
	if a.cats.Len() != b.cats.Len() {
		return fmt.Sprintf("cats: %d, %d", a.cats.Len(), b.cats.Len())
	}
	for it := a.cats.Iterator(); !it.Done(); {
		c, sa, _ := it.Next()
		sb, ok := b.cats.Get(c)
		if !ok {
			return fmt.Sprintf("category %d missing", c)
		}
		if d := diffList(sa, sb); d != "" {
			return fmt.Sprintf("category %d: %s", c, d)
		}
	}
	return ""
}

// diffRecs compares two record vectors: shape, then every slot.
func diffRecs(a, b pvec[rec]) string {
	if a.len != b.len || a.shift != b.shift || (a.root == nil) != (b.root == nil) {
		return fmt.Sprintf("recs: len %d, %d; shift %d, %d", a.len, b.len, a.shift, b.shift)
	}
	if a.root != nil {
		if d := diffVNode(a.root, b.root, a.shift); d != "" {
			return "recs: " + d
		}
	}
	for i := range a.len {
		if d := diffRec(a.get(i), b.get(i)); d != "" {
			return fmt.Sprintf("rec %d: %s", i, d)
		}
	}
	return ""
}

func diffVNode(a, b *vnode[rec], shift uint) string {
	if (a == nil) != (b == nil) {
		return "a node and none"
	}
	if a == nil {
		return ""
	}
	if len(a.kids) != len(b.kids) || len(a.vals) != len(b.vals) {
		return fmt.Sprintf("node of %d kids and %d values, %d and %d", len(a.kids), len(a.vals), len(b.kids), len(b.vals))
	}
	for i := range a.kids {
		if d := diffVNode(a.kids[i], b.kids[i], shift-vecBits); d != "" {
			return d
		}
	}
	return ""
}

func diffRec(a, b *rec) string {
	if (a == nil) != (b == nil) {
		return "a record and none"
	}
	if a == nil {
		return ""
	}
	x, y := *a, *b
	x.txt, y.txt = nil, nil
	if x != y {
		return fmt.Sprintf("%+v, %+v", x, y)
	}
	if (a.txt == nil) != (b.txt == nil) {
		return "stored text and none"
	}
	if a.txt == nil {
		return ""
	}
	s, t := a.txt, b.txt
	same := func(u, v string) bool { return len(u) == len(v) && unsafe.StringData(u) == unsafe.StringData(v) }
	switch {
	case !same(s.slug, t.slug) || !same(s.title, t.title) || !same(s.description, t.description):
		return fmt.Sprintf("strings %q %q, %q %q: not the same memory", s.slug, s.title, t.slug, t.title)
	case len(s.cats) != len(t.cats) || cap(s.cats) != cap(t.cats) || unsafe.SliceData(s.cats) != unsafe.SliceData(t.cats):
		return fmt.Sprintf("categories %v, %v: not the same slice", s.cats, t.cats)
	case (s.other == nil) != (t.other == nil) || s.other != nil && *s.other != *t.other:
		return "other availability differs"
	}
	return ""
}

// diffList compares two compressed lists: their entries decoded, then block by block and the
// shape of their trees.
func diffList[E comparable, C codec[E]](a, b plist[E, C]) string {
	var ea, eb []E
	a.each(func(e E) bool { ea = append(ea, e); return true })
	b.each(func(e E) bool { eb = append(eb, e); return true })
	if a.n != b.n || !slices.Equal(ea, eb) || len(ea) != a.n {
		return fmt.Sprintf("%d entries (n %d), %d (n %d)", len(ea), a.n, len(eb), b.n)
	}
	if (a.one == nil) != (b.one == nil) || (a.tree.root == nil) != (b.tree.root == nil) || a.tree.n != b.tree.n {
		return fmt.Sprintf("one block %v, %v; tree of %d, %d", a.one != nil, b.one != nil, a.tree.n, b.tree.n)
	}
	if a.one != nil {
		if d := diffBlock(a.one, b.one); d != "" {
			return d
		}
	}
	return diffBNode(a.tree.root, b.tree.root)
}

func diffBlock[E comparable](a, b *block[E]) string {
	if a.first != b.first || a.n != b.n || !bytes.Equal(a.data, b.data) {
		return fmt.Sprintf("block %v of %d, %d bytes; %v of %d, %d bytes", a.first, a.n, len(a.data), b.first, b.n, len(b.data))
	}
	return ""
}

func diffBNode[E comparable](a, b *bnode[*block[E]]) string {
	if (a == nil) != (b == nil) {
		return "a tree node and none"
	}
	if a == nil {
		return ""
	}
	if len(a.items) != len(b.items) || len(a.kids) != len(b.kids) || len(a.mins) != len(b.mins) {
		return fmt.Sprintf("tree node of %d items %d kids, %d items %d kids", len(a.items), len(a.kids), len(b.items), len(b.kids))
	}
	for i := range a.items {
		if d := diffBlock(a.items[i], b.items[i]); d != "" {
			return d
		}
	}
	for i := range a.kids {
		if d := diffBlock(a.mins[i], b.mins[i]); d != "" {
			return "mins: " + d
		}
		if d := diffBNode(a.kids[i], b.kids[i]); d != "" {
			return d
		}
	}
	return ""
}
