package replica

import (
	"cmp"
	"slices"

	"vitrine/schema"
)

// The replica's memory budget (Config.MaxBytes).
//
// Accounting. A generation holds, per tenant, its Snapshot.Bytes (the encoded size, in bytes of
// JSON, of the entity states it holds, both visibilities) plus the encoded size of the changes
// buffered for its next checkpoint. The sum over the generation's tenants is its held bytes. The
// unit is the raw JSON the stream delivers, not the Go heap: the heap is a multiple of it (see
// the README's "Memory budget" paragraph for the factor measured by BenchmarkReplicaHeap), and an
// operator sizes the budget with that factor. The registry (the platform log) is neither counted
// nor ever shed: without it no tenant resolves.
//
// Shedding. When a change buffered for a tenant takes the held bytes past MaxBytes, tenants are
// shed, the largest first (ties by slug), until the held bytes fit again: shedding the largest
// keeps the most tenants local for the bytes freed, and the choice depends only on the stream
// delivered, so every edge of a fleet fed the same stream sheds the same tenants. A shed tenant's
// state is dropped at once (an empty Snapshot is published, its buffered changes released); its
// later changes are not buffered, but its versions still advance with its heads, so read floors
// (Vitrine-Min-Version), a forwarded write's wait for its version and freshness stay honest. Its
// digests are not checked (there is no state to check). Every cache counter of the tenant is
// bumped, so no body rendered from its state is served again. The edge forwards a shed tenant's
// reads to the origin (Tenant.Shed).
//
// Stickiness. A tenant stays shed for the life of its generation: nothing re-admits it while the
// state it was shed for keeps serving, so a tenant near the budget cannot flap between local and
// forwarded. A later bootstrap (a resync, a new epoch) starts a generation where every tenant is
// admitted again, but a tenant shed in the generation it replaces is re-admitted only with
// headroom: while the new generation fills (until its first checkpoint), whenever the held bytes
// pass 90% of MaxBytes, such tenants are shed again (the largest first) until they do not. A
// restarted edge remembers nothing: it loads as a new one.
//
// A same-epoch re-bootstrap fills in the background while the current state keeps serving, each
// generation under its own budget: for that time an edge holds up to twice the budget.

// readmitHeadroom is the share of the budget kept free when a tenant shed by the previous
// generation is loaded again (1/readmitHeadroom of MaxBytes).
const readmitHeadroom = 10

// Budget is the state of a replica's memory budget.
type Budget struct {
	// MaxBytes is the budget (Config.MaxBytes); 0 is unlimited.
	MaxBytes int64
	// HeldBytes is what the served generation holds for its tenants: their entities' encoded size
	// plus the changes buffered for their next checkpoint.
	HeldBytes int64
	// Shed are the slugs of the served tenants that were shed, in order.
	Shed []string
}

// Budget returns the state of the replica's memory budget. Safe for concurrent use.
func (r *Replica) Budget() Budget {
	b := Budget{MaxBytes: r.cfg.MaxBytes, HeldBytes: r.gen.Load().held.Load()}
	for _, t := range r.Tenants() {
		if t.Shed() {
			b.Shed = append(b.Shed, t.Slug)
		}
	}
	return b
}

// Shed reports whether the replica dropped the tenant's state to keep within its memory budget:
// its Snapshot is empty, and reads must be answered by a server holding its state (the origin).
// Its versions still advance. A tenant, once shed, stays shed until a re-bootstrap replaces it.
func (t *Tenant) Shed() bool { return t.shed.Load() }

// heldBy is what a tenant counts against the budget. Follower goroutine only.
func (t *Tenant) heldBy() int64 { return t.snap.Load().Bytes + t.pendingBytes }

