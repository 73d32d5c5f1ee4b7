// Package fulfil is what a warehouse does with a store's orders through its server keys:
// packing slips, pick lists, shipping labels (one parcel or several, bought from a
// carrier.Carrier), and the fulfilment status they move (unfulfilled, partially fulfilled,
// fulfilled, partially delivered, delivered), with order.shipped emitted when the first parcel
// leaves and order.delivered when the last one arrives.
// Documents are PDFs by default and JSON when the caller accepts application/json.
//
// # Invariants
//
//   - Every route here is a server-key route: the origin checked the key and its scope before a
//     handler runs (origin.dispatch, origin/keys).
//   - A document shows what the order holds in the database, never a cached copy; an order of
//     another store is the 404 of an unknown order.
//   - Labels never ship more units than were ordered less refunded: a purchase is recorded
//     pending under the order's row lock before the carrier is called, outside any transaction.
package fulfil

import (
	"bytes"
	"fmt"
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

// Service answers the fulfilment routes. Its fields are set once, before Bind.
type Service struct {
	*handler.Responder
	DB *store.DB
	// Carrier buys shipping labels.
	Carrier carrier.Carrier
	// Queue carries label batches between origins (nil: batches are refused).
	Queue *Queue
}

// Bind attaches the fulfilment routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("orders.packingslip", s.packingSlip)
	t.Bind("orders.picklist", s.pickList)
	t.Bind("orders.label", s.singleLabel)
	t.Bind("orders.labels.multi", s.multiLabels)
	t.Bind("orders.returnlabel", s.returnLabel)
	t.Bind("orders.shipment.label", s.shipmentLabel)
	t.Bind("admin.shipments.advance", s.advance)
	t.Bind("orders.batchlabels", s.createBatch)
	t.Bind("orders.batchlabels.status", s.batchStatus)
	t.Bind("orders.batchlabels.labels", s.batchLabels)
}

// PackingSlip is what goes in the parcel with an order: who it is for, what is in it.
type PackingSlip struct {
	Store          string         `json:"store"`
	Reference      string         `json:"reference"`
	OrderedAt      time.Time      `json:"ordered_at"`
	Status         string         `json:"status"`
	Fulfilment     string         `json:"fulfillment_status"`
	ShipTo         schema.Address `json:"ship_to"`
	ShippingMethod string         `json:"shipping_method"`
	Lines          []SlipLine     `json:"lines"`
	Units          int64          `json:"units"`
	Notes          string         `json:"notes"`
	GiftWrap       bool           `json:"gift_wrap"`
	GiftMessage    string         `json:"gift_message"`
}

// SlipLine is one line of a packing slip.
type SlipLine struct {
	SKU      string          `json:"sku"`
	Title    string          `json:"title"`
	Options  []schema.Option `json:"options"`
	Quantity int64           `json:"quantity"`
}

// SlipOf is the packing slip of order o of store.
func SlipOf(store string, o *store.Order) *PackingSlip {
	v := o.View
	p := &PackingSlip{Store: store, Reference: o.Reference, OrderedAt: o.CreatedAt, Status: o.Status,
		Fulfilment: v.FulfillmentStatus, ShipTo: v.ShippingAddress, Notes: v.Notes, GiftWrap: v.GiftWrap,
		GiftMessage: v.GiftMessage, Lines: make([]SlipLine, 0, len(o.Lines))}
	if v.ShippingMethod != nil {
		p.ShippingMethod = v.ShippingMethod.Name
	}
	for _, l := range o.Lines {
		opts := l.Options
		if opts == nil {
			opts = []schema.Option{}
		}
		p.Lines = append(p.Lines, SlipLine{SKU: l.SKU, Title: l.Title, Options: opts, Quantity: l.Quantity})
		p.Units += l.Quantity
	}
	return p
}

