// Package storetest gives tests a fresh, migrated database on the PostgreSQL server named by
// VITRINE_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): a new
// database per call, dropped when the test ends, copied from a template the server keeps
// migrated (one per set of migrations). Only tests import it.
//
// When VITRINE_SQL_RECORD names a directory, the URLs it returns ask the store to record every
// distinct SQL text it executes there (store.RecordSQLParam); make test then parses each one
// with CockroachDB's grammar (origin/store/crdbcheck).
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/store"
	"vitrine/schema"
)

// DefaultURL is the server tests use when VITRINE_TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// ServerURL returns the URL of the test database server.
func ServerURL() string {
	if u := os.Getenv("VITRINE_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates an empty database and returns its URL. It is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "")
}

// NewMigratedDatabase creates a database with every migration applied, as a copy of the server's
// migrated template (template.go), and returns its URL. It has no cluster epoch yet: the
// store's Migrate, which finds every file applied, writes the database's own. It is dropped
// when t ends.
func NewMigratedDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, migratedTemplate(t))
}

// newDatabase creates a database, a copy of template when not "", and returns its URL.
func newDatabase(t testing.TB, template string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("storetest: connect to %s (set VITRINE_TEST_DATABASE_URL): %v", ServerURL(), err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "vitrine_test_" + hex.EncodeToString(b[:])
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := admin.Exec(ctx, create); err != nil {
		admin.Close(ctx)
		t.Fatalf("storetest: create database: %v", err)
	}
	admin.Close(ctx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			t.Logf("storetest: drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("storetest: drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if dir := os.Getenv("VITRINE_SQL_RECORD"); dir != "" {
		q := u.Query()
		q.Set(store.RecordSQLParam, dir)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open returns a migrated store on a fresh database (NewMigratedDatabase).
func Open(t testing.TB, cfg store.Config) (*store.DB, string) {
	t.Helper()
	dsn := NewMigratedDatabase(t)
	db, err := store.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, dsn
}

// Tenant creates an active tenant whose default currency is USD.
func Tenant(t testing.TB, db *store.DB, slug string) *schema.Tenant {
	t.Helper()
	tn := &schema.Tenant{Slug: slug, Name: "Store " + slug, BaseURL: "https://" + slug + ".example.test",
		Timezone: "Europe/Paris", Currencies: []string{"USD"}}
	if err := db.CreateTenant(context.Background(), tn); err != nil {
		t.Fatal(err)
	}
	return tn
}

// ResetDatabase drops and recreates the (empty) database of dsn under the same name, as an
// operator restoring an empty database would, with connections still open to it.
func ResetDatabase(t testing.TB, dsn string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := pgx.Identifier{cfg.Database}.Sanitize()
	for _, q := range []string{"DROP DATABASE " + name + " WITH (FORCE)", "CREATE DATABASE " + name} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// Schema describes the database at dsn as text, for comparing two databases: every column
// (type, nullability, default), constraint (definition), index (definition) and table storage
// parameter of the public schema, sorted. Bookkeeping rows are not included.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b strings.Builder
	for _, q := range []string{
		`SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable || ' default=' || coalesce(column_default, '')
			FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
		`SELECT 'constraint ' || conrelid::regclass::text || '.' || conname || ' ' || pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1`,
		`SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`,
		`SELECT 'storage ' || relname || ' ' || array_to_string(reloptions, ',')
			FROM pg_class WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL ORDER BY 1`,
	} {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
