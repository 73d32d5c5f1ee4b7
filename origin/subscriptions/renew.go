package subscriptions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
)

// renewBatch bounds the subscriptions one Renew call acts on.
const renewBatch = 100

// Stats counts what one Renew call did.
type Stats struct {
	Renewed   int // renewals paid
	Declined  int // renewals declined (past_due, or cancelled after the last retry)
	Cancelled int // of those, the subscriptions cancelled
	Waiting   int // renewals left for later: stock short, provider unreachable, or being charged elsewhere
}

// Renew acts on the subscriptions due at now, up to a bound per call: renewals whose period
// ended, retries of declined ones, and claimed renewals whose lease ran out. Maintenance calls it
// with the clock; tests with a later time. Several origins may call it at once: each
// subscription is acted on by one of them (see the package doc).
func (s *Service) Renew(ctx context.Context, now time.Time) (Stats, error) {
	var st Stats
	due, err := s.DB.DueSubscriptions(ctx, now, renewBatch)
	if err != nil {
		return st, err
	}
	tenants := map[string]*schema.Tenant{}
	for _, d := range due {
		t := tenants[d.TenantID]
		if t == nil {
			if t, err = s.DB.TenantByID(ctx, d.TenantID); err != nil {
				s.Log.Warn("subscriptions: tenant of a due subscription", "tenant", d.TenantID, "err", err)
				continue
			}
			tenants[d.TenantID] = t
		}
		if err := s.renew(ctx, t, d.ID, now, &st); err != nil {
			s.Log.Warn("subscriptions: renewal failed; will retry", "subscription", d.ID, "err", err)
			st.Waiting++
		}
	}
	return st, nil
}

// claim is a renewal this process charges: the subscription and its pending order.
type claim struct {
	sub   *store.Subscription
	order *store.Order
}

// renew runs one due subscription's renewal: claim, charge, settle.
func (s *Service) renew(ctx context.Context, t *schema.Tenant, id string, now time.Time, st *Stats) error {
	sched := s.Schedule.WithDefaults()
	c, waiting, err := s.claim(ctx, t, id, now, sched)
	if err != nil || c == nil {
		if waiting {
			st.Waiting++
		}
		return err
	}
	res := payment.Result{Approved: true}
	if c.order.Due > 0 {
		res, err = s.Payments.Charge(ctx, payment.ChargeRequest{TenantID: t.ID, Key: c.order.ID, Method: c.sub.Method,
			Amount: c.order.Due, Currency: c.order.Currency, Email: c.order.Email})
		if err != nil {
			// The outcome is unknown: the claim stays; once its lease is over, a later round
			// charges again under the same key.
			return fmt.Errorf("charging renewal order %s: %w", c.order.ID, err)
		}
	}
	void, err := s.settle(ctx, t, c, res, now, sched, st)
	if err != nil || !void {
		return err
	}
	// Cancelled while being charged: void the authorization, then release the order. A failure
	// leaves the order pending for the sweeper, which voids and releases it.
	if err := s.Payments.Void(ctx, t.ID, c.order.ID); err != nil {
		return fmt.Errorf("voiding renewal order %s: %w", c.order.ID, err)
	}
	_, err = s.DB.LockedWriteTx(ctx, func(tx *store.Tx) error {
		sub, o, err := lockBoth(ctx, tx, t, c)
		if err != nil || sub == nil || o == nil || sub.RenewalOrderID != o.ID {
			return err
		}
		if o.Status == schema.OrderPendingPayment {
			if err := tx.SetOrderStatus(ctx, t, o, schema.OrderCancelled, ""); err != nil {
				return err
			}
			if err := tx.ReleaseReservation(ctx, t, o); err != nil {
				return err
			}
		}
		sub.RenewalOrderID = ""
		return tx.SaveSubscription(ctx, t, sub)
	})
	return err
}

