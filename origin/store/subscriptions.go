package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/payment"
	"vitrine/schema"
)

// Subscription events (schema.EventKinds).
const (
	EventSubscriptionRenewed   = "subscription.renewed"
	EventSubscriptionCancelled = "subscription.cancelled"
	EventSubscriptionPastDue   = "subscription.past_due"
)

// Subscription statuses.
const (
	SubscriptionActive    = "active"    // renews when its period ends
	SubscriptionPastDue   = "past_due"  // a renewal was declined; retried on a schedule
	SubscriptionCancelled = "cancelled" // by its customer, by staff, or after its last declined retry
	SubscriptionCompleted = "completed" // its last renewal (the plan's count) is paid
)

// Cancellation reasons.
const (
	CancelByCustomer    = "customer"
	CancelByStaff       = "staff"
	CancelPaymentFailed = "payment_failed"
)

// Bounds of a subscription plan.
const (
	MaxIntervalCount = 12
	MaxRenewalCount  = 1000
)

// SubscriptionPlan is how a variant is sold as a subscription: renewed every IntervalCount
// Intervals, Count times (nil: until cancelled).
type SubscriptionPlan struct {
	VariantID     schema.VariantID `json:"variant_id"`
	Interval      string           `json:"interval" doc:"day, week, month or year."`
	IntervalCount int              `json:"interval_count" doc:"Intervals from one renewal to the next, 1 to 12."`
	Count         *int             `json:"count" doc:"The total number of renewals after the first order (1 to 1000); null: until cancelled."`
	CreatedAt     time.Time        `json:"created_at"`
	UpdatedAt     time.Time        `json:"updated_at"`
}

// Validate checks a plan's interval and counts.
func (p *SubscriptionPlan) Validate() error {
	switch p.Interval {
	case "day", "week", "month", "year":
	default:
		return schema.Invalid("interval", "interval must be day, week, month or year")
	}
	if p.IntervalCount < 1 || p.IntervalCount > MaxIntervalCount {
		return schema.Invalid("interval_count", "interval_count must be between 1 and %d", int64(MaxIntervalCount))
	}
	if p.Count != nil && (*p.Count < 1 || *p.Count > MaxRenewalCount) {
		return schema.Invalid("count", "count (the total number of renewals) must be between 1 and %d; leave it out to renew until cancelled", int64(MaxRenewalCount))
	}
	return nil
}

// PeriodStart returns when period k of a subscription anchored at anchor starts: k times the
// plan's interval later. Months and years keep the anchor's day, or the month's last day when it
// has fewer (an anchor on 31 January renews on 28 or 29 February, then on 31 March).
func (p *SubscriptionPlan) PeriodStart(anchor time.Time, k int) time.Time {
	n := k * p.IntervalCount
	switch p.Interval {
	case "day":
		return anchor.AddDate(0, 0, n)
	case "week":
		return anchor.AddDate(0, 0, 7*n)
	case "year":
		n *= 12
	}
	y, m, d := anchor.Date()
	first := time.Date(y, m+time.Month(n), 1, anchor.Hour(), anchor.Minute(), anchor.Second(), anchor.Nanosecond(), anchor.Location())
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// PutSubscriptionPlan sells a variant as a subscription, or replaces its plan.
func (tx *Tx) PutSubscriptionPlan(ctx context.Context, t *schema.Tenant, p *SubscriptionPlan) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if _, err := tx.Variant(ctx, t, p.VariantID); err != nil {
		return err
	}
	var count *int32
	if p.Count != nil {
		c := int32(*p.Count)
		count = &c
	}
	p.UpdatedAt = tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO subscription_plans (tenant_id, variant_id, interval_unit, interval_count, renewal_limit, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)
		ON CONFLICT (tenant_id, variant_id) DO UPDATE SET interval_unit = $3, interval_count = $4, renewal_limit = $5, updated_at = $6
		RETURNING created_at`, t.ID, int64(p.VariantID), p.Interval, p.IntervalCount, count, tx.Now()).Scan(&p.CreatedAt)
}

// DeleteSubscriptionPlan stops selling a variant as a subscription. Subscriptions already
// started keep their terms.
func (tx *Tx) DeleteSubscriptionPlan(ctx context.Context, t *schema.Tenant, v schema.VariantID) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM subscription_plans WHERE tenant_id = $1 AND variant_id = $2`, t.ID, int64(v))
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("subscription plan")
	}
	return err
}

