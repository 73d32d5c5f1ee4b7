package imaging_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/disintegration/imaging"

	mi "vitrine/origin/media/imaging"
)

// The quadrant colours of the generated test images.
var (
	red    = color.NRGBA{255, 0, 0, 255}
	green  = color.NRGBA{0, 255, 0, 255}
	blue   = color.NRGBA{0, 0, 255, 255}
	yellow = color.NRGBA{255, 255, 0, 255}
)

// quadrants returns a w×h image: top-left red, top-right green, bottom-left blue, bottom-right
// yellow.
func quadrants(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := red
			switch {
			case x >= w/2 && y < h/2:
				c = green
			case x < w/2 && y >= h/2:
				c = blue
			case x >= w/2 && y >= h/2:
				c = yellow
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// gradient returns a smooth w×h image (for resampling comparisons).
func gradient(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x + y) * 255 / (w + h)), 255})
		}
	}
	return img
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, frames ...image.Image) []byte {
	t.Helper()
	g := &gif.GIF{}
	for _, f := range frames {
		p := image.NewPaletted(f.Bounds(), color.Palette{red, green, blue, yellow, color.Black})
		for y := f.Bounds().Min.Y; y < f.Bounds().Max.Y; y++ {
			for x := f.Bounds().Min.X; x < f.Bounds().Max.X; x++ {
				p.Set(x, y, f.At(x, y))
			}
		}
		g.Image = append(g.Image, p)
		g.Delay = append(g.Delay, 10)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeWebP(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := mi.Encode(&b, &mi.Image{Pixels: img, Mime: mi.WebP}, mi.WebP, 95); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upright2stored returns what a camera stores for an upright image shown with orientation o:
// the inverse of the viewer's transform.
func upright2stored(img image.Image, o int) image.Image {
	switch o {
	case 2:
		return imaging.FlipH(img)
	case 3:
		return imaging.Rotate180(img)
	case 4:
		return imaging.FlipV(img)
	case 5:
		return imaging.Transpose(img)
	case 6:
		return imaging.Rotate90(img) // shown turned 90° clockwise, so stored turned counter-clockwise
	case 7:
		return imaging.Transverse(img)
	case 8:
		return imaging.Rotate270(img)
	}
	return img
}

// tiffTag is one entry of a test EXIF block.
type tiffTag struct {
	tag, typ uint16
	count    uint32
	data     []byte
}

func asciiTag(tag uint16, s string) tiffTag {
	return tiffTag{tag, 2, uint32(len(s) + 1), append([]byte(s), 0)}
}

func shortTag(tag uint16, v uint16) tiffTag {
	return tiffTag{tag, 3, 1, binary.LittleEndian.AppendUint16(nil, v)}
}

func rationalTag(tag uint16, num, den uint32) tiffTag {
	return tiffTag{tag, 5, 1, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, num), den)}
}

// tiffBlock builds a little-endian TIFF structure: IFD0 with ifd0's tags and, when exif is not
// empty, an Exif sub-IFD.
func tiffBlock(ifd0, exif []tiffTag) []byte {
	ifdLen := func(n int) int { return 2 + 12*n + 4 }
	n0 := len(ifd0)
	if len(exif) > 0 {
		n0++
	}
	off0 := 8
	offExif := off0 + ifdLen(n0)
	dataAt := offExif
	if len(exif) > 0 {
		dataAt += ifdLen(len(exif))
	}
	out := make([]byte, dataAt)
	copy(out, "II*\x00")
	binary.LittleEndian.PutUint32(out[4:], uint32(off0))
	var data []byte
	writeIFD := func(at int, tags []tiffTag) {
		binary.LittleEndian.PutUint16(out[at:], uint16(len(tags)))
		for i, tg := range tags {
			e := out[at+2+12*i:]
			binary.LittleEndian.PutUint16(e, tg.tag)
			binary.LittleEndian.PutUint16(e[2:], tg.typ)
			binary.LittleEndian.PutUint32(e[4:], tg.count)
			if len(tg.data) <= 4 {
				copy(e[8:12], tg.data)
			} else {
				binary.LittleEndian.PutUint32(e[8:], uint32(dataAt+len(data)))
				data = append(data, tg.data...)
				if len(data)%2 == 1 {
					data = append(data, 0)
				}
			}
		}
	}
	tags0 := append([]tiffTag{}, ifd0...)
	if len(exif) > 0 {
		tags0 = append(tags0, tiffTag{0x8769, 4, 1, binary.LittleEndian.AppendUint32(nil, uint32(offExif))})
	}
	writeIFD(off0, tags0)
	if len(exif) > 0 {
		writeIFD(offExif, exif)
	}
	return append(out, data...)
}

// withSegment inserts a JPEG marker segment right after SOI.
func withSegment(jpg []byte, marker byte, payload []byte) []byte {
	seg := []byte{0xFF, marker, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func withEXIF(jpg, tiff []byte) []byte {
	return withSegment(jpg, 0xE1, append([]byte("Exif\x00\x00"), tiff...))
}

// iptcAPP13 returns an APP13 payload with IPTC record 2 datasets.
func iptcAPP13(datasets ...struct {
	ds  byte
	val string
}) []byte {
	var iim []byte
	for _, d := range datasets {
		iim = append(iim, 0x1C, 2, d.ds)
		iim = binary.BigEndian.AppendUint16(iim, uint16(len(d.val)))
		iim = append(iim, d.val...)
	}
	out := []byte("Photoshop 3.0\x00")
	out = append(out, "8BIM"...)
	out = binary.BigEndian.AppendUint16(out, 0x0404)
	out = append(out, 0, 0) // empty Pascal name, padded
	out = binary.BigEndian.AppendUint32(out, uint32(len(iim)))
	out = append(out, iim...)
	if len(iim)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// jpegMarkers lists the markers of a JPEG's segments before its first scan.
func jpegMarkers(t testing.TB, data []byte) []byte {
	t.Helper()
	var ms []byte
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			t.Fatalf("no marker at %d", i)
		}
		m := data[i+1]
		if m == 0xDA {
			return ms
		}
		ms = append(ms, m)
		i += 2 + int(binary.BigEndian.Uint16(data[i+2:]))
	}
	return ms
}

// near reports whether two colours are within tol on every channel.
func near(a, b color.Color, tol int) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	d := func(x, y uint32) int {
		v := int(x>>8) - int(y>>8)
		if v < 0 {
			v = -v
		}
		return v
	}
	return d(r1, r2) <= tol && d(g1, g2) <= tol && d(b1, b2) <= tol && d(a1, a2) <= tol
}

// checkQuadrants asserts the colour at the centre of each quadrant of img.
func checkQuadrants(t *testing.T, img image.Image, tl, tr, bl, br color.Color, tol int) {
	t.Helper()
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for _, p := range []struct {
		name string
		x, y int
		want color.Color
	}{
		{"top-left", w / 4, h / 4, tl}, {"top-right", 3 * w / 4, h / 4, tr},
		{"bottom-left", w / 4, 3 * h / 4, bl}, {"bottom-right", 3 * w / 4, 3 * h / 4, br},
	} {
		if got := img.At(b.Min.X+p.x, b.Min.Y+p.y); !near(got, p.want, tol) {
			t.Errorf("%s (%d,%d) = %v, want %v", p.name, p.x, p.y, got, p.want)
		}
	}
}

// pngChunk returns a PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(typ), data...)))
}

