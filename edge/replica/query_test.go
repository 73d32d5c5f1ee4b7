package replica_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// catalogModes builds the same catalog two ways: all in the bootstrap batch (the snapshot is
// filled in place), or one transaction per entity after an empty bootstrap (path copying).
var catalogModes = []struct {
	name     string
	oneBatch bool
}{{"bootstrap batch", true}, {"incremental batches", false}}

// buildCatalog applies one transaction per writer function, in one batch or one batch each.
func buildCatalog(t *testing.T, oneBatch bool, writes ...func(tx *txn)) (*site, *replica.Tenant) {
	t.Helper()
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
	w := s.log("shop")
	w.states = map[string]state{}
	if !oneBatch {
		// An empty first checkpoint, then each write as its own batch.
		w.version++
		feed(s.r, []*schema.Change{head("shop", w.version)})
	}
	var pending []*schema.Change
	for _, write := range writes {
		tx := w.begin()
		write(tx)
		cs := tx.commit()
		if oneBatch {
			pending = append(pending, body(cs)...)
		} else {
			feed(s.r, cs)
		}
	}
	if oneBatch {
		feed(s.r, append(pending, head("shop", w.version)))
	}
	s.r.Checkpoint()
	tn := s.r.TenantBySlug("shop")
	if !tn.Ready() || tn.Version() != w.version {
		t.Fatalf("catalog not applied: ready=%v version=%d, want true, %d", tn.Ready(), tn.Version(), w.version)
	}
	return s, tn
}

type entity interface {
	*schema.Product | *schema.Variant | *schema.Category
}

func ids[T entity](xs []T) []int64 {
	out := make([]int64, 0, len(xs))
	for _, x := range xs {
		switch v := any(x).(type) {
		case *schema.Product:
			out = append(out, int64(v.ID))
		case *schema.Variant:
			out = append(out, int64(v.ID))
		case *schema.Category:
			out = append(out, int64(v.ID))
		}
	}
	return out
}

func catalogWrites() []func(tx *txn) {
	mk := func(id int64, at time.Duration, featured bool, status schema.ProductStatus) func(tx *txn) {
		return func(tx *txn) {
			p := product(id, "p"+schema.IDString(id), t0.Add(at))
			p.Featured, p.Status = featured, status
			tx.putProduct(nil, p)
		}
	}
	return []func(tx *txn){
		mk(1, 0, false, schema.ProductActive),
		mk(2, time.Hour, false, schema.ProductActive),
		mk(3, time.Hour, false, schema.ProductActive), // same instant as 2: the higher id first
		mk(4, -time.Hour, false, schema.ProductActive),
		mk(5, 2*time.Hour, true, schema.ProductDraft), // private: never listed
		mk(6, 3*time.Hour, true, schema.ProductActive),
		mk(7, 0, true, schema.ProductActive),
		mk(8, 4*time.Hour, true, schema.ProductArchived),
	}
}

func TestProducts(t *testing.T) {
	tests := []struct {
		offset, limit int
		want          []int64
	}{
		{0, 10, []int64{6, 3, 2, 7, 1, 4}},
		{0, 2, []int64{6, 3}},
		{2, 2, []int64{2, 7}},
		{4, 2, []int64{1, 4}},
		{5, 10, []int64{4}},
		{6, 10, []int64{}},
		{100, 10, []int64{}},
		{0, 0, []int64{}},
		{0, 6, []int64{6, 3, 2, 7, 1, 4}},
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, catalogWrites()...)
			sn := tn.Snapshot()
			if got := sn.ProductCount(); got != 6 {
				t.Fatalf("ProductCount() = %d, want 6", got)
			}
			for _, tt := range tests {
				got, total := sn.Products(tt.offset, tt.limit)
				if !slices.Equal(ids(got), tt.want) || total != 6 {
					t.Errorf("Products(%d, %d) = %v (total %d), want %v (total 6)", tt.offset, tt.limit, ids(got), total, tt.want)
				}
			}
		})
	}
}

