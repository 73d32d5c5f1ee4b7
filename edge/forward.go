package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/sony/gobreaker/v2"
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

// forwarder sends requests the edge does not answer to the origin.
//
// A circuit breaker (sony/gobreaker, two-step) guards the origin: consecutive connection
// failures (the dial refused or timed out) open it, and while it is open a request fails at once
// without dialling (errBreakerOpen: never sent, so safe to retry). After a cooldown one request
// goes through as a probe: success closes the breaker, a connection failure opens it again.
// Only connection failures count: an origin that accepted the request and answered late, or
// not at all, is reachable (its answer is an unknown outcome, not a refusal to connect).
type forwarder struct {
	hc      *fasthttp.HostClient
	secret  []byte
	timeout time.Duration
	breaker *gobreaker.TwoStepCircuitBreaker[struct{}]
}

// forwardConfig tunes a forwarder; zero values mean the defaults.
type forwardConfig struct {
	timeout     time.Duration // whole forwarded request (default 30s)
	dialTimeout time.Duration // one connection attempt (default 2s)
	failures    int           // consecutive connection failures that open the breaker (default 5)
	cooldown    time.Duration // how long the breaker stays open before a probe (default 2s)
	// onState is told of every breaker state change (metrics, logs).
	onState func(from, to gobreaker.State)
}

// errBreakerOpen is the forwarder's answer while the origin's breaker is open: the request was
// not sent.
var errBreakerOpen = errors.New("edge: origin circuit breaker is open")

// hopByHop are the headers that describe one connection, never forwarded (RFC 9110 7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"TE", "Trailer", "Transfer-Encoding", "Upgrade"}

func newForwarder(origin, secret string, fc forwardConfig) (*forwarder, error) {
	timeout := fc.timeout
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
	dialTimeout := fc.dialTimeout
	if dialTimeout == 0 {
		dialTimeout = 2 * time.Second
	}
	failures := uint32(fc.failures)
	if failures == 0 {
		failures = 5
	}
	cooldown := fc.cooldown
	if cooldown == 0 {
		cooldown = 2 * time.Second
	}
	dialer := &fasthttp.TCPDialer{Concurrency: 0}
	return &forwarder{
		secret:  []byte(secret),
		timeout: timeout,
		breaker: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "origin",
			MaxRequests: 1, // one probe at a time while half-open
			Timeout:     cooldown,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
			// Only a failure to connect counts against the origin.
			IsSuccessful: func(err error) bool { return err == nil || !connectFailed(err) },
			// A full local pool says nothing of the origin.
			IsExcluded: func(err error) bool { return errors.Is(err, fasthttp.ErrNoFreeConns) },
			OnStateChange: func(_ string, from, to gobreaker.State) {
				if fc.onState != nil {
					fc.onState(from, to)
				}
			},
		}),
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
				return dialer.DialTimeout(addr, min(t, dialTimeout))
			},
		},
	}, nil
}

// neverSent reports whether a client error happened before any byte of the request was written:
// retrying it cannot apply it twice. Any other error came after the request was (at least
// partly) sent: its outcome is unknown.
func neverSent(err error) bool {
	return errors.Is(err, errBreakerOpen) || errors.Is(err, fasthttp.ErrNoFreeConns) || connectFailed(err)
}

// connectFailed reports whether err is a failure to connect to the origin (refused, unreachable,
// or timed out while dialling).
func connectFailed(err error) bool {
	if errors.Is(err, fasthttp.ErrDialTimeout) {
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
	done, err := f.breaker.Allow()
	if err != nil {
		// Open, or half-open with its probe under way: fail fast, nothing was sent.
		return errBreakerOpen
	}
	for attempt := 0; attempt < 2; attempt++ {
		err = f.hc.DoTimeout(req, &ctx.Response, f.timeout)
		if err == nil || !neverSent(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	done(err)
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