// claim takes a due subscription's renewal under its row lock: it resumes the attempt in flight
// when its order is still pending, else begins one (a pending order holding the stock). It
// returns nil when there is nothing to charge now, with waiting true when the renewal was put
// off.
func (s *Service) claim(ctx context.Context, t *schema.Tenant, id string, now time.Time, sched Schedule) (*claim, bool, error) {
	var c *claim
	var waiting bool
	_, err := s.DB.LockedWriteTx(ctx, func(tx *store.Tx) error {
		c, waiting = nil, false
		sub, err := tx.LockSubscription(ctx, t, id)
		if err != nil || sub == nil || sub.NextAttemptAt == nil || sub.NextAttemptAt.After(now) {
			return err // another origin acted on it first
		}
		if sub.Status != store.SubscriptionActive && sub.Status != store.SubscriptionPastDue {
			sub.NextAttemptAt = nil
			return tx.SaveSubscription(ctx, t, sub)
		}
		lease := now.Add(sched.Lease)
		if sub.RenewalOrderID != "" {
			o, err := tx.LockOrder(ctx, t, sub.RenewalOrderID)
			if err != nil {
				return err
			}
			if o != nil && o.Status == schema.OrderPendingPayment {
				sub.NextAttemptAt = &lease
				c = &claim{sub: sub, order: o}
				return tx.SaveSubscription(ctx, t, sub)
			}
			// The sweeper settled the attempt's order (it voided and released it): begin anew.
			sub.RenewalOrderID = ""
		}
		settings, err := tx.Settings(ctx, t)
		if err != nil {
			return err
		}
		o, err := renewalOrder(t, sub, settings)
		if err != nil {
			return err
		}
		item := &sub.Terms.Item
		holds, _, ok, err := tx.TakeLineStock(ctx, t, item.ProductID, item.VariantID, sub.Terms.Quantity)
		if err != nil {
			return err
		}
		if !ok {
			// Nothing is charged for stock the store lacks: the renewal waits, not counted as a
			// failure.
			next := now.Add(sched.Retries[0])
			sub.NextAttemptAt, waiting = &next, true
			return tx.SaveSubscription(ctx, t, sub)
		}
		o.Reservation.Stock = holds
		if err := tx.InsertOrder(ctx, t, o); err != nil {
			return err
		}
		sub.Attempts++
		sub.RenewalOrderID, sub.NextAttemptAt = o.ID, &lease
		c = &claim{sub: sub, order: o}
		return tx.SaveSubscription(ctx, t, sub)
	})
	return c, waiting, err
}

// lockBoth locks a claim's subscription and order again.
func lockBoth(ctx context.Context, tx *store.Tx, t *schema.Tenant, c *claim) (*store.Subscription, *store.Order, error) {
	sub, err := tx.LockSubscription(ctx, t, c.sub.ID)
	if err != nil || sub == nil {
		return nil, nil, err
	}
	o, err := tx.LockOrder(ctx, t, c.order.ID)
	return sub, o, err
}

// settle records a charge's outcome under the row locks. It reports void true when the
// subscription was cancelled while its approved renewal was charged: the caller voids it.
func (s *Service) settle(ctx context.Context, t *schema.Tenant, c *claim, res payment.Result, now time.Time, sched Schedule, st *Stats) (bool, error) {
	var void bool
	var delta Stats
	_, err := s.DB.LockedWriteTx(ctx, func(tx *store.Tx) error {
		void, delta = false, Stats{}
		sub, o, err := lockBoth(ctx, tx, t, c)
		if err != nil || sub == nil || o == nil || sub.RenewalOrderID != o.ID {
			return err // another origin took the attempt over and settled it
		}
		live := sub.Status == store.SubscriptionActive || sub.Status == store.SubscriptionPastDue
		if o.Status != schema.OrderPendingPayment {
			// The sweeper settled the order (voided, released) first: try again at once.
			sub.RenewalOrderID = ""
			if live {
				sub.NextAttemptAt = &now
			}
			return tx.SaveSubscription(ctx, t, sub)
		}
		if res.Approved && !live {
			void = true
			return nil
		}
		if !res.Approved {
			delta.Declined++
			if err := tx.SetOrderStatus(ctx, t, o, schema.OrderPaymentFailed, ""); err != nil {
				return err
			}
			if err := tx.ReleaseReservation(ctx, t, o); err != nil {
				return err
			}
			sub.RenewalOrderID = ""
			if !live {
				return tx.SaveSubscription(ctx, t, sub)
			}
			sub.FailedAttempts++
			if sub.FailedAttempts > len(sched.Retries) {
				delta.Cancelled++
				return tx.CancelSubscription(ctx, t, sub, store.CancelPaymentFailed, "renewal declined: "+res.DeclineReason)
			}
			next := now.Add(sched.Retries[sub.FailedAttempts-1])
			sub.NextAttemptAt = &next
			wasActive := sub.Status == store.SubscriptionActive
			sub.Status = store.SubscriptionPastDue
			if err := tx.SaveSubscription(ctx, t, sub); err != nil {
				return err
			}
			if wasActive {
				tx.EmitSubscriptionPastDue(t, sub, o.Reference, res.DeclineReason)
			}
			return nil
		}
		delta.Renewed++
		if err := tx.SetOrderStatus(ctx, t, o, schema.OrderPaid, res.ID); err != nil {
			return err
		}
		tx.EmitOrderEvent(t, store.EventOrderCreated, o)
		tx.EmitOrderEvent(t, store.EventOrderPaid, o)
		plan := sub.Plan()
		if err := tx.RecordSubscriptionPeriod(ctx, t, sub.ID, sub.Renewals+1, o.ID); err != nil {
			return err
		}
		sub.Renewals++
		sub.CurrentPeriodStart, sub.CurrentPeriodEnd = sub.CurrentPeriodEnd, plan.PeriodStart(sub.Anchor, sub.Renewals+1)
		sub.LastOrderReference, sub.RenewalOrderID = o.Reference, ""
		sub.Attempts, sub.FailedAttempts, sub.Status = 0, 0, store.SubscriptionActive
		next := sub.CurrentPeriodEnd
		sub.NextAttemptAt = &next
		if plan.Count != nil && sub.Renewals >= *plan.Count {
			sub.Status, sub.NextAttemptAt = store.SubscriptionCompleted, nil
		}
		if err := tx.SaveSubscription(ctx, t, sub); err != nil {
			return err
		}
		tx.EmitSubscriptionRenewed(t, sub, o.Reference)
		return nil
	})
	if err == nil {
		st.Renewed += delta.Renewed
		st.Declined += delta.Declined
		st.Cancelled += delta.Cancelled
	}
	return void, err
}

