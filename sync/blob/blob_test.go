package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/blob"
	"vitrine/sync/natstest"
)

// backend is one Store implementation under the conformance suite.
type backend struct {
	name string
	// open returns a fresh, empty store.
	open func(t *testing.T) blob.Store
	// residue describes what the store holds besides its committed objects (temporary files,
	// unreferenced chunks): "" when nothing.
	residue func(t *testing.T, s blob.Store) string
	// chunk is the back end's unit of transfer (0: none), to place offsets around.
	chunk int
}

// suiteChunk is the ObjectStore chunk size of the suite: small, so that small test objects span
// many chunks and read batches.
const suiteChunk = 1 << 10

func fsBackend() backend {
	return backend{
		name: "fs",
		open: func(t *testing.T) blob.Store {
			s, err := blob.NewFS(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		residue: func(t *testing.T, s blob.Store) string {
			var left []string
			filepath.WalkDir(s.(*blob.FS).Root(), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasSuffix(path, "~") {
					left = append(left, path)
				}
				return nil
			})
			if len(left) > 0 {
				return fmt.Sprintf("files left: %v", left)
			}
			return ""
		},
	}
}

// natsBackend runs one embedded server for the test; each store is a new bucket on it.
func natsBackend(t *testing.T) backend {
	srv := natstest.Run(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	buckets := 0
	return backend{
		name:  "objectstore",
		chunk: suiteChunk,
		open: func(t *testing.T) blob.Store {
			mu.Lock()
			buckets++
			bucket := fmt.Sprintf("suite-%d", buckets)
			mu.Unlock()
			s, err := blob.NewObjectStore(context.Background(), js, blob.ObjectStoreConfig{
				Bucket: bucket, Create: true, ChunkSize: suiteChunk, ReadAhead: 4 * suiteChunk, PutWindow: 4, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		residue: func(t *testing.T, s blob.Store) string {
			ctx := context.Background()
			want := uint64(0)
			if err := s.Walk(ctx, "", func(i blob.Info) error {
				want += 1 + uint64((i.Size+suiteChunk-1)/suiteChunk)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			st, err := js.Stream(ctx, "OBJ_"+s.(*blob.ObjectStore).Bucket())
			if err != nil {
				t.Fatal(err)
			}
			if got := st.CachedInfo().State.Msgs; got != want {
				return fmt.Sprintf("the bucket holds %d messages, its objects %d", got, want)
			}
			return ""
		},
	}
}

// pattern is a reader of n deterministic bytes that holds none of them: byte x is
// patternBlock[(x + x>>16 + seed*977) % len(patternBlock)], so each 64 KiB stretch is another
// rotation of the block (a misplaced chunk shows) and a read is two copies.
type pattern struct {
	n, off int64
	seed   byte
}

var patternBlock = func() []byte {
	b := make([]byte, 65521) // prime: no alignment with chunk sizes
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}()

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.n-p.off))
	for k := 0; k < n; {
		x := p.off + int64(k)
		i := int((x + x>>16 + int64(p.seed)*977) % int64(len(patternBlock)))
		// Up to the end of the block and of the current 64 KiB stretch.
		m := min(n-k, len(patternBlock)-i, int(1<<16-x&(1<<16-1)))
		k += copy(b[k:k+m], patternBlock[i:])
	}
	p.off += int64(n)
	return n, nil
}

func data(n int, seed byte) []byte {
	b, _ := io.ReadAll(&pattern{n: int64(n), seed: seed})
	return b
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// cancelAfter reads r and cancels after n bytes.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(b []byte) (int, error) {
	k, err := c.r.Read(b)
	if c.n -= k; c.n <= 0 {
		c.cancel()
	}
	return k, err
}

// failAfter reads r and fails after n bytes.
type failAfter struct {
	r io.Reader
	n int
}

var errSource = errors.New("the upload's source broke")

func (f *failAfter) Read(b []byte) (int, error) {
	if f.n <= 0 {
		return 0, errSource
	}
	k, err := f.r.Read(b[:min(len(b), f.n)])
	f.n -= k
	return k, err
}

func readAll(t *testing.T, s blob.Store, name string, offset int64) ([]byte, blob.Info) {
	t.Helper()
	o, err := s.Open(context.Background(), name, offset)
	if err != nil {
		t.Fatalf("open %s at %d: %v", name, offset, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s at %d: %v", name, offset, err)
	}
	return b, o.Info()
}

func put(t *testing.T, s blob.Store, name, ct string, b []byte) blob.Info {
	t.Helper()
	info, err := s.Put(context.Background(), name, ct, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	return info
}

func sameInfo(a, b blob.Info) bool {
	return a.Name == b.Name && a.Size == b.Size && a.SHA256 == b.SHA256 && a.ContentType == b.ContentType && a.Modified.Equal(b.Modified)
}

func names(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var got []string
	if err := s.Walk(context.Background(), prefix, func(i blob.Info) error {
		got = append(got, i.Name)
		return nil
	}); err != nil {
		t.Fatalf("walk %q: %v", prefix, err)
	}
	slices.Sort(got)
	return got
}

// conformance is the behaviour every Store has (the package invariants).
var conformance = []struct {
	name string
	run  func(t *testing.T, b backend, s blob.Store)
}{
	{"put, stat and open", func(t *testing.T, b backend, s blob.Store) {
		body := data(10*suiteChunk+77, 1)
		before := time.Now().Add(-time.Second)
		info := put(t, s, "media/t1/2026/11/photo-9f86d081884c.jpg", "image/jpeg", body)
		want := blob.Info{Name: "media/t1/2026/11/photo-9f86d081884c.jpg", Size: int64(len(body)), SHA256: digest(body), ContentType: "image/jpeg", Modified: info.Modified}
		if !sameInfo(info, want) || info.Modified.Before(before) || info.Modified.After(time.Now().Add(time.Second)) || info.Modified.Location() != time.UTC {
			t.Fatalf("put: %+v, want %+v", info, want)
		}
		st, err := s.Stat(context.Background(), info.Name)
		if err != nil || !sameInfo(st, info) {
			t.Fatalf("stat: %+v %v, want %+v", st, err, info)
		}
		got, oi := readAll(t, s, info.Name, 0)
		if !bytes.Equal(got, body) || !sameInfo(oi, info) {
			t.Fatalf("open: %d bytes (want %d), info %+v", len(got), len(body), oi)
		}
	}},
	{"default content type and empty object", func(t *testing.T, b backend, s blob.Store) {
		info := put(t, s, "empty", "", nil)
		if info.Size != 0 || info.SHA256 != digest(nil) || info.ContentType != blob.DefaultContentType {
			t.Fatalf("put: %+v", info)
		}
		if got, oi := readAll(t, s, "empty", 0); len(got) != 0 || !sameInfo(oi, info) {
			t.Fatalf("open: %q %+v", got, oi)
		}
	}},
	{"offset reads", func(t *testing.T, b backend, s blob.Store) {
		body := data(9*suiteChunk+123, 2)
		put(t, s, "a/offsets.bin", "application/octet-stream", body)
		c := int64(max(b.chunk, 1))
		n := int64(len(body))
		for _, off := range []int64{0, 1, c - 1, c, c + 1, 4*c + 5, 8 * c, n - c, n - 2, n - 1, n} {
			got, info := readAll(t, s, "a/offsets.bin", off)
			if !bytes.Equal(got, body[off:]) || info.Size != n {
				t.Fatalf("offset %d: %d bytes, want %d", off, len(got), n-off)
			}
		}
		// Small reads across chunk boundaries.
		o, err := s.Open(context.Background(), "a/offsets.bin", 3)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		var got []byte
		p := make([]byte, 333)
		for {
			k, err := o.Read(p)
			got = append(got, p[:k]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, body[3:]) {
			t.Fatalf("small reads: %d bytes, want %d", len(got), n-3)
		}
	}},
	{"offset past the end and negative", func(t *testing.T, b backend, s blob.Store) {
		body := data(3*suiteChunk, 3)
		put(t, s, "past", "text/plain", body)
		for _, off := range []int64{int64(len(body)), int64(len(body)) + 1, 1 << 40} {
			got, info := readAll(t, s, "past", off)
			if len(got) != 0 || info.Size != int64(len(body)) {
				t.Fatalf("offset %d: read %d bytes, info %+v", off, len(got), info)
			}
		}
		if o, err := s.Open(context.Background(), "past", -1); err == nil {
			o.Close()
			t.Fatal("a negative offset opened")
		}
	}},
	{"not found", func(t *testing.T, b backend, s blob.Store) {
		ctx := context.Background()
		if _, err := s.Stat(ctx, "no/such/file.jpg"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat: %v", err)
		}
		if _, err := s.Open(ctx, "no/such/file.jpg", 0); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("open: %v", err)
		}
		if err := s.Delete(ctx, "no/such/file.jpg"); err != nil {
			t.Fatalf("delete of a missing name: %v", err)
		}
		if got := names(t, s, ""); len(got) != 0 {
			t.Fatalf("walk of an empty store: %v", got)
		}
	}},
	{"invalid names and content types", func(t *testing.T, b backend, s blob.Store) {
		ctx := context.Background()
		for _, name := range []string{"", "/abs", "a//b", "a/", "./a", "a/./b", "../x", "a/../../x", "..", ".",
			`a\b`, "a\x00b", "a b", "é.jpg", "a/b~", "a?b", "a%2e", strings.Repeat("a", blob.MaxSegmentLen+1),
			strings.Repeat("a/", blob.MaxNameLen/2) + "a"} {
			if _, err := s.Put(ctx, name, "text/plain", strings.NewReader("x")); !errors.Is(err, blob.ErrInvalidName) {
				t.Errorf("put %q: %v", name, err)
			}
			if _, err := s.Stat(ctx, name); !errors.Is(err, blob.ErrInvalidName) {
				t.Errorf("stat %q: %v", name, err)
			}
			if _, err := s.Open(ctx, name, 0); !errors.Is(err, blob.ErrInvalidName) {
				t.Errorf("open %q: %v", name, err)
			}
			if err := s.Delete(ctx, name); !errors.Is(err, blob.ErrInvalidName) {
				t.Errorf("delete %q: %v", name, err)
			}
		}
		for _, ct := range []string{"text/html\r\nX-Evil: 1", "image/\x00", "text/plain; é", strings.Repeat("a", blob.MaxContentTypeLen+1)} {
			if _, err := s.Put(ctx, "ok.txt", ct, strings.NewReader("x")); !errors.Is(err, blob.ErrInvalidContentType) {
				t.Errorf("put with content type %q: %v", ct, err)
			}
		}
		if got := names(t, s, ""); len(got) != 0 {
			t.Fatalf("refused puts stored %v", got)
		}
	}},
	{"delete", func(t *testing.T, b backend, s blob.Store) {
		ctx := context.Background()
		put(t, s, "d/one", "text/plain", data(5*suiteChunk+1, 4))
		put(t, s, "d/two", "text/plain", data(10, 5))
		if err := s.Delete(ctx, "d/one"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "d/one"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("stat after delete: %v", err)
		}
		if _, err := s.Open(ctx, "d/one", 0); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("open after delete: %v", err)
		}
		if err := s.Delete(ctx, "d/one"); err != nil {
			t.Fatalf("second delete: %v", err)
		}
		if got := names(t, s, ""); !slices.Equal(got, []string{"d/two"}) {
			t.Fatalf("after delete: %v", got)
		}
		// The name is free again, for other bytes too.
		other := data(100, 6)
		if info := put(t, s, "d/one", "image/png", other); info.SHA256 != digest(other) {
			t.Fatalf("put after delete: %+v", info)
		}
		if got, _ := readAll(t, s, "d/one", 0); !bytes.Equal(got, other) {
			t.Fatal("put after delete reads other bytes")
		}
	}},
	{"same bytes put again", func(t *testing.T, b backend, s blob.Store) {
		body := data(3*suiteChunk+9, 7)
		first := put(t, s, "again", "image/webp", body)
		second := put(t, s, "again", "image/webp", body)
		if !sameInfo(first, second) {
			t.Fatalf("second put: %+v, first %+v (the object is not rewritten)", second, first)
		}
		if got, _ := readAll(t, s, "again", 0); !bytes.Equal(got, body) {
			t.Fatal("bytes changed")
		}
	}},
	{"other bytes or type under an existing name", func(t *testing.T, b backend, s blob.Store) {
		ctx := context.Background()
		body := data(2*suiteChunk, 8)
		first := put(t, s, "taken", "image/gif", body)
		for what, tc := range map[string]struct {
			ct   string
			body []byte
		}{
			"other bytes":        {"image/gif", data(2*suiteChunk, 9)},
			"a longer body":      {"image/gif", append(slices.Clone(body), 1)},
			"a prefix":           {"image/gif", body[:10]},
			"other content type": {"image/png", body},
		} {
			if _, err := s.Put(ctx, "taken", tc.ct, bytes.NewReader(tc.body)); !errors.Is(err, blob.ErrExists) {
				t.Errorf("%s: %v", what, err)
			}
		}
		if st, err := s.Stat(ctx, "taken"); err != nil || !sameInfo(st, first) {
			t.Fatalf("after refused puts: %+v %v", st, err)
		}
		if got, _ := readAll(t, s, "taken", 0); !bytes.Equal(got, body) {
			t.Fatal("bytes changed")
		}
	}},
	{"cancelled or failed put leaves nothing", func(t *testing.T, b backend, s blob.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := s.Put(ctx, "x/cancelled", "text/plain", &cancelAfter{r: &pattern{n: 64 * suiteChunk}, n: 20 * suiteChunk, cancel: cancel})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled put: %v", err)
		}
		_, err = s.Put(context.Background(), "x/failed", "text/plain", &failAfter{r: &pattern{n: 64 * suiteChunk}, n: 20*suiteChunk + 7})
		if !errors.Is(err, errSource) {
			t.Fatalf("failed put: %v", err)
		}
		done, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if _, err := s.Put(done, "x/early", "text/plain", strings.NewReader("x")); !errors.Is(err, context.Canceled) {
			t.Fatalf("put with a done context: %v", err)
		}
		for _, name := range []string{"x/cancelled", "x/failed", "x/early"} {
			if _, err := s.Stat(context.Background(), name); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("stat %s: %v", name, err)
			}
			if _, err := s.Open(context.Background(), name, 0); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("open %s: %v", name, err)
			}
		}
		if got := names(t, s, ""); len(got) != 0 {
			t.Fatalf("walk: %v", got)
		}
		if r := b.residue(t, s); r != "" {
			t.Fatal(r)
		}
		// The name is usable afterwards.
		put(t, s, "x/cancelled", "text/plain", []byte("fine"))
	}},
	{"concurrent puts of one name", func(t *testing.T, b backend, s blob.Store) {
		const n = 12
		body := data(6*suiteChunk+3, 10)
		results := make([]blob.Info, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				results[i], errs[i] = s.Put(context.Background(), "race/same", "image/jpeg", bytes.NewReader(body))
			})
		}
		// Other bytes under another name: exactly one writer wins.
		others := make([]error, n)
		winners := make([]blob.Info, n)
		for i := range n {
			wg.Go(func() {
				<-start
				winners[i], others[i] = s.Put(context.Background(), "race/other", "image/jpeg", bytes.NewReader(data(3*suiteChunk, byte(20+i))))
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil || results[i].SHA256 != digest(body) || results[i].Size != int64(len(body)) {
				t.Fatalf("put %d of the same bytes: %+v %v", i, results[i], errs[i])
			}
		}
		won := -1
		for i, err := range others {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("puts %d and %d of other bytes both succeeded", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, blob.ErrExists):
				t.Fatalf("put %d of other bytes: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no put of other bytes succeeded")
		}
		if got, _ := readAll(t, s, "race/same", 0); !bytes.Equal(got, body) {
			t.Fatal("race/same reads other bytes")
		}
		if got, info := readAll(t, s, "race/other", 0); digest(got) != winners[won].SHA256 || !sameInfo(info, winners[won]) {
			t.Fatalf("race/other is not the winner's object: %+v, winner %+v", info, winners[won])
		}
		if got := names(t, s, "race/"); !slices.Equal(got, []string{"race/other", "race/same"}) {
			t.Fatalf("walk: %v", got)
		}
		if r := b.residue(t, s); r != "" {
			t.Fatal(r)
		}
	}},
	{"a name and names under it", func(t *testing.T, b backend, s blob.Store) {
		put(t, s, "a/b", "text/plain", []byte("file"))
		put(t, s, "a/b/c", "text/plain", []byte("under"))
		put(t, s, ".hidden/-x_y.z", "text/plain", []byte("dots"))
		for name, want := range map[string]string{"a/b": "file", "a/b/c": "under", ".hidden/-x_y.z": "dots"} {
			if got, _ := readAll(t, s, name, 0); string(got) != want {
				t.Fatalf("%s: %q", name, got)
			}
		}
	}},
	{"walk by prefix", func(t *testing.T, b backend, s blob.Store) {
		ctx := context.Background()
		all := []string{"a", "a/x", "a/y/z", "ab", "ab/c", "b/c", "media/t1/2026/11/p.jpg", "media/t10/p.jpg"}
		for i, name := range all {
			put(t, s, name, "text/plain", data(i*100, byte(i)))
		}
		for prefix, want := range map[string][]string{
			"":                 all,
			"a":                {"a", "a/x", "a/y/z", "ab", "ab/c"},
			"a/":               {"a/x", "a/y/z"},
			"a/y":              {"a/y/z"},
			"a/y/z":            {"a/y/z"},
			"ab/":              {"ab/c"},
			"media/t1/":        {"media/t1/2026/11/p.jpg"},
			"media/t1":         {"media/t1/2026/11/p.jpg", "media/t10/p.jpg"},
			"media/t1/2026/1":  {"media/t1/2026/11/p.jpg"},
			"zzz":              nil,
			"a/q/":             nil,
			"../":              nil,
			"a//":              nil,
			"/a":               nil,
			"media/t1/2026/11": {"media/t1/2026/11/p.jpg"},
		} {
			if got := names(t, s, prefix); !slices.Equal(got, want) {
				t.Errorf("walk %q: %v, want %v", prefix, got, want)
			}
		}
		var infos []blob.Info
		s.Walk(ctx, "a/y", func(i blob.Info) error { infos = append(infos, i); return nil })
		if st, _ := s.Stat(ctx, "a/y/z"); len(infos) != 1 || !sameInfo(infos[0], st) {
			t.Fatalf("walk's info: %+v, stat %+v", infos, st)
		}
		stop := errors.New("stop")
		calls := 0
		if err := s.Walk(ctx, "", func(blob.Info) error { calls++; return stop }); err != stop || calls != 1 {
			t.Fatalf("walk stopped by its callback: %v after %d calls", err, calls)
		}
		// A sweeper deletes what it walks.
		if err := s.Walk(ctx, "a", func(i blob.Info) error { return s.Delete(ctx, i.Name) }); err != nil {
			t.Fatal(err)
		}
		if got := names(t, s, ""); !slices.Equal(got, []string{"b/c", "media/t1/2026/11/p.jpg", "media/t10/p.jpg"}) {
			t.Fatalf("after the sweep: %v", got)
		}
		if r := b.residue(t, s); r != "" {
			t.Fatal(r)
		}
	}},
}

func TestConformance(t *testing.T) {
	for _, b := range []backend{fsBackend(), natsBackend(t)} {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range conformance {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, b, b.open(t))
				})
			}
		})
	}
}

