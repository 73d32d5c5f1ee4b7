package store

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

const termColumns = `id, taxonomy, name, slug, description, parent_id, version`

func scanTerm(row pgx.Row) (*schema.Term, error) {
	var t schema.Term
	if err := row.Scan(&t.ID, &t.Taxonomy, &t.Name, &t.Slug, &t.Description, &t.Parent, &t.Version); err != nil {
		return nil, err
	}
	return &t, nil
}

// Term returns one term of the tenant.
func (tx *Tx) Term(ctx context.Context, t *schema.Tenant, id schema.TermID) (*schema.Term, error) {
	term, err := scanTerm(tx.pg.QueryRow(ctx, `SELECT `+termColumns+` FROM terms WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("term")
	}
	return term, err
}

// TermByName returns the term of the taxonomy with the name (compared case-insensitively, as
// WordPress's term_exists does) under parent, or nil.
func (tx *Tx) TermByName(ctx context.Context, t *schema.Tenant, taxonomy, name string, parent schema.TermID) (*schema.Term, error) {
	term, err := scanTerm(tx.pg.QueryRow(ctx, `SELECT `+termColumns+` FROM terms
		WHERE tenant_id = $1 AND taxonomy = $2 AND lower(name) = lower($3) AND parent_id = $4 LIMIT 1`, t.ID, taxonomy, name, int64(parent)))
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return term, err
}

// TermSlugTaken reports whether another term of the taxonomy holds the slug.
func (tx *Tx) TermSlugTaken(ctx context.Context, t *schema.Tenant, taxonomy, slug string, exclude schema.TermID) (bool, error) {
	var n int
	err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM terms WHERE tenant_id = $1 AND taxonomy = $2 AND slug = $3 AND id <> $4`,
		t.ID, taxonomy, slug, int64(exclude)).Scan(&n)
	return n > 0, err
}

// UniqueTermSlug returns slug, or slug-2, slug-3… when another term of the taxonomy holds it.
func (tx *Tx) UniqueTermSlug(ctx context.Context, t *schema.Tenant, taxonomy, slug string, exclude schema.TermID) (string, error) {
	return tx.freeSlug(ctx, `SELECT slug FROM terms WHERE tenant_id = $1 AND taxonomy = $2 AND id <> $3 AND (slug = $4 OR slug LIKE $5)`,
		slug, t.ID, taxonomy, int64(exclude))
}

func (tx *Tx) saveTerm(ctx context.Context, t *schema.Tenant, old, term *schema.Term) error {
	if (old != nil && old.Taxonomy == schema.TaxNavMenu) || (term != nil && term.Taxonomy == schema.TaxNavMenu) {
		return nil // menus are not replicated (menus.go)
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var oldVis, newVis []schema.Visibility
	if old != nil {
		oldVis = []schema.Visibility{schema.Pub}
	}
	if term != nil {
		newVis = []schema.Visibility{schema.Pub}
	}
	id := old
	if term != nil {
		id = term
	}
	return tx.writeEntity(l, schema.KindTerm, schema.IDString(id.ID), oldVis, newVis,
		func(v int64) {
			if term != nil {
				term.Version = v
			}
		}, func(schema.Visibility) any { return term })
}

// CreateTerm inserts a term, allocating its id from the tenant's term id space.
func (tx *Tx) CreateTerm(ctx context.Context, t *schema.Tenant, term *schema.Term) error {
	if err := schema.ValidateTerm(term); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "term", 1)
	if err != nil {
		return err
	}
	term.ID = schema.TermID(id)
	if err := tx.saveTerm(ctx, t, nil, term); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO terms (tenant_id, `+termColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.ID, int64(term.ID), term.Taxonomy, term.Name, term.Slug, term.Description, int64(term.Parent), term.Version)
	return mapError(err)
}

// UpdateTerm writes term over old.
func (tx *Tx) UpdateTerm(ctx context.Context, t *schema.Tenant, old, term *schema.Term) error {
	term.ID, term.Taxonomy = old.ID, old.Taxonomy
	if err := schema.ValidateTerm(term); err != nil {
		return err
	}
	if err := tx.saveTerm(ctx, t, old, term); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE terms SET name = $3, slug = $4, description = $5, parent_id = $6, version = $7
		WHERE tenant_id = $1 AND id = $2`, t.ID, int64(term.ID), term.Name, term.Slug, term.Description, int64(term.Parent), term.Version)
	return mapError(err)
}

// DeleteTerm deletes a term as WordPress does: its child categories move up to its parent, and
// the posts carrying it lose it (each such post is a replicated change of this transaction).
func (tx *Tx) DeleteTerm(ctx context.Context, t *schema.Tenant, term *schema.Term) error {
	children, err := appendRows(ctx, tx.pg, nil, `SELECT `+termColumns+` FROM terms
		WHERE tenant_id = $1 AND parent_id = `+strconv.FormatInt(int64(term.ID), 10), scanTerm, t.ID)
	if err != nil {
		return err
	}
	for _, c := range children {
		moved := *c
		moved.Parent = term.Parent
		if err := tx.UpdateTerm(ctx, t, c, &moved); err != nil {
			return err
		}
	}
	col := "categories"
	if term.Taxonomy == schema.TaxTag {
		col = "tags"
	}
	posts, err := appendRows(ctx, tx.pg, nil, `SELECT `+postColumns+` FROM posts
		WHERE tenant_id = $1 AND `+strconv.FormatInt(int64(term.ID), 10)+` = ANY(`+col+`)`, scanPost, t.ID)
	if err != nil {
		return err
	}
	for _, old := range posts {
		p := *old
		p.Categories, p.Tags = without(old.Categories, term.ID), without(old.Tags, term.ID)
		if err := tx.UpdatePost(ctx, t, old, &p); err != nil {
			return err
		}
	}
	if err := tx.saveTerm(ctx, t, term, nil); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM terms WHERE tenant_id = $1 AND id = $2`, t.ID, int64(term.ID))
	return mapError(err)
}

func without(ids []schema.TermID, id schema.TermID) []schema.TermID {
	out := make([]schema.TermID, 0, len(ids))
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// snapshotTerms emits the terms of a tenant for a snapshot.
func (tx *Tx) snapshotTerms(ctx context.Context, tenantID string, emit emitFunc) error {
	return eachRow(ctx, tx.pg, `SELECT `+termColumns+` FROM terms WHERE tenant_id = $1 AND taxonomy <> 'nav_menu' ORDER BY id`, func(row pgx.Row) error {
		term, err := scanTerm(row)
		if err != nil {
			return err
		}
		return emit(schema.KindTerm, schema.IDString(term.ID), schema.Pub, term, term.Version)
	}, tenantID)
}
