package cache

import (
	"encoding/hex"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

// MinCompressSize is the body size under which Build stores the identity body only: below it the
// compressed forms save a few dozen bytes at best and cost a content-coding on every response.
const MinCompressSize = 256

// Compression levels, chosen by measurement: BenchmarkLevels (levels_test.go) on the product-list
// JSON of data_test.go, AMD EPYC, 2 vCPU shared with other work (load ~1.8, so ns/op is +-20%),
// go1.26, mean of -count 3. Sizes are in bytes.
//
//	2,546 B body               ns/op  size      20,506 B body                ns/op   size
//	gzip 1                    25,147   932      gzip 1                      79,710  4,764
//	gzip 5                    31,535   891      gzip 5                     141,678  4,303
//	gzip 6 (chosen)           36,381   895      gzip 6 (chosen)            179,522  4,257
//	gzip 9                    63,262   892      gzip 9                     447,855  4,161
//	zstd default (chosen)     21,961   899      zstd default (chosen)      101,708  4,374
//	zstd better               27,383   903      zstd better                112,161  4,206
//	zstd best                 98,597   892      zstd best                  461,095  4,064
//	br 4                      63,816   867      br 4                       169,686  4,237
//	br 5 (chosen)             69,133   794      br 5 (chosen)              264,612  3,875
//	br 6                      85,639   794      br 6                       306,716  3,861
//	br 9                     121,775   796      br 9                       514,306  3,844
//	br 11                  6,842,137   721      br 11                   38,303,606  3,529
//
// Build runs once per miss and key while the bytes are paid on every hit, so br and gzip sit at
// the last level before their curve flattens: br 5 is 8.5% smaller than br 4 on the list, br 6
// only 0.4% more for 16% more time and br 11 costs 145x the time; gzip 6 is 1% smaller than 5 on
// the list, gzip 9 2% more for 2.5x. gzip matters: many API clients (Go's net/http, most HTTP
// libraries) send "gzip" only. zstd is different: br 5 is smaller than every zstd level here, so
// Body serves zstd only to clients that accept zstd but not br, and its level buys little on the
// wire. zstd default is as small as better on the 2 KB body and 4% larger on the list, and its
// encoder state is ~1.6 MiB against ~20 MiB for better (heap after GC per concurrent encoder,
// 8 MiB window), which matters because the shared encoder keeps up to GOMAXPROCS of them.
//
// BenchmarkBuild, all three encodings plus the copies, 8 allocations: ~150 us for the 2,546 B
// body (gzip 895, zstd 899, br 794 bytes) and ~0.63 ms for the 20,506 B one (gzip 4,257,
// zstd 4,374, br 3,875), medians of -count 5. That is 15-20% more than the sum of the three
// compressions measured alone, most likely because back to back the compressors evict each
// other's tables from the CPU caches (a bare loop of the three calls measures the same as Build).
//
// gzip goes through fasthttp.AppendGzipBytesLevel, which is klauspost/compress/gzip with pooled
// writers: a fresh gzip.NewWriterLevel per body allocates 1,083,760 bytes and takes 162 us on the
// 2,546 B body (526 us on the 20,506 B one) for the same output.
const (
	gzipLevel   = 6                 // klauspost gzip, via fasthttp's writer pool
	zstdLevel   = zstd.SpeedDefault // klauspost zstd
	brotliLevel = 5                 // fasthttp (go-brrr)
)

// zstdEncoder is shared by every Build: EncodeAll is safe for concurrent use, and the encoder
// keeps up to GOMAXPROCS encoding states (~1.6 MiB each at zstdLevel, outside Config.MaxBytes)
// that a new encoder per Build would allocate afresh. It is created on first use, never at init.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel))
	if err != nil {
		panic("cache: zstd encoder: " + err.Error()) // only on invalid options, a programming error
	}
	return enc
})

// Build renders an entry for key from body: it copies key, body, contentType, deps and headers
// (the caller's buffers may be pooled and reused), computes the ETag (`"` + 16 hex digits of the
// body's xxhash + `"`) and pre-compresses the body into gzip, zstd and brotli. Bodies under
// MinCompressSize are stored as identity only, and a compressed form that is not smaller than
// the body is dropped.
//
// deps must hold the counter values loaded before the state body was rendered from was read
// (see the package documentation); every Dep.Ctr must be non-nil. expires is the unix time in
// nanoseconds from which the entry is invalid, 0 for never. route is stored as is.
//
// All the bytes of the entry live in one allocation, so its cost is exact and its fields cannot
// be extended into each other by append.
func Build(key []byte, status int, contentType string, body []byte, deps []Dep, expires int64, headers [][2][]byte, route int) *Entry {
	return build(key, status, contentType, body, deps, expires, headers, route, codingAll, nil)
}

