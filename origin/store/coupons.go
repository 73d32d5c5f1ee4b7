package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Coupon is a merchant's discount code. Amounts (a fixed Value, MinSubtotal) are in the store's
// default currency and converted at the cart currency's rate.
type Coupon struct {
	Code             string              `json:"code"`
	Kind             schema.DiscountKind `json:"kind" doc:"percent or fixed; empty for a free-shipping-only coupon"`
	Value            int64               `json:"value" doc:"percent: basis points (1000 = 10%); fixed: minor units"`
	FreeShipping     bool                `json:"free_shipping"`
	MinSubtotal      int64               `json:"min_subtotal"`
	ProductIDs       []int64             `json:"product_ids" doc:"empty: every product"`
	StartsAt         *time.Time          `json:"starts_at"`
	EndsAt           *time.Time          `json:"ends_at"`
	UsageLimit       *int64              `json:"usage_limit" doc:"null: unlimited"`
	UsageCount       int64               `json:"usage_count"`
	PerCustomerLimit *int64              `json:"per_customer_limit" doc:"null: unlimited"`
	Active           bool                `json:"active"`
	CreatedAt        time.Time           `json:"created_at"`
}

// NormalizeCouponCode returns the canonical form of a coupon code: trimmed, uppercase. Codes are
// 1 to 64 letters, digits, '-' and '_'.
func NormalizeCouponCode(code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if len(c) == 0 || len(c) > 64 {
		return "", schema.Invalid("code", "code must be 1 to 64 letters, digits, '-' or '_'")
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if !(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return "", schema.Invalid("code", "code must be 1 to 64 letters, digits, '-' or '_'")
		}
	}
	return c, nil
}

// ValidateCoupon checks a coupon's fields.
func ValidateCoupon(c *Coupon) error {
	code, err := NormalizeCouponCode(c.Code)
	if err != nil {
		return err
	}
	c.Code = code
	switch c.Kind {
	case schema.DiscountPercent:
		if c.Value <= 0 || c.Value > 10_000 {
			return schema.Invalid("value", "a percent coupon's value is in basis points: 1 to 10000 (1000 = 10%%)")
		}
	case schema.DiscountFixed:
		if c.Value <= 0 || c.Value > schema.MaxMinorAmount {
			return schema.Invalid("value", "a fixed coupon's value must be positive, in minor units of the default currency")
		}
	case "":
		if !c.FreeShipping || c.Value != 0 {
			return schema.Invalid("kind", "kind must be percent or fixed (or empty for a free-shipping coupon with value 0)")
		}
	default:
		return schema.Invalid("kind", "kind must be percent or fixed")
	}
	if c.MinSubtotal < 0 || c.MinSubtotal > schema.MaxMinorAmount {
		return schema.Invalid("min_subtotal", "min_subtotal must be between 0 and %d", int64(schema.MaxMinorAmount))
	}
	if c.StartsAt != nil && c.EndsAt != nil && !c.EndsAt.After(*c.StartsAt) {
		return schema.Invalid("ends_at", "ends_at must be after starts_at")
	}
	if c.UsageLimit != nil && *c.UsageLimit < 1 {
		return schema.Invalid("usage_limit", "usage_limit must be at least 1 (null: unlimited)")
	}
	if c.PerCustomerLimit != nil && *c.PerCustomerLimit < 1 {
		return schema.Invalid("per_customer_limit", "per_customer_limit must be at least 1 (null: unlimited)")
	}
	if len(c.ProductIDs) > 1000 {
		return schema.Invalid("product_ids", "a coupon names at most 1000 products")
	}
	if c.ProductIDs == nil {
		c.ProductIDs = []int64{}
	}
	return nil
}

// Usable reports why a coupon cannot be used now ("" when it can): inactive, not started,
// ended, used up.
func (c *Coupon) Usable(now time.Time) string {
	switch {
	case !c.Active:
		return "is not active"
	case c.StartsAt != nil && now.Before(*c.StartsAt):
		return "is not valid yet"
	case c.EndsAt != nil && !now.Before(*c.EndsAt):
		return "has expired"
	case c.UsageLimit != nil && c.UsageCount >= *c.UsageLimit:
		return "has been used up"
	}
	return ""
}

