package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Order fulfilment statuses.
const (
	FulfilmentUnfulfilled        = "unfulfilled"
	FulfilmentPartiallyFulfilled = "partially_fulfilled"
	FulfilmentFulfilled          = "fulfilled"
	FulfilmentPartiallyDelivered = "partially_delivered"
	FulfilmentDelivered          = "delivered"
)

// Order events of fulfilment.
const (
	EventOrderShipped   = "order.shipped"
	EventOrderDelivered = "order.delivered"
)

// Label purchase states.
const (
	PurchasePending = "pending"
	PurchaseDone    = "done"
	PurchaseFailed  = "failed"
)

// ParcelPlan is one parcel of a label purchase.
type ParcelPlan struct {
	Lines       []RefundLine `json:"lines"`
	WeightGrams int64        `json:"weight_grams"`
	Service     string       `json:"service"`
	// ReturnID is the return a return label is for.
	ReturnID string `json:"return_id,omitempty"`
}

// LabelPurchase is a purchase of one or several labels for an order.
type LabelPurchase struct {
	ID          string
	OrderID     string
	Key         string
	RequestHash string
	Kind        string // outbound, return
	Parcels     []ParcelPlan
	Status      string
	Failure     string
	CreatedAt   time.Time
}

// Shipment is one parcel with its label and tracking.
type Shipment struct {
	ID             string          `json:"id"`
	OrderID        string          `json:"-"`
	PurchaseID     string          `json:"-"`
	Parcel         int             `json:"-"`
	Kind           string          `json:"kind"`
	Carrier        string          `json:"carrier"`
	Service        string          `json:"service"`
	TrackingNumber string          `json:"tracking_number"`
	Zone           int             `json:"zone"`
	Rate           int64           `json:"rate"`
	Currency       string          `json:"currency"`
	WeightGrams    int64           `json:"weight_grams"`
	Lines          []RefundLine    `json:"lines"`
	Status         string          `json:"status"`
	Events         json.RawMessage `json:"events"`
	LabelPDF       []byte          `json:"-"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

const purchaseColumns = `id::text, order_id::text, idempotency_key, request_hash, kind, parcels, status, failure, created_at`

func scanPurchase(row pgx.Row) (*LabelPurchase, error) {
	p := &LabelPurchase{}
	var parcels []byte
	if err := row.Scan(&p.ID, &p.OrderID, &p.Key, &p.RequestHash, &p.Kind, &parcels, &p.Status, &p.Failure, &p.CreatedAt); err != nil {
		return nil, err
	}
	return p, json.Unmarshal(parcels, &p.Parcels)
}

const shipmentColumns = `id::text, order_id::text, purchase_id::text, parcel, kind, carrier, service, tracking_number, zone, rate,
	currency, weight_grams, lines, status, events, created_at, updated_at`

func scanShipment(row pgx.Row) (*Shipment, error) {
	s := &Shipment{}
	var lines, events []byte
	if err := row.Scan(&s.ID, &s.OrderID, &s.PurchaseID, &s.Parcel, &s.Kind, &s.Carrier, &s.Service, &s.TrackingNumber, &s.Zone,
		&s.Rate, &s.Currency, &s.WeightGrams, &lines, &s.Status, &events, &s.CreatedAt, &s.UpdatedAt); err != nil {
		return nil, err
	}
	s.Events = events
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, json.Unmarshal(lines, &s.Lines)
}

// LabelPurchases lists an order's label purchases, oldest first.
func (tx *Tx) LabelPurchases(ctx context.Context, t *schema.Tenant, orderID string) ([]*LabelPurchase, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+purchaseColumns+` FROM label_purchases WHERE tenant_id = $1 AND order_id = $2
		ORDER BY created_at, id`, scanPurchase, t.ID, orderID)
}

// InsertLabelPurchase records a new purchase, pending.
func (tx *Tx) InsertLabelPurchase(ctx context.Context, t *schema.Tenant, p *LabelPurchase) error {
	parcels, err := json.Marshal(p.Parcels)
	if err != nil {
		return err
	}
	p.Status, p.CreatedAt = PurchasePending, tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO label_purchases (tenant_id, order_id, idempotency_key, request_hash, kind, parcels, status,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id::text`,
		t.ID, p.OrderID, p.Key, p.RequestHash, p.Kind, parcels, p.Status, tx.Now()).Scan(&p.ID)
}

