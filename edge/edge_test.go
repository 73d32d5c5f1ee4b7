package edge_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
	"vitrine/edge/pipeline"
	"vitrine/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

var requestID = regexp.MustCompile(`"request_id": "[^"]*"`)

// golden compares got with testdata/name.golden (rewritten under -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

// render formats a response for a golden file: status, the headers that carry meaning (not the
// per-request ones), and the body indented.
func render(resp *fasthttp.Response) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n", resp.StatusCode())
	for _, h := range []string{"Content-Type", "X-WP-Total", "X-WP-TotalPages", "Link", "Allow", "Cache-Control"} {
		if v := resp.Header.Peek(h); len(v) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteByte('\n')
	var body bytes.Buffer
	if json.Indent(&body, resp.Body(), "", "  ") != nil {
		body.Write(resp.Body())
	}
	// Request ids differ per request.
	out := requestID.ReplaceAll(body.Bytes(), []byte(`"request_id": "<request id>"`))
	body.Reset()
	body.Write(out)
	b.Write(body.Bytes())
	b.WriteByte('\n')
	return b.Bytes()
}

func TestGoldenBodies(t *testing.T) {
	f := newFixture(t, edge.Config{})
	tests := []struct {
		name string
		uri  string
	}{
		{"products_list", "/api/products"},
		{"products_list_page2_eur", "/api/products?per_page=1&page=2&currency=EUR"},
		{"products_featured", "/api/products/featured"},
		{"product_item", "/api/products/linen-shirt"},
		{"product_item_jpy", "/api/products/linen-shirt?currency=JPY"},
		{"product_variants", "/api/products/linen-shirt/variants"},
		{"categories", "/api/categories"},
		{"currencies", "/api/currencies"},
		{"product_missing", "/api/products/no-such-thing"},
		{"bad_currency", "/api/products?currency=XXX"},
		{"bad_per_page", "/api/products?per_page=1000"},
		{"cms_posts", "/index.php?rest_route=/cms/v2/posts&per_page=1"},
		{"cms_post", "/index.php?rest_route=/cms/v2/posts/101"},
		{"cms_post_embed", "/index.php?rest_route=/cms/v2/posts/101&context=embed"},
		{"cms_post_missing", "/index.php?rest_route=/cms/v2/posts/999"},
		{"cms_bad_context", "/index.php?rest_route=/cms/v2/posts&context=nope"},
		{"cms_edit_anonymous", "/index.php?rest_route=/cms/v2/posts&context=edit"},
		{"cms_page_overflow", "/index.php?rest_route=/cms/v2/posts&page=9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(req{uri: tt.uri})
			got := render(resp)
			golden(t, tt.name, got)
			// A second request answers the same bytes (from the cache for successes).
			if again := render(f.do(req{uri: tt.uri})); !bytes.Equal(again, got) {
				t.Errorf("second answer differs:\n%s", again)
			}
		})
	}
}

func TestTenantIsolation(t *testing.T) {
	f := newFixture(t, edge.Config{})
	tests := []struct {
		name   string
		r      req
		status int
	}{
		{"demo product on demo domain", req{uri: "/api/products/linen-shirt"}, 200},
		{"demo product by subdomain", req{uri: "/api/products/linen-shirt", host: "demo.vitrine.test"}, 200},
		{"demo product by slug header", req{uri: "/api/products/linen-shirt", host: "127.0.0.1", headers: map[string]string{"X-Tenant-Slug": "demo"}}, 200},
		{"other's product under demo", req{uri: "/api/products/other-only"}, 404},
		{"demo product under other", req{uri: "/api/products/linen-shirt", host: "other.vitrine.test"}, 404},
		{"other's product under other", req{uri: "/api/products/other-only", host: "other.vitrine.test"}, 200},
		{"host wins over the slug header", req{uri: "/api/products/other-only", headers: map[string]string{"X-Tenant-Slug": "other"}}, 404},
		{"unknown tenant", req{uri: "/api/products/linen-shirt", host: "nobody.vitrine.test"}, 404},
		{"unknown slug header", req{uri: "/api/products", host: "127.0.0.1", headers: map[string]string{"X-Tenant-Slug": "nobody"}}, 404},
		{"nested subdomain", req{uri: "/api/products", host: "x.demo.vitrine.test"}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(tt.r)
			if resp.StatusCode() != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode(), tt.status, resp.Body())
			}
			if tt.status == 200 && bytes.Contains(resp.Body(), []byte("other")) == strings.Contains(tt.r.uri, "linen") {
				t.Fatalf("body leaks another tenant's data: %s", resp.Body())
			}
		})
	}
	// An unknown tenant answers exactly the 404 of an unknown route, request id aside.
	unknown := f.do(req{uri: "/api/products", host: "nobody.vitrine.test"})
	body := decodeJSON(t, unknown.Body())
	if body["error"] != "Not found" || body["code"] != "not_found" || body["request_id"] != string(unknown.Header.Peek("X-Request-Id")) {
		t.Fatalf("unknown tenant body = %s", unknown.Body())
	}
	cms := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts", host: "nobody.vitrine.test"})
	if got := string(cms.Body()); got != `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}` {
		t.Fatalf("unknown tenant on a CMS route = %s", got)
	}
}

