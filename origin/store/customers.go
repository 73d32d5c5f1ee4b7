package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// EventCustomerCreated is emitted when a shopper registers.
const EventCustomerCreated = "customer.created"

// Customer limits.
const (
	MaxAddresses     = 20
	MaxWishlistItems = 500
	// CustomerTokenPrefix starts every customer session token.
	CustomerTokenPrefix = "cst_"
)

// Customer is a shopper's account. Customers never leave the origin.
type Customer struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// NormalizeEmail returns the form emails are stored and compared in: trimmed, lowercase.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateCustomer creates a customer with an already hashed password. An email already
// registered is a conflict.
func (tx *Tx) CreateCustomer(ctx context.Context, t *schema.Tenant, email, name, passwordHash string) (*Customer, error) {
	email = NormalizeEmail(email)
	if err := schema.ValidateEmail("email", email); err != nil {
		return nil, err
	}
	if err := schema.ValidateText("name", name, 200, false); err != nil {
		return nil, err
	}
	var exists bool
	if err := tx.pg.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM customers WHERE tenant_id = $1 AND email = $2)`, t.ID, email).Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		return nil, &schema.Error{Code: schema.CodeConflict, Field: "email", Message: "an account with this email already exists; sign in instead"}
	}
	id, err := tx.allocIDs(ctx, t.ID, "customers", 1)
	if err != nil {
		return nil, err
	}
	c := &Customer{ID: id, Email: email, Name: name, CreatedAt: tx.Now()}
	if _, err := tx.pg.Exec(ctx, `INSERT INTO customers (tenant_id, id, email, name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, id, email, name, passwordHash, tx.Now()); err != nil {
		return nil, err
	}
	tx.emit(t, EventCustomerCreated, c)
	return c, nil
}

// CustomerCredentials returns the customer with email and their password hash, or nil.
func (tx *Tx) CustomerCredentials(ctx context.Context, t *schema.Tenant, email string) (*Customer, string, error) {
	var c Customer
	var hash string
	err := tx.pg.QueryRow(ctx, `SELECT id, email, name, created_at, password_hash FROM customers WHERE tenant_id = $1 AND email = $2`,
		t.ID, NormalizeEmail(email)).Scan(&c.ID, &c.Email, &c.Name, &c.CreatedAt, &hash)
	if err == pgx.ErrNoRows {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return &c, hash, nil
}

// NewCustomerToken returns a new session token: "cst_" and 32 random bytes in base64url (256
// bits), and the hash it is stored under.
func NewCustomerToken() (token string, hash []byte) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("store: crypto/rand: " + err.Error())
	}
	token = CustomerTokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return token, CustomerTokenHash(token)
}

