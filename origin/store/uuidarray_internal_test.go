package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"vitrine/schema"
)

// uuidArray takes the text forms the database writes and NewUUID makes, and answers anything else
// as invalid input rather than a database error.
func TestUUIDArray(t *testing.T) {
	fresh := NewUUID()
	for _, tc := range []struct {
		name    string
		ids     []string
		invalid bool
	}{
		{"none", nil, false},
		{"canonical", []string{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", PlatformLogID}, false},
		{"fresh", []string{fresh}, false},
		{"upper case", []string{"6BA7B810-9DAD-11D1-80B4-00C04FD430C8"}, false},
		{"empty", []string{""}, true},
		{"short", []string{"6ba7b810-9dad-11d1-80b4-00c04fd430c"}, true},
		{"not hex", []string{"6ba7b810-9dad-11d1-80b4-00c04fd430cz"}, true},
		{"one bad of two", []string{fresh, "1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := uuidArray(tc.ids)
			if tc.invalid {
				var se *schema.Error
				if !errors.As(err, &se) || se.Code != schema.CodeInvalid {
					t.Fatalf("uuidArray(%q) = %v, want a CodeInvalid error", tc.ids, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.ids) {
				t.Fatalf("%d values for %d ids", len(got), len(tc.ids))
			}
			m := pgtype.NewMap()
			for i, u := range got {
				v, err := u.Value()
				if err != nil || !u.Valid {
					t.Fatalf("value %d: %v, valid %v", i, err, u.Valid)
				}
				if want := strings.ToLower(tc.ids[i]); v != want {
					t.Errorf("value %d = %v, want %v", i, v, want)
				}
			}
			// The point of uuidArray: a binary encode plan exists for it.
			if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, got, nil); err != nil {
				t.Fatalf("binary encode: %v", err)
			}
		})
	}
}

// BenchmarkUUIDArrayParam measures a uuid[] parameter of one id as pgx encodes it for the
// extended protocol: bound as []string (a failed binary plan, then text) against uuidArray's.
func BenchmarkUUIDArrayParam(b *testing.B) {
	ids := []string{NewUUID()}
	b.Run("strings", func(b *testing.B) {
		m := pgtype.NewMap()
		for b.Loop() {
			if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, ids, nil); err == nil {
				b.Fatal("pgx now encodes []string as binary uuid[]: uuidArray may be unneeded")
			}
			if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.TextFormatCode, ids, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("uuidArray", func(b *testing.B) {
		m := pgtype.NewMap()
		for b.Loop() {
			a, err := uuidArray(ids)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, a, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
