package relay_test

import (
	"context"
	"sync/atomic"
	"testing"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/relay"
)

// pairSink is a feed.Sink in front of a replica that checks, after every change and
// checkpoint, that the tenant's snapshot never shows part of a transaction: every write of the
// test prices two products alike in one transaction.
type pairSink struct {
	*replica.Replica
	log         string
	a, b        string
	checkpoints atomic.Int64
	checked     atomic.Int64
	torn        atomic.Int64
}

func (s *pairSink) Change(c *schema.Change) {
	s.Replica.Change(c)
	s.check()
}

func (s *pairSink) Checkpoint() {
	s.checkpoints.Add(1)
	s.Replica.Checkpoint()
	s.check()
}

func (s *pairSink) check() {
	t := s.Replica.TenantBySlug(s.log)
	if t == nil || !t.Ready() {
		return
	}
	snap := t.Snapshot()
	pa, pb := snap.ProductBySlug(s.a), snap.ProductBySlug(s.b)
	if pa == nil || pb == nil {
		return
	}
	s.checked.Add(1)
	if pa.Prices["USD"] != pb.Prices["USD"] {
		s.torn.Add(1)
	}
}

// The relay's changes reach the stream one message at a time before their head, and a consumer
// between two of them is told nothing is pending, so the follower checkpoints in the middle of a
// publish. A replica never shows the part of a transaction it holds there.
func TestNoPartOfATransactionAtCheckpoints(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	var ids [2]schema.ProductID
	if _, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
		for i, slug := range []string{"left", "right"} {
			p := &schema.Product{Slug: slug, Title: slug, Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}}
			if err := tx.CreateProduct(ctx, tn, p); err != nil {
				return err
			}
			ids[i] = p.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sink := &pairSink{Replica: replica.New(replica.Config{Logger: quietLogger()}), log: "shop", a: "left", b: "right"}
	r.follow(t, sink, feed.Config{}.WithDefaults().AllFilters())
	const writes = 300
	var last int64
	for i := range writes {
		commits, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			for _, id := range ids {
				old, _, err := tx.ProductForUpdate(ctx, tn, id)
				if err != nil {
					return err
				}
				p := *old
				p.Prices = schema.Prices{"USD": int64(200 + i)}
				if err := tx.UpdateProduct(ctx, tn, old, &p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last = commits[0].Version
	}
	waitFor(t, "the replica to reach the last write", func() bool {
		tt := sink.TenantBySlug("shop")
		return tt != nil && tt.Version() >= last
	})
	if sink.checked.Load() < writes {
		t.Fatalf("only %d checks for %d writes: the test saw too little to tell", sink.checked.Load(), writes)
	}
	if n := sink.torn.Load(); n != 0 {
		t.Fatalf("the replica showed part of a transaction %d times in %d checks (%d checkpoints)", n, sink.checked.Load(), sink.checkpoints.Load())
	}
	t.Logf("%d checks, %d checkpoints for %d writes", sink.checked.Load(), sink.checkpoints.Load(), writes)
}
