package edge_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

// newCatalogFixture is the edge fixture plus products that search, filters and sorts can tell
// apart, a protected post with a featured image, all through the replica like the fixture's own:
//
//	id  slug            title           categories  USD    EUR (own)  availability
//	10  linen-shirt     Linen Shirt     2, 1        4900   4500       in_stock (M), low (L)
//	20  kettle          Kettle          3           2999   -          out_of_stock (no variants)
//	30  ceramic-teapot  Ceramic Teapot  3           3500   -          in_stock
//	31  tea-towel       Tea Towel       3           1200   -          out_of_stock
//	32  enamel-mug      Enamel Mug      3           1500   999        low_stock
//	34  oxford-shirt    Oxford Shirt    2           5900   -          in_stock
//	35  hidden-vase     Hidden Vase     3           100    -          (a draft: private state only)
//
// Category 2 (shirts) is a child of 1 (apparel). EUR converts at 0.92 where a product has no
// EUR price of its own; the mug's own EUR price makes it cheaper than the towel in EUR only.
func newCatalogFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, edge.Config{})
	fd := f.feed
	add := func(p *schema.Product, desc string, avail ...schema.Availability) {
		p.Description = desc
		fd.put("demo", schema.KindProduct, schema.IDString(p.ID), schema.Pub, p)
		for i, a := range avail {
			v := &schema.Variant{ID: schema.VariantID(int64(p.ID)*100 + int64(i)), ProductID: p.ID, SKU: fmt.Sprintf("%s-%d", p.Slug, i),
				Title: "Default", Availability: a, Position: i, CreatedAt: epochTime, UpdatedAt: epochTime}
			v.Normalize()
			fd.put("demo", schema.KindVariant, schema.IDString(v.ID), schema.Pub, v)
		}
	}
	add(product(30, "ceramic-teapot", "Ceramic Teapot", 3500, 3), "Brews loose tea for four.", schema.InStock)
	add(product(31, "tea-towel", "Tea Towel", 1200, 3), "Linen towel for the kitchen.", schema.OutOfStock)
	mug := product(32, "enamel-mug", "Enamel Mug", 1500, 3)
	mug.Prices["EUR"] = 999
	add(mug, "Holds coffee or tea.", schema.LowStock)
	add(product(34, "oxford-shirt", "Oxford Shirt", 5900, 2), "Cotton with a button-down collar.", schema.InStock)
	draft := product(35, "hidden-vase", "Hidden Vase", 100, 3)
	draft.Status = schema.ProductDraft
	draft.Description = "A vase nobody may see."
	fd.put("demo", schema.KindProduct, "35", schema.Priv, draft) // what an origin holds; never indexed
	locked := &schema.Post{ID: 102, Type: "post", Slug: "members-only", Status: schema.StatusPublish, Title: "Members only",
		Author: 2, FeaturedMedia: 7, CommentStatus: "closed", PingStatus: "closed", Format: "standard", Protected: true,
		DateGMT: epochTime.Add(3 * time.Hour), ModifiedGMT: epochTime.Add(4 * time.Hour)}
	locked.Normalize()
	fd.put("demo", schema.KindPost, "102", schema.Pub, locked)
	fd.head("demo")
	return f
}

// page is the commerce Page envelope as a client reads it.
type page struct {
	Data []struct {
		ID           int64  `json:"id"`
		Slug         string `json:"slug"`
		Availability string `json:"availability"`
		Price        struct {
			Amount int64 `json:"amount"`
		} `json:"price"`
	} `json:"data"`
	Page       int     `json:"page"`
	PerPage    int     `json:"per_page"`
	Total      int     `json:"total"`
	TotalPages int     `json:"total_pages"`
	Next       *string `json:"next"`
	Prev       *string `json:"prev"`
}

func (p *page) slugs() []string {
	out := []string{}
	for _, d := range p.Data {
		out = append(out, d.Slug)
	}
	return out
}

func (f *fixture) page(uri string) *page {
	f.t.Helper()
	resp := f.do(req{uri: uri})
	if resp.StatusCode() != 200 {
		f.t.Fatalf("GET %s: %d %s", uri, resp.StatusCode(), resp.Body())
	}
	var p page
	if err := json.Unmarshal(resp.Body(), &p); err != nil {
		f.t.Fatalf("GET %s: %v\n%s", uri, err, resp.Body())
	}
	return &p
}

