package edge_test

import (
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"vitrine/edge"
	"vitrine/edge/replica"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// The edge under a replica memory budget (replica.Config.MaxBytes): a shed tenant's reads are
// forwarded to the origin and say so; its media files answer 503; /readyz names it and stays 200.

// newBudgetFixture is newFixture with a replica budget of maxBytes and a media store.
func newBudgetFixture(t *testing.T, maxBytes int64) *fixture {
	t.Helper()
	rep := replica.New(replica.Config{PlatformDomain: "vitrine.test", MaxBytes: maxBytes, Logger: budgetLogger()})
	f := &fixture{t: t, rep: rep, feed: &feeder{rep: rep, versions: map[string]int64{}}, metrics: metrics.NewSet()}
	seed(f.feed)
	f.up = startUpstream(t)
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.srv, err = edge.New(edge.Config{Origin: "http://" + f.up.addr, RateLimit: -1, Metrics: f.metrics, EdgeSecret: "edge-secret", Blobs: fs}, rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	ln := fasthttputil.NewInmemoryListener()
	hs := f.srv.HTTPServer()
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Shutdown() })
	f.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }, DisablePathNormalizing: true}
	f.dial = ln.Dial
	return f
}

func budgetLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// seededBytes are the bytes the fixture's seed holds for demo and for other.
func seededBytes(t *testing.T) (demo, other int64) {
	r := replica.New(replica.Config{Logger: budgetLogger()})
	seed(&feeder{rep: r, versions: map[string]int64{}})
	return r.TenantBySlug("demo").Snapshot().Bytes, r.TenantBySlug("other").Snapshot().Bytes
}

func readyBudget(t *testing.T, f *fixture) (shed []string, held, maxBytes int64) {
	t.Helper()
	resp := f.do(req{uri: "/readyz"})
	var out struct {
		Status string `json:"status"`
		Budget struct {
			MaxBytes  int64    `json:"max_bytes"`
			HeldBytes int64    `json:"held_bytes"`
			Shed      []string `json:"shed_tenants"`
		} `json:"replica_budget"`
	}
	if err := json.Unmarshal(resp.Body(), &out); err != nil || resp.StatusCode() != 200 || out.Status != "ok" {
		t.Fatalf("/readyz %d %s (%v): a shed tenant leaves the edge ready", resp.StatusCode(), resp.Body(), err)
	}
	return out.Budget.Shed, out.Budget.HeldBytes, out.Budget.MaxBytes
}

func TestBudgetShedTenantIsForwarded(t *testing.T) {
	demo, other := seededBytes(t)
	// demo's growth crosses a budget both fit in: demo, the largest, is shed.
	f := newBudgetFixture(t, demo+other+64)
	if shed, held, max := readyBudget(t, f); len(shed) != 0 || held != demo+other || max != demo+other+64 {
		t.Fatalf("before: shed %v, held %d, max %d", shed, held, max)
	}
	// A body cached while demo fit.
	if resp := f.do(req{uri: "/api/products"}); resp.StatusCode() != 200 || f.up.lastRequest() != nil {
		t.Fatalf("replica answer: %d %s", resp.StatusCode(), resp.Header.String())
	}
	// The cache stores asynchronously: the hit may take a moment.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp := f.do(req{uri: "/api/products"})
		if cs := string(resp.Header.Peek("Cache-Status")); cs == "vitrine-edge; hit" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("not cached: %s", cs)
		}
	}
	f.feed.put("demo", schema.KindProduct, "30", schema.Pub, product(30, "big-one", "Big One", 100))
	f.feed.head("demo")
	if !f.rep.TenantBySlug("demo").Shed() {
		t.Fatal("demo not shed")
	}
	version := f.rep.TenantBySlug("demo").Version()

	for _, tt := range []struct {
		name    string
		r       req
		forward bool
		status  string
	}{
		{"the cached list", req{uri: "/api/products"}, true, "vitrine-edge; fwd=bypass; detail=shed"},
		{"a product page", req{uri: "/api/products/linen-shirt"}, true, "vitrine-edge; fwd=bypass; detail=shed"},
		{"a CMS read", req{uri: "/index.php?rest_route=/cms/v2/posts"}, true, "vitrine-edge; fwd=bypass; detail=shed"},
		{"a CMS OPTIONS", req{method: "OPTIONS", uri: "/index.php?rest_route=/cms/v2/posts"}, true, "vitrine-edge; fwd=bypass; detail=shed"},
		{"a floor at the shed tenant's version", req{uri: "/api/products?vitrine_min_version=" + strconv.FormatInt(version, 10)}, true, "vitrine-edge; fwd=bypass; detail=shed"},
		{"a write", req{method: "DELETE", uri: "/api/cart"}, true, "vitrine-edge; fwd=method"},
		{"a route only the origin answers", req{uri: "/api/cart"}, true, "vitrine-edge; fwd=bypass"},
		{"an unknown route", req{uri: "/api/nope"}, false, ""},
		{"another tenant's read", req{uri: "/api/products", host: "other.vitrine.test"}, false, "vitrine-edge; fwd=miss; stored"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.forgetUpstream()
			resp := f.do(tt.r)
			if forwarded := f.up.lastRequest() != nil; forwarded != tt.forward {
				t.Fatalf("forwarded %v, want %v: %d %s", forwarded, tt.forward, resp.StatusCode(), resp.Header.String())
			}
			if cs := string(resp.Header.Peek("Cache-Status")); cs != tt.status {
				t.Fatalf("Cache-Status %q, want %q", cs, tt.status)
			}
			if tt.forward && string(resp.Body()) != `{"upstream":true}` {
				t.Fatalf("not the origin's body: %s", resp.Body())
			}
		})
	}

	// Its media files: the edge no longer knows them and the origin serves none.
	resp := f.do(req{uri: schema.UploadsPath + "2026/03/harbour.jpg"})
	if resp.StatusCode() != 503 || string(resp.Header.Peek("Retry-After")) == "" {
		t.Fatalf("a shed tenant's media file: %d %s", resp.StatusCode(), resp.Header.String())
	}
	if resp := f.do(req{uri: schema.UploadsPath + "2026/03/harbour.jpg", host: "other.vitrine.test"}); resp.StatusCode() != 404 {
		t.Fatalf("another tenant's unknown media file: %d", resp.StatusCode())
	}
	if f.metric("vitrine_edge_shed_media_refused_total") != 1 {
		t.Fatal("vitrine_edge_shed_media_refused_total")
	}
	if shed, held, _ := readyBudget(t, f); !slices.Equal(shed, []string{"demo"}) || held != other {
		t.Fatalf("after: shed %v, held %d (want %d)", shed, held, other)
	}
}
