package cache_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"vitrine/edge/cache"
)

// filled returns n copies of c: bodies whose length and content say which one Body picked.
func filled(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

// Literal entries with distinct bodies of controlled sizes.
var (
	// brSmallest is the usual shape: br < zstd < gzip < identity.
	brSmallest = &cache.Entry{Identity: filled('i', 100), Brotli: filled('b', 60), Zstd: filled('z', 70), Gzip: filled('g', 80)}
	// gzipSmallest checks that Body picks by size, not by a fixed order.
	gzipSmallest = &cache.Entry{Identity: filled('i', 100), Brotli: filled('b', 90), Zstd: filled('z', 85), Gzip: filled('g', 50)}
	// tie checks the preference br, zstd, gzip among equal sizes.
	tie = &cache.Entry{Identity: filled('i', 100), Brotli: filled('b', 60), Zstd: filled('z', 60), Gzip: filled('g', 60)}
	// gzipOnly has one compressed form.
	gzipOnly = &cache.Entry{Identity: filled('i', 100), Gzip: filled('g', 50)}
	// identityOnly is a body too small to compress.
	identityOnly = &cache.Entry{Identity: filled('i', 100)}
)

type bodyCase struct {
	name   string
	entry  *cache.Entry
	header []byte // nil: header missing
	want   string // Content-Encoding, "" for identity
}

var bodyCases = []bodyCase{
	{"missing header", brSmallest, nil, ""},
	{"empty header", brSmallest, []byte(""), ""},
	{"gzip", brSmallest, []byte("gzip"), "gzip"},
	{"GZIP upper case", brSmallest, []byte("GZIP"), "gzip"},
	{"x-gzip", brSmallest, []byte("x-gzip"), "gzip"},
	{"zstd", brSmallest, []byte("zstd"), "zstd"},
	{"mixed case br and Q", brSmallest, []byte("Br;Q=0.5"), "br"},
	{"gzip q=0", brSmallest, []byte("gzip;q=0"), ""},
	{"br q=0.5 and gzip: smallest wins", brSmallest, []byte("br;q=0.5, gzip"), "br"},
	{"q weights do not override size", brSmallest, []byte("gzip;q=1.0, br;q=0.1"), "br"},
	{"browser", brSmallest, []byte("gzip, deflate, br, zstd"), "br"},
	{"no spaces", brSmallest, []byte("gzip,br"), "br"},
	{"star", brSmallest, []byte("*"), "br"},
	{"star q=0.1", brSmallest, []byte("*;q=0.1"), "br"},
	{"star q=0", brSmallest, []byte("*;q=0"), ""},
	{"star refused, gzip listed", brSmallest, []byte("*;q=0, gzip"), "gzip"},
	{"star with br refused", brSmallest, []byte("*, br;q=0"), "zstd"},
	{"star with gzip refused", brSmallest, []byte("gzip;q=0, *"), "br"},
	{"identity", brSmallest, []byte("identity"), ""},
	{"identity refused, nothing else", brSmallest, []byte("identity;q=0"), ""},
	{"identity and star refused", brSmallest, []byte("identity;q=0, *;q=0"), ""},
	{"deflate only", brSmallest, []byte("deflate"), ""},
	{"compress, deflate, gzip q=0.1", brSmallest, []byte("compress, deflate, gzip;q=0.1"), "gzip"},
	{"zstd, br q=0", brSmallest, []byte("zstd, br;q=0"), "zstd"},
	{"whitespace around element", brSmallest, []byte("  gzip  ,  deflate  "), "gzip"},
	{"whitespace around semicolon", brSmallest, []byte("gzip ; q=0.8"), "gzip"},
	{"whitespace around equals", brSmallest, []byte("gzip;q = 0.8"), "gzip"},
	{"whitespace around refusal", brSmallest, []byte("br ;  q = 0 , zstd"), "zstd"},
	{"tabs", brSmallest, []byte("\tbr\t;\tq=1\t"), "br"},
	{"q=0.000", brSmallest, []byte("br;q=0.000"), ""},
	{"q=0.", brSmallest, []byte("br;q=0."), ""},
	{"q=0.001", brSmallest, []byte("br;q=0.001"), "br"},
	{"q=1.000", brSmallest, []byte("br;q=1.000"), "br"},
	{"q=2 invalid", brSmallest, []byte("br;q=2"), ""},
	{"q=-1 invalid", brSmallest, []byte("br;q=-1"), ""},
	{"q=.5 invalid", brSmallest, []byte("br;q=.5"), ""},
	{"q=0.5x invalid", brSmallest, []byte("br;q=0.5x"), ""},
	{"q empty", brSmallest, []byte("br;q="), ""},
	{"q without value", brSmallest, []byte("br;q"), ""},
	{"two q, one zero", brSmallest, []byte("br;q=0.5;q=0"), ""},
	{"other parameter ignored", brSmallest, []byte("br;level=5"), "br"},
	{"other parameter and q=0", brSmallest, []byte("br; level=1; q=0"), ""},
	{"parameter named like q", brSmallest, []byte("br;qq=0"), "br"},
	{"listed twice, refusal wins", brSmallest, []byte("gzip, gzip;q=0"), ""},
	{"garbage semicolons", brSmallest, []byte(";;;"), ""},
	{"garbage commas", brSmallest, []byte(",,,"), ""},
	{"garbage equals", brSmallest, []byte("=;=,="), ""},
	{"unknown tokens", brSmallest, []byte("bro, b r, brgzip, gzip2"), ""},
	{"non-ASCII fold is not a match", brSmallest, []byte("zſtd"), ""},
	{"empty elements around gzip", brSmallest, []byte(", ,gzip, ,"), "gzip"},
	{"size beats preference", gzipSmallest, []byte("br, zstd, gzip"), "gzip"},
	{"size beats preference, star", gzipSmallest, []byte("*"), "gzip"},
	{"size among br and zstd", gzipSmallest, []byte("br, zstd"), "zstd"},
	{"tie prefers br", tie, []byte("*"), "br"},
	{"tie prefers zstd over gzip", tie, []byte("gzip, zstd"), "zstd"},
	{"only gzip stored, br asked", gzipOnly, []byte("br"), ""},
	{"only gzip stored, br and gzip asked", gzipOnly, []byte("br, gzip"), "gzip"},
	{"only gzip stored, star", gzipOnly, []byte("*"), "gzip"},
	{"nothing stored, star", identityOnly, []byte("*"), ""},
	{"nothing stored, gzip", identityOnly, []byte("gzip"), ""},
}

// wantBody returns the body of e for a Content-Encoding value.
func wantBody(t testing.TB, e *cache.Entry, encoding string) []byte {
	switch encoding {
	case "":
		return e.Identity
	case "br":
		return e.Brotli
	case "zstd":
		return e.Zstd
	case "gzip":
		return e.Gzip
	}
	t.Fatalf("unknown encoding %q", encoding)
	return nil
}

func TestBody(t *testing.T) {
	for _, tc := range bodyCases {
		t.Run(tc.name, func(t *testing.T) {
			body, enc := tc.entry.Body(tc.header)
			if string(enc) != tc.want {
				t.Fatalf("Body(%q) encoding = %q, want %q", tc.header, enc, tc.want)
			}
			if tc.want == "" && enc != nil {
				t.Fatalf("Body(%q) encoding = %q (non-nil), want nil for identity", tc.header, enc)
			}
			if want := wantBody(t, tc.entry, tc.want); !sameSlice(body, want) {
				t.Fatalf("Body(%q) returned %d bytes, not the entry's %q body", tc.header, len(body), tc.want)
			}
		})
	}
}

func TestBodyAllocs(t *testing.T) {
	for _, header := range []string{"", "gzip, deflate, br, zstd", "br;q=0.5, gzip;q=0.8, *;q=0", " x-gzip ; q = 0.001 ,identity;q=0"} {
		h := []byte(header)
		if n := testing.AllocsPerRun(1000, func() { brSmallest.Body(h) }); n != 0 {
			t.Errorf("Body(%q) allocates %v times per call, want 0", header, n)
		}
	}
}

// sameSlice reports whether a and b are the same slice (not merely equal bytes).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Reference semantics of Accept-Encoding for FuzzBody, written independently of the package:
// strings and regular expressions instead of a byte scanner.
var (
	qvalueRE = regexp.MustCompile(`^[01](\.[0-9]*)?$`)
	zeroRE   = regexp.MustCompile(`^0(\.0*)?$`)
)

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// referenceAccepted returns the set of stored codings ("br", "zstd", "gzip") header accepts.
func referenceAccepted(header string) map[string]bool {
	listed, accepted, refused := map[string]bool{}, map[string]bool{}, map[string]bool{}
	starAccepted, starRefused := false, false
	if header == "" {
		return accepted
	}
	for _, elem := range strings.Split(header, ",") {
		parts := strings.Split(elem, ";")
		name := lowerASCII(strings.Trim(parts[0], " \t"))
		if name == "x-gzip" {
			name = "gzip"
		}
		ok := true
		for _, p := range parts[1:] {
			k, v, hasValue := strings.Cut(p, "=")
			if lowerASCII(strings.Trim(k, " \t")) != "q" {
				continue
			}
			v = strings.Trim(v, " \t")
			if !hasValue || !qvalueRE.MatchString(v) || zeroRE.MatchString(v) {
				ok = false
			}
		}
		switch name {
		case "*":
			starAccepted = starAccepted || ok
			starRefused = starRefused || !ok
		case "br", "zstd", "gzip":
			listed[name] = true
			if ok {
				accepted[name] = true
			} else {
				refused[name] = true
			}
		}
	}
	result := map[string]bool{}
	for _, c := range []string{"br", "zstd", "gzip"} {
		if (accepted[c] && !refused[c]) || (!listed[c] && starAccepted && !starRefused) {
			result[c] = true
		}
	}
	return result
}

// referenceChoice returns the Content-Encoding Body should pick for e and header.
func referenceChoice(e *cache.Entry, header string) string {
	accepted := referenceAccepted(header)
	choice, size := "", len(e.Identity)
	for _, c := range []string{"br", "zstd", "gzip"} { // preference order: strict < keeps the first
		if b := wantBody(nil, e, c); accepted[c] && len(b) > 0 && len(b) < size {
			choice, size = c, len(b)
		}
	}
	return choice
}

func TestReferenceAgreesWithTable(t *testing.T) {
	for _, tc := range bodyCases {
		if got := referenceChoice(tc.entry, string(tc.header)); got != tc.want {
			t.Errorf("%s: reference picks %q, table says %q", tc.name, got, tc.want)
		}
	}
}

func FuzzBody(f *testing.F) {
	for _, tc := range bodyCases {
		f.Add(tc.header)
	}
	entries := []*cache.Entry{brSmallest, gzipSmallest, tie, gzipOnly, identityOnly}
	f.Fuzz(func(t *testing.T, header []byte) {
		for _, e := range entries {
			body, enc := e.Body(header)
			want := referenceChoice(e, string(header))
			if string(enc) != want {
				t.Fatalf("Body(%q) encoding = %q, reference wants %q", header, enc, want)
			}
			if !sameSlice(body, wantBody(t, e, string(enc))) {
				t.Fatalf("Body(%q) body is not the entry's %q body", header, enc)
			}
			if len(referenceAccepted(string(header))) == 0 && (enc != nil || !sameSlice(body, e.Identity)) {
				t.Fatalf("Body(%q) = %q, want identity: the header accepts no stored coding", header, enc)
			}
		}
	})
}
