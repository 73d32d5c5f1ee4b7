package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Snapshot reads the current state of one log in a single read-only transaction and calls fn with
// one change per entity state, as the writers would have recorded it: each entity's change carries
// the entity's version (a snapshot has no tombstones and no superseded versions). It returns the
// log's version at the snapshot. `vitrine replica rebuild` republishes the stream from it, and
// tests compare replicas with the database through it.
func (db *DB) Snapshot(ctx context.Context, log LogRef, fn func(c schema.Change) error) (int64, error) {
	var version int64
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(pg pgx.Tx) error {
		tx := &Tx{pg: txConn{q: pg}, db: db}
		if err := pg.QueryRow(ctx, `SELECT version FROM log_versions WHERE log_id = $1`, log.ID).Scan(&version); err != nil {
			return err
		}
		emit := func(kind schema.Kind, id string, vis schema.Visibility, v any, entityVersion int64) error {
			c := schema.NewChange(log.Name, kind, id, vis, v)
			c.Version, c.TxnFirst, c.TxnLast = entityVersion, entityVersion, entityVersion
			return fn(c)
		}
		if log.ID == PlatformLogID {
			return eachRow(ctx, pg, `SELECT `+tenantColumns+` FROM tenants ORDER BY slug`, func(row pgx.Row) error {
				t, err := scanTenant(row)
				if err != nil {
					return err
				}
				return emit(schema.KindTenant, t.Slug, schema.Pub, t, t.Version)
			})
		}
		return tx.snapshotTenant(ctx, log.ID, emit)
	})
	if err != nil {
		return 0, mapError(err)
	}
	return version, nil
}

type emitFunc func(kind schema.Kind, id string, vis schema.Visibility, v any, entityVersion int64) error

func (tx *Tx) snapshotTenant(ctx context.Context, tenantID string, emit emitFunc) error {
	t := &schema.Tenant{ID: tenantID}
	productVisByID := map[schema.ProductID][]schema.Visibility{}

	err := eachRow(ctx, tx.pg, `SELECT `+categoryColumns+` FROM categories WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		c, err := scanCategory(row)
		if err != nil {
			return err
		}
		return emit(schema.KindCategory, schema.IDString(c.ID), schema.Pub, c, c.Version)
	}, t.ID)
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx.pg, `SELECT `+currencyColumns+` FROM currencies WHERE tenant_id = $1 ORDER BY code`, func(row pgx.Row) error {
		c, err := scanCurrency(row)
		if err != nil {
			return err
		}
		return emit(schema.KindCurrency, c.Code, schema.Pub, c, c.Version)
	}, t.ID)
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx.pg, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		p, err := scanProduct(row)
		if err != nil {
			return err
		}
		p.Normalize()
		vis := productVis(p)
		productVisByID[p.ID] = vis
		for _, v := range vis {
			if err := emit(schema.KindProduct, schema.IDString(p.ID), v, p, p.Version); err != nil {
				return err
			}
		}
		return nil
	}, t.ID)
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx.pg, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		v, err := scanVariant(row)
		if err != nil {
			return err
		}
		v.Normalize()
		vis, ok := productVisByID[v.ProductID]
		if !ok {
			return fmt.Errorf("store: variant %d of missing product %d", v.ID, v.ProductID)
		}
		for _, vi := range vis {
			if err := emit(schema.KindVariant, schema.IDString(v.ID), vi, &v.Variant, v.Version); err != nil {
				return err
			}
		}
		return nil
	}, t.ID)
	if err != nil {
		return err
	}
	if err := tx.snapshotMerch(ctx, t.ID, emit); err != nil {
		return err
	}
	if err := tx.snapshotTerms(ctx, t.ID, emit); err != nil { // CMS terms (terms.go)
		return err
	}
	if err := tx.snapshotAuthors(ctx, t.ID, emit); err != nil { // authors' public profiles (authors.go)
		return err
	}
	return eachRow(ctx, tx.pg, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		p, err := scanPost(row)
		if err != nil {
			return err
		}
		p.Normalize()
		for _, vis := range PostStates(p) {
			if err := emit(schema.KindPost, schema.IDString(p.ID), vis, PostState(p, vis), p.Version); err != nil {
				return err
			}
		}
		if m := schema.MarkerOf(p); m != nil {
			return emit(schema.KindPostMarker, schema.IDString(p.ID), schema.Pub, m, p.Version)
		}
		return nil
	}, t.ID)
}

// Digest summarises the states of one log as a replica holding the visibilities in vis would hold
// them (schema.Digest).
func (db *DB) Digest(ctx context.Context, log LogRef, vis ...schema.Visibility) (*schema.Digest, error) {
	d := &schema.Digest{}
	_, err := db.Snapshot(ctx, log, func(c schema.Change) error {
		for _, v := range vis {
			if c.Vis == v {
				d.Add(c.Log, c.Kind, c.ID, c.Vis, c.Data)
			}
		}
		return nil
	})
	return d, err
}

// LogBySlug returns the log of a tenant (or the platform log for schema.PlatformLog).
func (db *DB) LogBySlug(ctx context.Context, slug string) (LogRef, error) {
	refs, err := db.Logs(ctx)
	if err != nil {
		return LogRef{}, err
	}
	for _, r := range refs {
		if r.Name == slug {
			return r, nil
		}
	}
	return LogRef{}, notFound("log " + slug)
}