const couponColumns = `code, kind, value, free_shipping, min_subtotal, product_ids, starts_at, ends_at, usage_limit, usage_count,
	per_customer_limit, active, created_at`

func scanCoupon(row pgx.Row) (*Coupon, error) {
	var c Coupon
	var kind string
	if err := row.Scan(&c.Code, &kind, &c.Value, &c.FreeShipping, &c.MinSubtotal, &c.ProductIDs, &c.StartsAt, &c.EndsAt,
		&c.UsageLimit, &c.UsageCount, &c.PerCustomerLimit, &c.Active, &c.CreatedAt); err != nil {
		return nil, err
	}
	c.Kind = schema.DiscountKind(kind)
	c.CreatedAt = c.CreatedAt.UTC()
	for _, p := range []**time.Time{&c.StartsAt, &c.EndsAt} {
		if *p != nil {
			u := (*p).UTC()
			*p = &u
		}
	}
	return &c, nil
}

// Coupon returns a coupon by code (any case), or nil when there is none.
func (tx *Tx) Coupon(ctx context.Context, t *schema.Tenant, code string) (*Coupon, error) {
	code, err := NormalizeCouponCode(code)
	if err != nil {
		return nil, nil
	}
	c, err := scanCoupon(tx.pg.QueryRow(ctx, `SELECT `+couponColumns+` FROM coupons WHERE tenant_id = $1 AND code = $2`, t.ID, code))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return c, err
}

// Coupons lists a tenant's coupons by code.
func (tx *Tx) Coupons(ctx context.Context, t *schema.Tenant) ([]*Coupon, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+couponColumns+` FROM coupons WHERE tenant_id = $1 ORDER BY code`, scanCoupon, t.ID)
}

// PutCoupon creates or replaces a coupon; its usage count is kept.
func (tx *Tx) PutCoupon(ctx context.Context, t *schema.Tenant, c *Coupon) error {
	if err := ValidateCoupon(c); err != nil {
		return err
	}
	err := tx.pg.QueryRow(ctx, `INSERT INTO coupons (tenant_id, code, kind, value, free_shipping, min_subtotal, product_ids, starts_at,
			ends_at, usage_limit, per_customer_limit, active, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (tenant_id, code) DO UPDATE SET kind = $3, value = $4, free_shipping = $5, min_subtotal = $6, product_ids = $7,
			starts_at = $8, ends_at = $9, usage_limit = $10, per_customer_limit = $11, active = $12
		RETURNING usage_count, created_at`,
		t.ID, c.Code, string(c.Kind), c.Value, c.FreeShipping, c.MinSubtotal, c.ProductIDs, c.StartsAt, c.EndsAt,
		c.UsageLimit, c.PerCustomerLimit, c.Active, tx.Now()).Scan(&c.UsageCount, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return err
}

// DeleteCoupon deletes a coupon; past redemptions stay on their orders.
func (tx *Tx) DeleteCoupon(ctx context.Context, t *schema.Tenant, code string) error {
	code, err := NormalizeCouponCode(code)
	if err != nil {
		return notFound("coupon")
	}
	tag, err := tx.pg.Exec(ctx, `DELETE FROM coupons WHERE tenant_id = $1 AND code = $2`, t.ID, code)
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("coupon")
	}
	return err
}

