package migrations

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only comments", "-- a; b\n/* c; d */\n ; ;", nil},
		{"two", "SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"no final semicolon", "SELECT 1;\nSELECT 2\n", []string{"SELECT 1", "SELECT 2"}},
		{"semicolon in string", "INSERT INTO t VALUES ('a;b'); SELECT 1", []string{"INSERT INTO t VALUES ('a;b')", "SELECT 1"}},
		{"doubled quote", "SELECT 'it''s; here'; SELECT 2", []string{"SELECT 'it''s; here'", "SELECT 2"}},
		{"escape string", `SELECT E'a\';b'; SELECT 2`, []string{`SELECT E'a\';b'`, "SELECT 2"}},
		{"backslash in standard string", `SELECT 'a\'; SELECT 2`, []string{`SELECT 'a\'`, "SELECT 2"}},
		{"quoted identifier", `SELECT 1 AS "a;""b"; SELECT 2`, []string{`SELECT 1 AS "a;""b"`, "SELECT 2"}},
		{"line comment", "SELECT 1 -- not; here\n; SELECT 2", []string{"SELECT 1 -- not; here", "SELECT 2"}},
		{"nested block comment", "SELECT /* a /* b; */ c; */ 1; SELECT 2", []string{"SELECT /* a /* b; */ c; */ 1", "SELECT 2"}},
		{"dollar body", "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql; SELECT 2",
			[]string{"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql", "SELECT 2"}},
		{"tagged dollar body", "DO $x$ BEGIN PERFORM 1; $y$; END $x$; SELECT 2", []string{"DO $x$ BEGIN PERFORM 1; $y$; END $x$", "SELECT 2"}},
		{"parameters are not dollar quotes", "SELECT $1; SELECT $2", []string{"SELECT $1", "SELECT $2"}},
		{"dollar inside identifier", "SELECT a$b; SELECT 2", []string{"SELECT a$b", "SELECT 2"}},
		{"leading comment kept", "-- why\nCREATE TABLE t (a INT);", []string{"-- why\nCREATE TABLE t (a INT)"}},
		{"unterminated string runs to the end", "SELECT 'a; SELECT 2", []string{"SELECT 'a; SELECT 2"}},
		{"unterminated comment", "SELECT 1; /* a; b", []string{"SELECT 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Split(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzSplit checks that Split never panics and that its statements are fixed points: a
// statement split again is itself, whole (it holds no statement-ending semicolon).
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"SELECT 1; SELECT 2", "SELECT 'a;b'", "$$;$$;", "$a$ $b$ ; $a$", "/* /* */ ; */", "E'\\';'", `"a;"";"`, "-- x\n;", "$1;$"} {
		f.Add(s)
	}
	files, err := Files()
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		f.Add(strings.Join(file.Statements, ";\n"))
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, s := range Split(in) {
			if s == "" {
				t.Fatalf("Split(%q) returned an empty statement", in)
			}
			if again := Split(s); len(again) != 1 || again[0] != s {
				t.Fatalf("Split(%q) gave %q, which splits again into %q", in, s, again)
			}
		}
	})
}

// TestMigrationsAreIdempotent lints every statement for the forms a re-run needs: a file that
// failed half-way runs again from its start (see the package doc). The store's tests apply
// every file twice and interrupt files half-way on a real database.
func TestMigrationsAreIdempotent(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var (
		create    = regexp.MustCompile(`(?i)^CREATE\s+(UNIQUE\s+)?(TABLE|INDEX)\s+`)
		createOK  = regexp.MustCompile(`(?i)^CREATE\s+(UNIQUE\s+)?(TABLE|INDEX)\s+IF\s+NOT\s+EXISTS\s`)
		addColumn = regexp.MustCompile(`(?i)\bADD\s+COLUMN\s+`)
		addColOK  = regexp.MustCompile(`(?i)\bADD\s+COLUMN\s+IF\s+NOT\s+EXISTS\s`)
		drop      = regexp.MustCompile(`(?i)\bDROP\s+(TABLE|INDEX|COLUMN|CONSTRAINT)\s+`)
		dropOK    = regexp.MustCompile(`(?i)\bDROP\s+(TABLE|INDEX|COLUMN|CONSTRAINT)\s+IF\s+EXISTS\s`)
		addCons   = regexp.MustCompile(`(?i)\bADD\s+CONSTRAINT\s+(\w+)`)
		dropCons  = regexp.MustCompile(`(?i)\bDROP\s+CONSTRAINT\s+IF\s+EXISTS\s+(\w+)`)
		named     = regexp.MustCompile(`(?i)\bCONSTRAINT\s+(\w+)`)
		rename    = regexp.MustCompile(`(?i)\bRENAME\b`)
		dml       = regexp.MustCompile(`(?i)^(INSERT|UPDATE|DELETE)\b`)
	)
	declared := map[string]bool{} // constraints created by name so far
	for _, f := range files {
		droppedHere, addedHere := map[string]bool{}, map[string]bool{}
		for _, s := range f.Statements {
			if m := addCons.FindStringSubmatch(stripComments(s)); m != nil {
				addedHere[m[1]] = true
			}
		}
		for i, s := range f.Statements {
			code := stripComments(s)
			where := fmt.Sprintf("%s statement %d", f.Version, i+1)
			if create.MatchString(code) && !createOK.MatchString(code) {
				t.Errorf("%s: CREATE without IF NOT EXISTS: %.80s", where, code)
			}
			if addColumn.MatchString(code) && !addColOK.MatchString(code) {
				t.Errorf("%s: ADD COLUMN without IF NOT EXISTS: %.80s", where, code)
			}
			if drop.MatchString(code) && !dropOK.MatchString(code) {
				t.Errorf("%s: DROP without IF EXISTS: %.80s", where, code)
			}
			if rename.MatchString(code) {
				t.Errorf("%s: RENAME is not idempotent; create the new name and drop the old one instead: %.80s", where, code)
			}
			if dml.MatchString(code) && !strings.Contains(strings.ToUpper(code), "ON CONFLICT") {
				t.Errorf("%s: a data change must be idempotent (INSERT … ON CONFLICT): %.80s", where, code)
			}
			if m := dropCons.FindStringSubmatch(code); m != nil {
				if !declared[m[1]] && !addedHere[m[1]] {
					t.Errorf("%s: drops constraint %s, which no earlier statement names explicitly (generated names differ between PostgreSQL and CockroachDB)", where, m[1])
				}
				droppedHere[m[1]] = true
			}
			if m := addCons.FindStringSubmatch(code); m != nil && !droppedHere[m[1]] {
				t.Errorf("%s: ADD CONSTRAINT %s must follow DROP CONSTRAINT IF EXISTS %s in the same file (PostgreSQL has no ADD CONSTRAINT IF NOT EXISTS)", where, m[1], m[1])
			}
			for _, m := range named.FindAllStringSubmatch(code, -1) {
				declared[m[1]] = true
			}
		}
	}
}

// stripComments removes -- comments from a statement (the lint reads code only).
func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}