// suggestions returns the slugs /api/search/autocomplete suggests.
func (f *fixture) suggestions(uri string) []string {
	f.t.Helper()
	resp := f.do(req{uri: uri})
	var l struct {
		Data []struct {
			Slug string `json:"slug"`
			URL  string `json:"url"`
		} `json:"data"`
	}
	if resp.StatusCode() != 200 || json.Unmarshal(resp.Body(), &l) != nil {
		f.t.Fatalf("GET %s: %d %s", uri, resp.StatusCode(), resp.Body())
	}
	out := []string{}
	for _, d := range l.Data {
		if d.URL != "https://api.shop.example/api/products/"+d.Slug {
			f.t.Fatalf("GET %s: suggestion url %q", uri, d.URL)
		}
		out = append(out, d.Slug)
	}
	return out
}

// cached makes sure uri is answered from the cache, so that a later check also proves the cached
// body was invalidated.
func (f *fixture) cached(uri string) {
	f.t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for hits := f.metric("vitrine_edge_cache_hits_total"); ; {
		f.do(req{uri: uri})
		if f.metric("vitrine_edge_cache_hits_total") > hits {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s never hit the cache", uri)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSearchGoldenBodies(t *testing.T) {
	f := newCatalogFixture(t)
	for _, tt := range []struct{ name, uri string }{
		{"search_tea", "/api/search?q=tea&per_page=2"},
		{"search_autocomplete", "/api/search/autocomplete?q=te"},
		{"products_filtered_eur", "/api/products?category=kitchen&sort=price_asc&currency=EUR&availability=in_stock,low_stock"},
		{"posts", "/api/posts"},
		{"posts_page2", "/api/posts?per_page=2&page=2"},
		{"search_bad_sort", "/api/search?q=tea&sort=cheapest"},
		{"products_bad_min_price", "/api/products?min_price=abc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := render(f.do(req{uri: tt.uri}))
			golden(t, tt.name, got)
			if again := render(f.do(req{uri: tt.uri})); string(again) != string(got) {
				t.Errorf("second answer differs:\n%s", again)
			}
		})
	}
}

func TestSearchRanking(t *testing.T) {
	f := newCatalogFixture(t)
	tests := []struct {
		name string
		uri  string
		want []string
	}{
		{"a title match outranks a description-only match", "/api/search?q=linen", []string{"linen-shirt", "tea-towel"}},
		{"exact title word, then title prefix, then description", "/api/search?q=tea", []string{"tea-towel", "ceramic-teapot", "enamel-mug"}},
		{"a trailing space turns prefix matching off", "/api/search?q=tea%20", []string{"tea-towel", "enamel-mug", "ceramic-teapot"}},
		{"one transposed letter", "/api/search?q=kettel", []string{"kettle"}},
		{"one missing letter", "/api/search?q=oxfrd", []string{"oxford-shirt"}},
		{"one wrong letter, any case and accent", "/api/search?q=T%C3%89APOT", []string{"ceramic-teapot"}},
		{"more matched words rank first", "/api/search?q=linen+towel", []string{"tea-towel", "linen-shirt"}},
		{"a draft is never found", "/api/search?q=vase", []string{}},
		{"nothing matches", "/api/search?q=zebra", []string{}},
		{"empty q lists the catalog newest first", "/api/search?q=", []string{"oxford-shirt", "enamel-mug", "tea-towel", "ceramic-teapot", "kettle", "linen-shirt"}},
		{"missing q lists the catalog like /api/products", "/api/search", []string{"oxford-shirt", "enamel-mug", "tea-towel", "ceramic-teapot", "kettle", "linen-shirt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.page(tt.uri)
			if got := p.slugs(); !slices.Equal(got, tt.want) || p.Total != len(tt.want) {
				t.Errorf("GET %s = %v (total %d), want %v", tt.uri, got, p.Total, tt.want)
			}
		})
	}
}

func TestAutocomplete(t *testing.T) {
	f := newCatalogFixture(t)
	tests := []struct {
		uri  string
		want []string
	}{
		{"/api/search/autocomplete?q=te", []string{"tea-towel", "ceramic-teapot"}}, // a title starting with the prefix first
		{"/api/search/autocomplete?q=KET", []string{"kettle"}},
		{"/api/search/autocomplete?q=shirt", []string{"linen-shirt", "oxford-shirt"}}, // featured first
		{"/api/search/autocomplete?q=oxford%20sh", []string{"oxford-shirt"}},
		{"/api/search/autocomplete?q=te&limit=1", []string{"tea-towel"}},
		{"/api/search/autocomplete?q=hid", []string{}}, // the draft
		{"/api/search/autocomplete?q=", []string{}},
		{"/api/search/autocomplete", []string{}},
		{"/api/search/autocomplete?q=towl", []string{}}, // prefixes, not typos
	}
	for _, tt := range tests {
		if got := f.suggestions(tt.uri); !slices.Equal(got, tt.want) {
			t.Errorf("GET %s = %v, want %v", tt.uri, got, tt.want)
		}
	}
}

// /api/products and /api/search share filters and sorts: the same arguments list the same
// products in the same order on both when search has no text.
func TestCatalogFiltersAndSorts(t *testing.T) {
	f := newCatalogFixture(t)
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"default: newest first", "", []string{"oxford-shirt", "enamel-mug", "tea-towel", "ceramic-teapot", "kettle", "linen-shirt"}},
		{"category slug includes its descendants", "category=apparel", []string{"oxford-shirt", "linen-shirt"}},
		{"category id", "category=1", []string{"oxford-shirt", "linen-shirt"}},
		{"leaf category", "category=shirts&sort=title", []string{"linen-shirt", "oxford-shirt"}},
		{"min and max price, inclusive", "min_price=1500&max_price=3500&sort=price_asc", []string{"enamel-mug", "kettle", "ceramic-teapot"}},
		{"max price alone", "max_price=1499", []string{"tea-towel"}},
		{"min price alone", "min_price=4901", []string{"oxford-shirt"}},
		{"availability list", "availability=out_of_stock", []string{"tea-towel", "kettle"}},
		{"availability, two classes", "availability=low_stock,in_stock&sort=price_desc", []string{"oxford-shirt", "linen-shirt", "ceramic-teapot", "enamel-mug"}},
		{"every class is no filter", "availability=in_stock,low_stock,out_of_stock", []string{"oxford-shirt", "enamel-mug", "tea-towel", "ceramic-teapot", "kettle", "linen-shirt"}},
		{"price ascending", "sort=price_asc", []string{"tea-towel", "enamel-mug", "kettle", "ceramic-teapot", "linen-shirt", "oxford-shirt"}},
		{"price descending", "sort=price_desc", []string{"oxford-shirt", "linen-shirt", "ceramic-teapot", "kettle", "enamel-mug", "tea-towel"}},
		{"title", "sort=title", []string{"ceramic-teapot", "enamel-mug", "kettle", "linen-shirt", "oxford-shirt", "tea-towel"}},
		// In EUR the shown price decides: the mug's own EUR price (999) is below the towel's
		// conversion (1104), and the shirt's own 4500 is within a bound its USD conversion is not.
		{"price ascending in EUR", "currency=EUR&sort=price_asc", []string{"enamel-mug", "tea-towel", "kettle", "ceramic-teapot", "linen-shirt", "oxford-shirt"}},
		{"max price in EUR", "currency=EUR&max_price=4505&min_price=1104&sort=price_desc", []string{"linen-shirt", "ceramic-teapot", "kettle", "tea-towel"}},
		{"price descending in JPY", "currency=JPY&sort=price_desc&category=shirts", []string{"oxford-shirt", "linen-shirt"}},
		{"filters combine", "category=kitchen&availability=in_stock,low_stock&max_price=2000", []string{"enamel-mug"}},
		{"nothing passes", "category=shirts&max_price=100", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/products", "/api/search"} {
				uri := path + "?" + tt.query
				p := f.page(uri)
				if got := p.slugs(); !slices.Equal(got, tt.want) || p.Total != len(tt.want) {
					t.Errorf("GET %s = %v (total %d), want %v", uri, got, p.Total, tt.want)
				}
			}
		})
	}
	// Shown prices are the ones filtered on.
	for _, d := range f.page("/api/products?currency=EUR&sort=price_asc").Data {
		want := map[string]int64{"enamel-mug": 999, "tea-towel": 1104, "kettle": 2759, "ceramic-teapot": 3220, "linen-shirt": 4500, "oxford-shirt": 5428}[d.Slug]
		if d.Price.Amount != want {
			t.Errorf("%s shown at %d EUR, want %d", d.Slug, d.Price.Amount, want)
		}
	}
}

