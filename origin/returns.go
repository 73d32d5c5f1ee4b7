package origin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Return limits.
const (
	maxReturnItems   = 100
	maxReturnNoteLen = 2000
)

// ReturnInput is the body of POST /api/orders/{reference}/return.
type ReturnInput struct {
	// Email proves ownership when neither X-Order-Email nor a customer token does.
	Email *string            `json:"email" doc:"The order's email, when neither X-Order-Email nor a customer token proves ownership."`
	Items *[]ReturnItemInput `json:"items" doc:"The lines returned: 1 to 100, each line at most once."`
	Note  *string            `json:"note" doc:"The shopper's note, up to 2000 bytes."`
}

// ReturnItemInput names an order line by line_no or by variant_id (exactly one).
type ReturnItemInput struct {
	LineNo    *int64  `json:"line_no" doc:"The order line's number; send this or variant_id."`
	VariantID *int64  `json:"variant_id" doc:"The order line's variant; send this or line_no."`
	Quantity  *int64  `json:"quantity" doc:"Units returned: at most those bought and not already in other returns."`
	Reason    *string `json:"reason" doc:"damaged, wrong_item, not_as_described, no_longer_needed or other."`
}

// ShopperReturn is a return as its shopper sees it (no staff notes, no history).
type ShopperReturn struct {
	RMA            string             `json:"rma"`
	OrderReference string             `json:"order_reference"`
	Status         string             `json:"status"`
	Items          []store.ReturnLine `json:"items"`
	Note           string             `json:"note"`
	// RefundAmount is null until the return is refunded.
	RefundAmount *schema.Money `json:"refund_amount" doc:"Null until the return is refunded."`
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
}

// currencyOf returns a currency of the store for showing amounts; a currency the store has since
// removed is shown with two decimals.
func currencyOf(ctx context.Context, tx *store.Tx, t *schema.Tenant, code string) (*schema.Currency, error) {
	c, err := tx.Currency(ctx, t, code)
	if schema.ErrorCode(err) == schema.CodeNotFound {
		return &schema.Currency{Code: code, Exponent: 2}, nil
	}
	return c, err
}

