package handler

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Responder is the one home of what every handler does around its feature: answer, answer a
// write, fail, and count each answer against its route. It is safe for concurrent use.
type Responder struct {
	Log  *slog.Logger
	HTTP *pipeline.HTTPMetrics
	// Writes counts successful writes; WriteWaitTimeouts the writes whose answer stopped waiting
	// for the origin's replica.
	Writes, WriteWaitTimeouts *metrics.Counter
	// WriteWaitTime, when set, records how long each write's answer waited for the origin's
	// replica.
	WriteWaitTime *metrics.PrometheusHistogram
	// WriteWait bounds how long a write's answer waits for the origin's replica to apply it.
	WriteWait time.Duration
}

// WaitReplica waits, at most WriteWait, for the origin's replica to apply version v of the
// request's tenant, so that the origin reads its own writes. It counts a wait that ran out,
// records the wait (WriteWaitTime), and sets the answer's Server-Timing to where the write's time
// at the origin went: "app", from the request read to the wait (routing, authentication, the
// transaction with its queueing and retries), and "replica", the wait.
func (r *Responder) WaitReplica(ctx *fasthttp.RequestCtx, rq *Request, v int64) {
	start := time.Now()
	if !rq.Tenant.WaitFor(v, r.WriteWait) {
		r.WriteWaitTimeouts.Inc()
	}
	waited := time.Since(start)
	if r.WriteWaitTime != nil {
		r.WriteWaitTime.Update(waited.Seconds())
	}
	b := make([]byte, 0, 40)
	b = append(b, "app;dur="...)
	b = strconv.AppendFloat(b, float64(start.Sub(ctx.Time()).Microseconds())/1000, 'f', 3, 64)
	b = append(b, ", replica;dur="...)
	b = strconv.AppendFloat(b, float64(waited.Microseconds())/1000, 'f', 3, 64)
	ctx.Response.Header.SetBytesV(HeaderServerTiming, b)
}

// HeaderServerTiming is the header of a write's timings at the origin (WaitReplica).
const HeaderServerTiming = "Server-Timing"

// Reply writes a successful answer that is not a replicated write.
func (r *Responder) Reply(ctx *fasthttp.RequestCtx, rq *Request, status int, v any) {
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	pipeline.WriteJSON(ctx, rq.Iface, status, v)
	r.HTTP.Observe(ctx, pipeline.RouteIndex(rq.Route), status)
}

// Respond fails with err when it is not nil, else replies v with status.
func (r *Responder) Respond(ctx *fasthttp.RequestCtx, rq *Request, status int, err error, v any) {
	if err != nil {
		r.Fail(ctx, rq, err)
		return
	}
	r.Reply(ctx, rq, status, v)
}

// NoContent answers 204.
func (r *Responder) NoContent(ctx *fasthttp.RequestCtx, rq *Request) {
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	r.HTTP.Observe(ctx, pipeline.RouteIndex(rq.Route), fasthttp.StatusNoContent)
}

// NoContentOr fails with err when it is not nil, else answers 204.
func (r *Responder) NoContentOr(ctx *fasthttp.RequestCtx, rq *Request, err error) {
	if err != nil {
		r.Fail(ctx, rq, err)
		return
	}
	r.NoContent(ctx, rq)
}

// Written finishes a successful write: Vitrine-Write-Version, a bounded wait for the origin's
// replica to apply it, and the response body.
func (r *Responder) Written(ctx *fasthttp.RequestCtx, rq *Request, commits []store.LogCommit, status int, body any) {
	r.Writes.Inc()
	var top int64
	for _, c := range commits {
		if c.Log == rq.Tenant.Slug {
			top = max(top, c.Version)
		}
	}
	if top > 0 {
		pipeline.SetWriteVersion(&ctx.Response.Header, top)
		r.WaitReplica(ctx, rq, top)
	}
	pipeline.SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	if rq.Iface == schema.CMS {
		CMSHeaders(ctx, rq.Info, nil)
	}
	pipeline.WriteJSON(ctx, rq.Iface, status, body)
	r.HTTP.Observe(ctx, pipeline.RouteIndex(rq.Route), status)
}