func (s *Service) packingSlip(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	var o *store.Order
	var err error
	if ok {
		err = s.DB.Tx(ctx, func(tx *store.Tx) error {
			var err error
			if o, err = tx.OrderByReference(ctx, rq.Info, ref); err != nil || o == nil {
				return err
			}
			o.Lines, err = tx.OrderLines(ctx, rq.Info, o.ID)
			return err
		})
	}
	if err == nil && o == nil {
		err = errNoOrder
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	slip := SlipOf(rq.Info.Name, o)
	if WantsJSON(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
		s.Reply(ctx, rq, 200, slip)
		return
	}
	body, err := slip.PDF()
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Document(ctx, rq, "packing-slip-"+o.Reference+".pdf", body)
}

// WantsJSON reports whether an Accept header asks for JSON rather than a document: it names
// application/json (or +json) and not application/pdf before it.
func WantsJSON(accept []byte) bool {
	a := strings.ToLower(string(accept))
	j := strings.Index(a, "json")
	if j < 0 {
		return false
	}
	p := strings.Index(a, "application/pdf")
	return p < 0 || j < p
}

// Document answers a PDF inline, named filename.
func (s *Service) Document(ctx *fasthttp.RequestCtx, rq *handler.Request, filename string, pdf []byte) {
	h := &ctx.Response.Header
	h.Set(fasthttp.HeaderCacheControl, "no-store")
	h.SetContentType("application/pdf")
	h.Set("Content-Disposition", `inline; filename="`+filename+`"`)
	ctx.SetStatusCode(200)
	ctx.SetBody(pdf)
	s.HTTP.Observe(ctx, pipeline.RouteIndex(rq.Route), 200)
}

// PDF renders the slip on A4: the store, the order reference as text and as a Code 128
// barcode, the ship-to address, and one row per line with its SKU's barcode. Text is set in
// the PDF core fonts (Windows-1252): characters outside it print as '?'.
func (p *PackingSlip) PDF() ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle("Packing slip "+p.Reference, true)
	pdf.SetCreator("Vitrine", true)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(15, 15, 15)
	pdf.SetAutoPageBreak(true, 15)
	pdf.AddPage()

	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(110, 8, tr(p.Store), "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	pdf.CellFormat(70, 8, "Packing slip", "", 1, "R", false, 0, "")
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(110, 7, "Order "+p.Reference, "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	pdf.CellFormat(70, 7, "Ordered "+p.OrderedAt.UTC().Format("2006-01-02"), "", 1, "R", false, 0, "")
	carrier.DrawCode128(pdf, p.Reference, 15, pdf.GetY()+1, 80, 14)
	pdf.SetY(pdf.GetY() + 19)

	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(0, 6, "Ship to", "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	for _, line := range addressLines(p.ShipTo) {
		pdf.CellFormat(0, 5, tr(line), "", 1, "L", false, 0, "")
	}
	if p.ShippingMethod != "" {
		pdf.CellFormat(0, 6, tr("Shipping: "+p.ShippingMethod), "", 1, "L", false, 0, "")
	}
	pdf.Ln(3)

	pdf.SetFont("Helvetica", "B", 10)
	pdf.SetFillColor(235, 235, 235)
	pdf.CellFormat(60, 7, "SKU", "1", 0, "L", true, 0, "")
	pdf.CellFormat(100, 7, "Item", "1", 0, "L", true, 0, "")
	pdf.CellFormat(20, 7, "Qty", "1", 1, "R", true, 0, "")
	pdf.SetFont("Helvetica", "", 9)
	for _, l := range p.Lines {
		if pdf.GetY() > 260 {
			pdf.AddPage()
		}
		y := pdf.GetY()
		if l.SKU != "" {
			carrier.DrawCode128(pdf, l.SKU, 16, y+1, 56, 8)
		}
		pdf.SetXY(15, y+9)
		pdf.CellFormat(60, 5, tr(l.SKU), "", 0, "L", false, 0, "")
		pdf.SetXY(75, y+1)
		pdf.MultiCell(100, 5, tr(l.Title), "", "L", false) // the title names the options already
		pdf.SetXY(175, y+1)
		pdf.CellFormat(20, 5, fmt.Sprint(l.Quantity), "", 0, "R", false, 0, "")
		pdf.SetXY(15, max(pdf.GetY(), y+15))
		pdf.Line(15, pdf.GetY(), 195, pdf.GetY())
	}
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(160, 7, "Units", "", 0, "R", false, 0, "")
	pdf.CellFormat(20, 7, fmt.Sprint(p.Units), "", 1, "R", false, 0, "")
	if p.GiftWrap || p.GiftMessage != "" {
		pdf.Ln(2)
		pdf.CellFormat(0, 6, "Gift wrap", "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "I", 10)
		pdf.MultiCell(0, 5, tr(p.GiftMessage), "", "L", false)
	}
	if p.Notes != "" {
		pdf.Ln(2)
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(0, 6, "Notes", "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		pdf.MultiCell(0, 5, tr(p.Notes), "", "L", false)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("fulfil: packing slip %s: %w", p.Reference, err)
	}
	return buf.Bytes(), nil
}

// addressLines are the printed lines of an address.
func addressLines(a schema.Address) []string {
	var out []string
	for _, l := range []string{a.Name, a.Company, a.Line1, a.Line2,
		strings.TrimSpace(strings.Join([]string{a.PostalCode, a.City, a.Region}, " ")), a.Country, a.Phone} {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
