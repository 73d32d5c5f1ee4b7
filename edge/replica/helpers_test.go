package replica_test

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// Test fixtures: a writer simulator that produces changes the way origin/store does (consecutive
// versions per transaction, tombstones first for visibilities an entity leaves, the entity's own
// Version set to the last version of its changes, TxnFirst/TxnLast stamped on every change, and
// the relay's head marker closing the batch).

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newReplica(cfg replica.Config) *replica.Replica {
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	return replica.New(cfg)
}

// chg builds one change at one version, as a snapshot republish would (a one-change transaction).
func chg(log string, kind schema.Kind, id string, vis schema.Visibility, v any, ver int64) *schema.Change {
	c := schema.NewChange(log, kind, id, vis, v)
	c.Version, c.TxnFirst, c.TxnLast = ver, ver, ver
	return &c
}

// head builds a log's head marker at a version.
func head(log string, ver int64) *schema.Change {
	return &schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID,
		Vis: schema.Pub, Version: ver}
}

// logWriter hands out the versions of one log, like log_versions.
type logWriter struct {
	log     string
	version int64
	// states, when not nil, records the value of every entity state the writer has written and
	// not since emptied, by "vis/kind/id": what a digest of the log must cover.
	states map[string]state
}

type state struct {
	kind  schema.Kind
	id    string
	vis   schema.Visibility
	value any
}

// digest builds by hand the digest of the recorded states at the visibilities given.
func (w *logWriter) digest(vis ...schema.Visibility) *schema.Digest {
	d := &schema.Digest{}
	for _, st := range w.states {
		if !slices.Contains(vis, st.vis) {
			continue
		}
		b, err := json.Marshal(st.value)
		if err != nil {
			panic(err)
		}
		d.Add(w.log, st.kind, st.id, st.vis, b)
	}
	return d
}

// txn collects the changes of one transaction of one log.
type txn struct {
	w       *logWriter
	first   int64
	changes []*schema.Change
}

func (w *logWriter) begin() *txn { return &txn{w: w, first: w.version + 1} }

// write records one entity like store's writeEntity: tombstones for the visibilities in oldVis
// missing from newVis, then one state per newVis. setVersion receives the entity's version (the
// last of its changes) before the states are encoded.
func (tx *txn) write(kind schema.Kind, id string, oldVis, newVis []schema.Visibility, setVersion func(int64), stateFor func(schema.Visibility) any) {
	tombs := schema.Left(oldVis, newVis)
	n := int64(len(tombs) + len(newVis))
	if n == 0 {
		return
	}
	first := tx.w.version + 1
	last := first + n - 1
	tx.w.version = last
	if setVersion != nil {
		setVersion(last)
	}
	v := first
	for _, vis := range tombs {
		if tx.w.states != nil {
			delete(tx.w.states, string(vis)+"/"+string(kind)+"/"+id)
		}
		c := schema.NewChange(tx.w.log, kind, id, vis, nil)
		c.Version = v
		v++
		tx.changes = append(tx.changes, &c)
	}
	for _, vis := range newVis {
		val := stateFor(vis)
		if tx.w.states != nil {
			tx.w.states[string(vis)+"/"+string(kind)+"/"+id] = state{kind, id, vis, val}
		}
		c := schema.NewChange(tx.w.log, kind, id, vis, val)
		c.Version = v
		v++
		tx.changes = append(tx.changes, &c)
	}
}

// commit stamps the transaction bounds and returns the changes followed by the log's head.
func (tx *txn) commit() []*schema.Change {
	out := tx.changes
	for _, c := range out {
		c.TxnFirst, c.TxnLast = tx.first, tx.w.version
		if err := c.Check(); err != nil {
			panic("test fixture built an invalid change: " + err.Error())
		}
	}
	return append(out, head(tx.w.log, tx.w.version))
}

// body returns the changes without the trailing head.
func body(cs []*schema.Change) []*schema.Change { return cs[:len(cs)-1] }

var (
	pubOnly  = []schema.Visibility{schema.Pub}
	privOnly = []schema.Visibility{schema.Priv}
	pubPriv  = []schema.Visibility{schema.Pub, schema.Priv}
)

func productVis(p *schema.Product) []schema.Visibility {
	if p == nil {
		return nil
	}
	if p.Public() {
		return pubOnly
	}
	return privOnly
}

func postVis(p *schema.Post) []schema.Visibility {
	if p == nil {
		return nil
	}
	if !p.Public() {
		return privOnly
	}
	if p.Password != "" {
		return pubPriv
	}
	return pubOnly
}

