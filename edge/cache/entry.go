package cache

import (
	"bytes"
	"sync/atomic"
)

// Dep is one validity dependency of an entry: the entry is valid while Ctr.Load() == Val.
// Counters are owned by the caller (per-tenant generation counters, per-entity counters, a
// tenant's "retired" flag); the cache only reads them. Ctr must not be nil.
type Dep struct {
	Ctr *atomic.Uint64
	Val uint64
}

// Entry is one cached response. It is immutable after Build and safe for concurrent readers;
// none of its slices may be modified once it has been built.
type Entry struct {
	// Key is the full cache key. A lookup compares it, so a 64-bit hash collision is a miss,
	// never a wrong body.
	Key []byte
	// Deps are the counters the entry depends on; see Valid.
	Deps []Dep
	// Expires is the unix time in nanoseconds from which the entry is invalid (a scheduled
	// change, e.g. a flash sale boundary); 0 means never.
	Expires int64
	// Status is the HTTP status of the response.
	Status int
	// ContentType is the Content-Type of the identity body.
	ContentType []byte
	// ETag is a strong ETag, quoted, derived from the identity body. Every encoding of the entry
	// is sent with it: it names the content, not the bytes on the wire.
	ETag []byte
	// Headers are extra response headers rendered once (e.g. X-WP-Total), as name/value pairs.
	Headers [][2][]byte
	// Route is an index the caller uses for metrics; the cache does not interpret it.
	Route int
	// Identity is the uncompressed body.
	Identity []byte
	// Gzip, Zstd and Brotli are the compressed bodies. Each is nil when the body was too small
	// to be worth compressing, when that compression did not shrink it, or when no request has
	// asked for it yet (BuildFor, Upgrade).
	Gzip, Zstd, Brotli []byte
	// tried is the set of codings compression was attempted for (so that a coding that did not
	// shrink the body is not attempted again by Upgrade).
	tried uint8
	// lines holds what Lines made; copies of the entry (an alias under another key) share it.
	lines *linesCell
}

// linesCell holds an entry's lines once made (a nil slice: the maker declined).
type linesCell struct{ p atomic.Pointer[[]byte] }

// Lines returns the response header lines the caller derives from the entry alone (its ETag and
// Headers, and the caller's own headers that are the same for every answer of the entry), made
// by make on the first call and kept with the entry, so that a hit writes them as one block
// (pipeline.SetLines). make must return the same lines every time for the same entry: calls may
// race, and then each runs make and all return the first result kept. Its result may be nil
// (none: the caller sets its headers one by one). Entries not made by Build keep nothing: make
// runs on every call. Lines does not allocate once the lines are kept; their bytes are not
// counted in the entry's cost (a few hundred bytes at most against its bodies).
func (e *Entry) Lines(make func(*Entry) []byte) []byte {
	if e.lines == nil {
		return make(e)
	}
	if p := e.lines.p.Load(); p != nil {
		return *p
	}
	b := make(e)
	e.lines.p.CompareAndSwap(nil, &b)
	return *e.lines.p.Load()
}

// Valid reports whether every dependency still holds and the entry has not expired at now (unix
// nanoseconds). An entry whose Expires is T is invalid from T on.
func (e *Entry) Valid(now int64) bool {
	if e.Expires != 0 && now >= e.Expires {
		return false
	}
	for i := range e.Deps {
		if e.Deps[i].Ctr.Load() != e.Deps[i].Val {
			return false
		}
	}
	return true
}

// Content-Encoding values Body returns. They are shared by every caller and must not be
// modified; the full slice expressions make an append copy instead of writing into them.
var (
	encodingBr   = []byte("br")[:2:2]
	encodingZstd = []byte("zstd")[:4:4]
	encodingGzip = []byte("gzip")[:4:4]
)

// Body picks the representation for an Accept-Encoding header value: the smallest available
// encoding the client accepts (q > 0), preferring br, then zstd, then gzip when sizes tie, else
// identity. It returns the body and the Content-Encoding value to send (nil for identity). Both
// are shared and must not be modified. Body does not allocate.
//
// Parsing follows RFC 9110 section 12.5.3: codings are case-insensitive, may carry a q weight
// (";q=0.5", whitespace allowed around the separators), q=0 means not acceptable, "*" matches
// every coding not listed explicitly and "x-gzip" is gzip. An empty or missing header means
// identity only. A weight that is not a valid qvalue makes its element unacceptable, and when a
// coding is listed twice a refusal wins. Identity is always the fallback, even when the header
// refuses it ("identity;q=0"): a cached read never fails for want of an encoding.
func (e *Entry) Body(acceptEncoding []byte) (body []byte, contentEncoding []byte) {
	if len(e.Brotli) == 0 && len(e.Zstd) == 0 && len(e.Gzip) == 0 {
		return e.Identity, nil
	}
	return e.bodyFor(acceptedCodings(acceptEncoding))
}

// Serve is Upgrade then Body with one parse of the Accept-Encoding value: upgraded is the entry
// to store in e's place when the client prefers a coding e has not tried (nil otherwise), and
// body and contentEncoding come from it, or from e.
func (e *Entry) Serve(acceptEncoding []byte) (upgraded *Entry, body, contentEncoding []byte) {
	if len(acceptEncoding) == 0 {
		return nil, e.Identity, nil
	}
	accepted := acceptedCodings(acceptEncoding)
	if upgraded = e.upgradeFor(accepted); upgraded != nil {
		e = upgraded
	}
	body, contentEncoding = e.bodyFor(accepted)
	return upgraded, body, contentEncoding
}

