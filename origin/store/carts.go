package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Cart limits.
const (
	MaxCartLines    = 100
	MaxCartQuantity = schema.MaxLineQuantity
	MaxCartCodes    = 5 // coupons, and gift cards, per cart
)

// CartItem is one line of a cart: a variant and its quantity.
type CartItem struct {
	VariantID schema.VariantID `json:"variant_id"`
	Quantity  int64            `json:"quantity"`
	AddedAt   time.Time        `json:"added_at"`
}

// Cart is a cart as stored. Carts never leave the origin.
type Cart struct {
	SessionHash    []byte
	Currency       string
	CustomerID     int64 // 0: anonymous
	ShippingMethod string
	Notes          string
	GiftWrap       bool
	GiftMessage    string
	Coupons        []string
	GiftCards      []string
	Items          []CartItem
	Revision       int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	ExpiresAt      time.Time
}

// CartSessionHash is the key a cart is stored under: the SHA-256 of its X-Cart-Session value.
func CartSessionHash(session string) []byte {
	h := sha256.Sum256([]byte(session))
	return h[:]
}

// Settings are a tenant's commerce settings.
type Settings struct {
	TaxBasisPoints int64
	TaxInclusive   bool
	TaxOnShipping  bool
	CartTTL        time.Duration
	TokenTTL       time.Duration
}

// DefaultSettings returns the settings of a tenant that has no settings row: no tax, carts and
// customer sessions that expire after 30 idle days.
func DefaultSettings() Settings {
	return Settings{CartTTL: 30 * 24 * time.Hour, TokenTTL: 30 * 24 * time.Hour}
}

