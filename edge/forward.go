package edge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"sync/atomic"
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
//
// An active health check (watch) complements the breaker: while the edge runs, it asks the
// origin's /healthz every checkInterval, and after checkFailures probes in a row that could not
// connect or were not answered within checkTimeout, it marks the origin unreachable: forwarded
// requests then fail at once (errOriginDown, never sent) until a probe is answered again. The
// breaker alone needs failed requests to learn of a lost origin, each one paying the dial
// timeout, and sends one request per cooldown into the void while open; a region cut off from
// the core would answer its writers in seconds instead of at once (measured: 2–4 s per write
// through a 60 s partition in `vitrine bench fleet`). The check learns it from one connection
// per edge, and learns the way back within an interval. A connection failure of a forwarded
// request wakes the check at once rather than at its next tick.
type forwarder struct {
	hc      *fasthttp.HostClient
	secret  []byte
	timeout time.Duration
	breaker *gobreaker.TwoStepCircuitBreaker[struct{}]

	// check is the health check's own client (one connection, kept alive), so that probes
	// neither wait behind nor keep alive the forwarding pool's connections.
	check         *fasthttp.HostClient
	checkInterval time.Duration // <0: no health check
	checkTimeout  time.Duration
	checkFailures int
	onReachable   func(reachable bool)
	// down is true while the health check finds the origin unreachable; wake asks the check to
	// probe now.
	down atomic.Bool
	wake chan struct{}
}

// forwardConfig tunes a forwarder; zero values mean the defaults.
type forwardConfig struct {
	timeout     time.Duration // whole forwarded request (default 30s)
	dialTimeout time.Duration // one connection attempt (default 2s)
	failures    int           // consecutive connection failures that open the breaker (default 5)
	cooldown    time.Duration // how long the breaker stays open before a probe (default 2s)
	// onState is told of every breaker state change (metrics, logs).
	onState func(from, to gobreaker.State)
	// checkInterval is how often the health check probes the origin while the edge runs
	// (default 1s; negative: no health check); checkTimeout bounds one probe, connection
	// included (default 1s); checkFailures is the number of failed probes in a row that mark the
	// origin unreachable (default 2).
	checkInterval, checkTimeout time.Duration
	checkFailures               int
	// onReachable is told when the health check marks the origin unreachable (false) or
	// reachable again (true).
	onReachable func(reachable bool)
}

// errBreakerOpen is the forwarder's answer while the origin's breaker is open: the request was
// not sent.
var errBreakerOpen = errors.New("edge: origin circuit breaker is open")

// errOriginDown is the forwarder's answer while its health check finds the origin unreachable:
// the request was not sent.
var errOriginDown = errors.New("edge: origin unreachable (health check)")

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
	checkInterval, checkTimeout, checkFailures := fc.checkInterval, fc.checkTimeout, fc.checkFailures
	if checkInterval == 0 {
		checkInterval = time.Second
	}
	if checkTimeout <= 0 {
		checkTimeout = time.Second
	}
	if checkFailures <= 0 {
		checkFailures = 2
	}
	dialer := &fasthttp.TCPDialer{Concurrency: 0}
	return &forwarder{
		secret:        []byte(secret),
		timeout:       timeout,
		checkInterval: checkInterval,
		checkTimeout:  checkTimeout,
		checkFailures: checkFailures,
		onReachable:   fc.onReachable,
		wake:          make(chan struct{}, 1),
		check: &fasthttp.HostClient{
			Addr:                     addr,
			IsTLS:                    u.Scheme == "https",
			Name:                     "vitrine-edge-check",
			NoDefaultUserAgentHeader: true,
			MaxConns:                 1,
			MaxIdleConnDuration:      max(5*time.Second, 2*checkInterval),
			ReadTimeout:              checkTimeout,
			WriteTimeout:             checkTimeout,
			MaxResponseBodySize:      64 << 10,
			RetryIfErr:               func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
			DialTimeout: func(addr string, t time.Duration) (net.Conn, error) {
				return dialer.DialTimeout(addr, min(t, checkTimeout))
			},
		},
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
	return errors.Is(err, errBreakerOpen) || errors.Is(err, errOriginDown) || errors.Is(err, fasthttp.ErrNoFreeConns) || connectFailed(err)
}

// dialTimedOut reports whether err is a connection attempt that timed out (no answer at all,
// as from a host cut off), as opposed to one refused at once (an origin restarting).
func dialTimedOut(err error) bool {
	if errors.Is(err, fasthttp.ErrDialTimeout) {
		return true
	}
	var ne net.Error
	return connectFailed(err) && errors.As(err, &ne) && ne.Timeout()
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
	if f.down.Load() {
		// The health check finds the origin unreachable: fail fast, nothing was sent.
		return errOriginDown
	}
	done, err := f.breaker.Allow()
	if err != nil {
		// Open, or half-open with its probe under way: fail fast, nothing was sent.
		return errBreakerOpen
	}
	for attempt := 0; attempt < 2; attempt++ {
		err = f.hc.DoTimeout(req, &ctx.Response, f.timeout)
		// A refused connection is tried once more (an origin restarting, a stale address);
		// a timed-out one is not: a host that did not answer the first attempt is unlikely to
		// answer the second, and the client would wait twice the dial timeout for nothing.
		if err == nil || !neverSent(err) || dialTimedOut(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	done(err)
	if err != nil {
		if connectFailed(err) {
			f.probeNow()
		}
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

// probeNow asks the health check for a probe now rather than at its next tick.
func (f *forwarder) probeNow() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// watch runs the health check until ctx ends (see forwarder). It returns at once when the check
// is disabled.
func (f *forwarder) watch(ctx context.Context, log *slog.Logger) {
	if f.checkInterval < 0 {
		return
	}
	t := time.NewTicker(f.checkInterval)
	defer t.Stop()
	failed := 0
	for {
		err := f.probe()
		switch {
		case err == nil:
			failed = 0
			if f.down.Load() {
				f.verdict(true)
				log.Info("origin reachable again (health check)")
			}
		default:
			failed++
			if failed >= f.checkFailures && !f.down.Load() {
				f.verdict(false)
				log.Warn("origin unreachable (health check): forwarded requests fail at once until it answers",
					"failed_probes", failed, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.wake:
		}
	}
}

// verdict reports a change of the health check's verdict to onReachable, then makes it take
// effect: whoever sees its effect (a request refused at once, the reachability gauge) sees it
// counted. Only watch changes the verdict.
func (f *forwarder) verdict(reachable bool) {
	if f.onReachable != nil {
		f.onReachable(reachable)
	}
	f.down.Store(!reachable)
}

// probe asks the origin's /healthz once. Any answer counts as reachable, whatever its status:
// an origin that answers is there to take requests or to refuse them itself.
func (f *forwarder) probe() error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/healthz")
	req.Header.SetHost(f.check.Addr)
	req.Header.SetMethod(fasthttp.MethodGet)
	return f.check.DoTimeout(req, resp, f.checkTimeout)
}

// reachable reports whether the health check finds the origin reachable (true before its first
// verdict and when it is disabled).
func (f *forwarder) reachable() bool { return !f.down.Load() }
