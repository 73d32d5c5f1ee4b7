package fulfil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/carrier"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// DefaultUnitGrams is the weight assumed per unit when a parcel's weight is not given.
const DefaultUnitGrams = 500

// ParcelInput is one parcel of a label request.
type ParcelInput struct {
	Lines       *[]store.RefundLine `json:"lines" doc:"Units of order lines in the parcel (line numbers from 1)."`
	WeightGrams *int64              `json:"weight_grams" doc:"1 to 70000 (default: 500 g per unit)."`
}

// LabelInput is the body of POST …/shipping-label: one parcel (default: every unit not shipped
// yet). The body may be left out.
type LabelInput struct {
	Lines       *[]store.RefundLine `json:"lines" doc:"Units of order lines in the parcel (default: every unit not shipped yet)."`
	WeightGrams *int64              `json:"weight_grams" doc:"1 to 70000 (default: 500 g per unit)."`
	Service     *string             `json:"service" doc:"ground (default) or express."`
}

// MultiLabelInput is the body of POST …/shipping-labels/multi: several parcels, lines split
// across them.
type MultiLabelInput struct {
	Parcels *[]ParcelInput `json:"parcels" doc:"1 to 50 parcels, each listing its lines."`
	Service *string        `json:"service" doc:"ground (default) or express."`
}

// LabelsAnswer is the answer of a label purchase.
type LabelsAnswer struct {
	Shipments []*ShipmentView `json:"shipments"`
	Order     OrderFulfilment `json:"order"`
}

// OrderFulfilment is an order's fulfilment state.
type OrderFulfilment struct {
	Reference         string `json:"reference"`
	FulfillmentStatus string `json:"fulfillment_status"`
}

// ShipmentView is a shipment as the API shows it.
type ShipmentView struct {
	*store.Shipment
	LabelURL string `json:"label_url"`
}

func viewOf(ref string, s *store.Shipment) *ShipmentView {
	if s.Lines == nil {
		s.Lines = []store.RefundLine{}
	}
	return &ShipmentView{Shipment: s, LabelURL: "/api/orders/" + ref + "/shipments/" + s.ID + "/label"}
}

func (s *Service) singleLabel(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in LabelInput
	if len(ctx.Request.Body()) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	s.buyLabels(ctx, rq, []ParcelInput{{Lines: in.Lines, WeightGrams: in.WeightGrams}}, in.Service)
}

func (s *Service) multiLabels(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in MultiLabelInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Parcels == nil || len(*in.Parcels) == 0 || len(*in.Parcels) > 50 {
		s.Fail(ctx, rq, schema.Invalid("parcels", "parcels must list 1 to 50 parcels"))
		return
	}
	for i, p := range *in.Parcels {
		if p.Lines == nil || len(*p.Lines) == 0 {
			s.Fail(ctx, rq, schema.Invalid("parcels", "parcel %d lists no lines", int64(i+1)))
			return
		}
	}
	s.buyLabels(ctx, rq, *in.Parcels, in.Service)
}

// buyLabels answers a label purchase request (purchase).
func (s *Service) buyLabels(ctx *fasthttp.RequestCtx, rq *handler.Request, parcels []ParcelInput, service *string) {
	key, err := handler.IdempotencyKey(ctx, "to buy labels")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	svc := "ground"
	if service != nil {
		svc = *service
	}
	answer, commits, replay, err := s.purchase(ctx, rq.Info, pipeline.Param(ctx, "reference"), key, parcels, svc)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	status := fasthttp.StatusCreated
	if replay {
		ctx.Response.Header.Set("Idempotent-Replayed", "true")
		status = fasthttp.StatusOK
	}
	s.Written(ctx, rq, commits, status, answer)
}