func TestFeatured(t *testing.T) {
	tests := []struct {
		limit int
		want  []int64
	}{
		{10, []int64{6, 7}},
		{2, []int64{6, 7}},
		{1, []int64{6}},
		{0, []int64{}},
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, catalogWrites()...)
			sn := tn.Snapshot()
			for _, tt := range tests {
				if got := sn.Featured(tt.limit); !slices.Equal(ids(got), tt.want) {
					t.Errorf("Featured(%d) = %v, want %v", tt.limit, ids(got), tt.want)
				}
			}
		})
	}
	t.Run("unfeaturing", func(t *testing.T) {
		s, tn := buildCatalog(t, false, catalogWrites()...)
		old := tn.Snapshot().Product(6, replica.Public)
		p := *old
		p.Featured = false
		tx := s.log("shop").begin()
		tx.putProduct(old, &p)
		feed(s.r, tx.commit())
		if got := tn.Snapshot().Featured(10); !slices.Equal(ids(got), []int64{7}) {
			t.Fatalf("Featured(10) after unfeaturing 6 = %v, want [7]", ids(got))
		}
		if got, _ := tn.Snapshot().Products(0, 1); !slices.Equal(ids(got), []int64{6}) {
			t.Fatalf("Products(0, 1) after unfeaturing 6 = %v, want [6]", ids(got))
		}
	})
}

func TestVariantsOrder(t *testing.T) {
	writes := []func(tx *txn){
		func(tx *txn) {
			p := product(1, "shirt", t0)
			tx.putProduct(nil, p)
			for _, v := range []struct {
				id  int64
				pos int
			}{{50, 2}, {51, 0}, {52, 1}, {53, 0}} {
				tx.putVariant(nil, p, nil, variant(v.id, 1, v.pos, schema.InStock))
			}
		},
		func(tx *txn) {
			p := product(2, "hidden", t0)
			p.Status = schema.ProductDraft
			tx.putProduct(nil, p)
			tx.putVariant(nil, p, nil, variant(60, 2, 0, schema.InStock))
		},
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, writes...)
			sn := tn.Snapshot()
			if got, want := ids(sn.Variants(1)), []int64{51, 53, 52, 50}; !slices.Equal(got, want) {
				t.Fatalf("Variants(1) = %v, want %v", got, want)
			}
			if got := sn.Variants(2); len(got) != 0 {
				t.Fatalf("Variants(2) of a draft product = %v, want none", ids(got))
			}
		})
	}
}

func TestCategoriesAndCurrencies(t *testing.T) {
	writes := []func(tx *txn){
		func(tx *txn) { tx.putCategory(false, category(3, "c", 1), 3) },
		func(tx *txn) { tx.putCategory(false, category(1, "a", 0), 1) },
		func(tx *txn) { tx.putCategory(false, category(2, "b", 1), 2) },
		func(tx *txn) { tx.putCategory(false, category(4, "gone", 0), 4) },
		func(tx *txn) { tx.putCategory(true, nil, 4) },
		func(tx *txn) { tx.putCurrency(false, currency("USD", "$", 2, "1"), "USD") },
		func(tx *txn) { tx.putCurrency(false, currency("JPY", "¥", 0, "151.2"), "JPY") },
		func(tx *txn) { tx.putCurrency(false, currency("EUR", "€", 2, "0.92"), "EUR") },
		func(tx *txn) { tx.putCurrency(false, currency("GBP", "£", 2, "0.8"), "GBP") },
		func(tx *txn) { tx.putCurrency(true, nil, "GBP") },
		func(tx *txn) { tx.putCurrency(true, currency("EUR", "€", 2, "0.95"), "EUR") },
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, writes...)
			sn := tn.Snapshot()
			if got, want := ids(sn.Categories()), []int64{1, 2, 3}; !slices.Equal(got, want) {
				t.Fatalf("Categories() = %v, want %v", got, want)
			}
			if c := sn.Category(3); c == nil || c.ParentID != 1 || c.Slug != "c" {
				t.Fatalf("Category(3) = %+v, want slug c under 1", c)
			}
			if c := sn.Category(4); c != nil {
				t.Fatalf("Category(4) = %+v after its deletion, want nil", c)
			}
			var codes []string
			for _, c := range sn.Currencies() {
				codes = append(codes, c.Code)
			}
			if got, want := strings.Join(codes, ","), "EUR,JPY,USD"; got != want {
				t.Fatalf("Currencies() = %s, want %s", got, want)
			}
			if c := sn.Currency("EUR"); c == nil || c.Rate != "0.95" {
				t.Fatalf("Currency(EUR) = %+v, want rate 0.95", c)
			}
			if c := sn.Currency("GBP"); c != nil {
				t.Fatalf("Currency(GBP) = %+v after its deletion, want nil", c)
			}
			if c := sn.Currency("XXX"); c != nil {
				t.Fatalf("Currency(XXX) = %+v, want nil", c)
			}
		})
	}
}

