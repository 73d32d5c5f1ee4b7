package origin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
)

// CheckoutInput is the body of POST /api/checkout.
type CheckoutInput struct {
	// Email is required for a guest; a signed-in customer's email is used when absent.
	Email           *string         `json:"email"`
	ShippingAddress *schema.Address `json:"shipping_address"`
	// BillingAddress defaults to the shipping address.
	BillingAddress *schema.Address `json:"billing_address"`
	// PaymentToken is the payment method, tokenised by the provider's client library; required
	// when anything is due after gift cards.
	PaymentToken *string `json:"payment_token"`
	// ExpectedTotal, when sent, is the total in minor units the shopper was shown: the checkout
	// refuses (409) when the recomputed total differs, so a price change between the cart page
	// and the checkout is never charged silently.
	ExpectedTotal *int64 `json:"expected_total"`
}

// checkoutOutcome is what a checkout answers: an order (201), a decline (402) or an error.
type checkoutOutcome struct {
	status int
	body   any
	err    error
	// record says the outcome is final for the idempotency key (an order exists); otherwise the
	// key is released so that a retry runs again, or, with keep, left running so that a retry
	// after the lease resumes the order.
	record, keep bool
}

// checkout handles POST /api/checkout: reserve in one transaction, authorize the payment outside
// any transaction, then commit or compensate in another. See package payment.
func (s *Server) checkout(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	hash, err := cartSession(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in CheckoutInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	customer, err := s.customers.Customer(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := validateCheckout(&in, customer); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	key := string(ctx.Request.Header.Peek("Idempotency-Key"))
	scope := "checkout:" + hex.EncodeToString(hash)
	resume := ""
	var claimed time.Time // when this request claimed its Idempotency-Key
	if key != "" {
		if err := store.ValidateIdempotencyKey(key); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		h := sha256.New()
		h.Write(ctx.Request.Body())
		if customer != nil {
			h.Write([]byte("\x00customer:" + strconv.FormatInt(customer.ID, 10)))
		}
		state, rec, err := s.db.BeginIdempotent(ctx, rq.Info, scope, key, h.Sum(nil), s.cfg.CheckoutLease)
		if err != nil {
			if schema.ErrorCode(err) == schema.CodeOutcomeUnknown {
				// The claim may stand with nobody working on it: let the retry take it over.
				s.endLease(ctx, rq, scope, key, rec.Claimed)
				err = checkoutOutcomeUnknown(true)
			}
			s.Fail(ctx, rq, err)
			return
		}
		switch state {
		case store.IdempotencyDone:
			ctx.Response.Header.Set("Idempotent-Replayed", "true")
			ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
			ctx.Response.Header.SetContentTypeBytes(pipeline.ContentTypeCommerce)
			ctx.SetStatusCode(rec.Status)
			ctx.SetBody(rec.Body)
			s.http.Observe(ctx, pipeline.RouteIndex(rq.Route), rec.Status)
			return
		case store.IdempotencyRunning:
			s.Fail(ctx, rq, &schema.Error{Code: schema.CodeConflict, RetryAfter: 1,
				Message: "a request with this Idempotency-Key is still in progress; retry shortly"})
			return
		case store.IdempotencyMismatch:
			s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnprocessable, Field: "Idempotency-Key",
				Message: "this Idempotency-Key was already used with a different request; use a new key for a new checkout"})
			return
		case store.IdempotencyTakeover:
			resume = rec.Resource
		}
		claimed = rec.Claimed
	} else {
		var raw [16]byte
		rand.Read(raw[:])
		key = "auto-" + hex.EncodeToString(raw[:])
	}
	out := s.runCheckout(ctx, rq, hash, &in, customer, scope, key, resume)
	explicitKey := !strings.HasPrefix(key, "auto-")
	if schema.ErrorCode(out.err) == schema.CodeOutcomeUnknown {
		// A write of this checkout may or may not have committed (the reserve, the settle).
		// With a key, the key is kept and its lease ended: the client's retry takes it over
		// and resumes the order if one was placed (authorizing again under the order's key
		// charges nothing more), or places it once. Without one, nothing can tell a retry
		// from a new checkout: an order left pending is released by the sweeper.
		out.err = checkoutOutcomeUnknown(explicitKey)
		if explicitKey {
			out.keep = true
			s.endLease(ctx, rq, scope, key, claimed)
		}
	}
	if out.err != nil {
		out.status = pipeline.Status(schema.AsError(out.err))
	}
	if explicitKey {
		// Bookkeeping of the key must not fail the answer: the key then expires by its lease.
		bg := context.WithoutCancel(ctx)
		switch {
		case out.record:
			body, err := schema.MarshalJSON(out.body)
			if err == nil {
				err = s.db.FinishIdempotent(bg, rq.Info, scope, key, out.status, body)
			}
			if err != nil {
				s.log.Warn("idempotency: recording an outcome failed", "err", err)
			}
		case !out.keep:
			if err := s.db.ReleaseIdempotent(bg, rq.Info, scope, key); err != nil {
				s.log.Warn("idempotency: releasing a key failed", "err", err)
			}
		}
	}
	// A checkout that moved a variant across an availability class wrote the log: say at which
	// version, so the shopper can read the product with that floor (read-your-writes).
	s.announceWrites(ctx, rq)
	if out.err != nil {
		if schema.ErrorCode(out.err) == schema.CodeUnauthorized {
			ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine"`)
		}
		s.Fail(ctx, rq, out.err)
		return
	}
	s.Reply(ctx, rq, out.status, out.body)
}