// purchase buys one label per parcel for the order ref of store t: recorded pending under the
// order's row lock, bought from the carrier outside any transaction, then written as shipments
// with the order's fulfilment moved. A purchase with a key used before (same request) finishes
// or answers that purchase (replay true).
func (s *Service) purchase(ctx context.Context, t *schema.Tenant, reference, key string, parcels []ParcelInput, svc string) (*LabelsAnswer, []store.LogCommit, bool, error) {
	if err := store.ValidateIdempotencyKey(key); err != nil {
		return nil, nil, false, err
	}
	if svc != "ground" && svc != "express" {
		return nil, nil, false, schema.Invalid("service", "service is ground or express")
	}
	for i, p := range parcels {
		if p.WeightGrams != nil && (*p.WeightGrams <= 0 || *p.WeightGrams > 70_000) {
			return nil, nil, false, schema.Invalid("weight_grams", "parcel %d: a parcel weighs 1 g to 70 kg", int64(i+1))
		}
		if p.Lines != nil {
			seen := map[int]bool{}
			for _, l := range *p.Lines {
				if l.Line <= 0 || l.Quantity <= 0 || seen[l.Line] {
					return nil, nil, false, schema.Invalid("lines", "each line is named once, with a line number and a positive quantity")
				}
				seen[l.Line] = true
			}
		}
	}
	ref, ok := schema.NormalizeOrderReference(reference)
	if !ok {
		return nil, nil, false, errNoOrder
	}
	body, _ := json.Marshal(struct {
		P []ParcelInput
		S string
	}{parcels, svc})
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])

	var p *store.LabelPurchase
	var o *store.Order
	var replay bool
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, replay = nil, false
		var err error
		if o, err = tx.LockOrderByReference(ctx, t, ref); err != nil || o == nil {
			if err == nil {
				err = errNoOrder
			}
			return err
		}
		st, err := loadShipping(ctx, tx, t, o)
		if err != nil {
			return err
		}
		if p, err = st.byKey(key, hash); err != nil || p != nil {
			replay = p != nil
			return err
		}
		if o.Status != schema.OrderPaid && o.Status != schema.OrderPartiallyRefunded {
			return &schema.Error{Code: schema.CodeConflict, Message: "the order is " + o.Status + ": only paid orders are shipped"}
		}
		left := st.unshipped(true)
		p = &store.LabelPurchase{OrderID: o.ID, Key: key, RequestHash: hash, Kind: "outbound"}
		for i, in := range parcels {
			plan := store.ParcelPlan{Service: svc}
			if in.Lines == nil {
				for _, l := range o.Lines {
					if n := left[l.LineNo]; n > 0 {
						plan.Lines = append(plan.Lines, store.RefundLine{Line: l.LineNo, Quantity: n})
					}
				}
				if len(plan.Lines) == 0 {
					return &schema.Error{Code: schema.CodeConflict, Message: "every unit of this order is shipped already"}
				}
			} else {
				plan.Lines = *in.Lines
			}
			var units int64
			for _, l := range plan.Lines {
				if !slices.ContainsFunc(o.Lines, func(x store.OrderLine) bool { return x.LineNo == l.Line }) {
					return schema.Invalid("lines", "the order has no line %d", int64(l.Line))
				}
				if l.Quantity > left[l.Line] {
					return &schema.Error{Code: schema.CodeConflict, Field: "lines",
						Message: fmt.Sprintf("parcel %d: line %d has %d units left to ship", i+1, l.Line, max(left[l.Line], 0))}
				}
				left[l.Line] -= l.Quantity
				units += l.Quantity
			}
			plan.WeightGrams = units * DefaultUnitGrams
			if in.WeightGrams != nil {
				plan.WeightGrams = *in.WeightGrams
			}
			p.Parcels = append(p.Parcels, plan)
		}
		return tx.InsertLabelPurchase(ctx, t, p)
	})
	if err != nil {
		return nil, nil, false, err
	}
	var labels []carrier.Label
	var failure string
	if p.Status == store.PurchasePending {
		for i, plan := range p.Parcels {
			l, err := s.Carrier.Buy(ctx, carrier.LabelRequest{TenantID: t.ID, Key: p.ID + "/" + strconv.Itoa(i),
				Parcel: carrier.Parcel{WeightGrams: plan.WeightGrams, To: o.View.ShippingAddress, Service: plan.Service},
				From:   t.Name, Reference: o.Reference})
			if err != nil {
				if schema.ErrorCode(err) == schema.CodeInvalid {
					failure = err.Error()
					break
				}
				s.Log.Warn("labels: the carrier failed; the purchase stays pending", "err", err, "purchase", p.ID)
				return nil, nil, false, errCarrierDown
			}
			labels = append(labels, l)
		}
	}
	var answer *LabelsAnswer
	commits, err := s.DB.WriteTx(ctx, func(tx *store.Tx) error {
		o, err := tx.LockOrderByReference(ctx, t, ref)
		if err != nil {
			return err
		}
		st, err := loadShipping(ctx, tx, t, o)
		if err != nil {
			return err
		}
		cur := st.purchase(p.ID)
		if cur != nil && cur.Status == store.PurchasePending && p.Status == store.PurchasePending {
			if failure != "" {
				if err := tx.SettleLabelPurchase(ctx, t, cur, store.PurchaseFailed, failure); err != nil {
					return err
				}
			} else {
				now := time.Now()
				for i, l := range labels {
					plan := cur.Parcels[i]
					sh := newShipment(o, cur, i, plan, l, now)
					if err := tx.InsertShipment(ctx, t, sh); err != nil {
						return err
					}
					st.shipments = append(st.shipments, sh)
				}
				if err := tx.SettleLabelPurchase(ctx, t, cur, store.PurchaseDone, ""); err != nil {
					return err
				}
				if err := moveFulfilment(ctx, tx, t, o, st); err != nil {
					return err
				}
			}
		}
		answer = &LabelsAnswer{Shipments: []*ShipmentView{}, Order: OrderFulfilment{Reference: o.Reference, FulfillmentStatus: o.View.FulfillmentStatus}}
		for _, sh := range st.shipments {
			if sh.PurchaseID == p.ID {
				answer.Shipments = append(answer.Shipments, viewOf(o.Reference, sh))
			}
		}
		if cur != nil && cur.Status == store.PurchaseFailed {
			failure = cur.Failure
		}
		return nil
	})
	if err == nil && failure != "" {
		err = &schema.Error{Code: schema.CodeUnprocessable, Message: "the carrier refused the labels: " + failure}
	}
	return answer, commits, replay, err
}

