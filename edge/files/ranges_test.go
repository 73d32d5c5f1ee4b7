package files

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestParseRange(t *testing.T) {
	const size = 1000
	part := func(start, length int64) plan { return plan{outcome: sendPart, start: start, length: length} }
	whole := plan{outcome: sendWhole, length: size}
	unsat := plan{outcome: sendUnsatisfiable}
	for _, tt := range []struct {
		in   string
		size int64
		want plan
	}{
		{"bytes=0-99", size, part(0, 100)},
		{"bytes=100-199", size, part(100, 100)},
		{"bytes=999-999", size, part(999, 1)},
		{"bytes=990-2000", size, part(990, 10)},                  // last clamped to the end
		{"bytes=500-", size, part(500, 500)},                     // to the end
		{"bytes=-100", size, part(900, 100)},                     // the last 100 bytes
		{"bytes=-5000", size, part(0, size)},                     // a suffix longer than the file: all of it
		{"BYTES = 0-0", size, part(0, 1)},                        // unit case-insensitive, whitespace
		{"bytes= 0-9 ", size, part(0, 10)},                       // optional whitespace
		{"bytes=,0-9,", size, part(0, 10)},                       // empty list elements
		{"bytes=0-99999999999999999999999", size, part(0, size)}, // saturating last
		{"bytes=1000-", size, unsat},                             // first byte past the end
		{"bytes=99999999999999999999999-", size, unsat},
		{"bytes=-0", size, unsat},              // an empty suffix
		{"bytes=1000-1100,2000-", size, unsat}, // no satisfiable range in the set
		{"bytes=0-9,20-29", size, whole},       // several ranges: the whole file
		{"bytes=0-9,5000-", size, whole},
		{"bytes=5-4", size, whole}, // last below first: invalid, ignored
		{"bytes=abc", size, whole}, // malformed
		{"bytes=1-2-3", size, whole},
		{"bytes=-", size, whole},
		{"bytes=0x10-20", size, whole},
		{"bytes=+1-2", size, whole},
		{"bytes=", size, whole},
		{"bytes=,", size, whole},
		{"items=0-9", size, whole}, // another unit
		{"bytes 0-9", size, whole}, // no '='
		{"", size, whole},
		{"bytes=0-", 0, unsat},                     // nothing in an empty file
		{"bytes=-10", 0, plan{outcome: sendWhole}}, // a suffix of an empty file: all of it, 200
	} {
		if got := parseRange([]byte(tt.in), tt.size); got != tt.want {
			t.Errorf("parseRange(%q, %d) = %+v, want %+v", tt.in, tt.size, got, tt.want)
		}
	}
}

