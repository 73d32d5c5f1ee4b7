// Package pipeline is the request pipeline that edges and the origin share: which interface a
// request addresses (commerce or CMS), request ids, CORS per interface, errors in each
// interface's shape with one code-to-status table, routing from the route table, the
// fasthttp server settings (body limits, timeouts), and the drain that takes a server out of a
// load balancer's rotation before it stops (Drain).
//
// # Invariants
//
//   - An unknown tenant and an unknown route answer the same 404 in the interface's shape.
//   - Commerce CORS allows any origin and never credentials; CMS CORS sends WordPress's headers
//     and never Access-Control-Allow-Credentials: true.
//   - Every response carries X-Request-Id.
//   - Nothing here keeps a *fasthttp.RequestCtx or its byte slices after a handler returns.
//   - The hot-path helpers (Classify, RequestIDs.Next, CORS) do not allocate.
package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Classify returns the interface a request addresses and its route: for the CMS, the rest_route
// value of "/index.php?rest_route=…" (or "/?rest_route=…"), without a trailing slash; for the
// commerce interface, the URL path.
func Classify(ctx *fasthttp.RequestCtx) (schema.Interface, []byte) {
	path := ctx.Path()
	if string(path) == "/index.php" || string(path) == "/" {
		if rr := ctx.QueryArgs().Peek("rest_route"); len(rr) > 0 {
			if len(rr) > 1 && rr[len(rr)-1] == '/' {
				rr = rr[:len(rr)-1]
			}
			return schema.CMS, rr
		}
	}
	return schema.Commerce, path
}

// RequestIDs generates request ids: a random per-process prefix and a counter, so ids are unique
// across processes without coordination.
type RequestIDs struct {
	prefix [12]byte
	n      atomic.Uint64
}

// NewRequestIDs returns a generator with a fresh random prefix.
func NewRequestIDs() *RequestIDs {
	g := &RequestIDs{}
	var b [6]byte
	rand.Read(b[:])
	hex.Encode(g.prefix[:], b[:])
	return g
}

// Next appends a new id to dst.
func (g *RequestIDs) Next(dst []byte) []byte {
	dst = append(dst, g.prefix[:]...)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, g.n.Add(1), 36)
}

// HeaderRequestID is the request id header, on requests (propagated) and responses.
const HeaderRequestID = "X-Request-Id"

// Header names in canonical form, set with SetCanonical: the hit path skips fasthttp's key
// normalisation (measured: 30% of a cache hit's handler time).
var (
	keyRequestID     = []byte(HeaderRequestID)
	keyExposeHeaders = []byte("Access-Control-Expose-Headers")
	keyAllowHeaders  = []byte("Access-Control-Allow-Headers")
	keyAllowOrigin   = []byte("Access-Control-Allow-Origin")
	keyAllowMethods  = []byte("Access-Control-Allow-Methods")
	keyMaxAge        = []byte("Access-Control-Max-Age")
)

// ValidRequestID reports whether a caller-sent request id may be propagated: 1–128 characters of
// letters, digits, '.', '_', '-'. Anything else is replaced, so ids never carry injection.
func ValidRequestID(id []byte) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AssignRequestID sets the response's X-Request-Id: the caller's when valid, else a new one. It
// returns the id (a slice of the response header, valid until the handler returns).
func AssignRequestID(ctx *fasthttp.RequestCtx, g *RequestIDs) []byte {
	if in := ctx.Request.Header.PeekBytes(keyRequestID); ValidRequestID(in) {
		ctx.Response.Header.SetCanonical(keyRequestID, in)
	} else {
		var buf [48]byte
		ctx.Response.Header.SetCanonical(keyRequestID, g.Next(buf[:0]))
	}
	return ctx.Response.Header.PeekCanonical(keyRequestID)
}

