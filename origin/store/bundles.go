package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// BundleComponent is a variant a bundle is made of, and how many of it one bundle takes.
type BundleComponent struct {
	VariantID schema.VariantID `json:"variant_id"`
	Quantity  int64            `json:"quantity"`
}

// Bundle is a product sold as a set of other variants.
type Bundle struct {
	ProductID  schema.ProductID  `json:"product_id"`
	Components []BundleComponent `json:"components"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

func scanBundle(row pgx.Row) (*Bundle, error) {
	b := &Bundle{}
	var comps []byte
	if err := row.Scan(&b.ProductID, &comps, &b.CreatedAt, &b.UpdatedAt); err != nil {
		return nil, err
	}
	return b, json.Unmarshal(comps, &b.Components)
}

// Bundles lists a store's bundles.
func (tx *Tx) Bundles(ctx context.Context, t *schema.Tenant) ([]*Bundle, error) {
	return appendRows(ctx, tx.pg, []*Bundle{}, `SELECT product_id, components, created_at, updated_at FROM bundles
		WHERE tenant_id = $1 ORDER BY product_id`, scanBundle, t.ID)
}

// BundleOf returns the bundle of a product, or nil when it is not one.
func (tx *Tx) BundleOf(ctx context.Context, t *schema.Tenant, product schema.ProductID) (*Bundle, error) {
	b, err := scanBundle(tx.pg.QueryRow(ctx, `SELECT product_id, components, created_at, updated_at FROM bundles
		WHERE tenant_id = $1 AND product_id = $2`, t.ID, int64(product)))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return b, err
}

// PutBundle makes product a bundle of components (replacing its earlier ones): 1 to 20
// variants of other products, none itself a bundle's, each taken 1 to 100 times; the bundle's
// own variants then hold the derived stock.
func (tx *Tx) PutBundle(ctx context.Context, t *schema.Tenant, product schema.ProductID, components []BundleComponent) (*Bundle, error) {
	if _, err := tx.Product(ctx, t, product); err != nil {
		return nil, err
	}
	if len(components) == 0 || len(components) > 20 {
		return nil, schema.Invalid("components", "a bundle has 1 to 20 components")
	}
	seen := map[schema.VariantID]bool{}
	for _, c := range components {
		if c.Quantity < 1 || c.Quantity > 100 {
			return nil, schema.Invalid("components", "a component is taken 1 to 100 times")
		}
		if seen[c.VariantID] {
			return nil, schema.Invalid("components", "variant %d is listed twice", int64(c.VariantID))
		}
		seen[c.VariantID] = true
		v, err := tx.Variant(ctx, t, c.VariantID)
		if err != nil {
			return nil, schema.Invalid("components", "variant %d does not exist", int64(c.VariantID))
		}
		if v.ProductID == product {
			return nil, schema.Invalid("components", "a bundle cannot contain its own variants")
		}
		if inner, err := tx.BundleOf(ctx, t, v.ProductID); err != nil {
			return nil, err
		} else if inner != nil {
			return nil, schema.Invalid("components", "variant %d belongs to a bundle: bundles do not nest", int64(c.VariantID))
		}
	}
	comps, _ := json.Marshal(components)
	b, err := scanBundle(tx.pg.QueryRow(ctx, `INSERT INTO bundles (tenant_id, product_id, components, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (tenant_id, product_id) DO UPDATE SET components = $3, updated_at = $4
		RETURNING product_id, components, created_at, updated_at`, t.ID, int64(product), comps, tx.Now()))
	if err != nil {
		return nil, err
	}
	return b, tx.refreshBundle(ctx, t, b)
}

// DeleteBundle makes a bundle an ordinary product again (its variants keep their last stock).
func (tx *Tx) DeleteBundle(ctx context.Context, t *schema.Tenant, product schema.ProductID) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM bundles WHERE tenant_id = $1 AND product_id = $2`, t.ID, int64(product))
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("bundle")
	}
	return err
}

// TakeLineStock takes the stock of quantity units of a variant: its own, or, for a bundle's
// variant, its components'. It returns the holds to release on cancellation, or ok false with
// the units available.
func (tx *Tx) TakeLineStock(ctx context.Context, t *schema.Tenant, product schema.ProductID, id schema.VariantID, quantity int64) ([]StockHold, int64, bool, error) {
	b, err := tx.BundleOf(ctx, t, product)
	if err != nil || b == nil {
		if err != nil {
			return nil, 0, false, err
		}
		avail, ok, err := tx.TakeStock(ctx, t, id, quantity)
		return []StockHold{{VariantID: id, Quantity: quantity}}, avail, ok, err
	}
	var holds []StockHold
	for _, c := range b.Components {
		avail, ok, err := tx.TakeStock(ctx, t, c.VariantID, c.Quantity*quantity)
		if err != nil || !ok {
			return nil, avail / c.Quantity, false, err
		}
		holds = append(holds, StockHold{VariantID: c.VariantID, Quantity: c.Quantity * quantity})
	}
	return holds, 0, true, nil
}

