package origin

import (
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

func TestRequestArgs(t *testing.T) {
	del := schema.RouteByName("cms.posts.delete")
	if del == nil {
		t.Fatal("no cms.posts.delete route")
	}
	for _, tc := range []struct {
		name, method, uri, ctype, body string
		force                          bool
		code                           string // CMS error code, when refused
	}{
		{"query", "DELETE", "/p?force=true", "", "", true, ""},
		{"json body (wpapi)", "DELETE", "/p", "application/json", `{"force":true}`, true, ""},
		{"json body with charset", "DELETE", "/p", "application/json; charset=utf-8", `{"force":"1"}`, true, ""},
		{"json body over query", "DELETE", "/p?force=true", "application/json", `{"force":false}`, false, ""},
		{"json null is absent", "DELETE", "/p?force=true", "application/json", `{"force":null}`, true, ""},
		{"form body", "DELETE", "/p", "application/x-www-form-urlencoded", `force=1`, true, ""},
		{"json ignored without its content type", "DELETE", "/p", "text/plain", `{"force":true}`, false, ""},
		{"not an object", "DELETE", "/p?force=1", "application/json", `[true]`, true, ""},
		{"malformed json", "DELETE", "/p", "application/json", `{"force":`, false, "rest_invalid_json"},
		{"wrong type in json", "DELETE", "/p", "application/json", `{"force":"yes"}`, false, "rest_invalid_param"},
		{"object where a boolean goes", "DELETE", "/p", "application/json", `{"force":{"a":1}}`, false, "rest_invalid_param"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(tc.method)
			ctx.Request.SetRequestURI(tc.uri)
			if tc.ctype != "" {
				ctx.Request.Header.SetContentType(tc.ctype)
			}
			ctx.Request.SetBodyString(tc.body)
			args, err := requestArgs(&ctx, del)
			if tc.code != "" {
				e, ok := err.(*schema.Error)
				if !ok || e.CMSCode != tc.code {
					t.Fatalf("err = %#v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := args.Bool("force"); got != tc.force {
				t.Fatalf("force = %v, want %v", got, tc.force)
			}
		})
	}
}

// FuzzRequestArgs: any body and query give arguments or a 4xx error, never a panic.
func FuzzRequestArgs(f *testing.F) {
	for _, s := range []string{`{"force":true}`, `{"force":[1,{"a":2}]}`, `{"force":"\u0000"}`, `[`, `{"force":1e999}`, `"x"`} {
		f.Add(s, "force=true", true)
	}
	routes := []*schema.Route{schema.RouteByName("cms.posts.delete"), schema.RouteByName("cms.posts.list"), schema.RouteByName("cms.users.delete"),
		schema.RouteByName("cms.posts.revisions.list"), schema.RouteByName("cms.posts.revisions.delete")}
	f.Fuzz(func(t *testing.T, body, query string, json bool) {
		for _, r := range routes {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("DELETE")
			ctx.Request.SetRequestURI("/p?" + query)
			if json {
				ctx.Request.Header.SetContentType("application/json")
			}
			ctx.Request.SetBodyString(body)
			if _, err := requestArgs(&ctx, r); err != nil {
				if e, ok := err.(*schema.Error); !ok || e.Code != schema.CodeInvalid {
					t.Fatalf("error %#v is not a CodeInvalid *schema.Error", err)
				}
			}
		}
	})
}
