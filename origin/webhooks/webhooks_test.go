package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"vitrine/origin/store"
)

// The spec's signature, recomputed independently: sha256= and the hex HMAC-SHA256 of the raw
// body with the secret.
func TestSignature(t *testing.T) {
	body := []byte(`{"id":"e1","kind":"order.paid"}`)
	m := hmac.New(sha256.New, []byte("whsec_test"))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if got := Signature("whsec_test", body); got != want {
		t.Fatalf("Signature %s, want %s", got, want)
	}
	if !Verify("whsec_test", body, want) || Verify("whsec_other", body, want) || Verify("whsec_test", append(body, ' '), want) {
		t.Fatal("Verify accepts what it should not, or refuses the right signature")
	}
	m = hmac.New(sha256.New, []byte("whsec_test"))
	m.Write([]byte("1700000000." + string(body)))
	if got := TimestampSignature("whsec_test", 1700000000, body); got != "sha256="+hex.EncodeToString(m.Sum(nil)) {
		t.Fatalf("TimestampSignature %s", got)
	}
	a, b := NewSecret(), NewSecret()
	if a == b || !strings.HasPrefix(a, SecretPrefix) || len(a) != len(SecretPrefix)+43 {
		t.Fatalf("secrets %q %q", a, b)
	}
}

func TestSealer(t *testing.T) {
	s, err := newSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.seal("whsec_abc")
	if strings.Contains(string(sealed), "whsec_abc") {
		t.Fatal("the sealed secret holds the plaintext")
	}
	if got, err := s.open(sealed); err != nil || got != "whsec_abc" {
		t.Fatalf("open: %q %v", got, err)
	}
	if string(s.seal("whsec_abc")) == string(sealed) {
		t.Fatal("two seals of one secret are equal: the nonce is not random")
	}
	other, _ := newSealer([]byte("another server secret, 32 bytes!"))
	if _, err := other.open(sealed); err == nil {
		t.Fatal("a secret opened with another server secret")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.open(sealed); err == nil {
		t.Fatal("a tampered secret opened")
	}
	if _, err := s.open([]byte{1, 2}); err == nil {
		t.Fatal("a short secret opened")
	}
	if _, err := newSealer(nil); err == nil {
		t.Fatal("a sealer without a server secret")
	}
}

func TestCheckURL(t *testing.T) {
	cases := []struct {
		url   string
		allow []string
		ok    bool
	}{
		{"https://hooks.example.com/vitrine", nil, true},
		{"https://127.0.0.1/hook", nil, true}, // refused at delivery, by address
		{"http://hooks.example.com/", nil, false},
		{"http://127.0.0.1:8080/hook", []string{"127.0.0.1/32"}, true},
		{"http://[::1]:8080/hook", []string{"::1/128"}, true},
		{"http://127.0.0.1:8080/hook", []string{"10.0.0.0/8"}, false},
		{"http://localhost:8080/hook", []string{"127.0.0.1/32"}, false}, // http needs the address itself
		{"", nil, false},
		{"ftp://example.com/", nil, false},
		{"https://user:pw@example.com/", nil, false},
		{"https://example.com/#frag", nil, false},
		{"/relative", nil, false},
		{"https:opaque", nil, false},
		{"https://example.com/" + strings.Repeat("a", maxURL), nil, false},
	}
	for _, tc := range cases {
		if err := checkURL(tc.url, tc.allow); (err == nil) != tc.ok {
			t.Errorf("%q %v: %v", tc.url, tc.allow, err)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1": "127.0.0.1/32", "10.1.2.3/8": "10.0.0.0/8", "::1": "::1/128",
		"::ffff:127.0.0.1": "127.0.0.1/32", " 192.0.2.0/24 ": "192.0.2.0/24"} {
		if p, err := ParsePrefix(in); err != nil || p.String() != want {
			t.Errorf("%q: %v %v, want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "example.com", "10.0.0.0/33", "1.2.3"} {
		if _, err := ParsePrefix(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestJitter(t *testing.T) {
	for range 1000 {
		if d := jitter(10 * time.Second); d < 8*time.Second || d > 12*time.Second {
			t.Fatalf("jitter %v outside ±20%%", d)
		}
	}
}

// FuzzEndpointInput: any URL and allowlist is accepted or refused with an error, never a panic,
// and an accepted http URL names an allowlisted address.
func FuzzEndpointInput(f *testing.F) {
	f.Add("https://example.com/hook", "127.0.0.1/32")
	f.Add("http://127.0.0.1:1/", "127.0.0.1")
	f.Add("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1")
	f.Add("https://%zz", "")
	f.Fuzz(func(t *testing.T, raw, cidr string) {
		in := EndpointInput{URL: &raw, IPAllowlist: &[]string{cidr}}
		if err := in.apply(&store.WebhookEndpoint{}); err == nil && strings.HasPrefix(strings.TrimSpace(raw), "http:") && cidr == "" {
			t.Fatalf("http accepted without an allowlist: %q", raw)
		}
	})
}
