package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// GlobalStyles returns the global styles record of a theme (schema.TypeGlobalStyles, slug
// schema.GlobalStylesSlug), or nil when the store has none yet. Read in a SERIALIZABLE
// transaction that creates the record when it is missing, it makes concurrent first reads
// create exactly one: of two such transactions, one fails to commit and is retried, and then
// finds the other's record.
func (tx *Tx) GlobalStyles(ctx context.Context, t *schema.Tenant, stylesheet string) (*schema.Post, error) {
	p, err := scanPost(tx.pg.QueryRow(ctx, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 AND type = $2 AND slug = $3
		ORDER BY id LIMIT 1`, t.ID, schema.TypeGlobalStyles, schema.GlobalStylesSlug(stylesheet)))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return p, err
}