// pngBomb returns a PNG whose header claims w×h pixels, with a tiny compressed IDAT.
func pngBomb(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8-bit RGBA
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1<<16))
	zw.Close()
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", z.Bytes())...)
	return append(out, pngChunk("IEND", nil)...)
}

// webpWithEXIF wraps a simple (VP8 or VP8L) WebP of a 16x12 image in an extended container
// with an EXIF chunk.
func webpWithEXIF(t testing.TB, plain, tiff []byte) []byte {
	t.Helper()
	if string(plain[:4]) != "RIFF" || string(plain[12:15]) != "VP8" {
		t.Fatalf("not a simple WebP: %q", plain[:16])
	}
	vp8x := []byte{0x08, 0, 0, 0, 15, 0, 0, 11, 0, 0} // EXIF flag, canvas 16x12
	riffChunk := func(fourCC string, data []byte) []byte {
		out := append([]byte(fourCC), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
		out = append(out, data...)
		if len(data)%2 == 1 {
			out = append(out, 0)
		}
		return out
	}
	body := []byte("WEBP")
	body = append(body, riffChunk("VP8X", vp8x)...)
	body = append(body, plain[12:]...)
	body = append(body, riffChunk("EXIF", tiff)...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// animatedWebP returns an extended WebP whose VP8X says it is animated.
func animatedWebP(t testing.TB) []byte {
	b := webpWithEXIF(t, encodeWebP(t, quadrants(16, 12)), nil)
	b[20] = 0x02 // VP8X flags: animation
	return b
}

// apng returns img as a PNG with an acTL chunk (an animated PNG of one frame).
func apng(t testing.TB, img image.Image) []byte {
	p := encodePNG(t, img)
	const ihdrEnd = 8 + 25
	actl := pngChunk("acTL", []byte{0, 0, 0, 1, 0, 0, 0, 0})
	return append(append(append([]byte{}, p[:ihdrEnd]...), actl...), p[ihdrEnd:]...)
}
