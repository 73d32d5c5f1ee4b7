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
}

var routeMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// NewRouter builds a router over routes. handler returns the handler of a route, or nil when this
// process does not serve it (the route is then unmatched here).
func NewRouter(routes []schema.Route, handler func(r *schema.Route) Handler) *Router {
	rt := &Router{}
	for i := range rt.trees {
		t := router.New()
		t.RedirectTrailingSlash = false
		t.RedirectFixedPath = false
		t.HandleOPTIONS = false
		rt.trees[i] = t
		rt.methods[i] = map[string]bool{}
	}
	for i := range routes {
		r := &routes[i]
		h := handler(r)
		if h == nil {
			continue
		}
		path := r.Path
		if r.Interface == schema.CMS {
			// WordPress captures ids with [\d]+: anything else is not the route.
			path = strings.NewReplacer("{id}", "{id:[0-9]+}", "{parent}", "{parent:[0-9]+}").Replace(path)
		}
		rt.trees[r.Interface].Handle(r.Method, path, func(ctx *fasthttp.RequestCtx) { h(ctx, r) })
		rt.methods[r.Interface][r.Method] = true
	}
	return rt
}

// Lookup finds the handler of a request (HEAD is served by GET routes). It returns nil when no
// route matches the method and path. Path parameters are set as ctx user values.
func (rt *Router) Lookup(ctx *fasthttp.RequestCtx, iface schema.Interface, method, path []byte) fasthttp.RequestHandler {
	m := string(method)
	if m == "HEAD" {
		m = "GET"
	}
	h, _ := rt.trees[iface].Lookup(m, string(path), ctx)
	if h == nil && iface == schema.CMS && hasUpper(path) {
		// WordPress matches routes case-insensitively (/CMS/V2/Posts is /cms/v2/posts).
		h, _ = rt.trees[iface].Lookup(m, strings.ToLower(string(path)), ctx)
	}
	return h
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
		if h, _ := rt.trees[iface].Lookup(m, string(path), &probe); h != nil {
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
