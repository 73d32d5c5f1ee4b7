package pipeline

import (
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Handler answers one matched route.
type Handler func(ctx *fasthttp.RequestCtx, r *schema.Route)

// Router finds the route of a request in the route table: commerce routes by URL path, CMS
// routes by rest_route value. It is built once and safe for concurrent use.
type Router struct {
	trees   [2]*router.Router // by schema.Interface
	methods [2]map[string]bool
	// index matches every route of the table, served here or not, to the route itself (Match).
	index [2]*router.Router
	// at holds the routes at each route's path (schema.RoutesAt), for Allow headers.
	at map[*schema.Route][]*schema.Route
}

// matchedKey is the ctx user value through which the index trees report a matched route.
const matchedKey = "vitrine.pipeline.route"

var routeMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// NewRouter builds a router over routes. handler returns the handler of a route, or nil when this
// process does not serve it (the route is then unmatched here).
func NewRouter(routes []schema.Route, handler func(r *schema.Route) Handler) *Router {
	rt := &Router{at: map[*schema.Route][]*schema.Route{}}
	newTree := func() *router.Router {
		t := router.New()
		t.RedirectTrailingSlash = false
		t.RedirectFixedPath = false
		t.HandleOPTIONS = false
		return t
	}
	for i := range rt.trees {
		rt.trees[i], rt.index[i] = newTree(), newTree()
		rt.methods[i] = map[string]bool{}
	}
	for i := range routes {
		r := &routes[i]
		rt.at[r] = schema.RoutesAt(routes, r)
		path, joined := r.Path, joinedOf(r.Path)
		if r.Interface == schema.CMS {
			// WordPress captures ids with [\d]+: anything else is not the route. A joined
			// capture (a template id, an ability name) is matched as two segments.
			path = strings.NewReplacer("{id}", "{id:[0-9]+}", "{parent}", "{parent:[0-9]+}").Replace(path)
			for _, jc := range joined {
				path = strings.Replace(path, "{"+jc.Name+"*}", "{"+jc.Name+"__1}/{"+jc.Name+"__2:"+jc.SlugPattern+"}", 1)
			}
		}
		rt.index[r.Interface].Handle(r.Method, path, func(ctx *fasthttp.RequestCtx) {
			joinCaptures(ctx, joined)
			ctx.SetUserValue(matchedKey, r)
		})
		h := handler(r)
		if h == nil {
			continue
		}
		rt.trees[r.Interface].Handle(r.Method, path, func(ctx *fasthttp.RequestCtx) {
			joinCaptures(ctx, joined)
			h(ctx, r)
		})
		rt.methods[r.Interface][r.Method] = true
	}
	return rt
}

// joinedOf returns the joined captures of a route path (schema.JoinedCapture).
func joinedOf(path string) []schema.JoinedCapture {
	var out []schema.JoinedCapture
	for _, seg := range strings.Split(path, "/") {
		if jc, ok := schema.JoinedCaptureOf(seg); ok {
			out = append(out, jc)
		}
	}
	return out
}

// joinCaptures sets each joined capture's parameter from its two matched segments.
func joinCaptures(ctx *fasthttp.RequestCtx, joined []schema.JoinedCapture) {
	for _, jc := range joined {
		ctx.SetUserValue(jc.Name, Param(ctx, jc.Name+"__1")+jc.Sep+Param(ctx, jc.Name+"__2"))
	}
}

// At returns the routes at r's path (schema.RoutesAt over the router's table), served here or
// not: the methods an Allow header chooses from.
func (rt *Router) At(r *schema.Route) []*schema.Route { return rt.at[r] }

// Match finds the route of method and path in the whole table, served here or not, without
// calling a handler (HEAD is GET; CMS paths match case-insensitively, as in Lookup). Path
// parameters are set as ctx user values. It returns nil when no route matches.
func (rt *Router) Match(ctx *fasthttp.RequestCtx, iface schema.Interface, method string, path []byte) *schema.Route {
	if method == "HEAD" {
		method = "GET"
	}
	p := cmsPath(iface, path)
	h, _ := rt.index[iface].Lookup(method, p, ctx)
	if h == nil && iface == schema.CMS && hasUpper(path) {
		h, _ = rt.index[iface].Lookup(method, strings.ToLower(p), ctx)
	}
	if h == nil {
		return nil
	}
	h(ctx)
	r, _ := ctx.UserValue(matchedKey).(*schema.Route)
	return r
}

// MatchPath finds a route at path for any method (the first of GET, POST, PUT, PATCH, DELETE
// that has one), as Match does: what an OPTIONS request describes.
func (rt *Router) MatchPath(ctx *fasthttp.RequestCtx, iface schema.Interface, path []byte) *schema.Route {
	for _, m := range routeMethods {
		if r := rt.Match(ctx, iface, m, path); r != nil {
			return r
		}
	}
	return nil
}

// AllowValue joins allowed methods as an Allow header value ("GET, POST"); nil for none.
func AllowValue(methods []string) []byte {
	var b []byte
	for i, m := range methods {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m...)
	}
	return b
}

// Lookup finds the handler of a request (HEAD is served by GET routes). It returns nil when no
// route matches the method and path. Path parameters are set as ctx user values.
func (rt *Router) Lookup(ctx *fasthttp.RequestCtx, iface schema.Interface, method, path []byte) fasthttp.RequestHandler {
	m := string(method)
	if m == "HEAD" {
		m = "GET"
	}
	p := cmsPath(iface, path)
	h, _ := rt.trees[iface].Lookup(m, p, ctx)
	if h == nil && iface == schema.CMS && hasUpper(path) {
		// WordPress matches routes case-insensitively (/CMS/V2/Posts is /cms/v2/posts).
		h, _ = rt.trees[iface].Lookup(m, strings.ToLower(p), ctx)
	}
	return h
}

// cmsPath is the path the trees match: a CMS template id written theme//slug becomes
// theme/slug (schema.CollapseTemplateID).
func cmsPath(iface schema.Interface, path []byte) string {
	if iface == schema.CMS {
		return schema.CollapseTemplateID(string(path))
	}
	return string(path)
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// Allowed returns the methods with a route at path, for 405 answers and Allow headers.
func (rt *Router) Allowed(iface schema.Interface, path []byte) []string {
	var out []string
	var probe fasthttp.RequestCtx
	for _, m := range routeMethods {
		if !rt.methods[iface][m] {
			continue
		}
		if h, _ := rt.trees[iface].Lookup(m, cmsPath(iface, path), &probe); h != nil {
			out = append(out, m)
		}
	}
	return out
}

// AllowedAny is Allowed over the whole route table, served here or not: the methods the origin
// would name in a 405's Allow header.
func (rt *Router) AllowedAny(iface schema.Interface, path []byte) []string {
	var out []string
	var probe fasthttp.RequestCtx
	for _, m := range routeMethods {
		if h, _ := rt.index[iface].Lookup(m, cmsPath(iface, path), &probe); h != nil {
			out = append(out, m)
		}
	}
	return out
}

// Param returns a path parameter of the matched route.
func Param(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}

// Params returns a getter of the request's path parameters (Param), for the read engine.
func Params(ctx *fasthttp.RequestCtx) func(name string) string {
	return func(name string) string { return Param(ctx, name) }
}

// Query returns a getter of the request's query arguments, for schema.ParseArgs and the read
// engine: the value and whether the argument was sent.
func Query(ctx *fasthttp.RequestCtx) func(name string) (string, bool) {
	q := ctx.QueryArgs()
	return func(name string) (string, bool) { return string(q.Peek(name)), q.Has(name) }
}
