package search

import (
	"encoding/binary"
	"slices"

	"vitrine/schema"
)

// Block sizes of the compressed lists: a change decodes and re-encodes one block of at most
// blockMax entries (a few hundred bytes), whatever the length of the list. A block that falls
// below blockMin entries after a deletion is merged with a neighbour when they fit in one.
const (
	blockMax = 64
	blockMin = blockMax / 4
)

// codec encodes the entries of a block, in order, each relative to the one before it (the first
// to the zero E), and decodes them. The encoding needs no length: a block's bytes are its
// entries. decode appends up to max entries of data, prev being the entry before them, and
// returns the bytes it read; it stops at bytes it cannot decode. cmp orders the entries (entries
// comparing equal are the same entry). Implementations are empty structs.
type codec[E any] interface {
	encode(dst []byte, es []E) []byte
	decode(dst []E, data []byte, prev E, max int) ([]E, int)
	cmp(a, b E) int
}

// decodeAll decodes a whole block.
func decodeAll[E any, C codec[E]](dst []E, data []byte) []E {
	var c C
	var zero E
	dst, _ = c.decode(dst, data, zero, len(data))
	return dst
}

// block is a run of consecutive entries of a plist, encoded. It is never modified once made.
type block[E any] struct {
	first E      // the first entry, for routing
	data  []byte // the entries encoded by the list's codec
	n     int32  // entries
}

// plist is a persistent, compressed, ordered set of E: runs of up to blockMax consecutive
// entries encoded by C into byte blocks, in a persistent B+tree of blocks ordered by first entry;
// a list of one block holds it without a tree. put and del return a new list that shares every
// block but the changed one (and its path in the tree) with the old one. The zero plist is empty.
type plist[E any, C codec[E]] struct {
	one  *block[E] // the only block when tree is empty and n > 0
	tree btree[*block[E]]
	n    int
}

// The lists of the index: posting lists of words, suggestion sets and category sets.
type (
	postList = plist[uint64, postCodec]
	sentSet  = plist[sent, sentCodec]
	ordSet   = plist[uint32, ordCodec]
)

// cmpBlock orders the blocks of a list by their first entries.
func cmpBlock[E any, C codec[E]](a, b *block[E]) int {
	var c C
	return c.cmp(a.first, b.first)
}

// blockOf returns the block that holds (or would hold) e: the last one whose first entry is not
// above e, or the first block when e is below them all. The list must not be empty.
func (l plist[E, C]) blockOf(e E) *block[E] {
	if l.tree.root == nil {
		return l.one
	}
	n := l.tree.root
	probe := &block[E]{first: e}
	for !n.isLeaf() {
		n = n.kids[route(n, probe, cmpBlock[E, C])]
	}
	i, found := slices.BinarySearchFunc(n.items, probe, cmpBlock[E, C])
	if !found && i > 0 {
		i--
	}
	return n.items[i]
}

func makeBlock[E any, C codec[E]](es []E, scratch []byte) (*block[E], []byte) {
	var c C
	scratch = c.encode(scratch[:0], es)
	return &block[E]{first: es[0], data: slices.Clone(scratch), n: int32(len(es))}, scratch
}

// op is a change to a plist: put e (insert, or replace the entry equal to it) or delete it.
type op[E any] struct {
	e   E
	del bool
}

// pending gathers the changes of a batch to one list, applied at once by done.
type pending[E any, C codec[E]] struct {
	list plist[E, C]
	ops  []op[E]
}

func (p *pending[E, C]) put(e E) { p.ops = append(p.ops, op[E]{e: e}) }
func (p *pending[E, C]) del(e E) { p.ops = append(p.ops, op[E]{e: e, del: true}) }

// work is scratch space for applying changes, reused across the lists of a batch.
type work[E any] struct {
	es, merged []E
	buf        []byte
}

// done returns the list with the changes applied in order (the last change of an entry wins).
func (p *pending[E, C]) done(w *work[E]) plist[E, C] {
	if len(p.ops) == 0 {
		return p.list
	}
	var c C
	ops := p.ops
	if len(ops) == 1 {
		return p.list.apply(ops, w)
	}
	slices.SortStableFunc(ops, func(a, b op[E]) int { return c.cmp(a.e, b.e) })
	k := 0
	for i := range ops {
		if i+1 < len(ops) && c.cmp(ops[i].e, ops[i+1].e) == 0 {
			continue // a later change of the same entry wins
		}
		ops[k] = ops[i]
		k++
	}
	return p.list.apply(ops[:k], w)
}