func validateCheckout(in *CheckoutInput, customer *store.Customer) error {
	if in.Email == nil && customer != nil {
		in.Email = &customer.Email
	}
	if in.Email == nil {
		return schema.Invalid("email", "email is required for a guest checkout (or send a customer token)")
	}
	*in.Email = strings.ToLower(strings.TrimSpace(*in.Email))
	if err := schema.ValidateEmail("email", *in.Email); err != nil {
		return err
	}
	if in.ShippingAddress == nil {
		return schema.Invalid("shipping_address", "shipping_address is required")
	}
	if err := schema.ValidateAddress("shipping_address", in.ShippingAddress); err != nil {
		return err
	}
	if in.BillingAddress == nil {
		in.BillingAddress = in.ShippingAddress
	} else if err := schema.ValidateAddress("billing_address", in.BillingAddress); err != nil {
		return err
	}
	if in.PaymentToken != nil && (len(*in.PaymentToken) == 0 || len(*in.PaymentToken) > 255) {
		return schema.Invalid("payment_token", "payment_token must be 1 to 255 characters")
	}
	return nil
}

// runCheckout reserves (or resumes the order named by resume), authorizes and settles.
func (s *Server) runCheckout(ctx context.Context, rq *handler.Request, hash []byte, in *CheckoutInput, customer *store.Customer, scope, key, resume string) checkoutOutcome {
	var o *store.Order
	if resume != "" {
		err := s.db.Tx(ctx, func(tx *store.Tx) error {
			var err error
			o, err = tx.LockOrder(ctx, rq.Info, resume)
			return err
		})
		if err != nil {
			return checkoutOutcome{err: err, keep: true}
		}
	}
	if o == nil {
		var err error
		if o, err = s.reserve(ctx, rq, hash, in, customer, scope, key); err != nil {
			// An unknown outcome keeps the key (checkout): the order may exist.
			return checkoutOutcome{err: err, keep: schema.ErrorCode(err) == schema.CodeOutcomeUnknown}
		}
	}
	switch o.Status {
	case schema.OrderPaid:
		return checkoutOutcome{status: 201, body: &o.View, record: true}
	case schema.OrderPaymentFailed:
		return checkoutOutcome{err: &schema.Error{Code: schema.CodePayment, Message: "payment declined"}, record: true}
	case schema.OrderCancelled:
		return checkoutOutcome{err: &schema.Error{Code: schema.CodeConflict, Message: "this checkout was abandoned and its reservation released; check out again with a new Idempotency-Key"}, record: true}
	}

	var paymentRef, method string
	if o.Due > 0 {
		token := ""
		if in.PaymentToken != nil {
			token = *in.PaymentToken
		}
		save := len(o.Reservation.Subscriptions) > 0
		res, err := s.cfg.Payments.Authorize(ctx, payment.Request{TenantID: rq.Info.ID, Key: o.ID, Amount: o.Due, Currency: o.Currency,
			Token: token, Email: o.Email, SaveMethod: save})
		if err == nil && save && res.Approved && res.Method == "" {
			err = errors.New("checkout: the provider saved no payment method for the subscriptions")
		}
		if err != nil {
			// The outcome is unknown: void whatever may have been authorized, then release.
			s.log.Warn("checkout: payment provider failed", "err", err, "order", o.ID)
			if verr := s.cfg.Payments.Void(context.WithoutCancel(ctx), rq.Info.ID, o.ID); verr != nil {
				// Leave the order pending: the sweeper voids and releases it later.
				return checkoutOutcome{err: providerDown, keep: true}
			}
			if err := s.settle(context.WithoutCancel(ctx), rq, o, schema.OrderCancelled, "", ""); err != nil {
				return checkoutOutcome{err: err, keep: true}
			}
			return checkoutOutcome{err: providerDown}
		}
		if !res.Approved {
			if err := s.settle(context.WithoutCancel(ctx), rq, o, schema.OrderPaymentFailed, "", ""); err != nil {
				return checkoutOutcome{err: err, keep: true}
			}
			return checkoutOutcome{err: &schema.Error{Code: schema.CodePayment, Field: "payment_token", Message: "payment declined: " + res.DeclineReason},
				record: true}
		}
		paymentRef, method = res.ID, res.Method
	}
	if err := s.settle(context.WithoutCancel(ctx), rq, o, schema.OrderPaid, paymentRef, method); err != nil {
		// The payment is authorized but the order could not be marked paid: keep the key
		// running so that a retry after the lease resumes this order (authorizing again under
		// the same key charges nothing more).
		return checkoutOutcome{err: err, keep: true}
	}
	return checkoutOutcome{status: 201, body: &o.View, record: true}
}