// SubscriptionPlans returns the plans of the variants named that have one.
func (tx *Tx) SubscriptionPlans(ctx context.Context, t *schema.Tenant, ids []schema.VariantID) (map[schema.VariantID]*SubscriptionPlan, error) {
	out := map[schema.VariantID]*SubscriptionPlan{}
	if len(ids) == 0 {
		return out, nil
	}
	raw := make([]int64, len(ids))
	for i, id := range ids {
		raw[i] = int64(id)
	}
	err := eachRow(ctx, tx.pg, `SELECT variant_id, interval_unit, interval_count, renewal_limit, created_at, updated_at
		FROM subscription_plans WHERE tenant_id = $1 AND variant_id = ANY($2)`, func(row pgx.Row) error {
		p := &SubscriptionPlan{}
		var count *int32
		if err := row.Scan(&p.VariantID, &p.Interval, &p.IntervalCount, &count, &p.CreatedAt, &p.UpdatedAt); err != nil {
			return err
		}
		if count != nil {
			c := int(*count)
			p.Count = &c
		}
		p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
		out[p.VariantID] = p
		return nil
	}, t.ID, raw)
	return out, err
}

// SubscriptionTerms is what a subscription renews, fixed when it was bought: the line as its
// first order showed it, the price per unit (before coupons, which apply to the first order
// only), the quantity, the currency and the shipping method with its price then. Renewals apply
// the store's tax settings of their day.
type SubscriptionTerms struct {
	LineNo    int                 `json:"line_no"`
	Plan      SubscriptionPlan    `json:"plan"`
	Item      schema.CartLineView `json:"item"`
	UnitPrice int64               `json:"unit_price"`
	Quantity  int64               `json:"quantity"`
	Currency  string              `json:"currency"`
	Exponent  int                 `json:"exponent"`
	Shipping  *ShippingTerms      `json:"shipping"`
	// ShippingAddress and BillingAddress are the first order's.
	ShippingAddress schema.Address `json:"shipping_address"`
	BillingAddress  schema.Address `json:"billing_address"`
}

// ShippingTerms is the shipping method of a subscription, with its price in the subscription's
// currency when it was bought.
type ShippingTerms struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Price    int64  `json:"price"`
	FreeOver int64  `json:"free_over"`
}

// Cancellation says who ended a subscription, and when.
type Cancellation struct {
	Reason  string    `json:"reason" doc:"customer, staff or payment_failed (the last retry of a renewal was declined)."`
	Comment string    `json:"comment"`
	At      time.Time `json:"at"`
}

// Subscription is a customer's subscription to a variant: as stored, and (its exported JSON
// fields) as the customer and staff see it.
type Subscription struct {
	ID                 string           `json:"id"`
	Status             string           `json:"status" doc:"active, past_due (a renewal was declined; retried), cancelled or completed (every renewal of the plan's count is paid)."`
	CustomerID         int64            `json:"customer_id"`
	Email              string           `json:"email"`
	VariantID          schema.VariantID `json:"variant_id"`
	ProductID          schema.ProductID `json:"product_id"`
	Title              string           `json:"title"`
	VariantTitle       string           `json:"variant_title"`
	SKU                string           `json:"sku"`
	Quantity           int64            `json:"quantity"`
	UnitPrice          schema.Money     `json:"unit_price" doc:"The price per unit each renewal charges, fixed at purchase; tax follows the store's settings, shipping the method's price at purchase."`
	Interval           string           `json:"interval"`
	IntervalCount      int              `json:"interval_count"`
	Count              *int             `json:"count" doc:"The total number of renewals; null: until cancelled."`
	Renewals           int              `json:"renewals" doc:"Renewals paid so far."`
	OrderReference     string           `json:"order_reference" doc:"The order that started the subscription."`
	LastOrderReference string           `json:"last_order_reference" doc:"The order that paid the current period."`
	CurrentPeriodStart time.Time        `json:"current_period_start"`
	CurrentPeriodEnd   time.Time        `json:"current_period_end" doc:"When the next renewal is due."`
	NextAttemptAt      *time.Time       `json:"next_attempt_at" doc:"When the next renewal will be attempted (a retry, when past_due); null when none will."`
	FailedAttempts     int              `json:"failed_attempts" doc:"Declined attempts at the next renewal."`
	Cancellation       *Cancellation    `json:"cancellation"`
	CreatedAt          time.Time        `json:"created_at"`
	UpdatedAt          time.Time        `json:"updated_at"`

	OrderID string            `json:"-"`
	Method  string            `json:"-"` // the provider's saved payment method
	Terms   SubscriptionTerms `json:"-"`
	Anchor  time.Time         `json:"-"` // period k starts Terms.Plan.PeriodStart(Anchor, k)
	// Attempts counts the renewal attempts begun for the next period (declined, or given up
	// when their order was swept); RenewalOrderID names the attempt in flight.
	Attempts       int    `json:"-"`
	RenewalOrderID string `json:"-"`
}