// apply returns the list with ops applied: sorted by entry, at most one per entry. Each block
// that an op falls in is decoded once, merged with its ops and re-encoded as one or more blocks;
// a block left with fewer than blockMin entries is merged with the block
// before it when they fit in one. Deleting an absent entry does nothing.
func (l plist[E, C]) apply(ops []op[E], w *work[E]) plist[E, C] {
	if len(ops) == 0 {
		return l
	}
	var c C
	if l.n == 0 {
		es := w.es[:0]
		for _, o := range ops {
			if !o.del {
				es = append(es, o.e)
			}
		}
		var out plist[E, C]
		out, w.buf = plistOf[E, C](es, w.buf)
		w.es = es
		return out
	}
	t := l.tree
	if t.root == nil {
		t = bulk([]*block[E]{l.one})
	}
	n := l.n
	es, merged, scratch := w.es, w.merged, w.buf
	var bs []*block[E]
	for len(ops) > 0 {
		b := l.blockOf(ops[0].e)
		// The ops that fall in b: those below the next block's first entry.
		k := 1
		if len(ops) > 1 {
			k = len(ops)
			if _, next, _, hasNext := t.around(b, cmpBlock[E, C]); hasNext {
				k, _ = slices.BinarySearchFunc(ops, next.first, func(o op[E], f E) int { return c.cmp(o.e, f) })
			}
		}
		es = decodeAll[E, C](es[:0], b.data)
		merged = merged[:0]
		i := 0
		for _, o := range ops[:k] {
			for i < len(es) && c.cmp(es[i], o.e) < 0 {
				merged = append(merged, es[i])
				i++
			}
			found := i < len(es) && c.cmp(es[i], o.e) == 0
			if found {
				i++
				n--
			}
			if !o.del {
				merged = append(merged, o.e)
				n++
			}
		}
		// Entries put after the block's last one (ordinals are handed out in order) leave the
		// blocks before them full; other overflows are split evenly.
		appended := i == len(es) && !ops[k-1].del && (len(es) == 0 || c.cmp(ops[k-1].e, es[len(es)-1]) > 0)
		merged = append(merged, es[i:]...)
		ops = ops[k:]

		bs = bs[:0]
		parts := (len(merged) + blockMax - 1) / blockMax
		for p := 0; p < parts; p++ {
			lo, hi := p*len(merged)/parts, (p+1)*len(merged)/parts
			if appended {
				lo, hi = p*blockMax, min((p+1)*blockMax, len(merged))
			}
			var nb *block[E]
			nb, scratch = makeBlock[E, C](merged[lo:hi], scratch)
			bs = append(bs, nb)
		}
		if len(bs) == 0 || cmpBlock[E, C](bs[0], b) != 0 {
			t, _, _ = t.del(b, cmpBlock[E, C])
		}
		for _, nb := range bs {
			t, _, _ = t.put(nb, cmpBlock[E, C])
		}
		if len(bs) == 1 && len(merged) < blockMin {
			if prev, _, ok, _ := t.around(bs[0], cmpBlock[E, C]); ok && int(prev.n)+len(merged) <= blockMax {
				all := decodeAll[E, C](es[:0], prev.data)
				all = append(all, merged...)
				es = all
				t, _, _ = t.del(bs[0], cmpBlock[E, C])
				var nb *block[E]
				nb, scratch = makeBlock[E, C](all, scratch)
				t, _, _ = t.put(nb, cmpBlock[E, C])
			}
		}
	}
	w.es, w.merged, w.buf = es, merged, scratch
	switch {
	case n == 0:
		return plist[E, C]{}
	case t.n == 1:
		return plist[E, C]{one: t.root.items[0], n: n}
	}
	return plist[E, C]{tree: t, n: n}
}

// around returns the entries just before and just after e, which the tree holds.
func (t btree[E]) around(e E, cmp func(a, b E) int) (prev, next E, hasPrev, hasNext bool) {
	var left, right *bnode[E] // the nearest subtrees before and after the path to e
	n := t.root
	for n != nil && !n.isLeaf() {
		i := route(n, e, cmp)
		if i > 0 {
			left = n.kids[i-1]
		}
		if i+1 < len(n.kids) {
			right = n.kids[i+1]
		}
		n = n.kids[i]
	}
	if n == nil {
		return
	}
	j, _ := slices.BinarySearchFunc(n.items, e, cmp)
	if j > 0 {
		prev, hasPrev = n.items[j-1], true
	} else if left != nil {
		for !left.isLeaf() {
			left = left.kids[len(left.kids)-1]
		}
		prev, hasPrev = left.items[len(left.items)-1], true
	}
	if j+1 < len(n.items) {
		next, hasNext = n.items[j+1], true
	} else if right != nil {
		next, hasNext = right.first(), true
	}
	return
}

