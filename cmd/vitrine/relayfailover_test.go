package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Relay fail-over with the default lease (relay.DefaultLeaseTTL): two relay processes, the
// holder killed (SIGKILL: no release), then the next holder stopped (SIGTERM: it releases). Each
// time, a write made right after must reach an edge through the standby within a generous bound;
// the times are logged (the README's fail-over figures come from here).
func TestRelayFailoverTime(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	ctx := context.Background()
	holds := func(c *component) bool {
		l, _ := s.db.Lease(ctx, "relay")
		return strings.Contains(l.Holder, fmt.Sprintf("-%d-", c.cmd.Process.Pid)) && l.ExpiresAt.After(time.Now())
	}
	a := s.startRelayProcess()
	waitFor(t, 10*time.Second, "the first relay to hold the lease", func() bool { return holds(a) })
	b := s.startRelayProcess()
	e := s.startEdge(edge.Config{})
	tn, _ := s.tenant("shop")
	write := func(slug string) int64 {
		t.Helper()
		c, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
			return tx.CreateProduct(ctx, tn, &schema.Product{Slug: slug, Title: slug, Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}})
		})
		if err != nil {
			t.Fatal(err)
		}
		return c[0].Version
	}
	reached := func(v int64) func() bool {
		return func() bool { tt := e.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v }
	}
	v := write("lamp")
	waitFor(t, 10*time.Second, "the first write to reach the edge", reached(v))
	time.Sleep(300 * time.Millisecond) // the standby is up and polling

	failover := func(how, slug string, stop func()) time.Duration {
		t.Helper()
		l, _ := s.db.Lease(ctx, "relay")
		stop()
		start := time.Now()
		left := l.ExpiresAt.Sub(start)
		v := write(slug)
		waitFor(t, 15*time.Second, "the write after the "+how+" to reach the edge", reached(v))
		took := time.Since(start)
		t.Logf("relay %s: a write made right after reached the edge in %s (the lease had %s left)", how,
			took.Round(time.Millisecond), left.Round(time.Millisecond))
		if took > 5*time.Second {
			t.Errorf("fail-over after the %s took %s", how, took)
		}
		return took
	}
	failover("holder killed (SIGKILL)", "after-kill", a.kill)
	waitFor(t, 5*time.Second, "the standby to hold the lease", func() bool { return holds(b) })
	c := s.startRelayProcess()
	time.Sleep(500 * time.Millisecond) // the new standby is up and polling
	failover("holder stopped (SIGTERM)", "after-term", func() { b.signal(syscall.SIGTERM) })
	waitFor(t, 5*time.Second, "the last relay to hold the lease", func() bool { return holds(c) })
}