// Fail answers a routed request with err in its interface's error shape: the one way a handler
// fails (Retry-After, the status and the body come from the error).
func (r *Responder) Fail(ctx *fasthttp.RequestCtx, rq *Request, err error) {
	r.FailAt(ctx, rq.Iface, pipeline.RouteIndex(rq.Route), rq.FromEdge, err)
}

// FailAt is Fail before a route is known: it counts the answer against route. An internal error
// is logged with the request id; its text never reaches the caller.
func (r *Responder) FailAt(ctx *fasthttp.RequestCtx, iface schema.Interface, route int, fromEdge bool, err error) {
	if schema.ErrorCode(err) == schema.CodeInternal {
		r.Log.Error("request failed", "err", err, "path", string(ctx.Path()), "client", string(pipeline.ClientIP(ctx, fromEdge)),
			"request_id", string(ctx.Response.Header.Peek(pipeline.HeaderRequestID)))
	}
	pipeline.WriteError(ctx, iface, err)
	r.HTTP.Observe(ctx, route, ctx.Response.StatusCode())
}

// CMSHeaders adds the headers of every CMS response; own are the headers the answer already
// carries (a Link of its own replaces the discovery link).
func CMSHeaders(ctx *fasthttp.RequestCtx, info *schema.Tenant, own [][2][]byte) {
	h := &ctx.Response.Header
	h.Set("X-Robots-Tag", "noindex")
	h.Set("X-Content-Type-Options", "nosniff")
	for _, kv := range own {
		if string(kv[0]) == "Link" {
			return
		}
	}
	h.Set("Link", pipeline.APIRootLink(pipeline.SiteAPIRoot(info.BaseURL)))
}

// JSONBody checks the content type of a write and decodes its body into v (DecodeJSON).
func JSONBody(ctx *fasthttp.RequestCtx, v any) error {
	ct := ctx.Request.Header.ContentType()
	if len(ctx.Request.Body()) > 0 && len(ct) > 0 && !strings.HasPrefix(strings.ToLower(string(ct)), "application/json") {
		return &schema.Error{Code: schema.CodeUnsupported, Message: "request body must be application/json"}
	}
	return DecodeJSON(ctx.Request.Body(), v)
}

// IdempotencyKey returns the request's Idempotency-Key, which a route that moves money or buys
// something requires: missing, it is a 400 naming what a retry without one could do twice.
func IdempotencyKey(ctx *fasthttp.RequestCtx, what string) (string, error) {
	key := string(ctx.Request.Header.Peek("Idempotency-Key"))
	if key == "" {
		return "", &schema.Error{Code: schema.CodeInvalid, Field: "Idempotency-Key",
			Message: "Idempotency-Key is required " + what + ": a retry with the same key never does it twice"}
	}
	return key, store.ValidateIdempotencyKey(key)
}

// PathID parses the integer id path parameter; anything else is the 404 of the resource.
func PathID(ctx *fasthttp.RequestCtx, what string) (int64, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &schema.Error{Code: schema.CodeNotFound, Message: what + " not found"}
	}
	return id, nil
}

// Throttle is a fixed-window limit on one kind of attempt per client address, counted in the
// database so that it holds across every edge and origin.
type Throttle struct {
	Name   string
	Limit  int64
	Window time.Duration
}

// Key is the throttle's database key for a client address: its name and the address's limit
// key (an IPv6 address's /64 network).
func (th Throttle) Key(clientIP string) string {
	return th.Name + ":ip:" + pipeline.LimitKeyString(clientIP)
}

// Spend counts one attempt by the request's client, and refuses it past the limit. An IPv6
// client counts by its /64, an IPv4 one by its address (pipeline.LimitKey).
func (th Throttle) Spend(ctx *fasthttp.RequestCtx, db *store.DB, rq *Request) error {
	ok, retry, err := db.Throttle(ctx, rq.Info, th.Key(string(pipeline.ClientIP(ctx, rq.FromEdge))), th.Limit, th.Window)
	if err != nil {
		return err
	}
	if !ok {
		secs := int(retry/time.Second) + 1
		return &schema.Error{Code: schema.CodeRateLimited, RetryAfter: secs,
			Message: "too many " + th.Name + " attempts; retry in " + strconv.Itoa(secs) + " seconds"}
	}
	return nil
}
