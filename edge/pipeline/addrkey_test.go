package pipeline_test

import (
	"net/netip"
	"testing"

	"vitrine/edge/pipeline"
)

// Per-client limits count an IPv6 client by its /64 and an IPv4-mapped address as its IPv4
// address: two addresses in one /64 share a key, different /64s do not.
func TestLimitKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"one /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", true},
		{"one /64, privacy addresses", "2001:db8:1:2:a1b2:c3d4:e5f6:789", "2001:db8:1:2:1111:2222:3333:4444", true},
		{"neighbouring /64s", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"different /48s", "2001:db8:1:2::1", "2001:db8:2:2::1", false},
		{"IPv4-mapped is IPv4", "::ffff:1.2.3.4", "1.2.3.4", true},
		{"IPv4 /32: neighbours differ", "1.2.3.4", "1.2.3.5", false},
		{"IPv4-mapped neighbours differ", "::ffff:1.2.3.4", "::ffff:1.2.3.5", false},
		{"loopbacks", "::1", "::2", true},
		{"IPv4 is not its mapped-prefix /64 neighbour", "1.2.3.4", "::ffff:0:0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pipeline.LimitKey(netip.MustParseAddr(tc.a)), pipeline.LimitKey(netip.MustParseAddr(tc.b))
			if (a == b) != tc.same {
				t.Fatalf("LimitKey(%s) = %s, LimitKey(%s) = %s; same = %v, want %v", tc.a, a, tc.b, b, a == b, tc.same)
			}
			if sa, sb := pipeline.LimitKeyString(tc.a), pipeline.LimitKeyString(tc.b); (sa == sb) != tc.same {
				t.Fatalf("LimitKeyString: %s, %s; same = %v, want %v", sa, sb, sa == sb, tc.same)
			}
		})
	}
	if got := pipeline.LimitKeyString("2001:db8:1:2:3:4:5:6"); got != "2001:db8:1:2::" {
		t.Errorf("LimitKeyString of an IPv6 address = %q, want its /64 network", got)
	}
	if got := pipeline.LimitKeyString("not-an-address"); got != "not-an-address" {
		t.Errorf("LimitKeyString of a non-address = %q", got)
	}
	a := netip.MustParseAddr("2001:db8::1")
	if n := testing.AllocsPerRun(100, func() { pipeline.LimitKey(a) }); n != 0 {
		t.Errorf("LimitKey allocates %.0f times", n)
	}
}
