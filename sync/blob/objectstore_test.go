package blob_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/blob"
	"vitrine/sync/natstest"
)

// shortReads returns at most n bytes per read: nats.go's own Put then writes chunks of uneven
// sizes.
type shortReads struct {
	r io.Reader
	n int
}

func (s shortReads) Read(b []byte) (int, error) { return s.r.Read(b[:min(len(b), s.n)]) }

// The object store specifics: readers bind and never create; a full bucket refuses a Put and
// keeps nothing of it; objects of nats.go's own object store (uneven chunks, no chunk index,
// deletion markers) read at any offset, and nats.go reads ours; an object deleted under a
// reader ends the read with an error, not a hang; a corrupt meta message is an error, skipped
// by Walk.
func TestObjectStore(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Run(t)
	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("readers bind only", func(t *testing.T) {
		// A reader (an edge) starts before the writer ever made the bucket: it never creates
		// it, every object is not found, and it binds once the bucket exists.
		early, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bind"})
		if err != nil {
			t.Fatalf("a reader could not start before its bucket existed: %v", err)
		}
		if _, err := early.Stat(ctx, "x"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat in a missing bucket: %v", err)
		}
		if _, err := early.Open(ctx, "x", 0); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("open in a missing bucket: %v", err)
		}
		if _, err := js.Stream(ctx, "OBJ_bind"); !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Fatalf("the reader created the bucket: %v", err)
		}
		w, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bind", Create: true, Replicas: 1, MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		// The writer starting again updates the bucket in place.
		if _, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bind", Create: true, MaxBytes: 2 << 20}); err != nil {
			t.Fatalf("the writer's restart: %v", err)
		}
		body := data(300<<10, 1)
		put(t, w, "x", "image/png", body)
		r, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bind"})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := readAll(t, r, "x", 100); !bytes.Equal(got, body[100:]) {
			t.Fatal("the reader reads other bytes")
		}
		if got, _ := readAll(t, early, "x", 0); !bytes.Equal(got, body) {
			t.Fatal("the reader started before the bucket does not read it now")
		}
		if _, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bad.name", Create: true}); err == nil {
			t.Fatal("an invalid bucket name was accepted")
		}
		if _, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "bind", ChunkSize: 64 << 20}); err == nil {
			t.Fatal("a chunk size over the max payload was accepted")
		}
	})

	t.Run("full bucket", func(t *testing.T) {
		s, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "full", Create: true, MaxBytes: 64 << 10, ChunkSize: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx, "too/big", "", &pattern{n: 200 << 10}); !errors.Is(err, blob.ErrNoSpace) {
			t.Fatalf("a put over the bucket's bound: %v", err)
		}
		if _, err := s.Stat(ctx, "too/big"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat: %v", err)
		}
		st, err := js.Stream(ctx, "OBJ_full")
		if err != nil {
			t.Fatal(err)
		}
		if n := st.CachedInfo().State.Msgs; n != 0 {
			t.Fatalf("the refused put left %d messages", n)
		}
		put(t, s, "small", "", data(10<<10, 2))
	})

	t.Run("nats.go's objects and ours", func(t *testing.T) {
		s, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "interop", Create: true})
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := js.ObjectStore(ctx, "interop")
		if err != nil {
			t.Fatal(err)
		}
		body := data(700<<10+5, 3)
		if _, err := theirs.Put(ctx, jetstream.ObjectMeta{Name: "theirs/uneven.bin", Headers: nats.Header{"Content-Type": {"video/mp4"}}},
			shortReads{bytes.NewReader(body), 50 << 10}); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, "theirs/uneven.bin")
		if err != nil || info.Size != int64(len(body)) || info.SHA256 != digest(body) || info.ContentType != "video/mp4" || info.Modified.IsZero() {
			t.Fatalf("stat of nats.go's object: %+v %v", info, err)
		}
		for _, off := range []int64{0, 1, 50 << 10, 50<<10 + 1, 333333, int64(len(body)) - 1} {
			if got, _ := readAll(t, s, "theirs/uneven.bin", off); !bytes.Equal(got, body[off:]) {
				t.Fatalf("offset %d of nats.go's object: %d bytes", off, len(got))
			}
		}
		ours := put(t, s, "ours/even.bin", "image/jpeg", body)
		r, err := theirs.Get(ctx, "ours/even.bin")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r) // nats.go checks the digest at the end
		r.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("nats.go reads ours: %d bytes, %v", len(got), err)
		}
		oi, err := theirs.GetInfo(ctx, "ours/even.bin")
		if err != nil || oi.Headers.Get("Content-Type") != "image/jpeg" || oi.Size != uint64(ours.Size) {
			t.Fatalf("nats.go's info of ours: %+v %v", oi, err)
		}
		// nats.go deletes with a marker: gone for us, and the name is free.
		if err := theirs.Delete(ctx, "theirs/uneven.bin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "theirs/uneven.bin"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat after nats.go's delete: %v", err)
		}
		if got := names(t, s, ""); !slices.Equal(got, []string{"ours/even.bin"}) {
			t.Fatalf("walk: %v", got)
		}
		put(t, s, "theirs/uneven.bin", "text/plain", []byte("again"))
		if err := s.Delete(ctx, "theirs/uneven.bin"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("deleted under a reader", func(t *testing.T) {
		s, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "vanish", Create: true, ChunkSize: 4 << 10, ReadAhead: 4 << 10, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		put(t, s, "v", "", data(64<<10, 4))
		o, err := s.Open(ctx, "v", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if _, err := io.ReadFull(o, make([]byte, 4<<10)); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "v"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = io.Copy(io.Discard, struct{ io.Reader }{o})
		if err == nil || time.Since(start) > time.Second {
			t.Fatalf("reading a deleted object: %v after %v", err, time.Since(start))
		}
		if _, err := o.Read(make([]byte, 1)); err == nil {
			t.Fatal("a failed object reads again")
		}
	})

	t.Run("corrupt meta message", func(t *testing.T) {
		s, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: "corrupt", Create: true})
		if err != nil {
			t.Fatal(err)
		}
		put(t, s, "good", "", []byte("fine"))
		for name, meta := range map[string]string{
			"bad1": "{not json",
			"bad2": `{"name":"bad2","nuid":"x","size":10,"chunks":0,"digest":"SHA-256=AAAA"}`,
			"bad3": `{"name":"other","nuid":"x","size":0,"chunks":0,"digest":"SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="}`,
		} {
			enc := "$O.corrupt.M." + base64.URLEncoding.EncodeToString([]byte(name))
			if _, err := js.Publish(ctx, enc, []byte(meta)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Stat(ctx, name); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("stat of %s: %v", name, err)
			}
			if _, err := s.Open(ctx, name, 0); err == nil {
				t.Errorf("open of %s succeeded", name)
			}
		}
		if got := names(t, s, ""); !slices.Equal(got, []string{"good"}) {
			t.Fatalf("walk: %v", got)
		}
	})
}