// Absolute URLs come from the tenant's canonical base: a forged Host or X-Forwarded-Host never
// reaches a body, cached or not.
func TestForgedHostNeverReachesBodies(t *testing.T) {
	f := newFixture(t, edge.Config{})
	forged := map[string]string{"X-Tenant-Slug": "demo", "X-Forwarded-Host": "evil.example", "Forwarded": "host=evil.example"}
	for _, uri := range []string{"/api/products/linen-shirt", "/api/products", "/index.php?rest_route=/cms/v2/posts"} {
		first := f.do(req{uri: uri, host: "evil.example", headers: forged})
		second := f.do(req{uri: uri})
		third := f.do(req{uri: uri, host: "evil.example:8443", headers: forged})
		for i, r := range []*fasthttp.Response{first, second, third} {
			if r.StatusCode() != 200 || bytes.Contains(r.Body(), []byte("evil")) || bytes.Contains(r.Header.Peek("Link"), []byte("evil")) {
				t.Fatalf("%s answer %d (%d) mentions the forged host: %s", uri, i, r.StatusCode(), r.Body())
			}
			if !bytes.Contains(r.Body(), []byte("https://api.shop.example")) {
				t.Fatalf("%s answer %d lacks the canonical base: %s", uri, i, r.Body())
			}
		}
		if !bytes.Equal(first.Body(), second.Body()) {
			t.Fatalf("%s: bodies differ by host", uri)
		}
	}
}

func TestCORS(t *testing.T) {
	f := newFixture(t, edge.Config{})
	t.Run("commerce preflight", func(t *testing.T) {
		resp := f.do(req{method: "OPTIONS", uri: "/api/cart/items", headers: map[string]string{
			"Origin": "https://any-storefront.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type, authorization, x-cart-session, x-session-id, x-tenant-slug, x-requested-with, vitrine-min-version"}})
		if resp.StatusCode() != 204 {
			t.Fatalf("status %d", resp.StatusCode())
		}
		if got := string(resp.Header.Peek("Access-Control-Allow-Origin")); got != "*" {
			t.Errorf("Allow-Origin %q", got)
		}
		allowed := strings.ToLower(string(resp.Header.Peek("Access-Control-Allow-Headers")))
		for _, h := range []string{"content-type", "accept", "authorization", "x-cart-session", "x-session-id", "x-tenant-slug", "x-requested-with", "vitrine-min-version"} {
			if !strings.Contains(allowed, h) {
				t.Errorf("Allow-Headers %q lacks %s", allowed, h)
			}
		}
		if v := resp.Header.Peek("Access-Control-Allow-Credentials"); len(v) > 0 {
			t.Errorf("Allow-Credentials sent: %q", v)
		}
		if f.up.lastRequest() != nil {
			t.Error("a preflight reached the origin")
		}
	})
	t.Run("preflight of a call by slug from a host that names no store", func(t *testing.T) {
		// The browser's preflight carries no X-Tenant-Slug: it must not need a tenant.
		resp := f.do(req{method: "OPTIONS", uri: "/api/cart/items", host: "127.0.0.1:8080", headers: map[string]string{
			"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type, x-tenant-slug, x-cart-session, idempotency-key"}})
		if resp.StatusCode() != 204 || string(resp.Header.Peek("Access-Control-Allow-Origin")) != "*" {
			t.Fatalf("status %d, headers %s", resp.StatusCode(), resp.Header.String())
		}
	})
	t.Run("commerce response", func(t *testing.T) {
		resp := f.do(req{uri: "/api/products", headers: map[string]string{"Origin": "https://x.example"}})
		expose := string(resp.Header.Peek("Access-Control-Expose-Headers"))
		for _, h := range []string{"Vitrine-Write-Version", "Vitrine-Replica-Version", "Retry-After", "RateLimit-Limit", "X-Request-Id"} {
			if !strings.Contains(expose, h) {
				t.Errorf("Expose-Headers %q lacks %s", expose, h)
			}
		}
		if string(resp.Header.Peek("Access-Control-Allow-Origin")) != "*" || len(resp.Header.Peek("Access-Control-Allow-Credentials")) > 0 {
			t.Errorf("CORS headers %s", resp.Header.String())
		}
	})
	t.Run("cms response", func(t *testing.T) {
		resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts", headers: map[string]string{"Origin": "https://editor.example"}})
		if got := string(resp.Header.Peek("Access-Control-Expose-Headers")); got != "X-WP-Total, X-WP-TotalPages, Link" {
			t.Errorf("Expose-Headers %q", got)
		}
		if got := string(resp.Header.Peek("Access-Control-Allow-Origin")); got != "https://editor.example" {
			t.Errorf("Allow-Origin %q", got)
		}
		if v := string(resp.Header.Peek("Access-Control-Allow-Credentials")); v == "true" {
			t.Error("CMS responses must never allow credentials")
		}
	})
}

