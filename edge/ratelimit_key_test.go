package edge

import (
	"net/netip"
	"testing"
	"time"
)

// The edge's rate limit counts an IPv6 client by its /64: addresses of one /64 spend one bucket,
// another /64 has its own; an IPv4-mapped address spends its IPv4 address's bucket.
func TestLimiterKeysIPv6By64(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then string
		shared      bool
	}{
		{"one /64", "2001:db8:0:1::1", "2001:db8:0:1:dead:beef:0:2", true},
		{"another /64", "2001:db8:0:1::1", "2001:db8:0:2::1", false},
		{"IPv4-mapped is IPv4", "::ffff:192.0.2.7", "192.0.2.7", true},
		{"IPv4 neighbours", "192.0.2.7", "192.0.2.8", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(1 << 10)
			now := time.Now().UnixNano()
			if ok, _, _ := l.allow(netip.MustParseAddr(tc.first), "shop", 1, now); !ok {
				t.Fatal("first request refused")
			}
			ok, _, _ := l.allow(netip.MustParseAddr(tc.then), "shop", 1, now)
			if shared := !ok; shared != tc.shared {
				t.Fatalf("%s after %s: bucket shared = %v, want %v", tc.then, tc.first, shared, tc.shared)
			}
		})
	}
}