// hold accounts a change about to be buffered for t and reports whether to buffer it: not when t
// is shed, before or because of this change. Follower goroutine only.
func (r *Replica) hold(g *generation, t *Tenant, c *schema.Change) bool {
	if t.shed.Load() {
		return false
	}
	if t.Slug == schema.PlatformLog {
		return true
	}
	n := int64(len(c.Data))
	t.pendingBytes += n
	held := g.held.Add(n)
	if max := r.cfg.MaxBytes; max > 0 {
		if len(r.wasShed) > 0 && !g.checkpointed.Load() && held > max-max/readmitHeadroom {
			r.shedUntil(g, max-max/readmitHeadroom, func(t *Tenant) bool { return r.wasShed[t.Slug] },
				"it was shed before and does not fit the budget with headroom")
		}
		if g.held.Load() > max {
			r.overBudget(g)
		}
	}
	return !t.shed.Load()
}

// settle accounts the batch applyPending just applied to t (held before it: before); the
// buffered changes now count as the snapshot's bytes. It reports whether t is shed, and then
// advances its version to top as a shed tenant's head would. Follower goroutine only.
func (r *Replica) settle(g *generation, t *Tenant, before, top int64) (shed bool) {
	t.pendingBytes = 0
	if held := g.held.Add(t.snap.Load().Bytes - before); r.cfg.MaxBytes > 0 && held > r.cfg.MaxBytes {
		r.overBudget(g)
	}
	return r.shedApply(t, top)
}

// shedApply is applyLog for a shed tenant: nothing is applied, the version advances to top when
// the heads allow (to a head's version when the relay stamps digests, else to what was
// delivered). It reports whether t is shed. Follower goroutine only.
func (r *Replica) shedApply(t *Tenant, top int64) bool {
	if !t.shed.Load() {
		return false
	}
	if t.expect == nil || top == t.expectAt {
		t.advance(top)
	}
	return true
}

// overBudget sheds the generation's tenants, the largest first (ties by slug), until its held
// bytes fit the budget. Follower goroutine only.
func (r *Replica) overBudget(g *generation) {
	r.shedUntil(g, r.cfg.MaxBytes, nil, "the replica is over its memory budget and it is the largest tenant")
}

// shedUntil sheds the generation's tenants that pass only (all when nil), the largest first
// (ties by slug), until its held bytes are at most limit or none is left. Follower goroutine
// only.
func (r *Replica) shedUntil(g *generation, limit int64, only func(*Tenant) bool, why string) {
	type cand struct {
		t     *Tenant
		bytes int64
	}
	cands := make([]cand, 0, len(g.tenants))
	for _, t := range g.tenants {
		if t.Slug != schema.PlatformLog && !t.shed.Load() && (only == nil || only(t)) {
			cands = append(cands, cand{t, t.heldBy()})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.t.Slug, b.t.Slug)) })
	for _, c := range cands {
		if g.held.Load() <= limit {
			return
		}
		r.shed(g, c.t, why)
	}
}

// shed drops a tenant's state: the flag first (a reader that loads the empty snapshot sees it),
// then the empty snapshot, then every cache counter (see the package invariants). Follower
// goroutine only.
func (r *Replica) shed(g *generation, t *Tenant, why string) {
	old := t.snap.Load()
	freed := old.Bytes + t.pendingBytes
	t.shed.Store(true)
	clear(t.pending)
	t.pending, t.pendingBytes = nil, 0
	empty := emptySnapshot()
	empty.Version = old.Version
	t.snap.Store(empty)
	t.held.Store(false)
	held := g.held.Add(-freed)
	for i := range t.gens {
		t.gens[i].Add(1)
	}
	t.items.Clear()
	r.log.Warn("shedding a tenant to keep within the replica's memory budget: its reads are forwarded to the origin",
		"log", t.Slug, "why", why, "freed_bytes", freed, "held_bytes", held, "max_bytes", r.cfg.MaxBytes)
}

// shedSlugs returns the slugs of the tenants shed in the given generations (nil ones skipped).
// Follower goroutine only.
func shedSlugs(gens ...*generation) map[string]bool {
	var out map[string]bool
	for _, g := range gens {
		if g == nil {
			continue
		}
		for slug, t := range g.tenants {
			if t.shed.Load() {
				if out == nil {
					out = map[string]bool{}
				}
				out[slug] = true
			}
		}
	}
	return out
}
