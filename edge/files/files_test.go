package files_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"vitrine/edge/files"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// countingStore is the real blob.FS, counting the reads that reach it (to tell cache hits from
// store reads).
type countingStore struct {
	blob.Store
	opens, stats atomic.Int64
}

func (c *countingStore) Open(ctx context.Context, name string, offset int64) (blob.Object, error) {
	c.opens.Add(1)
	return c.Store.Open(ctx, name, offset)
}

func (c *countingStore) Stat(ctx context.Context, name string) (blob.Info, error) {
	c.stats.Add(1)
	return c.Store.Stat(ctx, name)
}

// fixture is a files.Server over a blob.FS in a temporary directory, answering over fasthttp's
// in-memory listener for the files it was given: the replica's lookup, path to file.
type fixture struct {
	t       testing.TB
	fs      *blob.FS
	store   *countingStore
	srv     *files.Server
	metrics *metrics.Set
	files   map[string]schema.MediaFile // by request path
	bodies  map[string][]byte           // by request path
	client  *fasthttp.Client
	addr    string // loopback address of the same server
}

const tenantID = "11111111-1111-1111-1111-111111111111"

// content returns n deterministic bytes.
func content(n int, seed uint64) []byte {
	var key [32]byte
	key[0] = byte(seed)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

func newFixture(t testing.TB, cfg files.Config) *fixture {
	t.Helper()
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, fs: fs, store: &countingStore{Store: fs}, metrics: metrics.NewSet(),
		files: map[string]schema.MediaFile{}, bodies: map[string][]byte{}}
	cfg.Metrics = f.metrics
	if f.srv, err = files.New(cfg, f.store); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	handler := func(ctx *fasthttp.RequestCtx) {
		mf, ok := f.files[string(ctx.Path())]
		if !ok {
			ctx.SetStatusCode(404)
			return
		}
		f.srv.Serve(ctx, mf)
	}
	ln := fasthttputil.NewInmemoryListener()
	hs := &fasthttp.Server{Handler: handler, NoDefaultContentType: true, NoDefaultServerHeader: true}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Shutdown() })
	f.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }, MaxResponseBodySize: 64 << 20}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &fasthttp.Server{Handler: handler, NoDefaultContentType: true}
	go ts.Serve(tcp)
	t.Cleanup(func() { ts.Shutdown() })
	f.addr = tcp.Addr().String()
	return f
}

// put stores body as the file at uploads path file, and registers it with the replica's facts.
func (f *fixture) put(file, contentType string, body []byte) schema.MediaFile {
	f.t.Helper()
	name := schema.MediaBlobName(tenantID, file)
	info, err := f.fs.Put(context.Background(), name, contentType, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	mf := schema.MediaFile{BlobName: name, ContentType: contentType, Size: info.Size, SHA256: info.SHA256, Modified: info.Modified}
	f.files[schema.UploadsPath+file] = mf
	f.bodies[schema.UploadsPath+file] = body
	return mf
}

// register lists a file with the replica without storing it.
func (f *fixture) register(file string, mf schema.MediaFile) { f.files[schema.UploadsPath+file] = mf }

func (f *fixture) do(method, path string, headers map[string]string) *fasthttp.Response {
	f.t.Helper()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://media.test" + path)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp := new(fasthttp.Response)
	if err := f.client.DoTimeout(req, resp, 10*time.Second); err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// rawHead sends a request over a TCP connection and returns the answer's status line and
// headers as sent (a client would show default values for some).
func (f *fixture) rawHead(method, path string, headers map[string]string) string {
	f.t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: media.test\r\nConnection: close\r\n", method, path)
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		f.t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			f.t.Fatalf("reading the answer's headers: %v", err)
		}
		head.WriteString(line)
		if line == "\r\n" {
			return head.String()
		}
	}
}