// Plan returns the subscription's plan.
func (s *Subscription) Plan() *SubscriptionPlan { return &s.Terms.Plan }

const subscriptionColumns = `id::text, customer_id, email, status, order_id::text, order_reference, last_order_reference, terms,
	payment_method, renewals, anchor_at, current_period_start, current_period_end, next_attempt_at, attempts, failed_attempts,
	COALESCE(renewal_order_id::text, ''), cancel_reason, cancel_comment, cancelled_at, created_at, updated_at`

func scanSubscription(row pgx.Row) (*Subscription, error) {
	s := &Subscription{}
	var terms []byte
	var next, cancelled *time.Time
	var reason, comment string
	if err := row.Scan(&s.ID, &s.CustomerID, &s.Email, &s.Status, &s.OrderID, &s.OrderReference, &s.LastOrderReference, &terms,
		&s.Method, &s.Renewals, &s.Anchor, &s.CurrentPeriodStart, &s.CurrentPeriodEnd, &next, &s.Attempts, &s.FailedAttempts,
		&s.RenewalOrderID, &reason, &comment, &cancelled, &s.CreatedAt, &s.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(terms, &s.Terms); err != nil {
		return nil, err
	}
	s.Anchor, s.CurrentPeriodStart, s.CurrentPeriodEnd = s.Anchor.UTC(), s.CurrentPeriodStart.UTC(), s.CurrentPeriodEnd.UTC()
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	if next != nil {
		n := next.UTC()
		s.NextAttemptAt = &n
	}
	if cancelled != nil {
		s.Cancellation = &Cancellation{Reason: reason, Comment: comment, At: cancelled.UTC()}
	}
	s.fill()
	return s, nil
}

// fill sets the view's fields that come from the terms.
func (s *Subscription) fill() {
	tm := &s.Terms
	s.VariantID, s.ProductID, s.Title, s.VariantTitle, s.SKU = tm.Item.VariantID, tm.Item.ProductID, tm.Item.Title, tm.Item.VariantTitle, tm.Item.SKU
	s.Quantity = tm.Quantity
	s.UnitPrice = schema.Money{Amount: tm.UnitPrice, Currency: tm.Currency, Formatted: schema.FormatMinor(tm.UnitPrice, tm.Exponent)}
	s.Interval, s.IntervalCount, s.Count = tm.Plan.Interval, tm.Plan.IntervalCount, tm.Plan.Count
}

// StartSubscriptions starts the subscriptions of an order's subscription lines
// (Reservation.Subscriptions), paid with the saved payment method, in the transaction that marks
// the order paid. Their first period starts now and was paid by the order.
func (tx *Tx) StartSubscriptions(ctx context.Context, t *schema.Tenant, o *Order, method string) ([]*Subscription, error) {
	if o.CustomerID == 0 || method == "" {
		return nil, fmt.Errorf("store: order %s starts subscriptions without a customer or a saved payment method", o.ID)
	}
	var out []*Subscription
	for _, terms := range o.Reservation.Subscriptions {
		s := &Subscription{ID: NewUUID(), Status: SubscriptionActive, CustomerID: o.CustomerID, Email: o.Email, OrderID: o.ID,
			OrderReference: o.Reference, LastOrderReference: o.Reference, Method: method, Terms: terms, Anchor: tx.Now(),
			CurrentPeriodStart: tx.Now(), CreatedAt: tx.Now(), UpdatedAt: tx.Now()}
		s.CurrentPeriodEnd = s.Plan().PeriodStart(s.Anchor, 1)
		next := s.CurrentPeriodEnd
		s.NextAttemptAt = &next
		s.fill()
		var count *int32
		if terms.Plan.Count != nil {
			c := int32(*terms.Plan.Count)
			count = &c
		}
		_, err := tx.pg.Exec(ctx, `INSERT INTO subscriptions (tenant_id, id, customer_id, email, status, order_id, line_no, order_reference,
				last_order_reference, variant_id, interval_unit, interval_count, renewal_limit, terms, payment_method, anchor_at,
				current_period_start, current_period_end, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16, $16, $15, $15)`,
			t.ID, s.ID, s.CustomerID, s.Email, s.Status, o.ID, terms.LineNo, o.Reference, int64(terms.Item.VariantID),
			terms.Plan.Interval, terms.Plan.IntervalCount, count, jsonb(terms), method, tx.Now(), s.CurrentPeriodEnd)
		if err != nil {
			return nil, err
		}
		if err := tx.RecordSubscriptionPeriod(ctx, t, s.ID, 0, o.ID); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// RecordSubscriptionPeriod records the order that paid period k of a subscription. A period is
// paid once: a second order for it fails the transaction (a conflict).
func (tx *Tx) RecordSubscriptionPeriod(ctx context.Context, t *schema.Tenant, id string, k int, orderID string) error {
	_, err := tx.pg.Exec(ctx, `INSERT INTO subscription_periods (tenant_id, subscription_id, period, order_id, created_at)
		VALUES ($1, $2, $3, $4, $5)`, t.ID, id, k, orderID, tx.Now())
	return err
}

// SubscriptionPeriods returns the ids of the orders that paid a subscription's periods, by
// period (0: the first order).
func (tx *Tx) SubscriptionPeriods(ctx context.Context, t *schema.Tenant, id string) ([]string, error) {
	return appendRows(ctx, tx.pg, []string{}, `SELECT order_id::text FROM subscription_periods WHERE tenant_id = $1 AND subscription_id = $2
		ORDER BY period`, func(row pgx.Row) (string, error) {
		var s string
		return s, row.Scan(&s)
	}, t.ID, id)
}

// Subscription returns a subscription by id, or nil.
func (tx *Tx) Subscription(ctx context.Context, t *schema.Tenant, id string) (*Subscription, error) {
	return tx.subscription(ctx, t, id, "")
}

// LockSubscription returns a subscription by id, locked until the transaction ends, or nil.
func (tx *Tx) LockSubscription(ctx context.Context, t *schema.Tenant, id string) (*Subscription, error) {
	return tx.subscription(ctx, t, id, " FOR UPDATE")
}

func (tx *Tx) subscription(ctx context.Context, t *schema.Tenant, id, lock string) (*Subscription, error) {
	if !schema.ValidUUID(id) {
		return nil, nil
	}
	s, err := scanSubscription(tx.pg.QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE tenant_id = $1 AND id = $2`+lock, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return s, err
}

// CustomerSubscriptions returns a customer's subscriptions, newest first.
func (tx *Tx) CustomerSubscriptions(ctx context.Context, t *schema.Tenant, customerID int64) ([]*Subscription, error) {
	return appendRows(ctx, tx.pg, []*Subscription{}, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE tenant_id = $1 AND customer_id = $2 ORDER BY created_at DESC, id`, scanSubscription, t.ID, customerID)
}

// Subscriptions returns a page of the store's subscriptions (of one status, when given), newest
// first, and how many there are.
func (tx *Tx) Subscriptions(ctx context.Context, t *schema.Tenant, status string, offset, limit int) ([]*Subscription, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM subscriptions WHERE tenant_id = $1 AND ($2 = '' OR status = $2)`,
		t.ID, status).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []*Subscription{}, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE tenant_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
		scanSubscription, t.ID, status, limit, offset)
	return out, total, err
}

// SaveSubscription writes what changes of a subscription: its status, periods, renewal
// bookkeeping and cancellation.
func (tx *Tx) SaveSubscription(ctx context.Context, t *schema.Tenant, s *Subscription) error {
	s.UpdatedAt = tx.Now()
	var renewal any
	if s.RenewalOrderID != "" {
		renewal = s.RenewalOrderID
	}
	var reason, comment string
	var cancelled *time.Time
	if c := s.Cancellation; c != nil {
		reason, comment, cancelled = c.Reason, c.Comment, &c.At
	}
	_, err := tx.pg.Exec(ctx, `UPDATE subscriptions SET status = $3, last_order_reference = $4, renewals = $5, current_period_start = $6,
			current_period_end = $7, next_attempt_at = $8, attempts = $9, failed_attempts = $10, renewal_order_id = $11,
			cancel_reason = $12, cancel_comment = $13, cancelled_at = $14, updated_at = $15
		WHERE tenant_id = $1 AND id = $2`,
		t.ID, s.ID, s.Status, s.LastOrderReference, s.Renewals, s.CurrentPeriodStart, s.CurrentPeriodEnd, s.NextAttemptAt,
		s.Attempts, s.FailedAttempts, renewal, reason, comment, cancelled, s.UpdatedAt)
	return err
}

// CancelSubscription ends an active or past_due subscription and emits subscription.cancelled;
// nothing is renewed after it. The caller checks the status first.
func (tx *Tx) CancelSubscription(ctx context.Context, t *schema.Tenant, s *Subscription, reason, comment string) error {
	s.Status, s.NextAttemptAt = SubscriptionCancelled, nil
	s.Cancellation = &Cancellation{Reason: reason, Comment: comment, At: tx.Now()}
	if err := tx.SaveSubscription(ctx, t, s); err != nil {
		return err
	}
	tx.emit(t, EventSubscriptionCancelled, SubscriptionEvent{Subscription: s, Reason: reason})
	return nil
}

// SubscriptionEvent is the payload of the subscription events: the subscription as it is after
// the event, and per kind the renewal order's reference (renewed, past_due), why a renewal was
// declined (past_due) or why the subscription ended (cancelled).
type SubscriptionEvent struct {
	Subscription   *Subscription `json:"subscription"`
	OrderReference string        `json:"order_reference,omitempty"`
	DeclineReason  string        `json:"decline_reason,omitempty"`
	Reason         string        `json:"reason,omitempty"`
}

// EmitSubscriptionRenewed queues subscription.renewed: s after its renewal, paid by the order
// ref.
func (tx *Tx) EmitSubscriptionRenewed(t *schema.Tenant, s *Subscription, ref string) {
	tx.emit(t, EventSubscriptionRenewed, SubscriptionEvent{Subscription: s, OrderReference: ref})
}

// EmitSubscriptionPastDue queues subscription.past_due: s after the declined renewal of order
// ref, with the provider's reason.
func (tx *Tx) EmitSubscriptionPastDue(t *schema.Tenant, s *Subscription, ref, declineReason string) {
	tx.emit(t, EventSubscriptionPastDue, SubscriptionEvent{Subscription: s, OrderReference: ref, DeclineReason: declineReason})
}

// DueSubscription names a subscription maintenance should act on.
type DueSubscription struct {
	TenantID string
	ID       string
}

// DueSubscriptions returns up to limit subscriptions of any tenant whose next attempt is due at
// now, the longest due first.
func (db *DB) DueSubscriptions(ctx context.Context, now time.Time, limit int) ([]DueSubscription, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT tenant_id::text, id::text FROM subscriptions
		WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2`, func(row pgx.Row) (DueSubscription, error) {
		var d DueSubscription
		err := row.Scan(&d.TenantID, &d.ID)
		return d, err
	}, now, limit)
	return out, mapError(err)
}

// TestSaveMethod saves a token as the test provider's payment method, once per key.
func (db *DB) TestSaveMethod(ctx context.Context, tenantID, key, id, token string) (string, error) {
	var out string
	err := db.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.pg.Exec(ctx, `INSERT INTO test_payment_methods (tenant_id, id, setup_key, token, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, tenantID, id, key, token, tx.Now()); err != nil {
			return err
		}
		return tx.pg.QueryRow(ctx, `SELECT id FROM test_payment_methods WHERE tenant_id = $1 AND setup_key = $2`, tenantID, key).Scan(&out)
	})
	return out, err
}

// TestMethod returns the token of the test provider's saved method (empty when unknown) and how
// many of its charges were declined.
func (db *DB) TestMethod(ctx context.Context, tenantID, id string) (string, int, error) {
	var token string
	var declined int
	err := db.pool.QueryRow(ctx, `SELECT token, (SELECT count(*) FROM test_payments p WHERE p.tenant_id = m.tenant_id AND p.method_id = m.id
		AND p.status = 'declined') FROM test_payment_methods m WHERE tenant_id = $1 AND id = $2`, tenantID, id).Scan(&token, &declined)
	if err == pgx.ErrNoRows {
		return "", 0, nil
	}
	return token, declined, mapError(err)
}

// TestCharge records an off-session charge of a saved method in the test provider's ledger
// under key, unless one exists: a second call with the key returns the first call's result.
func (db *DB) TestCharge(ctx context.Context, tenantID, key, methodID, id string, amount int64, currency, status string) (payment.LedgerEntry, error) {
	var e payment.LedgerEntry
	err := db.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.pg.Exec(ctx, `INSERT INTO test_payments (tenant_id, idempotency_key, id, amount, currency, status, method_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT DO NOTHING`, tenantID, key, id, amount, currency, status, methodID, tx.Now()); err != nil {
			return err
		}
		return tx.pg.QueryRow(ctx, `SELECT id, status FROM test_payments WHERE tenant_id = $1 AND idempotency_key = $2`,
			tenantID, key).Scan(&e.ID, &e.Status)
	})
	return e, err
}
