package carrier

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"github.com/boombuler/barcode/code128"
	"github.com/go-pdf/fpdf"
)

// labelPDF renders a 4×6 in (101.6 × 152.4 mm) thermal label: sender, recipient, service, zone
// and weight, the order reference, and the tracking number as a Code 128 barcode.
func labelPDF(r LabelRequest, l Label) ([]byte, error) {
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: 101.6, Ht: 152.4}})
	pdf.SetTitle("Label "+l.TrackingNumber, true)
	pdf.SetCreator("Vitrine simulated carrier", true)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(5, 5, 5)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 14)
	service := strings.ToUpper(l.Rate.Service)
	if r.Return {
		service += " RETURN"
	}
	pdf.CellFormat(60, 8, "VITRINE SIM "+service, "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "B", 22)
	pdf.CellFormat(31.6, 8, fmt.Sprintf("Z%d", l.Rate.Zone), "", 1, "R", false, 0, "")
	pdf.Line(5, 15, 96.6, 15)
	pdf.SetXY(5, 17)
	pdf.SetFont("Helvetica", "", 8)
	from, to := "FROM: "+r.From, r.Parcel.To
	if r.Return {
		from = "FROM: " + to.Name + ", " + to.City
	}
	pdf.CellFormat(0, 4, tr(from), "", 1, "L", false, 0, "")
	pdf.Ln(2)
	pdf.SetFont("Helvetica", "B", 9)
	pdf.CellFormat(0, 5, "SHIP TO:", "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "B", 12)
	var lines []string
	if r.Return {
		lines = []string{r.From, "Returns department"}
	} else {
		lines = []string{to.Name, to.Company, to.Line1, to.Line2, strings.TrimSpace(to.City + " " + to.Region + " " + to.PostalCode), to.Country}
	}
	for _, s := range lines {
		if strings.TrimSpace(s) != "" {
			pdf.CellFormat(0, 6, tr(s), "", 1, "L", false, 0, "")
		}
	}
	pdf.Line(5, 75, 96.6, 75)
	pdf.SetXY(5, 78)
	pdf.SetFont("Helvetica", "", 9)
	pdf.CellFormat(0, 5, fmt.Sprintf("Weight %.2f kg   Ref %s", float64(r.Parcel.WeightGrams)/1000, r.Reference), "", 1, "L", false, 0, "")
	DrawCode128(pdf, l.TrackingNumber, 8, 90, 85.6, 30)
	pdf.SetXY(5, 122)
	pdf.SetFont("Helvetica", "B", 14)
	pdf.CellFormat(91.6, 8, "TRACKING # "+l.TrackingNumber, "", 1, "C", false, 0, "")
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("carrier: label %s: %w", l.TrackingNumber, err)
	}
	return buf.Bytes(), nil
}

// DrawCode128 draws content as a Code 128 barcode in the box (x, y, w, h), in the document's
// units, as vector bars: crisp at any print resolution. (fpdf's contrib/barcode embeds a JPEG
// of each code and keeps every code it ever drew in a process-wide cache: an origin printing
// documents for millions of orders would grow without bound.) A code that cannot be encoded is
// skipped.
func DrawCode128(pdf *fpdf.Fpdf, content string, x, y, w, h float64) {
	bc, err := code128.Encode(content)
	if err != nil {
		return
	}
	b := bc.Bounds()
	n := b.Dx()
	unit := w / float64(n)
	pdf.SetFillColor(0, 0, 0)
	dark := func(c color.Color) bool { r, g, bl, _ := c.RGBA(); return r+g+bl < 3*0x8000 }
	for i := 0; i < n; {
		if !dark(bc.At(b.Min.X+i, b.Min.Y)) {
			i++
			continue
		}
		j := i
		for j < n && dark(bc.At(b.Min.X+j, b.Min.Y)) {
			j++
		}
		pdf.Rect(x+float64(i)*unit, y, float64(j-i)*unit, h, "F")
		i = j
	}
}