func TestCatalogPagination(t *testing.T) {
	f := newCatalogFixture(t)
	for _, path := range []string{"/api/products", "/api/search"} {
		q := "?sort=price_asc&per_page=4&availability=in_stock,low_stock,out_of_stock&currency=EUR"
		first := f.page(path + q)
		if first.Total != 6 || first.TotalPages != 2 || len(first.Data) != 4 || first.Prev != nil || first.Next == nil {
			t.Fatalf("%s page 1: %+v", path, first)
		}
		wantNext := "https://api.shop.example" + path + "?per_page=4&currency=EUR&availability=in_stock,low_stock,out_of_stock&sort=price_asc&page=2"
		if *first.Next != wantNext {
			t.Fatalf("%s next = %s, want %s", path, *first.Next, wantNext)
		}
		second := f.page(strings.TrimPrefix(*first.Next, "https://api.shop.example"))
		if got := append(first.slugs(), second.slugs()...); !slices.Equal(got, []string{"enamel-mug", "tea-towel", "kettle", "ceramic-teapot", "linen-shirt", "oxford-shirt"}) {
			t.Fatalf("%s pages 1 and 2 = %v", path, got)
		}
		if second.Next != nil || second.Prev == nil || !strings.HasSuffix(*second.Prev, "&page=1") {
			t.Fatalf("%s page 2 links: next %v prev %v", path, second.Next, second.Prev)
		}
		beyond := f.page(path + q + "&page=9")
		if len(beyond.Data) != 0 || beyond.Total != 6 || beyond.Prev == nil || !strings.HasSuffix(*beyond.Prev, "&page=2") {
			t.Fatalf("%s page 9: %+v", path, beyond)
		}
	}
	// q is escaped in links.
	p := f.page("/api/search?q=tea%20%26%20co&per_page=1")
	if p.Next == nil || !strings.Contains(*p.Next, "q=tea+%26+co") {
		t.Fatalf("search link %v does not carry q escaped", p.Next)
	}
}