// plistOf makes a list of sorted, distinct entries, in full blocks. scratch is a buffer for
// encoding, returned for reuse; the blocks of the list share one allocation.
func plistOf[E any, C codec[E]](es []E, scratch []byte) (plist[E, C], []byte) {
	if len(es) == 0 {
		return plist[E, C]{}, scratch
	}
	var c C
	if len(es) <= blockMax {
		scratch = c.encode(scratch[:0], es)
		b := &block[E]{first: es[0], data: slices.Clone(scratch), n: int32(len(es))}
		return plist[E, C]{one: b, n: len(es)}, scratch
	}
	k := (len(es) + blockMax - 1) / blockMax
	var ends [64]int
	offs := ends[:0]
	scratch = scratch[:0]
	for i := 0; i < k; i++ {
		lo, hi := i*len(es)/k, (i+1)*len(es)/k
		scratch = c.encode(scratch, es[lo:hi])
		offs = append(offs, len(scratch))
	}
	arena := slices.Clone(scratch)
	bs := make([]block[E], k)
	ptrs := make([]*block[E], k)
	start := 0
	for i := range bs {
		lo, hi := i*len(es)/k, (i+1)*len(es)/k
		bs[i] = block[E]{first: es[lo], data: arena[start:offs[i]:offs[i]], n: int32(hi - lo)}
		ptrs[i] = &bs[i]
		start = offs[i]
	}
	return plist[E, C]{tree: bulk(ptrs), n: len(es)}, scratch
}

// each calls f with every entry in order until f returns false.
func (l plist[E, C]) each(f func(E) bool) {
	var it piter[E, C]
	it.reset(l)
	for {
		e, ok := it.next()
		if !ok || !f(e) {
			return
		}
	}
}

// piter iterates a plist of any codec in order (each; the checks of the lists use it). It
// decodes a few entries of the first block first, then whole blocks. Queries use the concrete
// iterators instead (postIter, sentIter, ordIter), whose decoding the compiler sees through.
// The zero piter is exhausted; reset starts it on a list.
type piter[E any, C codec[E]] struct {
	blocks biter[*block[E]]
	rest   []byte // what is left of the current block
	prev   E      // the last entry decoded from it
	buf    []E
	pos    int
	small  [8]E
}

// piterFirst is how many entries the first decoding of a list reads.
const piterFirst = 8

func (it *piter[E, C]) reset(l plist[E, C]) {
	it.blocks.reset(l.tree)
	if it.buf == nil {
		it.buf = it.small[:0]
	}
	it.buf, it.pos, it.rest = it.buf[:0], 0, nil
	if l.tree.root == nil && l.n > 0 {
		it.rest = l.one.data
	}
	it.fill(piterFirst)
}

// fill decodes up to max entries of the current block, or of the next one when it is done. It
// reports whether it decoded any.
func (it *piter[E, C]) fill(max int) bool {
	var c C
	var zero E
	for len(it.rest) == 0 {
		b, ok := it.blocks.next()
		if !ok {
			it.buf, it.pos = it.buf[:0], 0
			return false
		}
		it.rest, it.prev = b.data, zero
	}
	var k int
	it.buf, k = c.decode(it.buf[:0], it.rest, it.prev, max)
	it.rest, it.pos = it.rest[k:], 0
	if len(it.buf) == 0 {
		it.rest = nil // corrupt: cannot happen for a block this package encoded
		return false
	}
	it.prev = it.buf[len(it.buf)-1]
	return true
}

// next returns the next entry.
func (it *piter[E, C]) next() (E, bool) {
	if it.pos < len(it.buf) {
		e := it.buf[it.pos]
		it.pos++
		return e, true
	}
	if !it.fill(blockMax) {
		var zero E
		return zero, false
	}
	it.pos = 1
	return it.buf[0], true
}

// postCodec encodes postings (ordinal<<16 | title tf<<8 | description tf) as one varint each:
// the ordinal's distance from the previous one (the first: the ordinal) shifted left by 2, or'ed
// with 1 for frequencies (1, 0), 2 for (0, 1), 3 for (1, 1); 0 says that two bytes follow, the
// title and description frequencies. A posting of a frequent word takes one byte.
type postCodec struct{}

func (postCodec) cmp(a, b uint64) int { return cmpPost(a, b) }

