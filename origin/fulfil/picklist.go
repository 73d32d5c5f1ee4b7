package fulfil

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/carrier"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// PickList is what a picker walks the shelves with: every unit the chosen orders still need,
// one row per SKU (sorted by SKU, which is how shelves are labelled), with the orders it goes to.
type PickList struct {
	Store       string     `json:"store"`
	GeneratedAt time.Time  `json:"generated_at"`
	Orders      []string   `json:"orders"`
	Lines       []PickLine `json:"lines"`
	Units       int64      `json:"units"`
	SKUs        int        `json:"skus"`
}

// PickLine is one SKU of a pick list.
type PickLine struct {
	SKU      string     `json:"sku"`
	Title    string     `json:"title"`
	Quantity int64      `json:"quantity"`
	For      []PickFrom `json:"orders"`
}

// PickFrom is how many units of a pick line go to one order.
type PickFrom struct {
	Reference string `json:"reference"`
	Quantity  int64  `json:"quantity"`
}

// Unpicked returns, by line number, the units of an order's lines still to send: ordered, less
// refunded (a refunded unit is not shipped).
func Unpicked(o *store.Order, refunds []*store.Refund) map[int]int64 {
	left := map[int]int64{}
	for _, l := range o.Lines {
		left[l.LineNo] = l.Quantity
	}
	for _, r := range refunds {
		if r.Status == store.RefundFailed {
			continue
		}
		for _, l := range r.Lines {
			left[l.Line] -= l.Quantity
		}
	}
	return left
}

func (s *Service) pickList(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	refs := args.Get("references")
	var wanted []string
	if refs.Given {
		for _, r := range refs.Strs {
			ref, ok := schema.NormalizeOrderReference(r)
			if !ok {
				s.Fail(ctx, rq, schema.Invalid("references", "%q is not an order reference", r))
				return
			}
			wanted = append(wanted, ref)
		}
	}
	from, to := args.Get("from"), args.Get("to")
	if from.Given && to.Given && !from.Time.Before(to.Time) {
		s.Fail(ctx, rq, schema.Invalid("to", "to must be after from"))
		return
	}
	list := &PickList{Store: rq.Info.Name, GeneratedAt: time.Now().UTC(), Orders: []string{}, Lines: []PickLine{}}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		list.Orders, list.Lines, list.Units = []string{}, []PickLine{}, 0
		orders, err := tx.OrdersToPick(ctx, rq.Info, wanted, from.Time, to.Time, int(args.Int("limit")))
		if err != nil {
			return err
		}
		bySKU := map[string]*PickLine{}
		for _, o := range orders {
			refunds, err := tx.Refunds(ctx, rq.Info, o.ID)
			if err != nil {
				return err
			}
			left := Unpicked(o, refunds)
			picked := false
			for _, l := range o.Lines {
				n := left[l.LineNo]
				if n <= 0 {
					continue
				}
				pl := bySKU[l.SKU]
				if pl == nil {
					pl = &PickLine{SKU: l.SKU, Title: l.Title}
					bySKU[l.SKU] = pl
				}
				pl.Quantity += n
				pl.For = append(pl.For, PickFrom{Reference: o.Reference, Quantity: n})
				list.Units += n
				picked = true
			}
			if picked {
				list.Orders = append(list.Orders, o.Reference)
			}
		}
		for _, pl := range bySKU {
			list.Lines = append(list.Lines, *pl)
		}
		sort.Slice(list.Lines, func(i, j int) bool { return list.Lines[i].SKU < list.Lines[j].SKU })
		list.SKUs = len(list.Lines)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if WantsJSON(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
		s.Reply(ctx, rq, 200, list)
		return
	}
	body, err := list.PDF()
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Document(ctx, rq, "pick-list-"+list.GeneratedAt.Format("20060102-150405")+".pdf", body)
}

// PDF renders the pick list on A4: one row per SKU with its barcode, title, total and the
// orders it goes to.
func (p *PickList) PDF() ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle("Pick list", true)
	pdf.SetCreator("Vitrine", true)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(15, 15, 15)
	pdf.SetAutoPageBreak(true, 15)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(110, 8, tr(p.Store), "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	pdf.CellFormat(70, 8, "Pick list "+p.GeneratedAt.Format("2006-01-02 15:04")+" UTC", "", 1, "R", false, 0, "")
	pdf.CellFormat(0, 6, fmt.Sprintf("%d orders, %d SKUs, %d units", len(p.Orders), p.SKUs, p.Units), "", 1, "L", false, 0, "")
	pdf.Ln(2)
	pdf.SetFont("Helvetica", "B", 10)
	pdf.SetFillColor(235, 235, 235)
	pdf.CellFormat(60, 7, "SKU", "1", 0, "L", true, 0, "")
	pdf.CellFormat(95, 7, "Item / orders", "1", 0, "L", true, 0, "")
	pdf.CellFormat(25, 7, "Qty", "1", 1, "R", true, 0, "")
	for _, l := range p.Lines {
		if pdf.GetY() > 255 {
			pdf.AddPage()
		}
		y := pdf.GetY()
		if l.SKU != "" {
			carrier.DrawCode128(pdf, l.SKU, 16, y+1, 56, 8)
		}
		pdf.SetFont("Helvetica", "", 9)
		pdf.SetXY(15, y+9)
		pdf.CellFormat(60, 5, tr(l.SKU), "", 0, "L", false, 0, "")
		pdf.SetXY(75, y+1)
		pdf.MultiCell(95, 5, tr(l.Title), "", "L", false)
		var to []string
		for _, f := range l.For {
			to = append(to, fmt.Sprintf("%s x%d", f.Reference, f.Quantity))
		}
		pdf.SetX(75)
		pdf.SetFont("Helvetica", "", 8)
		pdf.MultiCell(95, 4, strings.Join(to, ", "), "", "L", false)
		end := pdf.GetY()
		pdf.SetXY(170, y+1)
		pdf.SetFont("Helvetica", "B", 11)
		pdf.CellFormat(25, 6, fmt.Sprint(l.Quantity), "", 0, "R", false, 0, "")
		pdf.SetXY(15, max(end, y+15))
		pdf.Line(15, pdf.GetY(), 195, pdf.GetY())
	}
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(155, 7, "Units", "", 0, "R", false, 0, "")
	pdf.CellFormat(25, 7, fmt.Sprint(p.Units), "", 1, "R", false, 0, "")
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("fulfil: pick list: %w", err)
	}
	return buf.Bytes(), nil
}
