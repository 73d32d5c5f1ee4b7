package outbound

import (
	"net/netip"
)

// Reason says why an address is refused. It reads after the address: "127.0.0.1 is loopback".
type Reason string

// The reasons an address is refused. Classify returns one of them, or "" for a public address.
const (
	ReasonUnspecified   Reason = "unspecified"       // 0.0.0.0, ::
	ReasonLoopback      Reason = "loopback"          // 127.0.0.0/8, ::1
	ReasonPrivate       Reason = "private"           // RFC 1918, ULA fc00::/7
	ReasonCGNAT         Reason = "carrier-grade NAT" // RFC 6598 100.64.0.0/10
	ReasonLinkLocal     Reason = "link-local"        // 169.254.0.0/16, fe80::/10
	ReasonMetadata      Reason = "cloud metadata"    // 169.254.169.254
	ReasonMulticast     Reason = "multicast"         // 224.0.0.0/4, ff00::/8
	ReasonBroadcast     Reason = "broadcast"         // 255.255.255.255
	ReasonReserved      Reason = "reserved"          // 0/8, 192.0.0/24, 198.18/15, 240/4, non-global IPv6…
	ReasonDocumentation Reason = "documentation"     // TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20
	ReasonTeredo        Reason = "Teredo"            // 2001::/32
	ReasonNotAllowed    Reason = "not in the allowlist"
	ReasonInvalid       Reason = "not an IP address"
)

// RefusedError is the error of a call refused because of the address it would connect to. Get it
// with errors.As from any error Do returns.
type RefusedError struct {
	// Addr is the address the connection would have gone to.
	Addr netip.Addr
	// Reason is why it is refused.
	Reason Reason
	// Embedded is the IPv4 address judged in Addr's place when Addr embeds one (IPv4-mapped,
	// NAT64 or 6to4); the zero Addr otherwise.
	Embedded netip.Addr
}

// Error says which address and why, without a prefix, for "refused: " + err.Error():
// "127.0.0.1 is loopback", "64:ff9b::7f00:1 is loopback (embeds 127.0.0.1)".
func (e *RefusedError) Error() string {
	s := e.Addr.String() + " is " + string(e.Reason)
	if e.Embedded.IsValid() {
		s += " (embeds " + e.Embedded.String() + ")"
	}
	return s
}

// Check is the rule the client applies to every address it is about to connect to. With an
// empty allowlist an address is refused if Classify gives a reason; with an allowlist it is
// allowed exactly when a prefix contains it (IPv4-mapped addresses are matched as their IPv4
// form), whatever its class: the allowlist is "deliver only to these addresses".
//
// Check returns nil or a *RefusedError. Callers may use it to refuse an endpoint whose URL names
// a literal address before anything is sent.
func Check(a netip.Addr, allow []netip.Prefix) error {
	a = a.WithZone("")
	if len(allow) > 0 {
		u := a.Unmap()
		for _, p := range allow {
			if p.Contains(u) || p.Contains(a) {
				return nil
			}
		}
		return &RefusedError{Addr: a, Reason: ReasonNotAllowed}
	}
	r, embedded := classify(a)
	if r == "" {
		return nil
	}
	return &RefusedError{Addr: a, Reason: r, Embedded: embedded}
}

// Classify says why a is not a public address, or returns "" when it is one. IPv6 forms that
// embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/96, 6to4
// 2002::/16) are classified as the IPv4 address they embed. An IPv6 address outside 2000::/3 that
// is none of those forms is reserved. A zone is ignored; the zero Addr is ReasonInvalid.
func Classify(a netip.Addr) Reason {
	r, _ := classify(a)
	return r
}

