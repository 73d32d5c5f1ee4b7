package origin

import "testing"

func TestMaskEmail(t *testing.T) {
	for in, want := range map[string]string{
		"ann@example.com":  "a***@example.com",
		"a@example.com":    "a***@example.com",
		"élise@example.fr": "é***@example.fr",
		"no-at-sign":       "***",
		"@example.com":     "***",
	} {
		if got := maskEmail(in); got != want {
			t.Errorf("maskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}
