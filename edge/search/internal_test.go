package search

import (
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
	check := func(name string, set btree[sent]) {
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
