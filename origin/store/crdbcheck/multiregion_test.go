package crdbcheck

import (
	"os"
	"testing"

	"github.com/cockroachdb/cockroachdb-parser/pkg/sql/parser"
	"github.com/cockroachdb/cockroachdb-parser/pkg/sql/sem/tree"

	"vitrine/schema/migrations"
)

// TestMultiRegionDDL parses deploy/cockroachdb/multi-region.sql with CockroachDB's grammar: it
// holds only database region statements and table localities, every table it names exists in
// schema/migrations and is named once, and the tables the design places are where it says: the
// registry and catalog GLOBAL, a shopper's rows REGIONAL BY ROW, the logs, outboxes and leases
// next to the relay in the primary region.
func TestMultiRegionDDL(t *testing.T) {
	b, err := os.ReadFile("../../../deploy/cockroachdb/multi-region.sql")
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := parser.Parse(string(b))
	if err != nil {
		t.Fatalf("CockroachDB does not parse multi-region.sql: %v", err)
	}

	files, err := migrations.Files()
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for _, f := range files {
		for _, s := range f.Statements {
			st, err := parser.ParseOne(s)
			if err != nil {
				t.Fatalf("%s: %v", f.Version, err)
			}
			if ct, ok := st.AST.(*tree.CreateTable); ok {
				tables[ct.Table.Table()] = true
			}
		}
	}
	if len(tables) < 10 {
		t.Fatalf("found only %d tables in the migrations", len(tables))
	}

	locality := map[string]string{}
	regions := 0
	for _, s := range stmts {
		switch n := s.AST.(type) {
		case *tree.AlterDatabasePrimaryRegion, *tree.AlterDatabaseSurvivalGoal:
		case *tree.AlterDatabaseAddRegion:
			regions++
		case *tree.AlterTableLocality:
			name := n.Name.Object()
			if !tables[name] {
				t.Errorf("multi-region.sql places table %q, which no migration creates", name)
			}
			if _, dup := locality[name]; dup {
				t.Errorf("multi-region.sql places table %q twice", name)
			}
			switch n.Locality.LocalityLevel {
			case tree.LocalityLevelGlobal:
				locality[name] = "global"
			case tree.LocalityLevelRow:
				locality[name] = "row"
				if n.Locality.RegionalByRowColumn != "" {
					t.Errorf("%s: REGIONAL BY ROW on a column of its own: the origin's inserts do not set one", name)
				}
			case tree.LocalityLevelTable:
				locality[name] = "primary"
				if n.Locality.TableRegion != "" {
					t.Errorf("%s: a table homed outside the primary region", name)
				}
			}
		default:
			t.Errorf("unexpected statement in multi-region.sql: %s", s.SQL)
		}
	}
	if regions < 2 {
		t.Errorf("multi-region.sql adds %d regions besides the primary", regions)
	}
	for want, names := range map[string][]string{
		"global":  {"tenants", "tenant_domains", "products", "categories", "currencies", "posts", "terms"},
		"row":     {"carts", "cart_items", "orders", "order_lines", "customers", "customer_addresses", "customer_tokens"},
		"primary": {"log_versions", "repl_outbox", "event_outbox", "relay_leases", "id_alloc", "variants"},
	} {
		for _, name := range names {
			if got := locality[name]; got != want {
				t.Errorf("%s: locality %q, want %q", name, got, want)
			}
		}
	}
}