// Commerce CORS. The request headers are the spec's plus the additive Vitrine-Min-Version and
// Idempotency-Key; the exposed ones are what a browser client needs to read its versions, rate
// limits and request id.
var (
	commerceAllowHeaders  = []byte("Content-Type, Accept, Authorization, X-Cart-Session, X-Session-Id, X-Tenant-Slug, X-Requested-With, Vitrine-Min-Version, Idempotency-Key, X-Order-Email")
	commerceExposeHeaders = []byte("Vitrine-Write-Version, Vitrine-Replica-Version, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id, Idempotent-Replayed")
	commerceAllowMethods  = []byte("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
	cmsExposeHeaders      = []byte("X-WP-Total, X-WP-TotalPages, Link")
	cmsAllowHeaders       = []byte("Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type")
	cmsAllowMethods       = []byte("OPTIONS, GET, POST, PUT, PATCH, DELETE")
	star                  = []byte("*")
	varyOrigin            = []byte("Origin")
	maxAge                = []byte("86400")
)

// CommerceAllowHeaders is the commerce Access-Control-Allow-Headers value (tests).
func CommerceAllowHeaders() string { return string(commerceAllowHeaders) }

// CORS adds the interface's CORS response headers. Commerce: any origin, no credentials. CMS:
// WordPress's headers, echoing the Origin (with Vary: Origin), never credentials.
func CORS(h *fasthttp.ResponseHeader, iface schema.Interface, origin []byte) {
	if iface == schema.CMS {
		h.SetCanonical(keyExposeHeaders, cmsExposeHeaders)
		h.SetCanonical(keyAllowHeaders, cmsAllowHeaders)
		if len(origin) > 0 {
			h.SetCanonical(keyAllowOrigin, origin)
			h.SetCanonical(keyAllowMethods, cmsAllowMethods)
			h.AddBytesV("Vary", varyOrigin)
		}
		return
	}
	if len(origin) > 0 {
		h.SetCanonical(keyAllowOrigin, star)
		h.SetCanonical(keyExposeHeaders, commerceExposeHeaders)
	}
}

// Preflight answers a CORS preflight (OPTIONS with Access-Control-Request-Method) and reports
// whether it did.
func Preflight(ctx *fasthttp.RequestCtx, iface schema.Interface) bool {
	if !ctx.IsOptions() || len(ctx.Request.Header.Peek("Access-Control-Request-Method")) == 0 {
		return false
	}
	h := &ctx.Response.Header
	CORS(h, iface, ctx.Request.Header.Peek("Origin"))
	if iface == schema.Commerce {
		h.SetCanonical(keyAllowMethods, commerceAllowMethods)
		h.SetCanonical(keyAllowHeaders, commerceAllowHeaders)
	}
	h.SetCanonical(keyMaxAge, maxAge)
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return true
}

// HeaderClientIP carries, from an edge to the origin, the client address the edge resolved
// (through its trusted proxies). The origin believes it only on requests with the edge secret;
// edges overwrite whatever a client sent.
const HeaderClientIP = "Vitrine-Client-IP"

// ClientIP returns the client address of a request: the connection's peer, or, when the peer is
// trusted (an authenticated edge), the address the edge resolved (Vitrine-Client-IP), else the
// last address of X-Forwarded-For.
func ClientIP(ctx *fasthttp.RequestCtx, trustForwarded bool) []byte {
	if trustForwarded {
		if ip := bytes.TrimSpace(ctx.Request.Header.Peek(HeaderClientIP)); len(ip) > 0 {
			return ip
		}
		if xff := ctx.Request.Header.Peek(fasthttp.HeaderXForwardedFor); len(xff) > 0 {
			if i := bytes.LastIndexByte(xff, ','); i >= 0 {
				xff = xff[i+1:]
			}
			return bytes.TrimSpace(xff)
		}
	}
	return []byte(ctx.RemoteIP().String())
}

// ClientAddr returns the address of the client of a request reaching an edge: the connection's
// peer, or, when the peer is one of the trusted proxies (a load balancer, a CDN), the rightmost
// address of X-Forwarded-For that is not itself a trusted proxy. Addresses left of it were
// written by the client and are never believed; a malformed entry stops the walk at the last
// trusted hop.
func ClientAddr(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	peer = peer.Unmap()
	if len(trusted) == 0 || !inPrefixes(peer, trusted) {
		return peer
	}
	xff := ctx.Request.Header.Peek(fasthttp.HeaderXForwardedFor)
	for len(xff) > 0 {
		i := bytes.LastIndexByte(xff, ',')
		part := bytes.TrimSpace(xff[i+1:])
		if i < 0 {
			xff = nil
		} else {
			xff = xff[:i]
		}
		a, err := netip.ParseAddr(string(part))
		if err != nil {
			return peer
		}
		a = a.Unmap()
		if !inPrefixes(a, trusted) {
			return a
		}
		peer = a
	}
	return peer
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// FastHTTPLogger adapts a slog.Logger to fasthttp's logger interface, so that fasthttp's own
// messages (connection errors) reach the process's JSON log instead of the standard logger.
func FastHTTPLogger(log *slog.Logger) fasthttp.Logger { return fastHTTPLogger{log} }

type fastHTTPLogger struct{ log *slog.Logger }

func (l fastHTTPLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "fasthttp")
}

// Serve runs srv on addr until ctx ends, then shuts it down at once, letting in-flight requests
// finish for up to drain. A server behind a load balancer uses Drain.Serve instead, which first
// takes it out of rotation.
func Serve(ctx context.Context, srv *fasthttp.Server, addr string, drain time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe(addr) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		return srv.ShutdownWithContext(sctx)
	}
}