var providerDown = &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 2,
	Message: "the payment provider is unavailable; you have not been charged; retry shortly"}

// checkoutOutcomeUnknown is the answer (504) to a checkout whose database write has an unknown
// outcome: safe to retry with the same Idempotency-Key, not without one.
func checkoutOutcomeUnknown(withKey bool) *schema.Error {
	if withKey {
		return &schema.Error{Code: schema.CodeOutcomeUnknown, RetryAfter: 1, Message: "the outcome of this checkout is unknown: " +
			"the database did not confirm whether the order was saved; retrying with the same Idempotency-Key is safe: " +
			"it answers with the order if it was placed, or places it once, and never charges twice"}
	}
	return &schema.Error{Code: schema.CodeOutcomeUnknown, Message: "the outcome of this checkout is unknown: " +
		"the database did not confirm whether the order was saved; look for the order before checking out again " +
		"(send an Idempotency-Key to make a retry safe)"}
}

// endLease ends the lease of this checkout's claim on its key (store.EndIdempotentLease).
func (s *Server) endLease(ctx context.Context, rq *handler.Request, scope, key string, claimed time.Time) {
	if err := s.db.EndIdempotentLease(context.WithoutCancel(ctx), rq.Info, scope, key, claimed); err != nil {
		s.log.Warn("idempotency: ending a key's lease failed; a retry waits for the lease", "err", err)
	}
}

