package replica

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"vitrine/schema"
	"vitrine/sync/feed"
)

// Config configures a Replica.
type Config struct {
	// Shards are the shards whose tenants this replica serves; empty means all. Tenants of other
	// shards resolve as unknown.
	Shards []int
	// PlatformDomain makes "<slug>.<PlatformDomain>" resolve to the tenant <slug> (e.g.
	// "vitrine.localhost"). Empty disables subdomain resolution.
	PlatformDomain string
	// Private says that the replica follows the private subjects too (the origin's): heads'
	// private digests are checked as well as the public ones.
	Private bool
	// ResyncEvery is the least time between two re-bootstraps the replica asks for when a tenant
	// disagrees with its head's digest (default 30s).
	ResyncEvery time.Duration
	// MaxBytes is the replica's memory budget, in bytes of the encoded (JSON) entity states and
	// buffered changes it holds for its tenants; 0 is unlimited. Past it, the largest tenants are
	// shed (budget.go): their state is dropped and the edge forwards their reads.
	MaxBytes int64
	Logger   *slog.Logger
}

// Replica is the read model of the tenants of a set of shards. It implements feed.Sink; its read
// methods are safe for concurrent use with the Sink methods and with each other.
type Replica struct {
	cfg Config
	log *slog.Logger

	gen      atomic.Pointer[generation] // the generation being served
	building *generation                // a same-epoch re-bootstrap filling in the background
	ready    atomic.Bool

	resync     atomic.Pointer[string] // why a re-bootstrap is wanted; nil when none is
	lastResync time.Time              // follower goroutine only
	stats      stats
	heard      heardTimes // when the stream was last heard from, per shard (staleness.go)
	// wasShed names the tenants shed by the generation the one filling replaces: they are
	// re-admitted only with headroom (budget.go). Follower goroutine only.
	wasShed map[string]bool
	// unsupported: logs of skipped changes of a newer schema (unsupported.go).
	unsupported unsupportedLogs
	// intern holds one copy of the price maps and option lists the replica's products and
	// variants repeat (schema.Interner); every generation decodes with it.
	intern *schema.Interner
	// prepared allocates Prepare's records in blocks (prepare.go).
	prepared preparedSlab
}

// internLimit bounds the distinct price maps and option lists a replica shares (each); values
// past it are held per entity, as without sharing.
const internLimit = 1 << 15

type stats struct {
	heldHeads, disagreements, resyncs atomic.Uint64
	imagesUsed, imagesRefused         atomic.Uint64
}

// Stats are a replica's verification counters.
type Stats struct {
	// HeldHeads counts heads whose digest the replica's state did not match on arrival: their
	// version was claimed later, once the missing states arrived (a state moved past its head
	// in the compacted stream, such as a republished message).
	HeldHeads uint64
	// Disagreements counts checkpoints at which a tenant, with everything published delivered,
	// still disagreed with its head's digest.
	Disagreements uint64
	// Resyncs counts the re-bootstraps the replica asked for because of a disagreement.
	Resyncs uint64
	// IndexImagesUsed counts tenants whose first search index came from a snapshot's image
	// (annex.go); IndexImagesRefused those whose image did not match their state (they were
	// indexed from their products, as without an image).
	IndexImagesUsed, IndexImagesRefused uint64
}

// Stats returns the replica's verification counters. Safe for concurrent use.
func (r *Replica) Stats() Stats {
	return Stats{HeldHeads: r.stats.heldHeads.Load(), Disagreements: r.stats.disagreements.Load(), Resyncs: r.stats.resyncs.Load(),
		IndexImagesUsed: r.stats.imagesUsed.Load(), IndexImagesRefused: r.stats.imagesRefused.Load()}
}

// ResyncWanted returns why the replica wants its follower to bootstrap again, or "" (a feed.Sink
// extension the Follower checks after each checkpoint). Reset clears it.
func (r *Replica) ResyncWanted() string {
	if why := r.resync.Load(); why != nil {
		return *why
	}
	return ""
}

