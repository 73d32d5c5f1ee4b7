package pipeline

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"vitrine/schema"
)

// Route indices beyond the route table, for requests that matched no route.
const (
	RouteForwarded = iota + 1000 // forwarded by an edge to the origin without a local route
	RouteNotFound                // unknown tenant or route
	RouteOps                     // health, readiness, metrics
	RoutePreflight               // CORS preflight
)

var extraRoutes = map[int]string{
	RouteForwarded: "forwarded", RouteNotFound: "not_found", RouteOps: "ops", RoutePreflight: "preflight",
}

// trackedStatuses get their own counter; any other status counts under its class ("2xx").
var trackedStatuses = []int{200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 429, 500, 501, 502, 503, 504}

// HTTPMetrics counts requests by route and status, in a metrics set. Count does not allocate once
// a (route, status) pair has been seen.
type HTTPMetrics struct {
	set     *metrics.Set
	process string
	mu      sync.Mutex
	// table[route][status index] holds counters created on first use. The map itself never
	// changes after NewHTTPMetrics.
	table atomic.Pointer[map[int]*[32]atomic.Pointer[metrics.Counter]]
}

// NewHTTPMetrics returns request counters named vitrine_http_requests_total{process,route,status}.
func NewHTTPMetrics(set *metrics.Set, process string) *HTTPMetrics {
	m := &HTTPMetrics{set: set, process: process}
	t := map[int]*[32]atomic.Pointer[metrics.Counter]{}
	for i := range schema.Routes {
		t[i] = new([32]atomic.Pointer[metrics.Counter])
	}
	for i := range extraRoutes {
		t[i] = new([32]atomic.Pointer[metrics.Counter])
	}
	m.table.Store(&t)
	return m
}

func statusIndex(status int) int {
	for i, s := range trackedStatuses {
		if s == status {
			return i
		}
	}
	return len(trackedStatuses) + min(max(status/100-1, 0), 4) // 1xx..5xx classes
}

// Count records one request of route (an index in schema.Routes, or a Route* constant) that
// answered status.
func (m *HTTPMetrics) Count(route, status int) {
	row := (*m.table.Load())[route]
	if row == nil {
		return
	}
	si := statusIndex(status)
	if c := row[si].Load(); c != nil {
		c.Inc()
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if row[si].Load() == nil {
		name := extraRoutes[route]
		if route < len(schema.Routes) {
			name = schema.Routes[route].Name + " " + schema.Routes[route].Method
		}
		label := fmt.Sprint(status)
		if si >= len(trackedStatuses) {
			label = fmt.Sprintf("%dxx", status/100)
		}
		row[si].Store(m.set.GetOrCreateCounter(fmt.Sprintf(`vitrine_http_requests_total{process=%q,route=%q,status=%q}`, m.process, name, label)))
	}
	row[si].Load().Inc()
}

// RouteIndex returns the index of a route in schema.Routes.
func RouteIndex(r *schema.Route) int {
	for i := range schema.Routes {
		if &schema.Routes[i] == r {
			return i
		}
	}
	return RouteNotFound
}