// renewalOrder makes the pending order of a subscription's next renewal: its line at the price
// fixed at purchase, the store's tax settings of today, the shipping method's price at purchase.
// Its id is derived from the subscription, the period and the attempt: it is the charge's
// idempotency key.
func renewalOrder(t *schema.Tenant, sub *store.Subscription, settings store.Settings) (*store.Order, error) {
	tm := &sub.Terms
	cur := schema.Currency{Code: tm.Currency, Exponent: tm.Exponent}
	in := schema.TotalsInput{Currency: cur,
		Lines: []schema.TotalsLine{{Key: tm.Item.ID, UnitPrice: tm.UnitPrice, Quantity: tm.Quantity, Taxable: true}},
		Tax:   schema.TaxRate{BasisPoints: settings.TaxBasisPoints, Inclusive: settings.TaxInclusive, OnShipping: settings.TaxOnShipping}}
	if sh := tm.Shipping; sh != nil {
		in.Shipping = &schema.ShippingMethod{Code: sh.Code, Name: sh.Name, Price: sh.Price, FreeOver: sh.FreeOver}
	}
	totals, err := schema.ComputeTotals(in)
	if err != nil {
		return nil, err
	}
	money := func(amount int64) schema.Money {
		return schema.Money{Amount: amount, Currency: cur.Code, Formatted: schema.FormatMinor(amount, cur.Exponent)}
	}
	lt := totals.Lines[0]
	item := tm.Item
	item.UnitPrice, item.Quantity = money(tm.UnitPrice), tm.Quantity
	item.Subtotal, item.Discount, item.Tax, item.Total = money(lt.Subtotal), money(lt.Discount), money(lt.Tax), money(lt.Total)
	item.Availability, item.OnSale, item.CompareAt = "", false, nil
	period := sub.Renewals + 1
	o := &store.Order{ID: renewalOrderID(t.ID, sub.ID, period, sub.Attempts), Reference: schema.NewOrderReference(),
		CustomerID: sub.CustomerID, Email: sub.Email, Currency: cur.Code, Status: schema.OrderPendingPayment,
		Total: totals.Total, Due: totals.Due,
		CheckoutKey: "subscription:" + sub.ID + "|" + strconv.Itoa(period) + "." + strconv.Itoa(sub.Attempts)}
	o.View = schema.OrderView{Reference: o.Reference, Status: o.Status, FulfillmentStatus: "unfulfilled", Email: o.Email,
		Currency: cur.Code, Items: []schema.CartLineView{item}, Coupons: []schema.AppliedCoupon{}, GiftCards: []schema.AppliedGiftCard{},
		ShippingAddress: tm.ShippingAddress, BillingAddress: tm.BillingAddress,
		Totals: schema.TotalsView{Subtotal: money(totals.Subtotal), Discount: money(totals.Discount), Shipping: money(totals.Shipping),
			Tax: money(totals.Tax), TaxInclusive: settings.TaxInclusive, Total: money(totals.Total), GiftCards: money(0), Due: money(totals.Due)},
		TrackingURL: t.BaseURL + "/api/tracking/" + o.Reference}
	if sh := tm.Shipping; sh != nil {
		o.View.ShippingMethod = &schema.ShippingOption{Code: sh.Code, Name: sh.Name, Price: money(totals.Shipping),
			Free: totals.Shipping == 0 && sh.Price > 0}
	}
	title := item.Title
	if item.VariantTitle != "" {
		title += " / " + item.VariantTitle
	}
	if item.SKU != "" {
		title += " (SKU " + item.SKU + ")"
	}
	options := item.Options
	if options == nil {
		options = []schema.Option{}
	}
	o.Lines = []store.OrderLine{{LineNo: 1, VariantID: item.VariantID, ProductID: item.ProductID, SKU: item.SKU, Title: title,
		Options: options, UnitPrice: tm.UnitPrice, Quantity: tm.Quantity, Discount: lt.Discount, Tax: lt.Tax, Total: lt.Total}}
	return o, nil
}

// renewalOrderID derives a UUID (version 4 layout) from a renewal attempt: the same attempt
// always gets the same order id, hence the same idempotency key at the provider.
func renewalOrderID(tenantID, subID string, period, attempt int) string {
	h := sha256.Sum256([]byte("vitrine renewal\x00" + tenantID + "\x00" + subID + "\x00" + strconv.Itoa(period) + "\x00" + strconv.Itoa(attempt)))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
