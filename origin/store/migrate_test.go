package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema/migrations"
)

// openEmpty opens a store on a fresh, unmigrated database.
func openEmpty(t *testing.T) (*store.DB, string) {
	t.Helper()
	dsn := storetest.NewDatabase(t)
	db, err := store.Open(context.Background(), dsn, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, dsn
}

// referenceSchema is the schema of a database migrated once, without faults.
func referenceSchema(t *testing.T) string {
	t.Helper()
	db, dsn := openEmpty(t)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return storetest.Schema(t, dsn)
}

func appliedVersions(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	v, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func allVersions(t *testing.T) []string {
	files, err := migrations.Files()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Version)
	}
	return out
}

// TestMigrationInterruptedHalfWay stops migrations right after a statement, as a crash or a lost
// connection would, and runs Migrate again: the interrupted file runs again from its start (its
// version was not recorded) and the database ends up exactly as one migrated without faults.
// The interruptions follow one another on one database, each rerun getting further.
func TestMigrationInterruptedHalfWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := referenceSchema(t)
	files, err := migrations.Files()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, f := range files {
		count[f.Version] = len(f.Statements)
	}
	db, dsn := openEmpty(t)
	for _, at := range []struct {
		version string
		stmt    int // -1: the file's last statement (all done, version not yet recorded)
	}{
		{"0001_backbone", 3},
		{"0002_commerce", 0},
		{"0002_commerce", 12},
		{"0003_checkout", 2},
		{"0005_postpurchase", 1},
		{"0007_checkout_contention", 0}, // the old foreign key dropped, the new one not made
		{"0007_checkout_contention", 2}, // the new foreign key made, fillfactor not set
		{"0008_cms_terms_users", 4},
		{"0017_bundles", -1},
		{"0019_subscriptions", 3},
	} {
		stmt := at.stmt
		if stmt < 0 {
			stmt = count[at.version] - 1
		}
		if stmt >= count[at.version] {
			t.Fatalf("%s has %d statements, none at %d", at.version, count[at.version], stmt)
		}
		err := db.MigrateInterrupted(ctx, at.version, stmt)
		if !errors.Is(err, store.ErrInjected) {
			t.Fatalf("interrupted after %s statement %d: %v", at.version, stmt, err)
		}
		for _, v := range appliedVersions(t, dsn) {
			if v >= at.version {
				t.Fatalf("interrupted after %s statement %d, yet %s is recorded as applied", at.version, stmt, v)
			}
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrating again after interruptions: %v", err)
	}
	if got := appliedVersions(t, dsn); strings.Join(got, " ") != strings.Join(allVersions(t), " ") {
		t.Fatalf("applied %v", got)
	}
	if got := storetest.Schema(t, dsn); got != want {
		t.Fatalf("schema after interrupted migrations differs from a clean one:\n%s", diffLines(want, got))
	}
}

// TestMigrationsAppliedTwice runs every migration a second time on a migrated database that
// holds data (schema_migrations emptied, as if no file had been recorded): each statement is
// idempotent, so the second run succeeds, changes no schema and keeps the data.
func TestMigrationsAppliedTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, dsn := storetest.Open(t, store.Config{})
	storetest.Tenant(t, db, "twice")
	want := storetest.Schema(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if got := storetest.Schema(t, dsn); got != want {
		t.Fatalf("the second run changed the schema:\n%s", diffLines(want, got))
	}
	if got := appliedVersions(t, dsn); len(got) != len(allVersions(t)) {
		t.Fatalf("applied %v", got)
	}
	if _, err := db.TenantBySlug(ctx, "twice"); err != nil {
		t.Fatalf("the tenant written before the second run: %v", err)
	}
}

// TestConcurrentMigrators starts several migrators on one fresh database at once, each with its
// own pool (as origins starting together): all succeed and the schema is the clean one. Without
// the lease, concurrent CREATE … IF NOT EXISTS collide in PostgreSQL's catalog (measured: 9 of
// 12 migrators failed with 23505 on pg_type_typname_nsp_index).
func TestConcurrentMigrators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := referenceSchema(t)
	dsn := storetest.NewDatabase(t)
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		db, err := store.Open(ctx, dsn, store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		wg.Go(func() { errs[i] = db.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrator %d: %v", i, err)
		}
	}
	if got := storetest.Schema(t, dsn); got != want {
		t.Fatalf("schema after concurrent migrators:\n%s", diffLines(want, got))
	}
}

// TestNamedConstraintsExist checks that every constraint the store refers to by name (its
// unique-violation messages) exists after migrating, under that name.
func TestNamedConstraintsExist(t *testing.T) {
	t.Parallel()
	_, dsn := storetest.Open(t, store.Config{})
	schema := storetest.Schema(t, dsn)
	for _, name := range store.UniqueConstraintNames() {
		if !strings.Contains(schema, "."+name+" ") {
			t.Errorf("constraint %s does not exist", name)
		}
	}
}

// diffLines lists the lines only one of two texts has.
func diffLines(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.SplitSeq(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l := range strings.SplitSeq(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for l := range strings.SplitSeq(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
