package schema_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"vitrine/schema"
)

// A change of a newer schema is refused as unsupported, whatever else it holds (a newer schema
// may add fields), and told apart from a malformed one: a reader counts and reports the first
// as a writer upgraded too early.
func TestDecodeChangeNewerSchema(t *testing.T) {
	newer := schema.ChangeSchemaVersion + 1
	cases := []struct {
		name        string
		in          []byte
		unsupported bool
		schema      int
		log         string
	}{
		{"current schema", changeJSON(t, nil), false, 0, ""},
		{"newer schema", changeJSON(t, set("schema", newer)), true, newer, "shop"},
		{"newer schema with a new field", changeJSON(t, set("schema", newer, "colour", "red")), true, newer, "shop"},
		{"newer schema with a field of a new type", changeJSON(t, set("schema", newer, "version", "v5")), true, newer, "shop"},
		{"newer schema on the registry", changeJSON(t, set("schema", newer, "log", schema.PlatformLog)), true, newer, schema.PlatformLog},
		{"newer schema with an unsafe log", changeJSON(t, set("schema", newer, "log", "a.b\n")), true, newer, ""},
		{"newer schema, log of a new type", changeJSON(t, set("schema", 99, "log", 7)), true, 99, ""},
		{"relay form of a newer schema", []byte(fmt.Sprintf(`{"schema":%d,"log":"shop","kind":"log","id":"head","vis":"pub","version":3,"next":1}`, newer)), true, newer, "shop"},
		{"schema 0 is malformed", changeJSON(t, set("schema", 0)), false, 0, ""},
		{"negative schema is malformed", changeJSON(t, set("schema", -3)), false, 0, ""},
		{"schema as a string is malformed", changeJSON(t, set("schema", "2")), false, 0, ""},
		{"truncated newer schema is malformed", []byte(fmt.Sprintf(`{"schema":%d,"log":"shop"`, newer)), false, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schema.DecodeChange(tc.in)
			var u *schema.UnsupportedSchemaError
			if got := errors.As(err, &u); got != tc.unsupported {
				t.Fatalf("DecodeChange(%s) error %v: unsupported %v, want %v", tc.in, err, got, tc.unsupported)
			}
			if u != nil && (u.Schema != tc.schema || u.Log != tc.log) {
				t.Errorf("DecodeChange(%s) = %+v, want schema %d log %q", tc.in, u, tc.schema, tc.log)
			}
		})
	}
}

func TestCheckWriteSchema(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{
		{-1, false}, {0, false}, {schema.OldestChangeSchema, true}, {schema.ChangeSchemaVersion, true}, {schema.ChangeSchemaVersion + 1, false},
	} {
		if err := schema.CheckWriteSchema(tc.n); (err == nil) != tc.ok {
			t.Errorf("CheckWriteSchema(%d) = %v, want ok %v", tc.n, err, tc.ok)
		}
	}
}

// EncodeChangeAt is what a relay publishes for an outbox row: the row itself when it is written
// in the schema asked for or an older one (no decoding), never a schema newer than asked.
func TestEncodeChangeAt(t *testing.T) {
	c := entityChange(t)
	body := c.Encode()
	newer := schema.ChangeSchemaVersion + 1
	cases := []struct {
		name    string
		body    []byte
		n       int
		same    bool   // the body itself comes back
		wantErr string // substring of the error
	}{
		{"row in the newest schema", body, schema.ChangeSchemaVersion, true, ""},
		{"row in another key order", changeJSON(t, nil), schema.ChangeSchemaVersion, true, ""},
		{"schema this build cannot write", body, newer, false, "writes change schemas"},
		{"row of a newer schema than this build reads", changeJSON(t, set("schema", newer)), schema.ChangeSchemaVersion, false, "not supported"},
		{"malformed row of another form", []byte(`{"log":"shop","schema":`), schema.ChangeSchemaVersion, false, "decode change"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schema.EncodeChangeAt(tc.body, tc.n)
			if tc.same {
				if err != nil || &got[0] != &tc.body[0] {
					t.Fatalf("EncodeChangeAt = %s, %v; want the row itself", got, err)
				}
				return
			}
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.wantErr)) {
				t.Fatalf("EncodeChangeAt = %s, %v; want an error containing %q", got, err, tc.wantErr)
			}
		})
	}
	if _, err := c.EncodeAt(newer); err == nil {
		t.Errorf("EncodeAt(%d) succeeded", newer)
	}
	for n := schema.OldestChangeSchema; n <= schema.ChangeSchemaVersion; n++ {
		b, err := c.EncodeAt(n)
		if err != nil {
			t.Fatalf("EncodeAt(%d): %v", n, err)
		}
		back, err := schema.DecodeChange(b)
		if err != nil || back.Schema != n || back.Key() != c.Key() || back.Version != c.Version {
			t.Fatalf("EncodeAt(%d) = %s, decoded %+v, %v", n, b, back, err)
		}
	}
}