// A multi-megabyte object goes in and out through small buffers, and neither back end holds it:
// the bytes the store moves keep pace with the bytes read (the object store's connection
// receives at most its read-ahead beyond them), and the live heap stays far below the object.
func TestStreaming(t *testing.T) {
	const size = 4 << 20
	srv := natstest.Run(t)
	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obs, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Create: true, PutWindow: 4, ReadAhead: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wantSum := func(off int64) string {
		h := sha256.New()
		p := &pattern{n: size, off: off}
		io.Copy(h, p)
		return hex.EncodeToString(h.Sum(nil))
	}
	for _, tc := range []struct {
		name  string
		store blob.Store
		// moved is the bytes the store has moved so far (sent and received), when measurable.
		moved func() int64
		slack int64 // what may be in flight beyond the bytes consumed
		// heap: the live heap is the store's alone (the object store's test server runs in
		// this process and caches a block of up to 8 MB: its connection counts instead).
		heap bool
	}{
		{"fs", fsys, nil, 0, true},
		{"objectstore", obs, func() int64 { st := nc.Stats(); return int64(st.InBytes + st.OutBytes) }, 4*128<<10 + 256<<10 + 256<<10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heap := func() int64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return int64(m.HeapAlloc)
			}
			base := heap()
			var movedAt0 int64
			if tc.moved != nil {
				movedAt0 = tc.moved()
			}
			// Half-way through the upload, the store has already sent what it read.
			src := &probe{r: &pattern{n: size}, at: size / 2, check: func() {
				if grown := heap() - base; tc.heap && grown > size/4 {
					t.Errorf("half-way through the put the heap grew by %d bytes", grown)
				}
				if tc.moved != nil {
					if sent := tc.moved() - movedAt0; sent < size/2-tc.slack {
						t.Errorf("half-way through the put (%d bytes read) the store sent %d", size/2, sent)
					}
				}
			}}
			info, err := tc.store.Put(ctx, "big/object.bin", "application/octet-stream", src)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != size || info.SHA256 != wantSum(0) || !src.checked {
				t.Fatalf("put: %+v (probe ran: %v)", info, src.checked)
			}
			for _, off := range []int64{0, size/2 + 12345} {
				o, err := tc.store.Open(ctx, "big/object.bin", off)
				if err != nil {
					t.Fatal(err)
				}
				var movedAtOpen int64
				if tc.moved != nil {
					movedAtOpen = tc.moved()
				}
				h := sha256.New()
				buf := make([]byte, 32<<10)
				read := int64(0)
				for {
					k, err := o.Read(buf)
					h.Write(buf[:k])
					read += int64(k)
					if tc.moved != nil {
						if got := tc.moved() - movedAtOpen; got > read+tc.slack {
							t.Fatalf("offset %d: %d bytes received for %d read", off, got, read)
						}
					}
					if tc.heap && read >= (size-off)/2 && read-int64(k) < (size-off)/2 {
						if grown := heap() - base; grown > size/4 {
							t.Errorf("offset %d: half-way through the read the heap grew by %d bytes", off, grown)
						}
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				o.Close()
				if read != size-off || hex.EncodeToString(h.Sum(nil)) != wantSum(off) {
					t.Fatalf("offset %d: read %d bytes, digest mismatch", off, read)
				}
				if tc.moved != nil && off > 0 {
					// The offset's chunk was asked for directly: the bytes before it never moved.
					if got := tc.moved() - movedAtOpen; got > (size-off)+tc.slack {
						t.Fatalf("offset %d: %d bytes received for %d", off, got, size-off)
					}
				}
			}
		})
	}
}

