package blob_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/blob"
	"vitrine/sync/natstest"
)

// Put and read throughput of both back ends (go test -run '^$' -bench . ./sync/blob/): the
// object store's embedded server runs in the same process, so its numbers include the server.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	srv := natstest.Run(b)
	js, err := jetstream.New(srv.Connect(b))
	if err != nil {
		b.Fatal(err)
	}
	obs, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	fsys, err := blob.NewFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	const size = 8 << 20
	// The baseline: nats.go's own object store, same server, same sizes.
	natsgo, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "natsgo"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("natsgo/put", func(b *testing.B) {
		b.SetBytes(size)
		for i := range b.N {
			if _, err := natsgo.Put(ctx, jetstream.ObjectMeta{Name: fmt.Sprint(i)}, &pattern{n: size}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("natsgo/read-from-0", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			r, err := natsgo.Get(ctx, "0")
			if err != nil {
				b.Fatal(err)
			}
			if n, err := io.Copy(io.Discard, r); err != nil || n != size {
				b.Fatal(n, err)
			}
			r.Close()
		}
	})
	for _, st := range []struct {
		name string
		s    blob.Store
	}{{"fs", fsys}, {"objectstore", obs}} {
		b.Run(st.name+"/put", func(b *testing.B) {
			b.SetBytes(size)
			for i := range b.N {
				if _, err := st.s.Put(ctx, fmt.Sprintf("bench/put-%d", i), "", &pattern{n: size, seed: byte(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		if _, err := st.s.Put(ctx, "bench/read", "", &pattern{n: size}); err != nil && !isExists(err) {
			b.Fatal(err)
		}
		for _, off := range []int64{0, size - 1<<20} {
			b.Run(fmt.Sprintf("%s/read-from-%d", st.name, off), func(b *testing.B) {
				b.SetBytes(size - off)
				buf := make([]byte, 32<<10)
				for range b.N {
					o, err := st.s.Open(ctx, "bench/read", off)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{o}, buf); err != nil || n != size-off {
						b.Fatal(n, err)
					}
					o.Close()
				}
			})
		}
		if st.name == "objectstore" {
			// An object written by nats.go (no chunk index): an offset costs discarding the
			// bytes before it.
			theirs, err := js.ObjectStore(ctx, blob.DefaultBucket)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := theirs.Put(ctx, jetstream.ObjectMeta{Name: "bench/theirs"}, &pattern{n: size}); err != nil {
				b.Fatal(err)
			}
			b.Run("objectstore/read-from-7340032-without-index", func(b *testing.B) {
				const off = size - 1<<20
				b.SetBytes(size - off)
				for range b.N {
					o, err := st.s.Open(ctx, "bench/theirs", off)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, struct{ io.Reader }{o}); err != nil || n != size-off {
						b.Fatal(n, err)
					}
					o.Close()
				}
			})
		}
		b.Run(st.name+"/stat", func(b *testing.B) {
			for range b.N {
				if _, err := st.s.Stat(ctx, "bench/read"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func isExists(err error) bool { return errors.Is(err, blob.ErrExists) }
