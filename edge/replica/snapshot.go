package replica

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/benbjohnson/immutable"

	"vitrine/edge/search"
	"vitrine/schema"
)

// slot holds an entity's state at each visibility, with the version of the change that last
// wrote (or emptied) each.
type slot[T any] struct {
	pub, priv       *T
	pubVer, privVer int64
	pubSize         int32
	privSize        int32
}

func (s slot[T]) version(vis schema.Visibility) int64 {
	if vis == schema.Pub {
		return s.pubVer
	}
	return s.privVer
}

func (s slot[T]) empty() bool { return s.pub == nil && s.priv == nil }

// effective returns the private state when there is one, else the public one: what the origin
// shows to a caller allowed to see everything.
func (s slot[T]) effective() *T {
	if s.priv != nil {
		return s.priv
	}
	return s.pub
}

// Hashers and comparers for the persistent maps. The library's defaults fall back to reflection
// for named types such as schema.ProductID; these do not.
type intHasher[K ~int64] struct{}

func (intHasher[K]) Hash(k K) uint32 {
	x := uint64(k)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return uint32(x)
}
func (intHasher[K]) Equal(a, b K) bool { return a == b }

type stringHasher struct{}

func (stringHasher) Hash(s string) uint32 {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
func (stringHasher) Equal(a, b string) bool { return a == b }

// orderKey sorts newest first, then by id descending. Seconds and nanoseconds are kept apart:
// UnixNano overflows outside the years 1678-2262, which a CMS date may be.
type orderKey struct {
	sec  int64
	nsec int64
	id   int64
}

type newestFirst struct{}

func (newestFirst) Compare(a, b orderKey) int {
	return cmp.Or(cmp.Compare(b.sec, a.sec), cmp.Compare(b.nsec, a.nsec), cmp.Compare(b.id, a.id))
}

func timeKey(t time.Time, id int64) orderKey { return orderKey{t.Unix(), int64(t.Nanosecond()), id} }

func productKey(p *schema.Product) orderKey { return timeKey(p.CreatedAt, int64(p.ID)) }
func postKey(p *schema.Post) orderKey       { return timeKey(p.DateGMT, int64(p.ID)) }

// Snapshot is one immutable state of a tenant's log. All methods are safe for concurrent use.
type Snapshot struct {
	// Version is the log version the snapshot is at.
	Version int64
	// Bytes approximates the memory of the entities (their encoded size).
	Bytes int64
	// LogDigest is the running schema.LogDigest of the live states this snapshot holds, kept by
	// every slot write, compared with the digest the relay stamps on heads.
	LogDigest schema.LogDigest

	products   *immutable.Map[schema.ProductID, slot[schema.Product]]
	slugs      *immutable.Map[string, schema.ProductID]         // public products by slug
	order      *immutable.SortedMap[orderKey, schema.ProductID] // public products, newest first
	featured   *immutable.SortedMap[orderKey, schema.ProductID] // public featured products
	variants   *immutable.Map[schema.VariantID, slot[schema.Variant]]
	byProduct  *immutable.Map[schema.ProductID, []schema.VariantID] // public variants by position
	categories *immutable.Map[schema.CategoryID, slot[schema.Category]]
	currencies *immutable.Map[string, slot[schema.Currency]]
	posts      *immutable.Map[schema.PostID, slot[schema.Post]]
	postOrder  *immutable.SortedMap[orderKey, schema.PostID] // public posts, newest first

	// merch is the merchandising state (merch.go).
	merch merch

	// index is the search index of the public products of this snapshot (see index.go), with
	// prices in indexCur (the store's default currency when the index was made).
	index    *search.Index
	indexCur string
}

func emptySnapshot() *Snapshot {
	return &Snapshot{
		products:   immutable.NewMap[schema.ProductID, slot[schema.Product]](intHasher[schema.ProductID]{}),
		slugs:      immutable.NewMap[string, schema.ProductID](stringHasher{}),
		order:      immutable.NewSortedMap[orderKey, schema.ProductID](newestFirst{}),
		featured:   immutable.NewSortedMap[orderKey, schema.ProductID](newestFirst{}),
		variants:   immutable.NewMap[schema.VariantID, slot[schema.Variant]](intHasher[schema.VariantID]{}),
		byProduct:  immutable.NewMap[schema.ProductID, []schema.VariantID](intHasher[schema.ProductID]{}),
		categories: immutable.NewMap[schema.CategoryID, slot[schema.Category]](intHasher[schema.CategoryID]{}),
		currencies: immutable.NewMap[string, slot[schema.Currency]](stringHasher{}),
		posts:      immutable.NewMap[schema.PostID, slot[schema.Post]](intHasher[schema.PostID]{}),
		postOrder:  immutable.NewSortedMap[orderKey, schema.PostID](newestFirst{}),
		index:      search.New(),
		merch:      emptyMerch(),
	}
}

// pmap mutates a persistent map either by path copying (a snapshot others may be reading) or in
// place through a builder (a fresh snapshot nobody reads yet: the bootstrap of a log).
type pmap[K, V any] struct {
	m *immutable.Map[K, V]
	b *immutable.MapBuilder[K, V]
}

func (p *pmap[K, V]) Get(k K) (V, bool) {
	if p.b != nil {
		return p.b.Get(k)
	}
	return p.m.Get(k)
}

func (p *pmap[K, V]) Set(k K, v V) {
	if p.b != nil {
		p.b.Set(k, v)
		return
	}
	p.m = p.m.Set(k, v)
}

func (p *pmap[K, V]) Delete(k K) {
	if p.b != nil {
		p.b.Delete(k)
		return
	}
	p.m = p.m.Delete(k)
}

func (p *pmap[K, V]) done() *immutable.Map[K, V] {
	if p.b != nil {
		return p.b.Map()
	}
	return p.m
}

type psorted[K, V any] struct {
	m *immutable.SortedMap[K, V]
	b *immutable.SortedMapBuilder[K, V]
}

func (p *psorted[K, V]) Set(k K, v V) {
	if p.b != nil {
		p.b.Set(k, v)
		return
	}
	p.m = p.m.Set(k, v)
}

func (p *psorted[K, V]) Delete(k K) {
	if p.b != nil {
		p.b.Delete(k)
		return
	}
	p.m = p.m.Delete(k)
}

func (p *psorted[K, V]) done() *immutable.SortedMap[K, V] {
	if p.b != nil {
		return p.b.Map()
	}
	return p.m
}

// dirty records what an applied batch changed, for cache invalidation.
type dirty struct {
	catalog, taxonomy, currencies, posts bool
	listing                              bool // the newest-first listing's members or order
	products                             map[schema.ProductID]bool
	postItems                            map[schema.PostID]bool
	merch                                merchDirty
}

func (d *dirty) product(id schema.ProductID) {
	d.catalog = true
	if d.products == nil {
		d.products = map[schema.ProductID]bool{}
	}
	d.products[id] = true
}

func (d *dirty) post(id schema.PostID) {
	d.posts = true
	if d.postItems == nil {
		d.postItems = map[schema.PostID]bool{}
	}
	d.postItems[id] = true
}

// builder applies changes to a copy of a snapshot.
type builder struct {
	intern     *schema.Interner // shares decoded entities' repeated values (may be nil)
	version    int64
	bytes      int64
	digest     schema.LogDigest
	applied    bool // some change was applied (a late one can be older than the snapshot)
	products   pmap[schema.ProductID, slot[schema.Product]]
	slugs      pmap[string, schema.ProductID]
	order      psorted[orderKey, schema.ProductID]
	featured   psorted[orderKey, schema.ProductID]
	variants   pmap[schema.VariantID, slot[schema.Variant]]
	byProduct  pmap[schema.ProductID, []schema.VariantID]
	categories pmap[schema.CategoryID, slot[schema.Category]]
	currencies pmap[string, slot[schema.Currency]]
	posts      pmap[schema.PostID, slot[schema.Post]]
	postOrder  psorted[orderKey, schema.PostID]
	merch      merch
	mm         merchMaps // the merch maps that grow with the catalog (merch.go)
	dirty      dirty
	// fresh is set when the builder fills an empty log in place. Its products' variant lists
	// are then made once, when the snapshot is made (listVariants), from the log of public
	// variant states the batch wrote (pubVariants), instead of once per variant change: a
	// bootstrap of v variants per product would otherwise look up each product's list and its
	// variants v times, and reading the final states back from the map costs a cache miss per
	// variant.
	fresh       bool
	pubVariants []variantState
	// best is the best availability of each product's public variants, made by listVariants
	// for the search documents (allDocs); nil when not made.
	best map[schema.ProductID]schema.Availability
	// seen is a fresh builder's filter of the products and variants it wrote (see sizeFor): an
	// id it has no bit for has no slot yet, so its first write skips the map lookup, which
	// misses the cache at most levels of a large map.
	seen []uint64
}

// sizeFor prepares a fresh builder for a batch of changes cs: a filter of 8 to 16 bits per
// change (about one false "seen", which only costs the lookup, in eight first writes) and room
// for the log of its public variant states. Other builders ignore it.
func (b *builder) sizeFor(cs []*schema.Change) {
	n := len(cs)
	if !b.fresh || n < 64 {
		return
	}
	words := 1 << bits.Len(uint(n-1)) // 8n bits rounded up to a power of two, in 64-bit words
	words = max(words/8, 1)
	b.seen = make([]uint64, words)
	nv := 0
	for _, c := range cs {
		if c.Kind == schema.KindVariant && c.Vis == schema.Pub {
			nv++
		}
	}
	b.pubVariants = make([]variantState, 0, nv)
}

// firstWrite reports whether the builder has certainly not written the entity of kind k (a
// small number) and id before, and records it: false when it may have.
func (b *builder) firstWrite(k, id uint64) bool {
	if b.seen == nil {
		return false
	}
	x := (id ^ k<<56) * 0x9e3779b97f4a7c15
	x ^= x >> 31
	i := x & uint64(len(b.seen)*64-1)
	w, m := &b.seen[i>>6], uint64(1)<<(i&63)
	if *w&m != 0 {
		return false
	}
	*w |= m
	return true
}

// variantState is a public variant state a fresh builder wrote: what the variant lists and the
// search documents need of it.
type variantState struct {
	id    schema.VariantID
	pid   schema.ProductID
	pos   int
	seq   int32 // order of the write in the batch
	avail uint8 // availRank
	live  bool  // false: the public state was emptied
}

// availRank orders availabilities as schema.BestAvailability does: in stock before low stock
// before anything else.
func availRank(a schema.Availability) uint8 {
	switch a {
	case schema.InStock:
		return 2
	case schema.LowStock:
		return 1
	}
	return 0
}

// rankAvail is availRank's inverse, out of stock for any other rank.
func rankAvail(r uint8) schema.Availability {
	switch r {
	case 2:
		return schema.InStock
	case 1:
		return schema.LowStock
	}
	return schema.OutOfStock
}

func newBuilder(s *Snapshot) *builder {
	b := &builder{version: s.Version, bytes: s.Bytes, digest: s.LogDigest, merch: s.merch}
	b.mm.init(&s.merch)
	if s.products.Len() == 0 && s.variants.Len() == 0 && s.posts.Len() == 0 && s.categories.Len() == 0 && s.currencies.Len() == 0 {
		// A fresh log: fill in place, much cheaper than path copying each insert.
		b.products.b = immutable.NewMapBuilder[schema.ProductID, slot[schema.Product]](intHasher[schema.ProductID]{})
		b.slugs.b = immutable.NewMapBuilder[string, schema.ProductID](stringHasher{})
		b.order.b = immutable.NewSortedMapBuilder[orderKey, schema.ProductID](newestFirst{})
		b.featured.b = immutable.NewSortedMapBuilder[orderKey, schema.ProductID](newestFirst{})
		b.variants.b = immutable.NewMapBuilder[schema.VariantID, slot[schema.Variant]](intHasher[schema.VariantID]{})
		b.byProduct.b = immutable.NewMapBuilder[schema.ProductID, []schema.VariantID](intHasher[schema.ProductID]{})
		b.categories.b = immutable.NewMapBuilder[schema.CategoryID, slot[schema.Category]](intHasher[schema.CategoryID]{})
		b.currencies.b = immutable.NewMapBuilder[string, slot[schema.Currency]](stringHasher{})
		b.posts.b = immutable.NewMapBuilder[schema.PostID, slot[schema.Post]](intHasher[schema.PostID]{})
		b.postOrder.b = immutable.NewSortedMapBuilder[orderKey, schema.PostID](newestFirst{})
		b.fresh = true
		return b
	}
	b.products.m, b.slugs.m, b.order.m, b.featured.m = s.products, s.slugs, s.order, s.featured
	b.variants.m, b.byProduct.m = s.variants, s.byProduct
	b.categories.m, b.currencies.m = s.categories, s.currencies
	b.posts.m, b.postOrder.m = s.posts, s.postOrder
	return b
}

func (b *builder) snapshot() *Snapshot {
	if b.fresh && len(b.pubVariants) > 0 {
		b.listVariants()
	}
	b.mm.done(&b.merch)
	b.finishMerch()
	return &Snapshot{
		merch:   b.merch,
		Version: b.version, Bytes: b.bytes, LogDigest: b.digest,
		products: b.products.done(), slugs: b.slugs.done(), order: b.order.done(), featured: b.featured.done(),
		variants: b.variants.done(), byProduct: b.byProduct.done(),
		categories: b.categories.done(), currencies: b.currencies.done(),
		posts: b.posts.done(), postOrder: b.postOrder.done(),
	}
}

// put writes one slot of an entity if the change is newer than what the slot holds. It returns
// the previous value of the slot and whether the change was applied. The caller stores the slot
// back even when a tombstone emptied it: the kept versions stop an older change delivered again
// (a duplicate, a redelivery) from bringing a deleted or unpublished entity back; a re-bootstrap
// starts from fresh maps and forgets them. An applied change moves the builder's byte count and
// its running digest (a live state in, the one it replaces out).
func put[T any](s *slot[T], c *schema.Change, v *T, b *builder) (old *T, applied bool) {
	size := int32(len(c.Data))
	state, ver, sz := &s.pub, &s.pubVer, &s.pubSize
	if c.Vis != schema.Pub {
		state, ver, sz = &s.priv, &s.privVer, &s.privSize
	}
	if c.Version <= *ver {
		return nil, false
	}
	old = *state
	if old != nil {
		b.digest.RemoveTerm(c.Vis, schema.DigestTermOf(c.Vis, c.Kind, c.ID, *ver))
	}
	if v != nil {
		b.digest.AddTerm(c.Vis, schema.DigestTermOf(c.Vis, c.Kind, c.ID, c.Version))
	}
	b.bytes += int64(size - *sz)
	b.applied = true
	*state, *ver, *sz = v, c.Version, size
	return old, true
}

// decode returns a change's entity: the one Prepare decoded from the change's data, when it did,
// else one decoded now, with in.
func decode[T any](c *schema.Change, in *schema.Interner) (*T, error) {
	if c.Deleted {
		return nil, nil
	}
	v, err := (*T)(nil), error(nil)
	if p, ok := c.Decoded.(*prepared); ok {
		c.Decoded = nil // the entity now belongs to the snapshot (or is stale)
		if p.data == unsafe.SliceData(c.Data) && p.n == len(c.Data) {
			v, _ = p.v.(*T)
			err = p.err
		}
		*p = prepared{} // its block may outlive it: it must not keep the entity alive
	}
	if v == nil && err == nil {
		v = new(T)
		err = schema.DecodeEntityInterned(c.Data, v, in)
	}
	if err != nil {
		return nil, fmt.Errorf("replica: decode %s %s: %w", c.Kind, c.ID, err)
	}
	return v, nil
}

func parseID[T ~int64](c *schema.Change) (T, error) {
	n, err := strconv.ParseInt(c.ID, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("replica: %s id %q is not a positive integer", c.Kind, c.ID)
	}
	return T(n), nil
}

// apply applies one change. Changes of unknown kinds are ignored (a newer writer); malformed ones
// return an error and change nothing.
func (b *builder) apply(c *schema.Change) error {
	switch c.Kind {
	case schema.KindProduct:
		id, err := parseID[schema.ProductID](c)
		if err != nil {
			return err
		}
		v, err := decode[schema.Product](c, b.intern)
		if err != nil {
			return err
		}
		if v != nil && v.ID != id {
			return fmt.Errorf("replica: product %s carries id %d", c.ID, v.ID)
		}
		var s slot[schema.Product]
		if !b.firstWrite(1, uint64(id)) {
			s, _ = b.products.Get(id)
		}
		old, ok := put(&s, c, v, b)
		if !ok {
			return nil
		}
		b.products.Set(id, s)
		if c.Vis == schema.Pub {
			if (old == nil) != (v == nil) || old != nil && v != nil && productKey(old) != productKey(v) {
				b.dirty.listing = true
			}
			if old != nil {
				if cur, ok := b.slugs.Get(old.Slug); ok && cur == id {
					b.slugs.Delete(old.Slug)
				}
				b.order.Delete(productKey(old))
				b.featured.Delete(productKey(old))
			}
			if v != nil {
				b.slugs.Set(v.Slug, id)
				b.order.Set(productKey(v), id)
				if v.Featured {
					b.featured.Set(productKey(v), id)
				}
			}
			b.dirty.product(id)
		}
	case schema.KindVariant:
		id, err := parseID[schema.VariantID](c)
		if err != nil {
			return err
		}
		v, err := decode[schema.Variant](c, b.intern)
		if err != nil {
			return err
		}
		var s slot[schema.Variant]
		if !b.firstWrite(2, uint64(id)) {
			s, _ = b.variants.Get(id)
		}
		old, ok := put(&s, c, v, b)
		if !ok {
			return nil
		}
		b.variants.Set(id, s)
		if c.Vis == schema.Pub && b.fresh {
			// The lists are made at the end (listVariants); the products are dirty now.
			if old != nil {
				b.dirty.product(old.ProductID)
			}
			vs := variantState{id: id, seq: int32(len(b.pubVariants))}
			if v != nil {
				b.dirty.product(v.ProductID)
				vs.pid, vs.pos, vs.avail, vs.live = v.ProductID, v.Position, availRank(v.Availability), true
			}
			b.pubVariants = append(b.pubVariants, vs)
		} else if c.Vis == schema.Pub {
			if old != nil {
				b.indexVariant(old.ProductID, id, v)
			}
			if v != nil && (old == nil || old.ProductID != v.ProductID) {
				b.indexVariant(v.ProductID, id, v)
			}
		}
	case schema.KindCategory:
		id, err := parseID[schema.CategoryID](c)
		if err != nil {
			return err
		}
		v, err := decode[schema.Category](c, b.intern)
		if err != nil {
			return err
		}
		s, _ := b.categories.Get(id)
		if _, ok := put(&s, c, v, b); ok {
			b.categories.Set(id, s)
			b.dirty.taxonomy = true
		}
	case schema.KindCurrency:
		v, err := decode[schema.Currency](c, b.intern)
		if err != nil {
			return err
		}
		s, _ := b.currencies.Get(c.ID)
		if _, ok := put(&s, c, v, b); ok {
			b.currencies.Set(c.ID, s)
			b.dirty.currencies = true
		}
	case schema.KindPost:
		id, err := parseID[schema.PostID](c)
		if err != nil {
			return err
		}
		v, err := decode[schema.Post](c, b.intern)
		if err != nil {
			return err
		}
		s, _ := b.posts.Get(id)
		old, ok := put(&s, c, v, b)
		if !ok {
			return nil
		}
		b.posts.Set(id, s)
		if c.Vis == schema.Pub {
			if old != nil {
				b.postOrder.Delete(postKey(old))
			}
			if v != nil {
				b.postOrder.Set(postKey(v), id)
			}
			b.indexMedia(id, old, v) // the public file index (media.go)
		}
		b.dirty.post(id)
	default:
		if _, err := b.applyMerch(c); err != nil {
			return err
		}
	}
	if c.Version > b.version {
		b.version = c.Version
	}
	return nil
}

// indexVariant rebuilds the ordered list of a product's public variants after variant changed
// (whose public state is now pub, possibly nil). Lists are short (a product has at most 100
// variants), so a rebuild per change is cheap.
func (b *builder) indexVariant(pid schema.ProductID, changed schema.VariantID, pub *schema.Variant) {
	type ranked struct {
		id  schema.VariantID
		pos int
	}
	var buf [16]ranked
	rs := buf[:0]
	cur, _ := b.byProduct.Get(pid)
	for _, id := range cur {
		if id == changed {
			continue
		}
		// One lookup per variant, none per comparison.
		if s, ok := b.variants.Get(id); ok && s.pub != nil && s.pub.ProductID == pid {
			rs = append(rs, ranked{id, s.pub.Position})
		}
	}
	if pub != nil && pub.ProductID == pid {
		rs = append(rs, ranked{changed, pub.Position})
	}
	slices.SortFunc(rs, func(x, y ranked) int { return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.id, y.id)) })
	if len(rs) == 0 {
		b.byProduct.Delete(pid)
	} else {
		ids := make([]schema.VariantID, len(rs))
		for k, r := range rs {
			ids[k] = r.id
		}
		b.byProduct.Set(pid, ids)
	}
	b.dirty.product(pid)
}

