package relay_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

// proxy forwards TCP connections to a target until cut, which drops them all and refuses new
// ones: a network partition between one client and the nats-server.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// A lease holder that loses NATS (while the database still answers, so it could renew forever)
// gives the lease up, and a standby connected to NATS publishes the next write in well under the
// lease: 30 s here, so only the release can explain a fast take-over.
func TestRelayReleasesTheLeaseWhenNATSIsLost(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Run(t)
	db, _ := storetest.Open(t, store.Config{})
	start := func(holder, url string) *relay.Relay {
		nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		r, err := relay.New(db, nc, relay.Config{Holder: holder, LeaseTTL: 30 * time.Second, Poll: 20 * time.Millisecond, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { r.Run(rctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done; nc.Close() })
		return r
	}
	p := newProxy(t, ns.Addr().String())
	a := start("a", p.url())
	waitFor(t, "relay a to hold the lease", func() bool { return a.Stats().LeaseHeld })
	b := start("b", ns.URL())

	rep := replica.New(replica.Config{Logger: quietLogger()})
	f, err := feed.NewFollower(ns.Connect(t), feed.Config{}, feed.Config{}.WithDefaults().AllFilters(), rep, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go f.Run(fctx)
	r := &rig{db: db}
	tn := storetest.Tenant(t, db, "shop")
	v := r.write(t, tn, "lamp", "active")
	waitFor(t, "relay a to publish", func() bool { tt := rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v })

	p.cut()
	cut := time.Now()
	v = r.write(t, tn, "desk", "active")
	waitFor(t, "relay b to publish the write made after relay a lost NATS", func() bool { return rep.TenantBySlug("shop").Version() >= v })
	took := time.Since(cut)
	t.Logf("relay b published %s after relay a lost NATS (lease 30s)", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Fatalf("take-over took %s", took)
	}
	if !b.Stats().LeaseHeld || a.Stats().LeaseHeld {
		t.Fatalf("lease held: a %v, b %v", a.Stats().LeaseHeld, b.Stats().LeaseHeld)
	}
	l, err := db.Lease(ctx, "relay")
	if err != nil || l.Holder != "b" {
		t.Fatalf("lease %+v, %v", l, err)
	}
}
