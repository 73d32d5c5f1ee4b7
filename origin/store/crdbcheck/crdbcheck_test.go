package crdbcheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/cockroachdb-parser/pkg/sql/parser"

	"vitrine/schema/migrations"
)

// TestMigrationsParse parses every migration with CockroachDB's parser, whole and statement by
// statement: the whole file must hold as many statements as migrations.Split finds (the
// runner executes Split's pieces one by one), and each piece must be exactly one statement.
func TestMigrationsParse(t *testing.T) {
	files, err := migrations.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Version, func(t *testing.T) {
			whole, err := parser.Parse(strings.Join(f.Statements, ";\n"))
			if err != nil {
				t.Fatalf("CockroachDB does not parse %s: %v", f.Version, err)
			}
			if len(whole) != len(f.Statements) {
				t.Errorf("CockroachDB finds %d statements in %s, migrations.Split %d", len(whole), f.Version, len(f.Statements))
			}
			for i, s := range f.Statements {
				if _, err := parser.ParseOne(s); err != nil {
					t.Errorf("statement %d: %v\n%s", i+1, err, s)
				}
			}
		})
	}
}

// TestRecordedStatementsParse parses every statement the store executed during the test run
// (VITRINE_SQL_RECORD, written by the store when each test's database closes). make test sets
// the variable for the whole suite and runs this test last.
func TestRecordedStatementsParse(t *testing.T) {
	dir := os.Getenv("VITRINE_SQL_RECORD")
	if dir == "" {
		t.Skip("VITRINE_SQL_RECORD is not set: make test records the suite's statements there, then runs this test")
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no statement was recorded in %s", dir)
	}
	sort.Strings(names)
	var failed []string
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sql := string(b)
		stmts, err := parser.Parse(sql)
		switch {
		case err != nil:
			failed = append(failed, err.Error()+"\n"+sql)
		case len(stmts) != 1:
			// Each text is one statement: a transaction's BEGIN too, sent ahead of its first
			// statement with the extended protocol, where a text holds one.
			failed = append(failed, "not one statement\n"+sql)
		}
	}
	t.Logf("%d distinct statements recorded, %d refused", len(names), len(failed))
	for _, f := range failed {
		t.Errorf("CockroachDB's grammar refuses a statement the store executed: %s", f)
	}
}