func (postCodec) encode(dst []byte, es []uint64) []byte {
	prev := uint32(0)
	for _, p := range es {
		ord := postOrd(p)
		d := uint64(ord - prev)
		prev = ord
		var code uint64
		switch p & 0xffff {
		case 1 << 8:
			code = 1
		case 1:
			code = 2
		case 1<<8 | 1:
			code = 3
		}
		dst = binary.AppendUvarint(dst, d<<2|code)
		if code == 0 {
			dst = append(dst, byte(p>>8), byte(p))
		}
	}
	return dst
}

func (postCodec) decode(dst []uint64, data []byte, prev uint64, max int) ([]uint64, int) {
	ord := uint64(postOrd(prev))
	i := 0
	for n := 0; n < max && i < len(data); n++ {
		// The one-byte case first, inline.
		v, k := uint64(data[i]), 1
		if v >= 0x80 {
			if v, k = binary.Uvarint(data[i:]); k <= 0 {
				return dst, i // corrupt: cannot happen for a block this package encoded
			}
		}
		i += k
		ord += v >> 2
		var tf uint64
		switch v & 3 {
		case 0:
			if i+2 > len(data) {
				return dst, i - k
			}
			tf = uint64(data[i])<<8 | uint64(data[i+1])
			i += 2
		case 1:
			tf = 1 << 8
		case 2:
			tf = 1
		case 3:
			tf = 1<<8 | 1
		}
		dst = append(dst, uint64(uint32(ord))<<16|tf)
	}
	return dst, i
}

// postIter walks a posting list in order, a block at a time: it decodes each block whole into
// a buffer of its own (no allocation; a query keeps one per expansion), then hands out its
// postings. The zero postIter is exhausted; reset starts it on a list.
type postIter struct {
	blocks biter[*block[uint64]]
	one    []byte // the block of a list without a tree, until decoded
	pos, n int    // buf[pos:n] are the postings not yet handed out
	buf    [blockMax]uint64
}

func (it *postIter) reset(l postList) {
	it.blocks.reset(l.tree)
	it.one, it.pos, it.n = nil, 0, 0
	if l.tree.root == nil && l.n > 0 {
		it.one = l.one.data
	}
}

// next returns the next posting.
func (it *postIter) next() (uint64, bool) {
	if it.pos < it.n {
		it.pos++
		return it.buf[(it.pos-1)&(blockMax-1)], true
	}
	return it.refill()
}

// refill decodes the next block and returns its first posting.
func (it *postIter) refill() (uint64, bool) {
	for {
		data := it.one
		if data != nil {
			it.one = nil
		} else {
			b, ok := it.blocks.next()
			if !ok {
				return 0, false
			}
			data = b.data
		}
		// A block holds at most blockMax postings; a corrupt one (which this package never
		// encodes) ends where it cannot be decoded.
		got, _ := postCodec{}.decode(it.buf[:0], data, 0, blockMax)
		if len(got) > 0 {
			it.pos, it.n = 1, len(got)
			return it.buf[0], true
		}
	}
}

// sentCodec encodes suggestion entries, ordered by rank (without the ordinal) then id. An entry
// with the rank of the one before it is varint(id distance<<1) then varint(ordinal); another is
// varint(rank>>32<<1 | 1), varint(id), varint(ordinal).
type sentCodec struct{}

func (sentCodec) cmp(a, b sent) int { return cmpSent(a, b) }

func (sentCodec) encode(dst []byte, es []sent) []byte {
	var prev sent
	for i, e := range es {
		d := uint64(e.id) - uint64(prev.id)
		if i > 0 && e.rank>>32 == prev.rank>>32 && d < 1<<62 {
			dst = binary.AppendUvarint(dst, d<<1)
		} else {
			dst = binary.AppendUvarint(dst, e.rank>>32<<1|1)
			dst = binary.AppendUvarint(dst, uint64(e.id))
		}
		dst = binary.AppendUvarint(dst, uint64(uint32(e.rank)))
		prev = e
	}
	return dst
}

func (sentCodec) decode(dst []sent, data []byte, prev sent, max int) ([]sent, int) {
	i := 0
	for n := 0; n < max && i < len(data); n++ {
		e, k := decodeSent(data[i:], prev)
		if k == 0 {
			return dst, i
		}
		i += k
		dst = append(dst, e)
		prev = e
	}
	return dst, i
}

