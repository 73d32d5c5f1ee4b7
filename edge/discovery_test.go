package edge_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
)

var gmtOffset = regexp.MustCompile(`"gmt_offset": [-0-9.]+,`)

// TestDiscoveryGolden: the index lists the whole route table, so its golden file changes with
// the table (go test ./edge -run TestDiscoveryGolden -update).
func TestDiscoveryGolden(t *testing.T) {
	f := newFixture(t, edge.Config{})
	for _, tt := range []struct{ name, uri string }{
		{"cms_index", "/index.php?rest_route=/"},
		{"cms_namespace", "/index.php?rest_route=/cms/v2"},
		{"cms_namespace_oembed", "/index.php?rest_route=/oembed/1.0/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Europe/Paris's offset depends on the season.
			got := gmtOffset.ReplaceAll(render(f.do(req{uri: tt.uri})), []byte(`"gmt_offset": <offset>,`))
			golden(t, tt.name, got)
			if again := gmtOffset.ReplaceAll(render(f.do(req{uri: tt.uri})), []byte(`"gmt_offset": <offset>,`)); !bytes.Equal(again, got) {
				t.Errorf("second answer differs:\n%s", again)
			}
		})
	}
}

// simpleCapture is the only kind of group wpapi 1.2.2's route tree parses: a named capture
// holding no parenthesis.
var simpleCapture = regexp.MustCompile(`\(\?P<\w+>[^()]*\)`)

