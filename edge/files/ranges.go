package files

import (
	"bytes"
	"math"

	"github.com/valyala/fasthttp"
)

// outcome is what a request's preconditions and Range ask of a file.
type outcome int

const (
	sendWhole              outcome = iota // 200, the whole file
	sendPart                              // 206, one range
	sendNotModified                       // 304
	sendPreconditionFailed                // 412
	sendUnsatisfiable                     // 416
)

// plan is the answer to give: its outcome and, for sendPart, the range.
type plan struct {
	outcome       outcome
	start, length int64
}

// Request header names in canonical form.
var (
	keyIfMatch           = []byte(fasthttp.HeaderIfMatch)
	keyIfNoneMatch       = []byte(fasthttp.HeaderIfNoneMatch)
	keyIfModifiedSince   = []byte(fasthttp.HeaderIfModifiedSince)
	keyIfUnmodifiedSince = []byte(fasthttp.HeaderIfUnmodifiedSince)
	keyIfRange           = []byte(fasthttp.HeaderIfRange)
	keyRange             = []byte(fasthttp.HeaderRange)
)

// decide evaluates the preconditions and the Range of a GET (get) or HEAD request for a file
// described by m, in RFC 9110 13.2.2's order. It does not allocate.
func decide(h *fasthttp.RequestHeader, m *meta, get bool) plan {
	if v := h.PeekBytes(keyIfMatch); len(v) > 0 {
		if !etagListMatches(v, m.etag, true) {
			return plan{outcome: sendPreconditionFailed}
		}
	} else if v := h.PeekBytes(keyIfUnmodifiedSince); len(v) > 0 && m.lastModified != nil {
		if t, err := fasthttp.ParseHTTPDate(v); err == nil && m.modified > t.Unix() {
			return plan{outcome: sendPreconditionFailed}
		}
	}
	if v := h.PeekBytes(keyIfNoneMatch); len(v) > 0 {
		if etagListMatches(v, m.etag, false) {
			return plan{outcome: sendNotModified}
		}
	} else if v := h.PeekBytes(keyIfModifiedSince); len(v) > 0 && m.lastModified != nil {
		if t, err := fasthttp.ParseHTTPDate(v); err == nil && m.modified <= t.Unix() {
			return plan{outcome: sendNotModified}
		}
	}
	// Range is defined for GET only (RFC 9110 14.2).
	if !get {
		return plan{outcome: sendWhole, length: m.size}
	}
	r := h.PeekBytes(keyRange)
	if len(r) == 0 {
		return plan{outcome: sendWhole, length: m.size}
	}
	if ir := h.PeekBytes(keyIfRange); len(ir) > 0 && !ifRangeMatches(ir, m) {
		return plan{outcome: sendWhole, length: m.size}
	}
	return parseRange(r, m.size)
}

// ifRangeMatches reports whether an If-Range value names the file's current representation: a
// strong entity tag equal to its ETag, or a date equal to its Last-Modified.
func ifRangeMatches(v []byte, m *meta) bool {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && (v[0] == '"' || bytes.HasPrefix(v, []byte("W/"))) {
		return m.etag != nil && bytes.Equal(v, m.etag)
	}
	if m.lastModified == nil {
		return false
	}
	t, err := fasthttp.ParseHTTPDate(v)
	return err == nil && t.Unix() == m.modified
}

// etagListMatches reports whether an If-Match or If-None-Match value (a list of entity tags, or
// "*") names etag: by strong comparison (If-Match: a weak tag never matches) or weak comparison
// (If-None-Match: "W/" ignored). A file without an ETag matches "*" only.
func etagListMatches(list, etag []byte, strong bool) bool {
	for len(list) > 0 {
		var tok []byte
		if i := bytes.IndexByte(list, ','); i >= 0 {
			tok, list = list[:i], list[i+1:]
		} else {
			tok, list = list, nil
		}
		tok = bytes.TrimSpace(tok)
		if len(tok) == 1 && tok[0] == '*' {
			return true
		}
		if bytes.HasPrefix(tok, []byte("W/")) {
			if strong {
				continue
			}
			tok = tok[2:]
		}
		if etag != nil && bytes.Equal(tok, etag) {
			return true
		}
	}
	return false
}

// parseRange reads a Range value (RFC 9110 14.1.1, 14.2) against a file of size bytes:
//
//   - "bytes=" (the unit case-insensitive) and one or more comma-separated ranges, with optional
//     whitespace and empty list elements;
//   - first-last (last clamped to the end), first- (to the end), -n (the last n bytes, or all);
//   - a range is satisfiable when its first byte is inside the file (a suffix: n > 0).
//
// One satisfiable range is a part; none is 416; several are ignored (the whole file), as is
// anything malformed: another unit, a missing "=", a non-digit, last below first, an empty set.
// An empty file has no byte to send in a part: first- forms are unsatisfiable, a suffix is
// ignored. It does not allocate.
func parseRange(v []byte, size int64) plan {
	whole := plan{outcome: sendWhole, length: size}
	eq := bytes.IndexByte(v, '=')
	if eq < 0 || !bytes.EqualFold(bytes.TrimSpace(v[:eq]), []byte("bytes")) {
		return whole
	}
	set := v[eq+1:]
	var found plan
	satisfiable, specs := 0, 0
	for len(set) > 0 {
		var spec []byte
		if i := bytes.IndexByte(set, ','); i >= 0 {
			spec, set = set[:i], set[i+1:]
		} else {
			spec, set = set, nil
		}
		spec = bytes.Trim(spec, " \t")
		if len(spec) == 0 {
			continue // an empty list element (RFC 9110 5.6.1)
		}
		specs++
		dash := bytes.IndexByte(spec, '-')
		if dash < 0 {
			return whole
		}
		firstB, lastB := spec[:dash], spec[dash+1:]
		var start, length int64
		ok := false
		if len(firstB) == 0 {
			// A suffix: the last n bytes.
			n, valid := parseDigits(lastB)
			if !valid {
				return whole
			}
			if n > 0 && size > 0 {
				length = min(n, size)
				start, ok = size-length, true
			} else if n > 0 {
				return whole // an empty file: nothing a part could hold
			}
		} else {
			first, valid := parseDigits(firstB)
			if !valid {
				return whole
			}
			last := int64(math.MaxInt64)
			if len(lastB) > 0 {
				if last, valid = parseDigits(lastB); !valid {
					return whole
				}
				if last < first {
					return whole // an invalid range makes the whole set invalid
				}
			}
			if first < size {
				start, length, ok = first, min(last, size-1)-first+1, true
			}
		}
		if ok {
			satisfiable++
			found = plan{outcome: sendPart, start: start, length: length}
		}
	}
	switch {
	case specs == 0:
		return whole
	case satisfiable == 0:
		return plan{outcome: sendUnsatisfiable}
	case satisfiable == 1 && specs == 1:
		return found
	default:
		return whole
	}
}

// parseDigits parses a non-empty string of ASCII digits; values past MaxInt64 saturate (a first
// byte that large is past any file; a last byte that large means the end).
func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + d
	}
	return n, true
}
