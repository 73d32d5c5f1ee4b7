// Package outbound is the one HTTP client for every request the platform sends to an address a
// tenant chose: webhook deliveries now, the oEmbed proxy and media sideloads later. It exists so
// that such a request cannot be pointed at the platform's own network (server-side request
// forgery) and cannot hold a worker for long or fill its memory.
//
// # Invariants
//
//   - The address a connection goes to is checked on the socket itself, in net.Dialer's
//     ControlContext, after the host was resolved and before connect: the address checked is the
//     address connected, so there is no window for DNS rebinding between a check and the dial.
//     Every address the dialer tries is checked (a name with several addresses is connected
//     only to one that passes).
//   - Without an allowlist, loopback, private, carrier-grade NAT, link-local (and the cloud
//     metadata address), multicast, unspecified, broadcast, reserved and documentation addresses
//     are refused, IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they
//     embed, and Teredo is refused (Classify has the list). With an allowlist, only the addresses
//     it contains are reached, public or not.
//   - A refusal is a *RefusedError (errors.As) naming the address and the reason.
//   - No redirect is followed: a 3xx is the answer. No proxy is taken from the environment. TLS
//     certificates are verified. Only HTTP/1.1 is spoken.
//   - Every call is bounded in time (connection to the last byte of the body read) and in the
//     size of the body kept; the rest of a longer body is not read.
//   - Connections are pooled per host only for calls without an allowlist, which all share one
//     rule; a call with an allowlist always dials a new connection, so it never reuses one
//     checked under another call's rule.
//
// # Why not smokescreen
//
// github.com/stripe/smokescreen (v0.1.0) is an egress proxy: a separate process with ACLs,
// logging and metrics, built on goproxy and logrus. Its address classifier is unexported and
// small (refuse what is not global unicast or is loopback, then net.IP.IsPrivate, then configured
// ranges): it does not judge the IPv4 address inside NAT64 or 6to4 addresses, and allows
// 100.64.0.0/10 unless configured otherwise. Taking the dependency would bring a proxy we do not
// run for a check that net/netip makes a page of code here (classify.go). Running smokescreen
// as a proxy in front of this client stays possible later, as defence in depth.
package outbound

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Config tunes a Client. Zero (or negative) values mean the defaults.
type Config struct {
	// Timeout bounds one call, from the dial to the last byte of the body read (default 10 s).
	// CallOptions.Timeout overrides it per call.
	Timeout time.Duration
	// ConnectTimeout bounds the resolution and TCP connect, and separately the TLS handshake
	// (default 5 s).
	ConnectTimeout time.Duration
	// MaxBody is how many bytes of an answer's body are kept (default 64 KiB).
	// CallOptions.MaxBody overrides it per call.
	MaxBody int64
	// UserAgent is sent when a request has none (default "vitrine").
	UserAgent string
	// MaxConnsPerHost bounds the connections to one host and port, in use or idle (default 8).
	MaxConnsPerHost int
}

// Default values of Config.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultConnectTimeout  = 5 * time.Second
	DefaultMaxBody         = 64 << 10
	DefaultUserAgent       = "vitrine"
	DefaultMaxConnsPerHost = 8
)

// maxHeaderBytes bounds an answer's header block.
const maxHeaderBytes = 64 << 10

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.MaxConnsPerHost <= 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	return c
}

// CallOptions are the per-call settings of Do. The zero value is a call under the default rule
// with the Client's bounds.
type CallOptions struct {
	// Allowlist, when not empty, is the only addresses the call may connect to, whatever their
	// class ("deliver only to these addresses"); see Check.
	Allowlist []netip.Prefix
	// MaxBody overrides Config.MaxBody when > 0.
	MaxBody int64
	// Timeout overrides Config.Timeout when > 0.
	Timeout time.Duration
}

// Response is an answer, read and closed.
type Response struct {
	// Status is the status code; a 3xx is an answer like any other (no redirect is followed).
	Status int
	Header http.Header
	// Body is at most MaxBody bytes of the body.
	Body []byte
	// Truncated says the body was longer than MaxBody; the rest was not read.
	Truncated bool
	// Duration is the time from the call to the body read.
	Duration time.Duration
	// RemoteAddr is the address ("ip:port") of the connection the request was sent on.
	RemoteAddr string
}

