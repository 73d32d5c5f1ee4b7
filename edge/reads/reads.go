// Package reads answers the read routes from a replica: it parses a route's arguments, queries a
// tenant's Snapshot and renders the body in the interface's shape, with the cache dependencies
// that vouch for it. Edges cache what it renders; the origin answers with it directly. Both use
// this one implementation, so an entity reads the same at the edge and at the origin.
//
// # Invariants
//
//   - Dependencies are read before the Snapshot (see package replica), so a body is never cached
//     under counters newer than the state it shows.
//   - Absolute URLs come from the tenant's canonical base URL, never from the request.
//   - Only successful public answers are cacheable; errors and private views never are.
package reads

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"vitrine/edge/cache"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// Viewer is who is reading. The zero Viewer is anonymous.
type Viewer struct {
	// User is the authenticated staff user, or nil.
	User *schema.User
	// PostPassword is a post password the caller gave (?password=).
	PostPassword string
}

// Request is one read to answer.
type Request struct {
	Route  *schema.Route
	Tenant *replica.Tenant
	// Param returns a path parameter ("slug", "id").
	Param func(name string) string
	// Query returns a query parameter and whether it was sent.
	Query  func(name string) (string, bool)
	Viewer Viewer
	// Allow, when set, lists the methods of the route at a rest path (a rendered record's self
	// link) whose permission check the viewer passes for a GET of that link: its targetHints,
	// as WordPress's get_target_hints_for_link. Nil renders GET alone.
	Allow func(path string) []string
}

// Response is a rendered read.
type Response struct {
	Status  int
	Body    []byte
	Headers [][2][]byte
	// Deps validate a cached copy; nil when the response must not be cached.
	Deps []cache.Dep
	// Expires, when not zero, is the instant a cached copy stops being valid: the next start or
	// end of a flash sale for bodies that show prices.
	Expires time.Time
	// Err is set for an error answer (Body is then empty; the transport renders Err).
	Err error
	// ContentType, when set, is the body's content type; "" is the interface's JSON (an oEmbed
	// response in XML and the embed page set theirs: oembed.go).
	ContentType string
}

// Cacheable reports whether the response may be stored in the shared cache.
func (r *Response) Cacheable() bool { return r.Err == nil && r.Deps != nil && r.Status == 200 }

// deps reads the counters of the classes and items a body depends on. Every body depends on the
// tenant object itself (retired on re-bootstrap) and its registry entry.
func deps(t *replica.Tenant, classes []replica.Class, items ...*cacheItem) []cache.Dep {
	d := make([]cache.Dep, 0, 2+len(classes)+len(items))
	d = append(d, cache.Dep{Ctr: &t.Retired, Val: t.Retired.Load()})
	site := t.Counter(replica.Site)
	d = append(d, cache.Dep{Ctr: site, Val: site.Load()})
	for _, c := range classes {
		ctr := t.Counter(c)
		d = append(d, cache.Dep{Ctr: ctr, Val: ctr.Load()})
	}
	for _, it := range items {
		ctr := t.ItemCounter(it.kind, it.id)
		d = append(d, cache.Dep{Ctr: ctr, Val: ctr.Load()})
	}
	return d
}

type cacheItem struct {
	kind schema.Kind
	id   int64
}

