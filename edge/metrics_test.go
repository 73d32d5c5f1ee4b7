package edge_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
)

// metricsText is the fixture's /metrics exposition.
func (f *fixture) metricsText() string {
	var b bytes.Buffer
	f.metrics.WritePrometheus(&b)
	return b.String()
}

// Answers the front gives itself to a known tenant (429 rate limited, 503 not ready, 400 and 503
// from the read floor) are counted, and timed, under the route the request addressed, not under
// not_found; a path that names no route stays not_found.
func TestRefusalsCountedUnderTheirRoute(t *testing.T) {
	late := &schema.Tenant{ID: "33333333-3333-3333-3333-333333333333", Slug: "late", Name: "Late", BaseURL: "https://late.example",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD"}}
	for _, tc := range []struct {
		name   string
		cfg    edge.Config
		setup  func(f *fixture)
		reqs   []req
		status int
		want   string
	}{
		{name: "rate limited", cfg: edge.Config{RateLimit: 2},
			reqs:   []req{{uri: "/api/products"}, {uri: "/api/products"}, {uri: "/api/products"}},
			status: 429, want: `vitrine_http_requests_total{process="edge",route="products.list GET",status="429"} 1`},
		{name: "rate limited, forwarded route", cfg: edge.Config{RateLimit: 1},
			reqs:   []req{{uri: "/api/products"}, {method: "POST", uri: "/api/cart/items", body: "{}"}},
			status: 429, want: `vitrine_http_requests_total{process="edge",route="cart.items.add POST",status="429"} 1`},
		{name: "tenant not ready",
			setup: func(f *fixture) {
				f.feed.put(schema.PlatformLog, schema.KindTenant, "late", schema.Pub, late)
				f.feed.head(schema.PlatformLog)
			},
			reqs:   []req{{uri: "/api/products", host: "late.vitrine.test"}},
			status: 503, want: `vitrine_http_requests_total{process="edge",route="products.list GET",status="503"} 1`},
		{name: "floor far ahead",
			reqs:   []req{{uri: "/api/products?vitrine_min_version=999999999"}},
			status: 400, want: `vitrine_http_requests_total{process="edge",route="products.list GET",status="400"} 1`},
		{name: "unknown path stays not_found", cfg: edge.Config{RateLimit: 1},
			reqs:   []req{{uri: "/api/products"}, {uri: "/api/no-such-route"}},
			status: 429, want: `vitrine_http_requests_total{process="edge",route="not_found",status="429"} 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			if tc.setup != nil {
				tc.setup(f)
			}
			var status int
			for _, r := range tc.reqs {
				status = f.do(r).StatusCode()
			}
			if status != tc.status {
				t.Fatalf("last answer %d, want %d", status, tc.status)
			}
			text := f.metricsText()
			if !strings.Contains(text, tc.want+"\n") {
				t.Fatalf("metrics lack %s:\n%s", tc.want, grepLines(text, "vitrine_http_requests_total"))
			}
			if tc.name != "unknown path stays not_found" && strings.Contains(text, `route="not_found",status="`+strconv.Itoa(tc.status)+`"`) {
				t.Fatalf("the refusal was counted under not_found:\n%s", grepLines(text, "vitrine_http_requests_total"))
			}
		})
	}
}

// Every request is timed in a Prometheus histogram with `le` buckets, by route and status
// class: a cache hit, a miss and a forwarded request.
func TestRequestDurationHistogram(t *testing.T) {
	f := newFixture(t, edge.Config{})
	f.do(req{uri: "/api/products/linen-shirt"})
	f.do(req{method: "POST", uri: "/api/cart/items", body: "{}"})
	text := f.metricsText()
	for _, want := range []string{
		`vitrine_http_request_duration_seconds_bucket{process="edge",route="products.item GET",status="2xx",le="0.0001"} `,
		`vitrine_http_request_duration_seconds_bucket{process="edge",route="products.item GET",status="2xx",le="+Inf"} 1`,
		`vitrine_http_request_duration_seconds_count{process="edge",route="products.item GET",status="2xx"} 1`,
		`vitrine_http_request_duration_seconds_bucket{process="edge",route="forwarded",status="2xx",le="10"} 1`,
		`vitrine_edge_forward_duration_seconds_bucket{le="10"} 1`,
		`vitrine_edge_forward_duration_seconds_count 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(text, "duration_seconds"))
		}
	}
	if strings.Contains(text, "vmrange") {
		t.Error("a histogram is exposed in vmrange buckets")
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