// RedeemCoupon records one use of a coupon by an order, with a conditional UPDATE of its usage
// count: a single-use coupon is redeemed once however many checkouts race for it. It returns a
// reason ("" on success) when the coupon is unusable or the customer's own limit is reached.
func (tx *Tx) RedeemCoupon(ctx context.Context, t *schema.Tenant, code, orderID string, customerID int64, email string, amount int64) (string, error) {
	var perCustomer *int64
	err := tx.pg.QueryRow(ctx, `UPDATE coupons SET usage_count = usage_count + 1
		WHERE tenant_id = $1 AND code = $2 AND active AND (usage_limit IS NULL OR usage_count < usage_limit)
			AND (starts_at IS NULL OR starts_at <= $3) AND (ends_at IS NULL OR ends_at > $3)
		RETURNING per_customer_limit`, t.ID, code, tx.Now()).Scan(&perCustomer)
	if err == pgx.ErrNoRows {
		return "is no longer available", nil
	}
	if err != nil {
		return "", err
	}
	if perCustomer != nil {
		var used int64
		if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM coupon_redemptions WHERE tenant_id = $1 AND code = $2 AND email = $3`,
			t.ID, code, email).Scan(&used); err != nil {
			return "", err
		}
		if used >= *perCustomer {
			return "has already been used by this customer", nil
		}
	}
	var customer any
	if customerID != 0 {
		customer = customerID
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO coupon_redemptions (tenant_id, code, order_id, customer_id, email, amount, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, code, orderID, customer, email, amount, tx.Now())
	return "", err
}

// ReleaseCoupon undoes an order's redemption of a coupon.
func (tx *Tx) ReleaseCoupon(ctx context.Context, t *schema.Tenant, code, orderID string) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM coupon_redemptions WHERE tenant_id = $1 AND code = $2 AND order_id = $3`, t.ID, code, orderID)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = tx.pg.Exec(ctx, `UPDATE coupons SET usage_count = usage_count - 1 WHERE tenant_id = $1 AND code = $2 AND usage_count > 0`, t.ID, code)
	return err
}

// GiftCard is a stored-value card. Its code is stored only as a hash; the API shows the last
// four characters.
type GiftCard struct {
	// Key is the hex SHA-256 of the normalised code: how carts and orders refer to the card.
	Key            string     `json:"-"`
	Last4          string     `json:"last4"`
	Currency       string     `json:"currency"`
	InitialBalance int64      `json:"initial_balance"`
	Balance        int64      `json:"balance"`
	ExpiresAt      *time.Time `json:"expires_at"`
	Active         bool       `json:"active"`
	CreatedAt      time.Time  `json:"created_at"`
}

// Usable reports why a gift card cannot pay now ("" when it can).
func (g *GiftCard) Usable(now time.Time, currency string) string {
	switch {
	case !g.Active:
		return "is not active"
	case g.ExpiresAt != nil && !now.Before(*g.ExpiresAt):
		return "has expired"
	case g.Currency != currency:
		return "is in " + g.Currency + ", not " + currency
	case g.Balance <= 0:
		return "has no balance left"
	}
	return ""
}

// normalizeGiftCardCode strips spaces and hyphens and uppercases a typed gift card code.
func normalizeGiftCardCode(code string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		if r != ' ' && r != '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// GiftCardKey returns the key a gift card code is stored under, and false when the code cannot
// be a gift card code (8 to 64 characters once normalised).
func GiftCardKey(code string) (string, bool) {
	n := normalizeGiftCardCode(code)
	if len(n) < 8 || len(n) > 64 {
		return "", false
	}
	h := sha256.Sum256([]byte(n))
	return hex.EncodeToString(h[:]), true
}

// NewGiftCardCode returns a random gift card code: 16 characters of Crockford's base32 (80
// bits), in groups of four.
func NewGiftCardCode() string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("store: crypto/rand: " + err.Error())
	}
	var b strings.Builder
	for i, c := range raw {
		if i > 0 && i%4 == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(alphabet[c&31])
	}
	return b.String()
}

const giftCardColumns = `encode(code_hash, 'hex'), last4, currency, initial_balance, balance, expires_at, active, created_at`

func scanGiftCard(row pgx.Row) (*GiftCard, error) {
	var g GiftCard
	if err := row.Scan(&g.Key, &g.Last4, &g.Currency, &g.InitialBalance, &g.Balance, &g.ExpiresAt, &g.Active, &g.CreatedAt); err != nil {
		return nil, err
	}
	g.CreatedAt = g.CreatedAt.UTC()
	if g.ExpiresAt != nil {
		u := g.ExpiresAt.UTC()
		g.ExpiresAt = &u
	}
	return &g, nil
}

