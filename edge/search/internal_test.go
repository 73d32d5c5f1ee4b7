package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

// TestBTreeModel applies random puts and deletes to a persistent B+tree and to a sorted slice,
// checking after each step that the tree holds exactly the slice and that every older version
// still holds what it held.
func TestBTreeModel(t *testing.T) {
	type version struct {
		tree btree[uint64]
		want []uint64
	}
	for _, keys := range []int{10, 300, 5000} {
		r := rand.New(rand.NewPCG(1, uint64(keys)))
		var tr btree[uint64]
		var want []uint64
		var versions []version
		for step := 0; step < 4000; step++ {
			k := uint64(r.IntN(keys))
			v := k<<16 | uint64(r.IntN(1<<16))
			i, found := slices.BinarySearchFunc(want, v, cmpPost)
			if r.IntN(3) == 0 {
				var old uint64
				var ok bool
				tr, old, ok = tr.del(v, cmpPost)
				if ok != found || found && old != want[i] {
					t.Fatalf("keys %d step %d: del(%d) = %d, %v; want found %v", keys, step, k, old, ok, found)
				}
				if found {
					want = slices.Delete(want, i, i+1)
				}
			} else {
				var ok bool
				tr, _, ok = tr.put(v, cmpPost)
				if ok != found {
					t.Fatalf("keys %d step %d: put(%d) replaced %v, want %v", keys, step, k, ok, found)
				}
				if found {
					want[i] = v
				} else {
					want = slices.Insert(want, i, v)
				}
			}
			if step%97 == 0 {
				versions = append(versions, version{tr, slices.Clone(want)})
			}
		}
		versions = append(versions, version{tr, want})
		// A tree bulk-loaded from the same items is the same set.
		versions = append(versions, version{bulk(want), want})
		for vi, v := range versions {
			var got []uint64
			v.tree.each(func(e uint64) bool { got = append(got, e); return true })
			if !slices.Equal(got, v.want) || v.tree.n != len(v.want) {
				t.Fatalf("keys %d version %d: tree has %d items (n %d), want %d", keys, vi, len(got), v.tree.n, len(v.want))
			}
			for _, e := range v.want[:min(len(v.want), 50)] {
				if g, ok := v.tree.get(e&^0xffff, cmpPost); !ok || g != e {
					t.Fatalf("keys %d version %d: get(%d) = %d, %v", keys, vi, e>>16, g, ok)
				}
			}
			checkShape(t, v.tree.root, true)
		}
	}
}

// checkShape verifies the mins of inner nodes and that no non-root node is empty.
func checkShape(t *testing.T, n *bnode[uint64], root bool) {
	t.Helper()
	if n == nil {
		return
	}
	if n.isLeaf() {
		if len(n.items) == 0 || len(n.items) > leafMax {
			t.Fatalf("leaf of %d items", len(n.items))
		}
		return
	}
	if len(n.kids) == 0 || len(n.kids) > innerMax || !root && len(n.kids) < 1 {
		t.Fatalf("inner node of %d kids", len(n.kids))
	}
	for i, k := range n.kids {
		if n.mins[i] != k.first() {
			t.Fatalf("mins[%d] = %d, first = %d", i, n.mins[i], k.first())
		}
		checkShape(t, k, false)
	}
}

