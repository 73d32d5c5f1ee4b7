package search

// Width of the persistent vector's nodes: a Set copies one leaf of vecWidth values and one inner
// node of vecWidth pointers per level.
const (
	vecBits  = 6
	vecWidth = 1 << vecBits
	vecMask  = vecWidth - 1
)

// pvec is a persistent vector of T indexed from 0: a trie of vecWidth-wide nodes. Set returns a
// new vector sharing all but one path with the old one. The zero pvec is empty; reading past its
// length returns the zero T.
type pvec[T any] struct {
	root  *vnode[T]
	len   int
	shift uint // bits below the root's level: 0 when the root is a leaf
}

type vnode[T any] struct {
	kids []*vnode[T] // inner
	vals []T         // leaf
}

// capacity is the number of slots the current height can address.
func (v pvec[T]) capacity() int { return 1 << (v.shift + vecBits) }

func (v pvec[T]) get(i int) *T {
	if i < 0 || i >= v.len {
		return nil
	}
	n := v.root
	for s := v.shift; s > 0; s -= vecBits {
		n = n.kids[(i>>s)&vecMask]
		if n == nil {
			return nil
		}
	}
	return &n.vals[i&vecMask]
}

// set returns the vector with slot i holding x; i may be the current length (append).
func (v pvec[T]) set(i int, x T) pvec[T] {
	if i < 0 || i > v.len {
		panic("search: pvec index out of range")
	}
	if v.root == nil {
		v.root = &vnode[T]{vals: make([]T, vecWidth)}
	}
	for i >= v.capacity() {
		v.root = &vnode[T]{kids: append(make([]*vnode[T], 0, vecWidth), v.root)}
		v.shift += vecBits
	}
	v.root = setNode(v.root, v.shift, i, x)
	if i == v.len {
		v.len++
	}
	return v
}

func setNode[T any](n *vnode[T], shift uint, i int, x T) *vnode[T] {
	if shift == 0 {
		vals := make([]T, vecWidth)
		if n != nil {
			copy(vals, n.vals)
		}
		vals[i&vecMask] = x
		return &vnode[T]{vals: vals}
	}
	kids := make([]*vnode[T], vecWidth)
	if n != nil {
		copy(kids, n.kids)
	}
	k := (i >> shift) & vecMask
	kids[k] = setNode(kids[k], shift-vecBits, i, x)
	return &vnode[T]{kids: kids}
}

// vecOf makes a vector of xs (copied).
func vecOf[T any](xs []T) pvec[T] {
	v, leaves := vecMake[T](len(xs))
	for i, vals := range leaves {
		copy(vals, xs[i*vecWidth:])
	}
	return v
}

// vecMake makes a vector of n zero values and returns it with its leaves' values, vecWidth a
// leaf, for the caller to set before the vector is shared.
func vecMake[T any](n int) (pvec[T], [][]T) {
	if n == 0 {
		return pvec[T]{}, nil
	}
	var level []*vnode[T]
	leaves := make([][]T, 0, (n+vecWidth-1)/vecWidth)
	for i := 0; i < n; i += vecWidth {
		vals := make([]T, vecWidth)
		leaves = append(leaves, vals)
		level = append(level, &vnode[T]{vals: vals})
	}
	shift := uint(0)
	for len(level) > 1 {
		var up []*vnode[T]
		for i := 0; i < len(level); i += vecWidth {
			kids := make([]*vnode[T], vecWidth)
			copy(kids, level[i:min(i+vecWidth, len(level))])
			up = append(up, &vnode[T]{kids: kids})
		}
		level = up
		shift += vecBits
	}
	return pvec[T]{root: level[0], len: n, shift: shift}, leaves
}

// each calls f with each index and value in order until f returns false.
func (v pvec[T]) each(f func(i int, x *T) bool) {
	if v.root != nil {
		eachNode(v.root, v.shift, 0, v.len, f)
	}
}

func eachNode[T any](n *vnode[T], shift uint, base, end int, f func(int, *T) bool) bool {
	if shift == 0 {
		for j := range n.vals {
			if base+j >= end {
				return false
			}
			if !f(base+j, &n.vals[j]) {
				return false
			}
		}
		return true
	}
	for k, c := range n.kids {
		if c == nil {
			continue
		}
		if !eachNode(c, shift-vecBits, base+k<<shift, end, f) {
			return false
		}
	}
	return true
}