// Client sends outbound requests. It is safe for concurrent use; make one per process.
type Client struct {
	cfg Config
	// pooled serves calls without an allowlist: every connection in its pool passed the default
	// rule, so any such call may reuse it.
	pooled *http.Client
	// fresh serves calls with an allowlist, which it reads from the dial's context; keep-alives
	// are off, so no connection outlives its call.
	fresh *http.Client
}

// allowKey is the context key under which Do hands a call's allowlist to fresh's dialer.
type allowKey struct{}

// New returns a Client.
func New(cfg Config) *Client {
	cfg = cfg.withDefaults()
	byDefault := func(_ context.Context, _, address string, _ syscall.RawConn) error {
		return checkDial(address, nil)
	}
	byAllowlist := func(ctx context.Context, _, address string, _ syscall.RawConn) error {
		allow, _ := ctx.Value(allowKey{}).([]netip.Prefix)
		if len(allow) == 0 {
			// Unreachable through Do; refuse rather than fall back to a wider rule.
			a, _ := netip.ParseAddrPort(address)
			return &RefusedError{Addr: a.Addr(), Reason: ReasonNotAllowed}
		}
		return checkDial(address, allow)
	}
	return &Client{
		cfg:    cfg,
		pooled: newHTTPClient(cfg, byDefault, true),
		fresh:  newHTTPClient(cfg, byAllowlist, false),
	}
}

// checkDial applies Check to the "ip:port" address a socket is about to connect to.
func checkDial(address string, allow []netip.Prefix) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Reason: ReasonInvalid}
	}
	return Check(ap.Addr(), allow)
}

func newHTTPClient(cfg Config, control func(context.Context, string, string, syscall.RawConn) error, keepAlive bool) *http.Client {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second, ControlContext: control}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	t := &http.Transport{
		Proxy:                  nil, // never from the environment
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		DisableKeepAlives:      !keepAlive,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    cfg.MaxConnsPerHost,
		MaxConnsPerHost:        cfg.MaxConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
		Protocols:              &protocols,
	}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Do sends req and reads its answer, within opt's bounds and under opt's address rule. ctx
// governs the call (req's own context is not used); req is not modified, and its body is
// closed.
//
// An error is returned when no answer was read whole up to the bound: a refused address (a
// *RefusedError, with errors.As), a timeout (errors.Is(err, context.DeadlineExceeded), for
// Timeout, ConnectTimeout or ctx's own deadline), or any other network, TLS or protocol error.
// An answer of any status, 3xx and 5xx included, is a Response and no error.
func (c *Client) Do(ctx context.Context, req *http.Request, opt CallOptions) (*Response, error) {
	start := time.Now()
	timeout, maxBody := c.cfg.Timeout, c.cfg.MaxBody
	if opt.Timeout > 0 {
		timeout = opt.Timeout
	}
	if opt.MaxBody > 0 {
		maxBody = opt.MaxBody
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var (
		mu     sync.Mutex
		remote string
	)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			mu.Lock()
			defer mu.Unlock()
			remote = info.Conn.RemoteAddr().String()
		},
	})
	hc := c.pooled
	if len(opt.Allowlist) > 0 {
		ctx = context.WithValue(ctx, allowKey{}, slices.Clone(opt.Allowlist))
		hc = c.fresh
	}
	r := req.Clone(ctx)
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", c.cfg.UserAgent)
	}

	resp, err := hc.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	limit := maxBody
	if limit < math.MaxInt64 {
		limit++ // one byte more tells a body of exactly maxBody from a longer one
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("reading the body of a %d answer: %w", resp.StatusCode, err)
	}
	truncated := int64(len(body)) > maxBody
	if truncated {
		body = body[:maxBody]
	}
	mu.Lock()
	defer mu.Unlock()
	return &Response{
		Status:     resp.StatusCode,
		Header:     resp.Header,
		Body:       body,
		Truncated:  truncated,
		Duration:   time.Since(start),
		RemoteAddr: remote,
	}, nil
}

// CloseIdleConnections closes the pooled connections no call is using (at shutdown).
func (c *Client) CloseIdleConnections() {
	c.pooled.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
}
