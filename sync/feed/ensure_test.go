package feed_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/blob"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// TestEnsureSendsNoNoOpUpdate: ensuring a stream or a bucket that already has the wanted
// configuration sends nats-server no update request (nats-server races an update against a
// consumer being created on the same stream); a changed field is updated.
func TestEnsureSendsNoNoOpUpdate(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Run(t)
	nc := ns.Connect(t)
	js, _ := jetstream.New(nc)
	var updates atomic.Int64
	sub, err := nc.Subscribe("$JS.API.STREAM.UPDATE.>", func(*nats.Msg) { updates.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	want := func(n int64) {
		t.Helper()
		nc.Flush()
		time.Sleep(50 * time.Millisecond)
		if got := updates.Load(); got != n {
			t.Fatalf("%d stream updates sent, want %d", got, n)
		}
	}
	cfg := jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}
	for _, step := range []struct {
		name    string
		maxAge  time.Duration
		updates int64
	}{
		{"created", 0, 0},
		{"unchanged", 0, 0},
		{"unchanged again", 0, 0},
		{"max age changed", time.Hour, 1},
		{"unchanged after the change", time.Hour, 1},
	} {
		cfg.MaxAge = step.maxAge
		s, err := feed.EnsureStreamConfig(ctx, js, cfg)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		want(step.updates)
		if got := s.CachedInfo().Config.MaxAge; got != step.maxAge {
			t.Fatalf("%s: max age %v, want %v", step.name, got, step.maxAge)
		}
	}
	ocfg := jetstream.ObjectStoreConfig{Bucket: "files", Description: "test bucket", Storage: jetstream.FileStorage}
	for i := range 3 {
		if _, err := blob.EnsureObjectStore(ctx, js, ocfg); err != nil {
			t.Fatalf("bucket, call %d: %v", i, err)
		}
	}
	want(1)
	ocfg.Description = "renamed"
	if _, err := blob.EnsureObjectStore(ctx, js, ocfg); err != nil {
		t.Fatal(err)
	}
	want(2)
}