// reserve prices the cart and, in one transaction, takes stock, redeems coupons, debits gift
// cards and inserts the order as pending_payment. The transaction may be retried: it calls
// nothing outside the database.
func (s *Server) reserve(ctx context.Context, rq *handler.Request, hash []byte, in *CheckoutInput, customer *store.Customer, scope, key string) (*store.Order, error) {
	t := rq.Info
	var o *store.Order
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		o = nil
		c, err := tx.LockCart(ctx, t, hash)
		if err != nil {
			return err
		}
		if c == nil || len(c.Items) == 0 {
			return &schema.Error{Code: schema.CodeConflict, Message: "the cart is empty"}
		}
		pc, err := priceCart(ctx, tx, t, c, "")
		if err != nil {
			return err
		}
		if len(pc.view.Issues) > 0 {
			msgs := make([]string, len(pc.view.Issues))
			for i, is := range pc.view.Issues {
				msgs[i] = is.Message
			}
			return &schema.Error{Code: schema.CodeConflict, Field: "cart", Message: "the cart needs attention: " + strings.Join(msgs, "; ")}
		}
		subs, err := subscriptionTerms(ctx, tx, t, pc, customer, in)
		if err != nil {
			return err
		}
		if in.ExpectedTotal != nil && *in.ExpectedTotal != pc.totals.Total {
			return &schema.Error{Code: schema.CodeConflict, Field: "expected_total", Message: "the total changed from " +
				schema.FormatMinor(*in.ExpectedTotal, pc.cur.Exponent) + " to " + schema.FormatMinor(pc.totals.Total, pc.cur.Exponent) +
				" " + pc.cur.Code + "; review the cart"}
		}
		if pc.shippingRequired && pc.view.ShippingMethod == nil {
			return &schema.Error{Code: schema.CodeConflict, Field: "shipping_method", Message: "no shipping method is available for this cart"}
		}
		if pc.totals.Due > 0 && in.PaymentToken == nil && len(pc.giftCards) > 0 {
			return &schema.Error{Code: schema.CodeConflict, Field: "gift_cards", Message: "the gift cards no longer cover the order: " +
				schema.FormatMinor(pc.totals.Due, pc.cur.Exponent) + " " + pc.cur.Code + " is due; send a payment_token or review the cart"}
		}
		if pc.totals.Due > 0 && in.PaymentToken == nil {
			return schema.Invalid("payment_token", "payment_token is required: %s %s is due after gift cards",
				schema.FormatMinor(pc.totals.Due, pc.cur.Exponent), pc.cur.Code)
		}
		o = &store.Order{ID: store.NewUUID(), Reference: schema.NewOrderReference(), Email: *in.Email, Currency: pc.cur.Code,
			Status: schema.OrderPendingPayment, Total: pc.totals.Total, Due: pc.totals.Due, CheckoutKey: scope + "|" + key}
		if customer != nil {
			o.CustomerID = customer.ID
		}
		o.Reservation.CartSession, o.Reservation.CartRevision = hex.EncodeToString(hash), c.Revision
		o.Reservation.Subscriptions = subs
		for i, l := range pc.lines {
			holds, avail, ok, err := tx.TakeLineStock(ctx, t, l.src.Product.ID, l.item.VariantID, l.item.Quantity)
			if err != nil {
				return err
			}
			if !ok {
				msg := "out of stock: " + lineName(l.src)
				if avail > 0 {
					msg = "only " + strconv.FormatInt(avail, 10) + " of " + lineName(l.src) + " left in stock"
				}
				return &schema.Error{Code: schema.CodeConflict, Field: "items." + pc.view.Items[i].ID, Message: msg}
			}
			o.Reservation.Stock = append(o.Reservation.Stock, holds...)
			lt := pc.totals.Lines[i]
			o.Lines = append(o.Lines, store.OrderLine{LineNo: i + 1, VariantID: l.item.VariantID, ProductID: l.src.Product.ID,
				SKU: l.src.Variant.SKU, Title: lineName(l.src), Options: nonNil(l.src.Variant.Options), UnitPrice: l.unit,
				Quantity: l.item.Quantity, Discount: lt.Discount, Tax: lt.Tax, Total: lt.Total})
		}
		for _, cp := range pc.coupons {
			reason, err := tx.RedeemCoupon(ctx, t, cp.Code, o.ID, o.CustomerID, o.Email, pc.totals.DiscountByCode[cp.Code])
			if err != nil {
				return err
			}
			if reason != "" {
				return &schema.Error{Code: schema.CodeConflict, Field: "coupons", Message: "coupon " + cp.Code + " " + reason + "; remove it from the cart"}
			}
			o.Reservation.Coupons = append(o.Reservation.Coupons, cp.Code)
		}
		for i, g := range pc.totals.GiftCards {
			if g.Amount == 0 {
				continue
			}
			ok, err := tx.DebitGiftCard(ctx, t, g.Code, o.ID, g.Amount)
			if err != nil {
				return err
			}
			if !ok {
				return &schema.Error{Code: schema.CodeConflict, Field: "gift_cards",
					Message: "gift card ending " + pc.giftCards[i].Last4 + " no longer covers " + schema.FormatMinor(g.Amount, pc.cur.Exponent) + " " + pc.cur.Code + "; review the cart"}
			}
			o.Reservation.GiftCards = append(o.Reservation.GiftCards, store.GiftCardHold{Key: g.Code, Amount: g.Amount})
		}
		o.View = orderView(pc, o, in, t)
		if err := tx.InsertOrder(ctx, t, o); err != nil {
			return err
		}
		// order.created when the order is placed (pending payment); order.paid follows when the
		// payment settles. A declined order has the first only.
		tx.EmitOrderEvent(t, store.EventOrderCreated, o)
		return tx.SetIdempotentResource(ctx, t, scope, key, o.ID)
	})
	if err != nil {
		return nil, err
	}
	rq.Commits = append(rq.Commits, commits...)
	return o, nil
}

