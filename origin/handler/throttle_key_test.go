package handler_test

import (
	"testing"

	"vitrine/origin/handler"
)

// The origin's throttles (sign-in, coupons, gift cards, forms) count an IPv6 client by its /64
// and an IPv4-mapped address as its IPv4 address.
func TestThrottleKeyIPv6By64(t *testing.T) {
	th := handler.Throttle{Name: "login"}
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"one /64", "2001:db8:5:6::1", "2001:db8:5:6:aaaa:bbbb:cccc:dddd", true},
		{"different /64s", "2001:db8:5:6::1", "2001:db8:5:7::1", false},
		{"IPv4-mapped is IPv4", "::ffff:198.51.100.9", "198.51.100.9", true},
		{"IPv4 neighbours", "198.51.100.9", "198.51.100.10", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := th.Key(tc.a), th.Key(tc.b)
			if (ka == kb) != tc.same {
				t.Fatalf("keys %q and %q: same = %v, want %v", ka, kb, ka == kb, tc.same)
			}
		})
	}
	if got := th.Key("198.51.100.9"); got != "login:ip:198.51.100.9" {
		t.Errorf("IPv4 key %q: stored keys of IPv4 clients must not change", got)
	}
}
