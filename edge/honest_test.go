package edge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"vitrine/edge"
	"vitrine/edge/pipeline"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// The edge's honest answers under faults (decision 22) and its own answers to unknown routes
// (decision 18).

// forgetUpstream clears what the fixture's origin saw.
func (f *fixture) forgetUpstream() {
	f.up.mu.Lock()
	f.up.last = nil
	f.up.mu.Unlock()
}

func TestOnlyVitrineCredentialsForward(t *testing.T) {
	f := newFixture(t, edge.Config{})
	for _, tt := range []struct {
		name    string
		headers map[string]string
		forward bool
	}{
		{"anonymous", nil, false},
		{"analytics cookies", map[string]string{"Cookie": "_ga=GA1.2.3.4; _gid=GA1.2.5; consent=yes"}, false},
		{"a cookie named like the session, but not it", map[string]string{"Cookie": "xvitrine_admin_session=1; vitrine_admin_session_old=2"}, false},
		{"a value naming the session", map[string]string{"Cookie": "note=vitrine_admin_session"}, false},
		{"the admin session among others", map[string]string{"Cookie": "_ga=1;  vitrine_admin_session=abc; z=2"}, true},
		{"the admin session alone", map[string]string{"Cookie": "vitrine_admin_session=abc"}, true},
		{"application password", map[string]string{"Authorization": "Basic eDp5"}, true},
		{"customer token or server key", map[string]string{"Authorization": "Bearer esk_abc"}, true},
	} {
		for _, uri := range []string{"/api/products/linen-shirt", "/index.php?rest_route=/cms/v2/posts"} {
			t.Run(tt.name+" "+uri, func(t *testing.T) {
				f.forgetUpstream()
				resp := f.do(req{uri: uri, headers: tt.headers})
				forwarded := f.up.lastRequest() != nil
				if forwarded != tt.forward {
					t.Fatalf("forwarded %v, want %v (%d %s)", forwarded, tt.forward, resp.StatusCode(), resp.Header.String())
				}
				cs := string(resp.Header.Peek("Cache-Status"))
				if tt.forward {
					if cs != "vitrine-edge; fwd=request" || string(resp.Header.Peek("Cache-Control")) != "private, no-store" {
						t.Fatalf("forwarded credentialed read: Cache-Status %q, Cache-Control %q", cs, resp.Header.Peek("Cache-Control"))
					}
					return
				}
				if resp.StatusCode() != 200 || !strings.HasPrefix(cs, "vitrine-edge; ") || len(resp.Header.Peek(edge.HeaderStaleness)) == 0 {
					t.Fatalf("replica answer: %d %s", resp.StatusCode(), resp.Header.String())
				}
			})
		}
	}
	// The credentialed answer was never stored: the next anonymous request is the replica's.
	f.forgetUpstream()
	if resp := f.do(req{uri: "/api/products/linen-shirt"}); f.up.lastRequest() != nil || string(resp.Body()) == `{"upstream":true}` {
		t.Fatalf("anonymous read after credentialed ones: %s", resp.Body())
	}
}

