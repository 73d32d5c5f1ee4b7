package pipeline

import (
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"
)

// The names of Vitrine's own headers, spelled here once.
const (
	// HeaderTenantSlug names the store of a request when its Host does not.
	HeaderTenantSlug = "X-Tenant-Slug"
	// HeaderMinVersion is a read's floor: answer from a replica at this version or later.
	HeaderMinVersion = "Vitrine-Min-Version"
	// HeaderWriteVersion is the tenant log's version after a write.
	HeaderWriteVersion = "Vitrine-Write-Version"
	// HeaderReplicaVersion is the version of the replica that answered.
	HeaderReplicaVersion = "Vitrine-Replica-Version"
	// HeaderEdgeAuth carries the edge secret on requests an edge forwards: the origin believes
	// Vitrine-Client-IP and the request id only on requests that carry it.
	HeaderEdgeAuth = "Vitrine-Edge-Auth"
)

var (
	keyReplicaVersion = []byte(HeaderReplicaVersion)
	keyWriteVersion   = []byte(HeaderWriteVersion)
)

// SetReplicaVersion sets Vitrine-Replica-Version (without allocating).
func SetReplicaVersion(h *fasthttp.ResponseHeader, v int64) {
	var b [20]byte
	h.SetCanonical(keyReplicaVersion, strconv.AppendInt(b[:0], v, 10))
}

// SetWriteVersion sets Vitrine-Write-Version.
func SetWriteVersion(h *fasthttp.ResponseHeader, v int64) {
	var b [20]byte
	h.SetCanonical(keyWriteVersion, strconv.AppendInt(b[:0], v, 10))
}

// Headers are the request headers the pipeline reads, found in one pass over the request's
// headers: one fasthttp Peek per header would normalise its key each time (measured: 13% of a
// cache hit). The slices point into the request and are valid until the handler returns.
type Headers struct {
	TenantSlug     []byte
	Origin         []byte
	RequestID      []byte
	Authorization  []byte
	Cookie         []byte
	MinVersion     []byte
	AcceptEncoding []byte
	IfNoneMatch    []byte
}

// Scan fills hs from a request's headers (keys are in canonical form after fasthttp's parse).
func (hs *Headers) Scan(h *fasthttp.RequestHeader) {
	*hs = Headers{}
	for k, v := range h.All() {
		switch len(k) {
		case 6:
			switch string(k) {
			case "Origin":
				hs.Origin = v
			case "Cookie":
				hs.Cookie = v
			}
		case 12:
			if string(k) == HeaderRequestID {
				hs.RequestID = v
			}
		case 13:
			switch string(k) {
			case HeaderTenantSlug:
				hs.TenantSlug = v
			case "Authorization":
				hs.Authorization = v
			case "If-None-Match":
				hs.IfNoneMatch = v
			}
		case 15:
			if string(k) == "Accept-Encoding" {
				hs.AcceptEncoding = v
			}
		case 19:
			if string(k) == HeaderMinVersion {
				hs.MinVersion = v
			}
		}
	}
}

// AdminSessionCookie is the one cookie Vitrine honours as a credential: the session of the
// administration pages under /cms-admin (origin/authorize.go sets it). Every other cookie (a
// storefront's analytics or consent cookies) is the browser's business, not Vitrine's.
const AdminSessionCookie = "vitrine_admin_session"

// Anonymous reports whether the request carries no credential Vitrine honours: no
// Authorization header (application passwords, customer tokens, server keys; a malformed one is
// the origin's to refuse, as WordPress answers 401 for a bad credential even on public reads)
// and no AdminSessionCookie. Other cookies do not make a request credentialed: the replica's
// answer to it is the origin's answer to it. Only anonymous requests may be answered from the
// replica and shared caches. It does not allocate.
func (hs *Headers) Anonymous() bool {
	return len(hs.Authorization) == 0 && !HasCookie(hs.Cookie, AdminSessionCookie)
}

// HasCookie reports whether a Cookie header value names the cookie name exactly (RFC 6265
// cookie-pairs separated by ";"). It does not allocate.
func HasCookie(header []byte, name string) bool {
	for len(header) > 0 {
		pair := header
		if i := bytes.IndexByte(header, ';'); i >= 0 {
			pair, header = header[:i], header[i+1:]
		} else {
			header = nil
		}
		pair = bytes.TrimLeft(pair, " \t")
		n := pair
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			n = pair[:i]
		}
		if string(bytes.TrimRight(n, " \t")) == name {
			return true
		}
	}
	return false
}

// AssignRequestID is the function of the same name, using an already scanned id.
func (hs *Headers) AssignRequestID(ctx *fasthttp.RequestCtx, g *RequestIDs) []byte {
	if ValidRequestID(hs.RequestID) {
		ctx.Response.Header.SetCanonical(keyRequestID, hs.RequestID)
	} else {
		var buf [48]byte
		ctx.Response.Header.SetCanonical(keyRequestID, g.Next(buf[:0]))
	}
	return ctx.Response.Header.PeekCanonical(keyRequestID)
}

// SetLines adds header lines to h with one fasthttp call instead of one per header: lines is
// "Name: value\r\n" repeated, every name a canonical header name that h does not hold yet and
// fasthttp treats as an ordinary header (not Content-Type, Content-Length, Content-Encoding,
// Connection, Server, Set-Cookie, Transfer-Encoding, Date or Trailer), and every value free of CR
// and LF (as fasthttp would leave it: it replaces them with spaces). The lines are written as
// given, and h.Peek finds none of them but the last, so SetLines is for headers nothing reads
// back in process.
//
// Each header fasthttp sets costs a copy of its value, a scan for line breaks, a search of the
// headers set so far and a copy of name and value: about 270 instructions, against 20 per line
// for SetLines, which sets the whole block as the name of its last line. It does not allocate
// (fasthttp copies the lines into the response). lines without a final line break are ignored.
func SetLines(h *fasthttp.ResponseHeader, lines []byte) {
	end := len(lines) - 2 // the last line's CR
	if end < 1 || lines[end] != '\r' || lines[end+1] != '\n' {
		return
	}
	// The last line is short (a version, a count): two byte loops over it cost less than
	// bytes.LastIndexByte and bytes.Index with their setup.
	start := end - 1
	for start >= 0 && lines[start] != '\n' {
		start--
	}
	sep := start + 1
	for sep < end && lines[sep] != ':' {
		sep++
	}
	if sep == start+1 || sep+1 >= end || lines[sep+1] != ' ' {
		return
	}
	h.SetCanonical(lines[:sep], lines[sep+2:end])
}

// AppendLine appends the header line "name: value\r\n" for SetLines.
func AppendLine(dst, name, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	dst = append(dst, value...)
	return append(dst, '\r', '\n')
}

// AppendIntLine appends the header line "name: v\r\n" for SetLines.
func AppendIntLine(dst, name []byte, v int64) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '\r', '\n')
}