// listVariants makes every product's list of public variants, and the best availability of
// each (best), from the public variant states a fresh builder wrote, whose byProduct started
// empty: the lists indexVariant would have left, each made once. The last state written of each
// variant is its state in the snapshot (a write is logged only when applied).
func (b *builder) listVariants() {
	rs := b.pubVariants
	b.pubVariants = nil
	// The last write of each variant, then the live ones by product, position and id. A
	// bootstrap writes each variant once, mostly in id order: both sorts see sorted runs.
	slices.SortFunc(rs, func(x, y variantState) int { return cmp.Or(cmp.Compare(x.id, y.id), cmp.Compare(x.seq, y.seq)) })
	n := 0
	for i := range rs {
		if rs[i].live && (i+1 == len(rs) || rs[i+1].id != rs[i].id) {
			rs[n] = rs[i]
			n++
		}
	}
	rs = rs[:n]
	slices.SortFunc(rs, func(x, y variantState) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.pos, y.pos), cmp.Compare(x.id, y.id))
	})
	// One array, each product's list a capped slice of it (a later change replaces a list, never
	// writes into it): one allocation instead of one per product. The array stays while any of
	// its lists does, 8 bytes per variant at most.
	ids := make([]schema.VariantID, len(rs))
	for i := range rs {
		ids[i] = rs[i].id
	}
	np := 0
	for i := range rs {
		if i == 0 || rs[i].pid != rs[i-1].pid {
			np++
		}
	}
	b.best = make(map[schema.ProductID]schema.Availability, np)
	for lo := 0; lo < len(rs); {
		hi, best := lo, uint8(0)
		for ; hi < len(rs) && rs[hi].pid == rs[lo].pid; hi++ {
			best = max(best, rs[hi].avail)
		}
		b.byProduct.Set(rs[lo].pid, ids[lo:hi:hi])
		b.best[rs[lo].pid] = rankAvail(best)
		lo = hi
	}
}