func TestHasCookie(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"vitrine_admin_session=1", true},
		{"vitrine_admin_session", true},
		{"a=1;vitrine_admin_session=2", true},
		{"a=1; \tvitrine_admin_session =2", true},
		{"vitrine_admin_sessions=1", false},
		{"avitrine_admin_session=1", false},
		{"a=vitrine_admin_session", false},
		{";;;", false},
	} {
		if got := pipeline.HasCookie([]byte(tt.header), pipeline.AdminSessionCookie); got != tt.want {
			t.Errorf("HasCookie(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func FuzzHasCookie(f *testing.F) {
	for _, s := range []string{"", "a=b", "vitrine_admin_session=x; y=z", ";=;", " \t;vitrine_admin_session"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := pipeline.HasCookie([]byte(header), pipeline.AdminSessionCookie)
		want := false
		for _, pair := range strings.Split(header, ";") {
			name, _, _ := strings.Cut(pair, "=")
			if strings.Trim(name, " \t") == pipeline.AdminSessionCookie {
				want = true
			}
		}
		if got != want {
			t.Fatalf("HasCookie(%q) = %v, want %v", header, got, want)
		}
	})
}

func TestCacheStatus(t *testing.T) {
	f := newFixture(t, edge.Config{})
	for _, tt := range []struct {
		method, uri string
		want        []string // successive answers
	}{
		{"GET", "/api/products/kettle", []string{"vitrine-edge; fwd=miss; stored", "vitrine-edge; hit"}},
		{"GET", "/api/products/no-such-product", []string{"vitrine-edge; fwd=miss"}},
		{"GET", "/api/cart", []string{"vitrine-edge; fwd=bypass"}},
		{"POST", "/api/cart/items", []string{"vitrine-edge; fwd=method"}},
	} {
		for i, want := range tt.want {
			var resp *fasthttp.Response
			// The cache stores asynchronously: the hit may take a moment.
			deadline := time.Now().Add(2 * time.Second)
			for {
				resp = f.do(req{method: tt.method, uri: tt.uri})
				if got := string(resp.Header.Peek("Cache-Status")); got == want || i == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if got := string(resp.Header.Peek("Cache-Status")); got != want {
				t.Errorf("%s %s answer %d: Cache-Status %q, want %q", tt.method, tt.uri, i+1, got, want)
			}
		}
	}
}

// randomPath is a path that no route of either interface matches: random segments under the
// commerce prefix, at the top level, or as a CMS rest_route.
func randomPath(r *rand.Rand) string {
	seg := func() string {
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.%~"
		b := make([]byte, 3+r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return "zz" + strings.ReplaceAll(string(b), "%", "%25")
	}
	var p string
	for n := 1 + r.IntN(4); n > 0; n-- {
		p += "/" + seg()
	}
	switch r.IntN(4) {
	case 0:
		return "/api" + p
	case 1:
		return "/index.php?rest_route=" + p
	case 2:
		return "/?rest_route=/cms/v2" + p
	}
	return p
}

func TestUnknownRoutesAnsweredAtTheEdge(t *testing.T) {
	f := newFixture(t, edge.Config{})
	r := rand.New(rand.NewPCG(15, 18))
	const n = 1000
	for i := 0; i < n; i++ {
		uri := randomPath(r)
		resp := f.do(req{uri: uri})
		if resp.StatusCode() != 404 {
			t.Fatalf("GET %s: %d %s", uri, resp.StatusCode(), resp.Body())
		}
	}
	if got := f.metric("vitrine_edge_forwarded_total"); got != 0 || f.up.lastRequest() != nil {
		t.Fatalf("%v of %d random-path GETs forwarded to the origin", got, n)
	}
	t.Logf("%d random-path GETs: 0 forwarded", n)

	for _, tt := range []struct {
		name, method, uri string
		headers           map[string]string
		status            int
		body, allow       string
		forward           bool
	}{
		{name: "unknown commerce path", uri: "/api/nope", status: 404, body: `{"error":"Not found","code":"not_found","request_id":"r1"}`},
		{name: "unknown path with credentials", uri: "/api/nope", headers: map[string]string{"Authorization": "Basic eDp5"}, status: 404,
			body: `{"error":"Not found","code":"not_found","request_id":"r1"}`},
		{name: "unknown CMS route", uri: "/index.php?rest_route=/cms/v2/nope", status: 404,
			body: `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`},
		{name: "CMS route, method without a route", method: "PUT", uri: "/index.php?rest_route=/cms/v2/search", status: 404,
			body: `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`},
		{name: "commerce path, method without a route", method: "PATCH", uri: "/api/products", status: 405, allow: "GET",
			body: `{"error":"Method not allowed","code":"not_allowed","request_id":"r1"}`},
		{name: "commerce path, unknown method", method: "PROPFIND", uri: "/api/currencies", status: 405, allow: "GET",
			body: `{"error":"Method not allowed","code":"not_allowed","request_id":"r1"}`},
		{name: "an origin route", uri: "/api/cart", status: 201, forward: true},
		{name: "an origin write", method: "POST", uri: "/api/cart/items", status: 201, forward: true},
		{name: "a CMS write", method: "POST", uri: "/index.php?rest_route=/cms/v2/posts", status: 201, forward: true},
		{name: "a CMS method override the origin applies", method: "POST", uri: "/index.php?rest_route=/cms/v2/posts/100&_method=DELETE", status: 201, forward: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.forgetUpstream()
			h := map[string]string{"X-Request-Id": "r1"}
			for k, v := range tt.headers {
				h[k] = v
			}
			resp := f.do(req{method: tt.method, uri: tt.uri, headers: h})
			if forwarded := f.up.lastRequest() != nil; forwarded != tt.forward {
				t.Fatalf("forwarded %v, want %v", forwarded, tt.forward)
			}
			if resp.StatusCode() != tt.status || (tt.body != "" && string(resp.Body()) != tt.body) || string(resp.Header.Peek("Allow")) != tt.allow {
				t.Fatalf("%d %s (Allow %q), want %d %s (Allow %q)", resp.StatusCode(), resp.Body(), resp.Header.Peek("Allow"), tt.status, tt.body, tt.allow)
			}
		})
	}
}

// newUnseeded starts an edge over a replica that has received nothing from its feed.
func newUnseeded(t *testing.T) (*fixture, func(r req) *fasthttp.Response) {
	rep := replica.New(replica.Config{PlatformDomain: "vitrine.test"})
	f := &fixture{t: t, rep: rep, feed: &feeder{rep: rep, versions: map[string]int64{}}, metrics: metrics.NewSet(), up: startUpstream(t)}
	srv, err := edge.New(edge.Config{Origin: "http://" + f.up.addr, RateLimit: -1, Metrics: f.metrics}, rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	f.srv = srv
	ln := fasthttputil.NewInmemoryListener()
	hs := srv.HTTPServer()
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Shutdown() })
	f.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	return f, f.do
}

func TestNotReadyBeforeTheRegistry(t *testing.T) {
	f, do := newUnseeded(t)
	cases := []struct {
		r    req
		code string
	}{
		{req{uri: "/api/products"}, "not_ready"},
		{req{uri: "/api/products", host: "demo.vitrine.test"}, "not_ready"},
		{req{uri: "/api/products", host: "unknown.example", headers: map[string]string{"X-Tenant-Slug": "demo"}}, "not_ready"},
		{req{uri: "/index.php?rest_route=/cms/v2/posts"}, "rest_replica_not_ready"},
		{req{method: "POST", uri: "/api/cart/items"}, "not_ready"},
	}
	for _, tt := range cases {
		resp := do(tt.r)
		if resp.StatusCode() != 503 || len(resp.Header.Peek("Retry-After")) == 0 || decodeJSON(t, resp.Body())["code"] != tt.code {
			t.Fatalf("%s %s before the registry: %d %s", tt.r.host, tt.r.uri, resp.StatusCode(), resp.Body())
		}
	}
	if ready := do(req{uri: "/readyz"}); ready.StatusCode() != 503 || decodeJSON(t, ready.Body())["status"] != "bootstrapping" {
		t.Fatalf("/readyz %d %s", ready.StatusCode(), ready.Body())
	}
	if f.up.lastRequest() != nil {
		t.Fatal("a request reached the origin before the edge knew its tenants")
	}
	// The feed delivers the registry and the stores: served; an unknown host is now a 404.
	seed(f.feed)
	for _, tt := range cases[:4] {
		if resp := do(tt.r); resp.StatusCode() != 200 {
			t.Fatalf("%s %s after the bootstrap: %d %s", tt.r.host, tt.r.uri, resp.StatusCode(), resp.Body())
		}
	}
	if resp := do(req{uri: "/api/products", host: "unknown.example"}); resp.StatusCode() != 404 {
		t.Fatalf("unknown host after the bootstrap: %d %s", resp.StatusCode(), resp.Body())
	}
}

// frozenOrigin accepts connections and reads requests, and never answers: an origin stopped
// (SIGSTOP) or wedged after the edge sent its request. It counts the requests it received.
func frozenOrigin(t *testing.T) (addr string, received func() int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 1024)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 && strings.Contains(string(buf[:n]), "HTTP/1.1") {
						got <- struct{}{}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), func() int { return len(got) }
}

