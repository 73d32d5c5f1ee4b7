package store

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"vitrine/schema/migrations"
)

// Migrate applies the embedded migrations that the database has not seen, each in its own
// transaction, and makes sure the cluster epoch and the platform log exist. It is safe to run
// concurrently from several processes: the schema_migrations insert serialises them.
func (db *DB) Migrate(ctx context.Context) error {
	if _, err := db.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return err
		}
		version := strings.TrimSuffix(name, ".sql")
		err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1) ON CONFLICT (version) DO NOTHING`, version)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return nil // applied before
			}
			_, err = tx.Exec(ctx, string(sql))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
	}
	// The epoch names this database for the replication stream. Written once; a database that is
	// reset and migrated again gets a new one.
	if _, err := db.pool.Exec(ctx, `INSERT INTO cluster_meta (key, value) VALUES ('epoch', $1) ON CONFLICT (key) DO NOTHING`,
		NewUUID()); err != nil {
		return fmt.Errorf("store: write epoch: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO log_versions (log_id, version) VALUES ($1, 0) ON CONFLICT (log_id) DO NOTHING`,
		PlatformLogID); err != nil {
		return fmt.Errorf("store: platform log: %w", err)
	}
	return nil
}

// Epoch returns the cluster epoch written by Migrate.
func (db *DB) Epoch(ctx context.Context) (string, error) {
	var e string
	err := db.pool.QueryRow(ctx, `SELECT value FROM cluster_meta WHERE key = 'epoch'`).Scan(&e)
	if err == pgx.ErrNoRows {
		return "", fmt.Errorf("store: the database has no epoch: run vitrine migrate")
	}
	if err != nil {
		return "", mapError(err)
	}
	return e, nil
}

// EnsureDatabase creates the database named in dsn when the server does not have it yet, so that
// `vitrine dev` and `vitrine migrate` work on a fresh server. It connects to the server's
// "postgres" database to do so.
func EnsureDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("store: parse database URL: %w", err)
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return nil
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("store: connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("store: look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("store: create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops the database named in dsn, closing any connection still open to it (WITH
// FORCE, PostgreSQL 13+). It connects to the server's "postgres" database to do so. Dropping a
// database that does not exist is not an error. The bench suite uses it for the databases it
// creates.
func DropDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("store: parse database URL: %w", err)
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return fmt.Errorf("store: refusing to drop database %q", name)
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("store: connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("store: drop database %s: %w", name, err)
	}
	return nil
}
