package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Return events.
const (
	EventReturnSubmitted = "return.submitted"
	EventReturnApproved  = "return.approved"
)

// Return statuses. A return moves submitted → approved | declined, then approved → received →
// refunded; declined and refunded are final.
const (
	ReturnSubmitted = "submitted"
	ReturnApproved  = "approved"
	ReturnDeclined  = "declined"
	ReturnReceived  = "received"
	ReturnRefunded  = "refunded"
)

// ReturnStatuses lists every return status, in lifecycle order.
var ReturnStatuses = []string{ReturnSubmitted, ReturnApproved, ReturnDeclined, ReturnReceived, ReturnRefunded}

// returnNext is the return state machine: the statuses each status may move to.
var returnNext = map[string][]string{
	ReturnSubmitted: {ReturnApproved, ReturnDeclined},
	ReturnApproved:  {ReturnReceived},
	ReturnReceived:  {ReturnRefunded},
}

// ReturnCanMove reports whether a return may move from one status to another.
func ReturnCanMove(from, to string) bool {
	for _, s := range returnNext[from] {
		if s == to {
			return true
		}
	}
	return false
}

// ReturnReasons is the closed set of reasons a shopper gives for returning a line; the free-text
// note says more.
var ReturnReasons = []string{"damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"}

// ValidReturnReason reports whether r is one of ReturnReasons.
func ValidReturnReason(r string) bool {
	for _, v := range ReturnReasons {
		if v == r {
			return true
		}
	}
	return false
}

// ReturnLine is one order line (or part of it) in a return.
type ReturnLine struct {
	LineNo    int              `json:"line_no"`
	VariantID schema.VariantID `json:"variant_id"`
	Title     string           `json:"title"`
	Quantity  int64            `json:"quantity"`
	Reason    string           `json:"reason"`
}

// ReturnStep is one transition in a return's history.
type ReturnStep struct {
	Status string    `json:"status"`
	Note   string    `json:"note"`
	By     string    `json:"by"` // the staff user's login; "customer" for the submission
	At     time.Time `json:"at"`
}

// Return is a return request (RMA) as staff see it. Returns never leave the origin.
type Return struct {
	ID             string       `json:"id"`
	RMA            string       `json:"rma"`
	OrderID        string       `json:"-"`
	OrderReference string       `json:"order_reference"`
	Email          string       `json:"email"`
	Currency       string       `json:"currency"`
	Status         string       `json:"status"`
	Lines          []ReturnLine `json:"items"`
	Note           string       `json:"note"`
	StaffNote      string       `json:"staff_note"`
	// RefundAmount is what was recorded as refunded, in minor units of Currency (0 until
	// refunded). Recording it moves no money.
	RefundAmount int64        `json:"refund_amount"`
	History      []ReturnStep `json:"history"`
	CreatedAt    time.Time    `json:"created_at"`
	UpdatedAt    time.Time    `json:"updated_at"`
}

// NewRMA returns a new return reference: "RMA-" and 80 random bits in the order reference
// format, so that it is as unguessable as an order reference.
func NewRMA() string { return "RMA-" + schema.NewOrderReference() }

// NormalizeRMA returns the canonical form of a return reference as typed, and false when it
// cannot be one.
func NormalizeRMA(s string) (string, bool) {
	if len(s) < 4 || !strings.EqualFold(s[:4], "RMA-") {
		return "", false
	}
	ref, ok := schema.NormalizeOrderReference(s[4:])
	if !ok {
		return "", false
	}
	return "RMA-" + ref, true
}

const returnColumns = `r.id, r.rma, r.order_id, o.reference, o.email, o.currency, r.status, r.lines, r.note, r.staff_note,
	r.refund_amount, r.history, r.created_at, r.updated_at`

const returnFrom = ` FROM returns r JOIN orders o ON o.tenant_id = r.tenant_id AND o.id = r.order_id`

func scanReturn(row pgx.Row) (*Return, error) {
	var r Return
	var lines, history []byte
	if err := row.Scan(&r.ID, &r.RMA, &r.OrderID, &r.OrderReference, &r.Email, &r.Currency, &r.Status, &lines, &r.Note, &r.StaffNote,
		&r.RefundAmount, &history, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(lines, &r.Lines); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(history, &r.History); err != nil {
		return nil, err
	}
	if r.History == nil {
		r.History = []ReturnStep{}
	}
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &r, nil
}

func (tx *Tx) returns(ctx context.Context, where string, args ...any) ([]*Return, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+returnColumns+returnFrom+` WHERE `+where, scanReturn, args...)
}

