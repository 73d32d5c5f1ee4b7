package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

// forwarder sends requests the edge does not answer to the origin.
type forwarder struct {
	hc      *fasthttp.HostClient
	secret  []byte
	timeout time.Duration
}

// hopByHop are the headers that describe one connection, never forwarded (RFC 9110 7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"TE", "Trailer", "Transfer-Encoding", "Upgrade"}

func newForwarder(origin, secret string, timeout time.Duration) (*forwarder, error) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("edge: origin URL %q must be http(s)://host:port", origin)
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	dialer := &fasthttp.TCPDialer{Concurrency: 0}
	return &forwarder{
		secret:  []byte(secret),
		timeout: timeout,
		hc: &fasthttp.HostClient{
			Addr:                     addr,
			IsTLS:                    u.Scheme == "https",
			Name:                     "vitrine-edge",
			NoDefaultUserAgentHeader: true,
			MaxConns:                 2048,
			// Shorter than the origin's idle timeout, so the edge never writes a request on a
			// connection the origin is closing: such a request could not be retried safely.
			MaxIdleConnDuration: 5 * time.Second,
			ReadTimeout:         timeout,
			WriteTimeout:        10 * time.Second,
			MaxConnWaitTimeout:  time.Second,
			MaxResponseBodySize: 64 << 20,
			ReadBufferSize:      3 * pipeline.MaxHeaderBytes,
			// The origin sees the path as the client sent it.
			DisablePathNormalizing: true,
			// Never retry a request that may have reached the origin: fasthttp would retry
			// idempotent methods (PUT included) after a failed read. Requests that were never
			// sent (the dial failed) are retried by forward itself.
			RetryIfErr: func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
			DialTimeout: func(addr string, t time.Duration) (net.Conn, error) {
				return dialer.DialTimeout(addr, min(t, 2*time.Second))
			},
		},
	}, nil
}

// neverSent reports whether a client error happened before any byte of the request was written.
func neverSent(err error) bool {
	if errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrNoFreeConns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// forward sends ctx.Request to the origin and fills ctx.Response with its answer. The request's
// method, path, query, body and end-to-end headers are preserved; hop-by-hop headers are
// stripped both ways; X-Forwarded-For gains the client's address.
func (f *forwarder) forward(ctx *fasthttp.RequestCtx, requestID []byte, tenant string, client netip.Addr) error {
	req := &ctx.Request
	stripHopByHop(&req.Header)
	// The origin resolves the same tenant from the same registry; naming it spares the origin a
	// host lookup that its own configuration might not make.
	req.Header.Set(pipeline.HeaderTenantSlug, tenant)
	ip := ctx.RemoteIP().String()
	if prior := req.Header.Peek(fasthttp.HeaderXForwardedFor); len(prior) > 0 {
		req.Header.Set(fasthttp.HeaderXForwardedFor, string(prior)+", "+ip)
	} else {
		req.Header.Set(fasthttp.HeaderXForwardedFor, ip)
	}
	if ctx.IsTLS() {
		req.Header.Set("X-Forwarded-Proto", "https")
	} else {
		req.Header.Set("X-Forwarded-Proto", "http")
	}
	// The client address as this edge resolved it, through its trusted proxies; a value the
	// client sent is overwritten.
	req.Header.Set(pipeline.HeaderClientIP, client.String())
	req.Header.Del(pipeline.HeaderEdgeAuth)
	if len(f.secret) > 0 {
		req.Header.SetBytesV(pipeline.HeaderEdgeAuth, f.secret)
	}
	req.Header.SetBytesV("X-Request-Id", requestID)
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		err = f.hc.DoTimeout(req, &ctx.Response, f.timeout)
		if err == nil || !neverSent(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	stripHopByHop(&ctx.Response.Header)
	return nil
}

type headers interface {
	Peek(key string) []byte
	Del(key string)
}

func stripHopByHop(h headers) {
	// Headers named in Connection are hop-by-hop too.
	if c := h.Peek("Connection"); len(c) > 0 {
		for _, name := range bytes.Split(c, []byte{','}) {
			if n := bytes.TrimSpace(name); len(n) > 0 && !bytes.EqualFold(n, []byte("close")) && !bytes.EqualFold(n, []byte("keep-alive")) {
				h.Del(string(n))
			}
		}
	}
	for _, name := range hopByHop {
		h.Del(name)
	}
}
