package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"vitrine/schema/migrations"
)

// Migrate applies the embedded migrations that the database has not seen and makes sure the
// cluster epoch and the platform log exist. It works the same on PostgreSQL and CockroachDB:
//
//   - Each statement of a file runs on its own, outside any explicit transaction: CockroachDB
//     refuses, or applies only in part, schema changes mixed with writes in one transaction.
//   - A file's version goes into schema_migrations only after all its statements succeeded, so
//     a file that failed half-way (a crash, a lost connection) runs again from its start at the
//     next Migrate; its statements are idempotent (package migrations says how, tests check).
//   - Concurrent migrators (several origins starting at once) take turns through a lease row in
//     schema_migration_lock rather than an advisory lock, which CockroachDB does not have: the
//     holder renews it while it works; a holder that died loses it when it expires, and whoever
//     takes it over re-runs the interrupted file from its start.
func (db *DB) Migrate(ctx context.Context) error {
	files, err := migrations.Files()
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return db.migrate(ctx, files, migrateOptions{})
}

// migrateOptions adjusts a migration run for tests.
type migrateOptions struct {
	// afterStatement, when set, runs after statement i of file version succeeded; an error it
	// returns stops the run there, as a crash would.
	afterStatement func(version string, i int) error
}

// migrateLease is how long a migrator holds the lock without renewing it; it renews every third
// of it. A migrator that died is waited for at most this long.
const migrateLease = 15 * time.Second

// migrateBootstrap creates the migration bookkeeping tables.
var migrateBootstrap = []string{
	`CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
	`CREATE TABLE IF NOT EXISTS schema_migration_lock (
		name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)`,
}

func (db *DB) migrate(ctx context.Context, files []migrations.File, opt migrateOptions) (err error) {
	for _, q := range migrateBootstrap {
		if err := db.execDDL(ctx, q); err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
	}
	release, err := db.lockMigrations(ctx, migrateLease)
	if err != nil {
		return err
	}
	defer func() {
		if lost := release(); lost != nil && err == nil {
			err = lost
		}
	}()
	applied := map[string]bool{}
	rows, err := db.pool.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for _, v := range versions {
		applied[v] = true
	}
	for _, f := range files {
		if applied[f.Version] {
			continue
		}
		for i, stmt := range f.Statements {
			if _, err := db.pool.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("store: migration %s, statement %d: %w", f.Version, i+1, err)
			}
			if opt.afterStatement != nil {
				if err := opt.afterStatement(f.Version, i); err != nil {
					return fmt.Errorf("store: migration %s, after statement %d: %w", f.Version, i+1, err)
				}
			}
		}
		if _, err := db.pool.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1) ON CONFLICT (version) DO NOTHING`,
			f.Version); err != nil {
			return fmt.Errorf("store: migration %s: record version: %w", f.Version, err)
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

// execDDL runs an idempotent DDL statement that other processes may run at the same moment.
// PostgreSQL's IF NOT EXISTS does not make concurrent creations safe (both pass the check, one
// fails on the catalog's unique index), so such failures are tried again.
func (db *DB) execDDL(ctx context.Context, q string) error {
	for attempt := 0; ; attempt++ {
		_, err := db.pool.Exec(ctx, q)
		var pgErr *pgconn.PgError
		if err == nil || attempt == 10 || !errors.As(err, &pgErr) {
			return err
		}
		switch pgErr.Code {
		case "23505", "42P07", "42710", "40001", "XX000": // unique_violation, duplicate_table, duplicate_object, serialization_failure, "tuple concurrently updated"
		default:
			return err
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(20*time.Millisecond))) + time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// lockMigrations takes the migration lease, waiting while another live migrator holds it, and
// renews it until the returned release is called. release gives the lease back and reports
// whether it was lost meanwhile (renewal failed past its expiry).
func (db *DB) lockMigrations(ctx context.Context, lease time.Duration) (release func() error, err error) {
	holder := NewUUID()
	for {
		var got string
		err := db.pool.QueryRow(ctx, `INSERT INTO schema_migration_lock (name, holder, expires_at) VALUES ('migrate', $1, now() + $2::INTERVAL)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE schema_migration_lock.expires_at < now()
			RETURNING holder`, holder, lease).Scan(&got)
		if err == nil {
			break
		}
		if err != pgx.ErrNoRows && !retryable(err) {
			return nil, fmt.Errorf("store: migrate: take the lock: %w", err)
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(200*time.Millisecond))) + 50*time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	// The renewer exits when release closes stop.
	go func() {
		tick := time.NewTicker(lease / 3)
		defer tick.Stop()
		expires := time.Now().Add(lease)
		for {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			tag, err := db.pool.Exec(context.WithoutCancel(ctx), `UPDATE schema_migration_lock SET expires_at = now() + $2::INTERVAL
				WHERE name = 'migrate' AND holder = $1`, holder, lease)
			switch {
			case err == nil && tag.RowsAffected() == 1:
				expires = time.Now().Add(lease)
			case err == nil || time.Now().After(expires):
				<-stop
				done <- errors.New("store: migrate: lost the migration lock (renewal failed past its expiry); run migrate again")
				return
			}
		}
	}()
	return func() error {
		close(stop)
		lost := <-done
		// A failed release is no error: the lease expires by itself and the next migrator waits.
		db.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM schema_migration_lock WHERE name = 'migrate' AND holder = $1`, holder)
		return lost
	}, nil
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
// FORCE, PostgreSQL 13+; on CockroachDB, CASCADE). It connects to the server's "postgres" database to do so. Dropping a
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
	q := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
	if conn.PgConn().ParameterStatus("crdb_version") != "" {
		// CockroachDB has no WITH (FORCE) (its grammar refuses it); CASCADE drops the tables.
		q = "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE"
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("store: drop database %s: %w", name, err)
	}
	return nil
}
