package feed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// TestReplicatedStreams runs the streams on a three-node JetStream cluster, as deploy/compose and
// deploy/kubernetes do: with Replicas 3 the state and event streams are created with three
// copies, an R1 state stream is scaled to R3 in place (same epoch, creation time and messages: no
// edge bootstraps again), and with the state stream's leader shut down the stream still takes a
// publish and serves every message.
func TestReplicatedStreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := natstest.RunCluster(t, 3)
	nc := cl.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	fc := feed.Config{Replicas: 3, DedupWindow: time.Minute}.WithDefaults()
	const epoch = "e-replicas"

	t.Run("create R3", func(t *testing.T) {
		if _, err := feed.EnsureStream(ctx, js, fc, epoch); err != nil {
			t.Fatal(err)
		}
		if _, err := feed.EnsureEventStream(ctx, js, fc); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{fc.Stream, fc.EventStream} {
			info := natstest.WaitReplicated(t, js, name, 3)
			if len(info.Cluster.Replicas) != 2 {
				t.Fatalf("%s: %d peers beside the leader, want 2", name, len(info.Cluster.Replicas))
			}
		}
		// Ensuring again changes nothing.
		s, err := feed.EnsureStream(ctx, js, fc, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config.Replicas; got != 3 {
			t.Fatalf("re-ensured state stream has %d replicas", got)
		}
	})

	t.Run("R1 scaled to R3 in place", func(t *testing.T) {
		old := feed.Config{Prefix: "scaled", Stream: "SCALED_STATE", EventStream: "SCALED_EVENTS", Replicas: 1,
			DedupWindow: time.Minute}.WithDefaults()
		s, err := feed.EnsureStream(ctx, js, old, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := feed.EnsureEventStream(ctx, js, old); err != nil {
			t.Fatal(err)
		}
		before := s.CachedInfo()
		if before.Config.Replicas != 1 {
			t.Fatalf("created with %d replicas, want 1", before.Config.Replicas)
		}
		var msgs []feed.Message
		for i := range 5 {
			msgs = append(msgs, feed.Message{Subject: old.Subject(0, "t1", fmt.Sprintf("pub.product.%d", i)), Body: []byte{byte(i)}})
		}
		last, err := feed.Publish(ctx, js, epoch, msgs, old.HeadSubject(0, "t1"), 0)
		if err != nil {
			t.Fatal(err)
		}
		scaled := old
		scaled.Replicas = 3
		if _, err := feed.EnsureStream(ctx, js, scaled, epoch); err != nil {
			t.Fatal(err)
		}
		if _, err := feed.EnsureEventStream(ctx, js, scaled); err != nil {
			t.Fatal(err)
		}
		natstest.WaitReplicated(t, js, scaled.EventStream, 3)
		after := natstest.WaitReplicated(t, js, scaled.Stream, 3)
		gotEpoch, gotCreated := feed.StreamIdentity(after)
		if gotEpoch != epoch || !gotCreated.Equal(before.Created) {
			t.Fatalf("identity after scaling: epoch %q created %v, want %q %v (the stream was recreated)",
				gotEpoch, gotCreated, epoch, before.Created)
		}
		if after.State.LastSeq != last || after.State.Msgs != 5 {
			t.Fatalf("after scaling: last seq %d, %d messages; want %d, 5", after.State.LastSeq, after.State.Msgs, last)
		}
	})

	t.Run("leader lost", func(t *testing.T) {
		info := natstest.WaitReplicated(t, js, fc.Stream, 3)
		first := []feed.Message{{Subject: fc.Subject(0, "t1", "pub.product.1"), Body: []byte("before")}}
		if _, err := feed.Publish(ctx, js, epoch, first, fc.HeadSubject(0, "t1"), 0); err != nil {
			t.Fatal(err)
		}
		leader := cl.Node(info.Cluster.Leader)
		if leader == nil {
			t.Fatalf("no node named %q", info.Cluster.Leader)
		}
		leader.Stop()
		// A new leader is elected among the two others: retry the publish until it is taken.
		second := []feed.Message{{Subject: fc.Subject(0, "t1", "pub.product.2"), Body: []byte("after")}}
		deadline := time.Now().Add(15 * time.Second)
		for {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err := feed.Publish(pctx, js, epoch, second, fc.HeadSubject(0, "t1"), 0)
			pcancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no publish with the leader %s down: %v", leader.Name(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		s, err := js.Stream(ctx, fc.Stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Cluster.Leader; got == leader.Name() || got == "" {
			t.Fatalf("leader after the loss: %q", got)
		}
		for _, m := range append(first, second...) {
			got, err := s.GetLastMsgForSubject(ctx, m.Subject)
			if err != nil {
				t.Fatalf("%s: %v", m.Subject, err)
			}
			if string(got.Data) != string(m.Body) || got.Header.Get(feed.HeaderEpoch) != epoch {
				t.Fatalf("%s: %q epoch %q, want %q %q", m.Subject, got.Data, got.Header.Get(feed.HeaderEpoch), m.Body, epoch)
			}
		}
		// The node comes back and catches up: three current copies again.
		leader.Restart(t)
		natstest.WaitReplicated(t, js, fc.Stream, 3)
	})
}