func TestCacheServesAndInvalidates(t *testing.T) {
	f := newFixture(t, edge.Config{})
	uri := "/api/products/linen-shirt"
	first := f.do(req{uri: uri})
	// The cache stores asynchronously: reads are served from it soon after the first fill.
	deadline := time.Now().Add(2 * time.Second)
	for hits := f.metric("vitrine_edge_cache_hits_total"); ; {
		f.do(req{uri: uri})
		if f.metric("vitrine_edge_cache_hits_total") > hits {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("repeated reads never hit the cache")
		}
		time.Sleep(time.Millisecond)
	}
	second := f.do(req{uri: uri + "?utm_source=x"}) // undeclared parameter: same canonical entry
	third := f.do(req{uri: uri})
	if !bytes.Equal(first.Body(), second.Body()) || !bytes.Equal(first.Body(), third.Body()) {
		t.Fatal("cached bodies differ")
	}
	// A write applied to the replica invalidates the page, and only this product's page.
	kettle := f.do(req{uri: "/api/products/kettle"})
	p := product(10, "linen-shirt", "Linen Shirt, Relaxed", 4900, 2, 1)
	f.feed.put("demo", schema.KindProduct, "10", schema.Pub, p)
	f.feed.head("demo")
	after := f.do(req{uri: uri})
	if !bytes.Contains(after.Body(), []byte("Linen Shirt, Relaxed")) {
		t.Fatalf("stale body after the write: %s", after.Body())
	}
	f.do(req{uri: "/api/products/kettle"})
	time.Sleep(50 * time.Millisecond) // let the cache store the kettle's page
	f.feed.put("demo", schema.KindProduct, "10", schema.Pub, product(10, "linen-shirt", "Linen Shirt, Again", 4900, 2, 1))
	f.feed.head("demo")
	before := f.metric("vitrine_edge_cache_hits_total")
	if k := f.do(req{uri: "/api/products/kettle"}); !bytes.Equal(k.Body(), kettle.Body()) {
		t.Fatal("kettle changed")
	}
	if f.metric("vitrine_edge_cache_hits_total") != before+1 {
		t.Error("a write to another product invalidated the kettle's page")
	}
	// Lists show it too.
	if l := f.do(req{uri: "/api/products"}); !bytes.Contains(l.Body(), []byte("Linen Shirt, Again")) {
		t.Fatalf("stale list: %s", l.Body())
	}
}

// warm reads uri until a read of it is served from the cache (the cache stores asynchronously),
// and returns the body.
func (f *fixture) warm(uri string) []byte {
	f.t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		hits := f.metric("vitrine_edge_cache_hits_total")
		body := f.do(req{uri: uri}).Body()
		if f.metric("vitrine_edge_cache_hits_total") > hits {
			return body
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("repeated reads of %s never hit the cache", uri)
		}
		time.Sleep(time.Millisecond)
	}
}

