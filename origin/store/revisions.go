package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Revisions and autosaves of CMS records (schema/revisions.go): rows of post_revisions, read and
// written only here and only by the origin. They are never replicated; the record they copy
// carries their count and the latest one's id, which RevisionStats computes for the writer to
// store with the record in the same transaction.
//
// Every write of a record's revisions first locks the record's row (LockPost), so that writers
// of one record serialize: concurrent updates each see the revision the other made, and an
// author never gets two autosaves of one record. A loser of that race is a serialization
// failure, retried as a whole transaction.

const revisionColumns = `id, parent_id, autosave, author_id, title, content, excerpt, meta, date_gmt, modified_gmt`

// revisionOrder is WordPress's order of revisions: newest first, by date then id.
const revisionOrder = ` ORDER BY date_gmt DESC, id DESC`

func scanRevision(row pgx.Row) (*schema.Post, error) {
	var r schema.Post
	var autosave bool
	var meta []byte
	if err := row.Scan(&r.ID, &r.Parent, &autosave, &r.Author, &r.Title, &r.Content, &r.Excerpt, &meta, &r.DateGMT, &r.ModifiedGMT); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(meta, &r.Meta); err != nil {
		return nil, err
	}
	r.Type, r.Status, r.Slug = schema.RevisionType, schema.StatusInherit, schema.RevisionSlug(r.Parent, autosave)
	r.DateGMT, r.ModifiedGMT = r.DateGMT.UTC(), r.ModifiedGMT.UTC()
	return &r, nil
}

// LockPost locks a record's row until the transaction ends (see the note above). A missing
// record is CodeNotFound.
func (tx *Tx) LockPost(ctx context.Context, t *schema.Tenant, id schema.PostID) error {
	var one int
	err := tx.pg.QueryRow(ctx, `SELECT 1 FROM posts WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, t.ID, int64(id)).Scan(&one)
	if err == pgx.ErrNoRows {
		return notFound("post")
	}
	return err
}

// Revisions returns the revisions and autosaves of a record, newest first.
func (tx *Tx) Revisions(ctx context.Context, t *schema.Tenant, parent schema.PostID) ([]*schema.Post, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+revisionColumns+` FROM post_revisions WHERE tenant_id = $1 AND parent_id = $2`+revisionOrder,
		scanRevision, t.ID, int64(parent))
}

// Revision returns one revision or autosave by id.
func (tx *Tx) Revision(ctx context.Context, t *schema.Tenant, id schema.PostID) (*schema.Post, error) {
	r, err := scanRevision(tx.pg.QueryRow(ctx, `SELECT `+revisionColumns+` FROM post_revisions WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("revision")
	}
	return r, err
}

// LatestRevision returns a record's newest revision that is not an autosave, or nil when it has
// none (the one an update compares itself with).
func (tx *Tx) LatestRevision(ctx context.Context, t *schema.Tenant, parent schema.PostID) (*schema.Post, error) {
	list, err := appendRows(ctx, tx.pg, nil, `SELECT `+revisionColumns+` FROM post_revisions
		WHERE tenant_id = $1 AND parent_id = $2 AND NOT autosave`+revisionOrder+` LIMIT 1`, scanRevision, t.ID, int64(parent))
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return list[0], nil
}

// Autosave returns the newest autosave of a record by author (any author when author is 0), or
// nil when there is none.
func (tx *Tx) Autosave(ctx context.Context, t *schema.Tenant, parent schema.PostID, author schema.UserID) (*schema.Post, error) {
	list, err := appendRows(ctx, tx.pg, nil, `SELECT `+revisionColumns+` FROM post_revisions
		WHERE tenant_id = $1 AND parent_id = $2 AND autosave AND ($3::INT8 = 0 OR author_id = $3::INT8)`+revisionOrder+` LIMIT 1`,
		scanRevision, t.ID, int64(parent), int64(author))
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return list[0], nil
}

// CreateRevision stores a new revision or autosave (schema.NewRevision), allocating its id from
// the tenant's post id space. The caller holds the record's lock.
func (tx *Tx) CreateRevision(ctx context.Context, t *schema.Tenant, r *schema.Post) error {
	r.Normalize()
	if err := schema.ValidateRevision(r); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "post", 1)
	if err != nil {
		return err
	}
	r.ID = schema.PostID(id)
	_, err = tx.pg.Exec(ctx, `INSERT INTO post_revisions (tenant_id, `+revisionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, int64(r.ID), int64(r.Parent), r.IsAutosave(), int64(r.Author), r.Title, r.Content, r.Excerpt, jsonb(r.Meta), r.DateGMT, r.ModifiedGMT)
	return err
}

// UpdateRevision rewrites a stored autosave (its author, texts, meta and dates). The caller
// holds the record's lock.
func (tx *Tx) UpdateRevision(ctx context.Context, t *schema.Tenant, r *schema.Post) error {
	r.Normalize()
	if err := schema.ValidateRevision(r); err != nil {
		return err
	}
	tag, err := tx.pg.Exec(ctx, `UPDATE post_revisions SET author_id = $3, title = $4, content = $5, excerpt = $6, meta = $7,
		date_gmt = $8, modified_gmt = $9 WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(r.ID), int64(r.Author), r.Title, r.Content, r.Excerpt, jsonb(r.Meta), r.DateGMT, r.ModifiedGMT)
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("revision")
	}
	return err
}

// DeleteRevision deletes a revision or autosave. The caller holds the record's lock.
func (tx *Tx) DeleteRevision(ctx context.Context, t *schema.Tenant, id schema.PostID) error {
	tag, err := tx.pg.Exec(ctx, `DELETE FROM post_revisions WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("revision")
	}
	return err
}

// RevisionStats sets p.RevisionCount and p.LatestRevision from its stored revisions and
// autosaves (the newest by date, then id, as WordPress's wp_get_latest_revision_id_and_total_count
// picks it), and reports whether they changed.
func (tx *Tx) RevisionStats(ctx context.Context, t *schema.Tenant, p *schema.Post) (bool, error) {
	var count, latest int64
	err := tx.pg.QueryRow(ctx, `SELECT count(*) OVER (), id FROM post_revisions WHERE tenant_id = $1 AND parent_id = $2`+revisionOrder+` LIMIT 1`,
		t.ID, int64(p.ID)).Scan(&count, &latest)
	if err != nil && err != pgx.ErrNoRows {
		return false, err
	}
	changed := p.RevisionCount != int(count) || p.LatestRevision != schema.PostID(latest)
	p.RevisionCount, p.LatestRevision = int(count), schema.PostID(latest)
	return changed, nil
}
