package edge_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"vitrine/edge"
	"vitrine/edge/pipeline"
)

// syncBuffer is a bytes.Buffer safe for the log's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The access log writes one JSON line per request with the request's id, tenant, method, path,
// query, status, bytes, duration, client, route and Cache-Status, and never a credential: not
// the Authorization or Cookie header, not a post password or token in the query.
func TestAccessLog(t *testing.T) {
	f := newFixture(t, edge.Config{})
	var buf syncBuffer
	f.srv.SetAccessLog(pipeline.NewAccessLog(slog.NewJSONHandler(&buf, nil)))
	const secret = "s3cr3t-value-never-logged"
	for _, r := range []req{
		{uri: "/api/products?per_page=1"},
		{uri: "/api/products/linen-shirt", headers: map[string]string{"X-Request-Id": "rid-access-1"}},
		{method: "POST", uri: "/api/cart/items", body: "{}", headers: map[string]string{"Authorization": "Bearer " + secret, "Cookie": "sid=" + secret}},
		{uri: "/index.php?rest_route=/cms/v2/posts/100&password=" + secret + "&token=" + secret},
	} {
		f.do(r)
	}
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the access log holds a credential:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines for 4 requests:\n%s", len(lines), out)
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %s", l)
		}
		for _, k := range []string{"time", "request_id", "tenant", "method", "path", "query", "status", "bytes", "duration_ms", "client", "route", "cache_status"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line lacks %s: %s", k, l)
			}
		}
		got = append(got, m)
	}
	for i, want := range []map[string]any{
		{"tenant": "demo", "method": "GET", "path": "/api/products", "query": "per_page=1", "status": 200.0, "route": "products.list GET"},
		{"request_id": "rid-access-1", "path": "/api/products/linen-shirt", "route": "products.item GET"},
		{"method": "POST", "path": "/api/cart/items", "status": 201.0},
		{"query": "rest_route=/cms/v2/posts/100&password=REDACTED&token=REDACTED"},
	} {
		for k, v := range want {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i+1, k, got[i][k], v)
			}
		}
	}
	if b, _ := got[0]["bytes"].(float64); b <= 0 {
		t.Errorf("bytes %v", got[0]["bytes"])
	}
	if c, _ := got[0]["client"].(string); c == "" {
		t.Error("no client address")
	}
}