func TestPVec(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var v pvec[int]
	var want []int
	old := []struct {
		v    pvec[int]
		want []int
	}{}
	for step := 0; step < 20000; step++ {
		if len(want) == 0 || r.IntN(3) == 0 {
			v = v.set(len(want), step)
			want = append(want, step)
		} else {
			i := r.IntN(len(want))
			v = v.set(i, -step)
			want[i] = -step
		}
		if step%1000 == 0 {
			old = append(old, struct {
				v    pvec[int]
				want []int
			}{v, slices.Clone(want)})
		}
	}
	old = append(old, struct {
		v    pvec[int]
		want []int
	}{vecOf(want), want})
	for oi, o := range old {
		var got []int
		o.v.each(func(i int, x *int) bool {
			if i != len(got) {
				t.Fatalf("version %d: index %d after %d values", oi, i, len(got))
			}
			got = append(got, *x)
			return true
		})
		if !slices.Equal(got, o.want) {
			t.Fatalf("version %d: %d values, want %d", oi, len(got), len(o.want))
		}
		for i, w := range o.want {
			if g := o.v.get(i); g == nil || *g != w {
				t.Fatalf("version %d: get(%d) wrong", oi, i)
			}
		}
		if o.v.get(len(o.want)) != nil || o.v.get(-1) != nil {
			t.Fatalf("version %d: get out of range returned a value", oi)
		}
	}
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"Hello, World!", "hello world"},
		{"Café Crème brûlée", "cafe creme brulee"},
		{"Cafe\u0301", "cafe"},
		{"Straße Øresund Æther ŁÓDŹ", "strasse oresund aether lodz"},
		{"ﬁne ＡＢＣ", "fine abc"},
		{"iPhone-15 pro_max", "iphone 15 pro max"},
		{"  ", ""},
		{"日本語 テキスト", "日本語 テキスト"},
		{"Ünïcödé123abc", "unicode123abc"},
		{"a\u0301\u0301b", "ab"},
		{"\u0301x", "x"},
		{strings.Repeat("x", 100), strings.Repeat("x", maxTokenLen)},
		{strings.Repeat("é", 100), strings.Repeat("e", maxTokenLen)},
	} {
		if got := strings.Join(normalize(c.in), " "); got != c.want {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var tk tokenizer
	for _, c := range []struct {
		in       string
		trailing bool
	}{{"lamp", true}, {"lamp ", false}, {"red la", true}, {"la.", false}, {"", false}, {"é", true}} {
		tk.reset()
		tk.add(c.in)
		if tk.trailing != c.trailing {
			t.Errorf("%q: trailing = %v, want %v", c.in, tk.trailing, c.trailing)
		}
	}
}

func TestWithinOne(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"lamp", "lamb", true},  // substitution
		{"lamp", "lapm", true},  // transposition
		{"lamp", "laamp", true}, // insertion
		{"lamp", "lam", true},   // deletion
		{"lamp", "lamp", false}, // equal
		{"lamp", "palm", false},
		{"lamp", "lampss", false},
		{"abcd", "badc", false}, // two transpositions
		{"café", "cafe", true},
		{"日本語", "日本", true},
		{"日本語", "本日語", true},
		{"", "a", true},
	} {
		if got := withinOne(c.a, c.b); got != c.want {
			t.Errorf("withinOne(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := withinOne(c.b, c.a); got != c.want {
			t.Errorf("withinOne(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func TestDeletes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"lamp", []string{"amp", "lmp", "lap", "lam"}},
		{"book", []string{"ook", "bok", "boo"}},
		{"日本", []string{"本", "日"}},
	} {
		var got []string
		deletes(c.in, nil, func(v []byte) { got = append(got, string(v)) })
		if !slices.Equal(got, c.want) {
			t.Errorf("deletes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSuggestSetsSorted checks that Build's suggestion sets come out in rank order.
func TestSuggestSetsSorted(t *testing.T) {
	var docs []*Doc
	for i := range 500 {
		docs = append(docs, &Doc{ID: schema.ProductID(1000 - i), Title: strings.Repeat("lamp ", 1+i%3) + "x" + strings.Repeat("y", i%7), Featured: i%5 == 0})
	}
	ix := Build(docs)
	check := func(name string, set sentSet) {
		var prev *sent
		set.each(func(e sent) bool {
			if prev != nil && cmpSent(*prev, e) >= 0 {
				t.Fatalf("set %s out of order", name)
			}
			prev = &e
			return true
		})
	}
	for _, k := range []string{"l", "la", "lam", "x", "xy", "xyy"} {
		s, _ := ix.prefixes.Get(k)
		check(k, s)
	}
	it := ix.words.Iterator()
	for !it.Done() {
		w, s, _ := it.Next()
		check(w, s)
	}
}

// plistModel applies random batches of puts and deletes to a compressed list (through pending,
// as a txn does) and to a sorted slice, checking after each batch that the list holds exactly the
// slice and is well formed, and at the end that every kept older version still holds what it held.
func plistModel[E comparable, C codec[E]](t *testing.T, name string, seed uint64, gen func(r *rand.Rand) E) {
	t.Helper()
	var c C
	r := rand.New(rand.NewPCG(seed, 77))
	type version struct {
		l    plist[E, C]
		want []E
	}
	var l plist[E, C]
	var want []E
	var versions []version
	var w work[E]
	for step := 0; step < 600; step++ {
		p := pending[E, C]{list: l}
		var ops int
		switch r.IntN(4) {
		case 0:
			ops = 1
		case 1:
			ops = 1 + r.IntN(10)
		default:
			ops = r.IntN(300)
		}
		for range ops {
			var e E
			if len(want) > 0 && r.IntN(3) == 0 {
				e = want[r.IntN(len(want))] // an entry the list has: delete it or put it again
			} else {
				e = gen(r)
			}
			i, found := slices.BinarySearchFunc(want, e, c.cmp)
			if r.IntN(5) < 2+step%3 {
				p.del(e)
				if found {
					want = slices.Delete(want, i, i+1)
				}
			} else {
				p.put(e)
				if found {
					want[i] = e
				} else {
					want = slices.Insert(want, i, e)
				}
			}
		}
		l = p.done(&w)
		checkPList(t, fmt.Sprintf("%s step %d", name, step), l, want)
		if step%37 == 0 {
			versions = append(versions, version{l, slices.Clone(want)})
		}
	}
	built, _ := plistOf[E, C](want, nil)
	versions = append(versions, version{l, want}, version{built, want})
	for i, v := range versions {
		checkPList(t, fmt.Sprintf("%s version %d", name, i), v.l, v.want)
	}
}

func checkPList[E comparable, C codec[E]](t *testing.T, name string, l plist[E, C], want []E) {
	t.Helper()
	var c C
	if l.n != len(want) {
		t.Fatalf("%s: n = %d, want %d", name, l.n, len(want))
	}
	var blocks []*block[E]
	if l.tree.root == nil {
		if l.one != nil {
			blocks = append(blocks, l.one)
		}
	} else {
		if l.one != nil {
			t.Fatalf("%s: a tree and a single block", name)
		}
		l.tree.each(func(b *block[E]) bool { blocks = append(blocks, b); return true })
		if len(blocks) < 2 || l.tree.n != len(blocks) {
			t.Fatalf("%s: tree of %d blocks (n %d)", name, len(blocks), l.tree.n)
		}
	}
	var all []E
	for i, b := range blocks {
		es := decodeAll[E, C](nil, b.data)
		if len(es) == 0 || len(es) > blockMax || int(b.n) != len(es) || es[0] != b.first {
			t.Fatalf("%s: block %d has %d entries (n %d, max %d), first ok %v", name, i, len(es), b.n, blockMax, len(es) > 0 && es[0] == b.first)
		}
		all = append(all, es...)
	}
	if !slices.Equal(all, want) {
		t.Fatalf("%s: list has %d entries, want %d", name, len(all), len(want))
	}
	var got []E
	l.each(func(e E) bool { got = append(got, e); return true })
	if !slices.Equal(got, want) {
		t.Fatalf("%s: each yields %d entries, want %d", name, len(got), len(want))
	}
	for i := 1; i < len(want); i++ {
		if c.cmp(want[i-1], want[i]) >= 0 {
			t.Fatalf("%s: model out of order", name)
		}
	}
}

func TestPListModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		plistModel[uint64, postCodec](t, "postings", seed, func(r *rand.Rand) uint64 {
			ord := uint32(r.IntN(3000))
			if r.IntN(50) == 0 {
				ord = r.Uint32()
			}
			tfT, tfD := r.IntN(2), r.IntN(3)
			if r.IntN(10) == 0 {
				tfT, tfD = r.IntN(256), r.IntN(256)
			}
			if tfT == 0 && tfD == 0 {
				tfD = 1
			}
			return posting(ord, tfT, tfD)
		})
		plistModel[sent, sentCodec](t, "suggestions", seed, func(r *rand.Rand) sent {
			id := schema.ProductID(r.IntN(2000))
			switch r.IntN(30) {
			case 0:
				id = schema.ProductID(r.Uint64()) // far apart, negative too
			case 1:
				id = -id
			}
			return makeSent(r.IntN(2) == 0, uint16(r.IntN(1<<11)), r.Uint32(), id)
		})
		plistModel[uint32, ordCodec](t, "ordinals", seed, func(r *rand.Rand) uint32 {
			if r.IntN(40) == 0 {
				return r.Uint32()
			}
			return uint32(r.IntN(5000))
		})
	}
}

// FuzzDecode: the block decoders never panic on arbitrary bytes, and what they decode from bytes
// their encoder wrote is what was encoded.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x05, 0x80, 0x01, 0x00, 0x03, 0x04})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		posts := decodeAll[uint64, postCodec](nil, data)
		sents := decodeAll[sent, sentCodec](nil, data)
		ords := decodeAll[uint32, ordCodec](nil, data)
		// Decoding in pieces, each from the entry before it, decodes the same.
		var piece []uint64
		for rest, prev := data, uint64(0); len(rest) > 0; {
			got, k := postCodec{}.decode(nil, rest, prev, 3)
			if k == 0 {
				break
			}
			piece = append(piece, got...)
			rest, prev = rest[k:], got[len(got)-1]
		}
		if !slices.Equal(piece, posts) {
			t.Fatalf("postings in pieces: %v, want %v", piece, posts)
		}
		if len(posts) > len(data) || len(sents) > len(data) || len(ords) > len(data) {
			t.Fatalf("more entries than bytes")
		}
		if slices.IsSortedFunc(posts, cmpPost) && len(slices.CompactFunc(slices.Clone(posts), func(a, b uint64) bool { return cmpPost(a, b) == 0 })) == len(posts) {
			if got := decodeAll[uint64, postCodec](nil, postCodec{}.encode(nil, posts)); !slices.Equal(got, posts) {
				t.Fatalf("postings round trip: %v, want %v", got, posts)
			}
		}
		if slices.IsSortedFunc(ords, cmpOrd) && len(slices.Compact(slices.Clone(ords))) == len(ords) {
			if got := decodeAll[uint32, ordCodec](nil, ordCodec{}.encode(nil, ords)); !slices.Equal(got, ords) {
				t.Fatalf("ordinals round trip: %v, want %v", got, ords)
			}
		}
	})
}

// TestRetitleKeepsUntouchedSets checks that a retitle rewrites only the suggestion sets whose
// entry for the document changed: a title keeping a word and its length (its suggestion rank)
// leaves that word's set and its prefixes' sets the very same values, and the sets that did
// change hold what a fresh Build gives.
func TestRetitleKeepsUntouchedSets(t *testing.T) {
	var docs []*Doc
	for i := 1; i <= 300; i++ {
		docs = append(docs, &Doc{ID: schema.ProductID(i), Title: fmt.Sprintf("Bench Lamp %04d", i)})
	}
	before := Build(docs)
	tests := []struct {
		name      string
		title     string
		featured  bool
		kept      []string // words and prefixes whose sets must be untouched
		rewritten []string // and those that must change
	}{
		{"same length, one word changed", "Bench Lamp 9999", false, []string{"bench", "lamp", "b", "be", "ben", "l", "la", "lam"}, []string{"0001", "9999", "0", "9", "99"}},
		{"case only", "BENCH LAMP 0001", false, []string{"bench", "lamp", "0001", "b", "l", "0", "00", "000"}, nil},
		{"another length", "Bench Lamp 99999", false, nil, []string{"bench", "lamp", "b", "l", "99999"}},
		{"featured", "Bench Lamp 0001", true, nil, []string{"bench", "lamp", "0001", "b"}},
		{"words reordered", "Lamp Bench 0001", false, []string{"0001", "0", "00"}, []string{"bench", "lamp", "b", "l"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := *docs[0]
			d.Title, d.Featured = tt.title, tt.featured
			after := before.With([]*Doc{&d}, nil)
			set := func(ix *Index, key string) (sentSet, bool) {
				if s, ok := ix.words.Get(key); ok {
					return s, true
				}
				if len(key) > suggestPrefixMax {
					return sentSet{}, false
				}
				return ix.prefixes.Get(key)
			}
			same := func(key string) bool {
				a, _ := set(before, key)
				b, _ := set(after, key)
				return a.one == b.one && a.tree.root == b.tree.root && a.n == b.n
			}
			for _, k := range tt.kept {
				if !same(k) {
					t.Errorf("set %q rewritten", k)
				}
			}
			for _, k := range tt.rewritten {
				if same(k) {
					t.Errorf("set %q untouched", k)
				}
			}
			fresh := Build(append([]*Doc{&d}, docs[1:]...))
			for _, k := range append(append([]string{}, tt.kept...), tt.rewritten...) {
				a, okA := set(after, k)
				b, okB := set(fresh, k)
				var ea, eb []sent
				a.each(func(e sent) bool { ea = append(ea, e); return true })
				b.each(func(e sent) bool { eb = append(eb, e); return true })
				if okA != okB || !slices.Equal(ea, eb) {
					t.Errorf("set %q: %d entries (present %v), fresh Build %d (present %v)", k, len(ea), okA, len(eb), okB)
				}
			}
		})
	}
}
