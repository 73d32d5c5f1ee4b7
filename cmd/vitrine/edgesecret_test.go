package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/sync/relay"
)

// Outside `vitrine dev` an edge secret is required, long enough to be a secret.
func TestEdgeSecretRequired(t *testing.T) {
	const good = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, current, previous, want string
	}{
		{"missing", "", "", "an edge secret is required"},
		{"short", "edge-secret", "", "at least 32 characters"},
		{"short previous", good, "old-secret", "--edge-secret-previous"},
		{"one", good, "", ""},
		{"rotating", good, strings.ToUpper(good), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secrets, err := originEdgeSecrets(tc.current, tc.previous)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			case tc.want == "" && len(secrets) != 1+len(tc.previous)/len(good):
				t.Fatalf("secrets %q", secrets)
			}
		})
	}
	// The edge command refuses before it connects to anything.
	t.Setenv("VITRINE_EDGE_SECRET", "")
	err := runEdge(t.Context(), []string{"--nats-url", "nats://127.0.0.1:1", "--ops-addr", "off"})
	if err == nil || !strings.Contains(err.Error(), "an edge secret is required") {
		t.Fatalf("an edge without a secret: %v", err)
	}
}

// During a rotation the origin accepts the new and the previous edge secret: edges presenting
// either are believed about their clients' addresses, so origin throttles key on the shopper. An
// edge presenting neither is not: its clients share the edge's own address.
func TestEdgeSecretRotation(t *testing.T) {
	const current, previous = "current-edge-secret-0123456789abcdef", "previous-edge-secret-0123456789abcdef"
	s := newSystem(t, systemOptions{})
	s.originConfig.EdgeSecrets = []string{current, previous}
	s.startRelay(relay.Config{})
	s.startOrigin()
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	rotated := s.startEdge(edge.Config{EdgeSecret: current, TrustedProxies: proxies})
	notYet := s.startEdge(edge.Config{EdgeSecret: previous, TrustedProxies: proxies})
	stranger := s.startEdge(edge.Config{EdgeSecret: "some-other-secret-0123456789abcdef", TrustedProxies: proxies})
	s.tenant("shop")
	guess := func(addr, client string, i int) *response {
		return call(t, "POST", addr, "shop.example.test", "/api/cart/coupon", fmt.Sprintf(`{"code":"GUESS%d"}`, i),
			"X-Cart-Session", newSession(), "X-Forwarded-For", client)
	}

	// The origin allows 20 coupon guesses a minute per client address. One shopper's guesses
	// through both trusted edges count together, and a second shopper is unaffected.
	for i := range 20 {
		addr := rotated.addr
		if i%2 == 1 {
			addr = notYet.addr
		}
		if r := guess(addr, "198.51.100.30", i); r.status != 422 {
			t.Fatalf("guess %d: %d %s", i, r.status, r.body)
		}
	}
	for _, c := range []*component{rotated, notYet} {
		if r := guess(c.addr, "198.51.100.30", 99); r.status != 429 {
			t.Fatalf("the shopper's 21st guess: %d %s", r.status, r.body)
		}
		if r := guess(c.addr, "198.51.100.31", 0); r.status != 422 {
			t.Fatalf("another shopper behind a trusted edge was throttled: %d %s", r.status, r.body)
		}
	}

	// Through the edge with an unknown secret, every shopper is the edge itself.
	for i := range 20 {
		if r := guess(stranger.addr, fmt.Sprintf("203.0.113.%d", i), i); r.status != 422 {
			t.Fatalf("untrusted guess %d: %d %s", i, r.status, r.body)
		}
	}
	if r := guess(stranger.addr, "203.0.113.200", 0); r.status != 429 {
		t.Fatalf("an edge with an unknown secret was believed about its client: %d %s", r.status, r.body)
	}
}
