// Package refund is the refunds of orders at the origin, through a server key with
// write_orders: whole, partial by amount, or per line with an optional restock, never beyond what
// was paid less what was refunded, card first and the rest back to the gift cards that paid.
//
// A refund runs like a checkout's payment, in three steps: under the order's row lock it is
// recorded pending (so concurrent refunds of one order see each other's amounts); then the
// payment provider is called outside any transaction with the refund's id as its idempotency
// key; then, under the lock again, the refund succeeds (gift cards credited, stock restocked,
// the order's payment status moved, order.refunded emitted once) or fails (its amount is free
// again). A retry with the same Idempotency-Key finds its refund and finishes it; with another
// request body it is refused.
//
// # Invariants
//
//   - The amounts of an order's pending and succeeded refunds never add up to more than its
//     total; the card's part never to more than the card paid.
//   - A line's refunded quantities never add up to more than was ordered.
//   - The provider is never called inside a database transaction.
package refund

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Service answers the refund route. Its fields are set once, before Bind.
type Service struct {
	*handler.Responder
	DB       *store.DB
	Payments payment.Provider
}

// Bind attaches the refund route's handler.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("orders.refund", s.refund)
}

// RefundInput is the body of POST /api/orders/{reference}/refund. With neither amount nor
// lines, it refunds all that is left.
type RefundInput struct {
	// Amount, in the order currency's minor units; with lines, it replaces their value.
	Amount *int64 `json:"amount" doc:"In the order currency's minor units (default: the lines' value, or all that is left)."`
	// Lines are quantities of order lines (line numbers from 1) given back.
	Lines *[]store.RefundLine `json:"lines" doc:"1 to 500 order lines (numbers from 1), each once, with the quantity given back."`
	// Restock puts the lines' quantities back in stock.
	Restock *bool   `json:"restock" doc:"Puts the lines' quantities back in stock (needs lines)."`
	Reason  *string `json:"reason" doc:"Up to 500 characters."`
}

// RefundAnswer is the body of a refund's answer: the refund, and the order's state after it.
type RefundAnswer struct {
	*store.Refund
	Currency string      `json:"currency"`
	Order    OrderRefund `json:"order"`
}

// OrderRefund is an order's payment state after a refund.
type OrderRefund struct {
	Reference  string `json:"reference"`
	Status     string `json:"status"`
	Total      int64  `json:"total"`
	Refunded   int64  `json:"refunded"`
	Refundable int64  `json:"refundable"`
}

func (s *Service) refund(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in RefundInput
	if err := handler.JSONBody(ctx, &in); err != nil && !(len(ctx.Request.Body()) == 0) {
		s.Fail(ctx, rq, err)
		return
	}
	key, err := handler.IdempotencyKey(ctx, "for refunds")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := in.validate(); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	if !ok {
		s.Fail(ctx, rq, errNoOrder)
		return
	}
	r, replay, err := s.record(ctx, rq, ref, key, in)
	if err == nil && r.Status == store.RefundPending {
		err = s.pay(ctx, rq, r)
	}
	var answer *RefundAnswer
	var commits []store.LogCommit
	if err == nil {
		commits, answer, err = s.settle(ctx, rq, ref, r)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	status := fasthttp.StatusCreated
	if replay {
		ctx.Response.Header.Set("Idempotent-Replayed", "true")
		status = fasthttp.StatusOK
	}
	if answer.Status == store.RefundFailed {
		status = fasthttp.StatusPaymentRequired
	}
	s.Written(ctx, rq, commits, status, answer)
}

var errNoOrder = &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}

func (in *RefundInput) validate() error {
	if in.Amount != nil && *in.Amount <= 0 {
		return schema.Invalid("amount", "amount must be a positive number of minor units")
	}
	if in.Reason != nil {
		if err := schema.ValidateText("reason", *in.Reason, 500, false); err != nil {
			return err
		}
	}
	if in.Lines != nil {
		if len(*in.Lines) == 0 || len(*in.Lines) > 500 {
			return schema.Invalid("lines", "lines must name 1 to 500 order lines")
		}
		seen := map[int]bool{}
		for _, l := range *in.Lines {
			if l.Line <= 0 || l.Quantity <= 0 {
				return schema.Invalid("lines", "each line needs a line number and a positive quantity")
			}
			if seen[l.Line] {
				return schema.Invalid("lines", "line %d is named twice", int64(l.Line))
			}
			seen[l.Line] = true
		}
	}
	if in.Restock != nil && *in.Restock && in.Lines == nil {
		return schema.Invalid("restock", "restock needs lines: the quantities to put back")
	}
	return nil
}

