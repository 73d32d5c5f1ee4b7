package fulfil

import (
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/carrier"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// ReturnLabelInput is the body of POST …/return-label.
type ReturnLabelInput struct {
	// ReturnID is the approved return (its id or RMA).
	ReturnID    *string `json:"return_id" doc:"The approved return: its id or RMA."`
	WeightGrams *int64  `json:"weight_grams" doc:"1 to 70000 (default: 500 g per unit)."`
}

// returnLabel buys the label a customer sends an approved return back with: one per return,
// recorded pending under the order's row lock, bought outside any transaction, idempotent by key.
func (s *Service) returnLabel(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ReturnLabelInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	key, keyErr := handler.IdempotencyKey(ctx, "to buy labels")
	switch {
	case in.ReturnID == nil:
		s.Fail(ctx, rq, schema.Invalid("return_id", "return_id names the approved return the label is for"))
		return
	case in.WeightGrams != nil && (*in.WeightGrams <= 0 || *in.WeightGrams > 70_000):
		s.Fail(ctx, rq, schema.Invalid("weight_grams", "a parcel weighs 1 g to 70 kg"))
		return
	case keyErr != nil:
		s.Fail(ctx, rq, keyErr)
		return
	}
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	if !ok {
		s.Fail(ctx, rq, errNoOrder)
		return
	}
	b, _ := json.Marshal(in)
	hash := string(b)
	var p *store.LabelPurchase
	var o *store.Order
	var rma string
	replay := false
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, replay = nil, false
		var err error
		if o, err = tx.LockOrderByReference(ctx, rq.Info, ref); err != nil || o == nil {
			if err == nil {
				err = errNoOrder
			}
			return err
		}
		r, err := tx.Return(ctx, rq.Info, *in.ReturnID, true)
		if err != nil {
			return err
		}
		if r.OrderID != o.ID {
			return &schema.Error{Code: schema.CodeNotFound, Message: "return not found"}
		}
		rma = r.RMA
		st, err := loadShipping(ctx, tx, rq.Info, o)
		if err != nil {
			return err
		}
		if p, err = st.byKey(key, hash); err != nil || p != nil {
			replay = p != nil
			return err
		}
		for _, x := range st.purchases {
			if x.Kind == "return" && x.Status != store.PurchaseFailed && len(x.Parcels) > 0 && x.Parcels[0].ReturnID == r.ID {
				return &schema.Error{Code: schema.CodeConflict, Message: "return " + r.RMA + " has a label already"}
			}
		}
		if r.Status != store.ReturnApproved {
			return &schema.Error{Code: schema.CodeConflict, Message: "return " + r.RMA + " is " + r.Status + ": only approved returns get a label"}
		}
		plan := store.ParcelPlan{Service: "ground", ReturnID: r.ID}
		var units int64
		for _, l := range r.Lines {
			plan.Lines = append(plan.Lines, store.RefundLine{Line: l.LineNo, Quantity: l.Quantity})
			units += l.Quantity
		}
		plan.WeightGrams = units * DefaultUnitGrams
		if in.WeightGrams != nil {
			plan.WeightGrams = *in.WeightGrams
		}
		p = &store.LabelPurchase{OrderID: o.ID, Key: key, RequestHash: hash, Kind: "return", Parcels: []store.ParcelPlan{plan}}
		return tx.InsertLabelPurchase(ctx, rq.Info, p)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var label carrier.Label
	if p.Status == store.PurchasePending {
		plan := p.Parcels[0]
		label, err = s.Carrier.Buy(ctx, carrier.LabelRequest{TenantID: rq.Info.ID, Key: p.ID + "/0", Return: true,
			Parcel: carrier.Parcel{WeightGrams: plan.WeightGrams, To: o.View.ShippingAddress, Service: plan.Service},
			From:   rq.Info.Name, Reference: rma})
		if err != nil {
			s.Log.Warn("return label: the carrier failed; the purchase stays pending", "err", err, "purchase", p.ID)
			s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 2,
				Message: "the carrier did not answer; retry with the same Idempotency-Key to finish this purchase"})
			return
		}
	}
	var answer *LabelsAnswer
	commits, err := s.DB.WriteTx(ctx, func(tx *store.Tx) error {
		o, err := tx.LockOrderByReference(ctx, rq.Info, ref)
		if err != nil {
			return err
		}
		st, err := loadShipping(ctx, tx, rq.Info, o)
		if err != nil {
			return err
		}
		if cur := st.purchase(p.ID); cur != nil && cur.Status == store.PurchasePending && p.Status == store.PurchasePending {
			sh := newShipment(o, cur, 0, cur.Parcels[0], label, time.Now())
			if err := tx.InsertShipment(ctx, rq.Info, sh); err != nil {
				return err
			}
			st.shipments = append(st.shipments, sh)
			if err := tx.SettleLabelPurchase(ctx, rq.Info, cur, store.PurchaseDone, ""); err != nil {
				return err
			}
		}
		answer = &LabelsAnswer{Shipments: []*ShipmentView{}, Order: OrderFulfilment{Reference: o.Reference, FulfillmentStatus: o.View.FulfillmentStatus}}
		for _, sh := range st.shipments {
			if sh.PurchaseID == p.ID {
				answer.Shipments = append(answer.Shipments, viewOf(o.Reference, sh))
			}
		}
		return nil
	})
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