// subscriptionTerms returns the terms of the subscriptions a checkout of pc starts: one per line
// whose variant is sold as a subscription (store.SubscriptionPlan). Such a checkout needs a
// signed-in customer, whose account keeps the card the renewals are charged to, and a card: a
// guest is refused (401), and so is an order the gift cards pay entirely (409).
func subscriptionTerms(ctx context.Context, tx *store.Tx, t *schema.Tenant, pc *pricedCart, customer *store.Customer, in *CheckoutInput) ([]store.SubscriptionTerms, error) {
	ids := make([]schema.VariantID, len(pc.lines))
	for i, l := range pc.lines {
		ids[i] = l.item.VariantID
	}
	plans, err := tx.SubscriptionPlans(ctx, t, ids)
	if err != nil || len(plans) == 0 {
		return nil, err
	}
	var out []store.SubscriptionTerms
	var names []string
	for i, l := range pc.lines {
		p := plans[l.item.VariantID]
		if p == nil {
			continue
		}
		names = append(names, lineName(l.src))
		terms := store.SubscriptionTerms{LineNo: i + 1, Plan: *p, Item: pc.view.Items[i], UnitPrice: l.unit, Quantity: l.item.Quantity,
			Currency: pc.cur.Code, Exponent: pc.cur.Exponent, ShippingAddress: *in.ShippingAddress, BillingAddress: *in.BillingAddress}
		if m := pc.shipping; m != nil {
			terms.Shipping = &store.ShippingTerms{Code: m.Code, Name: m.Name, Price: m.Price, FreeOver: m.FreeOver}
		}
		out = append(out, terms)
	}
	sold := strings.Join(names, ", ")
	if customer == nil {
		return nil, &schema.Error{Code: schema.CodeUnauthorized, Field: "items", Message: "sign in to check out: " + sold +
			" is sold as a subscription, renewed on a card saved to a customer account; send Authorization: Bearer <token> from POST /api/customer/login"}
	}
	if pc.totals.Due == 0 {
		return nil, &schema.Error{Code: schema.CodeConflict, Field: "gift_cards", Message: "the gift cards pay this whole order, so no card " +
			"would be saved for the renewals of " + sold + "; remove a gift card or check the subscription out on its own"}
	}
	return out, nil
}

