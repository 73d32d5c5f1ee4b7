package imaging

import (
	"image"

	"github.com/disintegration/imaging"
)

// orient returns the upright image for an EXIF orientation (1..8; anything else is 1):
// the transform a viewer applies to show the stored pixels.
func orient(px image.Image, o int) image.Image {
	switch o {
	case 2: // mirrored horizontally
		return imaging.FlipH(px)
	case 3: // rotated 180°
		return imaging.Rotate180(px)
	case 4: // mirrored vertically
		return imaging.FlipV(px)
	case 5: // mirrored along the top-left to bottom-right diagonal
		return imaging.Transpose(px)
	case 6: // stored rotated 90° counter-clockwise: turn 90° clockwise
		return imaging.Rotate270(px)
	case 7: // mirrored along the top-right to bottom-left diagonal
		return imaging.Transverse(px)
	case 8: // stored rotated 90° clockwise: turn 90° counter-clockwise
		return imaging.Rotate90(px)
	}
	return px
}