// CustomerTokenHash is the key a session token is stored under: its SHA-256. Tokens carry 256
// random bits, so a fast hash suffices.
func CustomerTokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateCustomerToken stores a session token of a customer, valid for ttl of inactivity.
func (tx *Tx) CreateCustomerToken(ctx context.Context, t *schema.Tenant, customerID int64, hash []byte, ttl time.Duration) error {
	_, err := tx.pg.Exec(ctx, `INSERT INTO customer_tokens (tenant_id, token_hash, customer_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		t.ID, hash, customerID, tx.Now(), tx.Now().Add(ttl))
	return err
}

// CustomerByToken returns the customer of a live session token of the tenant, or nil. A token's
// life is extended to ttl from now when less than ttl minus an hour remains, so an active
// session does not expire and a token is not rewritten on every request.
func (tx *Tx) CustomerByToken(ctx context.Context, t *schema.Tenant, hash []byte, ttl time.Duration) (*Customer, error) {
	var c Customer
	var expires time.Time
	err := tx.pg.QueryRow(ctx, `SELECT c.id, c.email, c.name, c.created_at, k.expires_at FROM customer_tokens k
		JOIN customers c ON c.tenant_id = k.tenant_id AND c.id = k.customer_id
		WHERE k.tenant_id = $1 AND k.token_hash = $2`, t.ID, hash).Scan(&c.ID, &c.Email, &c.Name, &c.CreatedAt, &expires)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !expires.After(tx.Now()) {
		_, err := tx.pg.Exec(ctx, `DELETE FROM customer_tokens WHERE tenant_id = $1 AND token_hash = $2`, t.ID, hash)
		return nil, err
	}
	if expires.Sub(tx.Now()) < ttl-time.Hour {
		if _, err := tx.pg.Exec(ctx, `UPDATE customer_tokens SET expires_at = $3 WHERE tenant_id = $1 AND token_hash = $2`,
			t.ID, hash, tx.Now().Add(ttl)); err != nil {
			return nil, err
		}
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return &c, nil
}

// DeleteCustomerToken ends a session.
func (tx *Tx) DeleteCustomerToken(ctx context.Context, t *schema.Tenant, hash []byte) error {
	_, err := tx.pg.Exec(ctx, `DELETE FROM customer_tokens WHERE tenant_id = $1 AND token_hash = $2`, t.ID, hash)
	return err
}

// SavedAddress is one of a customer's saved addresses.
type SavedAddress struct {
	ID        int64          `json:"id"`
	Address   schema.Address `json:"address"`
	Default   bool           `json:"default"`
	CreatedAt time.Time      `json:"created_at"`
}

// Addresses lists a customer's saved addresses, the default first.
func (tx *Tx) Addresses(ctx context.Context, t *schema.Tenant, customerID int64) ([]SavedAddress, error) {
	return appendRows(ctx, tx.pg, []SavedAddress{}, `SELECT id, address, is_default, created_at FROM customer_addresses
		WHERE tenant_id = $1 AND customer_id = $2 ORDER BY is_default DESC, id`, func(row pgx.Row) (SavedAddress, error) {
		var a SavedAddress
		var raw []byte
		if err := row.Scan(&a.ID, &raw, &a.Default, &a.CreatedAt); err != nil {
			return a, err
		}
		a.CreatedAt = a.CreatedAt.UTC()
		return a, json.Unmarshal(raw, &a.Address)
	}, t.ID, customerID)
}

// AddAddress saves an address for a customer; the first, or one marked default, becomes the
// default.
func (tx *Tx) AddAddress(ctx context.Context, t *schema.Tenant, customerID int64, a schema.Address, makeDefault bool) (*SavedAddress, error) {
	if err := schema.ValidateAddress("address", &a); err != nil {
		return nil, err
	}
	var n int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM customer_addresses WHERE tenant_id = $1 AND customer_id = $2`, t.ID, customerID).Scan(&n); err != nil {
		return nil, err
	}
	if n >= MaxAddresses {
		return nil, &schema.Error{Code: schema.CodeConflict, Message: "a customer saves at most 20 addresses"}
	}
	makeDefault = makeDefault || n == 0
	if makeDefault {
		if _, err := tx.pg.Exec(ctx, `UPDATE customer_addresses SET is_default = false WHERE tenant_id = $1 AND customer_id = $2`, t.ID, customerID); err != nil {
			return nil, err
		}
	}
	id, err := tx.allocIDs(ctx, t.ID, "addresses", 1)
	if err != nil {
		return nil, err
	}
	sa := &SavedAddress{ID: id, Address: a, Default: makeDefault, CreatedAt: tx.Now()}
	_, err = tx.pg.Exec(ctx, `INSERT INTO customer_addresses (tenant_id, customer_id, id, address, is_default, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, customerID, id, jsonb(a), makeDefault, tx.Now())
	return sa, err
}

// DeleteAddress deletes one of a customer's addresses; another customer's address is not found.
func (tx *Tx) DeleteAddress(ctx context.Context, t *schema.Tenant, customerID, id int64) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM customer_addresses WHERE tenant_id = $1 AND customer_id = $2 AND id = $3`, t.ID, customerID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("address")
	}
	return err
}

// WishlistItem is a product on a customer's wishlist.
type WishlistItem struct {
	ProductID schema.ProductID `json:"product_id"`
	AddedAt   time.Time        `json:"added_at"`
}

// Wishlist lists a customer's wishlist, newest first.
func (tx *Tx) Wishlist(ctx context.Context, t *schema.Tenant, customerID int64) ([]WishlistItem, error) {
	return appendRows(ctx, tx.pg, []WishlistItem{}, `SELECT product_id, added_at FROM wishlist_items WHERE tenant_id = $1 AND customer_id = $2
		ORDER BY added_at DESC, product_id`, func(row pgx.Row) (WishlistItem, error) {
		var w WishlistItem
		err := row.Scan(&w.ProductID, &w.AddedAt)
		w.AddedAt = w.AddedAt.UTC()
		return w, err
	}, t.ID, customerID)
}

// AddToWishlist adds a product (idempotent).
func (tx *Tx) AddToWishlist(ctx context.Context, t *schema.Tenant, customerID int64, product schema.ProductID) error {
	var n int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM wishlist_items WHERE tenant_id = $1 AND customer_id = $2`, t.ID, customerID).Scan(&n); err != nil {
		return err
	}
	if n >= MaxWishlistItems {
		return &schema.Error{Code: schema.CodeConflict, Message: "a wishlist holds at most 500 products"}
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO wishlist_items (tenant_id, customer_id, product_id, added_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, t.ID, customerID, int64(product), tx.Now())
	return err
}

// RemoveFromWishlist removes a product.
func (tx *Tx) RemoveFromWishlist(ctx context.Context, t *schema.Tenant, customerID int64, product schema.ProductID) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM wishlist_items WHERE tenant_id = $1 AND customer_id = $2 AND product_id = $3`,
		t.ID, customerID, int64(product))
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("wishlist item")
	}
	return err
}
