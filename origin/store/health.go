package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// ServerFacts are what the site health database test reports about the database server
// (origin/sitehealth).
type ServerFacts struct {
	// Server is the server's version() text (PostgreSQL's or CockroachDB's).
	Server string
	// Migration is the newest migration version applied ("" when none is).
	Migration string
}

// ServerFacts reads the server's version and the newest applied migration, in one round trip.
func (db *DB) ServerFacts(ctx context.Context) (ServerFacts, error) {
	var f ServerFacts
	err := db.pool.QueryRow(ctx, `SELECT version(), COALESCE((SELECT max(version) FROM schema_migrations), '')`).Scan(&f.Server, &f.Migration)
	return f, mapError(err)
}

// LogVersion returns the version of a tenant's log: the newest version a committed write took,
// which replicas reach once the relay has published it.
func (db *DB) LogVersion(ctx context.Context, t *schema.Tenant) (int64, error) {
	var v int64
	err := db.pool.QueryRow(ctx, `SELECT version FROM log_versions WHERE log_id = $1`, t.ID).Scan(&v)
	if err == pgx.ErrNoRows {
		return 0, notFound("log of " + t.Slug)
	}
	return v, mapError(err)
}
