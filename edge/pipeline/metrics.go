package pipeline

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Route indices beyond the route table, for requests that matched no route.
const (
	RouteForwarded = iota + 1000 // forwarded by an edge to the origin without a local route
	RouteNotFound                // unknown tenant or route
	RouteOps                     // health, readiness, metrics
	RoutePreflight               // CORS preflight
	RouteMedia                   // a media file under schema.UploadsPath
)

var extraRoutes = map[int]string{
	RouteForwarded: "forwarded", RouteNotFound: "not_found", RouteOps: "ops", RoutePreflight: "preflight",
	RouteMedia: "media",
}

// trackedStatuses get their own counter; any other status counts under its class ("2xx").
var trackedStatuses = []int{200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 429, 500, 501, 502, 503, 504}

// LatencyBuckets are the upper bounds, in seconds, of Vitrine's latency histograms (Prometheus
// `le` buckets): from 100µs, where an edge's cache hits fall, to 10s, past every bound a request
// waits for (the read floor's 2s, the transaction retry budget's 3s).
var LatencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// statusClasses are the status labels of the duration histogram: a label per class keeps its
// series to five per route.
var statusClasses = [5]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// HTTPMetrics counts requests by route and status, and times them by route and status class,
// in a metrics set. Observe and Count do not allocate once a (route, status) pair has been seen.
//
// Series: vitrine_http_requests_total{process,route,status} (status exact for the common codes,
// else its class) and vitrine_http_request_duration_seconds{process,route,status} (a Prometheus
// histogram with LatencyBuckets; status is the class, "2xx"). The route label is the route's
// name and method ("product.get GET"), or forwarded, not_found, ops or preflight: never a path,
// so the series are bounded by the route table.
type HTTPMetrics struct {
	set     *metrics.Set
	process string
	mu      sync.Mutex
	// table[route] holds the counters and histograms of a route of the route table, extra[route -
	// RouteForwarded] those of the Route* indices; their series are created on first use. The
	// slices themselves never change after NewHTTPMetrics (a slice, not a map: Observe runs on
	// every request, a cache hit's included).
	table []*routeSeries
	extra []*routeSeries
	// access, when set, is told of every request Observe records (SetAccessLog).
	access atomic.Pointer[AccessLog]
}

// SetAccessLog has every request Observe records written to a (nil: none). Safe to call at any
// time. With none, Observe allocates nothing for it.
func (m *HTTPMetrics) SetAccessLog(a *AccessLog) { m.access.Store(a) }

// AccessOn reports whether an access log is set: Front hands it the tenant then, and a response
// must keep the headers it reads back (X-Request-Id, Cache-Status) findable by Peek.
func (m *HTTPMetrics) AccessOn() bool { return m.access.Load() != nil }

// routeSeries are one route's series: counters by status index, histograms by status class.
type routeSeries struct {
	counts [32]atomic.Pointer[metrics.Counter]
	times  [5]atomic.Pointer[metrics.PrometheusHistogram]
}

// NewHTTPMetrics returns request counters named vitrine_http_requests_total{process,route,status}
// and histograms named vitrine_http_request_duration_seconds{process,route,status}.
func NewHTTPMetrics(set *metrics.Set, process string) *HTTPMetrics {
	m := &HTTPMetrics{set: set, process: process}
	m.table = make([]*routeSeries, len(schema.Routes))
	for i := range m.table {
		m.table[i] = new(routeSeries)
	}
	m.extra = make([]*routeSeries, len(extraRoutes))
	for i := range extraRoutes {
		m.extra[i-RouteForwarded] = new(routeSeries)
	}
	return m
}

func statusIndex(status int) int {
	for i, s := range trackedStatuses {
		if s == status {
			return i
		}
	}
	return len(trackedStatuses) + statusClass(status)
}

// statusClass is 0 for 1xx … 4 for 5xx (out-of-range statuses are clamped).
func statusClass(status int) int { return min(max(status/100-1, 0), 4) }

// routeName is the route label of a route index.
func routeName(route int) string {
	if route >= 0 && route < len(schema.Routes) {
		return schema.Routes[route].Name + " " + schema.Routes[route].Method
	}
	return extraRoutes[route]
}

// Count records one request of route (an index in schema.Routes, or a Route* constant) that
// answered status, without timing it: Observe is Count with the request's duration, for answers
// given while the request's ctx is at hand.
func (m *HTTPMetrics) Count(route, status int) {
	row := m.row(route)
	if row == nil {
		return
	}
	m.counter(row, route, status).Inc()
}

// row returns the series of a route index, nil for an index that is none.
func (m *HTTPMetrics) row(route int) *routeSeries {
	if uint(route) < uint(len(m.table)) {
		return m.table[route]
	}
	if i := uint(route - RouteForwarded); i < uint(len(m.extra)) {
		return m.extra[i]
	}
	return nil
}

// Observe records one request of route that answered status, and its duration so far: from the
// moment fasthttp called the handler (ctx.Time()) to now.
func (m *HTTPMetrics) Observe(ctx *fasthttp.RequestCtx, route, status int) {
	row := m.row(route)
	if row == nil {
		return
	}
	m.counter(row, route, status).Inc()
	cl := statusClass(status)
	h := row.times[cl].Load()
	if h == nil {
		m.mu.Lock()
		if h = row.times[cl].Load(); h == nil {
			h = m.set.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`vitrine_http_request_duration_seconds{process=%q,route=%q,status=%q}`,
				m.process, routeName(route), statusClasses[cl]), LatencyBuckets)
			row.times[cl].Store(h)
		}
		m.mu.Unlock()
	}
	var d time.Duration
	if start := ctx.Time(); !start.IsZero() {
		d = time.Since(start)
		h.Update(d.Seconds())
	}
	if a := m.access.Load(); a != nil {
		a.write(ctx, routeName(route), status, d)
	}
}

func (m *HTTPMetrics) counter(row *routeSeries, route, status int) *metrics.Counter {
	si := statusIndex(status)
	if c := row.counts[si].Load(); c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := row.counts[si].Load(); c != nil {
		return c
	}
	label := fmt.Sprint(status)
	if si >= len(trackedStatuses) {
		label = statusClasses[statusClass(status)]
	}
	c := m.set.GetOrCreateCounter(fmt.Sprintf(`vitrine_http_requests_total{process=%q,route=%q,status=%q}`, m.process, routeName(route), label))
	row.counts[si].Store(c)
	return c
}

// RouteIndex returns the index of a route in schema.Routes (RouteNotFound for nil).
func RouteIndex(r *schema.Route) int {
	if r == nil {
		return RouteNotFound
	}
	for i := range schema.Routes {
		if &schema.Routes[i] == r {
			return i
		}
	}
	return RouteNotFound
}
