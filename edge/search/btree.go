package search

import "slices"

// Node sizes of the persistent B+trees (of the blocks of compressed lists). A change copies one
// leaf and one inner node per level: a few KB at most whatever the size of the tree.
const (
	leafMax  = 32
	innerMax = 32
	leafMin  = leafMax / 4
	innerMin = innerMax / 4
)

// bnode is a node of a persistent B+tree. A leaf has items; an inner node has kids, and mins[i] is
// the first item under kids[i]. Nodes are never modified once they are reachable from a tree.
type bnode[E any] struct {
	items []E
	kids  []*bnode[E]
	mins  []E
}

func (n *bnode[E]) isLeaf() bool { return n.kids == nil }

func (n *bnode[E]) first() E {
	if n.isLeaf() {
		return n.items[0]
	}
	return n.mins[0]
}

func (n *bnode[E]) size() int {
	if n.isLeaf() {
		return len(n.items)
	}
	return len(n.kids)
}

func (n *bnode[E]) underfull() bool {
	if n.isLeaf() {
		return len(n.items) < leafMin
	}
	return len(n.kids) < innerMin
}

// btree is a persistent ordered set of E: every update returns a new tree sharing all but the
// changed path with the old one. The order is given by a comparison function passed to each call
// (entries comparing equal are the same entry); a tree must always be used with the same one.
// The zero btree is empty.
type btree[E any] struct {
	root *bnode[E]
	n    int
}

// route returns the child of an inner node that holds (or would hold) e.
func route[E any](n *bnode[E], e E, cmp func(a, b E) int) int {
	// The last child whose first item is <= e; the first child when e is below them all.
	i, found := slices.BinarySearchFunc(n.mins, e, cmp)
	if found {
		return i
	}
	if i > 0 {
		i--
	}
	return i
}

// get returns the entry equal to e.
func (t btree[E]) get(e E, cmp func(a, b E) int) (E, bool) {
	n := t.root
	if n == nil {
		var zero E
		return zero, false
	}
	for !n.isLeaf() {
		n = n.kids[route(n, e, cmp)]
	}
	if i, ok := slices.BinarySearchFunc(n.items, e, cmp); ok {
		return n.items[i], true
	}
	var zero E
	return zero, false
}

// put inserts e, or replaces the entry equal to it. It returns the new tree and the replaced
// entry, if any.
func (t btree[E]) put(e E, cmp func(a, b E) int) (btree[E], E, bool) {
	if t.root == nil {
		var zero E
		return btree[E]{root: &bnode[E]{items: []E{e}}, n: 1}, zero, false
	}
	l, r, old, replaced := putNode(t.root, e, cmp)
	root := l
	if r != nil {
		root = &bnode[E]{kids: []*bnode[E]{l, r}, mins: []E{l.first(), r.first()}}
	}
	n := t.n
	if !replaced {
		n++
	}
	return btree[E]{root: root, n: n}, old, replaced
}

func putNode[E any](n *bnode[E], e E, cmp func(a, b E) int) (l, r *bnode[E], old E, replaced bool) {
	if n.isLeaf() {
		i, found := slices.BinarySearchFunc(n.items, e, cmp)
		if found {
			items := slices.Clone(n.items)
			old, items[i] = items[i], e
			return &bnode[E]{items: items}, nil, old, true
		}
		items := make([]E, len(n.items)+1)
		copy(items, n.items[:i])
		items[i] = e
		copy(items[i+1:], n.items[i:])
		if len(items) > leafMax {
			h := len(items) / 2
			return &bnode[E]{items: items[:h:h]}, &bnode[E]{items: items[h:]}, old, false
		}
		return &bnode[E]{items: items}, nil, old, false
	}
	i := route(n, e, cmp)
	cl, cr, old, replaced := putNode(n.kids[i], e, cmp)
	extra := 0
	if cr != nil {
		extra = 1
	}
	kids := make([]*bnode[E], len(n.kids)+extra)
	mins := make([]E, len(n.kids)+extra)
	copy(kids, n.kids[:i+1])
	copy(mins, n.mins[:i+1])
	kids[i], mins[i] = cl, cl.first()
	if cr != nil {
		kids[i+1], mins[i+1] = cr, cr.first()
	}
	copy(kids[i+1+extra:], n.kids[i+1:])
	copy(mins[i+1+extra:], n.mins[i+1:])
	if len(kids) > innerMax {
		h := len(kids) / 2
		return &bnode[E]{kids: kids[:h:h], mins: mins[:h:h]}, &bnode[E]{kids: kids[h:], mins: mins[h:]}, old, replaced
	}
	return &bnode[E]{kids: kids, mins: mins}, nil, old, replaced
}

// del removes the entry equal to e. It returns the new tree and the removed entry, if any; the
// tree is returned unchanged when there is none.
func (t btree[E]) del(e E, cmp func(a, b E) int) (btree[E], E, bool) {
	if t.root == nil {
		var zero E
		return t, zero, false
	}
	root, old, found := delNode(t.root, e, cmp)
	if !found {
		return t, old, false
	}
	for root != nil && !root.isLeaf() && len(root.kids) == 1 {
		root = root.kids[0]
	}
	return btree[E]{root: root, n: t.n - 1}, old, true
}

