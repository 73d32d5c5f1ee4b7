package imaging

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"

	mi "vitrine/origin/media/imaging"
)

// Photo returns a deterministic w×h JPEG (quality 90) that compresses like a photograph: smooth
// gradients and waves with per-pixel noise, from seed.
func Photo(w, h int, seed uint64) ([]byte, error) {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fx, fy := 2*math.Pi/float64(w), 2*math.Pi/float64(h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := 128 + 60*math.Sin(3*fx*float64(x))*math.Cos(2*fy*float64(y)) + 40*float64(x+y)/float64(w+h) + rng.NormFloat64()*6
			img.Y[y*img.YStride+x] = clamp(v)
		}
	}
	for y := 0; y < (h+1)/2; y++ {
		for x := 0; x < (w+1)/2; x++ {
			i := y*img.CStride + x
			img.Cb[i] = clamp(128 + 30*math.Sin(fx*float64(2*x)+1) + rng.NormFloat64()*3)
			img.Cr[i] = clamp(128 + 30*math.Cos(fy*float64(2*y)) + rng.NormFloat64()*3)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func clamp(v float64) uint8 { return uint8(max(0, min(255, math.Round(v)))) }

// Output is one image an engine made.
type Output struct {
	Name   string `json:"name"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int    `json:"bytes"`
}

// Engine makes every target of an upload from the original's bytes, encoding as mime.
type Engine struct {
	Name string
	Make func(src []byte, mime string) ([]Output, error)
}

// Target is one image to make: the "-scaled" image or a sub-size, with its WordPress plan.
type Target struct {
	Name string
	Size mi.Size
	Plan mi.Plan
}

// Targets returns what WordPress makes from a w×h JPEG: the -scaled image when over the
// threshold, then each sub-size that is made.
func Targets(w, h int) []Target {
	var ts []Target
	if sw, sh, ok := mi.ScaledDimensions(w, h, mi.JPEG); ok {
		ts = append(ts, Target{Name: "scaled", Size: mi.Size{Name: "scaled", Width: mi.BigImageThreshold, Height: mi.BigImageThreshold},
			Plan: mi.Plan{Width: sw, Height: sh, Src: image.Rect(0, 0, w, h)}})
	}
	for _, s := range mi.WordPressSizes() {
		if p, ok := mi.Dimensions(w, h, s); ok {
			ts = append(ts, Target{Name: s.Name, Size: s, Plan: p})
		}
	}
	return ts
}

// Engines returns the engines built in: the pure-Go one, and libvips with the vips tag.
func Engines() []Engine {
	return append([]Engine{{Name: "pure-go", Make: Pure}}, vipsEngines()...)
}

// Pure is the pure-Go path as the media handlers run it: probe, decode once (EXIF orientation
// applied, metadata dropped), the -scaled image with Fit, the sub-sizes with MakeSizes, each
// encoded at WordPress's default quality.
func Pure(src []byte, mime string) ([]Output, error) {
	img, err := mi.DecodeBytes(src, mi.Limits{})
	if err != nil {
		return nil, err
	}
	var out []Output
	enc := func(name string, im *mi.Image) error {
		var b bytes.Buffer
		if err := mi.Encode(&b, im, mime, 0); err != nil {
			return err
		}
		out = append(out, Output{Name: name, Width: im.Width(), Height: im.Height(), Bytes: b.Len()})
		return nil
	}
	if _, _, ok := mi.ScaledDimensions(img.Width(), img.Height(), img.Mime); ok {
		if err := enc("scaled", mi.Fit(img, mi.BigImageThreshold, mi.BigImageThreshold)); err != nil {
			return nil, err
		}
	}
	for _, s := range mi.MakeSizes(img, mi.WordPressSizes()) {
		if err := enc(s.Size.Name, s.Image); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check compares an engine's outputs with the targets of a w×h original.
func check(outs []Output, w, h int) error {
	ts := Targets(w, h)
	if len(outs) != len(ts) {
		return fmt.Errorf("%d outputs, want %d", len(outs), len(ts))
	}
	want := map[string]mi.Plan{}
	for _, t := range ts {
		want[t.Name] = t.Plan
	}
	for _, o := range outs {
		p, ok := want[o.Name]
		if !ok || p.Width != o.Width || p.Height != o.Height || o.Bytes == 0 {
			return fmt.Errorf("%s: %dx%d (%d bytes), want %dx%d", o.Name, o.Width, o.Height, o.Bytes, p.Width, p.Height)
		}
	}
	return nil
}
