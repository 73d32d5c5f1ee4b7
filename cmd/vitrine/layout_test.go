package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Imports    []string
	Deps       []string
	GoFiles    []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	listed.once.Do(func() {
		// One go list: its JSON carries every package's transitive (non-test) dependencies.
		listed.out, listed.err = exec.Command("go", "list", "-json", "vitrine/...").Output()
	})
	if listed.err != nil {
		t.Fatalf("go list: %v", listed.err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(listed.out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// listed is go list's output, shared by the layout tests of one run.
var listed struct {
	once sync.Once
	out  []byte
	err  error
}

// under reports whether an import path is root or inside it.
func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// The import directions of ARCHITECTURE.md, checked on the packages' (non-test) dependencies.
func TestImportDirections(t *testing.T) {
	prefix := func(p string) func(string) bool { return func(d string) bool { return strings.HasPrefix(d, p) } }
	exact := func(p string) func(string) bool { return func(d string) bool { return d == p } }
	rules := []struct {
		root   string
		forbid []func(dep string) bool
		why    string
	}{
		{"vitrine/schema", []func(string) bool{prefix("github.com/"), func(d string) bool { return under(d, "vitrine") && !under(d, "vitrine/schema") }},
			"the contract is the standard library only"},
		{"vitrine/sync", []func(string) bool{prefix("github.com/jackc/pgx"), prefix("github.com/valyala/fasthttp"), prefix("vitrine/origin"), prefix("vitrine/edge")},
			"sync talks to NATS and the schema only; the database reaches it through interfaces"},
		{"vitrine/edge", []func(string) bool{prefix("github.com/jackc/pgx"), prefix("vitrine/origin"), prefix("vitrine/sync/relay"), prefix("github.com/nats-io/nats-server")},
			"edges never touch the database, the origin or the relay"},
		{"vitrine/origin", []func(string) bool{exact("vitrine/edge"), prefix("vitrine/sync/relay"), prefix("github.com/nats-io/nats-server")},
			"the origin may use the read engine and pipeline, not the edge server"},
	}
	directRules := []struct {
		root   string
		forbid func(imp string) bool
		why    string
	}{
		{"vitrine/bench", exact("vitrine/origin"), "the bench sets tenants up through the store and schema, never the origin's handlers"},
		{"vitrine/origin", prefix("vitrine/edge/cache"), "the origin caches no rendered bodies"},
	}
	// Capabilities: the packages under origin/ that bind handlers (they import origin/handler).
	// Each depends on origin/handler, origin/store and schema, never on the origin's server
	// package or on a sibling capability.
	capability := map[string]bool{}
	for _, p := range listPackages(t) {
		if under(p.ImportPath, "vitrine/origin") && p.ImportPath != "vitrine/origin" && slices.Contains(p.Imports, "vitrine/origin/handler") {
			capability[p.ImportPath] = true
		}
	}
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, "vitrine/origin") || p.ImportPath == "vitrine/origin" {
			continue
		}
		for _, d := range p.Deps {
			if d == "vitrine/origin" {
				t.Errorf("%s depends on vitrine/origin: packages under origin/ never reach back into the server", p.ImportPath)
			}
			if capability[p.ImportPath] && capability[d] && d != p.ImportPath {
				t.Errorf("%s depends on %s: a capability never depends on a sibling capability", p.ImportPath, d)
			}
		}
	}
	// Test-support packages start real servers on purpose.
	testSupport := map[string]bool{"vitrine/origin/store/storetest": true, "vitrine/sync/natstest": true}
	// The bench's bare origin measures a pgx transaction with nothing of the store around it.
	pgxImporters := map[string]bool{"vitrine/origin/store": true, "vitrine/origin/store/storetest": true, "vitrine/bench/bareorigin": true}
	for _, p := range listPackages(t) {
		if testSupport[p.ImportPath] {
			continue
		}
		for _, r := range rules {
			if !under(p.ImportPath, r.root) {
				continue
			}
			for _, d := range p.Deps {
				for _, bad := range r.forbid {
					if d != p.ImportPath && bad(d) {
						t.Errorf("%s depends on %s: %s", p.ImportPath, d, r.why)
					}
				}
			}
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/jackc/pgx") && !pgxImporters[p.ImportPath] {
				t.Errorf("%s imports %s: only the origin's store package imports pgx", p.ImportPath, imp)
			}
			// Direct imports only: the origin reaches the rendered cache's dependency type through
			// the read engine, never the cache itself.
			for _, r := range directRules {
				if under(p.ImportPath, r.root) && r.forbid(imp) {
					t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
				}
			}
		}
	}
}

// Every package says what it is for; no package is named after a standard-library package or a
// grab bag; no init() side effects outside main.
func TestPackageHygiene(t *testing.T) {
	banned := map[string]bool{"sync": true, "http": true, "util": true, "utils": true, "common": true, "types": true, "models": true, "helpers": true}
	for _, p := range listPackages(t) {
		if banned[p.Name] {
			t.Errorf("package %s is named %q", p.ImportPath, p.Name)
		}
		fset := token.NewFileSet()
		documented := false
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if file.Doc != nil && strings.HasPrefix(file.Doc.Text(), "Package "+p.Name+" ") ||
				p.Name == "main" && file.Doc != nil && strings.HasPrefix(file.Doc.Text(), "Command ") {
				documented = true
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "init" && fn.Recv == nil {
					t.Errorf("%s: func init in package %s", f, p.ImportPath)
				}
			}
		}
		if !documented {
			t.Errorf("package %s has no package doc comment", p.ImportPath)
		}
	}
}