func TestCatalogBadArguments(t *testing.T) {
	f := newCatalogFixture(t)
	tests := []struct {
		uri, field string
	}{
		{"/api/products?per_page=0", "per_page"},
		{"/api/search?q=tea&per_page=0", "per_page"},
		{"/api/products?per_page=101", "per_page"},
		{"/api/products?min_price=abc", "min_price"},
		{"/api/search?max_price=1.5", "max_price"},
		{"/api/products?max_price=", "max_price"},
		{"/api/products?min_price=-1", "min_price"},
		{"/api/products?min_price=10&max_price=9", "min_price"},
		{"/api/products?sort=cheapest", "sort"},
		{"/api/products?sort=relevance", "sort"}, // no text to be relevant to
		{"/api/search?sort=PRICE_ASC", "sort"},
		{"/api/products?availability=sold_out", "availability"},
		{"/api/search?availability=in_stock,nope", "availability"},
		{"/api/products?category=nope", "category"},
		{"/api/search?q=x&category=999", "category"},
		{"/api/products?page=0", "page"},
		{"/api/search/autocomplete?q=te&limit=0", "limit"},
		{"/api/search/autocomplete?q=te&limit=21", "limit"},
		{"/api/posts?per_page=0", "per_page"},
		{"/api/posts?page=abc", "page"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			resp := f.do(req{uri: tt.uri})
			body := decodeJSON(t, resp.Body())
			msg, _ := body["error"].(string)
			if resp.StatusCode() != 400 || msg == "" || body["code"] != "invalid" || body["field"] != tt.field {
				t.Fatalf("GET %s = %d %s, want 400 with an error about %s", tt.uri, resp.StatusCode(), resp.Body(), tt.field)
			}
		})
	}
}

// Writes applied through the replica reach search results, suggestions and filtered lists at
// once, cached answers included.
func TestSearchFollowsReplica(t *testing.T) {
	f := newCatalogFixture(t)
	uris := []string{"/api/search?q=kettle", "/api/search/autocomplete?q=ket", "/api/products?availability=in_stock&sort=title",
		"/api/search?q=tea", "/api/products?category=kitchen"}
	for _, u := range uris {
		f.cached(u)
	}
	if got := f.page("/api/search?q=kettle").slugs(); !slices.Equal(got, []string{"kettle"}) {
		t.Fatalf("before: %v", got)
	}

	// The kettle is renamed and comes in stock.
	k := product(20, "kettle", "Whistling Tea Kettle", 2999, 3)
	f.feed.put("demo", schema.KindProduct, "20", schema.Pub, k)
	v := &schema.Variant{ID: 2000, ProductID: 20, SKU: "KT-1", Title: "Default", Availability: schema.InStock, CreatedAt: epochTime, UpdatedAt: epochTime}
	v.Normalize()
	f.feed.put("demo", schema.KindVariant, "2000", schema.Pub, v)
	f.feed.head("demo")
	// Both titles have "tea"; the kettle's description has it too.
	if got := f.page("/api/search?q=tea").slugs(); !slices.Equal(got, []string{"kettle", "tea-towel", "ceramic-teapot", "enamel-mug"}) {
		t.Errorf("search tea after the rename = %v", got)
	}
	if got := f.suggestions("/api/search/autocomplete?q=whis"); !slices.Equal(got, []string{"kettle"}) {
		t.Errorf("suggestions whis = %v", got)
	}
	if got := f.page("/api/products?availability=in_stock&sort=title").slugs(); !slices.Equal(got, []string{"ceramic-teapot", "linen-shirt", "oxford-shirt", "kettle"}) {
		t.Errorf("in stock after the restock = %v", got)
	}

	// The kettle leaves the public catalog (deactivated: its public state is tombstoned).
	f.feed.del("demo", schema.KindVariant, "2000", schema.Pub)
	f.feed.del("demo", schema.KindProduct, "20", schema.Pub)
	f.feed.head("demo")
	for _, u := range []string{"/api/search?q=kettle", "/api/search?q=whistling"} {
		if p := f.page(u); p.Total != 0 {
			t.Errorf("GET %s after the deactivation = %v", u, p.slugs())
		}
	}
	if got := f.suggestions("/api/search/autocomplete?q=ket"); len(got) != 0 {
		t.Errorf("suggestions after the deactivation = %v", got)
	}
	if got := f.page("/api/products?category=kitchen").slugs(); slices.Contains(got, "kettle") || len(got) != 3 {
		t.Errorf("kitchen after the deactivation = %v", got)
	}
}

