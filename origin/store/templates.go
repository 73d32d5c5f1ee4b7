package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Templates and template parts (schema/design.go) are post records named by their theme and
// slug, not by id: WordPress keeps the theme in a taxonomy, this store in the record's design
// (the extra column). These reads find them by that name inside a writer's transaction, so a
// write decides on what the database holds, not on a replica that may lag.

// TemplateRecord returns the record of type typ (schema.TypeTemplate or TypeTemplatePart) of
// the theme with the slug, whatever its status, or nil when there is none.
func (tx *Tx) TemplateRecord(ctx context.Context, t *schema.Tenant, typ, theme, slug string) (*schema.Post, error) {
	p, err := scanPost(tx.pg.QueryRow(ctx, `SELECT `+postColumns+` FROM posts
		WHERE tenant_id = $1 AND type = $2 AND slug = $3 AND extra->'design'->>'theme' = $4 ORDER BY id LIMIT 1`,
		t.ID, typ, slug, theme))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return p, err
}

// UniqueTemplateSlug returns slug, or slug-2, slug-3…: the first that no other record of the
// type and theme (other than excludeID) holds, as WordPress makes template slugs unique within
// their theme. A trashed record holds its slug only with the "__trashed" suffix.
func (tx *Tx) UniqueTemplateSlug(ctx context.Context, t *schema.Tenant, typ, theme, slug string, excludeID schema.PostID) (string, error) {
	return tx.freeSlug(ctx, `SELECT slug FROM posts WHERE tenant_id = $1 AND type = $2 AND extra->'design'->>'theme' = $3
		AND id <> $4 AND (slug = $5 OR slug LIKE $6)`, slug, t.ID, typ, theme, int64(excludeID))
}
