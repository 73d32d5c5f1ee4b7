package edge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
)

// FuzzRequests sends arbitrary methods, paths, query strings, headers and bodies to an edge
// holding a seeded catalog and posts: every answer is a well-formed HTTP response below 500
// (the upstream stands in for the origin only to answer what the edge forwards, always 201).
func FuzzRequests(f *testing.F) {
	for _, s := range []struct{ method, uri, header, body string }{
		{"GET", "/index.php?rest_route=/cms/v2/posts&per_page=5&orderby=title&_fields=id,title.rendered&_embed=1", "", ""},
		{"GET", "/index.php?rest_route=/cms/v2/posts&categories[terms]=3&categories[operator]=AND&tax_relation=OR&after=2026-01-01T00:00:00", "", ""},
		{"GET", "/index.php?rest_route=%2Fcms%2Fv2%2Fpages%2F5&_envelope&_jsonp=cb", "", ""},
		{"GET", "/index.php?rest_route[]=/cms/v2/posts&_method=DELETE", "", ""},
		{"POST", "/index.php?rest_route=/cms/v2/posts&_method=GET", "GET", `{"title":1}`},
		{"OPTIONS", "/index.php?rest_route=/cms/v2/posts/(?P<id>[\\d]+)", "", ""},
		{"HEAD", "/?rest_route=/", "", ""},
		{"GET", "/api/products?page=99999999999999999999&per_page=-1&sort=price_asc&currency=XXX&min_price=1e9", "", ""},
		{"GET", "/api/search?q=%FF%FE%00&availability=in_stock,bogus", "", ""},
		{"GET", "/api/search/autocomplete?q=" + strings.Repeat("a", 600), "", ""},
		{"GET", "/api/products/%2e%2e%2f%2e%2e", "", ""},
		{"POST", "/api/cart/items", "", `{"variant_id":"x","quantity":1e400}`},
	} {
		f.Add(s.method, s.uri, s.header, s.body)
	}
	fx := newFixture(f, edge.Config{CacheBytes: 4 << 20})
	feedPosts(fx)
	client := fx.client
	f.Fuzz(func(t *testing.T, method, uri, header, body string) {
		if method == "" || strings.ContainsAny(method, " \r\n\t:/") || len(method) > 16 {
			method = "GET"
		}
		if !strings.HasPrefix(uri, "/") {
			uri = "/" + uri
		}
		rq := fasthttp.AcquireRequest()
		defer fasthttp.ReleaseRequest(rq)
		rq.Header.SetMethod(method)
		rq.SetRequestURI("http://shop.example.test" + uri)
		if header != "" && !strings.ContainsAny(header, "\r\n") {
			rq.Header.Set("X-HTTP-Method-Override", header)
			rq.Header.Set("Content-Type", "application/json")
		}
		rq.SetBodyString(body)
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseResponse(resp)
		if err := client.DoTimeout(rq, resp, 10*time.Second); err != nil {
			if err == fasthttp.ErrTimeout {
				t.Fatalf("%s %q: no answer in 10 s", method, uri)
			}
			return // the client refused to send it
		}
		if resp.StatusCode() >= 500 {
			t.Fatalf("%s %q (override %q, body %q): %d %s", method, uri, header, body, resp.StatusCode(), resp.Body())
		}
	})
}
