package edge_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
)

// hitRequest is the request of the baselines scenario (bench/baselines.go): a product page, Host
// only, no Origin and no Accept-Encoding, so the edge answers a cache hit in identity.
const hitRequest = "GET /api/products/linen-shirt HTTP/1.1\r\nHost: shop.example.test\r\n\r\n"

// pipelinedClient sends batches of identical requests over one connection and reads their
// answers with as little work as possible (a header scan and Content-Length), so that the
// cost per request is mostly the server's.
type pipelinedClient struct {
	conn  net.Conn
	r     *bufio.Reader
	batch []byte
	n     int
	// head is the last answer's header (status line and headers, CRLFs included).
	head []byte
}

func newPipelinedClient(tb testing.TB, conn net.Conn, n int) *pipelinedClient {
	tb.Helper()
	return &pipelinedClient{conn: conn, r: bufio.NewReaderSize(conn, 64<<10),
		batch: bytes.Repeat([]byte(hitRequest), n), n: n}
}

// round sends one batch and reads its answers; it returns false on any error or a status other
// than 200.
func (c *pipelinedClient) round() bool {
	errc := make(chan error, 1)
	go func() { _, err := c.conn.Write(c.batch); errc <- err }()
	ok := true
	for i := 0; i < c.n; i++ {
		if !c.readOne() {
			ok = false
			break
		}
	}
	return <-errc == nil && ok
}

func (c *pipelinedClient) readOne() bool {
	c.head = c.head[:0]
	length := -1
	status := false
	for first := true; ; first = false {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return false
		}
		c.head = append(c.head, line...)
		if first {
			status = bytes.HasPrefix(line, []byte("HTTP/1.1 200 "))
			continue
		}
		if len(line) <= 2 {
			break
		}
		if len(line) > 16 && (line[0] == 'C' || line[0] == 'c') && bytes.EqualFold(line[:15], []byte("Content-Length:")) {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(line[15:])))
		}
	}
	if length < 0 || !status {
		return false
	}
	_, err := c.r.Discard(length)
	return err == nil
}

// serveLoopback runs hs on a loopback TCP listener and returns a pipelined client of it. TCP,
// not fasthttputil's in-memory listener: the server sets its connection's deadlines for every
// request, and the in-memory connection's timers cost several times the netpoller's.
func serveLoopback(tb testing.TB, hs *fasthttp.Server, wrap func(net.Listener) net.Listener, batch int) *pipelinedClient {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go hs.Serve(wrap(ln))
	tb.Cleanup(func() { hs.Shutdown() })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return newPipelinedClient(tb, conn, batch)
}

// hitServer returns a client of an edge serving hitRequest from its cache, through the edge's
// own fasthttp server settings (Server.HTTPServer), warmed until the answer is a hit. The rate
// limit is off, as in the baselines scenario (`-rate-limit -1`); the listener is wrapped as Run
// wraps it (edge.Listener).
func hitServer(tb testing.TB, batch int) (*pipelinedClient, []byte) {
	f := newFixture(tb, edge.Config{})
	c := serveLoopback(tb, f.srv.HTTPServer(), edge.Listener, 1)
	for i := 0; ; i++ {
		if !c.round() {
			tb.Fatalf("warm-up: %s", c.head)
		}
		if bytes.Contains(c.head, []byte("Cache-Status: vitrine-edge; hit")) {
			break
		}
		if i > 1000 {
			tb.Fatalf("the page never became a hit: %s", c.head)
		}
	}
	body := f.do(req{uri: "/api/products/linen-shirt"}).Body()
	c.batch, c.n = bytes.Repeat([]byte(hitRequest), batch), batch
	return c, body
}

// fixedServer returns a client of bare fasthttp serving body as a fixed page, configured as the
// baselines scenario's fixed server (bench.ServeFixed).
func fixedServer(tb testing.TB, body []byte, batch int) *pipelinedClient {
	return serveLoopback(tb, &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		c.SetContentType("application/json; charset=utf-8")
		c.SetBody(body)
	}}, func(ln net.Listener) net.Listener { return ln }, batch)
}

