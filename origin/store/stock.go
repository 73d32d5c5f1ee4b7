package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Stock events, emitted once per crossing of an availability class.
const (
	EventLowStock    = "product.low_stock"
	EventOutOfStock  = "product.out_of_stock"
	EventBackInStock = "product.back_in_stock"
)

// stockEvent is the payload of the stock events.
type stockEvent struct {
	VariantID    schema.VariantID    `json:"variant_id"`
	ProductID    schema.ProductID    `json:"product_id"`
	SKU          string              `json:"sku"`
	Stock        int64               `json:"stock"`
	Availability schema.Availability `json:"availability"`
	Previous     schema.Availability `json:"previous_availability"`
}

// TakeStock takes quantity units of a variant's stock when at least that many remain, with one
// conditional UPDATE: two checkouts racing for the last unit cannot both take it, whatever the
// isolation level. It returns ok false, and the units available, when there are not enough.
func (tx *Tx) TakeStock(ctx context.Context, t *schema.Tenant, id schema.VariantID, quantity int64) (available int64, ok bool, err error) {
	if quantity <= 0 {
		return 0, false, schema.Invalid("quantity", "quantity must be positive")
	}
	var stock int64
	var avail string
	err = tx.pg.QueryRow(ctx, `UPDATE variants SET stock = stock - $3 WHERE tenant_id = $1 AND id = $2 AND stock >= $3
		RETURNING stock, availability`, t.ID, int64(id), quantity).Scan(&stock, &avail)
	if err == pgx.ErrNoRows {
		err = tx.pg.QueryRow(ctx, `SELECT stock FROM variants WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)).Scan(&available)
		if err == pgx.ErrNoRows {
			return 0, false, nil
		}
		return available, false, err
	}
	if err != nil {
		return 0, false, err
	}
	if err := tx.stockChanged(ctx, t, id, stock, schema.Availability(avail)); err != nil {
		return 0, false, err
	}
	return stock, true, tx.refreshBundlesOf(ctx, t, id)
}

// ReturnStock puts quantity units back into a variant's stock (a released reservation, a
// restock on return). A variant deleted since is skipped.
func (tx *Tx) ReturnStock(ctx context.Context, t *schema.Tenant, id schema.VariantID, quantity int64) error {
	var stock int64
	var avail string
	err := tx.pg.QueryRow(ctx, `UPDATE variants SET stock = stock + $3 WHERE tenant_id = $1 AND id = $2
		RETURNING stock, availability`, t.ID, int64(id), quantity).Scan(&stock, &avail)
	if err == pgx.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	if err := tx.stockChanged(ctx, t, id, stock, schema.Availability(avail)); err != nil {
		return err
	}
	return tx.refreshBundlesOf(ctx, t, id)
}

// stockChanged replicates a variant's availability when its new stock level crosses into another
// class, and emits the crossing's event. A change within a class writes nothing to the log: a
// checkout does not bump the replication log per order (ARCHITECTURE 2.5).
func (tx *Tx) stockChanged(ctx context.Context, t *schema.Tenant, id schema.VariantID, stock int64, was schema.Availability) error {
	low, err := tx.lowStockThreshold(ctx, t)
	if err != nil {
		return err
	}
	now := schema.AvailabilityOf(stock, low)
	if now == was {
		return nil
	}
	v, err := tx.Variant(ctx, t, id)
	if err != nil {
		return err
	}
	p, err := tx.Product(ctx, t, v.ProductID)
	if err != nil {
		return err
	}
	v.Availability = now
	v.UpdatedAt = tx.Now()
	if err := tx.saveVariant(ctx, t, p, p, v); err != nil {
		return err
	}
	if _, err := tx.pg.Exec(ctx, `UPDATE variants SET availability = $3, updated_at = $4, version = $5 WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(id), string(now), v.UpdatedAt, v.Version); err != nil {
		return err
	}
	tx.emitStockCrossing(t, v, was)
	return nil
}

// emitStockCrossing emits the event of a variant's move from one availability class to another:
// low_stock when it leaves in_stock for low_stock, out_of_stock when it runs out, back_in_stock
// when it leaves out_of_stock. A move from low_stock back to in_stock emits nothing.
func (tx *Tx) emitStockCrossing(t *schema.Tenant, v *StockedVariant, was schema.Availability) {
	kind := ""
	switch {
	case v.Availability == was:
		return
	case v.Availability == schema.OutOfStock:
		kind = EventOutOfStock
	case was == schema.OutOfStock:
		kind = EventBackInStock
	case v.Availability == schema.LowStock:
		kind = EventLowStock
	default:
		return
	}
	tx.emit(t, kind, stockEvent{VariantID: v.ID, ProductID: v.ProductID, SKU: v.SKU, Stock: v.Stock,
		Availability: v.Availability, Previous: was})
}
