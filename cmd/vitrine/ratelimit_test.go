package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

func TestRateLimits(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	behindLB := s.startEdge(edge.Config{RateLimit: 1000, TrustedProxies: proxies})
	alsoBehindLB := s.startEdge(edge.Config{RateLimit: 1000, TrustedProxies: proxies})
	direct := s.startEdge(edge.Config{RateLimit: 1000})
	s.tenant("shop")
	s.tenant("other")
	if _, err := s.db.UpdateTenant(context.Background(), "shop", func(tn *schema.Tenant) error { tn.RateLimit = 5; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*component{behindLB, alsoBehindLB, direct} {
		waitFor(t, 5*time.Second, "the edges to learn the store's limit", func() bool {
			tn := c.rep.TenantBySlug("shop")
			return tn != nil && tn.Info() != nil && tn.Info().RateLimit == 5
		})
	}
	get := func(addr, host, client string) *response {
		return call(t, "GET", addr, host, "/api/products", "", "X-Forwarded-For", client, "Origin", "https://store.example")
	}

	t.Run("past the store's limit an address gets 429; others are unaffected", func(t *testing.T) {
		for i := range 5 {
			if r := get(behindLB.addr, "shop.example.test", "198.51.100.7"); r.status != 200 || r.header.Get("RateLimit-Limit") != "5" {
				t.Fatalf("request %d: %d, RateLimit-Limit %q", i, r.status, r.header.Get("RateLimit-Limit"))
			}
		}
		r := get(behindLB.addr, "shop.example.test", "198.51.100.7")
		if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Remaining") != "0" || !strings.Contains(string(r.body), `"error"`) {
			t.Fatalf("6th request: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
		}
		if exp := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "RateLimit-Remaining") || !strings.Contains(exp, "Retry-After") {
			t.Fatalf("rate-limit headers not exposed to browsers: %q", exp)
		}
		if r := get(behindLB.addr, "shop.example.test", "198.51.100.8"); r.status != 200 {
			t.Fatalf("another address: %d", r.status)
		}
		if r := get(behindLB.addr, "other.example.test", "198.51.100.7"); r.status != 200 || r.header.Get("RateLimit-Limit") != "1000" {
			t.Fatalf("another store: %d, limit %q", r.status, r.header.Get("RateLimit-Limit"))
		}
	})

	t.Run("X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		for i := range 5 {
			if r := get(direct.addr, "shop.example.test", fmt.Sprintf("203.0.113.%d", i)); r.status != 200 {
				t.Fatalf("request %d: %d", i, r.status)
			}
		}
		if r := get(direct.addr, "shop.example.test", "203.0.113.99"); r.status != 429 {
			t.Fatalf("a forged X-Forwarded-For evaded the limit: %d", r.status)
		}
	})

	t.Run("origin throttles hold across edges", func(t *testing.T) {
		session := newSession()
		var last *response
		for i := range 21 {
			addr := behindLB.addr
			if i%2 == 1 {
				addr = alsoBehindLB.addr
			}
			last = call(t, "POST", addr, "other.example.test", "/api/cart/coupon", `{"code":"GUESS`+fmt.Sprint(i)+`"}`,
				"X-Cart-Session", session, "X-Forwarded-For", "198.51.100.20")
			if i < 20 && last.status != 422 {
				t.Fatalf("attempt %d: %d %s", i, last.status, last.body)
			}
		}
		if last.status != 429 || last.header.Get("Retry-After") == "" {
			t.Fatalf("21st coupon guess across two edges: %d %s", last.status, last.body)
		}
		other := call(t, "POST", behindLB.addr, "other.example.test", "/api/cart/coupon", `{"code":"GUESS"}`,
			"X-Cart-Session", session, "X-Forwarded-For", "198.51.100.21")
		if other.status != 422 {
			t.Fatalf("another address after the limit: %d %s", other.status, other.body)
		}
	})
}