// probe reads r and calls check once, when at bytes have been read.
type probe struct {
	r       io.Reader
	at      int64
	read    int64
	check   func()
	checked bool
}

func (p *probe) Read(b []byte) (int, error) {
	k, err := p.r.Read(b)
	p.read += int64(k)
	if !p.checked && p.read >= p.at {
		p.checked = true
		p.check()
	}
	return k, err
}

// The FS layout: one file per object under the name's path with the '~' suffix, and nothing
// else once a Put is done.
func TestFSLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := blob.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	info := put(t, s, "media/t1/p.jpg", "image/jpeg", []byte("jpeg bytes"))
	var files []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if !slices.Equal(files, []string{"media/t1/p.jpg~"}) {
		t.Fatalf("files: %v", files)
	}
	b, err := os.ReadFile(filepath.Join(dir, "media/t1/p.jpg~"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "VITRINE-BLOB/1\n{") || !strings.HasSuffix(string(b), "jpeg bytes") || !strings.Contains(string(b), info.SHA256) {
		t.Fatalf("file: %q", b)
	}
	// A truncated file is refused, not served short.
	if err := os.Truncate(filepath.Join(dir, "media/t1/p.jpg~"), int64(len(b)-1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), "media/t1/p.jpg", 0); err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("open of a truncated file: %v", err)
	}
}
