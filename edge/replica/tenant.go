package replica

import (
	"sync"
	"sync/atomic"
	"time"

	"vitrine/schema"
	"vitrine/sync/feed"
)

// Class names a group of rendered responses that a change invalidates together.
type Class int

// Classes of cached responses. Every cached body depends on Site (the tenant's registry entry:
// name, canonical base URL) and on the Tenant object itself (see Retired).
const (
	Site       Class = iota // the registry entry
	Catalog                 // product lists and featured products
	Taxonomy                // categories (lists, and names embedded in products)
	Currencies              // every rendered price: currencies and flash sales
	Posts                   // post lists
	Sales                   // the flash sale list
	Sections                // the storefront sections
	// Listing is the newest-first listing of the public products: which products it holds and
	// in what order (their creation times). It moves when a public product appears or goes, or
	// its creation time changes, not when one is otherwise edited: a plain product list depends
	// on it and on the item counters of the products it shows, so that a price change
	// refreshes only the pages that show that product.
	Listing
	numClasses
)

// Tenant is one log's replicated state and the machinery around it: readiness, waiters for a
// version, and the counters that validate cached bodies. A Tenant object belongs to one
// generation of the replica; when a re-bootstrap replaces it, it is retired.
type Tenant struct {
	// Slug is the log name (the tenant slug, or schema.PlatformLog).
	Slug string

	snap    atomic.Pointer[Snapshot]
	info    atomic.Pointer[schema.Tenant] // registry entry; nil until the registry names it
	version atomic.Int64                  // the version the tenant is at (== snap.Version)
	seen    atomic.Int64                  // the highest version delivered (applied or buffered)
	ready   atomic.Bool                   // the log has had its first checkpoint
	// Retired is 0 while this object serves and 1 once a re-bootstrap replaced it. Every cached
	// body depends on it.
	Retired atomic.Uint64

	gens  [numClasses]atomic.Uint64
	items sync.Map // itemKey -> *atomic.Uint64: per-entity counters (product and post pages)

	mu       sync.Mutex
	advanced chan struct{} // closed and replaced whenever version grows

	// pending holds delivered changes waiting for a checkpoint. Follower goroutine only.
	pending []*schema.Change
	lastApp time.Time
	// expect is the digest the latest head carried, for its version expectAt; nil when that head
	// carried none (a relay that does not stamp digests: heads are trusted). Follower goroutine
	// only.
	expect   *schema.LogDigest
	expectAt int64
	// held is set while the replica's state is at the latest head's version but its digest
	// disagrees with the head's: the claimed version stays behind until the missing states
	// arrive (or a re-bootstrap replaces the tenant).
	held atomic.Bool
	// shed is set once the replica dropped the tenant's state to keep within its memory budget
	// (budget.go); pendingBytes is the encoded size of pending. Follower goroutine only but shed,
	// which readers load.
	shed         atomic.Bool
	pendingBytes int64
}

type itemKey struct {
	kind schema.Kind
	id   int64
}

func newTenant(slug string) *Tenant {
	t := &Tenant{Slug: slug, advanced: make(chan struct{})}
	t.snap.Store(emptySnapshot())
	return t
}

// Snapshot returns the tenant's current state.
func (t *Tenant) Snapshot() *Snapshot { return t.snap.Load() }

// Info returns the tenant's registry entry (nil for a log the registry does not name yet).
func (t *Tenant) Info() *schema.Tenant { return t.info.Load() }

// Version returns the version the tenant is at: every change up to it is applied or superseded,
// and, when the relay stamps digests, the state was checked against the head's digest.
func (t *Tenant) Version() int64 { return t.version.Load() }

// Held reports whether the tenant holds changes past its claimed version that it could not
// verify yet: its state disagreed with the latest head's digest.
func (t *Tenant) Held() bool { return t.held.Load() }

// Seen returns the highest version delivered for the tenant, applied or not.
func (t *Tenant) Seen() int64 { return t.seen.Load() }

// Ready reports whether the tenant has had its first checkpoint and may be served.
func (t *Tenant) Ready() bool { return t.ready.Load() }

// Counter returns the generation counter of a class of cached responses.
func (t *Tenant) Counter(c Class) *atomic.Uint64 { return &t.gens[c] }

// ItemCounter returns the counter of one entity's own pages (a product page, a post). It is
// created on first use; both the renderer and the applier call this, so they share it.
func (t *Tenant) ItemCounter(kind schema.Kind, id int64) *atomic.Uint64 {
	k := itemKey{kind, id}
	if c, ok := t.items.Load(k); ok {
		return c.(*atomic.Uint64)
	}
	c, _ := t.items.LoadOrStore(k, new(atomic.Uint64))
	return c.(*atomic.Uint64)
}