func delNode[E any](n *bnode[E], e E, cmp func(a, b E) int) (nn *bnode[E], old E, found bool) {
	if n.isLeaf() {
		i, ok := slices.BinarySearchFunc(n.items, e, cmp)
		if !ok {
			return n, old, false
		}
		old = n.items[i]
		if len(n.items) == 1 {
			return nil, old, true
		}
		items := make([]E, 0, len(n.items)-1)
		items = append(append(items, n.items[:i]...), n.items[i+1:]...)
		return &bnode[E]{items: items}, old, true
	}
	i := route(n, e, cmp)
	c, old, found := delNode(n.kids[i], e, cmp)
	if !found {
		return n, old, false
	}
	kids := slices.Clone(n.kids)
	mins := slices.Clone(n.mins)
	if c == nil {
		kids = slices.Delete(kids, i, i+1)
		mins = slices.Delete(mins, i, i+1)
		if len(kids) == 0 {
			return nil, old, true
		}
		return &bnode[E]{kids: kids, mins: mins}, old, true
	}
	kids[i], mins[i] = c, c.first()
	if c.underfull() && len(kids) > 1 {
		j := i + 1 // merge with the right sibling, or the left one for the last child
		if j == len(kids) {
			i, j = i-1, i
		}
		a, b := merge(kids[i], kids[j])
		kids[i], mins[i] = a, a.first()
		if b != nil {
			kids[j], mins[j] = b, b.first()
		} else {
			kids = slices.Delete(kids, j, j+1)
			mins = slices.Delete(mins, j, j+1)
		}
	}
	return &bnode[E]{kids: kids, mins: mins}, old, true
}

// merge joins two adjacent nodes of the same level into one, or into two balanced ones when they
// do not fit in one.
func merge[E any](a, b *bnode[E]) (*bnode[E], *bnode[E]) {
	if a.isLeaf() {
		items := make([]E, 0, len(a.items)+len(b.items))
		items = append(append(items, a.items...), b.items...)
		if len(items) <= leafMax {
			return &bnode[E]{items: items}, nil
		}
		h := len(items) / 2
		return &bnode[E]{items: items[:h:h]}, &bnode[E]{items: items[h:]}
	}
	kids := make([]*bnode[E], 0, len(a.kids)+len(b.kids))
	kids = append(append(kids, a.kids...), b.kids...)
	mins := make([]E, 0, len(a.mins)+len(b.mins))
	mins = append(append(mins, a.mins...), b.mins...)
	if len(kids) <= innerMax {
		return &bnode[E]{kids: kids, mins: mins}, nil
	}
	h := len(kids) / 2
	return &bnode[E]{kids: kids[:h:h], mins: mins[:h:h]}, &bnode[E]{kids: kids[h:], mins: mins[h:]}
}

// bulk makes a tree of sorted, distinct items, with full nodes. It copies the items.
func bulk[E any](items []E) btree[E] {
	if len(items) == 0 {
		return btree[E]{}
	}
	k := (len(items) + leafMax - 1) / leafMax
	nodes := make([]*bnode[E], 0, k)
	for i := 0; i < k; i++ {
		lo, hi := i*len(items)/k, (i+1)*len(items)/k
		nodes = append(nodes, &bnode[E]{items: slices.Clone(items[lo:hi])})
	}
	for len(nodes) > 1 {
		k := (len(nodes) + innerMax - 1) / innerMax
		up := make([]*bnode[E], 0, k)
		for i := 0; i < k; i++ {
			lo, hi := i*len(nodes)/k, (i+1)*len(nodes)/k
			kids := slices.Clone(nodes[lo:hi])
			mins := make([]E, len(kids))
			for j, c := range kids {
				mins[j] = c.first()
			}
			up = append(up, &bnode[E]{kids: kids, mins: mins})
		}
		nodes = up
	}
	return btree[E]{root: nodes[0], n: len(items)}
}

// each calls f with every entry in order until f returns false.
func (t btree[E]) each(f func(E) bool) {
	var it biter[E]
	it.reset(t)
	for {
		e, ok := it.next()
		if !ok || !f(e) {
			return
		}
	}
}

// biter iterates a tree in order. The zero biter is exhausted; reset starts it on a tree. Its
// path is a fixed array (no allocation per iteration): biterDepth levels are far more than a tree
// of 32-wide nodes reaches (every inner node but the root has at least innerMin kids).
type biter[E any] struct {
	stack [biterDepth]bframe[E]
	depth int
	items []E
	pos   int
}

// biterDepth bounds the height of the trees biter walks: innerMin^(biterDepth-2) leaves.
const biterDepth = 16

type bframe[E any] struct {
	n *bnode[E]
	i int
}

func (it *biter[E]) reset(t btree[E]) {
	it.depth = 0
	it.items, it.pos = nil, 0
	if t.root != nil {
		it.descend(t.root)
	}
}

// stop makes the iterator exhausted.
func (it *biter[E]) stop() {
	it.depth, it.items, it.pos = 0, nil, 0
}

func (it *biter[E]) descend(n *bnode[E]) {
	for !n.isLeaf() {
		it.stack[it.depth] = bframe[E]{n, 0}
		it.depth++
		n = n.kids[0]
	}
	it.items, it.pos = n.items, 0
}

// next returns the next entry.
func (it *biter[E]) next() (E, bool) {
	for it.pos >= len(it.items) {
		if !it.nextLeaf() {
			var zero E
			return zero, false
		}
	}
	e := it.items[it.pos]
	it.pos++
	return e, true
}

func (it *biter[E]) nextLeaf() bool {
	for it.depth > 0 {
		top := &it.stack[it.depth-1]
		top.i++
		if top.i < len(top.n.kids) {
			it.descend(top.n.kids[top.i])
			return true
		}
		it.depth--
	}
	it.items, it.pos = nil, 0
	return false
}