// putProduct writes p over old (nil: a creation; p nil: a deletion).
func (tx *txn) putProduct(old, p *schema.Product) {
	id := old
	if p != nil {
		id = p
		p.Normalize()
	}
	tx.write(schema.KindProduct, schema.IDString(id.ID), productVis(old), productVis(p),
		func(v int64) {
			if p != nil {
				p.Version = v
			}
		}, func(schema.Visibility) any { return p })
}

// putVariant writes v of product p (oldP: the product when the variant was last written, nil for a
// creation; v nil with old set: a deletion).
func (tx *txn) putVariant(oldP, p *schema.Product, old, v *schema.Variant) {
	id := old
	if v != nil {
		id = v
		v.Normalize()
	}
	newVis := productVis(p)
	if v == nil {
		newVis = nil
	}
	tx.write(schema.KindVariant, schema.IDString(id.ID), productVis(oldP), newVis,
		func(ver int64) {
			if v != nil {
				v.Version = ver
			}
		}, func(schema.Visibility) any { return v })
}

func (tx *txn) putCategory(existed bool, c *schema.Category, id schema.CategoryID) {
	var old, nv []schema.Visibility
	if existed {
		old = pubOnly
	}
	if c != nil {
		nv = pubOnly
	}
	tx.write(schema.KindCategory, schema.IDString(id), old, nv,
		func(v int64) {
			if c != nil {
				c.Version = v
			}
		}, func(schema.Visibility) any { return c })
}

func (tx *txn) putCurrency(existed bool, c *schema.Currency, code string) {
	var old, nv []schema.Visibility
	if existed {
		old = pubOnly
	}
	if c != nil {
		nv = pubOnly
	}
	tx.write(schema.KindCurrency, code, old, nv,
		func(v int64) {
			if c != nil {
				c.Version = v
			}
		}, func(schema.Visibility) any { return c })
}

// putPost writes p over old as store does: the public copy at pub, the full post at priv.
func (tx *txn) putPost(old, p *schema.Post) {
	id := old
	if p != nil {
		id = p
		p.Normalize()
	}
	tx.write(schema.KindPost, schema.IDString(id.ID), postVis(old), postVis(p),
		func(v int64) {
			if p != nil {
				p.Version = v
			}
		}, func(vis schema.Visibility) any {
			if vis == schema.Pub {
				return p.PublicCopy()
			}
			return p
		})
}

// putTenant writes a registry entry on the platform log.
func (tx *txn) putTenant(created bool, e *schema.Tenant) {
	var old []schema.Visibility
	if !created {
		old = pubOnly
	}
	tx.write(schema.KindTenant, e.Slug, old, pubOnly, func(v int64) { e.Version = v },
		func(schema.Visibility) any { return e })
}

func (tx *txn) deleteTenant(slug string) {
	tx.write(schema.KindTenant, slug, pubOnly, nil, nil, nil)
}

func feed(r *replica.Replica, cs ...[]*schema.Change) {
	for _, batch := range cs {
		for _, c := range batch {
			r.Change(c)
		}
	}
}

func product(id int64, slug string, created time.Time) *schema.Product {
	p := &schema.Product{
		ID: schema.ProductID(id), Slug: slug, Title: "Product " + slug, Description: "About " + slug,
		Status: schema.ProductActive, Prices: schema.Prices{"USD": 1000 + id, "EUR": 900 + id},
		Images:    []schema.Image{{URL: "https://cdn.example.com/" + slug + ".jpg", Alt: slug}},
		CreatedAt: created, UpdatedAt: created,
	}
	p.Normalize()
	return p
}

func variant(id, productID int64, pos int, avail schema.Availability) *schema.Variant {
	v := &schema.Variant{
		ID: schema.VariantID(id), ProductID: schema.ProductID(productID), SKU: "SKU-" + strconv.FormatInt(id, 10),
		Title: "Variant " + strconv.FormatInt(id, 10), Options: []schema.Option{{Name: "size", Value: "M"}},
		Availability: avail, Position: pos, CreatedAt: t0, UpdatedAt: t0,
	}
	v.Normalize()
	return v
}

func category(id int64, slug string, parent int64) *schema.Category {
	return &schema.Category{ID: schema.CategoryID(id), ParentID: schema.CategoryID(parent), Slug: slug, Name: "Category " + slug,
		Position: int(id), CreatedAt: t0, UpdatedAt: t0}
}