func (t *Tenant) bumpItem(kind schema.Kind, id int64) {
	if c, ok := t.items.Load(itemKey{kind, id}); ok {
		c.(*atomic.Uint64).Add(1)
	}
}

// WaitFor blocks until the tenant is at version v or later, or until timeout. It reports whether
// the version was reached. A retired tenant never advances: its waiters return at once.
func (t *Tenant) WaitFor(v int64, timeout time.Duration) bool {
	if t.version.Load() >= v {
		return true
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ch := t.advanced
		t.mu.Unlock()
		if t.version.Load() >= v {
			return true
		}
		if t.Retired.Load() != 0 {
			return false
		}
		select {
		case <-ch:
		case <-timer.C:
			return t.version.Load() >= v
		}
	}
}

// applyPending applies every buffered change as one new snapshot at version at least top, then
// bumps the counters of what changed. errs receives changes that could not be applied (malformed
// data); they are skipped. The caller decides which version the tenant may claim (claim).
// Entities are decoded with in. img, when not nil, is a snapshot's search index image of the
// tenant, used when the new snapshot's index is built in one pass (nextIndex): used reports
// whether it was, imgErr why it was not.
func (t *Tenant) applyPending(top int64, in *schema.Interner, img *feed.Annex, errs func(c *schema.Change, err error)) (used bool, imgErr error) {
	old := t.snap.Load()
	b := newBuilder(old)
	b.intern = in
	b.sizeFor(t.pending)
	for _, c := range t.pending {
		if err := b.apply(c); err != nil && errs != nil {
			errs(c, err)
		}
	}
	if top > b.version {
		b.version = top
	}
	clear(t.pending)
	t.pending = t.pending[:0]
	if b.version <= old.Version && !b.applied {
		return false, nil
	}
	s := b.snapshot()
	cur := ""
	if info := t.info.Load(); info != nil {
		cur = info.DefaultCurrency()
	}
	s.index, used, imgErr = nextIndex(old, s, b.dirty.products, cur, b.best, img)
	s.indexCur = cur
	t.snap.Store(s)
	t.lastApp = time.Now()
	// Publish the snapshot first, then bump counters (see the package invariants).
	d := &b.dirty
	if d.catalog {
		t.gens[Catalog].Add(1)
	}
	if d.listing {
		t.gens[Listing].Add(1)
	}
	if d.taxonomy {
		t.gens[Taxonomy].Add(1)
	}
	if d.currencies {
		t.gens[Currencies].Add(1)
	}
	if d.posts {
		t.gens[Posts].Add(1)
	}
	for id := range d.products {
		t.bumpItem(schema.KindProduct, int64(id))
	}
	for id := range d.postItems {
		t.bumpItem(schema.KindPost, int64(id))
	}
	if d.merch.sales {
		t.gens[Sales].Add(1)
		t.gens[Currencies].Add(1)
	}
	if d.merch.sections {
		t.gens[Sections].Add(1)
	}
	for id := range d.merch.reviews {
		t.bumpItem(schema.KindReview, int64(id))
	}
	for id := range d.merch.stats {
		t.bumpItem(schema.KindStats, int64(id))
	}
	return used, imgErr
}

// claim advances the tenant's version to its snapshot's when that is verified: always when the
// latest head carried no digest; when it did, only if the snapshot is at exactly the head's
// version and its running digest matches the head's (on the private states too when withPriv).
// A snapshot past the head holds part of a later transaction whose head has not arrived: nothing
// is claimed until it does. claim reports a disagreement: the snapshot is at the head's version
// and its digest differs.
func (t *Tenant) claim(withPriv bool) (disagrees bool) {
	s := t.snap.Load()
	if t.expect == nil {
		t.held.Store(false)
		t.advance(s.Version)
		return false
	}
	if s.Version != t.expectAt {
		return false
	}
	if s.LogDigest.Matches(*t.expect, withPriv) {
		t.held.Store(false)
		t.advance(s.Version)
		return false
	}
	t.held.Store(true)
	return true
}

func (t *Tenant) advance(v int64) {
	if v <= t.version.Load() {
		return
	}
	t.version.Store(v)
	t.mu.Lock()
	close(t.advanced)
	t.advanced = make(chan struct{})
	t.mu.Unlock()
}

// retire marks the tenant replaced: every cached body of it becomes invalid, and waiters wake.
func (t *Tenant) retire() {
	t.Retired.Store(1)
	t.mu.Lock()
	close(t.advanced)
	t.advanced = make(chan struct{})
	t.mu.Unlock()
}
