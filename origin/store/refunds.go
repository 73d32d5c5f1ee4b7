package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Refund states.
const (
	RefundPending   = "pending"   // recorded; the provider may not have been called yet
	RefundSucceeded = "succeeded" // money returned
	RefundFailed    = "failed"    // refused by the provider; its amount is free again
)

// EventOrderRefunded is emitted once per succeeded refund.
const EventOrderRefunded = "order.refunded"

// RefundLine is a quantity of one order line a refund gives back.
type RefundLine struct {
	Line     int   `json:"line"`
	Quantity int64 `json:"quantity"`
}

// Refund is a refund of an order as stored.
type Refund struct {
	ID             string       `json:"id"`
	OrderID        string       `json:"-"`
	Key            string       `json:"-"`
	RequestHash    string       `json:"-"`
	Amount         int64        `json:"amount"`
	CardAmount     int64        `json:"card_amount"`
	GiftCardAmount int64        `json:"gift_card_amount"`
	Lines          []RefundLine `json:"lines"`
	Restock        bool         `json:"restock"`
	Reason         string       `json:"reason"`
	Status         string       `json:"status"`
	ProviderRef    string       `json:"provider_ref"`
	Failure        string       `json:"failure,omitempty"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
}

const refundColumns = `id::text, order_id::text, idempotency_key, request_hash, amount, card_amount, gift_card_amount, lines, restock,
	reason, status, provider_ref, failure, created_at, updated_at`

func scanRefund(row pgx.Row) (*Refund, error) {
	r := &Refund{}
	var lines []byte
	if err := row.Scan(&r.ID, &r.OrderID, &r.Key, &r.RequestHash, &r.Amount, &r.CardAmount, &r.GiftCardAmount, &lines, &r.Restock,
		&r.Reason, &r.Status, &r.ProviderRef, &r.Failure, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, json.Unmarshal(lines, &r.Lines)
}

// LockOrderByReference returns an order by reference, locked until the transaction ends, or
// nil.
func (tx *Tx) LockOrderByReference(ctx context.Context, t *schema.Tenant, ref string) (*Order, error) {
	o, err := scanOrder(tx.pg.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND reference = $2 FOR UPDATE`, t.ID, ref))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return o, err
}

// Refunds lists an order's refunds, oldest first.
func (tx *Tx) Refunds(ctx context.Context, t *schema.Tenant, orderID string) ([]*Refund, error) {
	return appendRows(ctx, tx.pg, []*Refund{}, `SELECT `+refundColumns+` FROM refunds WHERE tenant_id = $1 AND order_id = $2
		ORDER BY created_at, id`, scanRefund, t.ID, orderID)
}

// InsertRefund records a new refund (status pending) and fills in its id and times.
func (tx *Tx) InsertRefund(ctx context.Context, t *schema.Tenant, r *Refund) error {
	lines, err := json.Marshal(r.Lines)
	if err != nil {
		return err
	}
	if r.Lines == nil {
		lines = []byte("[]")
	}
	r.Status, r.CreatedAt, r.UpdatedAt = RefundPending, tx.Now(), tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO refunds (tenant_id, order_id, idempotency_key, request_hash, amount, card_amount,
		gift_card_amount, lines, restock, reason, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id::text`,
		t.ID, r.OrderID, r.Key, r.RequestHash, r.Amount, r.CardAmount, r.GiftCardAmount, lines, r.Restock, r.Reason, r.Status, tx.Now()).Scan(&r.ID)
}

// SettleRefund moves a pending refund to status (succeeded or failed) with the provider's
// reference or the failure.
func (tx *Tx) SettleRefund(ctx context.Context, t *schema.Tenant, r *Refund, status, providerRef, failure string) error {
	r.Status, r.ProviderRef, r.Failure, r.UpdatedAt = status, providerRef, failure, tx.Now()
	_, err := tx.pg.Exec(ctx, `UPDATE refunds SET status = $3, provider_ref = $4, failure = $5, updated_at = $6
		WHERE tenant_id = $1 AND id = $2`, t.ID, r.ID, status, providerRef, failure, tx.Now())
	return err
}

// EmitRefundEvent queues order.refunded with the order as its owner sees it and the refund.
func (tx *Tx) EmitRefundEvent(t *schema.Tenant, o *Order, r *Refund) {
	tx.emit(t, EventOrderRefunded, map[string]any{"order": &o.View, "refund": r})
}