// A page of the plain product listing is refreshed by a write to a product it shows, or to the
// listing itself (a product added, unpublished, moved in the order), and stays cached through
// writes to products it does not show.
func TestListPagesFollowTheirProducts(t *testing.T) {
	f := newFixture(t, edge.Config{})
	const page1, page2 = "/api/products?per_page=1&page=1", "/api/products?per_page=1&page=2" // the kettle, the shirt
	shirt := f.do(req{uri: "/api/products/linen-shirt"})
	var shown struct {
		Data []struct {
			Slug  string `json:"slug"`
			Price struct {
				Amount int64 `json:"amount"`
			} `json:"price"`
			Availability string `json:"availability"`
		} `json:"data"`
		Total int `json:"total"`
	}
	read := func(uri string, hit bool) (slug string, amount int64, avail string, total int) {
		t.Helper()
		hits := f.metric("vitrine_edge_cache_hits_total")
		resp := f.do(req{uri: uri})
		if got := f.metric("vitrine_edge_cache_hits_total") > hits; got != hit {
			t.Errorf("%s: served from the cache %v, want %v", uri, got, hit)
		}
		shown.Data = nil
		if err := json.Unmarshal(resp.Body(), &shown); err != nil || len(shown.Data) != 1 {
			t.Fatalf("%s: %v %s", uri, err, resp.Body())
		}
		d := shown.Data[0]
		return d.Slug, d.Price.Amount, d.Availability, shown.Total
	}
	if shirt.StatusCode() != 200 {
		t.Fatal(shirt.StatusCode())
	}
	steps := []struct {
		name       string
		write      func()
		hit1, hit2 bool // page 1 (newest), page 2 still served from the cache
		want1      string
		want2      string
		total      int
	}{
		{"price of the shirt (page 2)", func() {
			p := product(10, "linen-shirt", "Linen Shirt", 4321, 2, 1)
			f.feed.put("demo", schema.KindProduct, "10", schema.Pub, p)
		}, true, false, "kettle", "linen-shirt", 2},
		{"a variant of the shirt", func() {
			v := &schema.Variant{ID: 11, ProductID: 10, SKU: "LS-M", Title: "M", Options: []schema.Option{{Name: "size", Value: "M"}},
				Availability: schema.OutOfStock, Position: 0, CreatedAt: epochTime, UpdatedAt: epochTime}
			v.Normalize()
			f.feed.put("demo", schema.KindVariant, "11", schema.Pub, v)
		}, true, false, "kettle", "linen-shirt", 2},
		{"title of the kettle (page 1)", func() {
			f.feed.put("demo", schema.KindProduct, "20", schema.Pub, product(20, "kettle", "Kettle, Steel", 2999, 3))
		}, false, true, "kettle", "linen-shirt", 2},
		{"a product added, newest", func() {
			f.feed.put("demo", schema.KindProduct, "30", schema.Pub, product(30, "teapot", "Teapot", 1999, 3))
		}, false, false, "teapot", "kettle", 3},
		{"the new product unpublished", func() {
			f.feed.del("demo", schema.KindProduct, "30", schema.Pub)
		}, false, false, "kettle", "linen-shirt", 2},
		{"the shirt's creation time moved past the kettle's", func() {
			p := product(10, "linen-shirt", "Linen Shirt", 4321, 2, 1)
			p.CreatedAt = epochTime.Add(time.Hour)
			f.feed.put("demo", schema.KindProduct, "10", schema.Pub, p)
		}, false, false, "linen-shirt", "kettle", 2},
	}
	for _, st := range steps {
		f.warm(page1)
		f.warm(page2)
		st.write()
		f.feed.head("demo")
		if slug, _, _, total := read(page1, st.hit1); slug != st.want1 || total != st.total {
			t.Errorf("after %s: page 1 shows %s of %d, want %s of %d", st.name, slug, total, st.want1, st.total)
		}
		if slug, _, _, total := read(page2, st.hit2); slug != st.want2 || total != st.total {
			t.Errorf("after %s: page 2 shows %s of %d, want %s of %d", st.name, slug, total, st.want2, st.total)
		}
	}
	// What the pages show is what the replica holds: the shirt's new price and availability.
	if slug, amount, avail, _ := read(page1, true); slug != "linen-shirt" || amount != 4321 || avail != string(schema.LowStock) {
		t.Errorf("page 1 shows %s at %d, %s", slug, amount, avail)
	}
}