func postWrites() []func(tx *txn) {
	mk := func(id int64, slug, title string, status schema.PostStatus, date, modified time.Duration, password string) func(tx *txn) {
		return func(tx *txn) {
			p := post(id, slug, title, status, t0.Add(date))
			p.ModifiedGMT = t0.Add(modified)
			p.Password = password
			tx.putPost(nil, p)
		}
	}
	return []func(tx *txn){
		mk(1, "b-post", "Banana", schema.StatusPublish, 0, 5*time.Hour, ""),
		mk(2, "a-post", "apple", schema.StatusPublish, time.Hour, time.Hour, ""),
		mk(3, "c-post", "Cherry", schema.StatusPublish, time.Hour, 2*time.Hour, ""), // same date as 2
		mk(4, "d-post", "Date draft", schema.StatusDraft, 3*time.Hour, 3*time.Hour, ""),
		mk(5, "e-post", "Elder", schema.StatusPublish, -time.Hour, -time.Hour, "secret"),
		mk(6, "f-post", "Fig", schema.StatusPending, 4*time.Hour, 4*time.Hour, ""),
		mk(7, "g-post", "Grape", schema.StatusFuture, 6*time.Hour, 6*time.Hour, ""),
		mk(8, "h-post", "Gone", schema.StatusPublish, 7*time.Hour, 7*time.Hour, ""),
		func(tx *txn) { tx.putPost(post(8, "h-post", "Gone", schema.StatusPublish, t0.Add(7*time.Hour)), nil) },
	}
}

