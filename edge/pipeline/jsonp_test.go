package pipeline_test

import (
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

// TestCheckJSONPCredentials checks that JSONP is refused to any request carrying a credential
// (it would wrap a credentialed answer as a script any site may include), after the callback's
// own check, and left alone otherwise.
func TestCheckJSONPCredentials(t *testing.T) {
	const disabled = `{"code":"rest_callback_disabled","message":"JSONP is not available to authenticated requests."}`
	const invalid = `{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`
	for _, tc := range []struct {
		name, query, auth string
		ok                bool
		body              string
	}{
		{"no JSONP, credentials", "rest_route=/x", "Basic YTpi", true, ""},
		{"JSONP, anonymous", "rest_route=/x&_jsonp=cb", "", true, ""},
		{"JSONP, Basic", "rest_route=/x&_jsonp=cb", "Basic YTpi", false, disabled},
		{"JSONP, Bearer", "rest_route=/x&_jsonp=cb", "Bearer t", false, disabled},
		{"empty JSONP, credentials", "rest_route=/x&_jsonp=", "Basic YTpi", true, ""},
		{"invalid callback, credentials", "rest_route=/x&_jsonp=a(", "Basic YTpi", false, invalid},
		{"invalid callback, anonymous", "rest_route=/x&_jsonp=a(", "", false, invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI("/index.php?" + tc.query)
			if tc.auth != "" {
				ctx.Request.Header.Set("Authorization", tc.auth)
			}
			if got := pipeline.CheckJSONP(&ctx); got != tc.ok {
				t.Fatalf("CheckJSONP = %v, want %v", got, tc.ok)
			}
			if tc.ok {
				return
			}
			if ctx.Response.StatusCode() != 400 || string(ctx.Response.Body()) != tc.body {
				t.Fatalf("answer %d %s, want 400 %s", ctx.Response.StatusCode(), ctx.Response.Body(), tc.body)
			}
		})
	}
}
