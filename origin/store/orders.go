package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Order events.
const (
	EventOrderCreated = "order.created"
	EventOrderPaid    = "order.paid"
)

// LineSource is what a cart line is priced from: the variant with its stock, and its product.
type LineSource struct {
	Variant *StockedVariant
	Product *schema.Product
}

// LineSources returns the variants named and their products, by variant id; ids that name no
// variant of the tenant are absent.
func (tx *Tx) LineSources(ctx context.Context, t *schema.Tenant, ids []schema.VariantID) (map[schema.VariantID]LineSource, error) {
	out := make(map[schema.VariantID]LineSource, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	raw := make([]int64, len(ids))
	for i, id := range ids {
		raw[i] = int64(id)
	}
	var products []int64
	err := eachRow(ctx, tx.pg, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND id = ANY($2)`, func(row pgx.Row) error {
		v, err := scanVariant(row)
		if err != nil {
			return err
		}
		out[v.ID] = LineSource{Variant: v}
		products = append(products, int64(v.ProductID))
		return nil
	}, t.ID, raw)
	if err != nil {
		return nil, err
	}
	byID := map[schema.ProductID]*schema.Product{}
	err = eachRow(ctx, tx.pg, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = ANY($2)`, func(row pgx.Row) error {
		p, err := scanProduct(row)
		if err != nil {
			return err
		}
		byID[p.ID] = p
		return nil
	}, t.ID, products)
	if err != nil {
		return nil, err
	}
	for id, src := range out {
		src.Product = byID[src.Variant.ProductID]
		out[id] = src
	}
	return out, nil
}

// Reservation is what an order holds until it is paid or released: the stock it took, the
// coupons it redeemed and the gift-card amounts it debited.
type Reservation struct {
	// CartSession is the hex hash of the cart checked out, and CartRevision its revision then:
	// the cart is deleted when the order is paid unless it changed since.
	CartSession  string         `json:"cart_session"`
	CartRevision int64          `json:"cart_revision"`
	Stock        []StockHold    `json:"stock"`
	Coupons      []string       `json:"coupons"`
	GiftCards    []GiftCardHold `json:"gift_cards"`
	// Subscriptions are the terms of the subscriptions the order starts once paid, one per
	// subscription line (StartSubscriptions).
	Subscriptions []SubscriptionTerms `json:"subscriptions,omitempty"`
}

// StockHold is stock taken by an order.
type StockHold struct {
	VariantID schema.VariantID `json:"variant_id"`
	Quantity  int64            `json:"quantity"`
}

// GiftCardHold is an amount debited from a gift card by an order.
type GiftCardHold struct {
	Key    string `json:"key"`
	Amount int64  `json:"amount"`
}

// OrderLine is one line of an order, kept for reporting, returns and refunds.
type OrderLine struct {
	LineNo    int
	VariantID schema.VariantID
	ProductID schema.ProductID
	SKU       string
	Title     string
	Options   []schema.Option
	UnitPrice int64
	Quantity  int64
	Discount  int64
	Tax       int64
	Total     int64
}

// Order is an order as stored. Orders never leave the origin.
type Order struct {
	ID          string
	Reference   string
	CustomerID  int64
	Email       string
	Currency    string
	Status      string
	Total       int64
	Due         int64
	PaymentRef  string
	CheckoutKey string
	// View is what the shopper was shown at purchase; Status and timestamps are refreshed from
	// the row when it is read.
	View        schema.OrderView
	Reservation Reservation
	Lines       []OrderLine
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// InsertOrder stores a new order with its lines.
func (tx *Tx) InsertOrder(ctx context.Context, t *schema.Tenant, o *Order) error {
	o.CreatedAt, o.UpdatedAt = tx.Now(), tx.Now()
	var customer any
	if o.CustomerID != 0 {
		customer = o.CustomerID
	}
	v := &o.View
	_, err := tx.pg.Exec(ctx, `INSERT INTO orders (tenant_id, id, reference, customer_id, email, currency, status, totals, total, due,
			shipping_address, billing_address, shipping_method, notes, payment_ref, created_at, updated_at, detail, reservation, checkout_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17, $18, $19)`,
		t.ID, o.ID, o.Reference, customer, o.Email, o.Currency, o.Status, jsonb(v.Totals), o.Total, o.Due,
		jsonb(v.ShippingAddress), jsonb(v.BillingAddress), shippingCode(v.ShippingMethod), v.Notes, o.PaymentRef, o.CreatedAt,
		jsonb(v), jsonb(o.Reservation), o.CheckoutKey)
	if err != nil {
		return err
	}
	if len(o.Lines) == 0 {
		return nil
	}
	n := len(o.Lines)
	lineNo, variants, products, quantities := make([]int32, n), make([]int64, n), make([]int64, n), make([]int64, n)
	prices, discounts, taxes, totals := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	skus, titles, options := make([]string, n), make([]string, n), make([]string, n)
	for i, l := range o.Lines {
		lineNo[i], variants[i], products[i], quantities[i] = int32(l.LineNo), int64(l.VariantID), int64(l.ProductID), l.Quantity
		prices[i], discounts[i], taxes[i], totals[i] = l.UnitPrice, l.Discount, l.Tax, l.Total
		skus[i], titles[i], options[i] = l.SKU, l.Title, string(jsonb(l.Options))
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO order_lines (tenant_id, order_id, line_no, variant_id, product_id, sku, title, options,
			unit_price, quantity, discount, tax, total)
		SELECT $1, $2, n, v, p, s, ti, o::JSONB, up, q, d, tx, tot
		FROM unnest($3::INT4[], $4::INT8[], $5::INT8[], $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::INT8[], $10::INT8[], $11::INT8[], $12::INT8[], $13::INT8[])
			AS r(n, v, p, s, ti, o, up, q, d, tx, tot)`,
		t.ID, o.ID, lineNo, variants, products, skus, titles, options, prices, quantities, discounts, taxes, totals)
	return err
}

func shippingCode(m *schema.ShippingOption) string {
	if m == nil {
		return ""
	}
	return m.Code
}

const orderColumns = `id, reference, COALESCE(customer_id, 0), email, currency, status, total, due, payment_ref, checkout_key,
	detail, reservation, created_at, updated_at`

func scanOrder(row pgx.Row) (*Order, error) {
	var o Order
	var detail, reservation []byte
	if err := row.Scan(&o.ID, &o.Reference, &o.CustomerID, &o.Email, &o.Currency, &o.Status, &o.Total, &o.Due, &o.PaymentRef,
		&o.CheckoutKey, &detail, &reservation, &o.CreatedAt, &o.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(detail, &o.View); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(reservation, &o.Reservation); err != nil {
		return nil, err
	}
	o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC()
	o.View.Status, o.View.CreatedAt, o.View.UpdatedAt = o.Status, o.CreatedAt, o.UpdatedAt
	return &o, nil
}

// OrderByReference returns an order by its reference, or nil.
func (tx *Tx) OrderByReference(ctx context.Context, t *schema.Tenant, ref string) (*Order, error) {
	o, err := scanOrder(tx.pg.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND reference = $2`, t.ID, ref))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return o, err
}

// LockOrder returns an order by id, locked until the transaction ends, or nil.
func (tx *Tx) LockOrder(ctx context.Context, t *schema.Tenant, id string) (*Order, error) {
	o, err := scanOrder(tx.pg.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return o, err
}

// OrderByCheckoutKey returns the order created under an idempotency key, or nil.
func (tx *Tx) OrderByCheckoutKey(ctx context.Context, t *schema.Tenant, key string) (*Order, error) {
	o, err := scanOrder(tx.pg.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND checkout_key = $2
		ORDER BY created_at DESC LIMIT 1`, t.ID, key))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return o, err
}

// CustomerOrders returns a page of a customer's orders, newest first, and their total count.
func (tx *Tx) CustomerOrders(ctx context.Context, t *schema.Tenant, customerID int64, offset, limit int) ([]*Order, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM orders WHERE tenant_id = $1 AND customer_id = $2`, t.ID, customerID).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, nil, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND customer_id = $2
		ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, scanOrder, t.ID, customerID, limit, offset)
	return out, total, err
}

// SetOrderStatus moves an order to status, recording a payment reference when given.
func (tx *Tx) SetOrderStatus(ctx context.Context, t *schema.Tenant, o *Order, status, paymentRef string) error {
	o.Status, o.UpdatedAt = status, tx.Now()
	if paymentRef != "" {
		o.PaymentRef = paymentRef
	}
	o.View.Status, o.View.UpdatedAt = o.Status, o.UpdatedAt
	_, err := tx.pg.Exec(ctx, `UPDATE orders SET status = $3, payment_ref = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2`,
		t.ID, o.ID, o.Status, o.PaymentRef, o.UpdatedAt)
	return err
}

// ReleaseReservation gives back everything an order reserved: stock (replicating availability
// crossings), coupon uses and gift-card amounts.
func (tx *Tx) ReleaseReservation(ctx context.Context, t *schema.Tenant, o *Order) error {
	for _, h := range o.Reservation.Stock {
		if err := tx.ReturnStock(ctx, t, h.VariantID, h.Quantity); err != nil {
			return err
		}
	}
	for _, code := range o.Reservation.Coupons {
		if err := tx.ReleaseCoupon(ctx, t, code, o.ID); err != nil {
			return err
		}
	}
	for _, g := range o.Reservation.GiftCards {
		if err := tx.CreditGiftCard(ctx, t, g.Key, o.ID, g.Amount); err != nil {
			return err
		}
	}
	return nil
}

// DeleteCheckedOutCart deletes the cart an order was checked out from, unless the shopper
// changed it after the checkout began (then it is theirs to keep).
func (tx *Tx) DeleteCheckedOutCart(ctx context.Context, t *schema.Tenant, r Reservation) error {
	_, err := tx.pg.Exec(ctx, `DELETE FROM carts WHERE tenant_id = $1 AND session_hash = decode($2, 'hex') AND revision = $3`,
		t.ID, r.CartSession, r.CartRevision)
	return err
}

// EmitOrderEvent queues an order event carrying the order as its owner sees it.
func (tx *Tx) EmitOrderEvent(t *schema.Tenant, kind string, o *Order) {
	tx.emit(t, kind, &o.View)
}

// StalePendingOrders returns up to limit orders of any tenant left in pending_payment since
// before cutoff: checkouts whose process died between reserving and settling.
func (db *DB) StalePendingOrders(ctx context.Context, cutoff time.Time, limit int) ([]PendingOrder, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT tenant_id, id FROM orders WHERE status = $1 AND created_at < $2 ORDER BY created_at LIMIT $3`,
		func(row pgx.Row) (PendingOrder, error) {
			var p PendingOrder
			err := row.Scan(&p.TenantID, &p.OrderID)
			return p, err
		}, schema.OrderPendingPayment, cutoff, limit)
	return out, mapError(err)
}

// PendingOrder names an order left pending.
type PendingOrder struct {
	TenantID string
	OrderID  string
}

// OrdersToPick returns, oldest first, the paid or partially refunded orders among refs (when
// given) or placed in [from, to) (zero times: unbounded) whose fulfilment is not complete, with
// their lines, limit at most.
func (tx *Tx) OrdersToPick(ctx context.Context, t *schema.Tenant, refs []string, from, to time.Time, limit int) ([]*Order, error) {
	var fromArg, toArg *time.Time
	if !from.IsZero() {
		fromArg = &from
	}
	if !to.IsZero() {
		toArg = &to
	}
	var refArg []string
	if refs != nil {
		refArg = refs
	}
	out, err := appendRows(ctx, tx.pg, []*Order{}, `SELECT `+orderColumns+` FROM orders
		WHERE tenant_id = $1 AND status IN ($2, $3) AND fulfillment_status IN ('unfulfilled', 'partially_fulfilled')
		AND ($4::text[] IS NULL OR reference = ANY($4)) AND ($5::timestamptz IS NULL OR created_at >= $5)
		AND ($6::timestamptz IS NULL OR created_at < $6)
		ORDER BY created_at, id LIMIT $7`, scanOrder, t.ID, schema.OrderPaid, schema.OrderPartiallyRefunded, refArg, fromArg, toArg, limit)
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		if o.Lines, err = tx.OrderLines(ctx, t, o.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Orders returns a page of the store's orders for staff, with their total count: those in one of
// statuses and one of fulfilment (either empty: any), by the time they were placed, oldest first
// when asc.
func (tx *Tx) Orders(ctx context.Context, t *schema.Tenant, statuses, fulfilment []string, asc bool, offset, limit int) ([]*Order, int, error) {
	const where = ` FROM orders WHERE tenant_id = $1 AND (cardinality($2::text[]) = 0 OR status = ANY($2))
		AND (cardinality($3::text[]) = 0 OR fulfillment_status = ANY($3))`
	if statuses == nil {
		statuses = []string{}
	}
	if fulfilment == nil {
		fulfilment = []string{}
	}
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*)`+where, t.ID, statuses, fulfilment).Scan(&total); err != nil {
		return nil, 0, err
	}
	order := ` ORDER BY created_at DESC, id DESC`
	if asc {
		order = ` ORDER BY created_at, id`
	}
	out, err := appendRows(ctx, tx.pg, []*Order{}, `SELECT `+orderColumns+where+order+` LIMIT $4 OFFSET $5`, scanOrder,
		t.ID, statuses, fulfilment, limit, offset)
	return out, total, err
}
