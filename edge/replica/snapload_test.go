package replica_test

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/edge/search"
	"vitrine/schema"
	syncfeed "vitrine/sync/feed"
	"vitrine/sync/snapshot"
)

// snapCatalog returns the snapshot bytes of the registry and of shard 0 holding one store of n
// products with benchVariantsPerProduct variants each (the bench's shard shape: 100k products
// are 400k entities), and the raw JSON size of the entity states.
func snapCatalog(tb testing.TB, n int) (platform, shard []byte, raw int64) {
	tb.Helper()
	reg, batch := benchCatalog(n) // each ends with its log's head
	cfg := syncfeed.Config{}.WithDefaults()
	seq := uint64(0)
	recs := func(cs []*schema.Change, shard int) []snapshot.Record {
		out := make([]snapshot.Record, 0, len(cs))
		for _, c := range cs {
			seq++
			raw += int64(len(c.Data))
			out = append(out, snapshot.Record{Seq: seq, Subject: cfg.Subject(shard, c.Log, c.Key()), Data: c.Encode()})
		}
		return out
	}
	epoch, created := "e", t0
	pr := recs(reg, 0)
	sr := recs(batch, 0)
	var err error
	platform, err = snapshot.Encode(snapshot.Header{Epoch: epoch, Created: created, Shard: schema.PlatformLog, Seq: seq, ListedAt: seq,
		Shards: []string{"0"}, Heads: []snapshot.Head{{Log: schema.PlatformLog, Version: reg[len(reg)-1].Version}}, Taken: time.Now()}, pr)
	if err != nil {
		tb.Fatal(err)
	}
	shard, err = snapshot.Encode(snapshot.Header{Epoch: epoch, Created: created, Shard: "0", Seq: seq,
		Heads: []snapshot.Head{{Log: "shop", Version: batch[len(batch)-1].Version}}, Taken: time.Now()}, sr)
	if err != nil {
		tb.Fatal(err)
	}
	return platform, shard, raw
}

