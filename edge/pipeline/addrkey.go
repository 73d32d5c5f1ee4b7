package pipeline

import "net/netip"

// LimitKey returns the address a per-client limit counts a client under: an IPv4 address
// itself (an IPv4-mapped IPv6 address is its IPv4 address), an IPv6 address its /64 network.
// One IPv6 subscriber is given a whole /64 (RFC 6177 recommends a /64 or more per site, and
// SLAAC needs one), so keying by /128 would hand each client 2^64 buckets. The invalid address
// stays invalid. LimitKey does not allocate.
func LimitKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if !a.Is6() {
		return a
	}
	b := a.As16()
	clear(b[8:])
	return netip.AddrFrom16(b)
}

// LimitKeyString is LimitKey for an address in text (the form ClientIP returns): the key's
// text, or the input unchanged when it is not an address.
func LimitKeyString(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return s
	}
	return LimitKey(a).String()
}
