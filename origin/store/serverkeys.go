package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// ServerKey is a store's server key (esk_…) as stored: never its plaintext, only the keyed hash
// it is found by and the last four characters shown in lists.
type ServerKey struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Hash       []byte         `json:"-"`
	Last4      string         `json:"-"`
	Scopes     []schema.Scope `json:"scopes"`
	ExpiresAt  time.Time      `json:"expires_at"`
	RevokedAt  *time.Time     `json:"revoked_at"`
	RolledTo   *string        `json:"rolled_to"`
	CreatedAt  time.Time      `json:"created_at"`
	LastUsedAt *time.Time     `json:"last_used_at"`
}

const serverKeyColumns = `id::text, name, key_hash, last4, scopes, expires_at, revoked_at, rolled_to::text, created_at, last_used_at`

func scanServerKey(row pgx.Row) (*ServerKey, error) {
	k := &ServerKey{}
	var scopes []string
	if err := row.Scan(&k.ID, &k.Name, &k.Hash, &k.Last4, &scopes, &k.ExpiresAt, &k.RevokedAt, &k.RolledTo, &k.CreatedAt, &k.LastUsedAt); err != nil {
		return nil, err
	}
	for _, s := range scopes {
		k.Scopes = append(k.Scopes, schema.Scope(s))
	}
	return k, nil
}

// CreateServerKey stores a new key (k.Hash, k.Last4, k.Name, k.Scopes, k.ExpiresAt set by the
// caller) and fills in its id and creation time.
func (tx *Tx) CreateServerKey(ctx context.Context, t *schema.Tenant, k *ServerKey) error {
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	k.CreatedAt = tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO server_keys (tenant_id, name, key_hash, last4, scopes, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id::text`,
		t.ID, k.Name, k.Hash, k.Last4, scopes, k.ExpiresAt, k.CreatedAt).Scan(&k.ID)
}

// ServerKeys lists a store's keys, newest first, revoked ones included.
func (tx *Tx) ServerKeys(ctx context.Context, t *schema.Tenant) ([]*ServerKey, error) {
	return appendRows(ctx, tx.pg, []*ServerKey{}, `SELECT `+serverKeyColumns+` FROM server_keys
		WHERE tenant_id = $1 ORDER BY created_at DESC, id`, scanServerKey, t.ID)
}

// ServerKeyByID returns one of a store's keys.
func (tx *Tx) ServerKeyByID(ctx context.Context, t *schema.Tenant, id string, forUpdate bool) (*ServerKey, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("server key")
	}
	q := `SELECT ` + serverKeyColumns + ` FROM server_keys WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	k, err := scanServerKey(tx.pg.QueryRow(ctx, q, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("server key")
	}
	return k, err
}

// RevokeServerKey revokes a key at once (revoking it again keeps the first time).
func (tx *Tx) RevokeServerKey(ctx context.Context, t *schema.Tenant, id string) (*ServerKey, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("server key")
	}
	k, err := scanServerKey(tx.pg.QueryRow(ctx, `UPDATE server_keys SET revoked_at = COALESCE(revoked_at, $3)
		WHERE tenant_id = $1 AND id = $2 RETURNING `+serverKeyColumns, t.ID, id, tx.Now()))
	if err == pgx.ErrNoRows {
		return nil, notFound("server key")
	}
	return k, err
}

// RollServerKey replaces the key id by next (stored as CreateServerKey does, with the old key's
// name and scopes): the old key keeps working until oldUntil (or its own expiry, if sooner) and
// names its successor. A revoked, expired or already rolled key cannot be rolled (409).
func (tx *Tx) RollServerKey(ctx context.Context, t *schema.Tenant, id string, next *ServerKey, oldUntil time.Time) (*ServerKey, error) {
	old, err := tx.ServerKeyByID(ctx, t, id, true)
	if err != nil {
		return nil, err
	}
	switch {
	case old.RevokedAt != nil:
		return nil, &schema.Error{Code: schema.CodeConflict, Message: "the key is revoked; create a new one"}
	case !old.ExpiresAt.After(tx.Now()):
		return nil, &schema.Error{Code: schema.CodeConflict, Message: "the key has expired; create a new one"}
	case old.RolledTo != nil:
		return nil, &schema.Error{Code: schema.CodeConflict, Message: "the key was already rolled to " + *old.RolledTo}
	}
	next.Name, next.Scopes = old.Name, old.Scopes
	if err := tx.CreateServerKey(ctx, t, next); err != nil {
		return nil, err
	}
	until := oldUntil
	if old.ExpiresAt.Before(until) {
		until = old.ExpiresAt
	}
	if until.Before(tx.Now()) {
		until = tx.Now()
	}
	_, err = tx.pg.Exec(ctx, `UPDATE server_keys SET expires_at = $3, rolled_to = $4 WHERE tenant_id = $1 AND id = $2`,
		t.ID, id, until, next.ID)
	return next, err
}

// ServerKeyByHash returns the store's key with this keyed hash, or nil. A key of another store is
// not found here: keys are bound to their store.
func (db *DB) ServerKeyByHash(ctx context.Context, t *schema.Tenant, hash []byte) (*ServerKey, error) {
	k, err := scanServerKey(db.pool.QueryRow(ctx, `SELECT `+serverKeyColumns+` FROM server_keys
		WHERE key_hash = $1 AND tenant_id = $2`, hash, t.ID))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return k, mapError(err)
}

// TouchServerKey records a use of a key: last_used_at moves at most once a minute, so that a
// busy integration does not write on every call.
func (db *DB) TouchServerKey(ctx context.Context, t *schema.Tenant, id string, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE server_keys SET last_used_at = $3
		WHERE tenant_id = $1 AND id = $2 AND (last_used_at IS NULL OR last_used_at < $3::timestamptz - INTERVAL '1 minute')`, t.ID, id, now)
	return mapError(err)
}
