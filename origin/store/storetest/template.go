package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/store"
	"vitrine/schema/migrations"
)

// templateLock is the advisory lock key under which a test binary creates the migrated template
// (every package's tests may start at once).
const templateLock = 0x76697472 // "vitr"

// migratedTemplate returns the name of a database holding every embedded migration, created
// on the server the first time a test asks for it, and named by a hash of the migrations so
// that a changed set gets its own. Copying it (CREATE DATABASE ... TEMPLATE) takes ~30 ms where
// migrating an empty database takes ~0.6 s, most of it a WAL flush per DDL statement: the
// suite creates hundreds of databases.
//
// The template is made under another name and renamed when complete, so a test binary that
// died half-way leaves nothing usable behind. It has no epoch: each copy's Migrate writes its
// own. Nothing connects to it but its maker (a template must have no session while it is
// copied). Templates of other migration sets are dropped when a new one is made.
func migratedTemplate(t testing.TB) string {
	t.Helper()
	files, err := migrations.Files()
	if err != nil {
		t.Fatalf("storetest: migrations: %v", err)
	}
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f.Version))
		for _, s := range f.Statements {
			h.Write([]byte{0})
			h.Write([]byte(s))
		}
		h.Write([]byte{1})
	}
	name := "vitrine_template_" + hex.EncodeToString(h.Sum(nil)[:8])

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("storetest: connect to %s (set VITRINE_TEST_DATABASE_URL): %v", ServerURL(), err)
	}
	defer admin.Close(ctx)
	exists := func() bool {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
			t.Fatalf("storetest: look for the template: %v", err)
		}
		return n > 0
	}
	if exists() {
		return name
	}
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		t.Fatalf("storetest: template lock: %v", err)
	}
	defer admin.Exec(ctx, `SELECT pg_advisory_unlock($1)`, templateLock)
	if exists() {
		return name // made by another test binary while this one waited
	}
	building := name + "_building"
	for _, q := range []string{"DROP DATABASE IF EXISTS " + building + " WITH (FORCE)", "CREATE DATABASE " + building} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("storetest: make the template: %v", err)
		}
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + building
	u.RawQuery = "" // not recorded for crdbcheck: it parses the migration files themselves
	db, err := store.Open(ctx, u.String(), store.Config{})
	if err != nil {
		t.Fatalf("storetest: make the template: %v", err)
	}
	err = db.Migrate(ctx)
	db.Close()
	if err == nil {
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, u.String()); err == nil {
			_, err = conn.Exec(ctx, `DELETE FROM cluster_meta WHERE key = 'epoch'`)
			conn.Close(ctx)
		}
	}
	if err != nil {
		t.Fatalf("storetest: make the template: %v", err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		t.Fatalf("storetest: make the template: %v", err)
	}
	// Templates of other migration sets (an older checkout's) are of no more use here. A
	// template being copied right now is left for the next time.
	rows, err := admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'vitrine\_template\_%' AND datname <> $1`, name)
	if err == nil {
		old, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, o := range old {
			admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{o}.Sanitize())
		}
	}
	return name
}
