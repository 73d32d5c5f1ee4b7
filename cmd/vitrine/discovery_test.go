package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/sync/relay"
)

// TestDiscoveryAndPipeline runs the CMS discovery routes and the request pipeline (OPTIONS,
// HEAD, method override, _fields, _envelope, _jsonp) against a real origin and edge: the index
// is the same bytes from both, and what the edge forwards the origin shapes the same way.
func TestDiscoveryAndPipeline(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	o := s.startOrigin()
	e := s.startEdge(edge.Config{})
	_, pw := s.tenant("shop")
	host := "shop.example.test"
	auth := basic("admin", pw)
	posts := "/index.php?rest_route=/cms/v2/posts"

	for _, uri := range []string{"/index.php?rest_route=/", "/?rest_route=/", "/index.php?rest_route=/cms/v2", "/index.php?rest_route=/agent/v1/"} {
		fromEdge := call(t, "GET", e.addr, host, uri, "")
		fromOrigin := call(t, "GET", o.addr, host, uri, "")
		if fromEdge.status != 200 || !bytes.Equal(fromEdge.body, fromOrigin.body) {
			t.Fatalf("%s: edge %d and origin %d answer different bodies:\n%s\n%s", uri, fromEdge.status, fromOrigin.status, fromEdge.body, fromOrigin.body)
		}
		if !bytes.Contains(fromEdge.body, []byte(`"https://shop.shop.example/index.php?rest_route=/`)) {
			t.Fatalf("%s: no canonical URLs: %s", uri, fromEdge.body)
		}
	}
	// The site URL names the index, at the origin and the edge.
	for _, addr := range []string{o.addr, e.addr} {
		r := call(t, "HEAD", addr, host, "/", "")
		if r.status != 200 || r.header.Get("Link") != `<https://shop.shop.example/index.php?rest_route=/>; rel="https://api.w.org/"` {
			t.Fatalf("HEAD / at %s: %d %v", addr, r.status, r.header)
		}
	}
	idx := call(t, "GET", o.addr, host, "/index.php?rest_route=/", "", "Authorization", auth)
	if anon := call(t, "GET", o.addr, host, "/index.php?rest_route=/", ""); idx.status != 200 || !bytes.Equal(idx.body, anon.body) {
		t.Fatalf("the index differs with credentials: %d", idx.status)
	}

	// Create a post through the edge with X-HTTP-Method-Override, as api-fetch sends writes.
	created := call(t, "POST", e.addr, host, posts, `{"title":"Hello","content":"World","status":"publish"}`, "Authorization", auth)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	id := int64(created.json(t)["id"].(float64))
	item := fmt.Sprintf("%s/%d", posts, id)
	if r := call(t, "POST", e.addr, host, item, `{"title":"Renamed"}`, "Authorization", auth, "X-HTTP-Method-Override", "PATCH"); r.status != 200 || !strings.Contains(string(r.body), `"Renamed"`) {
		t.Fatalf("PATCH by override header: %d %s", r.status, r.body)
	}
	if r := call(t, "POST", e.addr, host, item+"&_method=PUT", `{"title":"Again"}`, "Authorization", auth); r.status != 200 || !strings.Contains(string(r.body), `"Again"`) {
		t.Fatalf("PUT by _method: %d %s", r.status, r.body)
	}
	// A GET is never overridden into a write.
	if r := call(t, "GET", e.addr, host, item+"&_method=DELETE&vitrine_min_version=0", "", "Authorization", auth); r.status != 200 {
		t.Fatalf("GET with _method=DELETE: %d %s", r.status, r.body)
	}

	tests := []struct {
		name, method, uri, auth string
		status                  int
		contentType             string
		body                    string // prefix
	}{
		{"OPTIONS at the origin", "OPTIONS", posts, "", 200, "application/json; charset=UTF-8", `{"namespace":"cms/v2","methods":["GET","POST"]`},
		{"OPTIONS with credentials", "OPTIONS", item, auth, 200, "application/json; charset=UTF-8", `{"namespace":"cms/v2","methods":["GET","POST","PUT","PATCH","DELETE"]`},
		{"OPTIONS with a bad credential is a 401", "OPTIONS", posts, basic("admin", "wrong"), 401, "application/json; charset=UTF-8", `{"code":"incorrect_password"`},
		{"OPTIONS of nothing", "OPTIONS", "/index.php?rest_route=/nope/v1", "", 200, "application/json; charset=UTF-8", `[]`},
		{"_fields at the origin", "GET", item + "&_fields=id,title", auth, 200, "application/json; charset=UTF-8", fmt.Sprintf(`{"id":%d,"title":{"rendered":"Again"}}`, id)},
		{"_envelope of a write", "POST", posts + "&_envelope&_fields=title.raw", auth, 200, "application/json; charset=UTF-8", `{"body":{"title":{"raw":"Enveloped"}},"status":201,"headers":{"Location":"https://shop.shop.example/index.php?rest_route=/cms/v2/posts/`},
		{"_envelope of an unknown route", "GET", "/index.php?rest_route=/cms/v2/nothing&_envelope", "", 200, "application/json; charset=UTF-8", `{"body":{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}},"status":404,"headers":[]}`},
		{"_envelope of a forbidden edit context", "GET", posts + "&context=edit&_envelope", "", 200, "application/json; charset=UTF-8", `{"body":{"code":"rest_forbidden_context"`},
		{"_jsonp of an anonymous read", "GET", item + "&_fields=id&_jsonp=cb", "", 200, "application/javascript; charset=UTF-8", fmt.Sprintf(`/**/cb({"id":%d})`, id)},
		{"no _jsonp with credentials", "GET", item + "&_fields=id&_jsonp=cb", auth, 400, "application/javascript; charset=UTF-8", `{"code":"rest_callback_disabled","message":"JSONP is not available to authenticated requests."}`},
		{"invalid callback before authentication", "GET", posts + "&_jsonp=x(", basic("admin", "wrong"), 400, "application/javascript; charset=UTF-8", `{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, addr := range []string{o.addr, e.addr} {
				body := ""
				if tt.method == "POST" {
					body = `{"title":"Enveloped","status":"draft"}`
				}
				var headers []string
				if tt.auth != "" {
					headers = []string{"Authorization", tt.auth}
				}
				r := call(t, tt.method, addr, host, tt.uri, body, headers...)
				if r.status != tt.status || r.header.Get("Content-Type") != tt.contentType || !bytes.HasPrefix(r.body, []byte(tt.body)) {
					t.Fatalf("%s: %d %s\n%s", addr, r.status, r.header.Get("Content-Type"), r.body)
				}
			}
		})
	}

	// HEAD: GET's headers, no body, at the origin (credentials) and the edge (anonymous).
	for _, c := range []struct {
		addr, auth string
	}{{o.addr, auth}, {e.addr, ""}} {
		var h []string
		if c.auth != "" {
			h = []string{"Authorization", c.auth}
		}
		get := call(t, "GET", c.addr, host, posts+"&per_page=1", "", h...)
		head := call(t, "HEAD", c.addr, host, posts+"&per_page=1", "", h...)
		if head.status != 200 || len(head.body) != 0 || head.header.Get("X-WP-Total") != get.header.Get("X-WP-Total") ||
			head.header.Get("Link") != get.header.Get("Link") || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Fatalf("HEAD at %s: %d %v, GET %v", c.addr, head.status, head.header, get.header)
		}
	}
}