func TestSentAndUnansweredIsAnUnknownOutcome(t *testing.T) {
	addr, received := frozenOrigin(t)
	f := newFixture(t, edge.Config{Origin: "http://" + addr, ForwardTimeout: 300 * time.Millisecond})
	for i, tt := range []struct {
		method, uri string
		status      int
		code        string
		retry       bool
	}{
		{"POST", "/api/cart/items", 504, "outcome_unknown", false},
		{"DELETE", "/api/cart/items/LS-M", 504, "outcome_unknown", false},
		{"POST", "/index.php?rest_route=/cms/v2/posts", 504, "rest_outcome_unknown", false},
		{"GET", "/api/cart", 504, "unavailable", true},
		{"GET", "/index.php?rest_route=/cms/v2/posts&context=edit", 504, "rest_origin_timeout", true},
	} {
		start := time.Now()
		resp := f.do(req{method: tt.method, uri: tt.uri, body: `{"sku":"LS-M","quantity":1}`,
			headers: map[string]string{"Content-Type": "application/json", "Authorization": "Basic eDp5"}})
		took := time.Since(start)
		if resp.StatusCode() != tt.status || decodeJSON(t, resp.Body())["code"] != tt.code ||
			(len(resp.Header.Peek("Retry-After")) > 0) != tt.retry {
			t.Errorf("%s %s: %d Retry-After %q %s", tt.method, tt.uri, resp.StatusCode(), resp.Header.Peek("Retry-After"), resp.Body())
		}
		if took > 2*time.Second {
			t.Errorf("%s %s answered after %s", tt.method, tt.uri, took)
		}
		if received() != i+1 {
			t.Fatalf("the frozen origin received %d requests after %d: each is sent once, never retried", received(), i+1)
		}
	}
	if got := f.metric("vitrine_edge_forward_outcome_unknown_total"); got != 3 {
		t.Errorf("outcome-unknown counter %v, want 3", got)
	}
	// A frozen origin is reachable: its timeouts never open the breaker.
	if got := f.metric("vitrine_edge_breaker_opens_total"); got != 0 {
		t.Errorf("breaker opened %v times on timeouts", got)
	}
}

