package schema_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"vitrine/schema"
)

func TestValidateCartSession(t *testing.T) {
	b := make([]byte, 16)
	rand.Read(b)
	good64 := base64.RawURLEncoding.EncodeToString(b)
	goodHex := hex.EncodeToString(b)
	tests := []struct {
		name string
		s    string
		ok   bool
	}{
		{"16 random bytes, base64url", good64, true},
		{"16 random bytes, hex", goodHex, true},
		{"empty", "", false},
		{"too short", good64[:21], false},
		{"too long", strings.Repeat(good64, 10), false},
		{"padding", good64 + "==", false},
		{"space", good64[:11] + " " + good64[12:], false},
		{"all one character", strings.Repeat("a", 32), false},
		{"few distinct", strings.Repeat("abc123", 6), false},
		{"a UUID (122 random bits at most)", "123e4567-e89b-42d3-a456-426614174000", false},
		{"hyphens and underscores", "Ab3_-x9Qz7Lm2Np5Rt8Vw1", true},
		{"non-ASCII", good64 + "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schema.ValidateCartSession(tt.s)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateCartSession(%q) = %v, want ok=%v", tt.s, err, tt.ok)
			}
		})
	}
	// Genuinely random values pass (the distinct-character rule never refuses them in practice).
	for i := 0; i < 10000; i++ {
		rand.Read(b)
		if err := schema.ValidateCartSession(base64.RawURLEncoding.EncodeToString(b)); err != nil {
			t.Fatalf("a random session was refused: %v", err)
		}
	}
}

func TestOrderReference(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		r := schema.NewOrderReference()
		if len(r) != schema.ReferenceLen || seen[r] {
			t.Fatalf("reference %q: wrong length or repeated", r)
		}
		seen[r] = true
		if got, ok := schema.NormalizeOrderReference(r); !ok || got != r {
			t.Fatalf("NormalizeOrderReference(%q) = %q, %v", r, got, ok)
		}
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"7kqf3m9xa2bdhx4p", "7KQF-3M9X-A2BD-HX4P", true},
		{"7KQF-3M9X-A2BD-HX4P", "7KQF-3M9X-A2BD-HX4P", true},
		{"OKQF-3M9X-A2BD-HX4l", "0KQF-3M9X-A2BD-HX41", true},
		{"7KQF-3M9X-A2BD-HX4", "", false},
		{"7KQF-3M9X-A2BD-HX4PP", "", false},
		{"7KQF-3M9X-A2BD-HX4U", "", false}, // U is not in the alphabet
		{"../../etc/passwd", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := schema.NormalizeOrderReference(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeOrderReference(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzShopperInput: order references, cart sessions and section contents come from anyone; their
// decoders never panic, and what they accept is canonical (normalising it again changes nothing).
func FuzzShopperInput(f *testing.F) {
	for _, s := range []string{"7kqf-3m9x-a2bd-hx4p", "OKQF3M9XA2BDHX4l", "", "{}", `{"b":1,"a":[1,2]}`, "AAAAAAAAAAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ref, ok := schema.NormalizeOrderReference(s); ok {
			if again, ok2 := schema.NormalizeOrderReference(ref); !ok2 || again != ref || len(ref) != schema.ReferenceLen {
				t.Fatalf("reference %q normalises to %q, then %q", s, ref, again)
			}
		}
		_ = schema.ValidateCartSession(s)
		if norm, err := schema.NormalizeJSONObject([]byte(s)); err == nil {
			again, err := schema.NormalizeJSONObject(norm)
			if err != nil || string(again) != string(norm) {
				t.Fatalf("content %q normalises to %s, then %s (%v)", s, norm, again, err)
			}
		}
	})
}