// ReturnLineStock puts quantity units of an order line back in stock: the variant's own, or
// its bundle's components'.
func (tx *Tx) ReturnLineStock(ctx context.Context, t *schema.Tenant, product schema.ProductID, id schema.VariantID, quantity int64) error {
	b, err := tx.BundleOf(ctx, t, product)
	if err != nil {
		return err
	}
	if b == nil {
		return tx.ReturnStock(ctx, t, id, quantity)
	}
	for _, c := range b.Components {
		if err := tx.ReturnStock(ctx, t, c.VariantID, c.Quantity*quantity); err != nil {
			return err
		}
	}
	return nil
}

// refreshBundlesOf recomputes the stock of the bundles a variant is a component of.
func (tx *Tx) refreshBundlesOf(ctx context.Context, t *schema.Tenant, id schema.VariantID) error {
	needle, _ := json.Marshal([]map[string]int64{{"variant_id": int64(id)}})
	bundles, err := appendRows(ctx, tx.pg, nil, `SELECT product_id, components, created_at, updated_at FROM bundles
		WHERE tenant_id = $1 AND components @> $2`, scanBundle, t.ID, needle)
	if err != nil {
		return err
	}
	for _, b := range bundles {
		if err := tx.refreshBundle(ctx, t, b); err != nil {
			return err
		}
	}
	return nil
}

// refreshBundle sets a bundle's variants' stock to the number of whole bundles its components
// make, replicating an availability change.
func (tx *Tx) refreshBundle(ctx context.Context, t *schema.Tenant, b *Bundle) error {
	derived := int64(-1)
	for _, c := range b.Components {
		var stock int64
		if err := tx.pg.QueryRow(ctx, `SELECT stock FROM variants WHERE tenant_id = $1 AND id = $2`, t.ID, int64(c.VariantID)).Scan(&stock); err != nil {
			if err == pgx.ErrNoRows {
				stock = 0
			} else {
				return err
			}
		}
		if n := stock / c.Quantity; derived < 0 || n < derived {
			derived = n
		}
	}
	derived = max(derived, 0)
	type row struct {
		id    int64
		stock int64
		avail string
	}
	rows, err := appendRows(ctx, tx.pg, nil, `UPDATE variants SET stock = $3 WHERE tenant_id = $1 AND product_id = $2 AND stock <> $3
		RETURNING id, stock, availability`, func(r pgx.Row) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.stock, &x.avail)
		return x, err
	}, t.ID, int64(b.ProductID), derived)
	if err != nil {
		return fmt.Errorf("store: refreshing bundle %d: %w", b.ProductID, err)
	}
	for _, x := range rows {
		if err := tx.stockChanged(ctx, t, schema.VariantID(x.id), x.stock, schema.Availability(x.avail)); err != nil {
			return err
		}
	}
	return nil
}

// SaleLine is one line of a paid order, for reporting.
type SaleLine struct {
	OrderID   string
	Currency  string
	ProductID schema.ProductID
	VariantID schema.VariantID
	Title     string
	Quantity  int64
	Total     int64
}

// SaleLines returns the lines of the store's orders placed in [from, to) that were paid (paid,
// partially or wholly refunded afterwards), oldest order first.
func (tx *Tx) SaleLines(ctx context.Context, t *schema.Tenant, from, to time.Time) ([]SaleLine, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT o.id::text, o.currency, l.product_id, l.variant_id, l.title, l.quantity, l.total
		FROM orders o JOIN order_lines l ON l.tenant_id = o.tenant_id AND l.order_id = o.id
		WHERE o.tenant_id = $1 AND o.status IN ($2, $3, $4) AND o.created_at >= $5 AND o.created_at < $6
		ORDER BY o.created_at, o.id, l.line_no`, func(row pgx.Row) (SaleLine, error) {
		var l SaleLine
		err := row.Scan(&l.OrderID, &l.Currency, &l.ProductID, &l.VariantID, &l.Title, &l.Quantity, &l.Total)
		return l, err
	}, t.ID, schema.OrderPaid, schema.OrderPartiallyRefunded, schema.OrderRefunded, from, to)
}