func TestDiscoveryIndex(t *testing.T) {
	f := newFixture(t, edge.Config{})
	resp := f.do(req{uri: "/index.php?rest_route=/"})
	if resp.StatusCode() != 200 {
		t.Fatalf("index: %d %s", resp.StatusCode(), resp.Body())
	}
	// The same index under every form of addressing the root, and from a forged host.
	for _, r := range []req{
		{uri: "/?rest_route=/"},
		{uri: "/index.php?rest_route=/&context=view"},
		{uri: "/index.php?rest_route=/", host: "evil.example", headers: map[string]string{"X-Tenant-Slug": "demo", "X-Forwarded-Host": "evil.example"}},
	} {
		if other := f.do(r); !bytes.Equal(other.Body(), resp.Body()) {
			t.Errorf("%s (host %s) answers another index: %s", r.uri, r.host, other.Body())
		}
	}
	var idx struct {
		Name           string   `json:"name"`
		URL            string   `json:"url"`
		Home           string   `json:"home"`
		GMTOffset      float64  `json:"gmt_offset"`
		Timezone       string   `json:"timezone_string"`
		Namespaces     []string `json:"namespaces"`
		Authentication map[string]struct {
			Endpoints map[string]string `json:"endpoints"`
		} `json:"authentication"`
		Routes map[string]struct {
			Namespace string            `json:"namespace"`
			Methods   []string          `json:"methods"`
			Endpoints []json.RawMessage `json:"endpoints"`
			Links     map[string][]struct {
				Href string `json:"href"`
			} `json:"_links"`
		} `json:"routes"`
		Links map[string]any `json:"_links"`
	}
	if err := json.Unmarshal(resp.Body(), &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Name != "Demo" || idx.URL != "https://api.shop.example" || idx.Home != idx.URL || idx.Timezone != "Europe/Paris" {
		t.Errorf("site fields: %+v", idx)
	}
	if idx.GMTOffset != 1 && idx.GMTOffset != 2 {
		t.Errorf("gmt_offset %v for Europe/Paris", idx.GMTOffset)
	}
	if got := strings.Join(idx.Namespaces, " "); got != "oembed/1.0 agent/v1 cms/v2 cms-site-health/v1 cms-block-editor/v1 cms-abilities/v1" {
		t.Errorf("namespaces %s", got)
	}
	if got := idx.Authentication["application-passwords"].Endpoints["authorization"]; got != "https://api.shop.example/cms-admin/authorize-application.php" {
		t.Errorf("authorization endpoint %q", got)
	}
	// Every CMS route of the table is listed, under a key wpapi can parse.
	for _, r := range schema.Routes {
		if r.Interface != schema.CMS {
			continue
		}
		key := schema.CMSRouteKey(r.Path)
		e, ok := idx.Routes[key]
		if !ok {
			t.Errorf("route %s (%s) missing from the index", key, r.Name)
			continue
		}
		if !contains(e.Methods, r.Method) {
			t.Errorf("route %s lacks method %s: %v", key, r.Method, e.Methods)
		}
		if e.Namespace != schema.CMSNamespaceOf(r.Path) {
			t.Errorf("route %s namespace %q", key, e.Namespace)
		}
		if rest := simpleCapture.ReplaceAllString(key, ""); strings.ContainsAny(rest, "()[]\\") {
			t.Errorf("route key %s has a capture wpapi cannot parse", key)
		}
		hasCapture := strings.Contains(key, "(?P<")
		if self := e.Links["self"]; hasCapture != (len(self) == 0) {
			t.Errorf("route %s: _links.self %v", key, self)
		} else if !hasCapture && self[0].Href != "https://api.shop.example/index.php?rest_route="+r.Path {
			t.Errorf("route %s: self %s", key, self[0].Href)
		}
	}
	item := idx.Routes[`/cms/v2/posts/(?P<id>[\d]+)`]
	if strings.Join(item.Methods, ",") != "GET,POST,PUT,PATCH,DELETE" || len(item.Endpoints) != 3 {
		t.Errorf("posts item: %v, %d endpoints", item.Methods, len(item.Endpoints))
	}
	var ep struct {
		Methods    []string                  `json:"methods"`
		AllowBatch map[string]bool           `json:"allow_batch"`
		Args       map[string]map[string]any `json:"args"`
	}
	if err := json.Unmarshal(idx.Routes["/cms/v2/posts"].Endpoints[0], &ep); err != nil {
		t.Fatal(err)
	}
	pp := ep.Args["per_page"]
	if !ep.AllowBatch["v1"] || pp["type"] != "integer" || pp["default"] != float64(10) || pp["minimum"] != float64(1) || pp["maximum"] != float64(100) || pp["required"] != false {
		t.Errorf("posts list endpoint: %+v", ep)
	}
	if st := ep.Args["status"]; st["type"] != "array" || st["items"] == nil {
		t.Errorf("status arg: %v", st)
	}
	if _, ok := idx.Links["help"]; !ok {
		t.Errorf("_links %v", idx.Links)
	}
	// The index is cached like any public read.
	hits := f.metric("vitrine_edge_cache_hits_total")
	f.do(req{uri: "/index.php?rest_route=/"})
	if f.metric("vitrine_edge_cache_hits_total") <= hits {
		t.Error("the index was not answered from the cache")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestNamespaceIndex(t *testing.T) {
	f := newFixture(t, edge.Config{})
	tests := []struct {
		name, uri string
		status    int
		want      string // a substring of the body
	}{
		{"cms root", "/index.php?rest_route=/cms/v2", 200, `"namespace":"cms/v2"`},
		{"trailing slash", "/index.php?rest_route=/cms/v2/", 200, `"namespace":"cms/v2"`},
		{"agent root", "/index.php?rest_route=/agent/v1", 200, `"namespace":"agent/v1"`},
		{"another namespace asked by argument", "/index.php?rest_route=/cms/v2&namespace=agent/v1", 200, `"namespace":"agent/v1"`},
		{"routes match case-insensitively", "/index.php?rest_route=/CMS/V2", 200, `"namespace":"cms/v2"`},
		{"an item too", "/index.php?rest_route=/Cms/v2/Posts/101", 200, `"id":101`},
		{"unknown namespace argument", "/index.php?rest_route=/cms/v2&namespace=nope/v1", 404, `"code":"rest_invalid_namespace"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(req{uri: tt.uri})
			if resp.StatusCode() != tt.status || !bytes.Contains(resp.Body(), []byte(tt.want)) {
				t.Fatalf("%d %s", resp.StatusCode(), resp.Body())
			}
		})
	}
	var ns struct {
		Routes map[string]struct {
			Namespace string `json:"namespace"`
		} `json:"routes"`
		Links map[string][]map[string]string `json:"_links"`
	}
	json.Unmarshal(f.do(req{uri: "/index.php?rest_route=/cms/v2"}).Body(), &ns)
	if _, ok := ns.Routes["/cms/v2"]; !ok || len(ns.Routes) < 3 {
		t.Errorf("cms/v2 routes: %v", ns.Routes)
	}
	for k, r := range ns.Routes {
		if r.Namespace != "cms/v2" {
			t.Errorf("%s of namespace %q in the cms/v2 index", k, r.Namespace)
		}
	}
	if up := ns.Links["up"]; len(up) != 1 || up[0]["href"] != "https://api.shop.example/index.php?rest_route=/" {
		t.Errorf("_links.up %v", ns.Links)
	}
}

func TestOptionsHeadAndOverride(t *testing.T) {
	f := newFixture(t, edge.Config{})
	t.Run("OPTIONS describes the route without its handler", func(t *testing.T) {
		for _, tt := range []struct{ uri, want string }{
			{"/index.php?rest_route=/cms/v2/posts", `{"namespace":"cms/v2","methods":["GET","POST"]`},
			{"/index.php?rest_route=/cms/v2/posts/101", `"methods":["GET","POST","PUT","PATCH","DELETE"]`},
			{"/index.php?rest_route=/cms/v2/posts/999999", `"methods":["GET","POST","PUT","PATCH","DELETE"]`},
			{"/index.php?rest_route=/", `{"namespace":"","methods":["GET"]`},
			{"/index.php?rest_route=/cms/v2/nothing-here", `[]`},
			{"/index.php?rest_route=/cms/v2/posts/abc", `[]`},
		} {
			resp := f.do(req{method: "OPTIONS", uri: tt.uri})
			if resp.StatusCode() != 200 || !bytes.HasPrefix(resp.Body(), []byte(tt.want)) && !bytes.Contains(resp.Body(), []byte(tt.want)) {
				t.Errorf("OPTIONS %s: %d %s", tt.uri, resp.StatusCode(), resp.Body())
			}
			if tt.want == "[]" && string(resp.Body()) != "[]" {
				t.Errorf("OPTIONS %s: %s, want []", tt.uri, resp.Body())
			}
		}
		if f.up.lastRequest() != nil {
			t.Error("an anonymous OPTIONS reached the origin")
		}
		resp := f.do(req{method: "OPTIONS", uri: "/index.php?rest_route=/cms/v2/posts", headers: map[string]string{"Authorization": "Basic eDp5"}})
		if up := f.up.lastRequest(); up == nil || string(up.Header.Method()) != "OPTIONS" || resp.StatusCode() != 201 {
			t.Errorf("OPTIONS with credentials not forwarded: %d", resp.StatusCode())
		}
	})
	t.Run("HEAD answers GET's headers without a body", func(t *testing.T) {
		for _, uri := range []string{"/index.php?rest_route=/cms/v2/posts&per_page=1", "/index.php?rest_route=/"} {
			get := f.do(req{uri: uri})
			head := f.do(req{method: "HEAD", uri: uri})
			if head.StatusCode() != 200 || len(head.Body()) != 0 {
				t.Errorf("HEAD %s: %d, %d bytes of body", uri, head.StatusCode(), len(head.Body()))
			}
			for _, h := range []string{"Content-Type", "X-WP-Total", "X-WP-TotalPages", "Link", "ETag", "Allow"} {
				if g, h2 := string(get.Header.Peek(h)), string(head.Header.Peek(h)); g != h2 {
					t.Errorf("HEAD %s: %s %q, GET %q", uri, h, h2, g)
				}
			}
		}
	})
	t.Run("method override goes to the origin, which applies it", func(t *testing.T) {
		resp := f.do(req{method: "POST", uri: "/index.php?rest_route=/cms/v2/posts/101&_method=DELETE"})
		up := f.up.lastRequest()
		if resp.StatusCode() != 201 || up == nil || string(up.Header.Method()) != "POST" || !bytes.Contains(up.RequestURI(), []byte("_method=DELETE")) {
			t.Fatalf("forwarded %v", up)
		}
	})
}

func TestShapingParameters(t *testing.T) {
	// Without a cache, the same answers come from shaping in place.
	t.Run("uncached", func(t *testing.T) { testShaping(t, newFixture(t, edge.Config{CacheBytes: -1}), false) })
	testShaping(t, newFixture(t, edge.Config{}), true)
}

func testShaping(t *testing.T, f *fixture, cached bool) {
	list := "/index.php?rest_route=/cms/v2/posts&per_page=1"
	tests := []struct {
		name, uri   string
		status      int
		contentType string
		body        string // exact, or a prefix when it ends with "…"
	}{
		{"_fields on a list", list + "&_fields=id,title.rendered", 200, "application/json; charset=UTF-8",
			`[{"id":101,"title":{"rendered":"Summer sale"}}]`},
		{"_fields on an item, links named", "/index.php?rest_route=/cms/v2/posts/100&_fields=slug,_links.self", 200, "application/json; charset=UTF-8",
			`{"slug":"spring-news","_links":{…`},
		{"_fields ignored on errors", "/index.php?rest_route=/cms/v2/posts/999&_fields=id", 404, "application/json; charset=UTF-8",
			`{"code":"rest_post_invalid_id","message":"Invalid post ID.","data":{"status":404}}`},
		{"_envelope on a list", list + "&_fields=id&_envelope", 200, "application/json; charset=UTF-8",
			`{"body":[{"id":101}],"status":200,"headers":{"X-WP-Total":2,"X-WP-TotalPages":2,"Link":"<https://api.shop.example/index.php?rest_route=/cms/v2/posts&per_page=1&page=2>; rel=\"next\"","Allow":"GET"}}`},
		{"_envelope on an error", "/index.php?rest_route=/cms/v2/posts/999&_envelope=1", 200, "application/json; charset=UTF-8",
			`{"body":{"code":"rest_post_invalid_id","message":"Invalid post ID.","data":{"status":404}},"status":404,"headers":[]}`},
		{"_envelope on a bad argument", "/index.php?rest_route=/cms/v2/posts&per_page=0&_envelope", 200, "application/json; charset=UTF-8",
			`{"body":{"code":"rest_invalid_param",…`},
		{"_jsonp", "/index.php?rest_route=/cms/v2/posts/100&_fields=id&_jsonp=my.cb_1", 200, "application/javascript; charset=UTF-8",
			`/**/my.cb_1({"id":100})`},
		{"_jsonp of an error", "/index.php?rest_route=/cms/v2/posts/999&_jsonp=cb", 404, "application/javascript; charset=UTF-8",
			`/**/cb({"code":"rest_post_invalid_id","message":"Invalid post ID.","data":{"status":404}})`},
		{"_jsonp with _envelope", "/index.php?rest_route=/cms/v2/posts/100&_fields=id&_envelope&_jsonp=cb", 200, "application/javascript; charset=UTF-8",
			`/**/cb({"body":{"id":100},"status":200,"headers":{"Link":"<https://api.shop.example/?p=100>; rel=\"alternate\"; type=text/html","Allow":"GET"}})`},
		{"invalid callback", "/index.php?rest_route=/cms/v2/posts&_jsonp=alert(1)", 400, "application/javascript; charset=UTF-8",
			`{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
		{"invalid callback before routing", "/index.php?rest_route=/nope&_jsonp=a-b", 400, "application/javascript; charset=UTF-8",
			`{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
		{"invalid callback before the tenant", "/index.php?rest_route=/cms/v2/posts&_jsonp=a%20b", 400, "application/javascript; charset=UTF-8",
			`{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
		{"_pretty", "/index.php?rest_route=/cms/v2/posts/100&_fields=id,title.rendered&_pretty", 200, "application/json; charset=UTF-8",
			"{\n    \"id\": 100,\n    \"title\": {\n        \"rendered\": \"Spring news\"\n    }\n}"},
		{"empty callback is no JSONP", list + "&_fields=id&_jsonp=", 200, "application/json; charset=UTF-8", `[{"id":101}]`},
		{"commerce routes ignore them", "/api/currencies?_fields=code&_envelope&_jsonp=cb", 200, "application/json; charset=utf-8", `{"data":[{"code":"EUR",…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 2; i++ { // the second answer comes from the cache where cacheable
				r := req{uri: tt.uri}
				if tt.name == "invalid callback before the tenant" {
					r.host = "nobody.vitrine.test"
				}
				resp := f.do(r)
				body := string(resp.Body())
				ok := body == tt.body
				if p, cut := strings.CutSuffix(tt.body, "…"); cut {
					ok = strings.HasPrefix(body, p)
				}
				if resp.StatusCode() != tt.status || string(resp.Header.ContentType()) != tt.contentType || !ok {
					t.Fatalf("answer %d: %d %s\n%s", i, resp.StatusCode(), resp.Header.ContentType(), body)
				}
				if strings.Contains(tt.uri, "_envelope") && tt.status == 200 && strings.Contains(tt.uri, "cms") && len(resp.Header.Peek("X-WP-Total")) > 0 {
					t.Fatal("an envelope's headers are also sent")
				}
			}
		})
	}
	if !cached {
		return
	}
	// Shaped answers never leak into the plain answer's cache entry, and are hits themselves.
	plain := f.do(req{uri: list})
	if !bytes.Contains(plain.Body(), []byte(`"content"`)) || string(plain.Header.Peek("X-WP-Total")) != "2" {
		t.Fatalf("plain list after shaped ones: %s", plain.Body())
	}
	hits := f.metric("vitrine_edge_cache_hits_total")
	again := f.do(req{uri: list + "&_fields=id,title.rendered"})
	if f.metric("vitrine_edge_cache_hits_total") != hits+1 || string(again.Body()) != `[{"id":101,"title":{"rendered":"Summer sale"}}]` {
		t.Fatalf("shaped answer not a hit: %s", again.Body())
	}
	// The same filter written differently shares the shaped entry (normalised key): a miss on
	// the raw key, then a hit on the canonical one, with the same body.
	other := f.do(req{uri: list + "&_fields=title.rendered,id"})
	if string(other.Body()) != string(again.Body()) {
		t.Fatalf("normalised filter answers %s", other.Body())
	}
}

// BenchmarkShapedMiss measures what a shaped request costs when only its unshaped answer is
// cached (the canonical entry): shaping ten posts plus building and compressing the shaped entry.
// A repeat of the same request is then a raw-key hit, the allocation-free path.
func BenchmarkShapedMiss(b *testing.B) {
	for _, bc := range []struct{ name, shape string }{
		{"fields", "&_fields=id,title.rendered,link"},
		{"envelope", "&_envelope"},
		{"jsonp", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, edge.Config{})
			list := "/index.php?rest_route=/cms/v2/posts&per_page=10"
			f.do(req{uri: list})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A new callback each time: a miss of the raw and shaped keys.
				resp := f.do(req{uri: list + bc.shape + "&_jsonp=cb" + strconv.Itoa(i)})
				if resp.StatusCode() != 200 {
					b.Fatal(resp.StatusCode())
				}
			}
		})
	}
	b.Run("hit", func(b *testing.B) {
		f := newFixture(b, edge.Config{})
		uri := "/index.php?rest_route=/cms/v2/posts&per_page=10&_fields=id,title.rendered,link"
		f.do(req{uri: uri})
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.do(req{uri: uri})
		}
	})
}

// The site URL names the API root, as every WordPress page does: wpapi's WPAPI.discover HEADs
// the site, reads the Link header and GETs the index it names.
func TestSiteHomeNamesTheAPIRoot(t *testing.T) {
	f := newFixture(t, edge.Config{})
	for _, r := range []req{
		{method: "HEAD", uri: "/"},
		{uri: "/"},
		{uri: "/index.php"},
		{uri: "/", headers: map[string]string{"Authorization": "Basic eDp5"}},
	} {
		resp := f.do(r)
		if resp.StatusCode() != 200 || string(resp.Header.Peek("Link")) != `<https://api.shop.example/index.php?rest_route=/>; rel="https://api.w.org/"` ||
			!bytes.HasPrefix(resp.Header.ContentType(), []byte("text/html")) {
			t.Fatalf("%s %s: %d %s", r.method, r.uri, resp.StatusCode(), resp.Header.String())
		}
		if r.method != "HEAD" && !bytes.Contains(resp.Body(), []byte(`<link rel="https://api.w.org/" href="https://api.shop.example/index.php?rest_route=/">`)) {
			t.Fatalf("home page: %s", resp.Body())
		}
	}
	if resp := f.do(req{uri: "/index.php?rest_route[]=/cms/v2/posts"}); resp.StatusCode() != 400 ||
		string(resp.Body()) != `{"code":"rest_path_invalid_type","message":"The REST route parameter must be a string.","data":{"status":400}}` {
		t.Errorf("rest_route[]: %d %s", resp.StatusCode(), resp.Body())
	}
	if f.up.lastRequest() != nil {
		t.Error("the home page went to the origin")
	}
	// No route takes POST / (GET / with embed is the embed page's route): the edge answers the
	// origin's 405 itself (decision 18).
	if resp := f.do(req{method: "POST", uri: "/"}); resp.StatusCode() != 405 || string(resp.Header.Peek("Allow")) != "GET" || f.up.lastRequest() != nil {
		t.Errorf("POST /: %d, forwarded %v", resp.StatusCode(), f.up.lastRequest() != nil)
	}
}