// OrderLines returns the lines of an order by line number.
func (tx *Tx) OrderLines(ctx context.Context, t *schema.Tenant, orderID string) ([]OrderLine, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT line_no, variant_id, product_id, sku, title, options, unit_price, quantity, discount, tax, total
		FROM order_lines WHERE tenant_id = $1 AND order_id = $2 ORDER BY line_no`, func(row pgx.Row) (OrderLine, error) {
		var l OrderLine
		var options []byte
		if err := row.Scan(&l.LineNo, &l.VariantID, &l.ProductID, &l.SKU, &l.Title, &options, &l.UnitPrice, &l.Quantity,
			&l.Discount, &l.Tax, &l.Total); err != nil {
			return l, err
		}
		return l, json.Unmarshal(options, &l.Options)
	}, t.ID, orderID)
}

// OrderReturns returns the returns of an order, oldest first.
func (tx *Tx) OrderReturns(ctx context.Context, t *schema.Tenant, orderID string) ([]*Return, error) {
	return tx.returns(ctx, `r.tenant_id = $1 AND r.order_id = $2 ORDER BY r.created_at, r.id`, t.ID, orderID)
}

// Returnable returns, per line number, how many units of each order line can still be returned:
// the quantity bought minus the units in returns that are not declined.
func Returnable(lines []OrderLine, returns []*Return) map[int]int64 {
	out := make(map[int]int64, len(lines))
	for _, l := range lines {
		out[l.LineNo] = l.Quantity
	}
	for _, r := range returns {
		if r.Status == ReturnDeclined {
			continue
		}
		for _, rl := range r.Lines {
			out[rl.LineNo] -= rl.Quantity
		}
	}
	return out
}

// Refundable is the most a return may refund: for each of its lines, the part of what was paid
// for the order line (its total, after discounts and with tax) that the returned units make up,
// rounded down. Shipping is not included. Since the units of a line are in one non-declined
// return at most, the refunds of an order's returns never add up to more than its lines' totals.
func Refundable(lines []OrderLine, r *Return) int64 {
	var sum int64
	for _, rl := range r.Lines {
		for _, l := range lines {
			if l.LineNo != rl.LineNo || l.Quantity <= 0 {
				continue
			}
			q := min(rl.Quantity, l.Quantity)
			// floor(Total*q/Quantity) without overflow: Total is at most 10^15 and
			// (Total % Quantity) * q is below Quantity², a small number.
			sum += l.Total/l.Quantity*q + l.Total%l.Quantity*q/l.Quantity
		}
	}
	return sum
}

// CreateReturn records a submitted return of lines of order o (locked by the caller, with the
// quantities checked against Returnable) and queues return.submitted.
func (tx *Tx) CreateReturn(ctx context.Context, t *schema.Tenant, o *Order, lines []ReturnLine, note string) (*Return, error) {
	r := &Return{ID: NewUUID(), RMA: NewRMA(), OrderID: o.ID, OrderReference: o.Reference, Email: o.Email, Currency: o.Currency,
		Status: ReturnSubmitted, Lines: lines, Note: note, CreatedAt: tx.Now(), UpdatedAt: tx.Now(),
		History: []ReturnStep{{Status: ReturnSubmitted, By: "customer", At: tx.Now()}}}
	_, err := tx.pg.Exec(ctx, `INSERT INTO returns (tenant_id, id, order_id, rma, status, lines, note, history, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		t.ID, r.ID, o.ID, r.RMA, r.Status, jsonb(r.Lines), r.Note, jsonb(r.History), tx.Now())
	if err != nil {
		return nil, err
	}
	tx.emit(t, EventReturnSubmitted, r)
	return r, nil
}

// Return returns a return by id or RMA, locked until the transaction ends when lock is set. A
// key that is neither is not found.
func (tx *Tx) Return(ctx context.Context, t *schema.Tenant, key string, lock bool) (*Return, error) {
	col := "id"
	if rma, ok := NormalizeRMA(key); ok {
		col, key = "rma", rma
	} else if !schema.ValidUUID(key) {
		return nil, notFound("return")
	}
	if lock {
		if _, err := tx.pg.Exec(ctx, `SELECT 1 FROM returns WHERE tenant_id = $1 AND `+col+` = $2 FOR UPDATE`, t.ID, key); err != nil {
			return nil, err
		}
	}
	rs, err := tx.returns(ctx, `r.tenant_id = $1 AND r.`+col+` = $2`, t.ID, key)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, notFound("return")
	}
	return rs[0], nil
}

// Returns lists a page of the tenant's returns, newest first, with their total count; status
// filters when not empty.
func (tx *Tx) Returns(ctx context.Context, t *schema.Tenant, status string, offset, limit int) ([]*Return, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM returns WHERE tenant_id = $1 AND ($2 = '' OR status = $2)`,
		t.ID, status).Scan(&total); err != nil {
		return nil, 0, err
	}
	rs, err := tx.returns(ctx, `r.tenant_id = $1 AND ($2 = '' OR r.status = $2) ORDER BY r.created_at DESC, r.id LIMIT $3 OFFSET $4`,
		t.ID, status, limit, offset)
	return rs, total, err
}

// MoveReturn moves a locked return to status to, recording the step (note, the staff login) and,
// for refunded, the refund amount (checked by the caller against Refundable). A transition the
// state machine does not allow is a conflict. Approval queues return.approved.
func (tx *Tx) MoveReturn(ctx context.Context, t *schema.Tenant, r *Return, to, note, by string, refund int64) error {
	if !ReturnCanMove(r.Status, to) {
		allowed := returnNext[r.Status]
		msg := "a " + r.Status + " return cannot become " + to
		if len(allowed) == 0 {
			msg += ": " + r.Status + " is final"
		} else {
			msg += "; it can become " + strings.Join(allowed, " or ")
		}
		return &schema.Error{Code: schema.CodeConflict, Field: "status", Message: msg}
	}
	r.Status, r.UpdatedAt = to, tx.Now()
	if note != "" {
		r.StaffNote = note
	}
	if to == ReturnRefunded {
		r.RefundAmount = refund
	}
	r.History = append(r.History, ReturnStep{Status: to, Note: note, By: by, At: tx.Now()})
	_, err := tx.pg.Exec(ctx, `UPDATE returns SET status = $3, staff_note = $4, refund_amount = $5, history = $6, updated_at = $7
		WHERE tenant_id = $1 AND id = $2`, t.ID, r.ID, r.Status, r.StaffNote, r.RefundAmount, jsonb(r.History), tx.Now())
	if err != nil {
		return err
	}
	if to == ReturnApproved {
		tx.emit(t, EventReturnApproved, r)
	}
	return nil
}
