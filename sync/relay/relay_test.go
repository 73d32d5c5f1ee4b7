package relay_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// rig is a database, a nats-server, a running relay and an origin-scope replica following the
// stream.
type rig struct {
	db     *store.DB
	ns     *natstest.Server
	relay  *relay.Relay
	rep    *replica.Replica
	cancel context.CancelFunc
}

func newRig(t *testing.T, cfg relay.Config) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &rig{cancel: cancel}
	r.ns = natstest.Run(t)
	nc := r.ns.Connect(t)
	r.relay = nil
	var err error
	r.db, _ = storetest.Open(t, store.Config{OnCommit: func([]store.LogCommit) {
		if r.relay != nil {
			r.relay.Wake()
		}
	}})
	cfg.Logger = quietLogger()
	r.relay, err = relay.New(r.db, nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.relay.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	r.rep = replica.New(replica.Config{Logger: quietLogger()})
	f, err := feed.NewFollower(r.ns.Connect(t), cfg.Feed, cfg.Feed.WithDefaults().AllFilters(), r.rep, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	f.Watch = 100 * time.Millisecond
	go f.Run(ctx)
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRelayReplicatesToReplica(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	var last int64
	for i := 0; i < 30; i++ {
		commits, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			p := &schema.Product{Slug: "p" + schema.IDString(int64(i)), Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}}
			if i%3 == 0 {
				p.Status = schema.ProductDraft
			}
			return tx.CreateProduct(ctx, tn, p)
		})
		if err != nil {
			t.Fatal(err)
		}
		last = commits[0].Version
	}
	waitFor(t, "the replica to reach the last write", func() bool {
		tt := r.rep.TenantBySlug("shop")
		return tt != nil && tt.Ready() && tt.Version() >= last
	})
	log, _ := r.db.LogBySlug(ctx, "shop")
	want, err := r.db.Digest(ctx, log, schema.Pub, schema.Priv)
	if err != nil {
		t.Fatal(err)
	}
	got := r.rep.TenantBySlug("shop").Snapshot().Digest("shop", schema.Pub, schema.Priv)
	if got.Sum() != want.Sum() {
		t.Fatalf("replica digest differs from the database:\n%v", got.Diff(want, 10))
	}
	if n := r.rep.TenantBySlug("shop").Snapshot().ProductCount(); n != 20 {
		t.Fatalf("%d public products, want 20", n)
	}
	if !r.rep.Ready() {
		t.Fatal("replica not ready")
	}
	// The outbox drains once the stream holds the rows.
	waitFor(t, "the outbox to drain", func() bool {
		rows, _ := r.db.OutboxRows(ctx, log.ID, 0, 10)
		return len(rows) == 0
	})
}

// A publisher that does not know the current head has its whole batch refused.
func TestStaleBatchIsFenced(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	if err := r.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn, &schema.Product{Slug: "a", Title: "A", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replication", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= 1 })
	nc := r.ns.Connect(t)
	js, _ := jetstream.New(nc)
	cfg := feed.Config{}.WithDefaults()
	stale := schema.NewChange("shop", schema.KindProduct, "1", schema.Pub, &schema.Product{ID: 1, Slug: "a", Title: "OLD"})
	stale.Version, stale.TxnFirst, stale.TxnLast = 1, 1, 1
	_, err := feed.PublishBatch(ctx, nc, js, r.rep.Epoch(), []feed.Message{{Subject: cfg.Subject(0, "shop", stale.Key()), Body: stale.Encode()}},
		cfg.HeadSubject(0, "shop"), 0)
	if !errors.Is(err, feed.ErrFenced) {
		t.Fatalf("stale batch: err = %v, want fenced", err)
	}
	s, _ := js.Stream(ctx, cfg.Stream)
	msg, err := s.GetLastMsgForSubject(ctx, cfg.Subject(0, "shop", "pub.product.1"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := schema.DecodeChange(msg.Data)
	if string(c.Data) == string(stale.Data) {
		t.Fatal("the stale state reached the stream")
	}
}

// A message on the head subject whose headers carry a foreign Nats-Sequence (as a naive copy of a
// direct-get answer would) must not make the relay misread the head's sequence.
func TestHeadWithForeignSequenceHeader(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	write := func(slug string) int64 {
		c, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			return tx.CreateProduct(ctx, tn, &schema.Product{Slug: slug, Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
		})
		if err != nil {
			t.Fatal(err)
		}
		return c[0].Version
	}
	v := write("a")
	waitFor(t, "the first write", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v })
	nc := r.ns.Connect(t)
	js, _ := jetstream.New(nc)
	cfg := feed.Config{}.WithDefaults()
	st, _ := js.Stream(ctx, cfg.Stream)
	head, err := st.GetLastMsgForSubject(ctx, cfg.HeadSubject(0, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	dup := nats.NewMsg(head.Subject)
	dup.Data = head.Data
	dup.Header.Set("Nats-Sequence", "1")
	dup.Header.Set(feed.HeaderEpoch, r.rep.Epoch())
	dup.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(head.Sequence, 10))
	if _, err := js.PublishMsg(ctx, dup); err != nil {
		t.Fatal(err)
	}
	v = write("b")
	waitFor(t, "the write after the foreign head", func() bool { return r.rep.TenantBySlug("shop").Version() >= v })
}
