package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/sitehealth"
	"vitrine/schema"
)

// TestSiteHealth drives /cms-site-health/v1/tests/{test} through an edge of a system with two
// edges: administrators only, WordPress's result shape for every test, a good database, NATS and
// authorization header, the outbound test against a loopback server and then against its closed
// port, and replica lag listing both edges at the store's version after a write settles, then
// only the one still running.
func TestSiteHealth(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer upstream.Close()
	s := newSystem(t, systemOptions{})
	s.originConfig.SiteHealth = sitehealth.Config{OutboundURL: upstream.URL + "/", OutboundTimeout: 2 * time.Second,
		OutboundAllowlist: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	c := cmsSiteOn(t, s, edge.Config{}, schema.RoleEditor)
	second := s.startEdge(edge.Config{})
	waitFor(t, 10*time.Second, "the second edge to serve the store", func() bool {
		tn := second.rep.TenantBySlug("cms")
		return tn != nil && tn.Ready()
	})
	const base = "/cms-site-health/v1/tests/"

	// Administrators only, before any test runs.
	// The Allow header says the same (WordPress's rest_send_allow_header).
	for _, test := range schema.SiteHealthTests {
		r := c.rest("", "GET", base+test, "")
		m := c.want(r, 401, "rest_forbidden")
		if m["message"] != "Sorry, you are not allowed to do that." || r.header.Get("Allow") != "" {
			t.Errorf("%s anonymous: %v, Allow %q", test, m, r.header.Get("Allow"))
		}
		r = c.rest(schema.RoleEditor, "GET", base+test, "")
		if c.want(r, 403, "rest_forbidden"); r.header.Get("Allow") != "" {
			t.Errorf("%s editor: Allow %q", test, r.header.Get("Allow"))
		}
	}
	// No such test, no such method: WordPress's unknown route.
	c.want(c.rest(schema.RoleAdministrator, "GET", base+"loopback-requests", ""), 404, "rest_no_route")
	c.want(c.rest(schema.RoleAdministrator, "POST", base+"database", "{}"), 404, "rest_no_route")

	run := func(test string) (map[string]any, map[string]any) {
		t.Helper()
		r := c.rest(schema.RoleAdministrator, "GET", base+test, "")
		c.want(r, 200, "")
		m := r.json(t)
		badge, _ := m["badge"].(map[string]any)
		status, _ := m["status"].(string)
		if badge == nil || badge["color"] != "blue" || (badge["label"] != "Performance" && badge["label"] != "Security") ||
			(status != "good" && status != "recommended" && status != "critical") || m["label"] == "" ||
			!strings.HasPrefix(fmt.Sprint(m["description"]), "<p>") || m["test"] != strings.ReplaceAll(test, "-", "_") {
			t.Fatalf("%s: not WordPress's shape: %s", test, r.body)
		}
		if _, ok := m["actions"].(string); !ok {
			t.Fatalf("%s: actions is not a string: %s", test, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Allow") != "GET" {
			t.Errorf("%s: Cache-Control %q, Allow %q", test, r.header.Get("Cache-Control"), r.header.Get("Allow"))
		}
		details, _ := m["details"].(map[string]any)
		return m, details
	}
	wantStatus := func(test string, m map[string]any, status string) {
		t.Helper()
		if m["status"] != status {
			t.Errorf("%s: status %v, want %s: %v", test, m["status"], status, m)
		}
	}

	m, d := run("database")
	wantStatus("database", m, "good")
	if d["reachable"] != true || d["migration"] != d["migration_expected"] {
		t.Errorf("database details %v", d)
	}
	m, d = run("nats")
	wantStatus("nats", m, "good")
	if d["status"] != "CONNECTED" || d["jetstream"] != true {
		t.Errorf("nats details %v", d)
	}
	m, _ = run("authorization-header")
	wantStatus("authorization-header", m, "good")
	m, d = run("outbound-http")
	wantStatus("outbound-http", m, "good")
	if d["status"] != float64(http.StatusNoContent) {
		t.Errorf("outbound details %v", d)
	}

	// A write settles on both edges: both are listed at the store's version.
	r := c.rest(schema.RoleAdministrator, "POST", "/cms/v2/posts", `{"title":"Health","status":"publish"}`)
	c.want(r, 201, "")
	v := r.header.Get("Vitrine-Write-Version")
	for _, addr := range []string{c.edge, second.addr} {
		if r := call(t, "GET", addr, c.host, "/index.php?rest_route=/cms/v2/posts&vitrine_min_version="+v, ""); r.status != 200 {
			t.Fatalf("%s behind %s: %d %s", addr, v, r.status, r.body)
		}
	}
	start := time.Now()
	m, d = run("replica-lag")
	if took := time.Since(start); took < 300*time.Millisecond || took > 3*time.Second {
		t.Errorf("replica-lag answered in %s: it gathers replies for 300ms", took)
	}
	wantStatus("replica-lag", m, "good")
	if fmt.Sprint(d["head_version"]) != v {
		t.Errorf("head version %v, want %s", d["head_version"], v)
	}
	if o, _ := d["origin"].(map[string]any); o["lag_versions"] != float64(0) || o["serving"] != true {
		t.Errorf("origin %v", d["origin"])
	}
	edges := func(d map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		list, _ := d["edges"].([]any)
		for _, e := range list {
			e := e.(map[string]any)
			out[e["name"].(string)] = e
		}
		return out
	}
	got := edges(d)
	for _, addr := range []string{c.edge, second.addr} {
		e := got["edge "+addr]
		if e == nil || e["lag_versions"] != float64(0) || fmt.Sprint(e["version"]) != v || e["serving"] != true || e["status"] != "good" {
			t.Errorf("edge %s: %v (all: %v)", addr, e, d["edges"])
		}
	}
	if len(got) != 2 {
		t.Errorf("edges %v", d["edges"])
	}
	if desc := fmt.Sprint(m["description"]); !strings.Contains(desc, "edge "+second.addr+": version "+v+", 0 versions behind") {
		t.Errorf("description %s", desc)
	}

	// An edge stopped is no longer listed; the one running still is.
	second.stop()
	_, d = run("replica-lag")
	if got := edges(d); len(got) != 1 || got["edge "+c.edge] == nil {
		t.Errorf("after stopping an edge: %v", d["edges"])
	}

	// The outbound test's target closed: critical, at once.
	upstream.Close()
	start = time.Now()
	m, d = run("outbound-http")
	wantStatus("outbound-http", m, "critical")
	if took := time.Since(start); took > time.Second || !strings.Contains(fmt.Sprint(d["error"]), "refused") {
		t.Errorf("closed port: %v after %s", d, took)
	}
}