var (
	errNoOrder     = &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}
	errCarrierDown = &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 2,
		Message: "the carrier did not answer; retry with the same Idempotency-Key to finish this purchase"}
)

// shipping is an order's shipping state: its purchases, shipments and refunds.
type shipping struct {
	order     *store.Order
	purchases []*store.LabelPurchase
	shipments []*store.Shipment
	refunds   []*store.Refund
}

func loadShipping(ctx context.Context, tx *store.Tx, t *schema.Tenant, o *store.Order) (*shipping, error) {
	st := &shipping{order: o}
	var err error
	if o.Lines, err = tx.OrderLines(ctx, t, o.ID); err != nil {
		return nil, err
	}
	if st.purchases, err = tx.LabelPurchases(ctx, t, o.ID); err != nil {
		return nil, err
	}
	if st.shipments, err = tx.Shipments(ctx, t, o.ID); err != nil {
		return nil, err
	}
	st.refunds, err = tx.Refunds(ctx, t, o.ID)
	return st, err
}

// byKey returns the order's purchase made under key (nil when none was), refusing a key used
// for another request.
func (st *shipping) byKey(key, hash string) (*store.LabelPurchase, error) {
	for _, x := range st.purchases {
		if x.Key != key {
			continue
		}
		if x.RequestHash != hash {
			return nil, &schema.Error{Code: schema.CodeUnprocessable, Field: "Idempotency-Key",
				Message: "this Idempotency-Key was already used for other labels of this order; use a new key for new labels"}
		}
		return x, nil
	}
	return nil, nil
}

// newShipment is parcel i of purchase p, bought as label l: its label just created.
func newShipment(o *store.Order, p *store.LabelPurchase, i int, plan store.ParcelPlan, l carrier.Label, now time.Time) *store.Shipment {
	ev, _ := json.Marshal([]carrier.Event{carrier.EventFor(carrier.StatusLabelCreated, o.View.ShippingAddress, now)})
	return &store.Shipment{OrderID: o.ID, PurchaseID: p.ID, Parcel: i, Kind: p.Kind, Carrier: l.Carrier, Service: l.Rate.Service,
		TrackingNumber: l.TrackingNumber, Zone: l.Rate.Zone, Rate: l.Rate.Amount, Currency: l.Rate.Currency,
		WeightGrams: plan.WeightGrams, Lines: plan.Lines, Status: carrier.StatusLabelCreated, Events: ev, LabelPDF: l.PDF}
}

