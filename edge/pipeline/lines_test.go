package pipeline

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// SetLines writes what one SetCanonical per header writes.
func TestSetLines(t *testing.T) {
	var one, block fasthttp.ResponseHeader
	one.SetCanonical([]byte("X-Request-Id"), []byte("abc"))
	block.SetCanonical([]byte("X-Request-Id"), []byte("abc"))
	pairs := [][2]string{{"ETag", `"0ebb82739819fa35"`}, {"Cache-Control", "public, no-cache"}, {"Vary", "Accept-Encoding"}, {"Vitrine-Staleness", "0"}}
	var lines []byte
	for _, kv := range pairs {
		one.SetCanonical([]byte(kv[0]), []byte(kv[1]))
		lines = AppendLine(lines, []byte(kv[0]), []byte(kv[1]))
	}
	lines = AppendIntLine(lines, []byte("RateLimit-Limit"), 6000)
	one.SetCanonical([]byte("RateLimit-Limit"), []byte("6000"))
	SetLines(&block, lines)
	if got, want := block.String(), one.String(); got != want {
		t.Fatalf("block\n%s\none by one\n%s", got, want)
	}
	if got := string(block.Peek("RateLimit-Limit")); got != "" {
		t.Errorf("the last line is part of the block's name, found alone: %q", got)
	}
	// Malformed blocks are ignored, never written in part.
	var empty fasthttp.ResponseHeader
	for _, bad := range []string{"", "X", "ETag: x", "ETag x\r\n", "\r\n", ": x\r\n", "A: b\r\nETag:\r\n"} {
		var h fasthttp.ResponseHeader
		SetLines(&h, []byte(bad))
		if strings.Count(h.String(), "\r\n") != strings.Count(empty.String(), "\r\n") {
			t.Errorf("%q: %s", bad, h.String())
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		var b [256]byte
		block.ResetConnectionClose()
		SetLines(&block, AppendIntLine(AppendLine(b[:0], []byte("ETag"), []byte(`"x"`)), []byte("Vitrine-Staleness"), 3))
	}); n != 0 {
		t.Errorf("SetLines allocates %.0f times", n)
	}
}