func TestPosts(t *testing.T) {
	pub, full := replica.Public, replica.Full
	tests := []struct {
		name      string
		q         replica.PostQuery
		want      []schema.PostID
		wantTotal int
	}{
		{"fast path", replica.PostQuery{Limit: 10}, []schema.PostID{3, 2, 1, 5}, 4},
		{"fast path explicit date and publish", replica.PostQuery{OrderBy: "date", Statuses: []schema.PostStatus{schema.StatusPublish}, Limit: 10}, []schema.PostID{3, 2, 1, 5}, 4},
		{"fast path page", replica.PostQuery{Offset: 1, Limit: 2}, []schema.PostID{2, 1}, 4},
		{"fast path last page", replica.PostQuery{Offset: 3, Limit: 2}, []schema.PostID{5}, 4},
		{"fast path beyond the end", replica.PostQuery{Offset: 4, Limit: 2}, []schema.PostID{}, 4},
		{"fast path far beyond the end", replica.PostQuery{Offset: 100, Limit: 2}, []schema.PostID{}, 4},
		{"date ascending", replica.PostQuery{Asc: true, Limit: 10}, []schema.PostID{5, 1, 2, 3}, 4},
		{"title descending, case-insensitive", replica.PostQuery{OrderBy: "title", Limit: 10}, []schema.PostID{5, 3, 1, 2}, 4},
		{"title ascending", replica.PostQuery{OrderBy: "title", Asc: true, Limit: 10}, []schema.PostID{2, 1, 3, 5}, 4},
		{"slug ascending", replica.PostQuery{OrderBy: "slug", Asc: true, Limit: 10}, []schema.PostID{2, 1, 3, 5}, 4},
		{"slug descending", replica.PostQuery{OrderBy: "slug", Limit: 10}, []schema.PostID{5, 3, 1, 2}, 4},
		{"id ascending", replica.PostQuery{OrderBy: "id", Asc: true, Limit: 10}, []schema.PostID{1, 2, 3, 5}, 4},
		{"id descending", replica.PostQuery{OrderBy: "id", Limit: 10}, []schema.PostID{5, 3, 2, 1}, 4},
		{"modified descending", replica.PostQuery{OrderBy: "modified", Limit: 10}, []schema.PostID{1, 3, 2, 5}, 4},
		{"modified ascending", replica.PostQuery{OrderBy: "modified", Asc: true, Limit: 10}, []schema.PostID{5, 2, 3, 1}, 4},
		{"include", replica.PostQuery{Include: []schema.PostID{1, 3, 99, 4}, Limit: 10}, []schema.PostID{3, 1}, 2},
		{"exclude", replica.PostQuery{Exclude: []schema.PostID{3}, Limit: 10}, []schema.PostID{2, 1, 5}, 3},
		{"include and exclude", replica.PostQuery{Include: []schema.PostID{1, 2, 3}, Exclude: []schema.PostID{2}, Limit: 10}, []schema.PostID{3, 1}, 2},
		{"slugs", replica.PostQuery{Slugs: []string{"a-post", "c-post", "d-post", "nope"}, Limit: 10}, []schema.PostID{3, 2}, 2},
		{"filtered page", replica.PostQuery{Exclude: []schema.PostID{99}, Offset: 1, Limit: 2}, []schema.PostID{2, 1}, 4},
		{"filtered beyond the end", replica.PostQuery{Exclude: []schema.PostID{99}, Offset: 4, Limit: 2}, []schema.PostID{}, 4},
		{"public drafts are none", replica.PostQuery{Scope: pub, Statuses: []schema.PostStatus{schema.StatusDraft}, Limit: 10}, []schema.PostID{}, 0},
		{"full scope published", replica.PostQuery{Scope: full, Limit: 10}, []schema.PostID{3, 2, 1, 5}, 4},
		{"full scope with drafts", replica.PostQuery{Scope: full, Statuses: []schema.PostStatus{schema.StatusPublish, schema.StatusDraft}, Limit: 10},
			[]schema.PostID{4, 3, 2, 1, 5}, 5},
		{"full scope non-public statuses", replica.PostQuery{Scope: full, Statuses: []schema.PostStatus{schema.StatusDraft, schema.StatusPending, schema.StatusFuture}, Limit: 10},
			[]schema.PostID{7, 6, 4}, 3},
		{"full scope page", replica.PostQuery{Scope: full, Statuses: []schema.PostStatus{schema.StatusPublish, schema.StatusDraft}, Offset: 1, Limit: 2},
			[]schema.PostID{3, 2}, 5},
		{"full scope beyond the end", replica.PostQuery{Scope: full, Statuses: []schema.PostStatus{schema.StatusPublish, schema.StatusDraft}, Offset: 5, Limit: 2},
			[]schema.PostID{}, 5},
		{"full scope by title ascending", replica.PostQuery{Scope: full, Statuses: []schema.PostStatus{schema.StatusDraft, schema.StatusPublish}, OrderBy: "title", Asc: true, Limit: 10},
			[]schema.PostID{2, 1, 3, 4, 5}, 5},
		{"deleted posts are gone", replica.PostQuery{Scope: full, Include: []schema.PostID{8}, Limit: 10}, []schema.PostID{}, 0},
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, postWrites()...)
			sn := tn.Snapshot()
			for _, tt := range tests {
				got, total := sn.Posts(tt.q)
				if !slices.Equal(postIDs(got), tt.want) || total != tt.wantTotal {
					t.Errorf("%s: Posts(%+v) = %v (total %d), want %v (total %d)", tt.name, tt.q, postIDs(got), total, tt.want, tt.wantTotal)
				}
			}
			// A password-protected post: the public copy withholds the content, the private slot has it.
			if p := sn.Post(5, replica.Public); p == nil || !p.Protected || p.Password != "" || p.Content != "" {
				t.Fatalf("Post(5, Public) = %+v, want the protected public copy", p)
			}
			if p := sn.Post(5, replica.Full); p == nil || p.Protected || p.Password != "secret" || p.Content == "" {
				t.Fatalf("Post(5, Full) = %+v, want the full post", p)
			}
			if p := sn.Post(4, replica.Public); p != nil {
				t.Fatalf("Post(4, Public) of a draft = %+v, want nil", p)
			}
			if p := sn.Post(4, replica.Full); p == nil || p.Status != schema.StatusDraft {
				t.Fatalf("Post(4, Full) = %+v, want the draft", p)
			}
		})
	}
}