// BuildFor is Build compressing only into the coding the filling request prefers among those
// its Accept-Encoding accepts (br, then zstd, then gzip; none for a request that accepts none):
// the others are made when a request first asks for them (Entry.Upgrade). Measured on the
// freshness bench, pre-compressing every fill three ways was most of an edge's CPU when writes
// keep invalidating pages, for clients that each only ever take one coding.
func BuildFor(key []byte, status int, contentType string, body []byte, deps []Dep, expires int64, headers [][2][]byte, route int, acceptEncoding []byte) *Entry {
	return build(key, status, contentType, body, deps, expires, headers, route, preferred(acceptedCodings(acceptEncoding)), nil)
}

// build makes an entry compressing body into the codings of the set (from has the compressed
// forms already made, reused instead of compressed again; nil for none).
func build(key []byte, status int, contentType string, body []byte, deps []Dep, expires int64, headers [][2][]byte, route int, codings uint8, from *Entry) *Entry {
	for _, d := range deps {
		if d.Ctr == nil {
			panic("cache: Build with a nil Dep.Ctr")
		}
	}

	// Compressed forms go one after the other into a scratch buffer, then into the arena.
	var scratch []byte
	var gz, zs, br []byte
	tried := uint8(0)
	if len(body) >= MinCompressSize {
		tried = codings
		if from != nil {
			gz, zs, br = from.Gzip, from.Zstd, from.Brotli
		}
		scratch = make([]byte, 0, len(body)/2)
		if codings&codingGzip != 0 && gz == nil && (from == nil || from.tried&codingGzip == 0) {
			scratch, gz = appendCompressed(scratch, body, func(dst []byte) []byte {
				return fasthttp.AppendGzipBytesLevel(dst, body, gzipLevel)
			})
		}
		if codings&codingZstd != 0 && zs == nil && (from == nil || from.tried&codingZstd == 0) {
			scratch, zs = appendCompressed(scratch, body, func(dst []byte) []byte {
				return zstdEncoder().EncodeAll(body, dst)
			})
		}
		if codings&codingBr != 0 && br == nil && (from == nil || from.tried&codingBr == 0) {
			scratch, br = appendCompressed(scratch, body, func(dst []byte) []byte {
				return fasthttp.AppendBrotliBytesLevel(dst, body, brotliLevel)
			})
		}
	}

	var etag [18]byte
	etag[0], etag[17] = '"', '"'
	sum := xxhash.Sum64(body)
	var sumBytes [8]byte
	for i := range sumBytes {
		sumBytes[i] = byte(sum >> (56 - 8*i))
	}
	hex.Encode(etag[1:17], sumBytes[:])

	size := len(key) + len(contentType) + len(etag) + len(body) + len(gz) + len(zs) + len(br)
	for _, h := range headers {
		size += len(h[0]) + len(h[1])
	}
	a := arena(make([]byte, 0, size))

	e := &Entry{
		Key:         a.add(key),
		Expires:     expires,
		Status:      status,
		ContentType: a.add([]byte(contentType)),
		ETag:        a.add(etag[:]),
		Route:       route,
		Identity:    a.add(body),
		Gzip:        a.add(gz),
		Zstd:        a.add(zs),
		Brotli:      a.add(br),
		tried:       tried,
		lines:       new(linesCell),
	}
	if len(deps) > 0 {
		e.Deps = append([]Dep(nil), deps...)
	}
	if len(headers) > 0 {
		e.Headers = make([][2][]byte, len(headers))
		for i, h := range headers {
			e.Headers[i] = [2][]byte{a.add(h[0]), a.add(h[1])}
		}
	}
	return e
}

// appendCompressed appends compress's output for body to scratch and returns the grown scratch
// and the compressed bytes, or nil when the output is empty or not smaller than body. Empty
// output is possible: fasthttp's Append*BytesLevel return dst unchanged when their compression
// workers are saturated.
func appendCompressed(scratch, body []byte, compress func(dst []byte) []byte) ([]byte, []byte) {
	start := len(scratch)
	out := compress(scratch)
	n := len(out) - start
	if n <= 0 || n >= len(body) {
		return out[:start], nil
	}
	return out, out[start:]
}

// arena is the single backing array of an entry's bytes.
type arena []byte

// add copies b into the arena and returns the copy, capped so that an append to it reallocates.
// It returns nil for an empty b: nil marks an absent body.
func (a *arena) add(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	start := len(*a)
	*a = append(*a, b...)
	return (*a)[start:len(*a):len(*a)]
}