// metric returns the value of one of the fixture's metrics.
func (f *fixture) metric(name string) float64 {
	var b bytes.Buffer
	f.metrics.WritePrometheus(&b)
	for _, line := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

const (
	small = "2026/11/photo-9f86d081884c-300x200.jpg"
	large = "2026/11/video-2c26b46b68ff.mp4"
	svg   = "2026/11/logo-fcde2b2edba5.svg"
	empty = "2026/11/empty-e3b0c44298fc.txt"
)

func standardFixture(t testing.TB) *fixture {
	f := newFixture(t, files.Config{})
	f.put(small, "image/jpeg", content(20<<10, 1))
	f.put(large, "video/mp4", content(3<<19, 2)) // over MaxCachedBytes: streamed
	f.put(svg, "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	f.put(empty, "text/plain", nil)
	return f
}

func TestServe(t *testing.T) {
	f := standardFixture(t)
	const missing = "2026/11/missing-aaaaaaaaaaaa.png"
	f.register(missing, schema.MediaFile{BlobName: schema.MediaBlobName(tenantID, missing), ContentType: "image/png", Size: 10,
		SHA256: strings.Repeat("a", 64), Modified: time.Now()})
	lying := f.put("2026/11/lying.jpg", "image/jpeg", content(100, 9))
	lying.SHA256 = strings.Repeat("b", 64) // the replica and the store disagree
	f.register("2026/11/lying.jpg", lying)
	shortened := f.files[schema.UploadsPath+large]
	shortened.Size--
	f.register("2026/11/shortened.mp4", shortened)

	type want struct {
		status  int
		body    [2]int64 // the part of the file's bytes: start, length; {-1} no body
		headers map[string]string
		absent  []string
	}
	etag := func(file string) string { return `"` + f.files[schema.UploadsPath+file].SHA256 + `"` }
	lastMod := func(file string) string {
		return string(fasthttp.AppendHTTPDate(nil, f.files[schema.UploadsPath+file].Modified))
	}
	size := func(file string) int64 { return f.files[schema.UploadsPath+file].Size }
	noBody := [2]int64{-1, 0}
	for _, file := range []string{small, large} {
		n := size(file)
		whole := [2]int64{0, n}
		for _, tt := range []struct {
			name    string
			method  string
			headers map[string]string
			want    want
		}{
			{"GET", "GET", nil, want{200, whole, map[string]string{
				"Content-Type": f.files[schema.UploadsPath+file].ContentType, "Content-Length": fmt.Sprint(n), "ETag": etag(file),
				"Last-Modified": lastMod(file), "Cache-Control": "public, max-age=31536000, immutable", "Accept-Ranges": "bytes",
				"X-Content-Type-Options": "nosniff"}, []string{"Content-Disposition", "Content-Security-Policy", "Content-Range"}}},
			{"HEAD", "HEAD", nil, want{200, noBody, map[string]string{"Content-Length": fmt.Sprint(n), "ETag": etag(file), "Accept-Ranges": "bytes"}, nil}},
			{"first 100 bytes", "GET", map[string]string{"Range": "bytes=0-99"}, want{206, [2]int64{0, 100},
				map[string]string{"Content-Range": fmt.Sprintf("bytes 0-99/%d", n), "Content-Length": "100", "ETag": etag(file)}, nil}},
			{"one byte", "GET", map[string]string{"Range": "bytes=7-7"}, want{206, [2]int64{7, 1},
				map[string]string{"Content-Range": fmt.Sprintf("bytes 7-7/%d", n)}, nil}},
			{"from an offset to the end", "GET", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n-1000)}, want{206, [2]int64{n - 1000, 1000},
				map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", n-1000, n-1, n)}, nil}},
			{"suffix", "GET", map[string]string{"Range": "bytes=-500"}, want{206, [2]int64{n - 500, 500},
				map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", n-500, n-1, n)}, nil}},
			{"last past the end", "GET", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", n-10, n+1000)}, want{206, [2]int64{n - 10, 10}, nil, nil}},
			{"unsatisfiable", "GET", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n)}, want{416, noBody,
				map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", n), "Cache-Control": "no-store"}, nil}},
			{"several ranges: the whole file", "GET", map[string]string{"Range": "bytes=0-9,20-29"}, want{200, whole, nil, []string{"Content-Range"}}},
			{"malformed range ignored", "GET", map[string]string{"Range": "bytes=9-1"}, want{200, whole, nil, nil}},
			{"other unit ignored", "GET", map[string]string{"Range": "pages=1-2"}, want{200, whole, nil, nil}},
			{"range on HEAD ignored", "HEAD", map[string]string{"Range": "bytes=0-9"}, want{200, noBody, map[string]string{"Content-Length": fmt.Sprint(n)}, nil}},
			{"If-None-Match", "GET", map[string]string{"If-None-Match": etag(file)}, want{304, noBody,
				map[string]string{"ETag": etag(file), "Cache-Control": "public, max-age=31536000, immutable"}, []string{"Content-Type"}}},
			{"If-None-Match on HEAD", "HEAD", map[string]string{"If-None-Match": `"x", ` + etag(file)}, want{304, noBody, nil, nil}},
			{"If-None-Match other", "GET", map[string]string{"If-None-Match": `"x"`}, want{200, whole, nil, nil}},
			{"If-None-Match malformed", "GET", map[string]string{"If-None-Match": `garbage`}, want{200, whole, nil, nil}},
			{"If-Modified-Since", "GET", map[string]string{"If-Modified-Since": lastMod(file)}, want{304, noBody, nil, nil}},
			{"If-Modified-Since earlier", "GET", map[string]string{"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}, want{200, whole, nil, nil}},
			{"If-Modified-Since malformed", "GET", map[string]string{"If-Modified-Since": "last week"}, want{200, whole, nil, nil}},
			{"If-Range matching", "GET", map[string]string{"Range": "bytes=10-19", "If-Range": etag(file)}, want{206, [2]int64{10, 10}, nil, nil}},
			{"If-Range date", "GET", map[string]string{"Range": "bytes=10-19", "If-Range": lastMod(file)}, want{206, [2]int64{10, 10}, nil, nil}},
			{"If-Range stale", "GET", map[string]string{"Range": "bytes=10-19", "If-Range": `"old"`}, want{200, whole, nil, nil}},
			{"If-Match failing", "GET", map[string]string{"If-Match": `"old"`}, want{412, noBody, nil, nil}},
			{"POST", "POST", nil, want{405, noBody, map[string]string{"Allow": "GET, HEAD"}, nil}},
		} {
			t.Run(file[8:13]+"/"+tt.name, func(t *testing.T) {
				resp := f.do(tt.method, schema.UploadsPath+file, tt.headers)
				if resp.StatusCode() != tt.want.status {
					t.Fatalf("status %d, want %d: %.200q", resp.StatusCode(), tt.want.status, resp.Body())
				}
				if tt.want.body[0] >= 0 {
					all := f.bodies[schema.UploadsPath+file]
					if w := all[tt.want.body[0] : tt.want.body[0]+tt.want.body[1]]; !bytes.Equal(resp.Body(), w) {
						t.Fatalf("body of %d bytes, want bytes %d+%d", len(resp.Body()), tt.want.body[0], tt.want.body[1])
					}
				} else if tt.want.status < 400 && len(resp.Body()) != 0 {
					t.Fatalf("a body of %d bytes", len(resp.Body()))
				}
				for k, v := range tt.want.headers {
					if got := string(resp.Header.Peek(k)); got != v {
						t.Errorf("%s: %q, want %q", k, got, v)
					}
				}
				if len(tt.want.absent) > 0 {
					head := f.rawHead(tt.method, schema.UploadsPath+file, tt.headers)
					for _, k := range tt.want.absent {
						if strings.Contains(head, "\r\n"+k+":") {
							t.Errorf("%s sent:\n%s", k, head)
						}
					}
				}
			})
		}
	}

	// Errors, in the commerce shape, never cached.
	for _, tt := range []struct {
		path, code string
		status     int
		retry      string
	}{
		{missing, "not_found", 404, "2"},
		{"2026/11/lying.jpg", "unavailable", 503, "1"},
		{"2026/11/shortened.mp4", "unavailable", 503, "1"},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			resp := f.do(method, schema.UploadsPath+tt.path, nil)
			if resp.StatusCode() != tt.status || string(resp.Header.Peek("Retry-After")) != tt.retry ||
				string(resp.Header.Peek("Cache-Control")) != "no-store" {
				t.Errorf("%s %s: %d, Retry-After %q, Cache-Control %q", method, tt.path, resp.StatusCode(),
					resp.Header.Peek("Retry-After"), resp.Header.Peek("Cache-Control"))
			}
			if method == "GET" && !bytes.Contains(resp.Body(), []byte(`"code":"`+tt.code+`"`)) {
				t.Errorf("GET %s: body %s", tt.path, resp.Body())
			}
		}
	}
	if f.metric("vitrine_edge_media_missing_total") == 0 || f.metric("vitrine_edge_media_mismatches_total") == 0 {
		t.Error("missing blobs and mismatches are not counted")
	}
	// Conditionals that are decided on the replica's facts do not read the store, even for a
	// blob the store lacks.
	if resp := f.do("GET", schema.UploadsPath+missing, map[string]string{"If-None-Match": `"` + strings.Repeat("a", 64) + `"`}); resp.StatusCode() != 304 {
		t.Errorf("If-None-Match on a file this edge lacks: %d", resp.StatusCode())
	}
}

func TestActiveTypesAreAttachments(t *testing.T) {
	f := standardFixture(t)
	resp := f.do("GET", schema.UploadsPath+svg, nil)
	if resp.StatusCode() != 200 || string(resp.Header.Peek("Content-Type")) != "image/svg+xml" {
		t.Fatalf("%d %s", resp.StatusCode(), resp.Header.Peek("Content-Type"))
	}
	if got := string(resp.Header.Peek("Content-Disposition")); got != "attachment" {
		t.Errorf("Content-Disposition %q", got)
	}
	if got := string(resp.Header.Peek("Content-Security-Policy")); !strings.Contains(got, "sandbox") || !strings.Contains(got, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", got)
	}
	resp = f.do("GET", schema.UploadsPath+empty, nil)
	if resp.StatusCode() != 200 || len(resp.Body()) != 0 || string(resp.Header.Peek("Content-Length")) != "0" ||
		resp.Header.Peek("Content-Disposition") != nil {
		t.Errorf("empty text file: %d, %q", resp.StatusCode(), resp.Header.String())
	}
	if resp := f.do("GET", schema.UploadsPath+empty, map[string]string{"Range": "bytes=0-"}); resp.StatusCode() != 416 ||
		string(resp.Header.Peek("Content-Range")) != "bytes */0" {
		t.Errorf("a range of an empty file: %d %q", resp.StatusCode(), resp.Header.Peek("Content-Range"))
	}
}

func TestStoreFailureIsServiceUnavailable(t *testing.T) {
	f := standardFixture(t)
	// A damaged object file (blob.FS keeps an object in <root>/<name>~): the store fails to read
	// it, which is not a missing blob.
	mf := f.put("2026/11/damaged-000000000000.jpg", "image/jpeg", content(100, 3))
	if err := os.WriteFile(filepath.Join(f.fs.Root(), filepath.FromSlash(mf.BlobName))+"~", []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := f.do("GET", schema.UploadsPath+"2026/11/damaged-000000000000.jpg", nil)
	if resp.StatusCode() != 503 || string(resp.Header.Peek("Retry-After")) != "1" {
		t.Fatalf("%d %s", resp.StatusCode(), resp.Body())
	}
	if f.metric("vitrine_edge_media_store_errors_total") != 1 {
		t.Error("store errors are not counted")
	}
}

// hitContext returns a request for the small file, warmed until it is answered from the cache.
func hitContext(t testing.TB, f *fixture, headers map[string]string) (*fasthttp.RequestCtx, schema.MediaFile) {
	var rq fasthttp.Request
	rq.SetRequestURI(schema.UploadsPath + small)
	for k, v := range headers {
		rq.Header.Set(k, v)
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&rq, nil, nil)
	mf := f.files[schema.UploadsPath+small]
	deadline := time.Now().Add(5 * time.Second)
	for hits := f.metric("vitrine_edge_media_hits_total"); f.metric("vitrine_edge_media_hits_total") < hits+2; {
		if time.Now().After(deadline) {
			t.Fatal("the file never reached the cache")
		}
		ctx.Response.Reset()
		f.srv.Serve(ctx, mf)
		time.Sleep(time.Millisecond)
	}
	return ctx, mf
}

func TestCacheHit(t *testing.T) {
	f := standardFixture(t)
	hitContext(t, f, nil)
	opens := f.store.opens.Load()
	for range 5 {
		resp := f.do("GET", schema.UploadsPath+small, nil)
		if resp.StatusCode() != 200 || !bytes.Equal(resp.Body(), f.bodies[schema.UploadsPath+small]) {
			t.Fatalf("hit: %d, %d bytes", resp.StatusCode(), len(resp.Body()))
		}
		if resp := f.do("GET", schema.UploadsPath+small, map[string]string{"Range": "bytes=-10"}); resp.StatusCode() != 206 ||
			!bytes.Equal(resp.Body(), f.bodies[schema.UploadsPath+small][20<<10-10:]) {
			t.Fatalf("ranged hit: %d", resp.StatusCode())
		}
	}
	if got := f.store.opens.Load(); got != opens {
		t.Errorf("%d store reads for cached answers", got-opens)
	}
	// The large file is never cached: each GET streams from the store.
	for range 2 {
		f.do("GET", schema.UploadsPath+large, nil)
	}
	if got := f.store.opens.Load() - opens; got != 2 {
		t.Errorf("%d store reads for 2 GETs of a streamed file", got)
	}
	if f.metric("vitrine_edge_media_streams_total") != 2 || f.metric("vitrine_edge_media_bytes_total") < 2*(3<<19) {
		t.Errorf("streams %v, bytes %v", f.metric("vitrine_edge_media_streams_total"), f.metric("vitrine_edge_media_bytes_total"))
	}
}

func TestCacheHitAllocatesNothing(t *testing.T) {
	f := standardFixture(t)
	for _, tt := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"GET", map[string]string{"Accept-Encoding": "gzip, br"}, 200},
		{"range", map[string]string{"Range": "bytes=100-199"}, 206},
		{"If-None-Match", map[string]string{"If-None-Match": `"` + f.files[schema.UploadsPath+small].SHA256 + `"`}, 304},
		{"If-Modified-Since", map[string]string{"If-Modified-Since": "Tue, 01 Jan 2030 00:00:00 GMT"}, 304},
	} {
		ctx, mf := hitContext(t, f, tt.headers)
		if ctx.Response.StatusCode() != tt.status {
			t.Fatalf("%s: warm-up answer %d", tt.name, ctx.Response.StatusCode())
		}
		allocs := testing.AllocsPerRun(1000, func() {
			ctx.Response.Reset()
			f.srv.Serve(ctx, mf)
		})
		if allocs != 0 {
			t.Errorf("%s: a cache hit allocates %.1f times", tt.name, allocs)
		}
	}
}

// A streamed file is never read whole: serving it allocates far less than its size. The server
// is measured alone (Serve, then fasthttp writes the response to a discarding writer), so the
// client's buffers do not count.
func TestLargeFileStreamsWithBoundedMemory(t *testing.T) {
	f := newFixture(t, files.Config{})
	const size = 8 << 20
	f.put(large, "video/mp4", content(size, 4))
	mf := f.files[schema.UploadsPath+large]
	serve := func(headers map[string]string) (int64, string) {
		var rq fasthttp.Request
		rq.SetRequestURI(schema.UploadsPath + large)
		for k, v := range headers {
			rq.Header.Set(k, v)
		}
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&rq, nil, nil)
		f.srv.Serve(ctx, mf)
		h := sha256.New()
		w := bufio.NewWriterSize(h, 4096)
		if err := ctx.Response.Write(w); err != nil { // writes the body stream, then closes it
			t.Fatal(err)
		}
		w.Flush()
		finish(ctx)
		return int64(ctx.Response.StatusCode()), hex.EncodeToString(h.Sum(nil))
	}
	serve(nil) // warm pools
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const runs = 3
	for range runs {
		if status, _ := serve(nil); status != 200 {
			t.Fatalf("status %d", status)
		}
		if status, _ := serve(map[string]string{"Range": "bytes=1000000-"}); status != 206 {
			t.Fatalf("ranged status %d", status)
		}
	}
	runtime.ReadMemStats(&after)
	perServe := (after.TotalAlloc - before.TotalAlloc) / (2 * runs)
	t.Logf("%d bytes allocated per answer of an %d-byte file", perServe, size)
	if perServe > 256<<10 {
		t.Errorf("%d bytes allocated per answer of an %d-byte file: it is buffered", perServe, size)
	}
	if f.metric("vitrine_edge_media_streams_open") != 0 {
		t.Errorf("%v streams left open", f.metric("vitrine_edge_media_streams_open"))
	}
}

// finish does what fasthttp does once an answer is written: it closes the body stream and the
// request's user values (a stream over a file waits there).
func finish(ctx *fasthttp.RequestCtx) {
	ctx.Response.ResetBody()
	ctx.ResetUserValues()
}

// At most MaxStreams reads from the store at once; past it, 503 at once; a slot is free again
// when its stream is closed.
func TestStreamSlots(t *testing.T) {
	f := newFixture(t, files.Config{MaxStreams: 1})
	f.put(large, "video/mp4", content(3<<20, 5))
	mf := f.files[schema.UploadsPath+large]
	serve := func() *fasthttp.RequestCtx {
		var rq fasthttp.Request
		rq.SetRequestURI(schema.UploadsPath + large)
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&rq, nil, nil)
		f.srv.Serve(ctx, mf)
		return ctx
	}
	first := serve()
	if first.Response.StatusCode() != 200 {
		t.Fatalf("first stream: %d", first.Response.StatusCode())
	}
	second := serve()
	if second.Response.StatusCode() != 503 || string(second.Response.Header.Peek("Retry-After")) != "1" {
		t.Fatalf("a stream past MaxStreams: %d", second.Response.StatusCode())
	}
	if f.metric("vitrine_edge_media_busy_total") != 1 || f.metric("vitrine_edge_media_streams_open") != 1 {
		t.Errorf("busy %v, open %v", f.metric("vitrine_edge_media_busy_total"), f.metric("vitrine_edge_media_streams_open"))
	}
	finish(first)
	if third := serve(); third.Response.StatusCode() != 200 {
		t.Fatalf("after the first stream closed: %d", third.Response.StatusCode())
	} else {
		finish(third)
	}
	if f.metric("vitrine_edge_media_streams_open") != 0 {
		t.Errorf("%v streams left open", f.metric("vitrine_edge_media_streams_open"))
	}
}

// A client that goes away in the middle of a streamed file releases its stream.
func TestAbortedDownloadReleasesItsStream(t *testing.T) {
	f := newFixture(t, files.Config{})
	f.put(large, "video/mp4", content(16<<20, 6)) // more than loopback buffers hold
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: media.test\r\n\r\n", schema.UploadsPath+large)
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line %q, %v", line, err)
	}
	if f.metric("vitrine_edge_media_streams_open") != 1 {
		t.Fatalf("%v streams open during the download", f.metric("vitrine_edge_media_streams_open"))
	}
	conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for f.metric("vitrine_edge_media_streams_open") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream of an aborted download is never closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConcurrentReaders(t *testing.T) {
	f := standardFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				file := small
				if (g+i)%3 == 0 {
					file = large
				}
				all := f.bodies[schema.UploadsPath+file]
				req := fasthttp.AcquireRequest()
				resp := fasthttp.AcquireResponse()
				req.SetRequestURI("http://media.test" + schema.UploadsPath + file)
				start := int64(g * 100)
				want := all
				if i%2 == 1 {
					req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", start, start+999))
					want = all[start : start+1000]
				}
				err := f.client.DoTimeout(req, resp, 10*time.Second)
				if err == nil && !bytes.Equal(resp.Body(), want) {
					err = fmt.Errorf("%s (%d): %d bytes, want %d", file, resp.StatusCode(), len(resp.Body()), len(want))
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.metric("vitrine_edge_media_streams_open") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%v streams left open", f.metric("vitrine_edge_media_streams_open"))
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkServeHit is the handler's own cost on a cache hit (no connection, no syscalls).
func BenchmarkServeHit(b *testing.B) {
	f := standardFixture(b)
	ctx, mf := hitContext(b, f, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx.Response.Reset()
		f.srv.Serve(ctx, mf)
	}
}
