package replica

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"sync/atomic"

	"vitrine/schema"
)

// Config configures a Replica.
type Config struct {
	// Shards are the shards whose tenants this replica serves; empty means all. Tenants of other
	// shards resolve as unknown.
	Shards []int
	// PlatformDomain makes "<slug>.<PlatformDomain>" resolve to the tenant <slug> (e.g.
	// "vitrine.localhost"). Empty disables subdomain resolution.
	PlatformDomain string
	Logger         *slog.Logger
}

// Replica is the read model of the tenants of a set of shards. It implements feed.Sink; its read
// methods are safe for concurrent use with the Sink methods and with each other.
type Replica struct {
	cfg Config
	log *slog.Logger

	gen      atomic.Pointer[generation] // the generation being served
	building *generation                // a same-epoch re-bootstrap filling in the background
	ready    atomic.Bool
}

// generation is one bootstrap's state.
type generation struct {
	epoch        string
	tenants      map[string]*Tenant // by log name; follower goroutine only
	registry     atomic.Pointer[registry]
	entries      map[string]*schema.Tenant // registry state; follower goroutine only
	entryVer     map[string]int64
	checkpointed bool
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
	r := &Replica{cfg: cfg, log: cfg.Logger.With("component", "replica")}
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
	cur := r.gen.Load()
	ng := newGeneration(epoch)
	if r.building != nil {
		r.building.retire()
		r.building = nil
	}
	if cur.epoch == epoch && cur.checkpointed {
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
		t.pending = append(t.pending, c)
		return
	}
	r.applyLog(g, t, c.Version)
	t.ready.Store(true)
	r.updateReady(g)
}

// Checkpoint applies every buffered change of every log that had its first checkpoint
// (feed.Sink). Logs still without a head keep buffering: their first checkpoint is their head.
func (r *Replica) Checkpoint() {
	g := r.target()
	for _, t := range g.tenants {
		if t.ready.Load() && (len(t.pending) > 0 || t.seen.Load() > t.version.Load()) {
			r.applyLog(g, t, t.seen.Load())
		}
	}
	g.checkpointed = true
	if g == r.building {
		old := r.gen.Load()
		r.gen.Store(g)
		r.building = nil
		old.retire()
		r.log.Info("re-bootstrap complete: serving the new state")
	}
	r.updateReady(g)
}

func (r *Replica) applyLog(g *generation, t *Tenant, top int64) {
	if t.Slug == schema.PlatformLog {
		r.applyRegistry(g, t, top)
		return
	}
	t.applyPending(top, func(c *schema.Change, err error) {
		r.log.Error("skipping a change that does not apply", "log", c.Log, "key", c.Key(), "version", c.Version, "err", err)
	})
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
	ok := g.checkpointed && g.tenants[schema.PlatformLog] != nil && g.tenants[schema.PlatformLog].ready.Load()
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