// blackholedListener returns a listening socket whose accept queue (backlog 0) is filled by one
// connection nobody accepts: the kernel drops further connection attempts, as a blackholed
// address does, until serve starts accepting.
func blackholedListener(t *testing.T) (addr string, serve func(h fasthttp.RequestHandler)) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	file := os.NewFile(uintptr(fd), "blackhole")
	ln, err := net.FileListener(file)
	file.Close()
	if err != nil {
		t.Fatal(err)
	}
	addr = "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	filler, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Check that the queue is full: a further dial times out.
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel accepts connections past a full accept queue: no blackhole here")
	}
	srv := &fasthttp.Server{}
	t.Cleanup(func() { filler.Close(); srv.Shutdown(); ln.Close() })
	return addr, func(h fasthttp.RequestHandler) {
		srv.Handler = h
		go srv.Serve(ln)
		filler.Close()
	}
}

func TestBreakerFailsFastAndRecovers(t *testing.T) {
	addr, serve := blackholedListener(t)
	f := newFixture(t, edge.Config{Origin: "http://" + addr, DialTimeout: 100 * time.Millisecond,
		BreakerFailures: 3, BreakerCooldown: 500 * time.Millisecond})
	post := func() (*fasthttp.Response, time.Duration) {
		start := time.Now()
		resp := f.do(req{method: "POST", uri: "/api/cart/items", body: `{}`, headers: map[string]string{"Content-Type": "application/json"}})
		return resp, time.Since(start)
	}
	check := func(resp *fasthttp.Response, what string) {
		t.Helper()
		if resp.StatusCode() != 503 || len(resp.Header.Peek("Retry-After")) == 0 || decodeJSON(t, resp.Body())["code"] != "unavailable" {
			t.Fatalf("%s: %d %s %s", what, resp.StatusCode(), resp.Header.String(), resp.Body())
		}
	}
	// Each of the first requests pays the dial timeout (once: a dial that timed out is not
	// tried again), then the breaker opens.
	var dialling, open time.Duration
	for i := 0; i < 3; i++ {
		resp, took := post()
		check(resp, fmt.Sprintf("request %d to the blackholed origin", i+1))
		if took < 90*time.Millisecond {
			t.Fatalf("request %d answered in %s: it did not dial", i+1, took)
		}
		if took > 190*time.Millisecond {
			t.Fatalf("request %d answered in %s: a timed-out dial was tried again", i+1, took)
		}
		dialling = max(dialling, took)
	}
	if got := f.metric("vitrine_edge_breaker_opens_total"); got != 1 {
		t.Fatalf("breaker opened %v times", got)
	}
	for i := 0; i < 20; i++ {
		resp, took := post()
		check(resp, "with the breaker open")
		if took > 50*time.Millisecond {
			t.Fatalf("with the breaker open a request took %s", took)
		}
		open = max(open, took)
	}
	t.Logf("blackholed origin: %s per request before the breaker opened, at most %s after", dialling, open)
	if got := f.metric("vitrine_edge_breaker_rejected_total"); got != 20 {
		t.Fatalf("%v requests rejected by the open breaker, want 20", got)
	}
	// Reads keep answering from the replica meanwhile.
	if resp := f.do(req{uri: "/api/products/linen-shirt"}); resp.StatusCode() != 200 {
		t.Fatalf("read with the breaker open: %d", resp.StatusCode())
	}
	// The origin comes back; after the cooldown a probe goes through and closes the breaker.
	serve(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(201); ctx.SetBodyString(`{"ok":true}`) })
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, _ := post()
		if resp.StatusCode() == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the breaker never closed: %d %s", resp.StatusCode(), resp.Body())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		if resp, _ := post(); resp.StatusCode() != 201 {
			t.Fatalf("after recovery: %d %s", resp.StatusCode(), resp.Body())
		}
	}
	if got := f.metric("vitrine_edge_breaker_state"); got != 0 {
		t.Fatalf("breaker state %v after recovery, want 0 (closed)", got)
	}
}

