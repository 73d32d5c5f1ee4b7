package imaging

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/disintegration/imaging"
)

// Modifier is one step of an image edit (the edit route's modifiers): Flip, Rotate or Crop.
type Modifier interface {
	apply(px image.Image) (image.Image, error)
}

// Flip mirrors the image: Horizontal swaps left and right, Vertical top and bottom.
type Flip struct {
	Horizontal, Vertical bool
}

// Rotate turns the image clockwise by Angle degrees (any number; 0 mod 360 does nothing).
// Multiples of 90° are exact; other angles grow the canvas to hold the whole turned image and
// fill the corners with transparent pixels (as WordPress's editors do), which Encode flattens
// onto white for JPEG.
type Rotate struct {
	Angle float64
}

// Crop keeps a box given in percent of the current image (0..100 each). The pixel box is
// round(percent × size / 100) on each side; a box that is the whole image does nothing, a box
// running past the edge is cut at the edge, and an empty box or a value outside 0..100 is a
// KindInvalidEdit error.
type Crop struct {
	Left, Top, Width, Height float64
}

// Apply runs the modifiers in order on img and returns the result (img itself is unchanged).
// EXIF orientation was applied by Decode, so the edit sees the upright image, as in WordPress.
func Apply(img *Image, mods []Modifier) (*Image, error) {
	px := img.Pixels
	for i, m := range mods {
		if m == nil {
			return nil, newError(KindInvalidEdit, fmt.Sprintf("modifier %d is empty", i), nil)
		}
		var err error
		if px, err = m.apply(px); err != nil {
			return nil, err
		}
	}
	return img.with(px), nil
}

// LegacyModifiers turns the edit route's deprecated arguments into modifiers in WordPress's
// order: flip, then rotate (rotation degrees clockwise, 0 for none), then crop (nil for none).
func LegacyModifiers(flip Flip, rotation float64, crop *Crop) []Modifier {
	var mods []Modifier
	if flip.Horizontal || flip.Vertical {
		mods = append(mods, flip)
	}
	if rotation != 0 {
		mods = append(mods, Rotate{Angle: rotation})
	}
	if crop != nil {
		mods = append(mods, *crop)
	}
	return mods
}

func (f Flip) apply(px image.Image) (image.Image, error) {
	if f.Horizontal {
		px = imaging.FlipH(px)
	}
	if f.Vertical {
		px = imaging.FlipV(px)
	}
	return px, nil
}

func (r Rotate) apply(px image.Image) (image.Image, error) {
	if math.IsNaN(r.Angle) || math.IsInf(r.Angle, 0) {
		return nil, newError(KindInvalidEdit, "the rotation angle is not a number", nil)
	}
	a := math.Mod(r.Angle, 360)
	if a < 0 {
		a += 360
	}
	switch a {
	case 0:
		return px, nil
	case 90:
		return imaging.Rotate270(px), nil // imaging turns counter-clockwise
	case 180:
		return imaging.Rotate180(px), nil
	case 270:
		return imaging.Rotate90(px), nil
	}
	return imaging.Rotate(px, 360-a, color.Transparent), nil
}

func (c Crop) apply(px image.Image) (image.Image, error) {
	for _, v := range []struct {
		name string
		v    float64
	}{{"left", c.Left}, {"top", c.Top}, {"width", c.Width}, {"height", c.Height}} {
		if math.IsNaN(v.v) || v.v < 0 || v.v > 100 {
			return nil, newError(KindInvalidEdit, fmt.Sprintf("crop %s must be between 0 and 100", v.name), nil)
		}
	}
	b := px.Bounds()
	w, h := float64(b.Dx()), float64(b.Dy())
	x, y := int(math.Round(w*c.Left/100)), int(math.Round(h*c.Top/100))
	cw, ch := int(math.Round(w*c.Width/100)), int(math.Round(h*c.Height/100))
	box := image.Rect(x, y, x+cw, y+ch)
	if box == image.Rect(0, 0, b.Dx(), b.Dy()) {
		return px, nil
	}
	box = box.Intersect(image.Rect(0, 0, b.Dx(), b.Dy()))
	if box.Empty() {
		return nil, newError(KindInvalidEdit, "the crop box is empty", nil)
	}
	return imaging.Crop(px, box.Add(b.Min)), nil
}