// SettleLabelPurchase moves a pending purchase to done or failed.
func (tx *Tx) SettleLabelPurchase(ctx context.Context, t *schema.Tenant, p *LabelPurchase, status, failure string) error {
	p.Status, p.Failure = status, failure
	_, err := tx.pg.Exec(ctx, `UPDATE label_purchases SET status = $3, failure = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2`,
		t.ID, p.ID, status, failure, tx.Now())
	return err
}

// InsertShipment stores a shipment and fills in its id and times.
func (tx *Tx) InsertShipment(ctx context.Context, t *schema.Tenant, s *Shipment) error {
	lines, err := json.Marshal(s.Lines)
	if err != nil {
		return err
	}
	s.CreatedAt, s.UpdatedAt = tx.Now(), tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO shipments (tenant_id, order_id, purchase_id, parcel, kind, carrier, service, tracking_number,
		zone, rate, currency, weight_grams, lines, status, events, label_pdf, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING id::text`,
		t.ID, s.OrderID, s.PurchaseID, s.Parcel, s.Kind, s.Carrier, s.Service, s.TrackingNumber, s.Zone, s.Rate, s.Currency,
		s.WeightGrams, lines, s.Status, []byte(s.Events), s.LabelPDF, tx.Now()).Scan(&s.ID)
}

// Shipments lists an order's shipments, oldest first (without their label PDFs).
func (tx *Tx) Shipments(ctx context.Context, t *schema.Tenant, orderID string) ([]*Shipment, error) {
	return appendRows(ctx, tx.pg, []*Shipment{}, `SELECT `+shipmentColumns+` FROM shipments WHERE tenant_id = $1 AND order_id = $2
		ORDER BY created_at, parcel, id`, scanShipment, t.ID, orderID)
}

// ShipmentByID returns a shipment of the store, locked for update when asked, or a 404 error.
func (tx *Tx) ShipmentByID(ctx context.Context, t *schema.Tenant, id string, forUpdate bool) (*Shipment, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("shipment")
	}
	q := `SELECT ` + shipmentColumns + ` FROM shipments WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	s, err := scanShipment(tx.pg.QueryRow(ctx, q, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("shipment")
	}
	return s, err
}

// ShipmentLabel returns a shipment's label PDF; orderID, when not empty, must be its order's.
func (tx *Tx) ShipmentLabel(ctx context.Context, t *schema.Tenant, orderID, id string) ([]byte, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("shipment")
	}
	var pdf []byte
	err := tx.pg.QueryRow(ctx, `SELECT label_pdf FROM shipments WHERE tenant_id = $1 AND ($2 = '' OR order_id::text = $2) AND id = $3`,
		t.ID, orderID, id).Scan(&pdf)
	if err == pgx.ErrNoRows {
		return nil, notFound("shipment")
	}
	return pdf, err
}

// SetShipmentStatus moves a shipment to status with its events.
func (tx *Tx) SetShipmentStatus(ctx context.Context, t *schema.Tenant, s *Shipment, status string, events json.RawMessage) error {
	s.Status, s.Events, s.UpdatedAt = status, events, tx.Now()
	_, err := tx.pg.Exec(ctx, `UPDATE shipments SET status = $3, events = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2`,
		t.ID, s.ID, status, []byte(events), tx.Now())
	return err
}

// SetFulfilment moves an order's fulfilment status (in its row and in the view its owner sees).
func (tx *Tx) SetFulfilment(ctx context.Context, t *schema.Tenant, o *Order, status string) error {
	o.View.FulfillmentStatus, o.UpdatedAt = status, tx.Now()
	o.View.UpdatedAt = tx.Now()
	_, err := tx.pg.Exec(ctx, `UPDATE orders SET fulfillment_status = $3, detail = jsonb_set(detail, '{fulfillment_status}', to_jsonb($3::text)),
		updated_at = $4 WHERE tenant_id = $1 AND id = $2`, t.ID, o.ID, status, tx.Now())
	return err
}
