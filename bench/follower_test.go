package bench

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/natstest"
)

func TestFollowStream(t *testing.T) {
	srv := natstest.Run(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "F", Subjects: []string{"f.>"}})
	if err != nil {
		t.Fatal(err)
	}

	if err := FollowStream(ctx, srv.URL(), "MISSING"); err == nil {
		t.Error("following a stream that does not exist: no error")
	}

	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- FollowStream(fctx, srv.URL(), "F") }()
	for i := range 5 {
		if _, err := js.Publish(ctx, "f.x", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The follower's consumer is delivered every message published, before and after it began.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var delivered uint64
		for info := range s.ListConsumers(ctx).Info() {
			delivered = max(delivered, info.Delivered.Stream)
		}
		if delivered == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower was delivered up to sequence %d, want 5", delivered)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("FollowStream after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FollowStream did not return after its context ended")
	}
}
