package pipeline

import (
	"html"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// IsSiteHome reports whether a request is for the site's home page: GET or HEAD of "/" or
// "/index.php" without a rest_route (Classify made it a commerce request). A permalink with
// embed is not: it is the route of a record's embed page (schema's oembed.page), which the
// server's tail routes like any read.
func IsSiteHome(ctx *fasthttp.RequestCtx, iface schema.Interface) bool {
	if iface != schema.Commerce || !(ctx.IsGet() || ctx.IsHead()) || ctx.QueryArgs().Has("embed") {
		return false
	}
	p := ctx.Path()
	return string(p) == "/" || string(p) == "/index.php"
}

// ContentTypeHTML is the home page's content type.
var ContentTypeHTML = []byte("text/html; charset=UTF-8")

// SiteHome answers the site's home page. No front end is served here, but like every WordPress
// page it names the CMS API root, in a Link header and a <link> element, so that clients that
// discover the API from the site URL (wpapi's WPAPI.discover HEADs it) find the index. base is
// the tenant's canonical base URL, name its name.
//
// A rest_route sent as an array (rest_route[]=…) is not a CMS request Classify recognises; it
// is WordPress's 400 rest_path_invalid_type.
func SiteHome(ctx *fasthttp.RequestCtx, base, name string) {
	if q := ctx.QueryArgs(); q.Has("rest_route[]") {
		WriteError(ctx, schema.CMS, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_path_invalid_type",
			Message: "The REST route parameter must be a string."})
		return
	}
	root := SiteAPIRoot(base)
	h := &ctx.Response.Header
	h.Set("Link", APIRootLink(root))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(fasthttp.HeaderCacheControl, "public, no-cache")
	h.SetContentTypeBytes(ContentTypeHTML)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBodyString("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(name) +
		"</title><link rel=\"https://api.w.org/\" href=\"" + html.EscapeString(root) + "\"></head><body></body></html>\n")
}

// APIRootLink is the value of the Link header naming a site's CMS API root (WordPress's
// rel="https://api.w.org/"), for the root URL schema.Site.APIRoot gives.
func APIRootLink(root string) string { return "<" + root + `>; rel="https://api.w.org/"` }

// SiteAPIRoot is the CMS API root of the site at base (a tenant's base URL, made canonical).
func SiteAPIRoot(base string) string {
	return schema.Site{Base: schema.CanonicalBaseURL(base)}.APIRoot()
}