// TestOriginHealthCheck: a running edge learns that its origin is unreachable from its own
// probes, before any write pays a dial timeout, refuses forwarded requests at once meanwhile
// (503 with Retry-After, never sent), says so in /readyz, and forwards again once a probe is
// answered.
func TestOriginHealthCheck(t *testing.T) {
	addr, serve := blackholedListener(t)
	f := newFixture(t, edge.Config{Origin: "http://" + addr, DialTimeout: 100 * time.Millisecond,
		OriginCheckInterval: 50 * time.Millisecond, OriginCheckTimeout: 100 * time.Millisecond, OriginCheckFailures: 2})
	f.rep.Heard("", time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.srv.WatchOrigin(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
		}
	}
	waitFor("the check marks the origin unreachable", func() bool { return f.metric("vitrine_edge_origin_reachable") == 0 })
	ready := decodeJSON(t, f.do(req{uri: "/readyz"}).Body())
	if ready["status"] != "degraded" || ready["origin_reachable"] != false {
		t.Fatalf("/readyz with the origin unreachable: %v", ready)
	}
	for _, tt := range []struct{ method, uri string }{
		{"POST", "/api/cart/items"},
		{"PATCH", "/api/admin/products/linen-shirt"},
		{"POST", "/index.php?rest_route=/cms/v2/posts"},
	} {
		start := time.Now()
		resp := f.do(req{method: tt.method, uri: tt.uri, body: `{}`, headers: map[string]string{"Content-Type": "application/json"}})
		took := time.Since(start)
		if resp.StatusCode() != 503 || string(resp.Header.Peek("Retry-After")) != "1" {
			t.Errorf("%s %s with the origin unreachable: %d Retry-After %q %s", tt.method, tt.uri, resp.StatusCode(), resp.Header.Peek("Retry-After"), resp.Body())
		}
		if took > 50*time.Millisecond {
			t.Errorf("%s %s with the origin unreachable took %s: it did not fail fast", tt.method, tt.uri, took)
		}
	}
	if got := f.metric("vitrine_edge_origin_unreachable_rejected_total"); got != 3 {
		t.Errorf("%v requests refused while unreachable, want 3", got)
	}
	if got := f.metric("vitrine_edge_origin_unreachable_total"); got != 1 {
		t.Errorf("origin marked unreachable %v times, want 1", got)
	}
	// Reads are answered from the replica meanwhile.
	if resp := f.do(req{uri: "/api/products/linen-shirt"}); resp.StatusCode() != 200 {
		t.Fatalf("read with the origin unreachable: %d", resp.StatusCode())
	}

	// The origin answers again: within a probe or two, requests are forwarded.
	var probes, posts atomic.Int64
	serve(func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/healthz" {
			probes.Add(1)
			ctx.SetBodyString(`{"status":"ok"}`)
			return
		}
		posts.Add(1)
		ctx.SetStatusCode(201)
		ctx.SetBodyString(`{"ok":true}`)
	})
	waitFor("the check marks the origin reachable", func() bool { return f.metric("vitrine_edge_origin_reachable") == 1 })
	if resp := f.do(req{method: "POST", uri: "/api/cart/items", body: `{}`, headers: map[string]string{"Content-Type": "application/json"}}); resp.StatusCode() != 201 {
		t.Fatalf("after the origin returned: %d %s", resp.StatusCode(), resp.Body())
	}
	if posts.Load() != 1 || probes.Load() == 0 {
		t.Fatalf("the origin saw %d requests and %d probes: want the one request sent after it returned, and probes", posts.Load(), probes.Load())
	}
	ready = decodeJSON(t, f.do(req{uri: "/readyz"}).Body())
	if ready["status"] != "ok" || ready["origin_reachable"] != true {
		t.Fatalf("/readyz after the origin returned: %v", ready)
	}
}

