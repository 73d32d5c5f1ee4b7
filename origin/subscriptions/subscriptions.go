// Package subscriptions is a store's subscriptions at the origin: variants sold as
// subscriptions (a plan per variant, set by staff with manage_catalog), the subscriptions a
// signed-in customer's checkout starts (one per subscription line, in the transaction that marks
// the order paid: see package origin's checkout), their renewal by the origins' maintenance
// loops (Service.Renew), and their cancellation by the customer or by staff (manage_commerce).
//
// # Renewal
//
// A subscription's periods are fixed by its start (the anchor) and its plan: period k starts k
// intervals after it. When the current period ends, a renewal runs in three steps, as a
// checkout does: under the subscription's row lock it claims the renewal (a pending order for
// the subscribed line, holding its stock, named on the row, whose next attempt moves a lease
// ahead so that no other origin starts another), then charges the saved payment method outside
// any transaction with the order's id as idempotency key (the id is derived from the
// subscription, the period and the attempt), then settles both under the lock again:
//
//   - approved: the order is paid (order.created and order.paid, as any paid order: fulfilment
//     and accounting follow it), the period is recorded paid (once: a second order for a period
//     fails), and subscription.renewed is emitted with the order's reference. After the plan's
//     count of renewals the subscription is completed and renews no more.
//   - declined: the order is payment_failed and its stock released; the subscription goes
//     past_due (subscription.past_due, once per episode) and is retried after the delays of
//     Schedule.Retries, each counted from the attempt before; the decline after the last retry
//     cancels it (subscription.cancelled, reason payment_failed).
//   - the provider fails (outcome unknown): the attempt stays claimed; once its lease is over, a
//     later round charges again under the same key, which charges at most once.
//
// A renewal whose stock is short charges nothing and waits for the first retry delay, without
// counting as a failure. A subscription cancelled while its renewal was being charged has the
// authorization voided and the order cancelled.
//
// A renewal charges the price per unit fixed at purchase (coupons and gift cards apply to the
// first order only), with the store's tax settings of the day and the shipping method's price at
// purchase, to the addresses of the first order.
//
// # Cancellation
//
// The customer (POST /api/customer/subscriptions/{id}/cancel) or staff (POST
// /api/admin/subscriptions/{id}/cancel) cancel an active or past_due subscription: it renews no
// more, and subscription.cancelled is emitted once. Cancelling a cancelled subscription answers
// 200 with it as it is and emits nothing (a retry is harmless); a completed one is a 409.
// Another customer's subscription is a 404, as an unknown one.
//
// # Invariants
//
//   - A period is paid by one order at most, whatever the number of origins renewing at once:
//     the row lock and the claim decide who charges, subscription_periods refuses a second
//     payment, and every charge of one attempt carries one idempotency key.
//   - The payment provider is never called inside a database transaction.
package subscriptions

import (
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Schedule times renewals. Zero values mean the defaults.
type Schedule struct {
	// Retries are the delays before each retry of a declined renewal, each counted from the
	// attempt before (default 1, 3 and 5 days); the decline after the last one cancels the
	// subscription.
	Retries []time.Duration
	// Lease is how long a claimed renewal may go unsettled (its process died, the provider did
	// not answer) before another round charges it again under the same key (default 2 minutes).
	Lease time.Duration
}

// WithDefaults returns the schedule with its zero values replaced by the defaults.
func (s Schedule) WithDefaults() Schedule {
	if len(s.Retries) == 0 {
		s.Retries = []time.Duration{24 * time.Hour, 72 * time.Hour, 120 * time.Hour}
	}
	if s.Lease == 0 {
		s.Lease = 2 * time.Minute
	}
	return s
}

// Service answers the subscription routes and renews subscriptions. Its fields are set once,
// before Bind.
type Service struct {
	*handler.Responder
	DB       *store.DB
	Payments payment.Provider
	// WithCustomer wraps a handler that needs a signed-in customer (the customer accounts'
	// token check).
	WithCustomer func(h func(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer)) handler.Func
	Schedule     Schedule
}

// Bind attaches the subscription routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("admin.variants.subscription.get", s.getPlan)
	t.Bind("admin.variants.subscription.put", s.putPlan)
	t.Bind("admin.variants.subscription.delete", s.deletePlan)
	t.Bind("customer.subscriptions", s.WithCustomer(s.customerList))
	t.Bind("customer.subscriptions.cancel", s.WithCustomer(s.customerCancel))
	t.Bind("admin.subscriptions.list", s.adminList)
	t.Bind("admin.subscriptions.cancel", s.adminCancel)
}

