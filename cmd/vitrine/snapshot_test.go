package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/edge/replica"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/relay"
	"vitrine/sync/snapshot"
)

// startSnapshotEdge runs an edge whose follower bootstraps from the snapshot bucket (the
// harness's startEdge, with the follower `vitrine edge --snapshots` makes).
func (s *system) startSnapshotEdge() *component {
	ctx, cancel := context.WithCancel(context.Background())
	nc := s.connect()
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	src, err := snapshot.NewSource(ctx, js, "")
	if err != nil {
		s.t.Fatal(err)
	}
	rep := replica.New(replica.Config{PlatformDomain: "vitrine.test", Logger: s.log})
	fol, err := feed.NewFollower(nc, s.fc, s.fc.PublicFilters(nil), rep, s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	fol.Watch = 100 * time.Millisecond
	fol.UseSnapshots(src)
	go fol.Run(ctx)
	if s.originAddr == "" {
		s.originAddr = freeAddr(s.t)
	}
	srv, err := edge.New(edge.Config{Origin: "http://" + s.originAddr, Logger: s.log, Blobs: s.mediaStore(), EdgeSecret: s.edgeSecret, RateLimit: -1}, rep)
	if err != nil {
		s.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	hs := srv.HTTPServer()
	c := &component{name: "snapshot edge", addr: ln.Addr().String(), rep: rep, fol: fol, edge: srv, cancel: cancel, done: make(chan struct{})}
	go func() { hs.Serve(ln); close(c.done) }()
	go func() { <-ctx.Done(); hs.Shutdown(); nc.Close() }()
	s.t.Cleanup(c.stop)
	return c
}

// snapshotWriter returns a snapshot writer on its own connection (the relay's role), adding
// the search index images as the relay does by default.
func (s *system) snapshotWriter() *snapshot.Writer {
	nc := s.connect()
	s.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	return snapshot.NewWriter(js, snapshot.WriterConfig{Feed: s.fc, Annexes: replica.SnapshotAnnexes, Logger: s.log})
}

// writeShardSnapshot makes a snapshot pass (snapshotWriter) and returns the bucket, shard 0's
// snapshot as written, opened, and its records.
func (s *system) writeShardSnapshot() (jetstream.ObjectStore, []byte, *snapshot.Snapshot, []snapshot.Record) {
	s.t.Helper()
	if _, err := s.snapshotWriter().WriteAll(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	nc := s.connect()
	s.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx := context.Background()
	obs, err := js.ObjectStore(ctx, snapshot.DefaultBucket)
	if err != nil {
		s.t.Fatal(err)
	}
	b, err := obs.GetBytes(ctx, "shard-0")
	if err != nil {
		s.t.Fatal(err)
	}
	snap, err := snapshot.Open(b)
	if err != nil {
		s.t.Fatal(err)
	}
	var recs []snapshot.Record
	if err := snap.Records(func(r snapshot.Record) error { recs = append(recs, r); return nil }); err != nil {
		s.t.Fatal(err)
	}
	return obs, b, snap, recs
}

// writeSteps makes n random writes (chaos_test's writer) on each writer.
func writeSteps(t *testing.T, ws []*writer, n int) {
	t.Helper()
	for _, w := range ws {
		for range n {
			if err := w.step(context.Background()); err != nil && schema.ErrorCode(err) != schema.CodeNotFound {
				t.Fatal(err)
			}
		}
	}
}

// publicRoutes lists a broad set of anonymous read routes of a tenant, as an edge serving from
// e lists them: catalog lists and pages, every product and its variants, search, categories,
// currencies, posts, and the CMS reads (posts and each post, pages, terms, types, users,
// search, discovery).
func publicRoutes(t *testing.T, addr, host string) []string {
	t.Helper()
	routes := []string{
		"/api/products?per_page=100", "/api/products?per_page=20&page=2", "/api/products?sort=price_desc&per_page=50",
		"/api/products/featured", "/api/categories", "/api/currencies", "/api/posts",
		"/api/search?q=Product", "/api/search?q=product+1", "/api/search/autocomplete?q=Pro",
	}
	for _, r := range []string{"/cms/v2/posts&per_page=100", "/cms/v2/pages", "/cms/v2/categories&per_page=100", "/cms/v2/tags",
		"/cms/v2/users", "/cms/v2", "/"} {
		routes = append(routes, "/index.php?rest_route="+r)
	}
	items := func(uri string) []map[string]any {
		r := call(t, "GET", addr, host, uri, "")
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("%s: %d %s", uri, r.status, r.body)
		}
		if m, ok := v.(map[string]any); ok {
			for _, x := range m {
				if a, ok := x.([]any); ok {
					v = a
					break
				}
			}
		}
		var out []map[string]any
		if a, ok := v.([]any); ok {
			for _, x := range a {
				if m, ok := x.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
		return out
	}
	for _, p := range items("/api/products?per_page=100") {
		if slug, ok := p["slug"].(string); ok {
			routes = append(routes, "/api/products/"+url.PathEscape(slug), "/api/products/"+url.PathEscape(slug)+"/variants")
		}
	}
	for _, p := range items("/index.php?rest_route=/cms/v2/posts&per_page=100") {
		if id, ok := p["id"].(float64); ok {
			routes = append(routes, fmt.Sprintf("/index.php?rest_route=/cms/v2/posts/%d", int64(id)))
		}
	}
	return routes
}

// sameBodies requires a and b to answer every public route of every slug alike, and returns
// how many routes were compared and how many of them answered 200.
func sameBodies(t *testing.T, a, b *component, slugs ...string) (n, ok int) {
	t.Helper()
	for _, slug := range slugs {
		host := slug + ".example.test"
		routes := publicRoutes(t, b.addr, host)
		if len(routes) < 30 {
			t.Fatalf("%s: only %d routes: the catalog is too small to compare", slug, len(routes))
		}
		for _, uri := range routes {
			ra, rb := call(t, "GET", a.addr, host, uri, ""), call(t, "GET", b.addr, host, uri, "")
			if ra.status != rb.status || string(ra.body) != string(rb.body) {
				t.Fatalf("%s %s: %s answers %d %.300s\n%s answers %d %.300s", slug, uri, a.name, ra.status, ra.body, b.name, rb.status, rb.body)
			}
			if ra.status == 200 {
				ok++
			} else {
				t.Logf("%s %s: both answer %d", slug, uri, ra.status)
			}
			n++
		}
	}
	return n, ok
}

// sameDigests requires two replicas to hold the same public state of every slug.
func sameDigests(t *testing.T, a, b *component, slugs ...string) {
	t.Helper()
	for _, slug := range slugs {
		da := a.rep.TenantBySlug(slug).Snapshot().Digest(slug, pubOnly...)
		db := b.rep.TenantBySlug(slug).Snapshot().Digest(slug, pubOnly...)
		if da.Sum() != db.Sum() {
			t.Fatalf("%s: %s and %s digests differ:\n%s", slug, a.name, b.name, strings.Join(da.Diff(db, 20), "\n"))
		}
	}
}

// An edge bootstrapped from snapshots (written, then followed by more writes) holds and serves
// exactly what an edge bootstrapped from the stream does: the same body for every public route
// of every tenant (searches and suggestions included, answered from the index the edge read
// from the snapshot's images), the same replica digests, the database's state.
func TestSnapshotEdgeEqualsStreamEdge(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	slugs := []string{"alpha", "beta"}
	var ws []*writer
	for i, slug := range slugs {
		tn, _ := s.tenant(slug)
		ws = append(ws, newWriter(s.db, tn, uint64(40+i)))
	}
	writeSteps(t, ws, 150)
	w := s.snapshotWriter()
	if _, err := w.WriteAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeSteps(t, ws, 40) // after the snapshot: the edge follows these from the stream

	fromSnap := s.startSnapshotEdge()
	fromStream := s.startEdge(edge.Config{})
	for _, e := range []*component{fromSnap, fromStream} {
		s.converged(e, pubOnly, slugs...)
	}
	if st := fromSnap.fol.Stats(); st.FromSnapshot != 1 || st.SnapshotFallbacks != 0 {
		t.Fatalf("snapshot edge follower %+v", st)
	}
	if st := fromSnap.rep.Stats(); st.IndexImagesUsed != uint64(len(slugs)) || st.IndexImagesRefused != 0 {
		t.Fatalf("snapshot edge replica %+v: want the index images of %d tenants used", st, len(slugs))
	}
	if st := w.Stats(); st.Last.Annexes != len(slugs) || st.Last.AnnexBytes == 0 {
		t.Fatalf("writer %+v: want %d index images", st, len(slugs))
	}
	sameDigests(t, fromSnap, fromStream, slugs...)
	n, ok := sameBodies(t, fromSnap, fromStream, slugs...)
	if ok < n*9/10 {
		t.Fatalf("only %d of %d routes answered 200", ok, n)
	}
	t.Logf("%d routes answered alike (%d of them 200); writer %+v; follower %+v", n, ok, w.Stats(), fromSnap.fol.Stats())
}

// A corrupt (flipped byte), truncated or other-epoch snapshot is refused: the edge counts the
// fallback with its reason, bootstraps from the stream and serves correctly.
func TestSnapshotFallbacks(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	tn, _ := s.tenant("alpha")
	ws := []*writer{newWriter(s.db, tn, 50)}
	writeSteps(t, ws, 80)
	obs, good, snap, recs := s.writeShardSnapshot()
	ctx := context.Background()
	h := snap.Header()
	h.Epoch = "some-other-epoch"
	otherEpoch, err := snapshot.Encode(h, recs)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)*2/3] ^= 0x10
	reference := s.startEdge(edge.Config{})
	s.converged(reference, pubOnly, "alpha")
	for _, tc := range []struct {
		name, reason string
		bytes        []byte
	}{
		{"flipped byte", "corrupt", flipped},
		{"truncated", "truncated", good[:len(good)/2]},
		{"other epoch", "epoch", otherEpoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := obs.PutBytes(ctx, "shard-0", tc.bytes); err != nil {
				t.Fatal(err)
			}
			e := s.startSnapshotEdge()
			s.converged(e, pubOnly, "alpha")
			st := e.fol.Stats()
			if st.SnapshotFallbacks != 1 || st.FromSnapshot != 0 || !strings.Contains(st.LastFallback, tc.reason) {
				t.Fatalf("follower %+v: want one fallback for %q", st, tc.reason)
			}
			sameDigests(t, e, reference, "alpha")
			r := call(t, "GET", e.addr, "alpha.example.test", "/api/products?per_page=100", "")
			if r.status != 200 || string(r.body) != string(call(t, "GET", reference.addr, "alpha.example.test", "/api/products?per_page=100", "").body) {
				t.Fatalf("after the fallback: %d %.200s", r.status, r.body)
			}
			e.stop()
		})
	}
}

// A snapshot whose index image does not fit the tenant's state (a byte of the image changed and
// the snapshot checksummed again, as a writer bug would leave it; an image of another version;
// of another currency) is still used for its records: the edge refuses the image, counts it,
// indexes the products itself and answers searches and suggestions as an edge from the stream.
func TestSnapshotIndexImageRefused(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	tn, _ := s.tenant("alpha")
	writeSteps(t, []*writer{newWriter(s.db, tn, 70)}, 80)
	obs, _, snap, recs := s.writeShardSnapshot()
	ctx := context.Background()
	annexes, err := snap.Annexes()
	if err != nil || len(annexes) != 1 || annexes[0].Log != "alpha" || annexes[0].Kind != feed.AnnexSearchIndex {
		t.Fatalf("annexes %+v, %v: want alpha's index image", annexes, err)
	}
	reference := s.startEdge(edge.Config{})
	s.converged(reference, pubOnly, "alpha")
	for _, tc := range []struct {
		name   string
		change func(a *feed.Annex)
	}{
		{"changed byte", func(a *feed.Annex) {
			a.Data = append([]byte(nil), a.Data...)
			a.Data[len(a.Data)/2] ^= 0x04
		}},
		{"other version", func(a *feed.Annex) { a.Version-- }},
		{"other currency", func(a *feed.Annex) { a.Params = "XTS" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := annexes[0]
			tc.change(&a)
			b, err := snapshot.Encode(snap.Header(), recs, a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := obs.PutBytes(ctx, "shard-0", b); err != nil {
				t.Fatal(err)
			}
			e := s.startSnapshotEdge()
			s.converged(e, pubOnly, "alpha")
			if st := e.fol.Stats(); st.FromSnapshot != 1 || st.SnapshotFallbacks != 0 {
				t.Fatalf("follower %+v: want the snapshot used", st)
			}
			if st := e.rep.Stats(); st.IndexImagesUsed != 0 || st.IndexImagesRefused != 1 {
				t.Fatalf("replica %+v: want the image refused", st)
			}
			sameDigests(t, e, reference, "alpha")
			if n, ok := sameBodies(t, e, reference, "alpha"); ok < n*9/10 {
				t.Fatalf("only %d of %d routes answered 200", ok, n)
			}
			e.stop()
		})
	}
}

// Snapshots written in the middle of a write burst, and edges started from them while the
// writes go on, converge to the database's state.
func TestSnapshotDuringWriteBurst(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	slugs := []string{"alpha", "beta", "gamma"}
	var ws []*writer
	for i, slug := range slugs {
		tn, _ := s.tenant(slug)
		ws = append(ws, newWriter(s.db, tn, uint64(60+i)))
	}
	writeSteps(t, ws, 30)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var written atomic.Int64
	errs := make(chan error, len(ws))
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := w.step(ctx)
				if err != nil && ctx.Err() == nil && schema.ErrorCode(err) != schema.CodeNotFound && schema.ErrorCode(err) != schema.CodeUnavailable {
					errs <- err
					return
				}
				written.Add(1)
				time.Sleep(3 * time.Millisecond)
			}
		}()
	}
	sw := s.snapshotWriter()
	var edges []*component
	for i := range 3 {
		time.Sleep(300 * time.Millisecond)
		res, err := sw.WriteAll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pass %d during the burst (%d writes so far): %+v", i, written.Load(), res)
		edges = append(edges, s.startSnapshotEdge())
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if written.Load() < 100 {
		t.Fatalf("only %d writes during the burst", written.Load())
	}
	for _, e := range edges {
		s.converged(e, pubOnly, slugs...)
		if st := e.fol.Stats(); st.FromSnapshot != 1 {
			t.Fatalf("%s: follower %+v", e.name, st)
		}
		// Every image a pass wrote (made, or kept from the pass before) is of its snapshot.
		if st := e.rep.Stats(); st.IndexImagesRefused != 0 {
			t.Fatalf("%s: replica %+v: an image of the snapshot did not match it", e.name, st)
		}
	}
	if st := sw.Stats(); st.Passes != 3 || st.Objects == 0 {
		t.Fatalf("writer %+v", st)
	}
}
