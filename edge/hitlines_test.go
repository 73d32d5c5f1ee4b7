package edge

import (
	"strings"
	"sync/atomic"
	"testing"

	"vitrine/edge/cache"
)

// entryLines declines (nil: serve sets headers one by one) the entries whose own headers would
// replace, one by one, a header set per request or kept apart by fasthttp; it keeps the others,
// with the CMS's X-Robots-Tag replacing the entry's as one by one.
func TestEntryLines(t *testing.T) {
	var ctr atomic.Uint64
	build := func(headers ...[2]string) *cache.Entry {
		var hs [][2][]byte
		for _, h := range headers {
			hs = append(hs, [2][]byte{[]byte(h[0]), []byte(h[1])})
		}
		return cache.Build([]byte("k"), 200, "application/json", []byte(`{}`), []cache.Dep{{Ctr: &ctr}}, 0, hs, 0)
	}
	for _, name := range []string{"Vary", "vary", "X-Request-Id", "Cache-Status", "Vitrine-Replica-Version", "Vitrine-Staleness",
		"Access-Control-Allow-Origin", "RateLimit-Limit", "Content-Type", "Set-Cookie", "Connection", "Server"} {
		if lines := entryLines(build([2]string{name, "x"}), false); lines != nil {
			t.Errorf("%s: %q", name, lines)
		}
	}
	got := string(entryLines(build([2]string{"x-wp-total", "3"}, [2]string{"X-Robots-Tag", "noindex, follow"}, [2]string{"Link", "<a>\r\nEvil: 1"}), true))
	want := "ETag: " + `"2e1472b57af294d1"` + "\r\nCache-Control: public, no-cache\r\nVary: Accept-Encoding\r\nX-Wp-Total: 3\r\n" +
		"X-Robots-Tag: noindex\r\nLink: <a>  Evil: 1\r\nX-Content-Type-Options: nosniff\r\n"
	if got != want {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
	if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Error("a bare line break")
	}
}