// Readers of list pages never get a body older than a write applied before their request began,
// while one writer changes a listed product's price, another product's, and the listing itself
// (a product added and removed): the pages' dependencies on the products they show are sound
// under concurrent fills.
func TestListPagesNeverStaleUnderWrites(t *testing.T) {
	f := newFixture(t, edge.Config{})
	var applied atomic.Int64 // the shirt's price the replica holds at least
	applied.Store(4900)
	stop := make(chan struct{})
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	uris := []string{"/api/products?per_page=1&page=1", "/api/products?per_page=1&page=2", "/api/products?per_page=1&page=3", "/api/products"}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq, resp := new(fasthttp.Request), new(fasthttp.Response)
			for i := r; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				want := applied.Load()
				rq.SetRequestURI("http://shop.example.test" + uris[i%len(uris)])
				if err := f.client.DoTimeout(rq, resp, 10*time.Second); err != nil || resp.StatusCode() != 200 {
					errs <- fmt.Errorf("%s: %v %d", rq.URI(), err, resp.StatusCode())
					return
				}
				var page struct {
					Data []struct {
						Slug  string `json:"slug"`
						Price struct {
							Amount int64 `json:"amount"`
						} `json:"price"`
					} `json:"data"`
				}
				if err := json.Unmarshal(resp.Body(), &page); err != nil {
					errs <- err
					return
				}
				for _, d := range page.Data {
					if d.Slug == "linen-shirt" && d.Price.Amount < want {
						errs <- fmt.Errorf("%s shows the shirt at %d after %d was applied", rq.URI(), d.Price.Amount, want)
						return
					}
				}
			}
		}()
	}
	for k := 1; k <= 400; k++ {
		f.feed.put("demo", schema.KindProduct, "10", schema.Pub, product(10, "linen-shirt", "Linen Shirt", int64(4900+k), 2, 1))
		if k%7 == 0 {
			f.feed.put("demo", schema.KindProduct, "20", schema.Pub, product(20, "kettle", "Kettle", int64(2999+k), 3))
		}
		switch k % 20 {
		case 5:
			f.feed.put("demo", schema.KindProduct, "30", schema.Pub, product(30, "teapot", "Teapot", 1999, 3))
		case 15:
			f.feed.del("demo", schema.KindProduct, "30", schema.Pub)
		}
		f.feed.head("demo")
		applied.Store(int64(4900 + k))
		if k%50 == 0 {
			time.Sleep(time.Millisecond) // let fills land between bursts
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConditionalAndCompressed(t *testing.T) {
	f := newFixture(t, edge.Config{})
	uri := "/api/products"
	plain := f.do(req{uri: uri})
	etag := string(plain.Header.Peek("ETag"))
	if etag == "" || !strings.Contains(string(plain.Header.Peek("Vary")), "Accept-Encoding") {
		t.Fatalf("ETag %q, Vary %q", etag, plain.Header.Peek("Vary"))
	}
	nm := f.do(req{uri: uri, headers: map[string]string{"If-None-Match": `"x", ` + etag}})
	if nm.StatusCode() != 304 || len(nm.Body()) != 0 {
		t.Fatalf("If-None-Match: %d %q", nm.StatusCode(), nm.Body())
	}
	for _, enc := range []string{"br", "gzip", "zstd"} {
		resp := f.do(req{uri: uri, headers: map[string]string{"Accept-Encoding": enc}})
		if got := string(resp.Header.Peek("Content-Encoding")); got != enc {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q", enc, got)
		}
		body, err := resp.BodyUncompressed()
		if err != nil || !bytes.Equal(body, plain.Body()) {
			t.Fatalf("%s body does not decode to the identity body: %v", enc, err)
		}
	}
}

func TestReadFloor(t *testing.T) {
	f := newFixture(t, edge.Config{FloorWait: 300 * time.Millisecond, MaxFloorAhead: 1000})
	now := f.rep.TenantBySlug("demo").Version()
	uri := "/api/products/kettle"

	reached := f.do(req{uri: uri, headers: map[string]string{"Vitrine-Min-Version": fmt.Sprint(now)}})
	if reached.StatusCode() != 200 || string(reached.Header.Peek("Vitrine-Replica-Version")) != fmt.Sprint(now) {
		t.Fatalf("floor already reached: %d %s", reached.StatusCode(), reached.Header.Peek("Vitrine-Replica-Version"))
	}

	// A floor one write ahead waits for it, and answers the new value.
	go func() {
		time.Sleep(100 * time.Millisecond)
		f.feed.put("demo", schema.KindProduct, "20", schema.Pub, product(20, "kettle", "Kettle v2", 2999, 3))
		f.feed.head("demo")
	}()
	start := time.Now()
	waited := f.do(req{uri: uri + "?vitrine_min_version=" + fmt.Sprint(now+1)})
	if waited.StatusCode() != 200 || !bytes.Contains(waited.Body(), []byte("Kettle v2")) || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("floor wait: %d after %s: %s", waited.StatusCode(), time.Since(start), waited.Body())
	}

	// Never reached within the bound: 503 with Retry-After, never the old value.
	stuck := f.do(req{uri: uri, headers: map[string]string{"Vitrine-Min-Version": fmt.Sprint(now + 50)}})
	if stuck.StatusCode() != 503 || len(stuck.Header.Peek("Retry-After")) == 0 || bytes.Contains(stuck.Body(), []byte("Kettle")) {
		t.Fatalf("unreached floor: %d %s", stuck.StatusCode(), stuck.Body())
	}
	if body := decodeJSON(t, stuck.Body()); body["code"] != "unavailable" || body["error"] == "" {
		t.Fatalf("error shape: %s", stuck.Body())
	}
	cms := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts", headers: map[string]string{"Vitrine-Min-Version": fmt.Sprint(now + 50)}})
	if body := decodeJSON(t, cms.Body()); cms.StatusCode() != 503 || body["code"] != "rest_replica_behind" {
		t.Fatalf("CMS floor error: %d %s", cms.StatusCode(), cms.Body())
	}

	for _, bad := range []string{"abc", "-1", fmt.Sprint(now + 5000)} {
		resp := f.do(req{uri: uri + "?vitrine_min_version=" + bad})
		if resp.StatusCode() != 400 {
			t.Errorf("floor %q: status %d, want 400", bad, resp.StatusCode())
		}
	}
}

func TestTenantNotReadyIsServiceUnavailable(t *testing.T) {
	f := newFixture(t, edge.Config{})
	late := &schema.Tenant{ID: "33333333-3333-3333-3333-333333333333", Slug: "late", Name: "Late", BaseURL: "https://late.example",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD"}}
	f.feed.put(schema.PlatformLog, schema.KindTenant, "late", schema.Pub, late)
	f.feed.head(schema.PlatformLog)
	resp := f.do(req{uri: "/api/products", host: "late.vitrine.test"})
	if resp.StatusCode() != 503 || len(resp.Header.Peek("Retry-After")) == 0 {
		t.Fatalf("tenant without its first checkpoint: %d %s", resp.StatusCode(), resp.Body())
	}
	if f.rep.Ready() {
		t.Fatal("replica ready with a tenant not checkpointed")
	}
	ready := f.do(req{uri: "/readyz"})
	if ready.StatusCode() != 503 {
		t.Fatalf("/readyz %d while a tenant is not ready", ready.StatusCode())
	}
	f.feed.head("late")
	if resp := f.do(req{uri: "/api/products", host: "late.vitrine.test"}); resp.StatusCode() != 200 {
		t.Fatalf("after its head: %d", resp.StatusCode())
	}
	if ready := f.do(req{uri: "/readyz"}); ready.StatusCode() != 200 {
		t.Fatalf("/readyz %d", ready.StatusCode())
	}
}

func TestRateLimit(t *testing.T) {
	f := newFixture(t, edge.Config{RateLimit: 5})
	var last *fasthttp.Response
	for i := 0; i < 6; i++ {
		last = f.do(req{uri: "/api/products"})
	}
	if last.StatusCode() != 429 || len(last.Header.Peek("Retry-After")) == 0 || string(last.Header.Peek("RateLimit-Remaining")) != "0" {
		t.Fatalf("6th request in a minute at 5/min: %d %s", last.StatusCode(), last.Header.String())
	}
	if body := decodeJSON(t, last.Body()); body["code"] != "rate_limited" {
		t.Fatalf("body %s", last.Body())
	}
}

func TestForwarding(t *testing.T) {
	f := newFixture(t, edge.Config{WriteWait: 2 * time.Second})
	tn := f.rep.TenantBySlug("demo")
	f.up.mu.Lock()
	f.up.version = tn.Version() + 1
	f.up.mu.Unlock()
	// The write's version is applied 150ms after the origin answered: the edge holds the
	// response until then.
	var applied time.Time
	var mu sync.Mutex
	go func() {
		time.Sleep(150 * time.Millisecond)
		f.feed.put("demo", schema.KindProduct, "20", schema.Pub, product(20, "kettle", "Kettle v3", 2999, 3))
		mu.Lock()
		applied = time.Now()
		mu.Unlock()
		f.feed.head("demo")
	}()
	resp := f.do(req{method: "POST", uri: "/api/cart/items?x=1&y=%2F", body: `{"sku":"LS-M","quantity":2}`, headers: map[string]string{
		"Content-Type": "application/json", "X-Cart-Session": "abc", "Connection": "Foo", "Foo": "hop", "Keep-Alive": "timeout=3",
		"TE": "trailers", "X-Forwarded-For": "203.0.113.9", "Vitrine-Edge-Auth": "forged", "X-Tenant-Slug": "other"}})
	done := time.Now()
	mu.Lock()
	appliedAt := applied
	mu.Unlock()
	if resp.StatusCode() != 201 || string(resp.Body()) != `{"upstream":true}` {
		t.Fatalf("forwarded answer: %d %s", resp.StatusCode(), resp.Body())
	}
	if appliedAt.IsZero() || done.Before(appliedAt) {
		t.Fatal("the edge answered a write before applying its version")
	}
	if got := string(resp.Header.Peek("Vitrine-Replica-Version")); got != fmt.Sprint(tn.Version()) {
		t.Fatalf("Vitrine-Replica-Version %s, replica at %d", got, tn.Version())
	}
	for _, h := range []string{"X-Hop", "Keep-Alive"} {
		if v := resp.Header.Peek(h); len(v) > 0 {
			t.Errorf("hop-by-hop response header %s reached the client: %q", h, v)
		}
	}
	up := f.up.lastRequest()
	if string(up.Header.Method()) != "POST" || string(up.URI().RequestURI()) != "/api/cart/items?x=1&y=%2F" || string(up.Body()) != `{"sku":"LS-M","quantity":2}` {
		t.Fatalf("origin saw %s %s %s", up.Header.Method(), up.URI().RequestURI(), up.Body())
	}
	if got := string(up.Header.Peek("X-Forwarded-For")); !strings.HasPrefix(got, "203.0.113.9, ") {
		t.Errorf("X-Forwarded-For %q", got)
	}
	for _, h := range []string{"Foo", "Keep-Alive", "TE"} {
		if v := up.Header.Peek(h); len(v) > 0 {
			t.Errorf("hop-by-hop header %s reached the origin: %q", h, v)
		}
	}
	if got := string(up.Header.Peek("Vitrine-Edge-Auth")); got != "edge-secret" {
		t.Errorf("edge auth %q: a client's forged value must be replaced", got)
	}
	if got := string(up.Header.Peek("X-Tenant-Slug")); got != "demo" {
		t.Errorf("X-Tenant-Slug %q: the edge names the tenant it resolved", got)
	}
	if got, want := string(up.Header.Peek("X-Request-Id")), string(resp.Header.Peek("X-Request-Id")); got == "" || got != want {
		t.Errorf("request id %q at the origin, %q to the client", got, want)
	}
	if string(up.Header.Peek("X-Cart-Session")) != "abc" {
		t.Error("end-to-end header lost")
	}
}

func TestOriginDown(t *testing.T) {
	f := newFixture(t, edge.Config{Origin: "http://127.0.0.1:1"})
	for _, tt := range []struct {
		uri, code string
	}{
		{"/api/cart/items", "unavailable"},
		{"/index.php?rest_route=/cms/v2/posts", "rest_origin_unavailable"},
	} {
		start := time.Now()
		resp := f.do(req{method: "POST", uri: tt.uri, body: `{}`, headers: map[string]string{"Content-Type": "application/json"}})
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: answered after %s: not prompt", tt.uri, took)
		}
		if resp.StatusCode() != 503 || len(resp.Header.Peek("Retry-After")) == 0 {
			t.Fatalf("%s: %d %s", tt.uri, resp.StatusCode(), resp.Body())
		}
		if body := decodeJSON(t, resp.Body()); body["code"] != tt.code {
			t.Fatalf("%s: body %s", tt.uri, resp.Body())
		}
	}
	// Reads answer from the replica regardless.
	for _, uri := range []string{"/api/products", "/api/products/linen-shirt", "/api/products/featured", "/api/categories",
		"/api/currencies", "/api/products/linen-shirt/variants", "/index.php?rest_route=/cms/v2/posts", "/index.php?rest_route=/cms/v2/posts/100"} {
		if resp := f.do(req{uri: uri}); resp.StatusCode() != 200 {
			t.Errorf("%s with the origin down: %d", uri, resp.StatusCode())
		}
	}
}

func TestOversizedBody(t *testing.T) {
	f := newFixture(t, edge.Config{MaxBodyBytes: 1024})
	big := strings.Repeat("x", 4096)
	for _, tt := range []struct {
		uri, want string
	}{
		{"/api/cart/items", `"code":"too_large"`},
		{"/index.php?rest_route=/cms/v2/posts", `"code":"rest_request_too_large"`},
	} {
		resp := f.doEarly(req{method: "POST", uri: tt.uri, body: big})
		if resp.StatusCode() != 413 || !bytes.Contains(resp.Body(), []byte(tt.want)) {
			t.Errorf("%s: %d %s", tt.uri, resp.StatusCode(), resp.Body())
		}
	}
	if f.up.lastRequest() != nil {
		t.Error("an oversized body reached the origin")
	}
}

// The hit chain: tenant lookup, CORS, request id, rate-limit check, cache hit and headers.
func hitContext(b testing.TB) (*edge.Server, *fasthttp.RequestCtx) {
	f := newFixture(b, edge.Config{RateLimit: 1 << 30})
	var rq fasthttp.Request
	rq.SetRequestURI("/api/products/linen-shirt")
	rq.Header.SetHost("shop.example.test")
	rq.Header.Set("Origin", "https://storefront.example")
	rq.Header.Set("Accept-Encoding", "gzip, br")
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&rq, nil, nil)
	// Warm up until the entry is served from the cache: the cache stores asynchronously, and
	// its background work must be over before allocations are counted.
	deadline := time.Now().Add(5 * time.Second)
	for hits := f.metric("vitrine_edge_cache_hits_total"); f.metric("vitrine_edge_cache_hits_total") < hits+2; {
		if time.Now().After(deadline) {
			b.Fatal("the entry never reached the cache")
		}
		ctx.Response.Reset()
		f.srv.Handler(ctx)
		time.Sleep(time.Millisecond)
	}
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("Content-Encoding")) != "br" {
		b.Fatalf("warm-up answer %d %s", ctx.Response.StatusCode(), ctx.Response.Header.String())
	}
	return f.srv, ctx
}

func TestHitChainAllocatesNothing(t *testing.T) {
	srv, ctx := hitContext(t)
	allocs := testing.AllocsPerRun(1000, func() {
		ctx.Response.Reset()
		srv.Handler(ctx)
	})
	if allocs != 0 {
		t.Fatalf("a cache hit allocates %.1f times", allocs)
	}
	head := strings.ToLower(ctx.Response.Header.String())
	for _, h := range []string{"access-control-allow-origin: *", strings.ToLower(pipeline.HeaderRequestID) + ": ", "ratelimit-remaining: ", "vitrine-replica-version: "} {
		if ctx.Response.StatusCode() != 200 || !strings.Contains(head, "\n"+h) {
			t.Fatalf("hit answer lacks %q: %s", h, head)
		}
	}
}

func BenchmarkHitChain(b *testing.B) {
	srv, ctx := hitContext(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Response.Reset()
		srv.Handler(ctx)
	}
}