func toShopper(r *store.Return, cur *schema.Currency) ShopperReturn {
	v := ShopperReturn{RMA: r.RMA, OrderReference: r.OrderReference, Status: r.Status, Items: r.Lines, Note: r.Note,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Status == store.ReturnRefunded {
		m := money(r.RefundAmount, cur)
		v.RefundAmount = &m
	}
	return v
}

// shopperReturns returns the returns of an order as its shopper sees them.
func shopperReturns(ctx context.Context, tx *store.Tx, t *schema.Tenant, o *store.Order) ([]ShopperReturn, error) {
	rs, err := tx.OrderReturns(ctx, t, o.ID)
	if err != nil {
		return nil, err
	}
	cur, err := currencyOf(ctx, tx, t, o.Currency)
	if err != nil {
		return nil, err
	}
	out := make([]ShopperReturn, 0, len(rs))
	for _, r := range rs {
		out = append(out, toShopper(r, cur))
	}
	return out, nil
}

// validateReturn checks the shape of a return request (the order is checked later).
func validateReturn(in *ReturnInput) error {
	if in.Items == nil || len(*in.Items) == 0 {
		return schema.Invalid("items", "items is required: [{\"line_no\" or \"variant_id\", \"quantity\", \"reason\"}]")
	}
	if len(*in.Items) > maxReturnItems {
		return schema.Invalid("items", "a return has at most %d items", int64(maxReturnItems))
	}
	for i, it := range *in.Items {
		f := "items[" + strconv.Itoa(i) + "]"
		if (it.LineNo == nil) == (it.VariantID == nil) {
			return schema.Invalid(f, "%s names its order line with exactly one of line_no and variant_id", f)
		}
		if it.LineNo != nil && *it.LineNo <= 0 || it.VariantID != nil && *it.VariantID <= 0 {
			return schema.Invalid(f, "%s: line_no and variant_id are positive integers", f)
		}
		if it.Quantity == nil || *it.Quantity < 1 || *it.Quantity > schema.MaxLineQuantity {
			return schema.Invalid(f+".quantity", "%s.quantity is required: 1 to %d", f, int64(schema.MaxLineQuantity))
		}
		if it.Reason == nil || !store.ValidReturnReason(*it.Reason) {
			return schema.Invalid(f+".reason", "%s.reason is required: one of %s", f, strings.Join(store.ReturnReasons, ", "))
		}
	}
	if in.Note != nil {
		if err := schema.ValidateText("note", *in.Note, maxReturnNoteLen, false); err != nil {
			return err
		}
	}
	return nil
}

// errReturnNoOrder answers a return for an order that does not exist, belongs to another store,
// or is not the caller's: the three are not told apart.
var errReturnNoOrder = &schema.Error{Code: schema.CodeNotFound, Message: "no order with this reference and email (or customer)"}

// submitReturn handles POST /api/orders/{reference}/return: a return request for lines of a paid
// order, checked against what was bought and what other returns already claim, under a lock on
// the order so that two requests for the last unit of a line cannot both pass.
func (s *Server) submitReturn(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if err := returnThrottle.Spend(ctx, s.db, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in ReturnInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := validateReturn(&in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	bodyEmail := ""
	if in.Email != nil {
		bodyEmail = *in.Email
	}
	p, err := s.orderProof(ctx, rq, bodyEmail)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if p.email == "" && p.customer == nil {
		s.Fail(ctx, rq, schema.Invalid("email", "prove the order is yours: send its email (X-Order-Email or email) or your customer token"))
		return
	}
	note := ""
	if in.Note != nil {
		note = *in.Note
	}
	ref, wellFormed := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	var out ShopperReturn
	var proved bool
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		proved = false
		if !wellFormed {
			return errReturnNoOrder
		}
		o, err := tx.OrderByReference(ctx, rq.Info, ref)
		if err != nil {
			return err
		}
		if proved = p.owns(o); !proved {
			return errReturnNoOrder
		}
		if o, err = tx.LockOrder(ctx, rq.Info, o.ID); err != nil {
			return err
		}
		if o == nil {
			return errReturnNoOrder
		}
		if o.Status != schema.OrderPaid {
			return &schema.Error{Code: schema.CodeConflict, Message: "only paid orders can be returned; this order is " + o.Status}
		}
		lines, err := tx.OrderLines(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		others, err := tx.OrderReturns(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		left := store.Returnable(lines, others)
		var rls []store.ReturnLine
		for i, it := range *in.Items {
			f := "items[" + strconv.Itoa(i) + "]"
			var line *store.OrderLine
			for j := range lines {
				l := &lines[j]
				if it.LineNo != nil && int64(l.LineNo) == *it.LineNo || it.VariantID != nil && int64(l.VariantID) == *it.VariantID {
					line = l
				}
			}
			if line == nil {
				return schema.Invalid(f, "%s: the order has no such line", f)
			}
			for _, have := range rls {
				if have.LineNo == line.LineNo {
					return schema.Invalid(f, "%s: line %d is named twice", f, int64(line.LineNo))
				}
			}
			if can := max(left[line.LineNo], 0); *it.Quantity > can {
				msg := fmt.Sprintf("line %d (%s): at most %d of the %d bought can be returned", line.LineNo, line.Title, can, line.Quantity)
				if in := line.Quantity - can; in > 0 {
					msg += fmt.Sprintf("; %d already in other returns", in)
				}
				return &schema.Error{Code: schema.CodeConflict, Field: f + ".quantity", Message: msg}
			}
			rls = append(rls, store.ReturnLine{LineNo: line.LineNo, VariantID: line.VariantID, Title: line.Title,
				Quantity: *it.Quantity, Reason: *it.Reason})
		}
		r, err := tx.CreateReturn(ctx, rq.Info, o, rls, note)
		if err != nil {
			return err
		}
		cur, err := currencyOf(ctx, tx, rq.Info, o.Currency)
		if err != nil {
			return err
		}
		out = toShopper(r, cur)
		return nil
	})
	if errors.Is(err, errReturnNoOrder) && wellFormed && p.email != "" && !proved {
		if perr := s.failedProof(ctx, rq, ref); perr != nil {
			err = perr
		}
	}
	s.Respond(ctx, rq, 201, err, out)
}

// AdminReturn is a return as staff see it, with the most its refund may record.
type AdminReturn struct {
	*store.Return
	// Refundable is what was paid for the returned lines (their totals after discounts, with
	// tax; shipping excluded), in minor units of the order's currency.
	Refundable int64 `json:"refundable" doc:"The most the refund may record: what was paid for the returned lines, shipping excluded, in minor units."`
}

func (s *Server) listReturns(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[*store.Return]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		rs, total, err := tx.Returns(ctx, rq.Info, args.Str("status"), (page-1)*perPage, perPage)
		out = schema.Page[*store.Return]{Data: nonNil(rs), Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.answer(ctx, rq, err, out)
}

func (s *Server) getReturn(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var out AdminReturn
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		r, err := tx.Return(ctx, rq.Info, pipeline.Param(ctx, "id"), false)
		if err != nil {
			return err
		}
		lines, err := tx.OrderLines(ctx, rq.Info, r.OrderID)
		out = AdminReturn{Return: r, Refundable: store.Refundable(lines, r)}
		return err
	})
	s.answer(ctx, rq, err, out)
}

// ReturnTransitionInput is the body of POST /api/admin/returns/{id}/transition.
type ReturnTransitionInput struct {
	Status *string `json:"status" doc:"The new status: submitted, approved, declined, received or refunded."`
	// Note is kept for staff (the return's staff_note and its history); shoppers do not see it.
	Note *string `json:"note" doc:"Kept for staff (staff_note and history); shoppers do not see it. Up to 2000 bytes."`
	// RefundAmount, for status refunded only, is the amount recorded as refunded (default: all
	// that is refundable).
	RefundAmount *int64 `json:"refund_amount" doc:"For status refunded only: the amount recorded as refunded, 0 to refundable (default: refundable). No money moves."`
}

func (s *Server) transitionReturn(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ReturnTransitionInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Status == nil || !slices.Contains(store.ReturnStatuses, *in.Status) {
		s.Fail(ctx, rq, schema.Invalid("status", "status is required: one of %s", strings.Join(store.ReturnStatuses, ", ")))
		return
	}
	note := ""
	if in.Note != nil {
		note = *in.Note
		if err := schema.ValidateText("note", note, maxReturnNoteLen, false); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	if in.RefundAmount != nil && *in.Status != store.ReturnRefunded {
		s.Fail(ctx, rq, schema.Invalid("refund_amount", "refund_amount is recorded only when the return becomes refunded"))
		return
	}
	var out AdminReturn
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		r, err := tx.Return(ctx, rq.Info, pipeline.Param(ctx, "id"), true)
		if err != nil {
			return err
		}
		lines, err := tx.OrderLines(ctx, rq.Info, r.OrderID)
		if err != nil {
			return err
		}
		most := store.Refundable(lines, r)
		refund := most
		if in.RefundAmount != nil {
			if *in.RefundAmount < 0 || *in.RefundAmount > most {
				return schema.Invalid("refund_amount", "refund_amount must be between 0 and %d: what was paid for the returned lines", most)
			}
			refund = *in.RefundAmount
		}
		if err := tx.MoveReturn(ctx, rq.Info, r, *in.Status, note, rq.User.Login, refund); err != nil {
			return err
		}
		out = AdminReturn{Return: r, Refundable: most}
		return nil
	})
	s.Respond(ctx, rq, 200, err, out)
}