// BenchmarkHitServer serves the baselines scenario's cache hit through the edge's real fasthttp
// server and, in the same run, bare fasthttp serving the same body as a fixed page, both over
// loopback TCP with pipelined requests (batches of 32: few system calls, a minimal client). Compare the
// two: ns/op of edge minus fixed is the edge's cost per hit over bare fasthttp's, to set against
// the baselines' CPU per request (a fixed page: 8.1 µs on the 2026-11-26 re-run).
func BenchmarkHitServer(b *testing.B) {
	const batch = 32
	edgeClient, body := hitServer(b, batch)
	for _, bc := range []struct {
		name string
		c    *pipelinedClient
	}{
		{"fixed", fixedServer(b, body, batch)},
		{"edge", edgeClient},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				if !bc.c.round() {
					b.Fatalf("answer: %s", bc.c.head)
				}
			}
			b.ReportMetric(float64(len(bc.c.head)), "header-bytes")
		})
	}
}

// The hit the benchmark measures is the baselines' hit, with its headers.
func TestHitServerAnswer(t *testing.T) {
	c, body := hitServer(t, 2)
	if !c.round() {
		t.Fatalf("answer: %s", c.head)
	}
	if len(body) < 100 {
		t.Fatalf("body %q", body)
	}
	t.Logf("%d header bytes:\n%s", len(c.head), c.head)
}

// A cached answer's headers written as one block (cache.Entry.Lines, pipeline.SetLines) are the
// headers the one-by-one path writes, values and repeats included, for every kind of entry:
// commerce and CMS, collection headers, the embed page whose own X-Robots-Tag the CMS's
// replaces, CORS with its Vary: Origin, encodings, 304s, rate limits.
func TestHitLinesMatchOneByOne(t *testing.T) {
	f := newFixture(t, edge.Config{RateLimit: 1 << 20})
	origin := map[string]string{"Origin": "https://storefront.example"}
	for _, r := range []req{
		{uri: "/api/products/linen-shirt"},
		{uri: "/api/products/linen-shirt", headers: map[string]string{"Accept-Encoding": "br, gzip"}},
		{uri: "/api/products/linen-shirt", headers: origin},
		{uri: "/api/products?per_page=2"},
		{uri: "/api/categories"},
		{uri: "/index.php?rest_route=/cms/v2/posts&per_page=2"},
		{uri: "/index.php?rest_route=/cms/v2/posts&per_page=2", headers: origin},
		{uri: "/index.php?rest_route=/cms/v2/posts&per_page=2&_fields=id,link"},
		{uri: "/index.php?rest_route=/cms/v2/posts&per_page=2&_envelope"},
		{uri: "/index.php?rest_route=/cms/v2/posts/101"},
		{uri: "/index.php?rest_route=/"},
		{uri: "/?p=101&embed=true"},
		{method: "HEAD", uri: "/api/products/linen-shirt"},
	} {
		name := r.method + " " + r.uri + fmt.Sprint(r.headers)
		// The cache stores asynchronously and may drop a store: ask until the answer is a hit.
		hit := func(r req, oneByOne bool) *fasthttp.Response {
			edge.SetOneByOne(f.srv, oneByOne)
			defer edge.SetOneByOne(f.srv, false)
			for range 50 {
				resp := f.do(r)
				if string(resp.Header.Peek("Cache-Status")) == "vitrine-edge; hit" {
					return resp
				}
				edge.CacheWait(f.srv)
			}
			t.Fatalf("%s: never a hit", name)
			return nil
		}
		want, got := hit(r, true), hit(r, false)
		if g, w := headerLines(got), headerLines(want); g != w {
			t.Errorf("%s: block\n%s\none by one\n%s", name, g, w)
		}
		if etag := want.Header.Peek("ETag"); len(etag) > 0 {
			r.headers = map[string]string{"If-None-Match": string(etag)}
			want, got = hit(r, true), hit(r, false)
			if g, w := headerLines(got), headerLines(want); got.StatusCode() != 304 || g != w {
				t.Errorf("%s, 304: %d block\n%s\none by one\n%s", name, got.StatusCode(), g, w)
			}
		}
	}
}

// headerLines returns a response's header lines, sorted, without Date and with the request id
// and rate-limit values blanked (they change from request to request).
func headerLines(resp *fasthttp.Response) string {
	var lines []string
	for k, v := range resp.Header.All() {
		switch strings.ToLower(string(k)) {
		case "date":
			continue
		case "x-request-id", "ratelimit-remaining", "ratelimit-reset":
			v = []byte("…")
		}
		lines = append(lines, string(k)+": "+string(v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
