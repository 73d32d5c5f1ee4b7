package main

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/sync/relay"
)

// Bad input gets a clear 4xx in the interface's error shape and writes nothing, whether it is sent
// to the origin or through an edge.
func TestBadInputWritesNothing(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{MaxBodyBytes: 64 << 10})
	_, pw := s.tenant("shop")
	_, otherPW := s.tenant("other")
	host := "shop.example.test"
	auth := basic("admin", pw)
	ctx := context.Background()
	create := call(t, "POST", e.addr, host, "/api/admin/products", `{"title":"Lamp","slug":"lamp","status":"active","prices":{"USD":100}}`, "Authorization", auth)
	if create.status != 201 {
		t.Fatalf("setup: %d %s", create.status, create.body)
	}
	log, _ := s.db.LogBySlug(ctx, "shop")
	before, _ := s.db.LogBySlug(ctx, "shop")

	huge := `{"title":"` + strings.Repeat("x", 70<<10) + `","prices":{"USD":1}}`
	tests := []struct {
		name, method, uri, body string
		headers                 []string
		status                  int
		code                    string // the commerce code or the CMS code
	}{
		{"malformed JSON", "POST", "/api/admin/products", `{"title":"x",`, nil, 400, "invalid"},
		{"not an object", "POST", "/api/admin/products", `["title"]`, nil, 400, "invalid"},
		{"empty body", "POST", "/api/admin/products", ``, nil, 400, "invalid"},
		{"trailing data", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}} {}`, nil, 400, "invalid"},
		{"wrong type", "POST", "/api/admin/products", `{"title":42,"prices":{"USD":1}}`, nil, 400, "invalid"},
		{"wrong nested type", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":"ten"}}`, nil, 400, "invalid"},
		{"unknown field", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1},"colour":"red"}`, nil, 400, "invalid"},
		{"null field", "PATCH", "/api/admin/products/1", `{"title":null}`, nil, 400, "invalid"},
		{"missing title", "POST", "/api/admin/products", `{"prices":{"USD":1}}`, nil, 400, "invalid"},
		{"bad slug", "POST", "/api/admin/products", `{"title":"x","slug":"Not A Slug","prices":{"USD":1}}`, nil, 400, "invalid"},
		{"reserved slug", "POST", "/api/admin/products", `{"title":"x","slug":"featured","prices":{"USD":1}}`, nil, 400, "invalid"},
		{"duplicate slug", "POST", "/api/admin/products", `{"title":"x","slug":"lamp","prices":{"USD":1}}`, nil, 409, "conflict"},
		{"negative price", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":-5}}`, nil, 400, "invalid"},
		{"bad currency code", "POST", "/api/admin/products", `{"title":"x","prices":{"usd":5}}`, nil, 400, "invalid"},
		{"bad status", "PATCH", "/api/admin/products/1", `{"status":"live"}`, nil, 400, "invalid"},
		{"unknown product", "PATCH", "/api/admin/products/999999", `{"title":"x"}`, nil, 404, "not_found"},
		{"non-numeric id", "PATCH", "/api/admin/products/abc", `{"title":"x"}`, nil, 404, "not_found"},
		{"wrong content type", "POST", "/api/admin/products", `title=x`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported"},
		{"oversized body", "POST", "/api/admin/products", huge, nil, 413, "too_large"},
		{"no credentials", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}}`, []string{"Authorization", ""}, 401, "unauthorized"},
		{"wrong password", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}}`, []string{"Authorization", basic("admin", "wrong")}, 401, "unauthorized"},
		{"another tenant's password", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}}`, []string{"Authorization", basic("admin", otherPW)}, 401, "unauthorized"},
		{"malformed Basic", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}}`, []string{"Authorization", "Basic !!!"}, 401, "unauthorized"},
		{"bearer token", "POST", "/api/admin/products", `{"title":"x","prices":{"USD":1}}`, []string{"Authorization", "Bearer esk_nope"}, 401, "unauthorized"},
		{"wrong method", "PUT", "/api/admin/products", `{}`, nil, 405, "not_allowed"},
		{"bad variant sku", "POST", "/api/admin/products/1/variants", `{"sku":"has space"}`, nil, 400, "invalid"},
		{"category parent missing", "POST", "/api/admin/categories", `{"name":"x","parent_id":99999}`, nil, 400, "invalid"},
		{"currency rate not decimal", "POST", "/api/admin/currencies", `{"code":"EUR","name":"Euro","exponent":2,"rate":"1e3"}`, nil, 400, "invalid"},
		{"currency exponent bounds", "POST", "/api/admin/currencies", `{"code":"EUR","name":"Euro","exponent":9,"rate":"1"}`, nil, 400, "invalid"},
		{"default currency delete", "DELETE", "/api/admin/currencies/USD", ``, nil, 409, "conflict"},
		{"CMS malformed JSON", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":`, nil, 400, "rest_invalid_json"},
		{"CMS bad status", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x","status":"live"}`, nil, 400, "rest_invalid_param"},
		{"CMS bad date", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x","date":"yesterday"}`, nil, 400, "rest_invalid_param"},
		{"CMS empty post", "POST", "/index.php?rest_route=/cms/v2/posts", `{"status":"draft"}`, nil, 400, "empty_content"},
		{"CMS existing id", "POST", "/index.php?rest_route=/cms/v2/posts", `{"id":5,"title":"x"}`, nil, 400, "rest_post_exists"},
		{"CMS sticky with password", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x","sticky":true,"password":"p"}`, nil, 400, "rest_invalid_field"},
		{"CMS unknown author", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x","author":424242}`, nil, 400, "rest_invalid_author"},
		{"CMS unknown post", "POST", "/index.php?rest_route=/cms/v2/posts/999", `{"title":"x"}`, nil, 404, "rest_post_invalid_id"},
		{"CMS anonymous create", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x"}`, []string{"Authorization", ""}, 401, "rest_cannot_create"},
		{"CMS wrong password", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x"}`, []string{"Authorization", basic("admin", "nope")}, 401, "incorrect_password"},
		{"CMS unknown user", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x"}`, []string{"Authorization", basic("ghost", "nope")}, 401, "invalid_username"},
		{"CMS oversized body", "POST", "/index.php?rest_route=/cms/v2/posts", huge, nil, 413, "rest_request_too_large"},
	}
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`)
	for _, via := range []struct{ name, addr string }{{"origin", s.originAddr}, {"edge", e.addr}} {
		for _, tt := range tests {
			t.Run(via.name+"/"+tt.name, func(t *testing.T) {
				headers := append([]string{"Authorization", auth}, tt.headers...)
				if via.name == "origin" && tt.name == "oversized body" || via.name == "origin" && tt.name == "CMS oversized body" {
					t.Skip("the origin's body limit is larger; the edge's is the one under test")
				}
				var r *response
				if strings.Contains(tt.name, "oversized") {
					// The server answers 413 and closes before the body is sent: read the answer
					// whatever becomes of the write.
					r = callEarlyAnswer(t, tt.method, via.addr, host, tt.uri, tt.body, headers...)
				} else {
					r = call(t, tt.method, via.addr, host, tt.uri, tt.body, headers...)
				}
				if r.status != tt.status {
					t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
				}
				m := r.json(t)
				if strings.Contains(tt.uri, "rest_route") {
					data, _ := m["data"].(map[string]any)
					if m["code"] != tt.code || m["message"] == "" || data == nil || int(data["status"].(float64)) != tt.status {
						t.Fatalf("CMS error shape: %s", r.body)
					}
				} else if m["code"] != tt.code || m["error"] == "" || m["request_id"] != r.header.Get("X-Request-Id") {
					t.Fatalf("commerce error shape: %s", r.body)
				}
				if strings.Contains(string(r.body), "SQL") || strings.Contains(string(r.body), "pgx") || strings.Contains(string(r.body), "goroutine") || uuid.Match(r.body) {
					t.Fatalf("internal detail in the body: %s", r.body)
				}
			})
		}
	}
	after, _ := s.db.LogBySlug(ctx, "shop")
	if after.Version != before.Version {
		t.Fatalf("bad input wrote: the log moved from %d to %d", before.Version, after.Version)
	}
	rows, _ := s.db.OutboxRows(ctx, log.ID, before.Version, 10)
	if len(rows) != 0 {
		t.Fatalf("bad input reached the outbox: %d rows", len(rows))
	}
}

// An unknown tenant answers exactly what an unknown route answers (request id aside), at the edge
// and at the origin, in both interfaces.
func TestUnknownTenantLooksLikeUnknownRoute(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	s.tenant("shop")
	id := regexp.MustCompile(`"request_id":"[^"]*"`)
	norm := func(r *response) string {
		return r.header.Get("Content-Type") + " " + string(id.ReplaceAll(r.body, []byte(`"request_id":""`)))
	}
	for _, addr := range []string{e.addr, s.originAddr} {
		for _, uri := range []string{"/api/nothing-here", "/index.php?rest_route=/cms/v2/nothing-here"} {
			route := call(t, "GET", addr, "shop.example.test", uri, "")
			tenant := call(t, "GET", addr, "nobody.example.test", uri, "")
			byHeader := call(t, "GET", addr, "127.0.0.1", uri, "", "X-Tenant-Slug", "nobody")
			if route.status != 404 || tenant.status != 404 || byHeader.status != 404 {
				t.Fatalf("%s %s: statuses %d %d %d", addr, uri, route.status, tenant.status, byHeader.status)
			}
			if norm(route) != norm(tenant) || norm(route) != norm(byHeader) {
				t.Fatalf("%s %s: unknown route %q, unknown tenant %q / %q", addr, uri, norm(route), norm(tenant), norm(byHeader))
			}
		}
	}
}

// The multi-process setup as documented: relay, origin and edge as separate processes
// configured by flags and environment, each with /healthz, /readyz and /metrics, stopped
// gracefully by SIGTERM.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	_, pw := s.tenant("shop")
	originAddr, originOps, edgeAddr, edgeOps, relayOps := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	env := []string{"VITRINE_DATABASE_URL=" + s.dsn, "VITRINE_NATS_URL=" + s.ns.URL(), "VITRINE_SECRET=" + string(s.key),
		"VITRINE_EDGE_SECRET=shared-edge-secret-0123456789abcdef", "VITRINE_PLATFORM_DOMAIN=example.test", "VITRINE_LOG_LEVEL=" + relayLogLevel()}
	procs := []*component{
		s.startProcess(env, "relay", "--ops-addr", relayOps),
		s.startProcess(env, "origin", "--addr", originAddr, "--ops-addr", originOps),
		s.startProcess(env, "edge", "--addr", edgeAddr, "--ops-addr", edgeOps, "--origin-url", "http://"+originAddr),
	}
	waitFor(t, 30*time.Second, "the edge to be ready", func() bool {
		r, err := tryCall("GET", edgeAddr, "x", "/readyz")
		return err == nil && r.status == 200
	})
	host := "shop.example.test"
	// Ready means caught up with the stream; the relay, started at the same time, may not have
	// published the tenant created before it yet, and edge and origin each learn it from the feed.
	for _, addr := range []string{originAddr, edgeAddr} {
		waitFor(t, 30*time.Second, "the tenant to reach "+addr, func() bool {
			r, err := tryCall("GET", addr, host, "/api/products")
			return err == nil && r.status == 200
		})
	}
	created := call(t, "POST", edgeAddr, host, "/api/admin/products", `{"title":"Desk Lamp","status":"active","prices":{"USD":4200}}`,
		"Authorization", basic("admin", pw))
	if created.status != 201 {
		t.Fatalf("create through the edge process: %d %s", created.status, created.body)
	}
	if r := call(t, "GET", edgeAddr, host, "/api/products/desk-lamp", ""); r.status != 200 {
		t.Fatalf("read-your-write through the edge process: %d %s", r.status, r.body)
	}
	for _, m := range []struct {
		addr  string
		names []string
	}{
		{edgeOps, []string{"vitrine_http_requests_total{process=\"edge\"", "vitrine_edge_cache_misses_total", "vitrine_replica_version{process=\"edge\",tenant=\"shop\"}",
			"vitrine_replica_lag_versions", "vitrine_feed_delivered_total", "go_goroutines"}},
		{originOps, []string{"vitrine_http_requests_total{process=\"origin\"", "vitrine_origin_writes_total 1", "vitrine_store_tx_retries_total", "vitrine_store_grouped_writes_total",
			"vitrine_replica_version{process=\"origin\",tenant=\"shop\"}"}},
		{relayOps, []string{"vitrine_relay_published_total", "vitrine_relay_publish_lag_seconds", "vitrine_relay_lease_held 1", "vitrine_relay_epoch_mismatch 0"}},
	} {
		for _, p := range []string{"/healthz", "/readyz"} {
			if r := call(t, "GET", m.addr, "ops", p, ""); r.status != 200 {
				t.Fatalf("%s%s: %d", m.addr, p, r.status)
			}
		}
		r := call(t, "GET", m.addr, "ops", "/metrics", "")
		for _, name := range m.names {
			if !strings.Contains(string(r.body), name) {
				t.Errorf("%s/metrics lacks %s", m.addr, name)
			}
		}
	}
	for _, p := range procs {
		p.signal(syscall.SIGTERM)
		select {
		case <-p.done:
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited with %d after SIGTERM", p.name, code)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not stop within 15s of SIGTERM", p.name)
		}
	}
}
