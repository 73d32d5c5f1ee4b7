package imaging_test

import (
	"encoding/binary"
	"strings"
	"testing"

	mi "vitrine/origin/media/imaging"
	"vitrine/schema"
)

// exifBomb is an EXIF block whose tags claim 4 GiB values (what made go-exif allocate them).
func exifBomb() []byte {
	b := tiffBlock([]tiffTag{asciiTag(0x0110, "x"), asciiTag(0x010E, "y")}, nil)
	for i := 0; i < 2; i++ {
		binary.LittleEndian.PutUint32(b[8+2+12*i+4:], 0xFFFFFF00)
	}
	return b
}

// FuzzDecode feeds arbitrary bytes to the decoding, metadata and cleaning paths: they never
// panic, fail only with typed errors that are not internal, and never decode more pixels than
// the limit (checked from the header before any pixel buffer exists).
func FuzzDecode(f *testing.F) {
	img := quadrants(24, 16)
	jpg, png, gif, webp := encodeJPEG(f, img), encodePNG(f, img), encodeGIF(f, img, img), encodeWebP(f, img)
	for _, seed := range [][]byte{
		jpg, png, gif, webp,
		jpg[:len(jpg)/2], png[:len(png)/2], gif[:len(gif)/2], webp[:len(webp)/2],
		jpg[:3], png[:9], gif[:7], webp[:13],
		pngBomb(100000, 100000), pngBomb(1<<31-1, 1),
		withEXIF(jpg, tiffBlock([]tiffTag{shortTag(0x0112, 6)}, nil)),
		withEXIF(jpg, exifBomb()),
		withSegment(jpg, 0xED, iptcAPP13(struct {
			ds  byte
			val string
		}{25, "kw"})),
		webpWithEXIF(f, encodeWebP(f, quadrants(16, 12)), tiffBlock([]tiffTag{shortTag(0x0112, 3)}, nil)),
		[]byte("plain text, not an image"),
		[]byte("%PDF-1.4\n"),
		[]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`),
		[]byte("GIF89a\xff\xff\xff\xff\x80\x00\x00"),
		{},
	} {
		f.Add(seed)
	}
	lim := mi.Limits{MaxPixels: 1 << 20, MaxBytes: 4 << 20}
	typed := func(t *testing.T, what string, err error) {
		t.Helper()
		if mi.KindOf(err) == 0 || schema.ErrorCode(err) == schema.CodeInternal {
			t.Fatalf("%s: untyped error %v", what, err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := mi.DecodeBytes(data, lim)
		if err != nil {
			typed(t, "decode", err)
		} else if int64(img.Width())*int64(img.Height()) > lim.MaxPixels {
			t.Fatalf("decoded %dx%d, over the limit", img.Width(), img.Height())
		}
		mime, err := mi.Sniff(data)
		if err != nil {
			typed(t, "sniff", err)
			return
		}
		if !mi.IsImage(mime) {
			return
		}
		c, err := mi.Clean(data, mime, lim)
		if err != nil {
			typed(t, "clean", err)
			if img != nil && strings.Contains(err.Error(), "panic") {
				t.Fatalf("clean panicked on a decodable image: %v", err)
			}
			return
		}
		if img == nil {
			return // a corrupt scan behind valid headers: Decode finds it, Clean need not
		}
		back, err := mi.DecodeBytes(c.Data, lim)
		if err != nil {
			t.Fatalf("the cleaned image does not decode: %v", err)
		}
		if back.Width() != img.Width() || back.Height() != img.Height() || c.Width != img.Width() || c.Height != img.Height() {
			t.Fatalf("cleaned %dx%d (said %dx%d), decoded %dx%d", back.Width(), back.Height(), c.Width, c.Height, img.Width(), img.Height())
		}
	})
}
