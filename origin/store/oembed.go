package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// The oEmbed proxy's cache (migration 0020): other sites' oEmbed answers by a hash of the
// proxied request, shared by every origin, valid until their expiry.

// OEmbedCached returns the cached answer under key, if one has not expired at now.
func (db *DB) OEmbedCached(ctx context.Context, t *schema.Tenant, key string, now time.Time) ([]byte, bool, error) {
	var body []byte
	err := db.pool.QueryRow(ctx, `SELECT body FROM oembed_cache WHERE tenant_id = $1 AND key = $2 AND expires_at > $3`,
		t.ID, key, now).Scan(&body)
	if err == pgx.ErrNoRows {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return body, true, nil
}

// PutOEmbed stores an answer under key until expires, replacing any other, and deletes the
// tenant's expired answers.
func (db *DB) PutOEmbed(ctx context.Context, t *schema.Tenant, key, url string, body []byte, now, expires time.Time) error {
	return db.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.pg.Exec(ctx, `DELETE FROM oembed_cache WHERE tenant_id = $1 AND expires_at <= $2`, t.ID, now); err != nil {
			return err
		}
		_, err := tx.pg.Exec(ctx, `INSERT INTO oembed_cache (tenant_id, key, url, body, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (tenant_id, key) DO UPDATE SET url = excluded.url, body = excluded.body,
				created_at = excluded.created_at, expires_at = excluded.expires_at`,
			t.ID, key, url, body, now, expires)
		return err
	})
}