func TestPostsStatusTransitions(t *testing.T) {
	s, tn := buildCatalog(t, false, postWrites()...)
	w := s.log("shop")
	// The draft is published (priv tombstone, pub state); the protected post loses its password
	// (priv tombstone, pub state); the banana post goes back to draft (pub tombstone, priv state).
	sn := tn.Snapshot()
	tx := w.begin()
	d := sn.Post(4, replica.Full)
	np := *d
	np.Status = schema.StatusPublish
	tx.putPost(d, &np)
	e := sn.Post(5, replica.Full)
	ne := *e
	ne.Password = ""
	tx.putPost(e, &ne)
	b := sn.Post(1, replica.Full)
	nb := *b
	nb.Status = schema.StatusDraft
	tx.putPost(b, &nb)
	feed(s.r, tx.commit())

	sn = tn.Snapshot()
	if got, total := sn.Posts(replica.PostQuery{Limit: 10}); !slices.Equal(postIDs(got), []schema.PostID{4, 3, 2, 5}) || total != 4 {
		t.Fatalf("public posts = %v (total %d), want [4 3 2 5] (total 4)", postIDs(got), total)
	}
	if p := sn.Post(5, replica.Full); p == nil || p.Protected || p.Password != "" || p.Content == "" {
		t.Fatalf("Post(5, Full) = %+v, want the unprotected public post", p)
	}
	if p := sn.Post(1, replica.Full); p == nil || p.Status != schema.StatusDraft {
		t.Fatalf("Post(1, Full) = %+v, want the draft", p)
	}
	if p := sn.Post(1, replica.Public); p != nil {
		t.Fatalf("Post(1, Public) = %+v, want nil", p)
	}
}

// TestPostsFastPathMatchesGeneralPath compares the ordered-index answer with the general path's
// (forced by an exclusion of a missing id) on a larger set with many date ties.
func TestPostsFastPathMatchesGeneralPath(t *testing.T) {
	var writes []func(tx *txn)
	for i := int64(1); i <= 120; i++ {
		status := schema.StatusPublish
		if i%5 == 0 {
			status = schema.StatusDraft
		}
		date := t0.Add(time.Duration(i%7) * time.Hour)
		writes = append(writes, func(tx *txn) { tx.putPost(nil, post(i, "p-"+schema.IDString(i), "T", status, date)) })
	}
	for _, mode := range catalogModes {
		t.Run(mode.name, func(t *testing.T) {
			_, tn := buildCatalog(t, mode.oneBatch, writes...)
			sn := tn.Snapshot()
			for _, page := range []struct{ off, lim int }{{0, 200}, {0, 10}, {10, 10}, {90, 10}, {95, 10}, {96, 10}} {
				fast, ft := sn.Posts(replica.PostQuery{Offset: page.off, Limit: page.lim})
				slow, st := sn.Posts(replica.PostQuery{Exclude: []schema.PostID{100000}, Offset: page.off, Limit: page.lim})
				if !slices.Equal(postIDs(fast), postIDs(slow)) || ft != st {
					t.Fatalf("page %+v: fast path %v (total %d), general path %v (total %d)", page, postIDs(fast), ft, postIDs(slow), st)
				}
				if ft != 96 {
					t.Fatalf("page %+v: total %d, want 96", page, ft)
				}
			}
		})
	}
}