// Settings returns the tenant's commerce settings.
func (tx *Tx) Settings(ctx context.Context, t *schema.Tenant) (Settings, error) {
	s := DefaultSettings()
	var cartTTL, tokenTTL int64
	err := tx.pg.QueryRow(ctx, `SELECT tax_basis_points, tax_inclusive, tax_on_shipping, cart_ttl_seconds, token_ttl_seconds
		FROM tenant_settings WHERE tenant_id = $1`, t.ID).Scan(&s.TaxBasisPoints, &s.TaxInclusive, &s.TaxOnShipping, &cartTTL, &tokenTTL)
	if err == pgx.ErrNoRows {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.CartTTL, s.TokenTTL = time.Duration(cartTTL)*time.Second, time.Duration(tokenTTL)*time.Second
	return s, nil
}

// PutSettings writes the tenant's commerce settings.
func (tx *Tx) PutSettings(ctx context.Context, t *schema.Tenant, s Settings) error {
	if s.TaxBasisPoints < 0 || s.TaxBasisPoints > schema.MaxTaxBasisPoints {
		return schema.Invalid("tax_basis_points", "tax_basis_points must be between 0 and %d", int64(schema.MaxTaxBasisPoints))
	}
	if s.CartTTL < time.Hour || s.CartTTL > 365*24*time.Hour || s.TokenTTL < time.Hour || s.TokenTTL > 365*24*time.Hour {
		return schema.Invalid("cart_ttl_seconds", "lifetimes must be between one hour and one year")
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO tenant_settings (tenant_id, tax_basis_points, tax_inclusive, tax_on_shipping, cart_ttl_seconds, token_ttl_seconds, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (tenant_id) DO UPDATE SET tax_basis_points = $2, tax_inclusive = $3, tax_on_shipping = $4,
			cart_ttl_seconds = $5, token_ttl_seconds = $6, updated_at = $7`,
		t.ID, s.TaxBasisPoints, s.TaxInclusive, s.TaxOnShipping, int64(s.CartTTL/time.Second), int64(s.TokenTTL/time.Second), tx.Now())
	return err
}

// ShippingMethodRow is a shipping method with its prices per currency.
type ShippingMethodRow struct {
	Code     string        `json:"code"`
	Name     string        `json:"name"`
	Prices   schema.Prices `json:"prices"`
	FreeOver schema.Prices `json:"free_over"`
	Position int           `json:"position"`
	Active   bool          `json:"active"`
}

// ShippingMethods returns the tenant's shipping methods by position.
func (tx *Tx) ShippingMethods(ctx context.Context, t *schema.Tenant) ([]ShippingMethodRow, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT code, name, prices, free_over, position, active FROM shipping_methods
		WHERE tenant_id = $1 ORDER BY position, code`, func(row pgx.Row) (ShippingMethodRow, error) {
		var m ShippingMethodRow
		var prices, free []byte
		if err := row.Scan(&m.Code, &m.Name, &prices, &free, &m.Position, &m.Active); err != nil {
			return m, err
		}
		if err := json.Unmarshal(prices, &m.Prices); err != nil {
			return m, err
		}
		return m, json.Unmarshal(free, &m.FreeOver)
	}, t.ID)
}

// PutShippingMethod creates or replaces a shipping method.
func (tx *Tx) PutShippingMethod(ctx context.Context, t *schema.Tenant, m ShippingMethodRow) error {
	if err := schema.ValidateSlug("code", m.Code, nil); err != nil {
		return err
	}
	if err := schema.ValidateText("name", m.Name, 200, true); err != nil {
		return err
	}
	if err := schema.ValidatePrices("prices", m.Prices, true); err != nil {
		return err
	}
	if err := schema.ValidatePrices("free_over", m.FreeOver, false); err != nil {
		return err
	}
	if m.FreeOver == nil {
		m.FreeOver = schema.Prices{}
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO shipping_methods (tenant_id, code, name, prices, free_over, position, active, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (tenant_id, code) DO UPDATE SET name = $3, prices = $4, free_over = $5, position = $6, active = $7, updated_at = $8`,
		t.ID, m.Code, m.Name, jsonb(m.Prices), jsonb(m.FreeOver), m.Position, m.Active, tx.Now())
	return err
}

// LockCart returns the cart of a session, locked until the transaction ends, so that concurrent
// mutations of one cart queue behind each other instead of failing. It returns nil when the
// session has no cart, or only an expired one (which it deletes).
func (tx *Tx) LockCart(ctx context.Context, t *schema.Tenant, sessionHash []byte) (*Cart, error) {
	return tx.loadCart(ctx, t, sessionHash, true)
}

// Cart returns the cart of a session without locking it, or nil.
func (tx *Tx) Cart(ctx context.Context, t *schema.Tenant, sessionHash []byte) (*Cart, error) {
	return tx.loadCart(ctx, t, sessionHash, false)
}

func (tx *Tx) loadCart(ctx context.Context, t *schema.Tenant, sessionHash []byte, lock bool) (*Cart, error) {
	q := `SELECT currency, COALESCE(customer_id, 0), shipping_method, notes, gift_wrap, gift_message, coupon_codes, gift_card_codes,
		revision, created_at, updated_at, expires_at FROM carts WHERE tenant_id = $1 AND session_hash = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	c := &Cart{SessionHash: sessionHash}
	err := tx.pg.QueryRow(ctx, q, t.ID, sessionHash).Scan(&c.Currency, &c.CustomerID, &c.ShippingMethod, &c.Notes, &c.GiftWrap,
		&c.GiftMessage, &c.Coupons, &c.GiftCards, &c.Revision, &c.CreatedAt, &c.UpdatedAt, &c.ExpiresAt)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !c.ExpiresAt.After(tx.Now()) {
		if lock {
			_, err := tx.pg.Exec(ctx, `DELETE FROM carts WHERE tenant_id = $1 AND session_hash = $2`, t.ID, sessionHash)
			return nil, err
		}
		return nil, nil
	}
	c.CreatedAt, c.UpdatedAt, c.ExpiresAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC(), c.ExpiresAt.UTC()
	c.Items, err = appendRows(ctx, tx.pg, nil, `SELECT variant_id, quantity, added_at FROM cart_items WHERE tenant_id = $1 AND session_hash = $2
		ORDER BY added_at, variant_id`, func(row pgx.Row) (CartItem, error) {
		var it CartItem
		err := row.Scan(&it.VariantID, &it.Quantity, &it.AddedAt)
		it.AddedAt = it.AddedAt.UTC()
		return it, err
	}, t.ID, sessionHash)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// SaveCart writes a cart's options, bumps its revision and extends its life by ttl.
func (tx *Tx) SaveCart(ctx context.Context, t *schema.Tenant, c *Cart, ttl time.Duration) error {
	c.Revision++
	c.UpdatedAt, c.ExpiresAt = tx.Now(), tx.Now().Add(ttl)
	var customer any
	if c.CustomerID != 0 {
		customer = c.CustomerID
	}
	_, err := tx.pg.Exec(ctx, `UPDATE carts SET currency = $3, customer_id = $4, shipping_method = $5, notes = $6, gift_wrap = $7,
		gift_message = $8, coupon_codes = $9, gift_card_codes = $10, revision = $11, updated_at = $12, expires_at = $13
		WHERE tenant_id = $1 AND session_hash = $2`,
		t.ID, c.SessionHash, c.Currency, customer, c.ShippingMethod, c.Notes, c.GiftWrap, c.GiftMessage,
		nonNilStrings(c.Coupons), nonNilStrings(c.GiftCards), c.Revision, c.UpdatedAt, c.ExpiresAt)
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SetCartItem sets a variant's quantity in a locked cart (0 removes the line), keeping the
// cart's in-memory items in step.
func (tx *Tx) SetCartItem(ctx context.Context, t *schema.Tenant, c *Cart, variant schema.VariantID, quantity int64) error {
	if quantity < 0 || quantity > MaxCartQuantity {
		return schema.Invalid("quantity", "quantity must be between 0 and %d", int64(MaxCartQuantity))
	}
	i := -1
	for j, it := range c.Items {
		if it.VariantID == variant {
			i = j
		}
	}
	switch {
	case quantity == 0 && i < 0:
		return &schema.Error{Code: schema.CodeNotFound, Message: "cart item not found"}
	case quantity == 0:
		c.Items = append(c.Items[:i], c.Items[i+1:]...)
		_, err := tx.pg.Exec(ctx, `DELETE FROM cart_items WHERE tenant_id = $1 AND session_hash = $2 AND variant_id = $3`,
			t.ID, c.SessionHash, int64(variant))
		return err
	case i >= 0:
		c.Items[i].Quantity = quantity
		_, err := tx.pg.Exec(ctx, `UPDATE cart_items SET quantity = $4 WHERE tenant_id = $1 AND session_hash = $2 AND variant_id = $3`,
			t.ID, c.SessionHash, int64(variant), quantity)
		return err
	}
	if len(c.Items) >= MaxCartLines {
		return &schema.Error{Code: schema.CodeConflict, Message: "a cart holds at most 100 lines"}
	}
	c.Items = append(c.Items, CartItem{VariantID: variant, Quantity: quantity, AddedAt: tx.Now()})
	_, err := tx.pg.Exec(ctx, `INSERT INTO cart_items (tenant_id, session_hash, variant_id, quantity, added_at) VALUES ($1, $2, $3, $4, $5)`,
		t.ID, c.SessionHash, int64(variant), quantity, tx.Now())
	return err
}

// DeleteCart deletes a session's cart and its items.
func (tx *Tx) DeleteCart(ctx context.Context, t *schema.Tenant, sessionHash []byte) error {
	_, err := tx.pg.Exec(ctx, `DELETE FROM carts WHERE tenant_id = $1 AND session_hash = $2`, t.ID, sessionHash)
	return err
}

// DeleteExpiredCarts deletes up to limit carts idle past their expiry and returns how many.
func (db *DB) DeleteExpiredCarts(ctx context.Context, limit int) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM carts WHERE (tenant_id, session_hash) IN
		(SELECT tenant_id, session_hash FROM carts WHERE expires_at < now() LIMIT $1)`, limit)
	if err != nil {
		return 0, mapError(err)
	}
	return int(tag.RowsAffected()), nil
}

// OpenCart returns the session's cart locked, creating it (in currency) when there is none. Two
// first requests racing for one session both end with the same cart: the loser of the insert
// retries its transaction.
func (tx *Tx) OpenCart(ctx context.Context, t *schema.Tenant, sessionHash []byte, currency string, ttl time.Duration) (*Cart, error) {
	if c, err := tx.LockCart(ctx, t, sessionHash); c != nil || err != nil {
		return c, err
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO carts (tenant_id, session_hash, currency, revision, created_at, updated_at, expires_at)
		VALUES ($1, $2, $3, 0, $4, $4, $5) ON CONFLICT (tenant_id, session_hash) DO NOTHING`, t.ID, sessionHash, currency, tx.Now(), tx.Now().Add(ttl))
	if err != nil {
		return nil, err
	}
	return tx.LockCart(ctx, t, sessionHash)
}
