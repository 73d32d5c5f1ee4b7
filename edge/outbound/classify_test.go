package outbound_test

import (
	"errors"
	"net/netip"
	"testing"

	"vitrine/edge/outbound"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want outbound.Reason
	}{
		// Public.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"198.20.0.1", ""},
		{"223.255.255.255", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"64:ff9b:1::808:808", ""},
		{"2002:808:808::1", ""},

		{"0.0.0.0", outbound.ReasonUnspecified},
		{"::", outbound.ReasonUnspecified},
		{"0.1.2.3", outbound.ReasonReserved},
		{"127.0.0.1", outbound.ReasonLoopback},
		{"127.255.255.254", outbound.ReasonLoopback},
		{"::1", outbound.ReasonLoopback},
		{"10.0.0.1", outbound.ReasonPrivate},
		{"172.16.0.1", outbound.ReasonPrivate},
		{"172.31.255.255", outbound.ReasonPrivate},
		{"192.168.1.1", outbound.ReasonPrivate},
		{"fc00::1", outbound.ReasonPrivate},
		{"fd00:ec2::254", outbound.ReasonPrivate}, // AWS's IPv6 metadata address
		{"100.64.0.1", outbound.ReasonCGNAT},
		{"100.127.255.255", outbound.ReasonCGNAT},
		{"100.100.100.200", outbound.ReasonCGNAT}, // Alibaba's metadata address
		{"169.254.169.254", outbound.ReasonMetadata},
		{"169.254.0.1", outbound.ReasonLinkLocal},
		{"169.254.170.2", outbound.ReasonLinkLocal},
		{"fe80::1", outbound.ReasonLinkLocal},
		{"fe80::1%eth0", outbound.ReasonLinkLocal},
		{"febf::1", outbound.ReasonLinkLocal},
		{"224.0.0.1", outbound.ReasonMulticast},
		{"239.255.255.250", outbound.ReasonMulticast},
		{"ff02::1", outbound.ReasonMulticast},
		{"255.255.255.255", outbound.ReasonBroadcast},
		{"192.0.0.8", outbound.ReasonReserved},
		{"192.0.0.192", outbound.ReasonReserved},
		{"192.88.99.1", outbound.ReasonReserved},
		{"198.18.0.1", outbound.ReasonReserved},
		{"198.19.255.255", outbound.ReasonReserved},
		{"240.0.0.1", outbound.ReasonReserved},
		{"192.0.2.1", outbound.ReasonDocumentation},
		{"198.51.100.1", outbound.ReasonDocumentation},
		{"203.0.113.1", outbound.ReasonDocumentation},
		{"2001:db8::1", outbound.ReasonDocumentation},
		{"3fff::1", outbound.ReasonDocumentation},
		{"2001::1", outbound.ReasonTeredo},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", outbound.ReasonTeredo},
		{"2001:2::1", outbound.ReasonReserved},
		{"fec0::1", outbound.ReasonReserved},
		{"100::1", outbound.ReasonReserved},
		{"::127.0.0.1", outbound.ReasonReserved}, // IPv4-compatible, deprecated
		{"::ffff:0:8.8.8.8", outbound.ReasonReserved},
		{"64:ff9b:1:1::808:808", outbound.ReasonReserved}, // local-use NAT64 of unknown layout

		// Forms that embed an IPv4 address are judged by it.
		{"::ffff:127.0.0.1", outbound.ReasonLoopback},
		{"::ffff:10.1.2.3", outbound.ReasonPrivate},
		{"::ffff:169.254.169.254", outbound.ReasonMetadata},
		{"::ffff:0.0.0.0", outbound.ReasonUnspecified},
		{"64:ff9b::7f00:1", outbound.ReasonLoopback},
		{"64:ff9b::a9fe:a9fe", outbound.ReasonMetadata},
		{"64:ff9b::192.168.0.1", outbound.ReasonPrivate},
		{"64:ff9b:1::7f00:1", outbound.ReasonLoopback},
		{"64:ff9b:1::100.64.0.1", outbound.ReasonCGNAT},
		{"2002:7f00:1::", outbound.ReasonLoopback},
		{"2002:a9fe:a9fe::1", outbound.ReasonMetadata},
		{"2002:a00:1:1::1", outbound.ReasonPrivate},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got := outbound.Classify(netip.MustParseAddr(tt.addr))
			if got != tt.want {
				t.Errorf("Classify(%s) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
	if got := outbound.Classify(netip.Addr{}); got != outbound.ReasonInvalid {
		t.Errorf("Classify(zero) = %q, want %q", got, outbound.ReasonInvalid)
	}
}

func TestCheck(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		name  string
		addr  string
		allow []netip.Prefix
		want  outbound.Reason // "" for allowed
		msg   string
	}{
		{"public", "8.8.8.8", nil, "", ""},
		{"loopback", "127.0.0.1", nil, outbound.ReasonLoopback, "127.0.0.1 is loopback"},
		{"embedded", "64:ff9b::7f00:1", nil, outbound.ReasonLoopback, "64:ff9b::7f00:1 is loopback (embeds 127.0.0.1)"},
		{"zone dropped", "fe80::1%eth0", nil, outbound.ReasonLinkLocal, "fe80::1 is link-local"},
		{"loopback allowlisted", "127.0.0.1", []netip.Prefix{p("127.0.0.1/32")}, "", ""},
		{"mapped loopback allowlisted", "::ffff:127.0.0.1", []netip.Prefix{p("127.0.0.1/32")}, "", ""},
		{"mapped prefix", "::ffff:127.0.0.1", []netip.Prefix{p("::ffff:127.0.0.0/104")}, "", ""},
		{"private allowlisted", "10.1.2.3", []netip.Prefix{p("10.0.0.0/8")}, "", ""},
		{"metadata allowlisted", "169.254.169.254", []netip.Prefix{p("169.254.169.254/32")}, "", ""},
		{"ula allowlisted", "fd12::5", []netip.Prefix{p("fd00::/8")}, "", ""},
		{"other loopback", "127.0.0.2", []netip.Prefix{p("127.0.0.1/32")}, outbound.ReasonNotAllowed, "127.0.0.2 is not in the allowlist"},
		{"public outside", "8.8.8.8", []netip.Prefix{p("10.0.0.0/8")}, outbound.ReasonNotAllowed, "8.8.8.8 is not in the allowlist"},
		{"second prefix", "8.8.8.8", []netip.Prefix{p("10.0.0.0/8"), p("8.8.8.0/24")}, "", ""},
		{"v6 against v4 prefix", "::1", []netip.Prefix{p("127.0.0.1/32")}, outbound.ReasonNotAllowed, "::1 is not in the allowlist"},
		{"invalid prefix", "127.0.0.1", []netip.Prefix{{}}, outbound.ReasonNotAllowed, "127.0.0.1 is not in the allowlist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := outbound.Check(netip.MustParseAddr(tt.addr), tt.allow)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", tt.addr, err)
				}
				return
			}
			var refused *outbound.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Check(%s) = %v, want a *RefusedError", tt.addr, err)
			}
			if refused.Reason != tt.want || err.Error() != tt.msg {
				t.Errorf("Check(%s) = %q (%q), want %q (%q)", tt.addr, refused.Reason, err, tt.want, tt.msg)
			}
		})
	}
}

