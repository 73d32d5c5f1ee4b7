package pipeline_test

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

func requestFrom(peer, xff string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(peer), Port: 4000}, nil)
	if xff != "" {
		ctx.Request.Header.Set("X-Forwarded-For", xff)
	}
	return &ctx
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	tests := []struct {
		name, peer, xff, want string
		trusted               []netip.Prefix
	}{
		{"no proxies configured: the peer", "198.51.100.1", "203.0.113.9", "198.51.100.1", nil},
		{"untrusted peer: its X-Forwarded-For is ignored", "198.51.100.1", "203.0.113.9", "198.51.100.1", trusted},
		{"trusted peer: the last hop", "10.1.2.3", "203.0.113.9", "203.0.113.9", trusted},
		{"chain of trusted proxies", "10.1.2.3", "203.0.113.9, 10.9.9.9, 127.0.0.1", "203.0.113.9", trusted},
		{"a client's own entries left of the real one are not believed", "10.1.2.3", "1.2.3.4, 203.0.113.9", "203.0.113.9", trusted},
		{"malformed hop stops at the last trusted one", "10.1.2.3", "203.0.113.9, garbage", "10.1.2.3", trusted},
		{"all hops trusted: the leftmost", "10.1.2.3", "10.0.0.1", "10.0.0.1", trusted},
		{"empty header: the peer", "10.1.2.3", "", "10.1.2.3", trusted},
		{"IPv4-mapped IPv6 is unmapped", "10.1.2.3", "::ffff:203.0.113.9", "203.0.113.9", trusted},
		{"IPv6 client", "10.1.2.3", "2001:db8::1", "2001:db8::1", trusted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pipeline.ClientAddr(requestFrom(tt.peer, tt.xff), tt.trusted)
			if got.String() != tt.want {
				t.Errorf("ClientAddr = %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzClientAddr: whatever a client writes in X-Forwarded-For, the answer is the peer or one of
// the addresses written, and nothing panics.
func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{"203.0.113.9", "a, b, c", ",,,", "10.0.0.1, ::1", " 1.2.3.4 ,5.6.7.8", "[::1]:80"} {
		f.Add(s)
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, xff string) {
		got := pipeline.ClientAddr(requestFrom("10.1.2.3", xff), trusted)
		if got.String() == "10.1.2.3" {
			return
		}
		found := false
		for _, part := range strings.Split(xff, ",") {
			if a, err := netip.ParseAddr(strings.TrimSpace(part)); err == nil && a.Unmap() == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("ClientAddr(%q) = %s: neither the peer nor a written address", xff, got)
		}
	})
}