// classify is Classify, also returning the embedded IPv4 address it judged, if any.
func classify(a netip.Addr) (Reason, netip.Addr) {
	switch {
	case !a.IsValid():
		return ReasonInvalid, netip.Addr{}
	case a.Is4():
		return classify4(a.As4()), netip.Addr{}
	}
	b := a.As16()
	var v4 [4]byte
	switch {
	case a.Is4In6(): // ::ffff:a.b.c.d
		copy(v4[:], b[12:])
	case is96(b, 0, 0x64, 0xff, 0x9b): // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052)
		copy(v4[:], b[12:])
	case is96(b, 0, 0x64, 0xff, 0x9b, 0, 1): // NAT64 local-use 64:ff9b:1::/96 (RFC 8215)
		copy(v4[:], b[12:])
	case b[0] == 0x20 && b[1] == 0x02: // 6to4 2002:a.b.c.d::/48 (RFC 3056)
		copy(v4[:], b[2:6])
	default:
		return classify6(a, b), netip.Addr{}
	}
	embedded := netip.AddrFrom4(v4)
	r := classify4(v4)
	if r == "" {
		return "", netip.Addr{}
	}
	return r, embedded
}

// is96 reports whether the first 96 bits of b are prefix followed by zeros.
func is96(b [16]byte, prefix ...byte) bool {
	for i, x := range b[:12] {
		want := byte(0)
		if i < len(prefix) {
			want = prefix[i]
		}
		if x != want {
			return false
		}
	}
	return true
}

// classify4 classifies an IPv4 address (RFC 6890 and the IANA special-purpose registry).
func classify4(b [4]byte) Reason {
	switch {
	case b == [4]byte{0, 0, 0, 0}:
		return ReasonUnspecified
	case b == [4]byte{255, 255, 255, 255}:
		return ReasonBroadcast
	case b == [4]byte{169, 254, 169, 254}:
		return ReasonMetadata
	case b[0] == 0: // "this network" 0.0.0.0/8
		return ReasonReserved
	case b[0] == 127:
		return ReasonLoopback
	case b[0] == 10, b[0] == 172 && b[1]&0xf0 == 16, b[0] == 192 && b[1] == 168:
		return ReasonPrivate
	case b[0] == 100 && b[1]&0xc0 == 64:
		return ReasonCGNAT
	case b[0] == 169 && b[1] == 254:
		return ReasonLinkLocal
	case b[0] == 192 && b[1] == 0 && b[2] == 0, b[0] == 192 && b[1] == 88 && b[2] == 99,
		b[0] == 198 && b[1]&0xfe == 18:
		// IETF protocol assignments 192.0.0.0/24, the old 6to4 relay anycast 192.88.99.0/24,
		// benchmarking 198.18.0.0/15.
		return ReasonReserved
	case b[0] == 192 && b[1] == 0 && b[2] == 2,
		b[0] == 198 && b[1] == 51 && b[2] == 100,
		b[0] == 203 && b[1] == 0 && b[2] == 113:
		return ReasonDocumentation
	case b[0]&0xf0 == 224:
		return ReasonMulticast
	case b[0]&0xf0 == 240: // class E, "reserved for future use"
		return ReasonReserved
	}
	return ""
}

// classify6 classifies an IPv6 address that embeds no IPv4 address.
func classify6(a netip.Addr, b [16]byte) Reason {
	switch {
	case a.IsUnspecified():
		return ReasonUnspecified
	case a.IsLoopback():
		return ReasonLoopback
	case b[0]&0xfe == 0xfc: // ULA fc00::/7
		return ReasonPrivate
	case b[0] == 0xfe && b[1]&0xc0 == 0x80: // fe80::/10
		return ReasonLinkLocal
	case b[0] == 0xff:
		return ReasonMulticast
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0: // 2001::/32
		return ReasonTeredo
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8, // 2001:db8::/32
		b[0] == 0x3f && b[1] == 0xff && b[2]&0xf0 == 0: // 3fff::/20
		return ReasonDocumentation
	case b[0] == 0x20 && b[1] == 0x01 && b[2]&0xfe == 0: // IETF protocol assignments 2001::/23
		return ReasonReserved
	case b[0]&0xe0 != 0x20:
		// Outside global unicast 2000::/3: IPv4-compatible ::/96, discard 100::/64, local-use
		// NAT64 prefixes other than 64:ff9b:1::/96, site-local fec0::/10, unassigned.
		return ReasonReserved
	}
	return ""
}
