package fulfil

import (
	"image/color"

	"github.com/boombuler/barcode/code128"
	"github.com/go-pdf/fpdf"
)

// drawCode128 draws content as a Code 128 barcode in the box (x, y, w, h), in millimetres, as
// vector bars: crisp at any print resolution. (fpdf's contrib/barcode embeds a JPEG of each code
// and keeps every code it ever drew in a process-wide cache: an origin printing slips for
// millions of orders would grow without bound.) A code that cannot be encoded is skipped.
func drawCode128(pdf *fpdf.Fpdf, content string, x, y, w, h float64) {
	bc, err := code128.Encode(content)
	if err != nil {
		return
	}
	b := bc.Bounds()
	modules := b.Dx()
	if modules == 0 {
		return
	}
	unit := w / float64(modules)
	pdf.SetFillColor(0, 0, 0)
	for i := 0; i < modules; {
		if !dark(bc.At(b.Min.X+i, b.Min.Y)) {
			i++
			continue
		}
		j := i
		for j < modules && dark(bc.At(b.Min.X+j, b.Min.Y)) {
			j++
		}
		pdf.Rect(x+float64(i)*unit, y, float64(j-i)*unit, h, "F")
		i = j
	}
}

func dark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r+g+b < 3*0x8000
}