func TestDecidePreconditions(t *testing.T) {
	mod := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	m := meta{size: 100, etag: []byte(`"abc"`), lastModified: fasthttp.AppendHTTPDate(nil, mod), modified: mod.Unix()}
	date := func(t time.Time) string { return string(fasthttp.AppendHTTPDate(nil, t)) }
	for _, tt := range []struct {
		name    string
		headers map[string]string
		head    bool
		want    outcome
	}{
		{"none", nil, false, sendWhole},
		{"If-None-Match equal", map[string]string{"If-None-Match": `"abc"`}, false, sendNotModified},
		{"If-None-Match weak form", map[string]string{"If-None-Match": `W/"abc"`}, false, sendNotModified},
		{"If-None-Match in a list", map[string]string{"If-None-Match": `"x", "abc"`}, false, sendNotModified},
		{"If-None-Match star", map[string]string{"If-None-Match": `*`}, true, sendNotModified},
		{"If-None-Match other", map[string]string{"If-None-Match": `"x"`}, false, sendWhole},
		{"If-None-Match malformed", map[string]string{"If-None-Match": `abc`}, false, sendWhole},
		{"If-Modified-Since equal", map[string]string{"If-Modified-Since": date(mod)}, false, sendNotModified},
		{"If-Modified-Since later", map[string]string{"If-Modified-Since": date(mod.Add(time.Hour))}, false, sendNotModified},
		{"If-Modified-Since earlier", map[string]string{"If-Modified-Since": date(mod.Add(-time.Second))}, false, sendWhole},
		{"If-Modified-Since malformed", map[string]string{"If-Modified-Since": "yesterday"}, false, sendWhole},
		{"If-None-Match wins over If-Modified-Since", map[string]string{"If-None-Match": `"x"`, "If-Modified-Since": date(mod)}, false, sendWhole},
		{"If-Match equal", map[string]string{"If-Match": `"abc"`}, false, sendWhole},
		{"If-Match weak never matches", map[string]string{"If-Match": `W/"abc"`}, false, sendPreconditionFailed},
		{"If-Match other", map[string]string{"If-Match": `"x"`}, false, sendPreconditionFailed},
		{"If-Unmodified-Since earlier", map[string]string{"If-Unmodified-Since": date(mod.Add(-time.Hour))}, false, sendPreconditionFailed},
		{"If-Unmodified-Since equal", map[string]string{"If-Unmodified-Since": date(mod)}, false, sendWhole},
		{"Range", map[string]string{"Range": "bytes=0-9"}, false, sendPart},
		{"Range on HEAD ignored", map[string]string{"Range": "bytes=0-9"}, true, sendWhole},
		{"If-Range ETag equal", map[string]string{"Range": "bytes=0-9", "If-Range": `"abc"`}, false, sendPart},
		{"If-Range weak ETag", map[string]string{"Range": "bytes=0-9", "If-Range": `W/"abc"`}, false, sendWhole},
		{"If-Range other ETag", map[string]string{"Range": "bytes=0-9", "If-Range": `"x"`}, false, sendWhole},
		{"If-Range date equal", map[string]string{"Range": "bytes=0-9", "If-Range": date(mod)}, false, sendPart},
		{"If-Range date later", map[string]string{"Range": "bytes=0-9", "If-Range": date(mod.Add(time.Hour))}, false, sendWhole},
		{"If-Range malformed", map[string]string{"Range": "bytes=0-9", "If-Range": "soon"}, false, sendWhole},
		{"If-Range with an unsatisfiable range that does not match", map[string]string{"Range": "bytes=500-", "If-Range": `"x"`}, false, sendWhole},
	} {
		var h fasthttp.RequestHeader
		for k, v := range tt.headers {
			h.Set(k, v)
		}
		if got := decide(&h, &m, !tt.head).outcome; got != tt.want {
			t.Errorf("%s: outcome %d, want %d", tt.name, got, tt.want)
		}
	}
}

// FuzzDecide: any Range and conditional headers give a plan inside the file, never a panic.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"bytes=0-99", "bytes=-5", "bytes=5-", "bytes=0-0,-1", "bytes=9-1", "bytes=,,", "bytes=99999999999999999999-",
		"bYtEs=1-1", "bytes=\t1-2", "bytes=1 -2", "=", "bytes=--1", "bytes=1--2"} {
		f.Add(s, int64(100), `"abc"`)
	}
	f.Add("bytes=0-", int64(0), "*")
	f.Fuzz(func(t *testing.T, rng string, size int64, inm string) {
		if size < 0 {
			size = -size
		}
		if size < 0 { // MinInt64
			size = 0
		}
		m := meta{size: size, etag: []byte(`"abc"`)}
		var h fasthttp.RequestHeader
		h.Set("Range", rng)
		h.Set("If-None-Match", inm)
		h.Set("If-Range", inm)
		p := decide(&h, &m, true)
		switch p.outcome {
		case sendPart:
			if p.start < 0 || p.length <= 0 || p.start+p.length > size || p.start+p.length < p.start {
				t.Fatalf("Range %q on %d bytes: part %d+%d outside the file", rng, size, p.start, p.length)
			}
		case sendWhole:
			if p.length != size {
				t.Fatalf("Range %q on %d bytes: whole of %d", rng, size, p.length)
			}
		}
	})
}