func TestDigest(t *testing.T) {
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
	w := s.log("shop")
	w.states = map[string]state{}
	feed(s.r, s.seedShop("shop"))
	tn := s.r.TenantBySlug("shop")

	// Updates of every kind, visibility moves, deletions, a protected post.
	sn := tn.Snapshot()
	tx := w.begin()
	p10 := sn.Product(10, replica.Public)
	d10 := *p10
	d10.Status = schema.ProductDraft
	d10.Prices = schema.Prices{"USD": 5, "JPY": 700}
	tx.putProduct(p10, &d10)
	for _, v := range sn.Variants(10) {
		nv := *v
		tx.putVariant(p10, &d10, v, &nv)
	}
	tx.putProduct(sn.Product(12, replica.Public), nil)
	tx.putCategory(false, category(2, "hats", 1), 2)
	tx.putCurrency(true, nil, "EUR")
	pp := post(33, "locked", "Locked", schema.StatusPublish, t0.Add(-time.Hour))
	pp.Password = "pw"
	pp.Meta = map[string]string{"footnotes": "[]"}
	tx.putPost(nil, pp)
	dp := sn.Post(31, replica.Full)
	np := *dp
	np.Status = schema.StatusPublish
	tx.putPost(dp, &np)
	feed(s.r, tx.commit())
	// A second transaction in another batch, with a non-UTC timestamp and unusual strings.
	tx = w.begin()
	p11 := tn.Snapshot().Product(11, replica.Public)
	n11 := *p11
	n11.Title = "Ünïcode <b>&amp;</b> \u2028 title"
	n11.UpdatedAt = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("", 2*3600))
	n11.CategoryIDs = []schema.CategoryID{1, 2}
	tx.putProduct(p11, &n11)
	feed(s.r, tx.commit())

	tests := []struct {
		name string
		vis  []schema.Visibility
	}{
		{"pub", []schema.Visibility{schema.Pub}},
		{"priv", []schema.Visibility{schema.Priv}},
		{"both", []schema.Visibility{schema.Pub, schema.Priv}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tn.Snapshot().Digest("shop", tt.vis...)
			want := w.digest(tt.vis...)
			if got.Len() != want.Len() || got.Sum() != want.Sum() {
				t.Fatalf("Digest(%v) = %d states %s, want %d states %s; diff:\n%s", tt.vis, got.Len(), got.Sum(), want.Len(), want.Sum(),
					strings.Join(got.Diff(want, 20), "\n"))
			}
		})
	}
	// The same states delivered as a fresh bootstrap (one change per state at the entity's
	// version, as a snapshot republish sends them) digest the same.
	r2 := newReplica(replica.Config{})
	r2.Reset("e")
	var batch []*schema.Change
	var top int64
	for _, st := range w.states {
		ver := entityVersion(st.value)
		top = max(top, ver)
		batch = append(batch, chg("shop", st.kind, st.id, st.vis, st.value, ver))
	}
	slices.SortFunc(batch, func(a, b *schema.Change) int { return int(a.Version - b.Version) })
	feed(r2, s.register(tenantEntry("shop", 0, schema.TenantActive)), append(batch, head("shop", w.version)))
	t2 := r2.TenantBySlug("shop")
	if got, want := t2.Snapshot().Digest("shop", schema.Pub, schema.Priv).Sum(), tn.Snapshot().Digest("shop", schema.Pub, schema.Priv).Sum(); got != want {
		t.Fatalf("digest of the republished state = %s, want %s", got, want)
	}
}

func entityVersion(v any) int64 {
	switch x := v.(type) {
	case *schema.Product:
		return x.Version
	case *schema.Variant:
		return x.Version
	case *schema.Category:
		return x.Version
	case *schema.Currency:
		return x.Version
	case *schema.Post:
		return x.Version
	}
	panic("unknown entity")
}

// TestPostsFastPathDatesOutsideUnixNano publishes posts dated outside the range of
// time.Time.UnixNano (before 1678 or after 2262), which the CMS accepts (any four-digit year).
// The ordered index must still list them newest first, like the general path does.
func TestPostsFastPathDatesOutsideUnixNano(t *testing.T) {
	dates := map[int64]time.Time{
		1: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
		2: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		3: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		4: time.Date(1200, 6, 1, 0, 0, 0, 0, time.UTC),
	}
	var writes []func(tx *txn)
	for id, d := range dates {
		writes = append(writes, func(tx *txn) {
			tx.putPost(nil, post(id, "p-"+schema.IDString(id), "T", schema.StatusPublish, d))
		})
	}
	_, tn := buildCatalog(t, false, writes...)
	sn := tn.Snapshot()
	want := []schema.PostID{3, 2, 1, 4}
	slow, _ := sn.Posts(replica.PostQuery{Exclude: []schema.PostID{99}, Limit: 10})
	if !slices.Equal(postIDs(slow), want) {
		t.Fatalf("general path = %v, want %v", postIDs(slow), want)
	}
	if fast, _ := sn.Posts(replica.PostQuery{Limit: 10}); !slices.Equal(postIDs(fast), want) {
		t.Fatalf("fast path = %v, want %v (the general path's order)", postIDs(fast), want)
	}
}
