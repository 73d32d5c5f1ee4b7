package origin

import (
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/store"
	"vitrine/schema"
)

// This file is the one home of what every handler does around its feature: decode a body,
// answer, fail, and count an attempt against a throttle. Feature files hold only their feature.

// jsonBody checks the content type of a write and decodes its body into v.
func jsonBody(ctx *fasthttp.RequestCtx, v any) error {
	ct := ctx.Request.Header.ContentType()
	if len(ctx.Request.Body()) > 0 && len(ct) > 0 && !strings.HasPrefix(strings.ToLower(string(ct)), "application/json") {
		return &schema.Error{Code: schema.CodeUnsupported, Message: "request body must be application/json"}
	}
	return decodeJSON(ctx.Request.Body(), v)
}

// pathID parses an integer id path parameter; anything else is the 404 of the resource.
func pathID(ctx *fasthttp.RequestCtx, what string) (int64, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &schema.Error{Code: schema.CodeNotFound, Message: what + " not found"}
	}
	return id, nil
}

// reply writes a successful answer that is not a replicated write.
func (s *Server) reply(ctx *fasthttp.RequestCtx, rq *request, status int, v any) {
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	pipeline.WriteJSON(ctx, rq.iface, status, v)
	s.http.Count(pipeline.RouteIndex(rq.route), status)
}

// written finishes a successful write: Vitrine-Write-Version, a bounded wait for the origin's
// replica to apply it, and the response body.
func (s *Server) written(ctx *fasthttp.RequestCtx, rq *request, commits []store.LogCommit, status int, body any) {
	s.writes.Inc()
	for _, c := range commits {
		if c.Log == rq.tenant.Slug {
			pipeline.SetWriteVersion(&ctx.Response.Header, c.Version)
			if !rq.tenant.WaitFor(c.Version, s.cfg.WriteWait) {
				s.writeWaitTimeouts.Inc()
			}
		}
	}
	s.replicaVersion(ctx, rq.tenant)
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	if rq.iface == schema.CMS {
		cmsHeaders(ctx, rq, nil)
	}
	pipeline.WriteJSON(ctx, rq.iface, status, body)
	s.http.Count(pipeline.RouteIndex(rq.route), status)
}

// failRoute answers a routed request with err in its interface's error shape: the one way a
// handler fails (Retry-After, the status and the body come from the error).
func (s *Server) failRoute(ctx *fasthttp.RequestCtx, rq *request, err error) {
	s.fail(ctx, rq.iface, pipeline.RouteIndex(rq.route), err)
}

// fail answers with err in the interface's error shape and counts it against route: for the
// front of the pipeline, before a handler runs (handlers call failRoute). An internal error is
// logged with the request id; its text never reaches the caller.
func (s *Server) fail(ctx *fasthttp.RequestCtx, iface schema.Interface, route int, err error) {
	if schema.ErrorCode(err) == schema.CodeInternal {
		s.log.Error("request failed", "err", err, "path", string(ctx.Path()), "client", string(pipeline.ClientIP(ctx, s.fromEdge(ctx))),
			"request_id", string(ctx.Response.Header.Peek(pipeline.HeaderRequestID)))
	}
	pipeline.WriteError(ctx, iface, err)
	s.http.Count(route, ctx.Response.StatusCode())
}

// throttle is a fixed-window limit on one kind of attempt.
type throttle struct {
	name   string
	limit  int64
	window time.Duration
}

// throttled counts one attempt of kind th by the client, and refuses it past the limit.
func (s *Server) throttled(ctx *fasthttp.RequestCtx, rq *request, th throttle) error {
	ip := pipeline.ClientIP(ctx, s.fromEdge(ctx))
	ok, retry, err := s.db.Throttle(ctx, rq.info, th.name+":ip:"+string(ip), th.limit, th.window)
	if err != nil {
		return err
	}
	if !ok {
		secs := int(retry/time.Second) + 1
		return &schema.Error{Code: schema.CodeRateLimited, RetryAfter: secs,
			Message: "too many " + th.name + " attempts; retry in " + strconv.Itoa(secs) + " seconds"}
	}
	return nil
}