var (
	errNoPlan         = &schema.Error{Code: schema.CodeNotFound, Message: "the variant is not sold as a subscription"}
	errNoSubscription = &schema.Error{Code: schema.CodeNotFound, Message: "subscription not found"}
)

func (s *Service) getPlan(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "variant")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	plans, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (map[schema.VariantID]*store.SubscriptionPlan, error) {
		return tx.SubscriptionPlans(ctx, rq.Info, []schema.VariantID{schema.VariantID(id)})
	})
	p := plans[schema.VariantID(id)]
	if err == nil && p == nil {
		err = errNoPlan
	}
	s.Respond(ctx, rq, 200, err, p)
}

// PlanInput is the body of PUT /api/admin/variants/{id}/subscription.
type PlanInput struct {
	Interval      *string `json:"interval" doc:"Required: day, week, month or year."`
	IntervalCount *int    `json:"interval_count" doc:"Intervals from one renewal to the next, 1 to 12 (default 1)."`
	Count         *int    `json:"count" doc:"The total number of renewals after the first order, 1 to 1000; leave it out to renew until cancelled."`
}

func (s *Service) putPlan(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "variant")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in PlanInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Interval == nil {
		s.Fail(ctx, rq, schema.Invalid("interval", "interval is required: day, week, month or year"))
		return
	}
	p := &store.SubscriptionPlan{VariantID: schema.VariantID(id), Interval: *in.Interval, IntervalCount: 1, Count: in.Count}
	if in.IntervalCount != nil {
		p.IntervalCount = *in.IntervalCount
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.PutSubscriptionPlan(ctx, rq.Info, p) })
	s.Respond(ctx, rq, 200, err, p)
}

func (s *Service) deletePlan(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "variant")
	if err == nil {
		err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteSubscriptionPlan(ctx, rq.Info, schema.VariantID(id)) })
		if schema.ErrorCode(err) == schema.CodeNotFound {
			err = errNoPlan
		}
	}
	s.NoContentOr(ctx, rq, err)
}

func (s *Service) customerList(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	out, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]*store.Subscription, error) {
		return tx.CustomerSubscriptions(ctx, rq.Info, c.ID)
	})
	s.Respond(ctx, rq, 200, err, schema.List[*store.Subscription]{Data: out})
}

func (s *Service) adminList(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[*store.Subscription]
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		subs, total, err := tx.Subscriptions(ctx, rq.Info, args.Str("status"), (page-1)*perPage, perPage)
		out = schema.Page[*store.Subscription]{Data: subs, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.Respond(ctx, rq, 200, err, out)
}

// CancelInput is the body of a cancellation; it may be left out.
type CancelInput struct {
	Comment *string `json:"comment" doc:"Up to 500 characters, kept with the cancellation."`
}

func (s *Service) customerCancel(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	s.cancel(ctx, rq, c.ID, store.CancelByCustomer)
}

func (s *Service) adminCancel(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	s.cancel(ctx, rq, 0, store.CancelByStaff)
}

// cancel cancels the subscription {id}: of the customer owner, or any of the store's (owner 0).
func (s *Service) cancel(ctx *fasthttp.RequestCtx, rq *handler.Request, owner int64, reason string) {
	var in CancelInput
	if len(ctx.Request.Body()) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	comment := ""
	if in.Comment != nil {
		if err := schema.ValidateText("comment", *in.Comment, 500, false); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		comment = *in.Comment
	}
	id := pipeline.Param(ctx, "id")
	var out *store.Subscription
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, rq.Info, id)
		if err != nil {
			return err
		}
		if sub == nil || owner != 0 && sub.CustomerID != owner {
			return errNoSubscription
		}
		out = sub
		switch sub.Status {
		case store.SubscriptionCancelled:
			return nil // cancelled before: answered as it is, emitted once
		case store.SubscriptionCompleted:
			return &schema.Error{Code: schema.CodeConflict, Message: "the subscription is completed: every renewal of its plan is paid, none is left to cancel"}
		}
		return tx.CancelSubscription(ctx, rq.Info, sub, reason, comment)
	})
	s.Respond(ctx, rq, 200, err, out)
}