// Answer renders the response to a read route.
func Answer(req *Request) Response {
	args, err := schema.ParseArgs(req.Route, req.Query)
	if err != nil {
		return Response{Err: err}
	}
	info := req.Tenant.Info()
	if info == nil {
		return Response{Err: &schema.Error{Code: schema.CodeNotReady, Message: "This store is still loading; retry shortly", RetryAfter: 1}}
	}
	if r, ok := answerDiscovery(req, args, info); ok { // the CMS index and namespace roots (discovery.go)
		return r
	}
	switch req.Route.Name {
	case "products.list":
		return productsList(req, args, info)
	case "search":
		return searchProducts(req, args, info)
	case "search.autocomplete":
		return autocomplete(req, args, info)
	case "posts.list":
		return blogPosts(req, args, info)
	case "products.featured":
		return productsFeatured(req, args, info)
	case "products.item":
		return productItem(req, args, info)
	case "products.variants":
		return productVariants(req, args, info)
	case "categories.list":
		return categoriesList(req, info)
	case "currencies.list":
		return currenciesList(req, info)
	case "openapi": // the same for every store and until the next deploy: cached with no deps
		return Response{Status: 200, Body: schema.OpenAPIDocument(), Deps: []cache.Dep{}}
	case "flashsales.list":
		return flashSales(req, info)
	case "sections.list":
		return sections(req)
	case "products.reviews":
		return productReviews(req, args)
	case "products.socialproof":
		return socialProof(req)
	}
	if t := schema.PostTypeOfRoute(req.Route); t != nil { // CMS post types (cmsposts.go)
		return answerPostType(req, args, info, t)
	}
	if r, ok := answerTerms(req, args, info); ok { // CMS categories and tags (terms.go)
		return r
	}
	if r, ok := answerOEmbed(req, args, info); ok { // the oEmbed route and the embed page (oembed.go)
		return r
	}
	return Response{Err: fmt.Errorf("reads: no read handler for route %s", req.Route.Name)}
}

func ok(v any, d []cache.Dep, headers ...[2][]byte) Response {
	b, err := schema.MarshalJSON(v)
	if err != nil {
		return Response{Err: err}
	}
	return Response{Status: 200, Body: b, Deps: d, Headers: headers}
}

// pricing resolves the currency of a request: the currency argument or the store's default. The
// currency must be enabled in the registry and described in the catalog.
func pricing(s *replica.Snapshot, info *schema.Tenant, code string) (schema.Pricing, error) {
	def := s.Currency(info.DefaultCurrency())
	if def == nil {
		def = &schema.Currency{Code: info.DefaultCurrency(), Exponent: 2, Rate: "1"}
	}
	if code == "" || code == def.Code {
		return schema.Pricing{Currency: def, Default: def, Sales: s.FlashSales(), At: time.Now()}, nil
	}
	enabled := false
	for _, c := range info.Currencies {
		enabled = enabled || c == code
	}
	cur := s.Currency(code)
	if !enabled || cur == nil {
		return schema.Pricing{}, &schema.Error{Code: schema.CodeInvalid, Field: "currency", CMSCode: "rest_invalid_param",
			Message: "currency " + strconv.Quote(code) + " is not enabled for this store",
			Params:  map[string]string{"currency": "currency is not one of " + strings.Join(info.Currencies, ", ") + "."}}
	}
	return schema.Pricing{Currency: cur, Default: def, Sales: s.FlashSales(), At: time.Now()}, nil
}

// priced sets the expiry of a response that shows prices of pr: the next sale transition.
func priced(r Response, pr schema.Pricing) Response {
	r.Expires = schema.NextSaleTransition(pr.Sales, pr.At)
	return r
}

var catalogClasses = []replica.Class{replica.Catalog, replica.Taxonomy, replica.Currencies}

// listingClasses are the classes a page of the plain product listing depends on besides the
// item counters of the products it shows (productPage).
var listingClasses = []replica.Class{replica.Listing, replica.Taxonomy, replica.Currencies}

func productsFeatured(req *Request, args *schema.Args, info *schema.Tenant) Response {
	d := deps(req.Tenant, catalogClasses)
	s := req.Tenant.Snapshot()
	pr, err := pricing(s, info, args.Str("currency"))
	if err != nil {
		return Response{Err: err}
	}
	items := s.Featured(int(args.Int("limit")))
	out := schema.List[schema.ProductView]{Data: make([]schema.ProductView, 0, len(items))}
	for _, p := range items {
		out.Data = append(out.Data, schema.RenderProduct(p, s.Variants(p.ID), s.Category, pr, info.BaseURL, false))
	}
	return priced(ok(out, d), pr)
}

var productNotFound = &schema.Error{Code: schema.CodeNotFound, Message: "product not found"}

