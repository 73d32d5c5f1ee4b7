package imaging

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/webp"
)

// Limits bound what Decode, Probe and Clean accept. Both are checked before any pixel buffer is
// allocated: the byte count while reading, the pixel count from the header.
type Limits struct {
	// MaxPixels is the largest width × height accepted (DefaultMaxPixels when 0).
	MaxPixels int64
	// MaxBytes is the largest encoded size accepted (DefaultMaxBytes when 0).
	MaxBytes int64
}

// Default limits: 40 megapixels (a 7745×5164 photograph; a 24 MP camera's 6000×4000 fits) and
// 32 MiB of encoded bytes (the upload limit of the media routes).
const (
	DefaultMaxPixels = 40_000_000
	DefaultMaxBytes  = 32 << 20
)

// DefaultLimits returns the default Limits.
func DefaultLimits() Limits { return Limits{MaxPixels: DefaultMaxPixels, MaxBytes: DefaultMaxBytes} }

func (l Limits) orDefault() Limits {
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Image is a decoded image: upright pixels and what was read from its metadata. An Image is
// never changed in place: every operation of this package returns a new one.
type Image struct {
	// Pixels are the upright pixels (EXIF orientation applied), origin at (0, 0).
	Pixels image.Image
	// Mime is the type the image was decoded from (JPEG, PNG, GIF or WebP); Encode's default.
	Mime string
	// Meta is WordPress's image_meta, read before the metadata was dropped.
	Meta ImageMeta
	// Orientation is the EXIF orientation the source carried (1 when none), already applied.
	Orientation int
	// Frames is 2 for an animated source (only the first frame is kept, as GD does), else 1.
	Frames int
	// ICC is the source's ICC colour profile (nil when none): the one piece of metadata Encode
	// writes back, as WordPress's Imagick editor keeps profiles, so that colours survive.
	ICC []byte
}

// Width returns the image's width in pixels.
func (im *Image) Width() int { return im.Pixels.Bounds().Dx() }

// Height returns the image's height in pixels.
func (im *Image) Height() int { return im.Pixels.Bounds().Dy() }

// Info is what Probe reads from an image's header without decoding its pixels.
type Info struct {
	Mime string
	// Width and Height are as stored (before EXIF orientation).
	Width, Height int
	// BytesPerPixel is the decoded buffer's bytes per pixel (8 for 16-bit PNGs, else at most 4).
	BytesPerPixel int
}

// Probe sniffs data and reads its header: the type, the stored dimensions, and whether they are
// within lim. Errors: KindUnsupported (not an image this package decodes), KindCorrupt (no
// readable header), KindTooLarge.
func Probe(data []byte, lim Limits) (Info, error) {
	lim = lim.orDefault()
	if int64(len(data)) > lim.MaxBytes {
		return Info{}, newError(KindTooLarge, fmt.Sprintf("the file is larger than %d bytes", lim.MaxBytes), nil)
	}
	mime, err := Sniff(data)
	if err != nil {
		return Info{}, err
	}
	if !IsImage(mime) {
		return Info{}, newError(KindUnsupported, "not an image ("+mime+")", nil)
	}
	if mime == WebP && webpAnimated(data) {
		return Info{}, newError(KindUnsupported, "animated WebP images cannot be processed", nil)
	}
	var cfg image.Config
	err = protect(func() (err error) {
		cfg, err = decodeConfig(mime, data)
		return err
	})
	if err != nil {
		return Info{}, decodeError(err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Info{}, newError(KindCorrupt, "the image has no pixels", nil)
	}
	if int64(cfg.Width)*int64(cfg.Height) > lim.MaxPixels {
		return Info{}, newError(KindTooLarge, fmt.Sprintf("the image has %d×%d pixels, more than the %d allowed", cfg.Width, cfg.Height, lim.MaxPixels), nil)
	}
	return Info{Mime: mime, Width: cfg.Width, Height: cfg.Height, BytesPerPixel: bytesPerPixel(cfg.ColorModel)}, nil
}

// Decode reads an image (at most lim.MaxBytes), checks its header against lim before decoding,
// decodes the first frame (an animated GIF's or APNG's first frame, like GD; an animated WebP is
// KindUnsupported), reads its metadata (image_meta from EXIF and IPTC; the EXIF orientation of a
// JPEG's APP1, a PNG's eXIf or a WebP's EXIF chunk) and applies the orientation, so that Pixels
// are upright. The metadata itself is not kept: whatever is encoded from the Image carries none
// but the colour profile (Image.ICC).
// Errors are *Error: KindUnsupported, KindCorrupt (truncated or malformed, also any decoder
// panic), KindTooLarge.
func Decode(r io.Reader, lim Limits) (*Image, error) {
	lim = lim.orDefault()
	data, err := io.ReadAll(io.LimitReader(r, lim.MaxBytes+1))
	if err != nil {
		return nil, newError(KindCorrupt, "the image could not be read", err)
	}
	return DecodeBytes(data, lim)
}

// DecodeBytes is Decode on bytes already in memory.
func DecodeBytes(data []byte, lim Limits) (*Image, error) {
	info, err := Probe(data, lim)
	if err != nil {
		return nil, err
	}
	md := readMetadata(info.Mime, data)
	var px image.Image
	frames := 1
	err = protect(func() (err error) {
		px, frames, err = decodePixels(info.Mime, data, info.Width, info.Height)
		return err
	})
	if err != nil {
		return nil, decodeError(err)
	}
	if b := px.Bounds(); b.Dx() != info.Width || b.Dy() != info.Height {
		return nil, newError(KindCorrupt, "the image's pixels do not match its header", nil)
	}
	return &Image{
		Pixels:      orient(px, md.orientation),
		Mime:        info.Mime,
		Meta:        md.meta,
		Orientation: md.orientation,
		Frames:      frames,
		ICC:         md.icc,
	}, nil
}

func decodeConfig(mime string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch mime {
	case JPEG:
		return jpeg.DecodeConfig(r)
	case PNG:
		return png.DecodeConfig(r)
	case GIF:
		return gif.DecodeConfig(r)
	case WebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, newError(KindUnsupported, "not an image ("+mime+")", nil)
}

// decodePixels decodes the first frame into a w×h image (the header's size). frames is 2 when
// the GIF has more than one frame.
func decodePixels(mime string, data []byte, w, h int) (px image.Image, frames int, err error) {
	r := bytes.NewReader(data)
	switch mime {
	case JPEG:
		px, err = jpeg.Decode(r)
	case PNG:
		px, err = png.Decode(r)
	case GIF:
		px, err = gif.Decode(r)
		if err == nil && gifHasMoreFrames(data) {
			frames = 2
		}
	case WebP:
		px, err = webp.Decode(r)
	default:
		err = newError(KindUnsupported, "not an image ("+mime+")", nil)
	}
	if frames == 0 {
		frames = 1
	}
	if err == nil && px.Bounds() != image.Rect(0, 0, w, h) {
		px = onCanvas(px, w, h)
	}
	return px, frames, err
}

// onCanvas draws an image whose bounds are not the header's (a GIF's first frame may cover part
// of its logical screen) on a transparent w×h canvas at its own position.
func onCanvas(src image.Image, w, h int) image.Image {
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, src.Bounds(), src, src.Bounds().Min, draw.Src)
	return dst
}

// protect runs f and turns a panic into a KindCorrupt error: no decoder may take the process
// down with it.
func protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newError(KindCorrupt, "the image cannot be decoded", fmt.Errorf("decoder panic: %v", p))
		}
	}()
	return f()
}