func (st *shipping) purchase(id string) *store.LabelPurchase {
	for _, p := range st.purchases {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// unshipped returns, by line, the units still to ship: ordered, less refunded, less shipped
// (outbound shipments), less what pending purchases hold when withPending.
func (st *shipping) unshipped(withPending bool) map[int]int64 {
	left := Unpicked(st.order, st.refunds)
	for _, sh := range st.shipments {
		if sh.Kind != "outbound" {
			continue
		}
		for _, l := range sh.Lines {
			left[l.Line] -= l.Quantity
		}
	}
	if withPending {
		for _, p := range st.purchases {
			if p.Status == store.PurchasePending && p.Kind == "outbound" {
				for _, parcel := range p.Parcels {
					for _, l := range parcel.Lines {
						left[l.Line] -= l.Quantity
					}
				}
			}
		}
	}
	return left
}

// fulfilmentOf is the order's fulfilment status from its shipments.
func (st *shipping) fulfilmentOf() string {
	shipped, delivered := false, true
	for _, sh := range st.shipments {
		if sh.Kind != "outbound" {
			continue
		}
		shipped = true
		delivered = delivered && sh.Status == carrier.StatusDelivered
	}
	if !shipped {
		return store.FulfilmentUnfulfilled
	}
	all := true
	for _, n := range st.unshipped(false) {
		all = all && n <= 0
	}
	someDelivered := false
	for _, sh := range st.shipments {
		someDelivered = someDelivered || (sh.Kind == "outbound" && sh.Status == carrier.StatusDelivered)
	}
	switch {
	case all && delivered:
		return store.FulfilmentDelivered
	case someDelivered:
		return store.FulfilmentPartiallyDelivered
	case all:
		return store.FulfilmentFulfilled
	}
	return store.FulfilmentPartiallyFulfilled
}

// moveFulfilment sets the order's fulfilment status from its shipments. order.shipped is
// emitted once, when the first parcel leaves (the order stops being unfulfilled), and
// order.delivered once, when the last one arrives; the steps between (partially fulfilled,
// partially delivered) show in the order's status and its tracking.
func moveFulfilment(ctx context.Context, tx *store.Tx, t *schema.Tenant, o *store.Order, st *shipping) error {
	prev, next := o.View.FulfillmentStatus, st.fulfilmentOf()
	if next == prev {
		return nil
	}
	if err := tx.SetFulfilment(ctx, t, o, next); err != nil {
		return err
	}
	if prev == store.FulfilmentUnfulfilled || prev == "" {
		tx.EmitOrderEvent(t, store.EventOrderShipped, o)
	}
	if next == store.FulfilmentDelivered {
		tx.EmitOrderEvent(t, store.EventOrderDelivered, o)
	}
	return nil
}

// shipmentLabel answers a shipment's label PDF.
func (s *Service) shipmentLabel(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	if !ok {
		s.Fail(ctx, rq, errNoOrder)
		return
	}
	pdf, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]byte, error) {
		o, err := tx.OrderByReference(ctx, rq.Info, ref)
		if err != nil || o == nil {
			if err == nil {
				err = errNoOrder
			}
			return nil, err
		}
		return tx.ShipmentLabel(ctx, rq.Info, o.ID, pipeline.Param(ctx, "id"))
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Document(ctx, rq, "label-"+pipeline.Param(ctx, "id")+".pdf", pdf)
}

// AdvanceInput is the body of POST /api/admin/shipments/{id}/advance (may be empty: the next
// status).
type AdvanceInput struct {
	To *string `json:"to" doc:"in_transit, out_for_delivery or delivered (default: the next status)."`
}

// advance moves a shipment's simulated tracking forward (staff): to the next status, or to the
// one named, adding an event for each step passed.
func (s *Service) advance(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in AdvanceInput
	if len(ctx.Request.Body()) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	if in.To != nil && !slices.Contains(carrier.Timeline, *in.To) {
		s.Fail(ctx, rq, schema.Invalid("to", "to is one of in_transit, out_for_delivery, delivered"))
		return
	}
	var view *ShipmentView
	commits, err := s.DB.WriteTx(ctx, func(tx *store.Tx) error {
		sh, err := tx.ShipmentByID(ctx, rq.Info, pipeline.Param(ctx, "id"), false)
		if err != nil {
			return err
		}
		o, err := tx.LockOrder(ctx, rq.Info, sh.OrderID)
		if err != nil {
			return err
		}
		st, err := loadShipping(ctx, tx, rq.Info, o)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(st.shipments, func(x *store.Shipment) bool { return x.ID == sh.ID })
		sh = st.shipments[i]
		target := carrier.Next(sh.Status)
		if in.To != nil {
			target = *in.To
		}
		if target == "" || slices.Index(carrier.Timeline, target) <= slices.Index(carrier.Timeline, sh.Status) {
			return &schema.Error{Code: schema.CodeConflict, Message: "the shipment is " + sh.Status + ": tracking only moves forward"}
		}
		var events []carrier.Event
		if err := json.Unmarshal(sh.Events, &events); err != nil {
			return err
		}
		now := time.Now()
		for x := carrier.Next(sh.Status); x != ""; x = carrier.Next(x) {
			events = append(events, carrier.EventFor(x, o.View.ShippingAddress, now))
			if x == target {
				break
			}
		}
		b, _ := json.Marshal(events)
		if err := tx.SetShipmentStatus(ctx, rq.Info, sh, target, b); err != nil {
			return err
		}
		if sh.Kind == "outbound" {
			if err := moveFulfilment(ctx, tx, rq.Info, o, st); err != nil {
				return err
			}
		}
		view = viewOf(o.Reference, sh)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}