func currency(code, symbol string, exp int, rate string) *schema.Currency {
	return &schema.Currency{Code: code, Name: code + " currency", Symbol: symbol, Exponent: exp, Rate: rate, CreatedAt: t0, UpdatedAt: t0}
}

func post(id int64, slug, title string, status schema.PostStatus, date time.Time) *schema.Post {
	p := &schema.Post{
		ID: schema.PostID(id), Type: "post", Slug: slug, Status: status, Title: title, Content: "<p>" + title + "</p>",
		Excerpt: title, Author: 1, CommentStatus: "open", PingStatus: "open", Format: "standard",
		DateGMT: date, ModifiedGMT: date,
	}
	p.Normalize()
	return p
}

func tenantEntry(slug string, shard int, status schema.TenantStatus, domains ...string) *schema.Tenant {
	return &schema.Tenant{
		ID: "00000000-0000-4000-8000-0000000000" + strconv.Itoa(10+len(slug)), Slug: slug, Name: "Store " + slug,
		BaseURL: "https://" + slug + ".example.test", Domains: domains, Shard: shard, Status: status,
		Timezone: "UTC", Currencies: []string{"USD", "EUR"}, CreatedAt: t0, UpdatedAt: t0,
	}
}

// site is a test rig: a replica, the platform log writer and one writer per tenant log.
type site struct {
	t        testing.TB
	r        *replica.Replica
	platform *logWriter
	logs     map[string]*logWriter
	entries  map[string]*schema.Tenant
}

func newSite(t testing.TB, cfg replica.Config) *site {
	return &site{t: t, r: newReplica(cfg), platform: &logWriter{log: schema.PlatformLog},
		logs: map[string]*logWriter{}, entries: map[string]*schema.Tenant{}}
}

func (s *site) log(slug string) *logWriter {
	w := s.logs[slug]
	if w == nil {
		w = &logWriter{log: slug}
		s.logs[slug] = w
	}
	return w
}

// register returns the platform batch registering entries (one transaction each, one head).
func (s *site) register(entries ...*schema.Tenant) []*schema.Change {
	var out []*schema.Change
	for _, e := range entries {
		tx := s.platform.begin()
		_, existed := s.entries[e.Slug]
		tx.putTenant(!existed, e)
		s.entries[e.Slug] = e
		out = append(out, body(tx.commit())...)
	}
	return append(out, head(schema.PlatformLog, s.platform.version))
}

// seedShop is the catalog most tests start from: three products (one with two variants), a
// category, two currencies and two posts.
func (s *site) seedShop(slug string) []*schema.Change {
	w := s.log(slug)
	tx := w.begin()
	tx.putCategory(false, category(1, "shoes", 0), 1)
	tx.putCurrency(false, currency("USD", "$", 2, "1"), "USD")
	tx.putCurrency(false, currency("EUR", "€", 2, "0.92"), "EUR")
	p1, p2, p3 := product(10, "alpha", t0), product(11, "beta", t0.Add(time.Hour)), product(12, "gamma", t0.Add(2*time.Hour))
	p2.Featured = true
	tx.putProduct(nil, p1)
	tx.putProduct(nil, p2)
	tx.putProduct(nil, p3)
	tx.putVariant(nil, p1, nil, variant(20, 10, 1, schema.InStock))
	tx.putVariant(nil, p1, nil, variant(21, 10, 0, schema.LowStock))
	tx.putPost(nil, post(30, "hello", "Hello", schema.StatusPublish, t0))
	tx.putPost(nil, post(31, "draft", "Draft", schema.StatusDraft, t0.Add(time.Hour)))
	return tx.commit()
}

// bootstrap delivers a registry of one active tenant "shop" and its seeded catalog, then checkpoints.
func (s *site) bootstrap(epoch string) *replica.Tenant {
	s.t.Helper()
	s.r.Reset(epoch)
	feed(s.r, s.register(tenantEntry("shop", 1, schema.TenantActive, "shop.example.com")), s.seedShop("shop"))
	s.r.Checkpoint()
	tn := s.r.TenantBySlug("shop")
	if tn == nil || !tn.Ready() || !s.r.Ready() {
		s.t.Fatalf("bootstrap: tenant %v ready=%v, replica ready=%v; want a ready tenant and replica", tn, tn != nil && tn.Ready(), s.r.Ready())
	}
	return tn
}

func productSlugs(ps []*schema.Product) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Slug
	}
	return out
}

func postIDs(ps []*schema.Post) []schema.PostID {
	out := make([]schema.PostID, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}
