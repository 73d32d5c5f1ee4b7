package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// IssuedGiftCard is a gift card as staff see it: addressed by its id, never by its code, which
// is shown once, when the card is issued.
type IssuedGiftCard struct {
	ID string `json:"id"`
	GiftCard
	Note string `json:"note"`
}

const issuedGiftCardColumns = `id, ` + giftCardColumns + `, note`

func scanIssuedGiftCard(row pgx.Row) (*IssuedGiftCard, error) {
	var g IssuedGiftCard
	if err := row.Scan(&g.ID, &g.Key, &g.Last4, &g.Currency, &g.InitialBalance, &g.Balance, &g.ExpiresAt, &g.Active, &g.CreatedAt,
		&g.Note); err != nil {
		return nil, err
	}
	g.CreatedAt = g.CreatedAt.UTC()
	if g.ExpiresAt != nil {
		u := g.ExpiresAt.UTC()
		g.ExpiresAt = &u
	}
	return &g, nil
}

// IssueGiftCard issues a gift card (CreateGiftCard) with a note, and returns its code (the only
// time it is shown) and the card.
func (tx *Tx) IssueGiftCard(ctx context.Context, t *schema.Tenant, code, currency string, amount int64, expiresAt *time.Time, note string) (string, *IssuedGiftCard, error) {
	if err := schema.ValidateText("note", note, 1000, false); err != nil {
		return "", nil, err
	}
	if expiresAt != nil && !expiresAt.After(tx.Now()) {
		return "", nil, schema.Invalid("expires_at", "expires_at must be in the future")
	}
	if code != "" {
		if key, ok := GiftCardKey(code); ok {
			if g, err := tx.GiftCard(ctx, t, key); err != nil || g != nil {
				if err == nil {
					err = &schema.Error{Code: schema.CodeConflict, Field: "code", Message: "a gift card with this code already exists"}
				}
				return "", nil, err
			}
		}
	}
	code, g, err := tx.CreateGiftCard(ctx, t, code, currency, amount, expiresAt)
	if err != nil {
		return "", nil, err
	}
	out, err := scanIssuedGiftCard(tx.pg.QueryRow(ctx, `UPDATE gift_cards SET note = $3 WHERE tenant_id = $1 AND code_hash = decode($2, 'hex')
		RETURNING `+issuedGiftCardColumns, t.ID, g.Key, note))
	return code, out, err
}

// GiftCards lists a page of the tenant's gift cards, newest first, with their total count;
// last4 (the characters a shopper reads out) filters when not empty.
func (tx *Tx) GiftCards(ctx context.Context, t *schema.Tenant, last4 string, offset, limit int) ([]*IssuedGiftCard, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM gift_cards WHERE tenant_id = $1 AND ($2 = '' OR last4 = $2)`,
		t.ID, last4).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []*IssuedGiftCard{}, `SELECT `+issuedGiftCardColumns+` FROM gift_cards
		WHERE tenant_id = $1 AND ($2 = '' OR last4 = $2) ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
		scanIssuedGiftCard, t.ID, last4, limit, offset)
	return out, total, err
}

// GiftCardByID returns a gift card by its id.
func (tx *Tx) GiftCardByID(ctx context.Context, t *schema.Tenant, id string) (*IssuedGiftCard, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("gift card")
	}
	g, err := scanIssuedGiftCard(tx.pg.QueryRow(ctx, `SELECT `+issuedGiftCardColumns+` FROM gift_cards WHERE tenant_id = $1 AND id = $2`, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("gift card")
	}
	return g, err
}

// UpdateGiftCard enables or disables a gift card and sets its note; nil leaves a field as it is.
// Balances are not edited here: they move only with orders.
func (tx *Tx) UpdateGiftCard(ctx context.Context, t *schema.Tenant, id string, active *bool, note *string) (*IssuedGiftCard, error) {
	if note != nil {
		if err := schema.ValidateText("note", *note, 1000, false); err != nil {
			return nil, err
		}
	}
	if !schema.ValidUUID(id) {
		return nil, notFound("gift card")
	}
	g, err := scanIssuedGiftCard(tx.pg.QueryRow(ctx, `UPDATE gift_cards SET active = COALESCE($3, active), note = COALESCE($4, note)
		WHERE tenant_id = $1 AND id = $2 RETURNING `+issuedGiftCardColumns, t.ID, id, active, note))
	if err == pgx.ErrNoRows {
		return nil, notFound("gift card")
	}
	return g, err
}

// DeleteShippingMethod deletes a shipping method. Carts that chose it report an issue and fall
// back to another method; orders keep the method they were placed with.
func (tx *Tx) DeleteShippingMethod(ctx context.Context, t *schema.Tenant, code string) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM shipping_methods WHERE tenant_id = $1 AND code = $2`, t.ID, code)
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("shipping method")
	}
	return err
}

// HasSettings reports whether the tenant's commerce settings were ever written (otherwise
// DefaultSettings apply).
func (tx *Tx) HasSettings(ctx context.Context, t *schema.Tenant) (bool, error) {
	var n int
	err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM tenant_settings WHERE tenant_id = $1`, t.ID).Scan(&n)
	return n > 0, err
}