// decodeError classifies a decoder's error.
func decodeError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var fe jpeg.FormatError
	var ue jpeg.UnsupportedError
	var pfe png.FormatError
	var pue png.UnsupportedError
	switch {
	case errors.As(err, &ue), errors.As(err, &pue):
		return newError(KindUnsupported, "the image uses a feature that cannot be decoded", err)
	case errors.As(err, &fe), errors.As(err, &pfe):
		return newError(KindCorrupt, "the image cannot be decoded", err)
	case strings.Contains(err.Error(), "unsupported"):
		// x/image/webp (animation, unknown chunks) and image/gif say so in words only.
		return newError(KindUnsupported, "the image uses a feature that cannot be decoded", err)
	}
	return newError(KindCorrupt, "the image cannot be decoded", err)
}

func bytesPerPixel(m color.Model) int {
	switch m {
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.Gray16Model:
		return 2
	}
	return 4
}

// gifHasMoreFrames reports whether a GIF has a second image descriptor, walking its blocks
// without decoding.
func gifHasMoreFrames(data []byte) bool {
	n := 0
	_ = walkGIF(data, func(kind byte, block []byte) bool {
		if kind == gifImage {
			n++
		}
		return n < 2
	})
	return n >= 2
}

// webpAnimated reports whether a WebP's VP8X chunk has the animation flag.
func webpAnimated(data []byte) bool {
	chunks, err := webpChunks(data)
	if err != nil {
		return false
	}
	for _, c := range chunks {
		if c.fourCC == "VP8X" && len(c.data) >= 1 {
			return c.data[0]&0x02 != 0
		}
	}
	return false
}
