package cache_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

// BenchmarkLevels measures every candidate compression level on the 2 KB and 20 KB product
// JSON; its numbers justify the level constants in build.go. "bytes" is the compressed size.
// gzip-new-writer is klauspost gzip with a fresh gzip.Writer per body, as opposed to the pooled
// writers of fasthttp.AppendGzipBytesLevel (same klauspost code, same output) that Build uses.
func BenchmarkLevels(b *testing.B) {
	for _, size := range []int{2 << 10, 20 << 10} {
		body := productsJSON(size)
		for _, level := range []int{1, 4, 5, 6, 7, 9} {
			b.Run(fmt.Sprintf("%dB/gzip-%d", len(body), level), func(b *testing.B) {
				var n int
				for b.Loop() {
					n = len(fasthttp.AppendGzipBytesLevel(nil, body, level))
				}
				b.ReportMetric(float64(n), "bytes")
			})
		}
		b.Run(fmt.Sprintf("%dB/gzip-new-writer-6", len(body)), func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				var buf bytes.Buffer
				w, err := gzip.NewWriterLevel(&buf, 6)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.Write(body); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				n = buf.Len()
			}
			b.ReportMetric(float64(n), "bytes")
		})
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%dB/zstd-%s", len(body), level), func(b *testing.B) {
				var n int
				for b.Loop() {
					n = len(enc.EncodeAll(body, nil))
				}
				b.ReportMetric(float64(n), "bytes")
			})
			enc.Close()
		}
		for _, level := range []int{1, 4, 5, 6, 7, 9, 11} {
			b.Run(fmt.Sprintf("%dB/br-%d", len(body), level), func(b *testing.B) {
				var n int
				for b.Loop() {
					n = len(fasthttp.AppendBrotliBytesLevel(nil, body, level))
				}
				b.ReportMetric(float64(n), "bytes")
			})
		}
	}
}
