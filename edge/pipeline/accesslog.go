package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"
)

// AccessLog writes one structured line per request (an access log, off by default): time, request
// id, tenant, method, path, query, status, body bytes, duration, client address, route and the
// edge's Cache-Status. It never writes a request's credentials: no header is logged but the
// request id, and the values of query parameters that carry secrets (a post password, tokens,
// keys) are replaced by "REDACTED". Safe for concurrent use.
type AccessLog struct {
	log *slog.Logger
}

// NewAccessLog returns an access log writing to h (a slog.JSONHandler: one JSON object a line).
func NewAccessLog(h slog.Handler) *AccessLog { return &AccessLog{log: slog.New(h)} }

// accessTenantKey is the ctx user value through which Front hands the tenant's slug to the access
// log (set only while an access log is on).
const accessTenantKey = "vitrine.pipeline.access.tenant"

// secretParams are query parameters whose values are credentials.
var secretParams = [][]byte{[]byte("password"), []byte("token"), []byte("access_token"), []byte("key"),
	[]byte("api_key"), []byte("secret"), []byte("session"), []byte("code")}

// redactedQuery returns the request's query with the values of secretParams replaced.
func redactedQuery(ctx *fasthttp.RequestCtx) string {
	q := ctx.URI().QueryString()
	if len(q) == 0 {
		return ""
	}
	var out []byte
	for len(q) > 0 {
		seg := q
		if i := bytes.IndexByte(q, '&'); i >= 0 {
			seg, q = q[:i], q[i+1:]
		} else {
			q = nil
		}
		if len(out) > 0 {
			out = append(out, '&')
		}
		name, _, hasValue := bytes.Cut(seg, []byte{'='})
		if hasValue && isSecretParam(name) {
			out = append(append(out, name...), "=REDACTED"...)
			continue
		}
		out = append(out, seg...)
	}
	return string(out)
}

func isSecretParam(name []byte) bool {
	for _, s := range secretParams {
		if bytes.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// write logs one request that answered status on route (its label) after d.
func (a *AccessLog) write(ctx *fasthttp.RequestCtx, route string, status int, d time.Duration) {
	tenant, _ := ctx.UserValue(accessTenantKey).(string)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("request_id", string(ctx.Response.Header.Peek(HeaderRequestID))),
		slog.String("tenant", tenant),
		slog.String("method", string(ctx.Method())),
		slog.String("path", string(ctx.Path())),
		slog.String("query", redactedQuery(ctx)),
		slog.Int("status", status),
		slog.Int("bytes", len(ctx.Response.Body())),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("client", ctx.RemoteIP().String()),
		slog.String("route", route),
		slog.String("cache_status", string(ctx.Response.Header.Peek("Cache-Status"))),
	)
}