func TestPostsFollowReplica(t *testing.T) {
	f := newCatalogFixture(t)
	f.cached("/api/posts")
	p := &schema.Post{ID: 103, Type: "post", Slug: "autumn", Status: schema.StatusPublish, Title: "Autumn", Content: "Leaves.",
		Author: 1, CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: epochTime.Add(5 * time.Hour), ModifiedGMT: epochTime.Add(5 * time.Hour)}
	p.Normalize()
	f.feed.put("demo", schema.KindPost, "103", schema.Pub, p)
	f.feed.del("demo", schema.KindPost, "100", schema.Pub) // unpublished
	f.feed.head("demo")
	var l struct {
		Data []struct {
			Slug string `json:"slug"`
		} `json:"data"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal(f.do(req{uri: "/api/posts"}).Body(), &l); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range l.Data {
		got = append(got, d.Slug)
	}
	if want := []string{"autumn", "members-only", "summer-sale"}; !slices.Equal(got, want) || l.Total != 3 {
		t.Fatalf("posts after the writes = %v (total %d), want %v", got, l.Total, want)
	}
}

// BenchmarkCatalogMiss measures edge misses (cache off) of the catalog routes over 2,000
// products with searchtest's synthetic text: routing, argument parsing, the query, rendering of
// a 24-product page and the response, through the edge's handler.
func BenchmarkCatalogMiss(b *testing.B) {
	f := newFixture(b, edge.Config{CacheBytes: -1, RateLimit: 1 << 30})
	for _, d := range searchtest.Catalog(2000, 42) {
		id := 1000 + int64(d.ID)
		p := product(id, d.Slug, d.Title, d.Price, schema.CategoryID(1+int64(d.CategoryIDs[0])%3))
		p.Description = d.Description
		if id%3 == 0 {
			p.Prices["EUR"] = d.Price * 9 / 10
		}
		f.feed.put("demo", schema.KindProduct, schema.IDString(id), schema.Pub, p)
		v := &schema.Variant{ID: schema.VariantID(id * 10), ProductID: p.ID, SKU: "s" + schema.IDString(id), Availability: d.Availability}
		v.Normalize()
		f.feed.put("demo", schema.KindVariant, schema.IDString(int64(v.ID)), schema.Pub, v)
	}
	f.feed.head("demo")
	for _, uri := range []string{
		"/api/products",
		"/api/products?category=kitchen&sort=price_asc",
		"/api/products?availability=in_stock&min_price=1000&max_price=5000",
		"/api/products?currency=EUR&sort=price_asc",
		"/api/search?q=lamp",
		"/api/search?q=lapm",
		"/api/search?q=red+lamp+&sort=price_desc",
		"/api/search/autocomplete?q=la",
		"/api/posts",
	} {
		b.Run(strings.ReplaceAll(strings.TrimPrefix(uri, "/api/"), "/", "-"), func(b *testing.B) {
			var rq fasthttp.Request
			rq.SetRequestURI(uri)
			rq.Header.SetHost("shop.example.test")
			ctx := new(fasthttp.RequestCtx)
			ctx.Init(&rq, nil, nil)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				f.srv.Handler(ctx)
			}
			if ctx.Response.StatusCode() != 200 {
				b.Fatalf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
			}
			b.ReportMetric(float64(len(ctx.Response.Body())), "body-bytes")
		})
	}
}