// FuzzClassify checks that any 16 bytes classify without a panic to a known reason, and that
// every form embedding an IPv4 address is classified like that address.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"::", "::1", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a00:1",
		"2002:7f00:1::", "2001::1", "fe80::1", "2606:4700:4700::1111", "ff02::1", "::ffff:8.8.8.8"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	known := map[outbound.Reason]bool{"": true}
	for _, r := range []outbound.Reason{outbound.ReasonUnspecified, outbound.ReasonLoopback, outbound.ReasonPrivate,
		outbound.ReasonCGNAT, outbound.ReasonLinkLocal, outbound.ReasonMetadata, outbound.ReasonMulticast,
		outbound.ReasonBroadcast, outbound.ReasonReserved, outbound.ReasonDocumentation, outbound.ReasonTeredo} {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [16]byte
		copy(b[:], data)
		a := netip.AddrFrom16(b)
		if r := outbound.Classify(a); !known[r] {
			t.Fatalf("Classify(%s) = %q, not a known reason", a, r)
		}
		if r := outbound.Classify(a.Unmap()); !known[r] {
			t.Fatalf("Classify(%s) = %q, not a known reason", a.Unmap(), r)
		}

		v4 := [4]byte(b[:4])
		want := outbound.Classify(netip.AddrFrom4(v4))
		forms := map[string][16]byte{
			"mapped":      {10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"nat64":       {1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"nat64 local": {1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			// 6to4 keeps the rest of the fuzzer's bytes as its subnet and interface id.
			"6to4": {0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3], 6: b[6], 7: b[7], 8: b[8], 15: b[15]},
		}
		for name, form := range forms {
			a := netip.AddrFrom16(form)
			if got := outbound.Classify(a); got != want {
				t.Errorf("%s %s: Classify = %q, want %q as for %s", name, a, got, want, netip.AddrFrom4(v4))
			}
			err := outbound.Check(a, nil)
			if (err == nil) != (want == "") {
				t.Errorf("%s %s: Check = %v, want refused %v", name, a, err, want != "")
			}
		}
	})
}
