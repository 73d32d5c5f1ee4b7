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
