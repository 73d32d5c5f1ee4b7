package origin

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Cross-site forged writes. A browser attaches the credentials it holds for a site (a cookie, or
// HTTP Basic credentials it cached) to requests any other site makes it send; CORS keeps the
// other site from reading the answer, not the request from being acted on. Requests a browser
// sends cross-site without a CORS preflight are the "simple" ones: GET, HEAD or POST, with no
// header but the safelisted ones, and a body of type application/x-www-form-urlencoded,
// multipart/form-data or text/plain (or none). Vitrine's staff credential is an Authorization
// header; no browser is asked to cache it (no Basic challenge is ever sent), but one that holds
// it anyway (a user:password@ URL, an extension) must not let another site write with it.
//
// So a request authenticated as a staff user is refused, 403, when all three hold:
//   - a browser says it comes from another site: Sec-Fetch-Site is cross-site or same-site (a
//     sibling store on the same domain is another site), or, without Sec-Fetch-Site, its Origin
//     is not the store (not the request's own host, nor the host of the store's base URL or of
//     one of its domains; "null" never is);
//   - it could have been sent without a preflight: GET, HEAD or POST, no X-HTTP-Method-Override
//     header, and no Content-Type or one of the three form types (or application/octet-stream,
//     which an untyped body becomes on its way through an edge);
//   - it writes or asks to: a POST, or a _method override (WordPress would turn a GET into the
//     method it names; Vitrine routes such a GET as a GET, and refuses it here all the same).
//
// WordPress accepts form bodies and _method, and so does Vitrine from every client that is not
// a browser on another site (no Origin and no Sec-Fetch-Site: wpapi, curl, servers) and from a
// browser on the store's own origin. A browser application on another origin sends its writes
// as JSON (Content-Type: application/json, as api-fetch and wpapi do), which needs the preflight
// the API grants.

// errCrossSite is the refusal. On the CMS interface its code is Vitrine's own (WordPress has no
// such refusal; a client treats it like rest_forbidden), with WordPress's status.
var errCrossSite = &schema.Error{Code: schema.CodeForbidden, CMSCode: "rest_cross_site_forbidden", Status: fasthttp.StatusForbidden,
	Message: "Sorry, you are not allowed to do that: a write with credentials from another site must be sent as JSON (Content-Type: application/json), without _method."}

// crossSiteForgeable reports whether an authenticated request is one another site could have
// forged (see above). t is the store's registry entry (its base URL and domains).
func crossSiteForgeable(ctx *fasthttp.RequestCtx, t *schema.Tenant) bool {
	h := &ctx.Request.Header
	if !(ctx.IsGet() || ctx.IsHead() || ctx.IsPost()) || len(h.Peek("X-HTTP-Method-Override")) > 0 {
		return false // needed a preflight
	}
	if !simpleContentType(h.ContentType()) {
		return false
	}
	if !ctx.IsPost() && !ctx.QueryArgs().Has("_method") {
		return false // a read
	}
	return fromOtherSite(ctx, t)
}

// simpleContentType reports whether a request body type may have been sent without a CORS
// preflight. application/octet-stream counts: it is what an edge's forwarder (fasthttp) names a
// body the browser sent without any type, so the origin cannot tell the two apart.
func simpleContentType(ct []byte) bool {
	mt, _, _ := bytes.Cut(ct, []byte{';'})
	switch strings.ToLower(string(bytes.TrimSpace(mt))) {
	case "", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain", "application/octet-stream":
		return true
	}
	return false
}

// fromOtherSite reports whether a browser says the request comes from a site other than the
// store: Sec-Fetch-Site when it is sent (browsers set it, pages cannot), else Origin.
func fromOtherSite(ctx *fasthttp.RequestCtx, t *schema.Tenant) bool {
	h := &ctx.Request.Header
	if site := h.Peek("Sec-Fetch-Site"); len(site) > 0 {
		switch strings.ToLower(string(site)) {
		case "same-origin", "none":
			return false
		}
		return true // cross-site, same-site, or a value this code does not know
	}
	origin := h.Peek("Origin")
	if len(origin) == 0 {
		return false // not a browser, or a same-origin GET
	}
	u, err := url.Parse(string(origin))
	if err != nil || u.Host == "" {
		return true // "null" (a sandboxed or opaque origin) or garbage
	}
	if strings.EqualFold(u.Host, string(ctx.Host())) {
		return false
	}
	name := u.Hostname()
	if t != nil {
		if b, err := url.Parse(t.BaseURL); err == nil && strings.EqualFold(b.Host, u.Host) {
			return false
		}
		for _, d := range t.Domains {
			if strings.EqualFold(d, name) {
				return false
			}
		}
	}
	return true
}
