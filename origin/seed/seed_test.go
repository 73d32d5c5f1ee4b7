package seed_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/origin/seed"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// fixedNow is the store clock of the tests that compare timestamps or digests.
var fixedNow = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

// demoStore opens a fresh database (with a fixed clock when fixed is set) holding the empty
// tenant "demo" and its administrator.
func demoStore(t *testing.T, fixed bool) (*store.DB, *schema.Tenant, schema.UserID) {
	t.Helper()
	var cfg store.Config
	if fixed {
		cfg.Now = func() time.Time { return fixedNow }
	}
	db, _ := storetest.Open(t, cfg)
	tn := storetest.Tenant(t, db, "demo")
	u := &schema.User{Login: "admin", Email: "admin@example.com", Role: schema.RoleAdministrator}
	if err := db.CreateUser(context.Background(), tn, u); err != nil {
		t.Fatal(err)
	}
	return db, tn, u.ID
}

// state is the tenant's replicated state, read back through a snapshot.
type state struct {
	categories map[schema.CategoryID]*schema.Category
	currencies map[string]*schema.Currency
	products   map[schema.ProductID]*schema.Product
	variants   map[schema.ProductID][]*schema.Variant
	posts      []*schema.Post
}

func readState(t *testing.T, db *store.DB, slug string) *state {
	t.Helper()
	ctx := context.Background()
	log, err := db.LogBySlug(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	s := &state{categories: map[schema.CategoryID]*schema.Category{}, currencies: map[string]*schema.Currency{},
		products: map[schema.ProductID]*schema.Product{}, variants: map[schema.ProductID][]*schema.Variant{}}
	_, err = db.Snapshot(ctx, log, func(c schema.Change) error {
		switch c.Kind {
		case schema.KindCategory:
			var v schema.Category
			return unmarshalInto(c.Data, &v, func() { s.categories[v.ID] = &v })
		case schema.KindCurrency:
			var v schema.Currency
			return unmarshalInto(c.Data, &v, func() { s.currencies[v.Code] = &v })
		case schema.KindProduct:
			var v schema.Product
			return unmarshalInto(c.Data, &v, func() { s.products[v.ID] = &v })
		case schema.KindVariant:
			var v schema.Variant
			return unmarshalInto(c.Data, &v, func() { s.variants[v.ProductID] = append(s.variants[v.ProductID], &v) })
		case schema.KindPost:
			var v schema.Post
			return unmarshalInto(c.Data, &v, func() { s.posts = append(s.posts, &v) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func unmarshalInto(data []byte, v any, keep func()) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	keep()
	return nil
}

// outboxCounts returns the number of rows in the replication outbox of the tenant's log and of
// the platform log, and in the event outbox.
func outboxCounts(t *testing.T, db *store.DB, slug string) [3]int {
	t.Helper()
	ctx := context.Background()
	var out [3]int
	for i, name := range []string{slug, schema.PlatformLog} {
		log, err := db.LogBySlug(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.OutboxRows(ctx, log.ID, 0, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = len(rows)
	}
	events, err := db.PendingEvents(ctx, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	out[2] = len(events)
	return out
}

type progressCall struct {
	done, total int
	stage       string
}

func TestDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, tn, author := demoStore(t, true)
	var calls []progressCall
	sum, err := seed.Demo(ctx, db, tn, seed.Options{Products: 150, Posts: 12, Seed: 42, Author: author, BatchProducts: 40,
		Progress: func(done, total int, stage string) { calls = append(calls, progressCall{done, total, stage}) }})
	if err != nil {
		t.Fatal(err)
	}
	s := readState(t, db, "demo")
	var variants []*schema.Variant
	for _, vs := range s.variants {
		variants = append(variants, vs...)
	}
	var published, drafts int
	for _, p := range s.posts {
		switch p.Status {
		case schema.StatusPublish:
			published++
		case schema.StatusDraft:
			drafts++
		default:
			t.Errorf("post %q has status %s", p.Title, p.Status)
		}
	}

	t.Run("summary", func(t *testing.T) {
		got := seed.Summary{Currencies: len(s.currencies), Categories: len(s.categories), Products: len(s.products),
			Variants: len(variants), Posts: published}
		if sum != got {
			t.Errorf("summary %+v, store holds %+v", sum, got)
		}
		if sum.Currencies != 3 || sum.Products != 150 || sum.Posts != 12 {
			t.Errorf("summary %+v, want 3 currencies, 150 products, 12 posts", sum)
		}
		if drafts < 1 || drafts > 3 {
			t.Errorf("%d drafts for 12 published posts, want about 10%%", drafts)
		}
	})

	t.Run("progress", func(t *testing.T) {
		want := []progressCall{{3, 3, "currencies"}, {len(s.categories), len(s.categories), "categories"},
			{40, 150, "products"}, {80, 150, "products"}, {120, 150, "products"}, {150, 150, "products"},
			{12 + drafts, 12 + drafts, "posts"}}
		if !slices.Equal(calls, want) {
			t.Errorf("progress calls\n got %v\nwant %v", calls, want)
		}
	})

	t.Run("currencies", func(t *testing.T) {
		want := map[string]schema.Currency{
			"USD": {Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"},
			"EUR": {Code: "EUR", Name: "Euro", Symbol: "€", Exponent: 2},
			"JPY": {Code: "JPY", Name: "Japanese Yen", Symbol: "¥", Exponent: 0},
		}
		for code, w := range want {
			c := s.currencies[code]
			if c == nil || c.Name != w.Name || c.Symbol != w.Symbol || c.Exponent != w.Exponent || (w.Rate != "" && c.Rate != w.Rate) {
				t.Errorf("currency %s = %+v, want %+v", code, c, w)
			}
		}
		reg, err := db.TenantBySlug(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(reg.Currencies, []string{"USD", "EUR", "JPY"}) {
			t.Errorf("registry currencies %v, want [USD EUR JPY]", reg.Currencies)
		}
	})

	t.Run("categories", func(t *testing.T) {
		slugs := map[string]bool{}
		children := map[schema.CategoryID][]*schema.Category{}
		hasGrandchild := false
		for _, c := range s.categories {
			if slugs[c.Slug] {
				t.Errorf("category slug %s is used twice", c.Slug)
			}
			slugs[c.Slug] = true
			if err := schema.ValidateCategory(c); err != nil {
				t.Errorf("category %s: %v", c.Slug, err)
			}
			if c.Slug != schema.Slugify(c.Name) && !strings.HasSuffix(c.Slug, "-"+schema.Slugify(c.Name)) {
				t.Errorf("category %q has slug %s", c.Name, c.Slug)
			}
			depth := 1
			for p := c.ParentID; p != 0; depth++ {
				parent := s.categories[p]
				if parent == nil {
					t.Fatalf("category %s: parent %d does not exist", c.Slug, p)
				}
				if parent.ID > c.ID {
					t.Errorf("category %s was created before its parent %s", c.Slug, parent.Slug)
				}
				p = parent.ParentID
			}
			if depth > 3 {
				t.Errorf("category %s is %d deep", c.Slug, depth)
			}
			hasGrandchild = hasGrandchild || depth == 3
			children[c.ParentID] = append(children[c.ParentID], c)
		}
		if n := len(children[0]); n < 6 || n > 8 {
			t.Errorf("%d root categories, want 6 to 8", n)
		}
		for _, root := range children[0] {
			if n := len(children[root.ID]); n < 3 || n > 6 {
				t.Errorf("root %s has %d children, want 3 to 6", root.Slug, n)
			}
		}
		if !hasGrandchild {
			t.Error("no category is 3 deep")
		}
		for parent, cs := range children {
			var positions []int
			for _, c := range cs {
				positions = append(positions, c.Position)
			}
			slices.Sort(positions)
			for i, p := range positions {
				if p != i+1 {
					t.Errorf("children of %d have positions %v, want 1..%d", parent, positions, len(cs))
					break
				}
			}
		}
	})

	t.Run("products", func(t *testing.T) {
		parentOf := func(id schema.CategoryID) schema.CategoryID { return s.categories[id].ParentID }
		isParent := map[schema.CategoryID]bool{}
		for _, c := range s.categories {
			isParent[c.ParentID] = true
		}
		slugs := map[string]bool{}
		statuses := map[schema.ProductStatus]int{}
		featured, withEUR := 0, 0
		for _, p := range s.products {
			if slugs[p.Slug] {
				t.Errorf("product slug %s is used twice", p.Slug)
			}
			slugs[p.Slug] = true
			if err := schema.ValidateProduct(p, schema.ReservedProductSlugs()); err != nil {
				t.Errorf("product %s: %v", p.Slug, err)
			}
			if !strings.HasPrefix(p.Slug, schema.Slugify(p.Title)) {
				t.Errorf("product %q has slug %s", p.Title, p.Slug)
			}
			if n := strings.Count(p.Description, ". ") + 1; n < 2 || n > 5 || !strings.HasSuffix(p.Description, ".") {
				t.Errorf("product %s: description of %d sentences: %q", p.Slug, n, p.Description)
			}
			statuses[p.Status]++
			if p.Featured {
				featured++
			}
			if usd := p.Prices["USD"]; usd < 499 || usd > 29900 {
				t.Errorf("product %s costs %d USD cents", p.Slug, usd)
			}
			if eur, ok := p.Prices["EUR"]; ok {
				withEUR++
				if eur <= 0 || eur >= p.Prices["USD"] {
					t.Errorf("product %s: EUR %d for USD %d", p.Slug, eur, p.Prices["USD"])
				}
			}
			if len(p.Prices) > 2 {
				t.Errorf("product %s has prices %v", p.Slug, p.Prices)
			}
			if n := len(p.Images); n < 1 || n > 4 {
				t.Errorf("product %s has %d images", p.Slug, n)
			}
			for _, im := range p.Images {
				if !strings.HasPrefix(im.URL, "https://images.vitrine.dev/demo/") || im.Width <= 0 || im.Height <= 0 || im.Alt == "" {
					t.Errorf("product %s: image %+v", p.Slug, im)
				}
			}
			ids := p.CategoryIDs
			if len(ids) < 1 || len(ids) > 3 {
				t.Fatalf("product %s is in %d categories", p.Slug, len(ids))
			}
			if s.categories[ids[0]] == nil || isParent[ids[0]] {
				t.Errorf("product %s: first category %d is not a leaf", p.Slug, ids[0])
			}
			for i := 1; i < len(ids); i++ {
				if parentOf(ids[i-1]) != ids[i] {
					t.Errorf("product %s: categories %v are not a leaf and its ancestors", p.Slug, ids)
				}
			}
		}
		n := len(s.products)
		if a := statuses[schema.ProductActive]; a < n*85/100 || statuses[schema.ProductDraft] == 0 || statuses[schema.ProductArchived] == 0 {
			t.Errorf("statuses %v, want mostly active with some drafts and archived", statuses)
		}
		if featured < n*3/100 || featured > n*15/100 {
			t.Errorf("%d of %d products are featured, want about 8%%", featured, n)
		}
		if withEUR < n*15/100 || withEUR > n*45/100 {
			t.Errorf("%d of %d products have an EUR price, want about 30%%", withEUR, n)
		}
	})

	t.Run("variants", func(t *testing.T) {
		sku := regexp.MustCompile(`^[A-Z]{3}-[0-9]{6}(-[A-Z0-9]+)*$`)
		skus := map[string]bool{}
		avail := map[schema.Availability]int{}
		overrides := 0
		for id, p := range s.products {
			vs := s.variants[id]
			if len(vs) < 1 || len(vs) > 6 || len(vs) > store.MaxVariantsPerProduct {
				t.Errorf("product %s has %d variants", p.Slug, len(vs))
			}
			positions := map[int]bool{}
			for _, v := range vs {
				if err := schema.ValidateVariant(v); err != nil {
					t.Errorf("variant %s: %v", v.SKU, err)
				}
				if skus[v.SKU] {
					t.Errorf("SKU %s is used twice", v.SKU)
				}
				skus[v.SKU] = true
				if !sku.MatchString(v.SKU) {
					t.Errorf("SKU %q is malformed", v.SKU)
				}
				positions[v.Position] = true
				avail[v.Availability]++
				if usd, ok := v.Prices["USD"]; ok {
					overrides++
					if usd <= p.Prices["USD"] {
						t.Errorf("variant %s overrides %d with %d: the product price should be the lowest", v.SKU, p.Prices["USD"], usd)
					}
				}
				if _, ok := v.Prices["EUR"]; ok && p.Prices["EUR"] == 0 {
					t.Errorf("variant %s has an EUR price its product lacks", v.SKU)
				}
			}
			for i := range len(vs) {
				if !positions[i+1] {
					t.Errorf("product %s: variant positions %v, want 1..%d", p.Slug, positions, len(vs))
					break
				}
			}
		}
		for _, a := range []schema.Availability{schema.InStock, schema.LowStock, schema.OutOfStock} {
			if avail[a] == 0 {
				t.Errorf("no variant is %s: %v", a, avail)
			}
		}
		if avail[schema.InStock] < len(skus)/2 {
			t.Errorf("availability %v, want most in stock", avail)
		}
		if overrides == 0 {
			t.Error("no variant overrides its product's price")
		}
	})

	t.Run("posts", func(t *testing.T) {
		slugs := map[string]bool{}
		excerpts := 0
		yearAgo := fixedNow.Add(-365 * 24 * time.Hour)
		for _, p := range s.posts {
			if err := schema.ValidatePost(p); err != nil {
				t.Errorf("post %s: %v", p.Slug, err)
			}
			if p.Slug == "" || slugs[p.Slug] {
				t.Errorf("post slug %q is empty or used twice", p.Slug)
			}
			slugs[p.Slug] = true
			if p.Author != author || p.CommentStatus != "open" || p.PingStatus != "open" || p.Format != "standard" || p.Type != "post" {
				t.Errorf("post %s: author %d, comment %s, ping %s, format %s, type %s", p.Slug, p.Author, p.CommentStatus, p.PingStatus, p.Format, p.Type)
			}
			paragraphs := strings.Split(p.Content, "\n\n")
			if len(paragraphs) < 3 || len(paragraphs) > 6 || slices.Contains(paragraphs, "") {
				t.Errorf("post %s has %d paragraphs", p.Slug, len(paragraphs))
			}
			if p.Excerpt != "" {
				excerpts++
			}
			if p.ModifiedGMT.Before(p.DateGMT) || p.ModifiedGMT.After(fixedNow) {
				t.Errorf("post %s: modified %v, dated %v", p.Slug, p.ModifiedGMT, p.DateGMT)
			}
			if p.Status == schema.StatusPublish && (!p.DateGMT.After(yearAgo) || p.DateGMT.After(fixedNow)) {
				t.Errorf("post %s is dated %v, not in the past year", p.Slug, p.DateGMT)
			}
		}
		if excerpts == 0 || excerpts == len(s.posts) {
			t.Errorf("%d of %d posts have an excerpt, want about half", excerpts, len(s.posts))
		}
	})
}

func TestDemoIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	digest := func(seedValue int64) string {
		db, tn, author := demoStore(t, true)
		if _, err := seed.Demo(ctx, db, tn, seed.Options{Products: 120, Posts: 8, Seed: seedValue, Author: author}); err != nil {
			t.Fatal(err)
		}
		log, err := db.LogBySlug(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		d, err := db.Digest(ctx, log, schema.Pub, schema.Priv)
		if err != nil {
			t.Fatal(err)
		}
		return d.Sum()
	}
	a := digest(7)
	tests := []struct {
		name string
		seed int64
		same bool
	}{
		{"same seed", 7, true},
		{"other seed", 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b := digest(tt.seed); (a == b) != tt.same {
				t.Errorf("seed 7 gives %s, seed %d gives %s; want same = %v", a, tt.seed, b, tt.same)
			}
		})
	}
}

func TestDemoOnlySeedsEmptyStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, db *store.DB, tn *schema.Tenant, author schema.UserID)
	}{
		{"seeded before", func(t *testing.T, db *store.DB, tn *schema.Tenant, author schema.UserID) {
			if _, err := seed.Demo(ctx, db, tn, seed.Options{Products: 20, Posts: 2, Author: author}); err != nil {
				t.Fatal(err)
			}
		}},
		{"one product of its own", func(t *testing.T, db *store.DB, tn *schema.Tenant, author schema.UserID) {
			_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
				return tx.CreateProduct(ctx, tn, &schema.Product{Slug: "mine", Title: "Mine", Status: schema.ProductDraft,
					Prices: schema.Prices{"USD": 100}})
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, tn, author := demoStore(t, false)
			tt.setup(t, db, tn, author)
			before := outboxCounts(t, db, "demo")
			called := false
			sum, err := seed.Demo(ctx, db, tn, seed.Options{Products: 20, Posts: 2, Author: author,
				Progress: func(int, int, string) { called = true }})
			if !errors.Is(err, seed.ErrNotEmpty) {
				t.Fatalf("second seed: %v, want ErrNotEmpty", err)
			}
			if sum != (seed.Summary{}) || called {
				t.Errorf("refused seed reports %+v (progress called: %v)", sum, called)
			}
			if after := outboxCounts(t, db, "demo"); after != before {
				t.Errorf("outbox rows (tenant, platform, events) went from %v to %v", before, after)
			}
		})
	}
}

func TestDemoRejectsBadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, tn, author := demoStore(t, false)
	euro := &schema.Tenant{Slug: "euro", Name: "Euro store", BaseURL: "https://euro.example.test", Currencies: []string{"EUR"}}
	if err := db.CreateTenant(ctx, euro); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tenant *schema.Tenant
		opt    seed.Options
	}{
		{"negative products", tn, seed.Options{Products: -1, Author: author}},
		{"negative posts", tn, seed.Options{Posts: -1, Author: author}},
		{"negative batch", tn, seed.Options{BatchProducts: -5, Author: author}},
		{"no author", tn, seed.Options{Products: 10, Posts: 3}},
		{"default currency not USD", euro, seed.Options{Products: 10, Posts: 3, Author: author}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := outboxCounts(t, db, tt.tenant.Slug)
			if _, err := seed.Demo(ctx, db, tt.tenant, tt.opt); err == nil || errors.Is(err, seed.ErrNotEmpty) {
				t.Fatalf("Demo(%+v) = %v, want an options error", tt.opt, err)
			}
			if after := outboxCounts(t, db, tt.tenant.Slug); after != before {
				t.Errorf("outbox rows went from %v to %v", before, after)
			}
		})
	}
}

func TestDemoBoundsTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name        string
		products    int
		batch       int
		wantPerTxn  int // products per transaction
		wantBatches int
	}{
		{"small batches", 30, 7, 7, 5},
		{"batch above the change bound is capped", 300, 100_000, 128, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, tn, author := demoStore(t, false)
			var done []int
			_, err := seed.Demo(ctx, db, tn, seed.Options{Products: tt.products, Posts: 1, Author: author, BatchProducts: tt.batch,
				Progress: func(d, total int, stage string) {
					if stage == "products" {
						done = append(done, d)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			log, err := db.LogBySlug(ctx, "demo")
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.OutboxRows(ctx, log.ID, 0, 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			changes := map[int64]int{}
			products := map[int64]int{}
			for _, r := range rows {
				changes[r.TxnFirst]++
				if strings.Contains(r.Key, ".product.") {
					products[r.TxnFirst]++
				}
			}
			for first, n := range changes {
				if n > schema.MaxChangesPerTxn {
					t.Errorf("transaction at %d records %d changes", first, n)
				}
				if products[first] > tt.wantPerTxn {
					t.Errorf("transaction at %d creates %d products, want at most %d", first, products[first], tt.wantPerTxn)
				}
			}
			if len(products) != tt.wantBatches || len(done) != tt.wantBatches || done[len(done)-1] != tt.products {
				t.Errorf("%d product transactions, progress %v; want %d batches", len(products), done, tt.wantBatches)
			}
		})
	}
}

func TestDemoDefaultSize(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 2000 products")
	}
	ctx := context.Background()
	db, tn, author := demoStore(t, false)
	start := time.Now()
	sum, err := seed.Demo(ctx, db, tn, seed.Options{Author: author})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %+v in %v (%.0f products/s)", sum, elapsed.Round(time.Millisecond), float64(sum.Products)/elapsed.Seconds())
	if sum.Products != seed.DefaultProducts || sum.Posts != seed.DefaultPosts || sum.Currencies != 3 {
		t.Errorf("summary %+v", sum)
	}
}