// hash is the request's fingerprint, kept with its Idempotency-Key.
func (in *RefundInput) hash() string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// state is what an order has paid and refunded so far (failed refunds left out).
type state struct {
	refunded, card, gift int64
	qty                  map[int]int64 // line number → refunded quantity
}

func stateOf(refunds []*store.Refund, skip string) state {
	st := state{qty: map[int]int64{}}
	for _, r := range refunds {
		if r.Status == store.RefundFailed || r.ID == skip {
			continue
		}
		st.refunded += r.Amount
		st.card += r.CardAmount
		st.gift += r.GiftCardAmount
		for _, l := range r.Lines {
			st.qty[l.Line] += l.Quantity
		}
	}
	return st
}

func giftPaid(o *store.Order) int64 {
	var n int64
	for _, g := range o.Reservation.GiftCards {
		n += g.Amount
	}
	return n
}

// record finds the refund of key, or checks the request against the order and records it
// pending, under the order's row lock.
func (s *Service) record(ctx *fasthttp.RequestCtx, rq *handler.Request, ref, key string, in RefundInput) (*store.Refund, bool, error) {
	var out *store.Refund
	var replay bool
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		out, replay = nil, false
		o, err := tx.LockOrderByReference(ctx, rq.Info, ref)
		if err != nil {
			return err
		}
		if o == nil {
			return errNoOrder
		}
		refunds, err := tx.Refunds(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		hash := in.hash()
		for _, r := range refunds {
			if r.Key == key {
				if r.RequestHash != hash {
					return &schema.Error{Code: schema.CodeUnprocessable, Field: "Idempotency-Key",
						Message: "this Idempotency-Key was already used for a different refund of this order; use a new key for a new refund"}
				}
				out, replay = r, true
				return nil
			}
		}
		if o.Status != schema.OrderPaid && o.Status != schema.OrderPartiallyRefunded {
			return &schema.Error{Code: schema.CodeConflict, Message: "the order is " + o.Status + ": only paid orders can be refunded"}
		}
		st := stateOf(refunds, "")
		left := o.Total - st.refunded
		r := &store.Refund{OrderID: o.ID, Key: key, RequestHash: hash}
		if in.Lines != nil {
			lines, err := tx.OrderLines(ctx, rq.Info, o.ID)
			if err != nil {
				return err
			}
			for _, want := range *in.Lines {
				i := slices.IndexFunc(lines, func(l store.OrderLine) bool { return l.LineNo == want.Line })
				if i < 0 {
					return schema.Invalid("lines", "the order has no line %d", int64(want.Line))
				}
				l := lines[i]
				done := st.qty[l.LineNo]
				if want.Quantity > l.Quantity-done {
					return &schema.Error{Code: schema.CodeConflict, Field: "lines",
						Message: fmt.Sprintf("line %d has %d of %d left to refund", l.LineNo, l.Quantity-done, l.Quantity)}
				}
				// The value of units done..done+q of the line, so that a line refunded in parts
				// adds up to its total exactly.
				r.Amount += l.Total*(done+want.Quantity)/l.Quantity - l.Total*done/l.Quantity
				r.Lines = append(r.Lines, want)
			}
			r.Restock = in.Restock != nil && *in.Restock
		}
		switch {
		case in.Amount != nil:
			r.Amount = *in.Amount
		case in.Lines == nil:
			r.Amount = left
		}
		if left <= 0 {
			return &schema.Error{Code: schema.CodeConflict, Message: "nothing is left to refund on this order"}
		}
		if r.Amount > left {
			return &schema.Error{Code: schema.CodeConflict, Field: "amount",
				Message: fmt.Sprintf("the refund of %d exceeds the %d left to refund on this order", r.Amount, left)}
		}
		if r.Amount <= 0 {
			return schema.Invalid("amount", "the refund comes to nothing")
		}
		r.CardAmount = min(r.Amount, o.Due-st.card)
		r.GiftCardAmount = r.Amount - r.CardAmount
		if r.GiftCardAmount > giftPaid(o)-st.gift {
			return &schema.Error{Code: schema.CodeConflict, Message: "the refund exceeds what the card and gift cards paid"}
		}
		if in.Reason != nil {
			r.Reason = *in.Reason
		}
		if err := tx.InsertRefund(ctx, rq.Info, r); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, replay, err
}

// pay returns the card's part through the payment provider, outside any transaction. An error
// leaves the refund pending: a retry with the same Idempotency-Key calls the provider again with
// the same key, which refunds at most once.
func (s *Service) pay(ctx *fasthttp.RequestCtx, rq *handler.Request, r *store.Refund) error {
	if r.CardAmount == 0 {
		r.Status = store.RefundSucceeded
		return nil
	}
	o, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.Order, error) { return tx.LockOrder(ctx, rq.Info, r.OrderID) })
	if err != nil {
		return err
	}
	res, err := s.Payments.Refund(ctx, payment.RefundRequest{TenantID: rq.Info.ID, PaymentKey: r.OrderID, Key: r.ID,
		Amount: r.CardAmount, Currency: o.Currency, PaymentID: o.PaymentRef})
	if err != nil {
		s.Log.Warn("refund: payment provider failed; the refund stays pending", "err", err, "refund", r.ID)
		return &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 2,
			Message: "the payment provider did not answer; retry with the same Idempotency-Key to finish this refund"}
	}
	if res.OK {
		r.Status, r.ProviderRef = store.RefundSucceeded, res.ID
	} else {
		r.Status, r.Failure = store.RefundFailed, res.Reason
	}
	return nil
}

