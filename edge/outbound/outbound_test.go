package outbound_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/edge/outbound"
)

// counted is a loopback test server that counts the requests it answers.
type counted struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func newServer(t *testing.T, h http.HandlerFunc) *counted {
	t.Helper()
	s := &counted{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func ok(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }

func get(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// TestRefused sends to every refused class and checks that the call fails with a
// *RefusedError, before anything reaches the (loopback) test server.
func TestRefused(t *testing.T) {
	srv := newServer(t, ok)
	c := outbound.New(outbound.Config{Timeout: 5 * time.Second})
	tests := []struct {
		host string
		want outbound.Reason // "" when the name may also fail to resolve
	}{
		{"127.0.0.1", outbound.ReasonLoopback},
		{"127.0.0.2", outbound.ReasonLoopback},
		{"[::1]", outbound.ReasonLoopback},
		{"localhost", outbound.ReasonLoopback},
		{"[::ffff:127.0.0.1]", outbound.ReasonLoopback},
		{"[::ffff:7f00:1]", outbound.ReasonLoopback},
		{"[64:ff9b::7f00:1]", outbound.ReasonLoopback},
		{"[64:ff9b:1::7f00:1]", outbound.ReasonLoopback},
		{"[2002:7f00:1::1]", outbound.ReasonLoopback},
		{"0.0.0.0", outbound.ReasonUnspecified},
		{"[::]", outbound.ReasonUnspecified},
		{"10.0.0.1", outbound.ReasonPrivate},
		{"172.16.5.4", outbound.ReasonPrivate},
		{"192.168.1.1", outbound.ReasonPrivate},
		{"[::ffff:10.0.0.1]", outbound.ReasonPrivate},
		{"[fd00::1]", outbound.ReasonPrivate},
		{"[64:ff9b::a00:1]", outbound.ReasonPrivate},
		{"100.64.0.1", outbound.ReasonCGNAT},
		{"169.254.169.254", outbound.ReasonMetadata},
		{"[64:ff9b::a9fe:a9fe]", outbound.ReasonMetadata},
		{"[2002:a9fe:a9fe::1]", outbound.ReasonMetadata},
		{"169.254.1.1", outbound.ReasonLinkLocal},
		{"[fe80::1]", outbound.ReasonLinkLocal},
		{"224.0.0.1", outbound.ReasonMulticast},
		{"[ff02::1]", outbound.ReasonMulticast},
		{"255.255.255.255", outbound.ReasonBroadcast},
		{"0.1.2.3", outbound.ReasonReserved},
		{"192.0.0.8", outbound.ReasonReserved},
		{"198.18.0.1", outbound.ReasonReserved},
		{"240.0.0.1", outbound.ReasonReserved},
		{"192.0.2.1", outbound.ReasonDocumentation},
		{"[2001::1]", outbound.ReasonTeredo},
		// Other spellings of 127.0.0.1: Go's URL and resolver do not take them as addresses, so
		// they are names; a resolver that maps them to 127.0.0.1 meets the check.
		{"0x7f000001", ""},
		{"2130706433", ""},
		{"0177.0.0.1", ""},
		{"127.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			before := srv.hits.Load()
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			resp, err := c.Do(ctx, get(t, "http://"+tt.host+":"+srv.port+"/"), outbound.CallOptions{})
			if err == nil {
				t.Fatalf("got %d from %s, want an error", resp.Status, tt.host)
			}
			if srv.hits.Load() != before {
				t.Fatalf("the request reached the server")
			}
			var refused *outbound.RefusedError
			if !errors.As(err, &refused) {
				if tt.want != "" {
					t.Fatalf("err = %v, want a *RefusedError", err)
				}
				return
			}
			if tt.want != "" && refused.Reason != tt.want {
				t.Errorf("reason = %q (%v), want %q", refused.Reason, err, tt.want)
			}
		})
	}
}

// TestAllowlist checks that an allowlist naming an address lets a call through to it, and
// refuses every address it does not name, public ones included.
func TestAllowlist(t *testing.T) {
	srv := newServer(t, ok)
	c := outbound.New(outbound.Config{})
	p := netip.MustParsePrefix
	tests := []struct {
		name  string
		host  string
		allow []netip.Prefix
		want  outbound.Reason // "" for a 200 from the server
	}{
		{"address", "127.0.0.1", loopback, ""},
		{"network", "127.0.0.1", []netip.Prefix{p("127.0.0.0/8")}, ""},
		{"among others", "127.0.0.1", []netip.Prefix{p("10.0.0.0/8"), p("127.0.0.1/32")}, ""},
		{"name", "localhost", loopback, ""},
		{"mapped", "[::ffff:127.0.0.1]", loopback, ""},
		{"not named", "127.0.0.1", []netip.Prefix{p("10.0.0.0/8")}, outbound.ReasonNotAllowed},
		{"other loopback", "127.0.0.2", loopback, outbound.ReasonNotAllowed},
		{"public not named", "1.1.1.1", loopback, outbound.ReasonNotAllowed},
		{"public not named v6", "[2606:4700:4700::1111]", loopback, outbound.ReasonNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(t.Context(), get(t, "http://"+tt.host+":"+srv.port+"/"), outbound.CallOptions{Allowlist: tt.allow})
			if tt.want != "" {
				var refused *outbound.RefusedError
				if !errors.As(err, &refused) || refused.Reason != tt.want {
					t.Fatalf("err = %v, want refused as %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusOK || string(resp.Body) != "ok" {
				t.Errorf("got %d %q, want 200 \"ok\"", resp.Status, resp.Body)
			}
			if resp.RemoteAddr != srv.Listener.Addr().String() {
				t.Errorf("RemoteAddr = %q, want %q", resp.RemoteAddr, srv.Listener.Addr())
			}
		})
	}
}

// TestConnectionsNotShared checks that a connection dialed under one call's allowlist is never
// reused by a call under another rule.
func TestConnectionsNotShared(t *testing.T) {
	srv := newServer(t, ok)
	c := outbound.New(outbound.Config{})
	steps := []struct {
		allow []netip.Prefix
		want  outbound.Reason
	}{
		{loopback, ""},
		{nil, outbound.ReasonLoopback},
		{loopback, ""},
		{[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, outbound.ReasonNotAllowed},
		{loopback, ""},
		{nil, outbound.ReasonLoopback},
	}
	for i, s := range steps {
		_, err := c.Do(t.Context(), get(t, srv.URL), outbound.CallOptions{Allowlist: s.allow})
		var refused *outbound.RefusedError
		switch {
		case s.want == "" && err != nil:
			t.Fatalf("step %d: %v", i, err)
		case s.want != "" && (!errors.As(err, &refused) || refused.Reason != s.want):
			t.Fatalf("step %d: err = %v, want refused as %q", i, err, s.want)
		}
	}
}

// TestRedirectNotFollowed checks that a redirect is the answer, even from an allowlisted first
// hop to an address the same allowlist names.
func TestRedirectNotFollowed(t *testing.T) {
	target := newServer(t, ok)
	c := outbound.New(outbound.Config{})
	tests := []struct {
		status   int
		location string
	}{
		{http.StatusFound, target.URL + "/"},
		{http.StatusMovedPermanently, "http://localhost:" + target.port + "/"},
		{http.StatusSeeOther, "http://169.254.169.254/latest/meta-data/"},
		{http.StatusTemporaryRedirect, "http://[::ffff:127.0.0.1]:" + target.port + "/"},
		{http.StatusPermanentRedirect, "/relative"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tt.location, tt.status)
			})
			req, err := http.NewRequest(http.MethodPost, first.URL, strings.NewReader(`{"a":1}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(t.Context(), req, outbound.CallOptions{Allowlist: loopback})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tt.status || resp.Header.Get("Location") != tt.location {
				t.Errorf("got %d to %q, want %d to %q", resp.Status, resp.Header.Get("Location"), tt.status, tt.location)
			}
			if n := target.hits.Load(); n != 0 {
				t.Errorf("the redirect was followed: target hit %d times", n)
			}
			if n := first.hits.Load(); n != 1 {
				t.Errorf("first hop hit %d times, want 1", n)
			}
		})
	}
}

func TestBodyBound(t *testing.T) {
	c := outbound.New(outbound.Config{})
	tests := []struct {
		name          string
		size          int
		maxBody       int64
		wantLen       int
		wantTruncated bool
	}{
		{"default bound", 100 << 10, 0, outbound.DefaultMaxBody, true},
		{"exactly the bound", outbound.DefaultMaxBody, 0, outbound.DefaultMaxBody, false},
		{"one over", outbound.DefaultMaxBody + 1, 0, outbound.DefaultMaxBody, true},
		{"small", 10, 0, 10, false},
		{"empty", 0, 0, 0, false},
		{"per-call bound", 11, 10, 10, true},
		{"per-call larger bound", 100 << 10, 1 << 20, 100 << 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tt.size)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
			resp, err := c.Do(t.Context(), get(t, srv.URL), outbound.CallOptions{Allowlist: loopback, MaxBody: tt.maxBody})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Body) != tt.wantLen || resp.Truncated != tt.wantTruncated {
				t.Errorf("got %d bytes, truncated %v; want %d, %v", len(resp.Body), resp.Truncated, tt.wantLen, tt.wantTruncated)
			}
			if !bytes.Equal(resp.Body, body[:len(resp.Body)]) {
				t.Errorf("the body kept is not the start of the body sent")
			}
		})
	}
}

// TestTimeout checks that a slow server makes the call fail as a timeout, whichever bound
// expires: the Client's, the call's, or the caller's context.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	wait := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	slowHeaders := newServer(t, func(w http.ResponseWriter, r *http.Request) { wait(r) })
	slowBody := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		wait(r)
	})
	t.Cleanup(func() { close(release) }) // before the servers' Close, which waits for handlers

	short := outbound.New(outbound.Config{Timeout: 100 * time.Millisecond})
	long := outbound.New(outbound.Config{Timeout: time.Minute})
	tests := []struct {
		name string
		c    *outbound.Client
		url  string
		opt  outbound.CallOptions
		ctx  time.Duration
	}{
		{"client timeout, headers", short, slowHeaders.URL, outbound.CallOptions{}, 0},
		{"client timeout, body", short, slowBody.URL, outbound.CallOptions{}, 0},
		{"call timeout, headers", long, slowHeaders.URL, outbound.CallOptions{Timeout: 100 * time.Millisecond}, 0},
		{"call timeout, body", long, slowBody.URL, outbound.CallOptions{Timeout: 100 * time.Millisecond}, 0},
		{"context deadline", long, slowBody.URL, outbound.CallOptions{}, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			tt.opt.Allowlist = loopback
			resp, err := tt.c.Do(ctx, get(t, tt.url), tt.opt)
			if err == nil {
				t.Fatalf("got %d, want a timeout", resp.Status)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want one that is context.DeadlineExceeded", err)
			}
			var ne net.Error
			if errors.As(err, &ne) && !ne.Timeout() {
				t.Errorf("err = %v, a net.Error that is not a timeout", err)
			}
		})
	}
}

func TestTLSVerified(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(ok))
	defer srv.Close()
	c := outbound.New(outbound.Config{})
	_, err := c.Do(t.Context(), get(t, srv.URL), outbound.CallOptions{Allowlist: loopback})
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("err = %v, want a certificate verification error", err)
	}
}

// TestNoProxyFromEnvironment checks that a proxy in the environment is not used: the call is
// judged on its own destination, and the proxy never hears of it.
func TestNoProxyFromEnvironment(t *testing.T) {
	proxy := newServer(t, ok)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	c := outbound.New(outbound.Config{})
	_, err := c.Do(t.Context(), get(t, "http://192.0.2.1/"), outbound.CallOptions{Allowlist: loopback})
	var refused *outbound.RefusedError
	if !errors.As(err, &refused) || refused.Addr != netip.MustParseAddr("192.0.2.1") {
		t.Errorf("err = %v, want 192.0.2.1 refused", err)
	}
	if n := proxy.hits.Load(); n != 0 {
		t.Errorf("the proxy was used %d times", n)
	}
}

func TestUserAgent(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.UserAgent()) })
	tests := []struct {
		name   string
		cfg    outbound.Config
		header string
		want   string
	}{
		{"default", outbound.Config{}, "", outbound.DefaultUserAgent},
		{"configured", outbound.Config{UserAgent: "Vitrine-Webhooks/1.0"}, "", "Vitrine-Webhooks/1.0"},
		{"request's own", outbound.Config{UserAgent: "Vitrine-Webhooks/1.0"}, "custom/2", "custom/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := get(t, srv.URL)
			if tt.header != "" {
				req.Header.Set("User-Agent", tt.header)
			}
			resp, err := outbound.New(tt.cfg).Do(t.Context(), req, outbound.CallOptions{Allowlist: loopback})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != tt.want {
				t.Errorf("User-Agent = %q, want %q", resp.Body, tt.want)
			}
			if got := req.Header.Get("User-Agent"); got != tt.header {
				t.Errorf("the caller's request was modified: User-Agent %q", got)
			}
		})
	}
}

// TestConcurrent runs allowed and refused calls together on one Client (run with -race).
func TestConcurrent(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Query().Get("n")) })
	c := outbound.New(outbound.Config{MaxConnsPerHost: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			u := srv.URL + "/?n=" + url.QueryEscape(fmt.Sprint(i))
			if i%2 == 0 {
				resp, err := c.Do(t.Context(), get(t, u), outbound.CallOptions{Allowlist: loopback})
				if err != nil {
					errs <- err
				} else if string(resp.Body) != fmt.Sprint(i) {
					errs <- fmt.Errorf("call %d got %q", i, resp.Body)
				}
				return
			}
			_, err := c.Do(t.Context(), get(t, u), outbound.CallOptions{})
			var refused *outbound.RefusedError
			if !errors.As(err, &refused) {
				errs <- fmt.Errorf("call %d: err = %v, want refused", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := srv.hits.Load(); n != 32 {
		t.Errorf("server answered %d requests, want 32", n)
	}
	c.CloseIdleConnections()
}
