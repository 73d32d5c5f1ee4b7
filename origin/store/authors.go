package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Authors: every write of a staff user replicates its public profile (schema.Author, kind
// author, pub state only) in the same transaction, and snapshots carry them, so edges embed a
// post's author without the users table.

// saveAuthor records the change of a user's public profile: old nil for a new user, u nil for a
// deleted one. It sets u.Version to the change's version; the caller writes the row after.
func (tx *Tx) saveAuthor(ctx context.Context, t *schema.Tenant, existed bool, id schema.UserID, u *schema.User) error {
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var oldVis, newVis []schema.Visibility
	if existed {
		oldVis = []schema.Visibility{schema.Pub}
	}
	if u != nil {
		newVis = []schema.Visibility{schema.Pub}
	}
	return tx.writeEntity(l, schema.KindAuthor, schema.IDString(id), oldVis, newVis,
		func(v int64) {
			if u != nil {
				u.Version = v
			}
		}, func(schema.Visibility) any { return schema.AuthorOf(u) })
}

// snapshotAuthors emits the public profiles of a tenant's users for a snapshot.
func (tx *Tx) snapshotAuthors(ctx context.Context, tenantID string, emit emitFunc) error {
	return eachRow(ctx, tx.pg, `SELECT `+userColumns+` FROM users WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		u, err := scanUser(row)
		if err != nil {
			return err
		}
		return emit(schema.KindAuthor, schema.IDString(u.ID), schema.Pub, schema.AuthorOf(u), u.Version)
	}, tenantID)
}