// generation is one bootstrap's state.
type generation struct {
	epoch    string
	tenants  map[string]*Tenant // by log name; follower goroutine only
	registry atomic.Pointer[registry]
	entries  map[string]*schema.Tenant // registry state; follower goroutine only
	entryVer map[string]int64
	// checkpointed: the generation had its first checkpoint (everything published when it
	// started was delivered). Written by the follower goroutine, read by requests (RegistryLoaded).
	checkpointed atomic.Bool
	// held is what the generation holds for its tenants, counted against Config.MaxBytes
	// (budget.go). Written by the follower goroutine.
	held atomic.Int64
	// images are the search index images of the generation's snapshots, by log, until the
	// tenant's first apply takes its own or the first checkpoint drops the rest (annex.go).
	// Follower goroutine only.
	images map[string]feed.Annex
}

// registry is an immutable host and slug index of the served tenants.
type registry struct {
	bySlug   map[string]*Tenant
	byDomain map[string]*Tenant
}

// New returns an empty replica. It serves nothing until a Follower delivers a bootstrap.
func New(cfg Config) *Replica {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ResyncEvery == 0 {
		cfg.ResyncEvery = 30 * time.Second
	}
	r := &Replica{cfg: cfg, log: cfg.Logger.With("component", "replica"), intern: schema.NewInterner(internLimit)}
	r.heard.init(time.Now())
	r.gen.Store(newGeneration(""))
	return r
}

func newGeneration(epoch string) *generation {
	g := &generation{epoch: epoch, tenants: map[string]*Tenant{}, entries: map[string]*schema.Tenant{}, entryVer: map[string]int64{}}
	g.registry.Store(&registry{bySlug: map[string]*Tenant{}, byDomain: map[string]*Tenant{}})
	return g
}

func (g *generation) tenant(slug string) *Tenant {
	t := g.tenants[slug]
	if t == nil {
		t = newTenant(slug)
		g.tenants[slug] = t
	}
	return t
}

func (g *generation) retire() {
	for _, t := range g.tenants {
		t.retire()
	}
}

// Epoch returns the epoch of the stream the served state comes from.
func (r *Replica) Epoch() string { return r.gen.Load().epoch }

// Ready reports whether the replica has completed its bootstrap and every tenant it serves has had
// its first checkpoint (the /readyz answer).
func (r *Replica) Ready() bool { return r.ready.Load() }

// RegistryLoaded reports whether the served state knows its tenants: its bootstrap has had its
// first checkpoint, so every registry entry published before it was delivered. Until then a host
// that resolves to no tenant may be one the registry has not delivered yet: the edge answers
// 503 not_ready for it, never the 404 of an unknown tenant.
func (r *Replica) RegistryLoaded() bool { return r.gen.Load().checkpointed.Load() }