// productBySlug finds the public product of the slug path parameter. Its page depends on the
// product's own counter, read before the snapshot.
func productBySlug(req *Request, classes []replica.Class) (*replica.Snapshot, *schema.Product, []cache.Dep) {
	slug := req.Param("slug")
	// The id behind a slug is only known from a snapshot; read one to find it, take the
	// dependencies, then read the snapshot again so that the body is not newer than them.
	first := req.Tenant.Snapshot().ProductBySlug(slug)
	if first == nil {
		return req.Tenant.Snapshot(), nil, nil
	}
	d := deps(req.Tenant, classes, &cacheItem{schema.KindProduct, int64(first.ID)})
	s := req.Tenant.Snapshot()
	p := s.ProductBySlug(slug)
	return s, p, d
}

func productItem(req *Request, args *schema.Args, info *schema.Tenant) Response {
	s, p, d := productBySlug(req, []replica.Class{replica.Taxonomy, replica.Currencies})
	if p == nil {
		return Response{Err: productNotFound}
	}
	pr, err := pricing(s, info, args.Str("currency"))
	if err != nil {
		return Response{Err: err}
	}
	return priced(ok(schema.RenderProduct(p, s.Variants(p.ID), s.Category, pr, info.BaseURL, true), d), pr)
}

func productVariants(req *Request, args *schema.Args, info *schema.Tenant) Response {
	s, p, d := productBySlug(req, []replica.Class{replica.Currencies})
	if p == nil {
		return Response{Err: productNotFound}
	}
	pr, err := pricing(s, info, args.Str("currency"))
	if err != nil {
		return Response{Err: err}
	}
	vs := s.Variants(p.ID)
	out := schema.List[schema.VariantView]{Data: make([]schema.VariantView, 0, len(vs))}
	for _, v := range vs {
		out.Data = append(out.Data, schema.RenderVariant(v, p, pr))
	}
	return priced(ok(out, d), pr)
}

func categoriesList(req *Request, info *schema.Tenant) Response {
	d := deps(req.Tenant, []replica.Class{replica.Taxonomy})
	s := req.Tenant.Snapshot()
	return ok(schema.List[*schema.CategoryNode]{Data: schema.BuildCategoryTree(s.Categories())}, d)
}

func currenciesList(req *Request, info *schema.Tenant) Response {
	d := deps(req.Tenant, []replica.Class{replica.Currencies})
	s := req.Tenant.Snapshot()
	cs := s.Currencies()
	out := schema.List[schema.CurrencyView]{Data: make([]schema.CurrencyView, 0, len(cs))}
	for _, c := range cs {
		out.Data = append(out.Data, schema.CurrencyView{Code: c.Code, Name: c.Name, Symbol: c.Symbol, Exponent: c.Exponent,
			Rate: c.Rate, Default: c.Code == info.DefaultCurrency()})
	}
	return ok(out, d)
}

func site(info *schema.Tenant) schema.Site {
	loc, err := time.LoadLocation(info.Timezone)
	if err != nil {
		loc = time.UTC
	}
	return schema.Site{Base: info.BaseURL, Loc: loc}
}

// canEdit reports whether the viewer may see everything of posts (drafts, edit context).
func canEdit(v Viewer) bool { return v.User != nil && v.User.Role.Can(schema.CapEditPosts) }

// forbidden builds WordPress's 401-or-403 error: 401 for an anonymous caller, 403 for a user who
// lacks the capability.
func forbidden(v Viewer, code, msg string) error {
	status := 401
	if v.User != nil {
		status = 403
	}
	return &schema.Error{Code: schema.CodeForbidden, CMSCode: code, Message: msg, Status: status}
}

// collectionHeaders are the headers of a page of a CMS collection on the route's URL
// (schema.CollectionHeaders).
func collectionHeaders(st schema.Site, req *Request, page, total, totalPages int) [][2][]byte {
	var out [][2][]byte
	for _, kv := range schema.CollectionHeaders(st.RestURL(req.Route.Path), req.Route, req.Query, page, total, totalPages) {
		out = append(out, [2][]byte{[]byte(kv[0]), []byte(kv[1])})
	}
	return out
}