// orderView is the order as its owner sees it, fixed at purchase.
func orderView(pc *pricedCart, o *store.Order, in *CheckoutInput, t *schema.Tenant) schema.OrderView {
	v := schema.OrderView{Reference: o.Reference, Status: o.Status, FulfillmentStatus: "unfulfilled", Email: o.Email, Currency: o.Currency,
		Items: pc.view.Items, Coupons: pc.view.Coupons, GiftCards: make([]schema.AppliedGiftCard, 0, len(pc.view.GiftCards)),
		ShippingMethod: pc.view.ShippingMethod, ShippingAddress: *in.ShippingAddress, BillingAddress: *in.BillingAddress,
		Notes: pc.view.Notes, GiftWrap: pc.view.GiftWrap, GiftMessage: pc.view.GiftMessage, Totals: pc.view.Totals,
		TrackingURL: t.BaseURL + "/api/tracking/" + o.Reference}
	for _, g := range pc.view.GiftCards {
		g.Balance = nil
		v.GiftCards = append(v.GiftCards, g)
	}
	return v
}

// settle moves a pending order to paid (with its payment reference, starting its subscriptions
// with the saved payment method), or to payment_failed or cancelled (releasing its
// reservation). An order that is no longer pending (the sweeper got there first) is left as it
// is, and o reflects it.
func (s *Server) settle(ctx context.Context, rq *handler.Request, o *store.Order, status, paymentRef, method string) error {
	t := rq.Info
	var settled *store.Order
	commits, err := s.db.LockedWriteTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.LockOrder(ctx, t, o.ID)
		if err != nil {
			return err
		}
		if cur == nil {
			return &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}
		}
		settled = cur
		if cur.Status != schema.OrderPendingPayment {
			return nil
		}
		if err := tx.SetOrderStatus(ctx, t, cur, status, paymentRef); err != nil {
			return err
		}
		if status != schema.OrderPaid {
			return tx.ReleaseReservation(ctx, t, cur)
		}
		tx.EmitOrderEvent(t, store.EventOrderPaid, cur)
		if len(cur.Reservation.Subscriptions) > 0 {
			_, err := tx.StartSubscriptions(ctx, t, cur, method)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if settled.Status == schema.OrderPaid && status == schema.OrderPaid {
		// The cart goes in a transaction of its own: deleting it in the one above made
		// concurrent checkouts conflict through PostgreSQL's page-level predicate locks (a
		// settle deleting from the carts index page that another checkout's reserve read,
		// while that reserve inserted into the orders page this settle read). A cart that
		// outlives its order by a failure here is only a stale cart: it expires.
		// The DELETE locks the row it removes and checks its revision: READ COMMITTED suffices.
		if _, err := s.db.LockedWriteTx(ctx, func(tx *store.Tx) error { return tx.DeleteCheckedOutCart(ctx, t, settled.Reservation) }); err != nil {
			s.log.Warn("checkout: deleting the checked-out cart failed", "err", err, "order", settled.ID)
		}
	}
	rq.Commits = append(rq.Commits, commits...)
	*o = *settled
	return nil
}

// SweepPendingOrders settles orders left in pending_payment for longer than age (their
// checkout's process died between reserving and settling): it voids any authorization under the
// order's key and releases the reservation. It returns how many orders it cancelled.
func (s *Server) SweepPendingOrders(ctx context.Context, age time.Duration) (int, error) {
	stale, err := s.db.StalePendingOrders(ctx, time.Now().Add(-age), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range stale {
		var info *schema.Tenant
		for _, t := range s.rep.Tenants() {
			if i := t.Info(); i != nil && i.ID == p.TenantID {
				info = i
			}
		}
		if info == nil {
			continue
		}
		if err := s.cfg.Payments.Void(ctx, p.TenantID, p.OrderID); err != nil {
			s.log.Warn("sweeper: void failed; will retry", "order", p.OrderID, "err", err)
			continue
		}
		o := &store.Order{ID: p.OrderID}
		if err := s.settle(ctx, &handler.Request{Info: info}, o, schema.OrderCancelled, "", ""); err != nil {
			s.log.Warn("sweeper: release failed; will retry", "order", p.OrderID, "err", err)
			continue
		}
		if o.Status == schema.OrderCancelled {
			n++
		}
	}
	return n, nil
}
