package imaging_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"runtime"
	"strings"
	"testing"
	"time"

	mi "vitrine/origin/media/imaging"
	"vitrine/schema"
)

func TestSniff(t *testing.T) {
	img := quadrants(16, 12)
	for _, c := range []struct {
		name string
		in   []byte
		want string // "" = refused
	}{
		{"jpeg", encodeJPEG(t, img), mi.JPEG},
		{"png", encodePNG(t, img), mi.PNG},
		{"gif", encodeGIF(t, img), mi.GIF},
		{"webp", encodeWebP(t, img), mi.WebP},
		{"apng is a png", apng(t, img), mi.PNG},
		{"pdf", []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\n"), "application/pdf"},
		{"plain text", []byte("hello, world\n"), "text/plain"},
		{"csv", []byte("a,b,c\n1,2,3\n4,5,6\n"), "text/csv"},
		{"html", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`), ""},
		{"windows executable named .jpg", append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"), make([]byte, 64)...), ""},
		{"elf", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...), ""},
		{"empty", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := mi.Sniff(c.in)
			if c.want == "" {
				if err == nil || !errors.Is(err, mi.ErrUnsupported) || schema.ErrorCode(err) != schema.CodeUnsupported {
					t.Fatalf("Sniff = %q, %v; want an unsupported error", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Sniff = %q, %v; want %q", got, err, c.want)
			}
			if !mi.Accepted(got) || mi.Extension(got) == "" {
				t.Errorf("%s: not accepted or no extension", got)
			}
		})
	}
}

// TestDimensions checks WordPress's sub-size arithmetic on dimensions alone.
func TestDimensions(t *testing.T) {
	type want struct {
		w, h int
		src  image.Rectangle
		ok   bool
	}
	sizes := map[string]mi.Size{}
	for _, s := range mi.WordPressSizes() {
		sizes[s.Name] = s
	}
	for _, c := range []struct {
		name       string
		w, h       int
		size       mi.Size
		want       want
		wantScaled [3]int // w, h, 1 if made
	}{
		{"4000x3000 thumbnail", 4000, 3000, sizes["thumbnail"], want{150, 150, image.Rect(500, 0, 3500, 3000), true}, [3]int{}},
		{"4000x3000 medium", 4000, 3000, sizes["medium"], want{300, 225, image.Rect(0, 0, 4000, 3000), true}, [3]int{}},
		{"4000x3000 medium_large", 4000, 3000, sizes["medium_large"], want{768, 576, image.Rect(0, 0, 4000, 3000), true}, [3]int{}},
		{"4000x3000 large", 4000, 3000, sizes["large"], want{1024, 768, image.Rect(0, 0, 4000, 3000), true}, [3]int{}},
		{"4000x3000 1536", 4000, 3000, sizes["1536x1536"], want{1536, 1152, image.Rect(0, 0, 4000, 3000), true}, [3]int{}},
		{"4000x3000 2048", 4000, 3000, sizes["2048x2048"], want{2048, 1536, image.Rect(0, 0, 4000, 3000), true}, [3]int{}},
		{"3000x4000 portrait large", 3000, 4000, sizes["large"], want{768, 1024, image.Rect(0, 0, 3000, 4000), true}, [3]int{}},
		{"300x200 thumbnail", 300, 200, sizes["thumbnail"], want{150, 150, image.Rect(50, 0, 250, 200), true}, [3]int{}},
		{"300x200 medium: the original's size, not made", 300, 200, sizes["medium"], want{}, [3]int{}},
		{"300x200 medium_large: never upscaled", 300, 200, sizes["medium_large"], want{}, [3]int{}},
		{"300x200 large: never upscaled", 300, 200, sizes["large"], want{}, [3]int{}},
		{"300x200 1536", 300, 200, sizes["1536x1536"], want{}, [3]int{}},
		{"300x200 2048", 300, 200, sizes["2048x2048"], want{}, [3]int{}},
		{"301x201 medium: within a pixel of the original", 301, 201, sizes["medium"], want{}, [3]int{}},
		{"600x300 crop 400x400 keeps the smaller side", 600, 300, mi.Size{Width: 400, Height: 400, Crop: true}, want{400, 300, image.Rect(100, 0, 500, 300), true}, [3]int{}},
		{"150x150 thumbnail: the original", 150, 150, sizes["thumbnail"], want{}, [3]int{}},
		{"100x80 thumbnail: smaller on both sides", 100, 80, sizes["thumbnail"], want{}, [3]int{}},
		{"1000x100 medium: wide", 1000, 100, sizes["medium"], want{300, 30, image.Rect(0, 0, 1000, 100), true}, [3]int{}},
		{"no box", 1000, 100, mi.Size{}, want{}, [3]int{}},
		{"no image", 0, 100, sizes["medium"], want{}, [3]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := mi.Dimensions(c.w, c.h, c.size)
			got := want{p.Width, p.Height, p.Src, ok}
			if !ok {
				got = want{}
			}
			if got != c.want {
				t.Errorf("Dimensions(%d, %d, %+v) = %+v, want %+v", c.w, c.h, c.size, got, c.want)
			}
			if ok && (p.Width > c.w || p.Height > c.h) {
				t.Errorf("upscaled: %dx%d from %dx%d", p.Width, p.Height, c.w, c.h)
			}
		})
	}
	for _, c := range []struct {
		w, h       int
		mime       string
		sw, sh     int
		wantScaled bool
	}{
		{4000, 3000, mi.JPEG, 2560, 1920, true},
		{3000, 4000, mi.WebP, 1920, 2560, true},
		{2560, 1000, mi.JPEG, 2560, 1000, false},
		{4000, 3000, mi.PNG, 4000, 3000, false},
		{300, 200, mi.JPEG, 300, 200, false},
	} {
		sw, sh, ok := mi.ScaledDimensions(c.w, c.h, c.mime)
		if sw != c.sw || sh != c.sh || ok != c.wantScaled {
			t.Errorf("ScaledDimensions(%d, %d, %s) = %d, %d, %v; want %d, %d, %v", c.w, c.h, c.mime, sw, sh, ok, c.sw, c.sh, c.wantScaled)
		}
	}
	for _, c := range []struct{ w, h, mw, mh, ww, wh int }{
		{4000, 3000, 2560, 2560, 2560, 1920},
		{4000, 3000, 768, 0, 768, 576},
		{4000, 3000, 0, 300, 400, 300},
		{300, 200, 1024, 1024, 300, 200},
		{5000, 1, 100, 100, 100, 1},
	} {
		if w, h := mi.Constrain(c.w, c.h, c.mw, c.mh); w != c.ww || h != c.wh {
			t.Errorf("Constrain(%d, %d, %d, %d) = %d, %d; want %d, %d", c.w, c.h, c.mw, c.mh, w, h, c.ww, c.wh)
		}
	}
}

// TestMakeSizes makes the sizes of small images and checks dimensions and content; a size made
// from a larger sub-size matches one made from the original.
func TestMakeSizes(t *testing.T) {
	img, err := mi.DecodeBytes(encodePNG(t, quadrants(400, 300)), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	var thumb *mi.Image
	for _, s := range mi.MakeSizes(img, mi.WordPressSizes()) {
		got[s.Size.Name] = [2]int{s.Image.Width(), s.Image.Height()}
		if s.Size.Name == "thumbnail" {
			thumb = s.Image
		}
	}
	want := map[string][2]int{"medium": {300, 225}, "thumbnail": {150, 150}}
	if len(got) != len(want) {
		t.Fatalf("sizes = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	// The thumbnail is the centred 300x300 square: the four colours meet in its middle.
	checkQuadrants(t, thumb.Pixels, red, green, blue, yellow, 2)

	// Cascade versus direct: a crop of a smooth image made through a sub-size at least twice as
	// large is within a few levels of the one made from the original.
	g, err := mi.DecodeBytes(encodePNG(t, gradient(320, 240)), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	crop := mi.Size{Name: "t", Width: 50, Height: 50, Crop: true}
	cascaded := mi.MakeSizes(g, []mi.Size{{Name: "half", Width: 160}, crop})[1].Image.Pixels
	direct := mi.MakeSizes(g, []mi.Size{crop})[0].Image.Pixels
	maxDiff := 0
	for y := 0; y < 50; y++ {
		for x := 0; x < 50; x++ {
			for tol := maxDiff; tol < 256; tol++ {
				if near(cascaded.At(x, y), direct.At(x, y), tol) {
					maxDiff = tol
					break
				}
			}
		}
	}
	if maxDiff > 3 {
		t.Errorf("cascaded crop differs from the direct one by up to %d levels", maxDiff)
	}

	// Nothing is made for an image smaller than every size but the thumbnail.
	small, _ := mi.DecodeBytes(encodePNG(t, quadrants(300, 200)), mi.Limits{})
	if s := mi.MakeSizes(small, mi.WordPressSizes()); len(s) != 1 || s[0].Size.Name != "thumbnail" {
		t.Errorf("300x200 sizes = %+v, want the thumbnail only", s)
	}
	// Fit: the big-image scaling helper.
	if f := mi.Fit(img, 200, 200); f.Width() != 200 || f.Height() != 150 {
		t.Errorf("Fit = %dx%d", f.Width(), f.Height())
	}
	if f := mi.Fit(small, 600, 600); f != small {
		t.Error("Fit upscaled or copied an image that fits")
	}
}

// TestEditFlipRotateCrop is the check: flip + rotate 90 + crop 50 % of a known image
// gives the expected pixels.
func TestEditFlipRotateCrop(t *testing.T) {
	src, err := mi.DecodeBytes(encodePNG(t, quadrants(64, 48)), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// flip horizontal: green red / yellow blue. Rotate 90° clockwise (64x48 -> 48x64): the
	// left column becomes the top row read bottom-up: yellow green / blue red. The centred 50 %
	// box (24x32) keeps a quarter of each quadrant.
	out, err := mi.Apply(src, []mi.Modifier{
		mi.Flip{Horizontal: true},
		mi.Rotate{Angle: 90},
		mi.Crop{Left: 25, Top: 25, Width: 50, Height: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Through an encode and decode, as the edit route stores it.
	var buf bytes.Buffer
	if err := mi.Encode(&buf, out, mi.PNG, 0); err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Bounds(); b.Dx() != 24 || b.Dy() != 32 {
		t.Fatalf("size = %v, want 24x32", b)
	}
	// Every pixel, not just samples: the box is 12x16 per quadrant.
	for y := 0; y < 32; y++ {
		for x := 0; x < 24; x++ {
			want := yellow
			switch {
			case x >= 12 && y < 16:
				want = green
			case x < 12 && y >= 16:
				want = blue
			case x >= 12 && y >= 16:
				want = red
			}
			if !near(got.At(x, y), want, 0) {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got.At(x, y), want)
			}
		}
	}
	if src.Width() != 64 || !near(src.Pixels.At(0, 0), red, 0) {
		t.Error("Apply changed its input")
	}
}

func TestEditModifiers(t *testing.T) {
	src, err := mi.DecodeBytes(encodePNG(t, quadrants(64, 48)), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		mods           []mi.Modifier
		w, h           int
		tl, tr, bl, br color.Color
		kind           mi.Kind
	}{
		{"rotate 90 clockwise", []mi.Modifier{mi.Rotate{Angle: 90}}, 48, 64, blue, red, yellow, green, 0},
		{"rotate -90 is 270", []mi.Modifier{mi.Rotate{Angle: -90}}, 48, 64, green, yellow, red, blue, 0},
		{"rotate 180", []mi.Modifier{mi.Rotate{Angle: 180}}, 64, 48, yellow, blue, green, red, 0},
		{"rotate 450 is 90", []mi.Modifier{mi.Rotate{Angle: 450}}, 48, 64, blue, red, yellow, green, 0},
		{"rotate 360 does nothing", []mi.Modifier{mi.Rotate{Angle: 360}}, 64, 48, red, green, blue, yellow, 0},
		{"flip vertical", []mi.Modifier{mi.Flip{Vertical: true}}, 64, 48, blue, yellow, red, green, 0},
		{"flip both", []mi.Modifier{mi.Flip{Horizontal: true, Vertical: true}}, 64, 48, yellow, blue, green, red, 0},
		{"crop whole image does nothing", []mi.Modifier{mi.Crop{Width: 100, Height: 100}}, 64, 48, red, green, blue, yellow, 0},
		{"crop top-left quarter", []mi.Modifier{mi.Crop{Width: 50, Height: 50}}, 32, 24, red, red, red, red, 0},
		{"crop past the edge is cut", []mi.Modifier{mi.Crop{Left: 50, Top: 50, Width: 100, Height: 100}}, 32, 24, yellow, yellow, yellow, yellow, 0},
		{"crop rounding: 33.3 % of 64 is 21", []mi.Modifier{mi.Crop{Width: 33.3, Height: 100}}, 21, 48, red, red, blue, blue, 0},
		{"crop out of range", []mi.Modifier{mi.Crop{Left: -1, Width: 50, Height: 50}}, 0, 0, nil, nil, nil, nil, mi.KindInvalidEdit},
		{"crop over 100", []mi.Modifier{mi.Crop{Width: 101, Height: 50}}, 0, 0, nil, nil, nil, nil, mi.KindInvalidEdit},
		{"crop empty", []mi.Modifier{mi.Crop{Width: 0, Height: 50}}, 0, 0, nil, nil, nil, nil, mi.KindInvalidEdit},
		{"legacy order: flip, rotate, crop", mi.LegacyModifiers(mi.Flip{Horizontal: true}, 90, &mi.Crop{Left: 25, Top: 25, Width: 50, Height: 50}), 24, 32, yellow, green, blue, red, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := mi.Apply(src, c.mods)
			if c.kind != 0 {
				if mi.KindOf(err) != c.kind || schema.ErrorCode(err) != schema.CodeInvalid {
					t.Fatalf("err = %v, want kind %d", err, c.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Width() != c.w || out.Height() != c.h {
				t.Fatalf("size = %dx%d, want %dx%d", out.Width(), out.Height(), c.w, c.h)
			}
			checkQuadrants(t, out.Pixels, c.tl, c.tr, c.bl, c.br, 0)
		})
	}

	// Any angle: the canvas grows to hold the turned image, the corners are transparent, and a
	// JPEG of it has white corners.
	out, err := mi.Apply(src, []mi.Modifier{mi.Rotate{Angle: 45}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Width() < 78 || out.Width() > 80 || out.Height() < 78 || out.Height() > 80 {
		t.Errorf("45° canvas = %dx%d, want about 79x79", out.Width(), out.Height())
	}
	if _, _, _, a := out.Pixels.At(0, 0).RGBA(); a != 0 {
		t.Errorf("corner alpha = %d, want transparent", a)
	}
	var jb bytes.Buffer
	if err := mi.Encode(&jb, out, mi.JPEG, 90); err != nil {
		t.Fatal(err)
	}
	j, err := mi.DecodeBytes(jb.Bytes(), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(j.Pixels.At(1, 1), color.White, 8) {
		t.Errorf("JPEG corner = %v, want white", j.Pixels.At(1, 1))
	}
	if _, err := mi.Apply(src, []mi.Modifier{nil}); mi.KindOf(err) != mi.KindInvalidEdit {
		t.Errorf("nil modifier: %v", err)
	}
}

// TestOrientation decodes JPEGs carrying each EXIF orientation: all come out upright.
func TestOrientation(t *testing.T) {
	upright := quadrants(64, 48)
	for o := 1; o <= 8; o++ {
		t.Run(string(rune('0'+o)), func(t *testing.T) {
			stored := upright2stored(upright, o)
			data := withEXIF(encodeJPEG(t, stored), tiffBlock([]tiffTag{shortTag(0x0112, uint16(o))}, nil))
			img, err := mi.DecodeBytes(data, mi.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if img.Width() != 64 || img.Height() != 48 {
				t.Fatalf("size = %dx%d, want 64x48", img.Width(), img.Height())
			}
			checkQuadrants(t, img.Pixels, red, green, blue, yellow, 24)
			if img.Orientation != o || img.Meta.Orientation != string(rune('0'+o)) {
				t.Errorf("orientation = %d, meta %q", img.Orientation, img.Meta.Orientation)
			}
		})
	}
}

// exifJPEG is a JPEG carrying EXIF, IPTC, a comment, XMP and an ICC profile segment.
func exifJPEG(t *testing.T, orientation uint16) []byte {
	t.Helper()
	tiff := tiffBlock(
		[]tiffTag{asciiTag(0x010E, "A harbour at dusk"), asciiTag(0x0110, "Canon EOS R5"), shortTag(0x0112, orientation),
			asciiTag(0x013B, "Ada Photographer"), asciiTag(0x8298, "(c) 2026 Ada")},
		[]tiffTag{rationalTag(0x829A, 1, 250), rationalTag(0x829D, 28, 10), shortTag(0x8827, 400),
			asciiTag(0x9004, "2026:05:17 18:42:07"), rationalTag(0x920A, 50, 1)},
	)
	data := encodeJPEG(t, quadrants(64, 48))
	data = withSegment(data, 0xE2, append([]byte("ICC_PROFILE\x00\x01\x01"), make([]byte, 128)...))
	data = withSegment(data, 0xFE, []byte("a comment with <b>html</b>"))
	data = withSegment(data, 0xE1, []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta/>"))
	data = withSegment(data, 0xED, iptcAPP13(
		struct {
			ds  byte
			val string
		}{105, "Harbour"},
		struct {
			ds  byte
			val string
		}{25, "sea"},
		struct {
			ds  byte
			val string
		}{25, "boats"},
		struct {
			ds  byte
			val string
		}{110, "Vitrine Press"},
	))
	return withEXIF(data, tiff)
}

func TestImageMeta(t *testing.T) {
	img, err := mi.DecodeBytes(exifJPEG(t, 1), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"aperture": "2.8", "credit": "Vitrine Press", "camera": "Canon EOS R5", "caption": "A harbour at dusk",
		"created_timestamp": "1779043327", "copyright": "(c) 2026 Ada", "focal_length": "50", "iso": "400",
		"shutter_speed": "0.004", "title": "Harbour", "orientation": "1", "keywords": "sea\nboats",
	}
	got := img.Meta.Map()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keys = %d, want %d", len(got), len(want))
	}
	// No metadata: WordPress's zeros.
	plain, err := mi.DecodeBytes(encodePNG(t, quadrants(8, 8)), mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if m := plain.Meta.Map(); m["aperture"] != "0" || m["title"] != "" || m["keywords"] != "" || m["orientation"] != "0" {
		t.Errorf("empty meta = %v", m)
	}
}

// TestEncodeStripsMetadata: an EXIF-carrying JPEG re-encoded has no APP1 (nor IPTC, comment);
// only its ICC profile (APP2) is kept.
func TestEncodeStripsMetadata(t *testing.T) {
	src := exifJPEG(t, 1)
	if !bytes.Contains([]byte(string(jpegMarkers(t, src))), []byte{0xE1}) {
		t.Fatal("the test JPEG has no APP1")
	}
	img, err := mi.DecodeBytes(src, mi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(mi.MakeSizes(img, []mi.Size{{Name: "s", Width: 32, Height: 32}}), mi.Sized{Image: img}) {
		var b bytes.Buffer
		if err := mi.Encode(&b, s.Image, "", 0); err != nil {
			t.Fatal(err)
		}
		for _, m := range jpegMarkers(t, b.Bytes()) {
			if m >= 0xE1 && m <= 0xEF && m != 0xE2 || m == 0xFE { // APP2: the ICC profile, kept
				t.Errorf("re-encoded JPEG has marker %#x", m)
			}
		}
		if bytes.Contains(b.Bytes(), []byte("Canon")) || bytes.Contains(b.Bytes(), []byte("Exif")) {
			t.Error("re-encoded JPEG holds EXIF text")
		}
	}
}

func TestClean(t *testing.T) {
	t.Run("jpeg upright: lossless", func(t *testing.T) {
		src := append(exifJPEG(t, 1), "PK\x03\x04appended zip"...)
		c, err := mi.Clean(src, mi.JPEG, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Reencoded || c.Width != 64 || c.Height != 48 || c.Meta.Camera != "Canon EOS R5" {
			t.Fatalf("clean = %+v", c)
		}
		ms := jpegMarkers(t, c.Data)
		if bytes.IndexByte(ms, 0xE1) >= 0 || bytes.IndexByte(ms, 0xED) >= 0 || bytes.IndexByte(ms, 0xFE) >= 0 {
			t.Errorf("markers left: % x", ms)
		}
		if bytes.IndexByte(ms, 0xE2) < 0 || bytes.IndexByte(ms, 0xDB) < 0 {
			t.Errorf("ICC profile or quantisation tables dropped: % x", ms)
		}
		// The entropy-coded data is untouched, and nothing follows EOI.
		sos := bytes.Index(src, []byte{0xFF, 0xDA})
		eoi := bytes.LastIndex(src, []byte{0xFF, 0xD9})
		if !bytes.HasSuffix(c.Data, src[sos:eoi+2]) {
			t.Error("the scan data changed or the appended bytes were kept")
		}
		a, _ := mi.DecodeBytes(src[:eoi+2], mi.Limits{})
		b, err := mi.DecodeBytes(c.Data, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Pixels.(*image.YCbCr).Y, b.Pixels.(*image.YCbCr).Y) {
			t.Error("pixels changed")
		}
	})
	t.Run("jpeg rotated: re-encoded upright", func(t *testing.T) {
		stored := upright2stored(quadrants(64, 48), 6)
		src := withEXIF(encodeJPEG(t, stored), tiffBlock([]tiffTag{shortTag(0x0112, 6), asciiTag(0x0110, "Pixel 9")}, nil))
		c, err := mi.Clean(src, mi.JPEG, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !c.Reencoded || c.Width != 64 || c.Height != 48 || c.Meta.Orientation != "1" || c.Meta.Camera != "Pixel 9" {
			t.Fatalf("clean = %+v", c)
		}
		if bytes.IndexByte(jpegMarkers(t, c.Data), 0xE1) >= 0 {
			t.Error("APP1 left")
		}
		img, err := mi.DecodeBytes(c.Data, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkQuadrants(t, img.Pixels, red, green, blue, yellow, 24)
	})
	t.Run("png", func(t *testing.T) {
		src := encodePNG(t, quadrants(16, 12))
		iend := len(src) - 12
		var extra []byte
		for _, c := range []struct{ typ, data string }{{"tEXt", "Comment\x00secret"}, {"tIME", "\x07\xea\x01\x02\x03\x04\x05"}, {"eXIf", string(tiffBlock([]tiffTag{shortTag(0x0112, 1)}, nil))}} {
			extra = append(extra, pngChunk(c.typ, []byte(c.data))...)
		}
		src = append(append(append([]byte{}, src[:iend]...), extra...), src[iend:]...)
		c, err := mi.Clean(src, mi.PNG, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"tEXt", "tIME", "eXIf"} {
			if bytes.Contains(c.Data, []byte(typ)) {
				t.Errorf("%s left", typ)
			}
		}
		if c.Reencoded || !bytes.Equal(c.Data, encodePNG(t, quadrants(16, 12))) {
			t.Errorf("clean changed more than the chunks: %d -> %d bytes", len(src), len(c.Data))
		}
		if _, err := mi.DecodeBytes(c.Data, mi.Limits{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("gif", func(t *testing.T) {
		src := encodeGIF(t, quadrants(16, 12), quadrants(16, 12))
		hdr := 13 // header and screen descriptor, then the global colour table if any
		if src[10]&0x80 != 0 {
			hdr += 3 << (src[10]&7 + 1)
		}
		comment := []byte("\x21\xfe\x06secret\x00")
		xmp := []byte("\x21\xff\x0bXMP DataXMP\x04<x:/\x00")
		src = append(append(append([]byte{}, src[:hdr]...), append(comment, xmp...)...), src[hdr:]...)
		c, err := mi.Clean(src, mi.GIF, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(c.Data, []byte("secret")) || bytes.Contains(c.Data, []byte("XMP")) {
			t.Error("comment or XMP left")
		}
		if !bytes.Contains(c.Data, []byte("NETSCAPE2.0")) {
			t.Error("loop extension dropped")
		}
		img, err := mi.DecodeBytes(c.Data, mi.Limits{})
		if err != nil || img.Frames != 2 {
			t.Fatalf("decode cleaned: %v, frames %v", err, img)
		}
	})
	t.Run("webp", func(t *testing.T) {
		plain := encodeWebP(t, quadrants(16, 12))
		src := webpWithEXIF(t, plain, tiffBlock([]tiffTag{asciiTag(0x0110, "Cam")}, nil))
		if img, err := mi.DecodeBytes(src, mi.Limits{}); err != nil || img.Meta.Camera != "Cam" {
			t.Fatalf("decode with EXIF: %v %+v", err, img)
		}
		c, err := mi.Clean(src, mi.WebP, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(c.Data, []byte("EXIF")) || bytes.Contains(c.Data, []byte("Cam")) || c.Reencoded {
			t.Error("EXIF left")
		}
		img, err := mi.DecodeBytes(c.Data, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkQuadrants(t, img.Pixels, red, green, blue, yellow, 40)
	})
	t.Run("type mismatch", func(t *testing.T) {
		if _, err := mi.Clean(encodePNG(t, quadrants(4, 4)), mi.JPEG, mi.Limits{}); !errors.Is(err, mi.ErrUnsupported) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestDecodeErrors: refused uploads are typed errors with schema codes, found before decoding.
func TestDecodeErrors(t *testing.T) {
	jpg, pngData := encodeJPEG(t, quadrants(64, 48)), encodePNG(t, quadrants(64, 48))
	gifData, webpData := encodeGIF(t, quadrants(64, 48)), encodeWebP(t, quadrants(64, 48))
	for _, c := range []struct {
		name string
		in   []byte
		lim  mi.Limits
		kind mi.Kind
		code schema.Code
	}{
		{"truncated jpeg", jpg[:len(jpg)/2], mi.Limits{}, mi.KindCorrupt, schema.CodeInvalid},
		{"truncated png", pngData[:len(pngData)/2], mi.Limits{}, mi.KindCorrupt, schema.CodeInvalid},
		{"truncated gif", gifData[:len(gifData)/2], mi.Limits{}, mi.KindCorrupt, schema.CodeInvalid},
		{"truncated webp", webpData[:len(webpData)/2], mi.Limits{}, mi.KindCorrupt, schema.CodeInvalid},
		{"jpeg header only", jpg[:20], mi.Limits{}, mi.KindCorrupt, schema.CodeInvalid},
		{"png bomb 100000x100000", pngBomb(100000, 100000), mi.Limits{}, mi.KindTooLarge, schema.CodeTooLarge},
		{"over the pixel limit", pngData, mi.Limits{MaxPixels: 64*48 - 1}, mi.KindTooLarge, schema.CodeTooLarge},
		{"over the byte limit", pngData, mi.Limits{MaxBytes: int64(len(pngData) - 1)}, mi.KindTooLarge, schema.CodeTooLarge},
		{"animated webp", animatedWebP(t), mi.Limits{}, mi.KindUnsupported, schema.CodeUnsupported},
		{"text", []byte("just some text"), mi.Limits{}, mi.KindUnsupported, schema.CodeUnsupported},
		{"pdf is not an image", []byte("%PDF-1.7\n"), mi.Limits{}, mi.KindUnsupported, schema.CodeUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			img, err := mi.Decode(bytes.NewReader(c.in), c.lim)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("decoded %dx%d", img.Width(), img.Height())
			}
			if mi.KindOf(err) != c.kind || schema.ErrorCode(err) != c.code || schema.AsError(err).Message == "internal error" {
				t.Errorf("err = %v (kind %d, code %s), want kind %d, code %s", err, mi.KindOf(err), schema.ErrorCode(err), c.kind, c.code)
			}
			if c.kind == mi.KindTooLarge && after.TotalAlloc-before.TotalAlloc > 1<<20 {
				t.Errorf("refusing a bomb allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
			}
		})
	}
	// An animated GIF: the first frame, like GD.
	second := image.NewNRGBA(image.Rect(0, 0, 16, 12))
	draw.Draw(second, second.Bounds(), image.NewUniform(blue), image.Point{}, draw.Src)
	anim := encodeGIF(t, quadrants(16, 12), second)
	img, err := mi.DecodeBytes(anim, mi.Limits{})
	if err != nil || img.Frames != 2 || !near(img.Pixels.At(1, 1), red, 0) {
		t.Errorf("animated gif: %v %+v", err, img)
	}
}

func TestBudget(t *testing.T) {
	b := mi.NewBudget(100, 20*time.Millisecond)
	rel, err := b.Acquire(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(context.Background(), 60)
	if mi.KindOf(err) != mi.KindBusy || schema.ErrorCode(err) != schema.CodeUnavailable || schema.AsError(err).RetryAfter == 0 {
		t.Errorf("full budget: %v", err)
	}
	if _, err := b.Acquire(context.Background(), 101); mi.KindOf(err) != mi.KindTooLarge {
		t.Errorf("larger than the budget: %v", err)
	}
	done := make(chan error)
	go func() {
		r, err := mi.NewBudget(100, time.Minute).Acquire(context.Background(), 100)
		if err == nil {
			r()
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Error(err)
	}
	rel()
	rel2, err := b.Acquire(context.Background(), 100)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	rel2()
	if got := mi.EstimateBytes(4000, 3000, 3); got != 4000*3000*12 {
		t.Errorf("EstimateBytes = %d", got)
	}
	if !strings.Contains(mi.ErrBusy.Error(), "busy") {
		t.Error(mi.ErrBusy.Error())
	}
}

// TestICC: the colour profile is the one piece of metadata kept, in every output type that has
// a place for it, also across the re-encoding of Clean.
func TestICC(t *testing.T) {
	for _, size := range []int{300, 70000} { // one APP2 segment, and two
		profile := make([]byte, size)
		for i := range profile {
			profile[i] = byte(i * 7)
		}
		var app2 [][]byte
		for i, n := 0, (size+65518)/65519; i < n; i++ {
			part := profile[i*65519 : min((i+1)*65519, size)]
			app2 = append(app2, append([]byte{'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, byte(i + 1), byte(n)}, part...))
		}
		stored := upright2stored(quadrants(32, 24), 6)
		src := encodeJPEG(t, stored)
		for i := len(app2) - 1; i >= 0; i-- {
			src = withSegment(src, 0xE2, app2[i])
		}
		src = withEXIF(src, tiffBlock([]tiffTag{shortTag(0x0112, 6)}, nil))
		img, err := mi.DecodeBytes(src, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(img.ICC, profile) {
			t.Fatalf("%d-byte profile read as %d bytes", size, len(img.ICC))
		}
		for _, mime := range []string{mi.JPEG, mi.PNG, mi.WebP} {
			var b bytes.Buffer
			if err := mi.Encode(&b, img, mime, 0); err != nil {
				t.Fatal(err)
			}
			back, err := mi.DecodeBytes(b.Bytes(), mi.Limits{})
			if err != nil {
				t.Fatalf("%s with a profile does not decode: %v", mime, err)
			}
			if !bytes.Equal(back.ICC, profile) {
				t.Errorf("%s: profile of %d bytes came back as %d", mime, size, len(back.ICC))
			}
			checkQuadrants(t, back.Pixels, red, green, blue, yellow, 40)
		}
		c, err := mi.Clean(src, mi.JPEG, mi.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := mi.DecodeBytes(c.Data, mi.Limits{})
		if err != nil || !c.Reencoded || !bytes.Equal(back.ICC, profile) {
			t.Errorf("clean (re-encoded %v) lost the profile: %v", c.Reencoded, err)
		}
	}
}
