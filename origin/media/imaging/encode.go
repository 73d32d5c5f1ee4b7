package imaging

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"github.com/gen2brain/webp"
)

// DefaultQuality returns WordPress's default encoding quality for a type
// (WP_Image_Editor::get_default_quality): 86 for WebP, 82 otherwise.
func DefaultQuality(mime string) int {
	if mime == WebP {
		return 86
	}
	return 82
}

// Encode writes img as mime (img.Mime when empty) with quality 1..100 (DefaultQuality(mime)
// when out of range; PNG and GIF ignore it). Nothing but pixels and the colour profile
// (img.ICC, in JPEG APP2, PNG iCCP or WebP ICCP; GIF has none) is written: no EXIF, XMP, IPTC or
// comment.
//
//   - JPEG: baseline 4:2:0; transparent pixels (a rotated PNG, say) are flattened onto white, as
//     JPEG has no alpha.
//   - PNG: default compression; paletted images stay paletted.
//   - GIF: one frame; images that are not paletted are dithered (Floyd–Steinberg) to the Plan 9
//     palette, with a transparent entry when the image has transparent pixels.
//   - WebP: lossy, through github.com/gen2brain/webp (libwebp: the system's libwebp.so when
//     present, loaded without cgo, else libwebp compiled to WebAssembly run by wazero).
func Encode(w io.Writer, img *Image, mime string, quality int) error {
	if mime == "" {
		mime = img.Mime
	}
	if quality < 1 || quality > 100 {
		quality = DefaultQuality(mime)
	}
	if len(img.ICC) > 0 && mime != GIF {
		var buf bytes.Buffer
		if err := encodePixels(&buf, img.Pixels, mime, quality); err != nil {
			return err
		}
		_, err := w.Write(withICC(buf.Bytes(), mime, img.ICC, img.Width(), img.Height()))
		return err
	}
	return encodePixels(w, img.Pixels, mime, quality)
}

func encodePixels(w io.Writer, px image.Image, mime string, quality int) error {
	var err error
	switch mime {
	case JPEG:
		err = jpeg.Encode(w, flatten(px), &jpeg.Options{Quality: quality})
	case PNG:
		err = (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(w, px)
	case GIF:
		err = gif.Encode(w, paletted(px), nil)
	case WebP:
		err = protect(func() error { return webp.Encode(w, px, webp.Options{Quality: quality, Method: webp.DefaultMethod}) })
	default:
		return newError(KindUnsupported, "cannot encode "+mime, nil)
	}
	if err != nil {
		return newError(KindCorrupt, "the image could not be encoded", err)
	}
	return nil
}

// opaque reports whether every pixel of px is opaque.
func opaque(px image.Image) bool {
	if o, ok := px.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// flatten returns px drawn over white when it has transparent pixels, else px; an opaque NRGBA
// image is handed over as the RGBA image it then also is (the same bytes), which image/jpeg
// encodes three times faster.
func flatten(px image.Image) image.Image {
	if opaque(px) {
		if n, ok := px.(*image.NRGBA); ok {
			return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
		}
		return px
	}
	b := px.Bounds()
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, b, px, b.Min, draw.Over)
	return dst
}

// paletted returns px as a paletted image for GIF.
func paletted(px image.Image) *image.Paletted {
	if p, ok := px.(*image.Paletted); ok {
		return p
	}
	pal := append(color.Palette{}, palette.Plan9...)
	if !opaque(px) {
		pal = append(pal[:255], color.Transparent)
	}
	b := px.Bounds()
	dst := image.NewPaletted(b, pal)
	draw.FloydSteinberg.Draw(dst, b, px, b.Min)
	return dst
}