// decodeSent decodes the suggestion entry at the start of data, prev being the one before it
// (the zero sent for the first of a block). It returns the entry and its length in bytes, 0 when
// data does not start with a whole entry.
func decodeSent(data []byte, prev sent) (sent, int) {
	// The first varint inline: within a rank it is one byte, an id distance.
	v, i := uint64(0), 1
	if len(data) > 0 && data[0] < 0x80 {
		v = uint64(data[0])
	} else if v, i = binary.Uvarint(data); i <= 0 {
		return sent{}, 0
	}
	e := prev
	if v&1 == 0 {
		e.id = prev.id + schema.ProductID(v>>1)
	} else {
		id, k := binary.Uvarint(data[i:])
		if k <= 0 {
			return sent{}, 0
		}
		i += k
		e.rank, e.id = v>>1<<32, schema.ProductID(id)
	}
	ord, k := binary.Uvarint(data[i:])
	if k <= 0 {
		return sent{}, 0
	}
	i += k
	e.rank = e.rank>>32<<32 | uint64(uint32(ord))
	return e, i
}

// sentIter walks a suggestion set in rank order, decoding each entry in place from its block:
// a suggestion reads its first few entries and decodes nothing more. The zero sentIter is
// exhausted; reset starts it on a set.
type sentIter struct {
	blocks biter[*block[sent]]
	data   []byte // the current block
	i      int    // the offset of the next entry in data
	prev   sent   // the last entry decoded from data
}

func (it *sentIter) reset(l sentSet) {
	it.blocks.reset(l.tree)
	it.data, it.i, it.prev = nil, 0, sent{}
	if l.tree.root == nil && l.n > 0 {
		it.data = l.one.data
	}
}

// next returns the next entry.
func (it *sentIter) next() (sent, bool) {
	for it.i >= len(it.data) {
		b, ok := it.blocks.next()
		if !ok {
			return sent{}, false
		}
		it.data, it.i, it.prev = b.data, 0, sent{}
	}
	e, k := decodeSent(it.data[it.i:], it.prev)
	if k == 0 { // corrupt: cannot happen for a block this package encoded
		it.data, it.i = nil, 0
		it.blocks.stop()
		return sent{}, false
	}
	it.i += k
	it.prev = e
	return e, true
}

// ordIter walks a category set in order, a block at a time decoded into a buffer of its own
// (no allocation). The zero ordIter is exhausted; reset starts it on a set.
type ordIter struct {
	blocks biter[*block[uint32]]
	one    []byte // the block of a set without a tree, until decoded
	pos, n int    // buf[pos:n] are the ordinals not yet handed out
	buf    [blockMax]uint32
}

func (it *ordIter) reset(l ordSet) {
	it.blocks.reset(l.tree)
	it.one, it.pos, it.n = nil, 0, 0
	if l.tree.root == nil && l.n > 0 {
		it.one = l.one.data
	}
}

// next returns the next ordinal.
func (it *ordIter) next() (uint32, bool) {
	if it.pos < it.n {
		it.pos++
		return it.buf[(it.pos-1)&(blockMax-1)], true
	}
	for {
		data := it.one
		if data != nil {
			it.one = nil
		} else {
			b, ok := it.blocks.next()
			if !ok {
				return 0, false
			}
			data = b.data
		}
		// A corrupt block (which this package never encodes) ends where it cannot be decoded.
		if got, _ := (ordCodec{}).decode(it.buf[:0], data, 0, blockMax); len(got) > 0 {
			it.pos, it.n = 1, len(got)
			return it.buf[0], true
		}
	}
}

// ordCodec encodes ordinals as varints of their distance from the previous one.
type ordCodec struct{}

func (ordCodec) cmp(a, b uint32) int { return cmpOrd(a, b) }

func (ordCodec) encode(dst []byte, es []uint32) []byte {
	prev := uint32(0)
	for _, o := range es {
		dst = binary.AppendUvarint(dst, uint64(o-prev))
		prev = o
	}
	return dst
}

func (ordCodec) decode(dst []uint32, data []byte, prev uint32, max int) ([]uint32, int) {
	o := prev
	i := 0
	for n := 0; n < max && i < len(data); n++ {
		// One- and two-byte varints first, inline (the distances of a set of a few hundred
		// among thousands of documents).
		var v uint64
		k := 1
		if b := data[i]; b < 0x80 {
			v = uint64(b)
		} else if i+1 < len(data) && data[i+1] < 0x80 {
			v, k = uint64(b&0x7f)|uint64(data[i+1])<<7, 2
		} else if v, k = binary.Uvarint(data[i:]); k <= 0 {
			return dst, i
		}
		i += k
		o += uint32(v)
		dst = append(dst, o)
	}
	return dst, i
}
