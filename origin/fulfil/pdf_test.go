package fulfil_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boombuler/barcode/code128"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"vitrine/origin/fulfil"
	"vitrine/origin/store"
	"vitrine/schema"
)

// pdfText validates a PDF with pdfcpu and returns the text its pages show, and how many
// filled rectangles (barcode bars) they draw.
func pdfText(t *testing.T, b []byte) (string, int) {
	text, bars := pdfContent(t, b)
	return text, len(bars)
}

// bar is a filled rectangle of a page: x, y, width, height in points.
type bar struct{ x, y, w, h float64 }

// readCode128 reads back the Code 128 barcode drawn with bars of height h (points): the bars'
// widths in modules, checked against what encoding want gives.
func readCode128(t *testing.T, bars []bar, h float64, want string) {
	t.Helper()
	var mine []bar
	for _, b := range bars {
		if math.Abs(b.h-h) < 0.01 {
			mine = append(mine, b)
		}
	}
	bc, err := code128.Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	var runs []int // the expected dark runs, in modules
	for i, n := 0, bc.Bounds().Dx(); i < n; {
		r, _, _, _ := bc.At(i, 0).RGBA()
		if r > 0x8000 {
			i++
			continue
		}
		j := i
		for ; j < n; j++ {
			if r, _, _, _ := bc.At(j, 0).RGBA(); r > 0x8000 {
				break
			}
		}
		runs = append(runs, j-i)
		i = j
	}
	if len(mine) != len(runs) {
		t.Fatalf("%d bars of height %.2f, want %d for %q", len(mine), h, len(runs), want)
	}
	unit := mine[0].w / float64(runs[0])
	for i, b := range mine {
		if got := int(math.Round(b.w / unit)); got != runs[i] {
			t.Fatalf("bar %d is %d modules wide, want %d: the barcode does not encode %q", i, got, runs[i], want)
		}
	}
}

func pdfContent(t *testing.T, b []byte) (string, []bar) {
	t.Helper()
	conf := model.NewDefaultConfiguration()
	ctx, err := api.ReadContext(bytes.NewReader(b), conf)
	if err != nil {
		t.Fatalf("pdfcpu cannot read the PDF: %v", err)
	}
	if err := api.ValidateContext(ctx); err != nil {
		t.Fatalf("pdfcpu finds the PDF invalid: %v", err)
	}
	var text strings.Builder
	var bars []bar
	re := regexp.MustCompile(`([\d.-]+) ([\d.-]+) ([\d.-]+) ([\d.-]+) re f`)
	tj := regexp.MustCompile(`\(((?:\\.|[^\\)])*)\)\s*Tj`)
	for p := 1; p <= ctx.PageCount; p++ {
		r, err := pdfcpu.ExtractPageContent(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(r)
		for _, m := range tj.FindAllSubmatch(content, -1) {
			text.Write(m[1])
			text.WriteByte('\n')
		}
		for _, m := range re.FindAllSubmatch(content, -1) {
			var v [4]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(string(m[i+1]), 64)
			}
			bars = append(bars, bar{v[0], v[1], v[2], math.Abs(v[3])})
		}
	}
	return text.String(), bars
}

func TestPackingSlipPDF(t *testing.T) {
	o := &store.Order{Reference: "7KQF-3M9X-A2BD-HX4P", Status: "paid", CreatedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC),
		View: schema.OrderView{FulfillmentStatus: "unfulfilled", GiftWrap: true, GiftMessage: "Happy birthday, Zoë!",
			ShippingAddress: schema.Address{Name: "Ann Example", Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"},
			ShippingMethod:  &schema.ShippingOption{Name: "Express"}},
		Lines: []store.OrderLine{{LineNo: 1, SKU: "KET-001", Title: "Kettle / Steel", Quantity: 2}, {LineNo: 2, SKU: "MUG-002", Title: "Mug", Quantity: 1}}}
	slip := fulfil.SlipOf("Corner Shop", o)
	if slip.Units != 3 || len(slip.Lines) != 2 {
		t.Fatalf("slip %+v", slip)
	}
	b, err := slip.PDF()
	if err != nil {
		t.Fatal(err)
	}
	text, bars := pdfText(t, b)
	for _, want := range []string{"Corner Shop", "Order 7KQF-3M9X-A2BD-HX4P", "Ann Example", "1 Main St", "12345 Springfield",
		"KET-001", "Kettle / Steel", "MUG-002", "Shipping: Express", "Happy birthday, Zo"} {
		if !strings.Contains(text, want) {
			t.Errorf("the packing slip does not show %q:\n%s", want, text)
		}
	}
	// The reference's barcode (14 mm high) and each SKU's (8 mm), read back bar by bar.
	_, drawn := pdfContent(t, b)
	readCode128(t, drawn, 14*72/25.4, "7KQF-3M9X-A2BD-HX4P")
	if bars < 3*20 {
		t.Fatalf("%d bars drawn: the SKU barcodes are missing", bars)
	}
}

func TestPickListPDF(t *testing.T) {
	p := &fulfil.PickList{Store: "Corner Shop", GeneratedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Orders: []string{"A", "B"},
		Lines: []fulfil.PickLine{{SKU: "KET-001", Title: "Kettle", Quantity: 3, For: []fulfil.PickFrom{{Reference: "AAAA-AAAA-AAAA-AAAA", Quantity: 2}, {Reference: "BBBB-BBBB-BBBB-BBBB", Quantity: 1}}}},
		Units: 3, SKUs: 1}
	b, err := p.PDF()
	if err != nil {
		t.Fatal(err)
	}
	text, bars := pdfText(t, b)
	for _, want := range []string{"Corner Shop", "2 orders, 1 SKUs, 3 units", "KET-001", "AAAA-AAAA-AAAA-AAAA x2, BBBB-BBBB-BBBB-BBBB x1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the pick list does not show %q:\n%s", want, text)
		}
	}
	if bars < 20 {
		t.Fatalf("%d bars drawn", bars)
	}
}

// BenchmarkPackingSlipPDF renders a 20-line packing slip (a barcode per line) and reports the
// latency distribution of one render.
func BenchmarkPackingSlipPDF(b *testing.B) {
	o := &store.Order{Reference: "7KQF-3M9X-A2BD-HX4P", Status: "paid", CreatedAt: time.Now(),
		View: schema.OrderView{ShippingAddress: schema.Address{Name: "Ann Example", Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"}}}
	for i := range 20 {
		o.Lines = append(o.Lines, store.OrderLine{LineNo: i + 1, SKU: fmt.Sprintf("SKU-%05d-BLU-XL", i), Title: fmt.Sprintf("Product %d / Blue / XL", i), Quantity: int64(1 + i%3)})
	}
	slip := fulfil.SlipOf("Corner Shop", o)
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := slip.PDF(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
	}
}