// Tenants returns the served tenants, ordered by slug (metrics, digests).
func (r *Replica) Tenants() []*Tenant {
	reg := r.gen.Load().registry.Load()
	out := make([]*Tenant, 0, len(reg.bySlug))
	for _, t := range reg.bySlug {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out
}

// TenantBySlug returns a served tenant, or nil.
func (r *Replica) TenantBySlug(slug string) *Tenant {
	return r.gen.Load().registry.Load().bySlug[slug]
}

// Lookup resolves the tenant of a request: from the Host header (a custom domain, or a
// subdomain of the platform domain), else from the X-Tenant-Slug header. It returns nil for an
// unknown, suspended or foreign-shard tenant. It does not allocate.
func (r *Replica) Lookup(host, slugHeader []byte) *Tenant {
	reg := r.gen.Load().registry.Load()
	var buf [256]byte
	h := normalizeHost(buf[:0], host)
	if len(h) > 0 {
		if t := reg.byDomain[string(h)]; t != nil {
			return t
		}
		if pd := r.cfg.PlatformDomain; pd != "" && len(h) > len(pd)+1 &&
			h[len(h)-len(pd)-1] == '.' && string(h[len(h)-len(pd):]) == pd {
			label := h[:len(h)-len(pd)-1]
			if bytes.IndexByte(label, '.') < 0 {
				if t := reg.bySlug[string(label)]; t != nil {
					return t
				}
			}
		}
	}
	if len(slugHeader) > 0 {
		return reg.bySlug[string(slugHeader)]
	}
	return nil
}

// normalizeHost appends host without its port, lowercased, to dst. An IPv6 literal keeps its
// brackets stripped. Oversized or malformed hosts yield nothing.
func normalizeHost(dst, host []byte) []byte {
	if len(host) == 0 || len(host) > cap(dst) {
		return dst
	}
	if host[0] == '[' {
		end := bytes.IndexByte(host, ']')
		if end < 0 {
			return dst
		}
		host = host[1:end]
	} else if i := bytes.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	for _, c := range host {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return bytes.TrimSuffix(dst, []byte{'.'})
}

func (r *Replica) target() *generation {
	if r.building != nil {
		return r.building
	}
	return r.gen.Load()
}

// Reset starts a new bootstrap (feed.Sink). A bootstrap of the same epoch fills in the
// background while the current state keeps serving, and replaces it at its first checkpoint. A
// bootstrap of another epoch replaces the current state at once: data of another database is
// never served.
func (r *Replica) Reset(epoch string) {
	r.resync.Store(nil)
	cur := r.gen.Load()
	ng := newGeneration(epoch)
	r.wasShed = shedSlugs(cur, r.building)
	if r.building != nil {
		r.building.retire()
		r.building = nil
	}
	if cur.epoch == epoch && cur.checkpointed.Load() {
		r.building = ng
		return
	}
	if cur.epoch != "" && cur.epoch != epoch {
		r.log.Warn("stream epoch changed: dropping the replicated state", "from", cur.epoch, "to", epoch)
	}
	r.gen.Store(ng)
	cur.retire()
	r.ready.Store(false)
}

// Change buffers one change; a head applies its log's buffer (feed.Sink).
func (r *Replica) Change(c *schema.Change) {
	g := r.target()
	t := g.tenant(c.Log)
	if c.Version > t.seen.Load() {
		t.seen.Store(c.Version)
	}
	if !c.IsHead() {
		if r.hold(g, t, c) {
			t.pending = append(t.pending, c)
		}
		return
	}
	t.expect, t.expectAt = c.Digest, c.Version
	if r.applyLog(g, t, c.Version) {
		r.stats.heldHeads.Add(1)
	}
	t.ready.Store(true)
	r.updateReady(g)
}

// Checkpoint applies the buffered changes of every log that had its first checkpoint
// (feed.Sink), unless a publish of the log is in flight: a change above the log's latest head is
// part of a publish whose head has not arrived, and the log waits for that head. The relay sends
// a head only after the changes it covers, and a consumer between two of them is told nothing is
// pending; applying there would show part of a transaction. (A publish that failed part-way
// leaves its changes above the head until the retry's head covers them.) Logs still without a head keep
// buffering: their first checkpoint is their head.
func (r *Replica) Checkpoint() {
	g := r.target()
	for _, t := range g.tenants {
		if !t.ready.Load() || (len(t.pending) == 0 && t.seen.Load() <= t.version.Load()) {
			continue
		}
		if t.seen.Load() > t.expectAt {
			continue // a batch in flight: its head applies it
		}
		// Everything published has been delivered: a tenant whose state is at its head's version
		// and still disagrees with the head's digest does not hold what the stream says it
		// applied.
		if r.applyLog(g, t, t.seen.Load()) && t.seen.Load() == t.expectAt {
			r.disagree(t)
		}
	}
	g.checkpointed.Store(true)
	g.images = nil // a tenant without its first apply by now indexes its products
	if g == r.building {
		old := r.gen.Load()
		r.gen.Store(g)
		r.building = nil
		old.retire()
		r.log.Info("re-bootstrap complete: serving the new state")
	}
	r.updateReady(g)
}

// applyLog applies a log's buffered changes at version top and claims what it can verify; it
// reports whether the tenant's state disagrees with its latest head's digest.
func (r *Replica) applyLog(g *generation, t *Tenant, top int64) (disagrees bool) {
	if t.Slug == schema.PlatformLog {
		r.applyRegistry(g, t, top)
		return false
	}
	if r.shedApply(t, top) {
		return false
	}
	before := t.heldBy()
	img, ok := g.images[t.Slug]
	delete(g.images, t.Slug)
	var imgp *feed.Annex
	if ok {
		imgp = &img
	}
	used, imgErr := t.applyPending(top, r.intern, imgp, func(c *schema.Change, err error) {
		r.log.Error("skipping a change that does not apply", "log", c.Log, "key", c.Key(), "version", c.Version, "err", err)
	})
	switch {
	case used:
		r.stats.imagesUsed.Add(1)
	case imgErr != nil:
		r.stats.imagesRefused.Add(1)
		r.log.Warn("snapshot search index not used: indexing the products", "log", t.Slug, "version", t.snap.Load().Version, "reason", imgErr)
	}
	if r.settle(g, t, before, top) {
		return false
	}
	return t.claim(r.cfg.Private)
}

// disagree records that a tenant, with everything published delivered, does not match its head's
// digest, and asks for a re-bootstrap (at most one per ResyncEvery): the current state keeps
// serving, at the last version it could verify, until the new bootstrap replaces it.
func (r *Replica) disagree(t *Tenant) {
	r.stats.disagreements.Add(1)
	s := t.snap.Load()
	r.log.Error("replica disagrees with its head's digest: the state does not hold what the stream says was applied",
		"log", t.Slug, "version", t.expectAt, "claimed", t.version.Load(),
		"pub_count", s.LogDigest.PubCount, "head_pub_count", t.expect.PubCount)
	if !r.lastResync.IsZero() && time.Since(r.lastResync) < r.cfg.ResyncEvery {
		return
	}
	r.lastResync = time.Now()
	r.stats.resyncs.Add(1)
	why := "log " + t.Slug + " disagrees with the digest of its head at version " + strconv.FormatInt(t.expectAt, 10)
	r.resync.Store(&why)
}

// applyRegistry applies the platform log's buffered changes and rebuilds the host index.
func (r *Replica) applyRegistry(g *generation, p *Tenant, top int64) {
	for _, c := range p.pending {
		if c.Kind != schema.KindTenant || c.Version <= g.entryVer[c.ID] {
			continue
		}
		g.entryVer[c.ID] = c.Version
		if c.Deleted {
			delete(g.entries, c.ID)
			continue
		}
		var e schema.Tenant
		if err := json.Unmarshal(c.Data, &e); err != nil || e.Slug != c.ID {
			r.log.Error("skipping an unreadable registry entry", "slug", c.ID, "err", err)
			continue
		}
		g.entries[c.ID] = &e
	}
	clear(p.pending)
	p.pending = p.pending[:0]
	reg := &registry{bySlug: map[string]*Tenant{}, byDomain: map[string]*Tenant{}}
	for slug, e := range g.entries {
		if e.Status != schema.TenantActive || !r.servesShard(e.Shard) {
			continue
		}
		t := g.tenant(slug)
		if prev := t.info.Load(); prev == nil || prev.Version != e.Version {
			t.info.Store(e)
			// Index prices are in the default currency: a new one re-prices the index (in a
			// snapshot published before the counters move; see the package invariants).
			if t.ready.Load() && t.reindex(e.DefaultCurrency()) {
				t.gens[Catalog].Add(1)
			}
			t.gens[Site].Add(1)
		}
		reg.bySlug[slug] = t
		for _, d := range e.Domains {
			reg.byDomain[d] = t
		}
	}
	g.registry.Store(reg)
	p.advance(top)
}

func (r *Replica) servesShard(s int) bool {
	return len(r.cfg.Shards) == 0 || slices.Contains(r.cfg.Shards, s)
}

func (r *Replica) updateReady(g *generation) {
	if g != r.gen.Load() {
		return
	}
	ok := g.checkpointed.Load() && g.tenants[schema.PlatformLog] != nil && g.tenants[schema.PlatformLog].ready.Load()
	if ok {
		for _, t := range g.registry.Load().bySlug {
			if !t.ready.Load() {
				ok = false
				break
			}
		}
	}
	r.ready.Store(ok)
}
