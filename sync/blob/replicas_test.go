package blob_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/blob"
	"vitrine/sync/natstest"
)

// readWhenThere reads name whole, retrying while it is not found yet: with Replicas > 1 a direct
// get may be answered by a replica a few milliseconds behind the leader.
func readWhenThere(t *testing.T, st *blob.ObjectStore, name string) []byte {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		o, err := st.Open(ctx, name, 0)
		if err == nil {
			b, err := io.ReadAll(o)
			o.Close()
			if err != nil {
				t.Fatalf("read %s: %v", name, err)
			}
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("open %s: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicatedBucket runs the media bucket on a three-node JetStream cluster: with Replicas 3
// its stream has three copies, an R1 bucket is scaled to R3 in place (its objects stay), and with
// the bucket's leader shut down objects are still written and read.
func TestReplicatedBucket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := natstest.RunCluster(t, 3)
	nc := cl.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 20_000) // 320 KB: three chunks

	t.Run("R1 scaled to R3 in place", func(t *testing.T) {
		st, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "scaled", Create: true, Replicas: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, "a.bin", "application/octet-stream", bytes.NewReader(big)); err != nil {
			t.Fatal(err)
		}
		s, err := js.Stream(ctx, "OBJ_scaled")
		if err != nil {
			t.Fatal(err)
		}
		before := s.CachedInfo()
		if before.Config.Replicas != 1 {
			t.Fatalf("created with %d replicas, want 1", before.Config.Replicas)
		}
		st, err = blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "scaled", Create: true, Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		after := natstest.WaitReplicated(t, js, "OBJ_scaled", 3)
		if !after.Created.Equal(before.Created) || after.State.LastSeq != before.State.LastSeq {
			t.Fatalf("after scaling: created %v last seq %d, want %v %d (the bucket was recreated)",
				after.Created, after.State.LastSeq, before.Created, before.State.LastSeq)
		}
		if got := readWhenThere(t, st, "a.bin"); !bytes.Equal(got, big) {
			t.Fatalf("a.bin after scaling: %d bytes, want %d", len(got), len(big))
		}
	})

	t.Run("leader lost", func(t *testing.T) {
		st, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "media", Create: true, Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		info := natstest.WaitReplicated(t, js, "OBJ_media", 3)
		if _, err := st.Put(ctx, "before.bin", "application/octet-stream", bytes.NewReader(big)); err != nil {
			t.Fatal(err)
		}
		leader := cl.Node(info.Cluster.Leader)
		if leader == nil {
			t.Fatalf("no node named %q", info.Cluster.Leader)
		}
		leader.Stop()
		// A new leader is elected among the two others: retry the Put until it is taken (a
		// failed Put leaves nothing).
		deadline := time.Now().Add(15 * time.Second)
		for {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := st.Put(pctx, "after.bin", "application/octet-stream", bytes.NewReader(big[:1000]))
			pcancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no put with the leader %s down: %v", leader.Name(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := readWhenThere(t, st, "before.bin"); !bytes.Equal(got, big) {
			t.Fatalf("before.bin with the leader down: %d bytes, want %d", len(got), len(big))
		}
		if got := readWhenThere(t, st, "after.bin"); !bytes.Equal(got, big[:1000]) {
			t.Fatalf("after.bin with the leader down: %d bytes, want 1000", len(got))
		}
		leader.Restart(t)
		natstest.WaitReplicated(t, js, "OBJ_media", 3)
	})
}
