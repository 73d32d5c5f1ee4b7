package pipeline

import (
	"github.com/valyala/fasthttp"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// Front is the request sequence every Vitrine server runs before its own work, written once:
//
//  1. /healthz and /readyz (Health);
//  2. classification: the interface (commerce or CMS) and the route path;
//  3. the request id (the caller's when valid, else a new one);
//  4. a CORS preflight is answered here: it carries no tenant header;
//  5. an invalid _jsonp callback is refused (CMS, not for batch items), as WordPress does first;
//  6. CORS headers, then the tenant from Host or X-Tenant-Slug (unknown: the 404 of an unknown
//     route; before the replica has loaded its tenant registry, 503 not_ready instead);
//  7. Admit (the edge's rate limit), then the tenant's readiness (503 until its first checkpoint
//     and registry entry);
//  8. the read floor (Vitrine-Min-Version), with its far-ahead refusal and waiter cap;
//  9. the site's home page, which names the CMS API root;
//
// and then hands the request to Tail: the edge's cache → route → read or forward, the origin's
// authenticate → route → read or dispatch. Every answer Front gives itself is in the
// interface's shape and counted; a refusal after the tenant is known carries the tenant's
// Vitrine-Replica-Version where the caller asked for a version.
//
// Serve does not allocate on its way to Tail (the edge's cache-hit guard measures it): the
// Request is passed by value, never by pointer through a function value, which would move it
// to the heap.
type Front struct {
	Tenants *replica.Replica
	IDs     *RequestIDs
	HTTP    *HTTPMetrics
	Floor   *ReadFloor
	// Routes, when set, names the route of a request Front refuses itself (rate limited, not
	// ready, a floor refused or timed out), so that the answer is counted under its route, not
	// not_found. Only refusals are matched: a request Front lets through is routed by Tail.
	Routes *Router
	// Health answers /healthz and /readyz.
	Health func(ctx *fasthttp.RequestCtx)
	// Nested, when set, reports that a request is an item of a CMS batch: it has no JSONP
	// callback of its own, and only _fields shapes its answers (WordPress's batch runs its
	// requests past envelope and JSONP handling).
	Nested func(ctx *fasthttp.RequestCtx) bool
	// Admit, when set, may refuse a request of a known tenant before anything else is done for
	// it (it answers the refusal itself and reports false).
	Admit func(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant) bool
	// Tail does the server's own work for a request Front let through.
	Tail func(ctx *fasthttp.RequestCtx, rq Request)
}

// Request is what Front found out about a request. Its byte slices point into the request and
// are valid until the handler returns.
type Request struct {
	Iface schema.Interface
	// Route is the route path: the URL path, or the CMS rest_route.
	Route   []byte
	Headers Headers
	// ID is the request id sent back in X-Request-Id.
	ID     []byte
	Tenant *replica.Tenant
	// Info is the tenant's registry entry (never nil after Front).
	Info *schema.Tenant
	// Nested: the request is an item of a CMS batch (Front.Nested).
	Nested bool
}

// APIRoot is the URL of the tenant's CMS discovery index ("" when the tenant is not known yet).
func (rq *Request) APIRoot() string {
	if rq.Info == nil {
		return ""
	}
	return SiteAPIRoot(rq.Info.BaseURL)
}

// Shape applies the CMS shaping parameters (_fields, _envelope, _jsonp) to the answer in ctx;
// a batch item takes _fields only.
func (rq *Request) Shape(ctx *fasthttp.RequestCtx) {
	if rq.Nested {
		ReshapeFields(ctx, rq.Iface)
	} else {
		Reshape(ctx, rq.Iface, rq.APIRoot())
	}
}

var pathHealthz, pathReadyz = "/healthz", "/readyz"

// Serve runs the sequence for one request. It is a fasthttp.RequestHandler.
func (f *Front) Serve(ctx *fasthttp.RequestCtx) {
	if p := ctx.Path(); string(p) == pathHealthz || string(p) == pathReadyz {
		f.Health(ctx)
		f.HTTP.Observe(ctx, RouteOps, ctx.Response.StatusCode())
		return
	}
	var rq Request
	rq.Iface, rq.Route = Classify(ctx)
	rq.Headers.Scan(&ctx.Request.Header)
	rq.ID = rq.Headers.AssignRequestID(ctx, f.IDs)
	// A preflight carries none of the request's own headers (X-Tenant-Slug among them): it is
	// answered before the tenant is resolved, or a browser could never call a store by slug.
	if Preflight(ctx, rq.Iface) {
		f.HTTP.Observe(ctx, RoutePreflight, ctx.Response.StatusCode())
		return
	}
	rq.Nested = f.Nested != nil && f.Nested(ctx)
	if rq.Iface == schema.CMS && !rq.Nested && !CheckJSONP(ctx) {
		CORS(&ctx.Response.Header, rq.Iface, rq.Headers.Origin)
		f.HTTP.Observe(ctx, f.routeOf(ctx, &rq), ctx.Response.StatusCode())
		return
	}
	CORS(&ctx.Response.Header, rq.Iface, rq.Headers.Origin)
	if rq.Tenant = f.Tenants.Lookup(ctx.Host(), rq.Headers.TenantSlug); rq.Tenant == nil {
		if f.Tenants.RegistryLoaded() {
			NotFound(ctx, rq.Iface)
		} else {
			// The registry has not arrived: the host may well be a tenant's. 503, never 404.
			NotReady(ctx, rq.Iface)
		}
		f.refused(ctx, &rq)
		return
	}
	rq.Info = rq.Tenant.Info()
	if f.HTTP.AccessOn() {
		ctx.SetUserValue(accessTenantKey, rq.Tenant.Slug) // for the access log only: it allocates
	}
	if f.Admit != nil && !f.Admit(ctx, rq.Iface, rq.Tenant) {
		f.refused(ctx, &rq)
		return
	}
	if !rq.Tenant.Ready() || rq.Info == nil {
		NotReady(ctx, rq.Iface)
		f.refused(ctx, &rq)
		return
	}
	floor, err := f.Floor.Parse(ctx, rq.Headers.MinVersion)
	if err == nil {
		err = f.Floor.Hold(rq.Tenant, floor)
	}
	if err != nil {
		WriteError(ctx, rq.Iface, err)
		SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
		f.refused(ctx, &rq)
		return
	}
	if IsSiteHome(ctx, rq.Iface) {
		SiteHome(ctx, rq.Info.BaseURL, rq.Info.Name)
		SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
		f.HTTP.Observe(ctx, RouteNotFound, ctx.Response.StatusCode())
		return
	}
	f.Tail(ctx, rq)
}

// refused shapes and counts an answer Front gave itself to a request of a known tenant, under
// the route the request addressed.
func (f *Front) refused(ctx *fasthttp.RequestCtx, rq *Request) {
	rq.Shape(ctx)
	f.HTTP.Observe(ctx, f.routeOf(ctx, rq), ctx.Response.StatusCode())
}

// routeOf returns the index of the route a refused request addressed (RouteNotFound when it
// names none, or when Front has no Routes). It matches the whole route table, served here or not:
// a route an edge forwards is still the route the caller meant.
func (f *Front) routeOf(ctx *fasthttp.RequestCtx, rq *Request) int {
	if f.Routes == nil {
		return RouteNotFound
	}
	return RouteIndex(f.Routes.Match(ctx, rq.Iface, string(ctx.Method()), rq.Route))
}