// withImages returns shard re-encoded with the search index images the snapshot writer adds
// (replica.SnapshotAnnexes over platform and shard).
func withImages(tb testing.TB, platform, shard []byte) []byte {
	tb.Helper()
	ps, err := snapshot.Open(platform)
	if err != nil {
		tb.Fatal(err)
	}
	ss, err := snapshot.Open(shard)
	if err != nil {
		tb.Fatal(err)
	}
	annexes, err := replica.SnapshotAnnexes(context.Background(), snapshot.Part(ps), snapshot.Part(ss))
	if err != nil || len(annexes) == 0 {
		tb.Fatalf("annexes %d, %v", len(annexes), err)
	}
	var recs []snapshot.Record
	if err := ss.Records(func(r snapshot.Record) error { recs = append(recs, r); return nil }); err != nil {
		tb.Fatal(err)
	}
	b, err := snapshot.Encode(ss.Header(), recs, annexes...)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// A bootstrap from a snapshot carrying the search index image uses it, and its index answers
// every query and suggestion as the index a bootstrap without the image builds; so does a
// bootstrap given an image that does not fit (it is refused and the index built).
func TestSnapshotImageEqualsBuild(t *testing.T) {
	const n = 3000
	platform, shard, _ := snapCatalog(t, n)
	imaged := withImages(t, platform, shard)
	built := newReplica(replica.Config{})
	loadSnapshots(t, built, platform, shard)
	fromImage := newReplica(replica.Config{})
	loadSnapshots(t, fromImage, platform, imaged)
	if st := fromImage.Stats(); st.IndexImagesUsed != 1 || st.IndexImagesRefused != 0 {
		t.Fatalf("stats %+v: want the image used", st)
	}
	if st := built.Stats(); st.IndexImagesUsed != 0 || st.IndexImagesRefused != 0 {
		t.Fatalf("stats %+v: want no image", st)
	}
	sameSearches(t, built, fromImage)

	// The image of another state: ten products missing from the records (the head still
	// there, so the tenant's first apply is at the image's version, over other documents).
	ss, _ := snapshot.Open(imaged)
	annexes, _ := ss.Annexes()
	var recs []snapshot.Record
	dropped := 0
	ss.Records(func(r snapshot.Record) error {
		if dropped < 10 && strings.Contains(r.Subject, ".pub.product.") {
			dropped++
			return nil
		}
		recs = append(recs, r)
		return nil
	})
	cut, err := snapshot.Encode(ss.Header(), recs, annexes...)
	if err != nil {
		t.Fatal(err)
	}
	refused := newReplica(replica.Config{})
	loadSnapshots(t, refused, platform, cut)
	if st := refused.Stats(); st.IndexImagesUsed != 0 || st.IndexImagesRefused != 1 {
		t.Fatalf("stats %+v: want the image refused", st)
	}
	if ix, _ := refused.TenantBySlug("shop").Snapshot().SearchIndex(); ix.Len() != n-dropped {
		t.Fatalf("index of %d documents, want %d", ix.Len(), n-dropped)
	}
}

// sameSearches requires the "shop" tenants of a and b to answer a range of searches and
// suggestions alike.
func sameSearches(t *testing.T, a, b *replica.Replica) {
	t.Helper()
	ia, ca := a.TenantBySlug("shop").Snapshot().SearchIndex()
	ib, cb := b.TenantBySlug("shop").Snapshot().SearchIndex()
	if ia.Len() != ib.Len() || ca != cb {
		t.Fatalf("indexes of %d (%s) and %d (%s) documents", ia.Len(), ca, ib.Len(), cb)
	}
	lo, hi := int64(500), int64(5000)
	queries := []search.Query{
		{Limit: 30}, {Text: "product", Limit: 50}, {Text: "Product 12", Limit: 20, Offset: 10},
		{Text: "prodcut", Limit: 20}, {Text: "pro", Limit: 20}, {Text: "the of", Limit: 5},
		{Text: "product", Sort: search.PriceAsc, MinPrice: &lo, MaxPrice: &hi, Limit: 40},
		{Sort: search.Newest, Limit: 25, Offset: 100}, {Sort: search.TitleAsc, Limit: 25},
		{Availability: []schema.Availability{schema.InStock}, Limit: 25},
	}
	for _, q := range queries {
		ra, rb := ia.Search(q), ib.Search(q)
		if ra.Total != rb.Total || !slices.Equal(ra.Hits, rb.Hits) {
			t.Fatalf("query %+v: %d hits %v, and %d hits %v", q, ra.Total, ra.Hits, rb.Total, rb.Hits)
		}
	}
	for _, p := range []string{"p", "pr", "product", "product 1", "x", ""} {
		if sa, sb := ia.Suggest(p, 10), ib.Suggest(p, 10); !slices.Equal(sa, sb) {
			t.Fatalf("suggest %q: %v and %v", p, sa, sb)
		}
	}
}

// loadSnapshots bootstraps r from the two snapshots through the Follower's load path.
func loadSnapshots(tb testing.TB, r *replica.Replica, platform, shard []byte) {
	loadSnapshotsInto(tb, r, r, platform, shard)
}

// sinkOnly hides a Replica's Prepare: the load path then decodes entities at apply.
type sinkOnly struct{ *replica.Replica }

func loadSnapshotsNoPrepare(tb testing.TB, r *replica.Replica, platform, shard []byte) {
	loadSnapshotsInto(tb, r, sinkOnly{r}, platform, shard)
}

// loadRecords is loadSnapshots without the snapshots' decoded changes: every message decoded
// from its data (schema.DecodeChange) on the workers, as format 1 snapshots were loaded.
func loadRecords(tb testing.TB, r *replica.Replica, platform, shard []byte) {
	loadSnapshotsWith(tb, r, r, platform, shard, true)
}

func loadSnapshotsInto(tb testing.TB, r *replica.Replica, sink syncfeed.Sink, platform, shard []byte) {
	loadSnapshotsWith(tb, r, sink, platform, shard, false)
}

func loadSnapshotsWith(tb testing.TB, r *replica.Replica, sink syncfeed.Sink, platform, shard []byte, recordsOnly bool) {
	tb.Helper()
	var parts []syncfeed.SnapshotPart
	for _, b := range [][]byte{platform, shard} {
		s, err := snapshot.Open(b)
		if err != nil {
			tb.Fatal(err)
		}
		p := snapshot.Part(s)
		if recordsOnly {
			p.Changes = nil
		}
		parts = append(parts, p)
	}
	r.Reset("e")
	if _, bad, err := syncfeed.DeliverSnapshots(context.Background(), sink, parts); err != nil || bad != 0 {
		tb.Fatalf("deliver: %d malformed, %v", bad, err)
	}
	r.Checkpoint()
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func snapLoadProducts() int {
	if v, err := strconv.Atoi(os.Getenv("VITRINE_SNAPLOAD_PRODUCTS")); err == nil && v > 0 {
		return v
	}
	return 100_000
}

// loadStream bootstraps r from the same records the way the stream path does: decoded one at
// a time on the delivering goroutine, the entity decoded at apply.
func loadStream(tb testing.TB, r *replica.Replica, platform, shard []byte) {
	tb.Helper()
	r.Reset("e")
	for _, b := range [][]byte{platform, shard} {
		s, err := snapshot.Open(b)
		if err != nil {
			tb.Fatal(err)
		}
		err = s.Records(func(rec snapshot.Record) error {
			c, err := schema.DecodeChange(rec.Data)
			if err != nil {
				return err
			}
			r.Change(c)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	r.Checkpoint()
}

// BenchmarkSnapshotLoad bootstraps an empty replica from the snapshots of one store of 100k
// products (VITRINE_SNAPLOAD_PRODUCTS), 400k entities: the edge's cold start without the
// fetch ("snapshot"; "snapshot-image" from the snapshot with the store's search index image,
// as the relay writes it; "snapshot-noprepare" without decoding entities ahead; "records" decoding
// every message's JSON as format 1 snapshots were loaded), and, from the same records, the
// stream path's way of delivering them ("stream": one change at a time, entities decoded at
// apply). After the load and a forced
// collection it reports, against the entities' raw JSON, what the load added (the snapshots
// themselves are held throughout): to the live heap (heap/raw), to the heap's spans in use
// (inuse/raw: live plus the free space inside partly used spans) and to what the heap holds
// from the system (sys/raw: in use plus free spans not returned).
func BenchmarkSnapshotLoad(b *testing.B) {
	n := snapLoadProducts()
	platform, shard, raw := snapCatalog(b, n)
	imaged := withImages(b, platform, shard)
	for _, path := range []string{"snapshot", "snapshot-image", "snapshot-noprepare", "records", "stream"} {
		b.Run(path, func(b *testing.B) {
			load := map[string]func(testing.TB, *replica.Replica, []byte, []byte){
				"snapshot": loadSnapshots, "snapshot-noprepare": loadSnapshotsNoPrepare, "records": loadRecords, "stream": loadStream,
				"snapshot-image": func(tb testing.TB, r *replica.Replica, platform, _ []byte) { loadSnapshots(tb, r, platform, imaged) }}[path]
			b.ReportAllocs()
			var ms, base runtime.MemStats
			var cpu time.Duration
			b.StopTimer()
			// VITRINE_SNAPLOAD_CPUPROFILE names a file for a CPU profile of the loads alone
			// (without building the snapshots, which -test.cpuprofile would include).
			if name := os.Getenv("VITRINE_SNAPLOAD_CPUPROFILE"); name != "" {
				f, err := os.Create(name + "." + path)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				runtime.GC()
				if err := pprof.StartCPUProfile(f); err != nil {
					b.Fatal(err)
				}
				defer pprof.StopCPUProfile()
			}
			for i := 0; i < b.N; i++ {
				runtime.GC()
				debug.FreeOSMemory()
				runtime.ReadMemStats(&base)
				c0 := cpuTime()
				b.StartTimer()
				r := newReplica(replica.Config{})
				load(b, r, platform, shard)
				b.StopTimer()
				cpu += cpuTime() - c0
				tn := r.TenantBySlug("shop")
				ix, _ := tn.Snapshot().SearchIndex()
				if !r.Ready() || tn.Snapshot().ProductCount() != n || ix.Len() != n {
					b.Fatalf("not loaded: ready=%v products=%d indexed=%d", r.Ready(), tn.Snapshot().ProductCount(), ix.Len())
				}
				runtime.GC()
				debug.FreeOSMemory()
				runtime.ReadMemStats(&ms)
				runtime.KeepAlive(r)
			}
			b.ReportMetric(float64(ms.HeapAlloc-base.HeapAlloc)/float64(raw), "heap/raw")
			b.ReportMetric(float64(ms.HeapInuse-base.HeapInuse)/float64(raw), "inuse/raw")
			b.ReportMetric(float64((ms.HeapSys-ms.HeapReleased)-(base.HeapSys-base.HeapReleased))/float64(raw), "sys/raw")
			size := len(shard)
			if path == "snapshot-image" {
				size = len(imaged)
			}
			b.ReportMetric(float64(size)/(1<<20), "snapMiB")
			b.ReportMetric(float64(raw)/(1<<20), "rawMiB")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
