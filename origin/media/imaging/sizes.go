package imaging

import (
	"image"
	"math"
	"sort"

	"github.com/disintegration/imaging"
)

// Size is an image sub-size: a bounding box (0 = unbounded on that side) and whether the image
// is cropped to fill it exactly (centred), as WordPress's add_image_size.
type Size struct {
	Name          string
	Width, Height int
	Crop          bool
}

// WordPressSizes returns the sub-sizes WordPress registers by default, in the order WordPress
// makes them (medium, large, thumbnail, medium_large first, so that the most used exist first if
// the work is cut short; _wp_make_subsizes), then 1536x1536 and 2048x2048.
func WordPressSizes() []Size {
	return []Size{
		{Name: "medium", Width: 300, Height: 300},
		{Name: "large", Width: 1024, Height: 1024},
		{Name: "thumbnail", Width: 150, Height: 150, Crop: true},
		{Name: "medium_large", Width: 768},
		{Name: "1536x1536", Width: 1536, Height: 1536},
		{Name: "2048x2048", Width: 2048, Height: 2048},
	}
}

// BigImageThreshold is WordPress's big_image_size_threshold: a JPEG, GIF or WebP original wider
// or taller than this is scaled to fit it (the "-scaled" file, which becomes the attachment's
// file while the original is kept as original_image). PNGs are never scaled (WordPress #48736).
const BigImageThreshold = 2560

// ScaledDimensions returns the dimensions of the "-scaled" image WordPress makes for an original
// of w×h and type mime, and false when none is made.
func ScaledDimensions(w, h int, mime string) (int, int, bool) {
	if mime == PNG || (w <= BigImageThreshold && h <= BigImageThreshold) {
		return w, h, false
	}
	p, ok := Dimensions(w, h, Size{Width: BigImageThreshold, Height: BigImageThreshold})
	return p.Width, p.Height, ok
}

// Plan is how a sub-size is made from an original: the source box (the whole image, or the
// centred crop) scaled to Width×Height.
type Plan struct {
	Width, Height int
	Src           image.Rectangle
}

// Dimensions is WordPress's image_resize_dimensions: the plan for making size s from a w×h
// original, or false when the size is not made: the original is smaller than the box (never
// upscaled: on the bounded side for a one-sided box, on both sides for a box), or the result
// would have the original's dimensions give or take a pixel.
func Dimensions(w, h int, s Size) (Plan, bool) {
	if w <= 0 || h <= 0 || (s.Width <= 0 && s.Height <= 0) {
		return Plan{}, false
	}
	switch {
	case s.Height <= 0:
		if w < s.Width {
			return Plan{}, false
		}
	case s.Width <= 0:
		if h < s.Height {
			return Plan{}, false
		}
	default:
		if w < s.Width && h < s.Height {
			return Plan{}, false
		}
	}
	var p Plan
	if s.Crop {
		aspect := float64(w) / float64(h)
		newW, newH := min(max(s.Width, 0), w), min(max(s.Height, 0), h)
		if newW == 0 {
			newW = int(math.Round(float64(newH) * aspect))
		}
		if newH == 0 {
			newH = int(math.Round(float64(newW) / aspect))
		}
		ratio := math.Max(float64(newW)/float64(w), float64(newH)/float64(h))
		cropW := int(math.Round(float64(newW) / ratio))
		cropH := int(math.Round(float64(newH) / ratio))
		sx, sy := (w-cropW)/2, (h-cropH)/2
		p = Plan{Width: newW, Height: newH, Src: image.Rect(sx, sy, sx+cropW, sy+cropH)}
	} else {
		newW, newH := Constrain(w, h, s.Width, s.Height)
		p = Plan{Width: newW, Height: newH, Src: image.Rect(0, 0, w, h)}
	}
	if p.Width <= 0 || p.Height <= 0 || (near(p.Width, w) && near(p.Height, h)) {
		return Plan{}, false
	}
	return p, true
}

func near(a, b int) bool { return a-b <= 1 && b-a <= 1 }

