package schema

import (
	"strconv"
	"strings"
	"sync"
)

// Interner keeps one copy of the small values that the entities of a catalog repeat: price maps
// (a catalog's prices cluster on a few hundred price points, and most variants carry none of
// their own) and option lists ("size: M", "colour: Red / size: L"). Entities decoded with the
// same Interner (DecodeEntityInterned) share these values instead of each holding its own: a
// price map is ~250 bytes of map for 1–2 entries, so in a replica of 100k products and 300k
// variants the copies were a tenth of the heap.
//
// Shared values must never be modified. The replica's entities are immutable already (a snapshot
// shares them with its successors); code that edits an entity it did not make clones its maps and
// slices first, as the origin's import does.
//
// An Interner is safe for concurrent use. It holds at most limit distinct values of each kind,
// so a catalog of unique values costs it a bounded table, not a copy of the catalog; values past
// the limit are decoded as without it.
type Interner struct {
	mu      sync.Mutex
	limit   int
	prices  map[string]Prices
	options map[string][]Option
	empty   Prices
}

// NewInterner returns an Interner holding at most limit distinct price maps and limit distinct
// option lists.
func NewInterner(limit int) *Interner {
	return &Interner{limit: limit, prices: map[string]Prices{}, options: map[string][]Option{}, empty: Prices{}}
}

// Len reports how many distinct price maps and option lists in holds.
func (in *Interner) Len() (prices, options int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.prices), len(in.options)
}

// pricePair is one entry of a price map being decoded.
type pricePair struct {
	code   string
	amount int64
}

// sharedPrices returns the shared map holding exactly pairs (codes distinct, sorted).
func (in *Interner) sharedPrices(pairs []pricePair) Prices {
	if len(pairs) == 0 {
		return in.empty
	}
	var kb [64]byte
	key := kb[:0]
	for _, p := range pairs { // length-prefixed: no two price maps share a key
		key = strconv.AppendInt(key, int64(len(p.code)), 10)
		key = append(key, ':')
		key = append(key, p.code...)
		key = strconv.AppendInt(key, p.amount, 10)
		key = append(key, ';')
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if m, ok := in.prices[string(key)]; ok {
		return m
	}
	m := make(Prices, len(pairs))
	for _, p := range pairs {
		m[currencyKey(p.code)] = p.amount
	}
	if len(in.prices) < in.limit {
		in.prices[string(key)] = m
	}
	return m
}

// sharedOptions returns the shared list equal to opts, whose strings may alias the document
// being decoded (the shared list's never do).
func (in *Interner) sharedOptions(opts []Option) []Option {
	var kb [128]byte
	key := kb[:0]
	for _, o := range opts {
		key = strconv.AppendInt(key, int64(len(o.Name)), 10)
		key = append(key, ':')
		key = append(key, o.Name...)
		key = strconv.AppendInt(key, int64(len(o.Value)), 10)
		key = append(key, ':')
		key = append(key, o.Value...)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if s, ok := in.options[string(key)]; ok {
		return s
	}
	// One allocation for the strings, owned by the list (never the document's bytes).
	n := 0
	for _, o := range opts {
		n += len(o.Name) + len(o.Value)
	}
	var b strings.Builder
	b.Grow(n)
	for _, o := range opts {
		b.WriteString(o.Name)
		b.WriteString(o.Value)
	}
	all := b.String()
	s := make([]Option, len(opts))
	off := 0
	for i, o := range opts {
		s[i].Name = all[off : off+len(o.Name)]
		off += len(o.Name)
		s[i].Value = all[off : off+len(o.Value)]
		off += len(o.Value)
	}
	if len(in.options) < in.limit {
		in.options[string(key)] = s
	}
	return s
}
