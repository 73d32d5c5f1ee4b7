package edge_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/textproto"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
)

// uploadOrigin is a loopback HTTP server in the origin's place that takes bodies as large as the
// origin's upload bound and records what reached it.
type uploadOrigin struct {
	mu    sync.Mutex
	seen  []seenUpload
	addr  string
	limit int
}

type seenUpload struct {
	method, uri, contentType, disposition, expect string
	length                                        int
	sum                                           [32]byte
}

func startUploadOrigin(t testing.TB) *uploadOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &uploadOrigin{addr: ln.Addr().String()}
	srv := &fasthttp.Server{MaxRequestBodySize: 64 << 20, DisablePreParseMultipartForm: true, Handler: func(ctx *fasthttp.RequestCtx) {
		body := ctx.PostBody()
		o.mu.Lock()
		o.seen = append(o.seen, seenUpload{method: string(ctx.Method()), uri: string(ctx.RequestURI()),
			contentType: string(ctx.Request.Header.ContentType()), disposition: string(ctx.Request.Header.Peek("Content-Disposition")),
			expect: string(ctx.Request.Header.Peek("Expect")), length: len(body), sum: sha256.Sum256(body)})
		o.mu.Unlock()
		ctx.SetContentType("application/json; charset=UTF-8")
		ctx.SetStatusCode(201)
		fmt.Fprintf(ctx, `{"id":77,"bytes":%d}`, len(body))
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return o
}

func (o *uploadOrigin) last() (seenUpload, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		return seenUpload{}, 0
	}
	return o.seen[len(o.seen)-1], len(o.seen)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

// multipartUpload returns a multipart/form-data body with a file part of n bytes and a title,
// and its content type.
func multipartUpload(t testing.TB, n int) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("title", "A photo")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="photo.png"`)
	h.Set("Content-Type", "image/png")
	p, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(randomBytes(n))
	w.WriteField("alt_text", "after the file")
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// A media upload of 5 MiB (over the 1 MiB every other body is held to) goes through the edge to
// the origin byte for byte, raw or multipart, with a Content-Length or chunked.
func TestMediaUploadForwarded(t *testing.T) {
	o := startUploadOrigin(t)
	f := newFixture(t, edge.Config{Origin: "http://" + o.addr})
	raw := randomBytes(5 << 20)
	form, formType := multipartUpload(t, 5<<20)
	auth := "Basic " + "YWRtaW46YWJjZCBlZmdoIGlqa2wgbW5vcCBxcnN0IHV2d3g="
	for _, tt := range []struct {
		name        string
		uri         string
		contentType string
		disposition string
		body        []byte
		chunked     bool
	}{
		{"raw", "/index.php?rest_route=/cms/v2/media", "image/jpeg", `attachment; filename="photo.jpg"`, raw, false},
		{"multipart", "/index.php?rest_route=/cms/v2/media", formType, "", form, false},
		{"chunked", "/index.php?rest_route=/cms/v2/media", "image/jpeg", `attachment; filename="photo.jpg"`, raw, true},
		{"escaped route with a slash", "/?rest_route=%2Fcms%2Fv2%2Fmedia%2F&generate_sub_sizes=false", "image/jpeg", `attachment; filename="p.jpg"`, raw, false},
		{"route in capitals", "/index.php?rest_route=/CMS/v2/Media", "image/jpeg", `attachment; filename="p.jpg"`, raw, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rq := fasthttp.AcquireRequest()
			defer fasthttp.ReleaseRequest(rq)
			rq.Header.SetMethod("POST")
			rq.SetRequestURI("http://shop.example.test" + tt.uri)
			rq.Header.Set("Authorization", auth)
			rq.Header.SetContentType(tt.contentType)
			if tt.disposition != "" {
				rq.Header.Set("Content-Disposition", tt.disposition)
			}
			if tt.chunked {
				rq.SetBodyStream(bytes.NewReader(tt.body), -1)
			} else {
				rq.SetBody(tt.body)
			}
			resp := new(fasthttp.Response)
			if err := f.client.DoTimeout(rq, resp, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != 201 || string(resp.Body()) != fmt.Sprintf(`{"id":77,"bytes":%d}`, len(tt.body)) {
				t.Fatalf("answer %d %s", resp.StatusCode(), resp.Body())
			}
			seen, _ := o.last()
			if seen.length != len(tt.body) || seen.sum != sha256.Sum256(tt.body) {
				t.Fatalf("the origin received %d bytes, different from the %d sent", seen.length, len(tt.body))
			}
			if seen.method != "POST" || !sameTarget(seen.uri, tt.uri) || seen.contentType != tt.contentType || seen.disposition != tt.disposition {
				t.Errorf("the origin saw %+v", seen)
			}
		})
	}
}

// sameTarget reports whether two request targets have the same path and query arguments (the
// edge re-encodes the query of a CMS request it parsed: rest_route=%2Fcms%2Fv2%2Fmedia).
func sameTarget(a, b string) bool {
	pa, qa, _ := strings.Cut(a, "?")
	pb, qb, _ := strings.Cut(b, "?")
	va, ea := url.ParseQuery(qa)
	vb, eb := url.ParseQuery(qb)
	return pa == pb && ea == nil && eb == nil && reflect.DeepEqual(va, vb)
}

// curl sends "Expect: 100-continue" with bodies over 1 MiB: the edge answers 100 Continue, reads
// the body, and forwards it.
func TestMediaUploadExpectContinue(t *testing.T) {
	o := startUploadOrigin(t)
	f := newFixture(t, edge.Config{Origin: "http://" + o.addr})
	body := randomBytes(3 << 20)
	conn, err := f.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST /index.php?rest_route=/cms/v2/media HTTP/1.1\r\nHost: shop.example.test\r\nAuthorization: Basic eDp5\r\n"+
		"Content-Type: image/jpeg\r\nContent-Disposition: attachment; filename=\"a.jpg\"\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("interim answer %q, %v", line, err)
	}
	for line != "\r\n" {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	go conn.Write(body)
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 201 {
		t.Fatalf("answer %d %s", resp.StatusCode(), resp.Body())
	}
	if seen, _ := o.last(); seen.length != len(body) || seen.sum != sha256.Sum256(body) {
		t.Fatalf("the origin received %d bytes", seen.length)
	}
}

// The upload bound applies to uploads only; every other route keeps MaxBodyBytes.
func TestUploadLimitOnlyOnUploadRoutes(t *testing.T) {
	o := startUploadOrigin(t)
	f := newFixture(t, edge.Config{Origin: "http://" + o.addr, MaxBodyBytes: 1 << 10, MaxUploadBytes: 64 << 10})
	for _, tt := range []struct {
		name, uri string
		size      int
		forwarded bool
	}{
		{"upload under the upload bound", "/index.php?rest_route=/cms/v2/media", 32 << 10, true},
		{"upload over the upload bound", "/index.php?rest_route=/cms/v2/media", 128 << 10, false},
		{"a post", "/index.php?rest_route=/cms/v2/posts", 32 << 10, false},
		{"a media update", "/index.php?rest_route=/cms/v2/media/5", 32 << 10, false},
		{"a media edit", "/index.php?rest_route=/cms/v2/media/5/edit", 32 << 10, false},
		{"the media route under another parameter", "/index.php?route=/cms/v2/media", 32 << 10, false},
		{"the media route on another path", "/wp-json/cms/v2/media?rest_route=/cms/v2/media", 32 << 10, false},
		{"a cart", "/api/cart/items", 32 << 10, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, before := o.last()
			resp := f.doEarly(req{method: "POST", uri: tt.uri, body: string(randomBytes(tt.size))})
			_, after := o.last()
			if tt.forwarded {
				if resp.StatusCode() != 201 || after != before+1 {
					t.Fatalf("not forwarded: %d %s", resp.StatusCode(), resp.Body())
				}
				return
			}
			if resp.StatusCode() != 413 || after != before {
				t.Fatalf("%d %s (origin reached: %v)", resp.StatusCode(), resp.Body(), after != before)
			}
		})
	}
}