// Constrain is WordPress's wp_constrain_dimensions: w×h scaled down (never up) to fit a
// maxW×maxH box (0 = unbounded), keeping the aspect ratio, at least 1×1, with WordPress's
// one-pixel-short correction.
func Constrain(w, h, maxW, maxH int) (int, int) {
	if maxW <= 0 && maxH <= 0 {
		return w, h
	}
	wr, hr := 1.0, 1.0
	didW, didH := false, false
	if maxW > 0 && w > 0 && w > maxW {
		wr, didW = float64(maxW)/float64(w), true
	}
	if maxH > 0 && h > 0 && h > maxH {
		hr, didH = float64(maxH)/float64(h), true
	}
	smaller, larger := math.Min(wr, hr), math.Max(wr, hr)
	ratio := larger
	if int(math.Round(float64(w)*larger)) > maxW || int(math.Round(float64(h)*larger)) > maxH {
		ratio = smaller
	}
	nw := max(1, int(math.Round(float64(w)*ratio)))
	nh := max(1, int(math.Round(float64(h)*ratio)))
	if didW && nw == maxW-1 {
		nw = maxW
	}
	if didH && nh == maxH-1 {
		nh = maxH
	}
	return nw, nh
}

// resample scales px to w×h with a triangle (linear) filter, widened with the scale factor so
// that downscaling averages every source pixel: the filter WordPress's Imagick editor uses
// (FILTER_TRIANGLE).
func resample(px image.Image, w, h int) *image.NRGBA {
	return imaging.Resize(px, w, h, imaging.Linear)
}

// Resize returns img scaled to exactly w×h (the aspect ratio is the caller's business).
func Resize(img *Image, w, h int) *Image {
	return img.with(resample(img.Pixels, w, h))
}

// Fit returns img scaled down to fit a w×h box (0 = unbounded) with Constrain's dimensions, or
// img itself when it already fits. Used for the "-scaled" big image:
// Fit(img, BigImageThreshold, BigImageThreshold).
func Fit(img *Image, w, h int) *Image {
	nw, nh := Constrain(img.Width(), img.Height(), w, h)
	if nw == img.Width() && nh == img.Height() {
		return img
	}
	return Resize(img, nw, nh)
}

// with returns a copy of im with other pixels.
func (im *Image) with(px image.Image) *Image {
	c := *im
	c.Pixels = px
	return &c
}

// Sized is one sub-size made by MakeSizes.
type Sized struct {
	Size  Size
	Image *Image
}

// MakeSizes makes the sizes of img that WordPress would make (Dimensions), in the order given,
// leaving out those it would not. Each is resampled from the original or, to save time, from a
// larger full-frame sub-size already made when that one is at least twice the target's
// resolution on both sides (the difference is below a pixel of the target).
func MakeSizes(img *Image, sizes []Size) []Sized {
	w, h := img.Width(), img.Height()
	type job struct {
		i    int
		plan Plan
	}
	var jobs []job
	for i, s := range sizes {
		if p, ok := Dimensions(w, h, s); ok {
			jobs = append(jobs, job{i, p})
		}
	}
	// Largest first, so that smaller sizes can be made from larger ones.
	order := make([]job, len(jobs))
	copy(order, jobs)
	sort.SliceStable(order, func(a, b int) bool {
		return order[a].plan.Width*order[a].plan.Height > order[b].plan.Width*order[b].plan.Height
	})
	type source struct {
		px   image.Image
		w, h int
	}
	var sources []source // full-frame results, largest first
	made := map[int]*Image{}
	for _, j := range order {
		src, rect := img.Pixels, j.plan.Src
		for k := len(sources) - 1; k >= 0; k-- { // smallest adequate first
			s := sources[k]
			fx, fy := float64(s.w)/float64(w), float64(s.h)/float64(h)
			r := image.Rect(
				int(math.Round(float64(rect.Min.X)*fx)), int(math.Round(float64(rect.Min.Y)*fy)),
				int(math.Round(float64(rect.Max.X)*fx)), int(math.Round(float64(rect.Max.Y)*fy)),
			).Intersect(image.Rect(0, 0, s.w, s.h))
			if r.Dx() >= 2*j.plan.Width && r.Dy() >= 2*j.plan.Height {
				src, rect = s.px, r
				break
			}
		}
		out := resample(subImage(src, rect), j.plan.Width, j.plan.Height)
		made[j.i] = img.with(out)
		if j.plan.Src == image.Rect(0, 0, w, h) {
			sources = append(sources, source{out, j.plan.Width, j.plan.Height})
		}
	}
	result := make([]Sized, 0, len(jobs))
	for _, j := range jobs {
		result = append(result, Sized{Size: sizes[j.i], Image: made[j.i]})
	}
	return result
}

// subImage returns the part of px inside r (px's own coordinates from (0, 0)), without copying
// when px supports it.
func subImage(px image.Image, r image.Rectangle) image.Image {
	b := px.Bounds()
	if r == image.Rect(0, 0, b.Dx(), b.Dy()) {
		return px
	}
	r = r.Add(b.Min)
	if s, ok := px.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return s.SubImage(r)
	}
	return imaging.Crop(px, r)
}