// bodyFor is Body for a parsed set of accepted codings.
func (e *Entry) bodyFor(accepted uint8) (body []byte, contentEncoding []byte) {
	body = e.Identity
	if accepted&codingBr != 0 && len(e.Brotli) > 0 && len(e.Brotli) < len(body) {
		body, contentEncoding = e.Brotli, encodingBr
	}
	if accepted&codingZstd != 0 && len(e.Zstd) > 0 && len(e.Zstd) < len(body) {
		body, contentEncoding = e.Zstd, encodingZstd
	}
	if accepted&codingGzip != 0 && len(e.Gzip) > 0 && len(e.Gzip) < len(body) {
		body, contentEncoding = e.Gzip, encodingGzip
	}
	return body, contentEncoding
}

// preferred returns the stored coding a request accepting the set accepted is best served
// (br, then zstd, then gzip, as Body breaks ties), or 0 for none.
func preferred(accepted uint8) uint8 {
	for _, c := range []uint8{codingBr, codingZstd, codingGzip} {
		if accepted&c != 0 {
			return c
		}
	}
	return 0
}

// Upgrade returns a copy of e that also holds the coding an Accept-Encoding value prefers, when
// e lacks it and has not tried it (its body is worth compressing); nil when e already serves
// that client as well as it can. The copy has its own allocation; e is not changed, so readers
// holding it are unaffected. The caller stores the copy in e's place.
func (e *Entry) Upgrade(acceptEncoding []byte) *Entry {
	if len(acceptEncoding) == 0 || e.tried == codingAll || len(e.Identity) < MinCompressSize {
		return nil // the common hit: nothing to parse
	}
	return e.upgradeFor(acceptedCodings(acceptEncoding))
}

// upgradeFor is Upgrade for a parsed set of accepted codings.
func (e *Entry) upgradeFor(accepted uint8) *Entry {
	want := preferred(accepted)
	if want == 0 || e.tried&want != 0 || len(e.Identity) < MinCompressSize {
		return nil
	}
	return build(e.Key, e.Status, string(e.ContentType), e.Identity, e.Deps, e.Expires, e.Headers, e.Route, e.tried|want, e)
}

// The content codings the cache stores, as bits of a set.
const (
	codingBr uint8 = 1 << iota
	codingZstd
	codingGzip

	codingAll = codingBr | codingZstd | codingGzip
)

// acceptedCodings returns the set of stored codings an Accept-Encoding value accepts with q > 0.
func acceptedCodings(h []byte) uint8 {
	var listed, accepted, refused uint8
	starAccepted, starRefused := false, false
	for len(h) > 0 {
		elem := h
		h = nil
		if i := bytes.IndexByte(elem, ','); i >= 0 {
			elem, h = elem[:i], elem[i+1:]
		}
		name, params := elem, []byte(nil)
		if i := bytes.IndexByte(elem, ';'); i >= 0 {
			name, params = elem[:i], elem[i+1:]
		}
		name = trimOWS(name)
		ok := weightPositive(params)
		if len(name) == 1 && name[0] == '*' {
			if ok {
				starAccepted = true
			} else {
				starRefused = true
			}
			continue
		}
		c := codingOf(name)
		if c == 0 {
			continue
		}
		listed |= c
		if ok {
			accepted |= c
		} else {
			refused |= c
		}
	}
	result := accepted &^ refused
	if starAccepted && !starRefused {
		result |= codingAll &^ listed
	}
	return result
}

// codingOf returns the coding bit for a content-coding token, 0 for codings the cache does not
// store (identity, deflate, compress, unknown tokens).
func codingOf(name []byte) uint8 {
	switch {
	case equalFoldASCII(name, "br"):
		return codingBr
	case equalFoldASCII(name, "zstd"):
		return codingZstd
	case equalFoldASCII(name, "gzip"), equalFoldASCII(name, "x-gzip"):
		return codingGzip
	}
	return 0
}

// weightPositive reports whether the parameters of an Accept-Encoding element (the text after
// its first ';') give it a positive weight. No q parameter means q=1; parameters other than q
// are ignored; a q without a value or with one that is not a valid qvalue counts as zero, and so
// does any zero q when there are several.
func weightPositive(params []byte) bool {
	positive := true
	for len(params) > 0 {
		p := params
		params = nil
		if i := bytes.IndexByte(p, ';'); i >= 0 {
			p, params = p[:i], p[i+1:]
		}
		name, value, hasValue := p, []byte(nil), false
		if i := bytes.IndexByte(p, '='); i >= 0 {
			name, value, hasValue = p[:i], p[i+1:], true
		}
		name = trimOWS(name)
		if len(name) != 1 || (name[0] != 'q' && name[0] != 'Q') {
			continue
		}
		if !hasValue || !qvaluePositive(trimOWS(value)) {
			positive = false
		}
	}
	return positive
}

// qvaluePositive reports whether v is a qvalue ("0" or "1", optionally followed by "." and
// digits) greater than zero. More than the three decimals RFC 9110 allows are tolerated; anything
// else is not a qvalue and reports false.
func qvaluePositive(v []byte) bool {
	if len(v) == 0 || (v[0] != '0' && v[0] != '1') {
		return false
	}
	positive := v[0] == '1'
	if len(v) == 1 {
		return positive
	}
	if v[1] != '.' {
		return false
	}
	for _, d := range v[2:] {
		if d < '0' || d > '9' {
			return false
		}
		if d != '0' {
			positive = true
		}
	}
	return positive
}

// trimOWS removes HTTP optional whitespace (spaces and horizontal tabs) from both ends of b.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFoldASCII reports whether b equals the lower-case ASCII token s, ignoring ASCII case.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