// GiftCard returns a gift card by key, or nil.
func (tx *Tx) GiftCard(ctx context.Context, t *schema.Tenant, key string) (*GiftCard, error) {
	g, err := scanGiftCard(tx.pg.QueryRow(ctx, `SELECT `+giftCardColumns+` FROM gift_cards WHERE tenant_id = $1 AND code_hash = decode($2, 'hex')`,
		t.ID, key))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return g, err
}

// CreateGiftCard issues a gift card with code (a new random code when empty) and returns the
// code: the only time it is ever shown.
func (tx *Tx) CreateGiftCard(ctx context.Context, t *schema.Tenant, code, currency string, amount int64, expiresAt *time.Time) (string, *GiftCard, error) {
	if code == "" {
		code = NewGiftCardCode()
	}
	key, ok := GiftCardKey(code)
	if !ok {
		return "", nil, schema.Invalid("code", "a gift card code has 8 to 64 characters (spaces and hyphens ignored)")
	}
	if amount <= 0 || amount > schema.MaxMinorAmount {
		return "", nil, schema.Invalid("amount", "amount must be positive, in minor units")
	}
	if err := schema.ValidateCurrencyCode(currency); err != nil {
		return "", nil, err
	}
	if _, err := tx.Currency(ctx, t, currency); err != nil {
		return "", nil, schema.Invalid("currency", "the store has no currency %s", currency)
	}
	n := normalizeGiftCardCode(code)
	g := &GiftCard{Key: key, Last4: n[len(n)-4:], Currency: currency, InitialBalance: amount, Balance: amount,
		ExpiresAt: expiresAt, Active: true, CreatedAt: tx.Now()}
	_, err := tx.pg.Exec(ctx, `INSERT INTO gift_cards (tenant_id, code_hash, last4, currency, initial_balance, balance, expires_at, active, created_at)
		VALUES ($1, decode($2, 'hex'), $3, $4, $5, $5, $6, true, $7)`, t.ID, key, g.Last4, currency, amount, expiresAt, tx.Now())
	if err != nil {
		return "", nil, err
	}
	return code, g, nil
}

// SetGiftCardActive enables or disables a gift card.
func (tx *Tx) SetGiftCardActive(ctx context.Context, t *schema.Tenant, key string, active bool) error {
	tag, err := tx.pg.Exec(ctx, `UPDATE gift_cards SET active = $3 WHERE tenant_id = $1 AND code_hash = decode($2, 'hex')`, t.ID, key, active)
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("gift card")
	}
	return err
}

// DebitGiftCard takes amount from a gift card for an order with a conditional UPDATE: two orders
// racing for one balance cannot overdraw it. It returns false when the card cannot pay amount.
func (tx *Tx) DebitGiftCard(ctx context.Context, t *schema.Tenant, key, orderID string, amount int64) (bool, error) {
	tag, err := tx.pg.Exec(ctx, `UPDATE gift_cards SET balance = balance - $3
		WHERE tenant_id = $1 AND code_hash = decode($2, 'hex') AND active AND balance >= $3 AND (expires_at IS NULL OR expires_at > $4)`,
		t.ID, key, amount, tx.Now())
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO gift_card_uses (tenant_id, code_hash, order_id, amount, created_at)
		VALUES ($1, decode($2, 'hex'), $3, $4, $5)`, t.ID, key, orderID, amount, tx.Now())
	return err == nil, err
}

// CreditGiftCard gives amount back to a gift card for an order (a released reservation, a
// refund), recorded as a negative use.
func (tx *Tx) CreditGiftCard(ctx context.Context, t *schema.Tenant, key, orderID string, amount int64) error {
	if _, err := tx.pg.Exec(ctx, `UPDATE gift_cards SET balance = balance + $3 WHERE tenant_id = $1 AND code_hash = decode($2, 'hex')`,
		t.ID, key, amount); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO gift_card_uses (tenant_id, code_hash, order_id, amount, created_at)
		VALUES ($1, decode($2, 'hex'), $3, $4, $5)`, t.ID, key, orderID, -amount, tx.Now())
	return err
}