func TestReadinessDetail(t *testing.T) {
	f := newFixture(t, edge.Config{StaleAfter: 50 * time.Millisecond})
	f.rep.Heard("", time.Now())
	resp := f.do(req{uri: "/readyz"})
	body := decodeJSON(t, resp.Body())
	if resp.StatusCode() != 200 || body["status"] != "ok" {
		t.Fatalf("/readyz just after hearing from the stream: %d %s", resp.StatusCode(), resp.Body())
	}
	if shards, _ := body["shards"].([]any); len(shards) != 2 { // the registry and shard 0
		t.Fatalf("/readyz shards: %s", resp.Body())
	}
	// Nothing heard for longer than StaleAfter: degraded, still ready, reads still served and
	// saying how stale they are.
	time.Sleep(1100 * time.Millisecond)
	resp = f.do(req{uri: "/readyz"})
	if body := decodeJSON(t, resp.Body()); resp.StatusCode() != 200 || body["status"] != "degraded" {
		t.Fatalf("/readyz after a silence: %d %s", resp.StatusCode(), resp.Body())
	}
	read := f.do(req{uri: "/api/products/linen-shirt"})
	if st, _ := strconv.Atoi(string(read.Header.Peek(edge.HeaderStaleness))); read.StatusCode() != 200 || st < 1 {
		t.Fatalf("read after a silence: %d, %s %q", read.StatusCode(), edge.HeaderStaleness, read.Header.Peek(edge.HeaderStaleness))
	}
	// A message of shard 0 freshens shard 0 only; the registry stays stale.
	f.rep.Heard("0", time.Now())
	if got := f.rep.Staleness(0, time.Now()); got > 100*time.Millisecond {
		t.Fatalf("shard 0 staleness %s after a message", got)
	}
	for _, st := range f.rep.StalenessByShard(time.Now()) {
		if st.Shard == schema.PlatformLog && st.Staleness < time.Second {
			t.Fatalf("registry staleness %s: a shard's message freshened it", st.Staleness)
		}
	}
}
