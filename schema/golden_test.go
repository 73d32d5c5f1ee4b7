package schema_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	// The tests load IANA zones (Europe/Paris, Asia/Tokyo); the embedded database keeps them
	// independent of the machine's zoneinfo.
	_ "time/tzdata"
)

var update = flag.Bool("update", false, "rewrite golden files")

// checkGolden compares the body the transports would send for v (json.Marshal, so with its HTML
// escaping), pretty-printed, with testdata/<name>.golden. With -update it rewrites the file.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	compact, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %s: %v", name, err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, compact, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", name, err)
	}
	pretty.WriteByte('\n')
	got := pretty.Bytes()

	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v (run go test ./schema/ -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: body differs from the golden file (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