// settle finishes a refund under the order's row lock: gift cards credited, stock restocked,
// the order's status moved and order.refunded emitted when it succeeded; its amount freed when
// it failed. A refund settled already (a replay, or a concurrent retry) is answered as it is.
func (s *Service) settle(ctx *fasthttp.RequestCtx, rq *handler.Request, ref string, r *store.Refund) ([]store.LogCommit, *RefundAnswer, error) {
	var answer *RefundAnswer
	commits, err := s.DB.WriteTx(ctx, func(tx *store.Tx) error {
		o, err := tx.LockOrderByReference(ctx, rq.Info, ref)
		if err != nil {
			return err
		}
		refunds, err := tx.Refunds(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(refunds, func(x *store.Refund) bool { return x.ID == r.ID })
		if i < 0 {
			return fmt.Errorf("refund: refund %s of order %s vanished", r.ID, o.ID)
		}
		cur := refunds[i]
		if cur.Status == store.RefundPending && r.Status != store.RefundPending {
			if err := s.apply(ctx, tx, rq, o, refunds, cur, r); err != nil {
				return err
			}
		}
		st := stateOf(refunds, "")
		answer = &RefundAnswer{Refund: cur, Currency: o.Currency, Order: OrderRefund{Reference: o.Reference, Status: o.Status,
			Total: o.Total, Refunded: st.refunded, Refundable: o.Total - st.refunded}}
		if cur.Lines == nil {
			cur.Lines = []store.RefundLine{}
		}
		return nil
	})
	return commits, answer, err
}

// apply moves cur, pending, to the outcome r holds.
func (s *Service) apply(ctx *fasthttp.RequestCtx, tx *store.Tx, rq *handler.Request, o *store.Order, refunds []*store.Refund, cur, r *store.Refund) error {
	if r.Status == store.RefundFailed {
		return tx.SettleRefund(ctx, rq.Info, cur, store.RefundFailed, "", r.Failure)
	}
	// Gift cards get their part back last-used first, after what earlier refunds gave back.
	skip := stateOf(refunds, cur.ID).gift
	credit := cur.GiftCardAmount
	cards := o.Reservation.GiftCards
	for i := len(cards) - 1; i >= 0 && credit > 0; i-- {
		room := cards[i].Amount
		used := min(room, skip)
		skip -= used
		room -= used
		if n := min(room, credit); n > 0 {
			if err := tx.CreditGiftCard(ctx, rq.Info, cards[i].Key, o.ID, n); err != nil {
				return err
			}
			credit -= n
		}
	}
	if cur.Restock {
		lines, err := tx.OrderLines(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		for _, want := range cur.Lines {
			if i := slices.IndexFunc(lines, func(l store.OrderLine) bool { return l.LineNo == want.Line }); i >= 0 {
				if err := tx.ReturnLineStock(ctx, rq.Info, lines[i].ProductID, lines[i].VariantID, want.Quantity); err != nil {
					return err
				}
			}
		}
	}
	if err := tx.SettleRefund(ctx, rq.Info, cur, store.RefundSucceeded, r.ProviderRef, ""); err != nil {
		return err
	}
	status := schema.OrderPartiallyRefunded
	if stateOf(refunds, "").refunded >= o.Total {
		status = schema.OrderRefunded
	}
	if err := tx.SetOrderStatus(ctx, rq.Info, o, status, ""); err != nil {
		return err
	}
	tx.EmitRefundEvent(rq.Info, o, cur)
	return nil
}
