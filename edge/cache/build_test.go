package cache_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"

	"vitrine/edge/cache"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return out
}

func unzstd(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatalf("zstd: %v", err)
	}
	return out
}

func unbrotli(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := fasthttp.AppendUnbrotliBytes(nil, b)
	if err != nil {
		t.Fatalf("brotli: %v", err)
	}
	return out
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestBuildCompression(t *testing.T) {
	tests := []struct {
		name           string
		body           []byte
		wantCompressed bool
	}{
		{"empty", nil, false},
		{"tiny", []byte(`{"id":1}`), false},
		{"255 bytes", bytes.Repeat([]byte("a"), 255), false},
		{"256 bytes", bytes.Repeat([]byte("a"), 256), true},
		{"2 KB JSON", productsJSON(2 << 10), true},
		{"20 KB JSON", productsJSON(20 << 10), true},
		{"200 KB JSON", productsJSON(200 << 10), true},
		{"incompressible", randomBytes(4 << 10), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := cache.Build([]byte("k"), 200, "application/json", tc.body, nil, 0, nil, 0)
			if !bytes.Equal(e.Identity, tc.body) {
				t.Fatalf("Identity differs from the body")
			}
			forms := map[string][]byte{"gzip": e.Gzip, "zstd": e.Zstd, "br": e.Brotli}
			for name, b := range forms {
				if (b != nil) != tc.wantCompressed {
					t.Errorf("%s present = %v, want %v", name, b != nil, tc.wantCompressed)
				}
				if b != nil && len(b) >= len(tc.body) {
					t.Errorf("%s is %d bytes, not smaller than the %d-byte body", name, len(b), len(tc.body))
				}
			}
			if e.Gzip != nil {
				if got := gunzip(t, e.Gzip); !bytes.Equal(got, tc.body) {
					t.Errorf("gzip decompresses to %d bytes that differ from the body", len(got))
				}
			}
			if e.Zstd != nil {
				if got := unzstd(t, e.Zstd); !bytes.Equal(got, tc.body) {
					t.Errorf("zstd decompresses to %d bytes that differ from the body", len(got))
				}
			}
			if e.Brotli != nil {
				if got := unbrotli(t, e.Brotli); !bytes.Equal(got, tc.body) {
					t.Errorf("brotli decompresses to %d bytes that differ from the body", len(got))
				}
			}
			if want := fmt.Sprintf(`"%016x"`, xxhash.Sum64(tc.body)); string(e.ETag) != want {
				t.Errorf("ETag = %s, want %s", e.ETag, want)
			}
		})
	}
}

func TestBuildCopiesInputs(t *testing.T) {
	key := []byte("tenant-1:/products?page=1")
	body := productsJSON(2 << 10)
	wantBody := bytes.Clone(body)
	ctr := new(atomic.Uint64)
	ctr.Store(5)
	deps := []cache.Dep{{Ctr: ctr, Val: 5}}
	headers := [][2][]byte{{[]byte("X-WP-Total"), []byte("42")}, {[]byte("X-WP-TotalPages"), []byte("3")}}

	e := cache.Build(key, 200, "application/json", body, deps, 123, headers, 7)

	// The caller reuses its buffers.
	copy(key, "XXXXXXXX")
	for i := range body {
		body[i] = 'X'
	}
	deps[0].Val = 99
	headers[0][0][0], headers[0][1][0] = 'Y', 'Y'
	headers[1] = [2][]byte{[]byte("Z"), []byte("Z")}

	if string(e.Key) != "tenant-1:/products?page=1" {
		t.Errorf("Key = %q after the caller reused its buffer", e.Key)
	}
	if !bytes.Equal(e.Identity, wantBody) || !bytes.Equal(gunzip(t, e.Gzip), wantBody) {
		t.Errorf("body changed after the caller reused its buffer")
	}
	if len(e.Deps) != 1 || e.Deps[0].Val != 5 || e.Deps[0].Ctr != ctr {
		t.Errorf("Deps = %+v, want [{ctr 5}]", e.Deps)
	}
	if len(e.Headers) != 2 || string(e.Headers[0][0]) != "X-WP-Total" || string(e.Headers[0][1]) != "42" ||
		string(e.Headers[1][0]) != "X-WP-TotalPages" || string(e.Headers[1][1]) != "3" {
		t.Errorf("Headers = %q", e.Headers)
	}
	if e.Status != 200 || string(e.ContentType) != "application/json" || e.Expires != 123 || e.Route != 7 {
		t.Errorf("Status, ContentType, Expires, Route = %d, %q, %d, %d", e.Status, e.ContentType, e.Expires, e.Route)
	}
	// Appending to a field must not write into its neighbour in the shared backing array.
	_ = append(e.Key, "!!!!"...)
	if string(e.ContentType) != "application/json" {
		t.Errorf("append to Key overwrote ContentType: %q", e.ContentType)
	}
}

func TestBuildBodySelection(t *testing.T) {
	body := productsJSON(20 << 10)
	e := cache.Build([]byte("k"), 200, "application/json", body, nil, 0, nil, 0)
	smallest, enc := "br", len(e.Brotli)
	if len(e.Zstd) < enc {
		smallest, enc = "zstd", len(e.Zstd)
	}
	if len(e.Gzip) < enc {
		smallest = "gzip"
	}
	got, gotEnc := e.Body([]byte("gzip, deflate, br, zstd"))
	if string(gotEnc) != smallest || !sameSlice(got, wantBody(t, e, smallest)) {
		t.Errorf("Body picked %q, want the smallest, %q (sizes br %d, zstd %d, gzip %d)",
			gotEnc, smallest, len(e.Brotli), len(e.Zstd), len(e.Gzip))
	}
}

func TestBuildNilDepPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("Build with a nil Dep.Ctr did not panic")
		}
	}()
	cache.Build([]byte("k"), 200, "text/plain", []byte("x"), []cache.Dep{{}}, 0, nil, 0)
}

func BenchmarkBuild(b *testing.B) {
	for _, size := range []int{2 << 10, 20 << 10} {
		body := productsJSON(size)
		key := []byte("tenant-42:/wp-json/wc/store/v1/products?page=1&per_page=20")
		ctr := new(atomic.Uint64)
		deps := []cache.Dep{{Ctr: ctr, Val: 0}}
		b.Run(fmt.Sprintf("%dB", len(body)), func(b *testing.B) {
			b.ReportAllocs()
			var e *cache.Entry
			for b.Loop() {
				e = cache.Build(key, 200, "application/json", body, deps, 0, nil, 0)
			}
			b.ReportMetric(float64(len(e.Identity)), "identity-B")
			b.ReportMetric(float64(len(e.Gzip)), "gzip-B")
			b.ReportMetric(float64(len(e.Zstd)), "zstd-B")
			b.ReportMetric(float64(len(e.Brotli)), "br-B")
		})
	}
}

// BuildFor compresses only into the coding the filling request prefers; Upgrade adds the coding
// a later request prefers, once, keeping what the entry had, and never tries a coding again
// (not even one that did not shrink the body).
func TestBuildForAndUpgrade(t *testing.T) {
	body := productsJSON(8 << 10)
	forms := func(e *cache.Entry) string {
		return fmt.Sprintf("br=%v zstd=%v gzip=%v", e.Brotli != nil, e.Zstd != nil, e.Gzip != nil)
	}
	tests := []struct {
		name, fill, want string
		upgrades         []string // Accept-Encoding values of later requests, in order
		after            string
		upgradedBy       []bool
	}{
		{"no coding accepted", "", "br=false zstd=false gzip=false", []string{"gzip"}, "br=false zstd=false gzip=true", []bool{true}},
		{"browser", "gzip, deflate, br, zstd", "br=true zstd=false gzip=false", []string{"gzip, br", "zstd", "zstd;q=1, gzip"}, "br=true zstd=true gzip=false", []bool{false, true, false}},
		{"gzip only", "gzip", "br=false zstd=false gzip=true", []string{"identity", "br;q=0, gzip"}, "br=false zstd=false gzip=true", []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := cache.BuildFor([]byte("k"), 200, "application/json", body, nil, 0, nil, 3, []byte(tc.fill))
			if got := forms(e); got != tc.want {
				t.Fatalf("filled: %s, want %s", got, tc.want)
			}
			for i, ae := range tc.upgrades {
				up := e.Upgrade([]byte(ae))
				if (up != nil) != tc.upgradedBy[i] {
					t.Fatalf("Upgrade(%q) = %v, want upgraded %v", ae, up != nil, tc.upgradedBy[i])
				}
				if up != nil {
					if !bytes.Equal(up.Identity, e.Identity) || !bytes.Equal(up.ETag, e.ETag) || up.Route != 3 || string(up.Key) != "k" {
						t.Fatalf("upgraded entry changed its content: %+v", up)
					}
					e = up
				}
			}
			if got := forms(e); got != tc.after {
				t.Errorf("after upgrades: %s, want %s", got, tc.after)
			}
			// What each form holds is the body.
			if e.Gzip != nil && !bytes.Equal(gunzip(t, e.Gzip), body) {
				t.Error("gzip form differs")
			}
		})
	}
	// A body that does not shrink is tried once per coding, then left alone.
	e := cache.BuildFor([]byte("k"), 200, "application/octet-stream", randomBytes(4<<10), nil, 0, nil, 0, []byte("br"))
	if e.Brotli != nil || e.Upgrade([]byte("br")) != nil {
		t.Error("an incompressible body is compressed again")
	}
	if up := e.Upgrade([]byte("gzip")); up == nil || up.Gzip != nil || up.Upgrade([]byte("gzip")) != nil {
		t.Error("gzip of an incompressible body: tried more than once, or kept")
	}
}

// Serve answers as Upgrade then Body would, from one parse of the header.
func TestEntryServe(t *testing.T) {
	e := cache.BuildFor([]byte("k"), 200, "application/json", productsJSON(8<<10), nil, 0, nil, 0, []byte("br"))
	for _, ae := range []string{"", "br", "gzip", "zstd, gzip", "identity;q=0", "br;q=0, gzip"} {
		up, body, enc := e.Serve([]byte(ae))
		wantUp := e.Upgrade([]byte(ae))
		if (up != nil) != (wantUp != nil) {
			t.Fatalf("Serve(%q) upgraded %v, Upgrade %v", ae, up != nil, wantUp != nil)
		}
		from := e
		if up != nil {
			from = up
		}
		wantBody, wantEnc := from.Body([]byte(ae))
		if !bytes.Equal(body, wantBody) || !bytes.Equal(enc, wantEnc) {
			t.Errorf("Serve(%q) = %q encoding, want %q", ae, enc, wantEnc)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { e.Serve([]byte("br")) }); allocs != 0 {
		t.Errorf("a hit that needs no coding allocates %v times", allocs)
	}
}
