package origin

import (
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// TestCrossSiteForgeable covers each combination of the cross-site write rule (browser.go):
// who says where the request comes from, whether it needed a preflight, whether it writes.
func TestCrossSiteForgeable(t *testing.T) {
	tn := &schema.Tenant{BaseURL: "https://shop.example", Domains: []string{"www.shop.test"}}
	const form = "application/x-www-form-urlencoded"
	for _, tc := range []struct {
		name, method, uri, ctype string
		headers                  []string
		want                     bool
	}{
		// No browser signal: WordPress's clients, curl, servers.
		{"no Origin, form POST", "POST", "/?_method=DELETE", form, nil, false},
		{"no Origin, untyped POST", "POST", "/", "", nil, false},
		// Another site, simple requests that write.
		{"Origin elsewhere, form POST", "POST", "/", form, []string{"Origin", "https://evil.example"}, true},
		{"Origin elsewhere, multipart POST", "POST", "/", "multipart/form-data; boundary=x", []string{"Origin", "https://evil.example"}, true},
		{"Origin elsewhere, text POST", "POST", "/", "text/plain;charset=UTF-8", []string{"Origin", "https://evil.example"}, true},
		{"Origin elsewhere, untyped POST", "POST", "/", "", []string{"Origin", "https://evil.example"}, true},
		{"Origin elsewhere, octet-stream POST (untyped, through an edge)", "POST", "/", "application/octet-stream", []string{"Origin", "https://evil.example"}, true},
		{"Origin null", "POST", "/", form, []string{"Origin", "null"}, true},
		{"Sec-Fetch-Site cross-site", "POST", "/", form, []string{"Sec-Fetch-Site", "cross-site"}, true},
		{"Sec-Fetch-Site same-site", "POST", "/", form, []string{"Sec-Fetch-Site", "same-site"}, true},
		{"Sec-Fetch-Site unknown value", "POST", "/", form, []string{"Sec-Fetch-Site", "other"}, true},
		{"GET with _method from another site", "GET", "/?_method=DELETE", "", []string{"Sec-Fetch-Site", "cross-site"}, true},
		{"HEAD with _method from another site", "HEAD", "/?_method=DELETE", "", []string{"Origin", "https://evil.example"}, true},
		// Sec-Fetch-Site wins over Origin.
		{"Sec-Fetch-Site same-origin, Origin elsewhere", "POST", "/", form, []string{"Sec-Fetch-Site", "same-origin", "Origin", "https://evil.example"}, false},
		{"Sec-Fetch-Site none", "POST", "/", form, []string{"Sec-Fetch-Site", "none"}, false},
		{"Sec-Fetch-Site cross-site, Origin the store", "POST", "/", form, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://shop.example"}, true},
		// The store itself.
		{"Origin the request's host", "POST", "/", form, []string{"Origin", "http://api.host:8080"}, false},
		{"Origin the base URL", "POST", "/", form, []string{"Origin", "https://shop.example"}, false},
		{"Origin the base URL's host on another port", "POST", "/", form, []string{"Origin", "https://shop.example:444"}, true},
		{"Origin a domain of the store", "POST", "/", form, []string{"Origin", "https://www.shop.test"}, false},
		// Preflighted: never forged by another site.
		{"JSON POST from another site", "POST", "/", "application/json", []string{"Origin", "https://evil.example"}, false},
		{"override header from another site", "POST", "/", form, []string{"Origin", "https://evil.example", "X-HTTP-Method-Override", "DELETE"}, false},
		{"PUT from another site", "PUT", "/", form, []string{"Origin", "https://evil.example"}, false},
		{"DELETE from another site", "DELETE", "/", "", []string{"Sec-Fetch-Site", "cross-site"}, false},
		// Reads.
		{"GET from another site", "GET", "/", "", []string{"Sec-Fetch-Site", "cross-site"}, false},
		{"HEAD from another site", "HEAD", "/", "", []string{"Origin", "https://evil.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(tc.method)
			ctx.Request.SetRequestURI(tc.uri)
			ctx.Request.Header.SetHost("api.host:8080")
			if tc.ctype != "" {
				ctx.Request.Header.SetContentType(tc.ctype)
			}
			for i := 0; i+1 < len(tc.headers); i += 2 {
				ctx.Request.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			if got := crossSiteForgeable(&ctx, tn); got != tc.want {
				t.Errorf("crossSiteForgeable = %v, want %v", got, tc.want)
			}
		})
	}
}
