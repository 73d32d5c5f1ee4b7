package origin

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/schema"
)

// actingUserKey marks an in-process request run by ActAs: its value is the *schema.User the
// request acts as. It is set only in-process, never from anything a client sends.
const actingUserKey = "vitrine.origin.acting-user"

// callHeaders are the response headers a Call reports.
var callHeaders = []string{"Location", "X-WP-Total", "X-WP-TotalPages", pipeline.HeaderWriteVersion}

// ActAs runs one request through the origin's whole pipeline as user (handler.Dispatcher): the
// route's own validation, permission checks, idempotency and write announcement apply, exactly
// as over HTTP. The outer request's host, tenant and client headers are kept; its credentials,
// cookies and method override are not.
func (s *Server) ActAs(outer *fasthttp.RequestCtx, user *schema.User, c handler.Call) handler.CallResult {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	outer.Request.Header.CopyTo(&req.Header)
	for _, h := range []string{fasthttp.HeaderAuthorization, fasthttp.HeaderCookie, fasthttp.HeaderContentLength,
		"X-HTTP-Method-Override", "Idempotency-Key", fasthttp.HeaderOrigin, "Sec-Fetch-Site", pipeline.HeaderMinVersion} {
		req.Header.Del(h)
	}
	req.Header.SetMethod(strings.ToUpper(c.Method))
	target := c.Target
	if c.Iface == schema.CMS {
		route, query, _ := strings.Cut(target, "?")
		target = "/index.php?rest_route=" + url.QueryEscape(route)
		if query != "" {
			target += "&" + query
		}
	}
	req.SetRequestURI(target)
	if c.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", c.IdempotencyKey)
	}
	req.ResetBody()
	if len(c.Body) > 0 {
		req.SetBody(c.Body)
		req.Header.SetContentType("application/json")
	}
	var sub fasthttp.RequestCtx
	sub.Init(req, outer.RemoteAddr(), nil)
	sub.SetUserValue(actingUserKey, user)
	s.Handler(&sub)
	res := handler.CallResult{Status: sub.Response.StatusCode(), Body: append([]byte(nil), bytes.TrimSpace(sub.Response.Body())...),
		Header: map[string]string{}}
	for _, h := range callHeaders {
		if v := sub.Response.Header.Peek(h); len(v) > 0 {
			res.Header[h] = string(v)
		}
	}
	return res
}

// actingUser returns the user an ActAs request acts as, or nil for a request from the wire.
func actingUser(ctx *fasthttp.RequestCtx) *schema.User {
	u, _ := ctx.UserValue(actingUserKey).(*schema.User)
	return u
}
