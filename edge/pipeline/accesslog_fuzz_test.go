package pipeline

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// The access log's query redaction never panics on any query and never lets a secret
// parameter's value through.
func FuzzRedactedQuery(f *testing.F) {
	for _, s := range []string{"", "a=1", "password=hunter2&x=1", "PASSWORD=x", "token=&token=a", "&&=&password", "rest_route=/cms/v2/posts/1&password=p%20w"} {
		f.Add(s, "secretvalue")
	}
	f.Fuzz(func(t *testing.T, query, secret string) {
		if strings.ContainsAny(secret, "&=#? %+") || secret == "" || secret == "REDACTED" {
			return
		}
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/x?" + query + "&password=" + secret + "&Token=" + secret)
		out := redactedQuery(&ctx)
		for _, seg := range strings.Split(out, "&") {
			name, value, _ := strings.Cut(seg, "=")
			if isSecretParam([]byte(name)) && value != "" && value != "REDACTED" {
				t.Fatalf("query %q: a secret got through: %q", query, out)
			}
		}
	})
}
