package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// bed is an embedded nats-server with a state stream the test publishes to as a relay would.
type bed struct {
	t     *testing.T
	nc    *nats.Conn
	js    jetstream.JetStream
	fc    feed.Config
	vers  map[string]int64 // per log
	shard map[string]int   // per log
}

func newBed(t *testing.T) *bed {
	ns := natstest.Run(t)
	nc := ns.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	b := &bed{t: t, nc: nc, js: js, fc: feed.Config{}.WithDefaults(), vers: map[string]int64{}, shard: map[string]int{}}
	if _, err := feed.EnsureStream(context.Background(), js, b.fc, "epoch-1"); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bed) publish(subject string, c *schema.Change) {
	b.t.Helper()
	m := nats.NewMsg(subject)
	m.Data = c.Encode()
	m.Header.Set(feed.HeaderEpoch, "epoch-1")
	if _, err := b.js.PublishMsg(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
}

// tx publishes one transaction of a log: products ids set to a body (or deleted when body is
// ""), then the log's head.
func (b *bed) tx(log string, shard int, ids map[string]string) {
	b.t.Helper()
	b.txBody(log, shard, ids)
	b.head(log, shard)
}

// txBody publishes a transaction of log without its head: what a reader between two messages
// of the batch sees (JetStream stores a batch one message at a time).
func (b *bed) txBody(log string, shard int, ids map[string]string) {
	b.t.Helper()
	if _, ok := b.shard[log]; !ok {
		b.shard[log] = shard
		b.vers[schema.PlatformLog]++
		v := b.vers[schema.PlatformLog]
		b.publish(b.fc.Subject(0, schema.PlatformLog, "pub.tenant."+log), &schema.Change{Schema: 1, Log: schema.PlatformLog, Kind: schema.KindTenant,
			ID: log, Vis: schema.Pub, Version: v, TxnFirst: v, TxnLast: v, Data: json.RawMessage(fmt.Sprintf(`{"slug":%q,"shard":%d}`, log, shard))})
		b.publish(b.fc.HeadSubject(0, schema.PlatformLog), &schema.Change{Schema: 1, Log: schema.PlatformLog, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: v})
	}
	first := b.vers[log] + 1
	last := b.vers[log] + int64(len(ids))
	for id, body := range ids {
		b.vers[log]++
		c := &schema.Change{Schema: 1, Log: log, Kind: schema.KindProduct, ID: id, Vis: schema.Pub, Version: b.vers[log], TxnFirst: first, TxnLast: last}
		if body == "" {
			c.Deleted = true
		} else {
			c.Data = json.RawMessage(body)
		}
		b.publish(b.fc.Subject(shard, log, c.Key()), c)
	}
}

// head publishes log's head at its last version.
func (b *bed) head(log string, shard int) {
	b.t.Helper()
	b.publish(b.fc.HeadSubject(shard, log), &schema.Change{Schema: 1, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: b.vers[log]})
}

// products is a transaction of n products id0..n-1 with bodies tagged tag.
func products(from, n int, tag string) map[string]string {
	m := map[string]string{}
	for i := from; i < from+n; i++ {
		m[fmt.Sprint(i)] = fmt.Sprintf(`{"name":"%s-%d","pad":"%s"}`, tag, i, strings.Repeat("x", i%50))
	}
	return m
}

// fullSet reads a filter's last messages straight from the stream.
func (b *bed) fullSet(filter string) map[string]string {
	b.t.Helper()
	st, err := b.js.Stream(context.Background(), b.fc.Stream)
	if err != nil {
		b.t.Fatal(err)
	}
	set := &recordSet{index: map[string]int{}}
	if _, err := readStream(context.Background(), st, filter, 0, "epoch-1", time.Minute, set, nil); err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range set.live() {
		out[r.Subject] = string(r.Data)
	}
	return out
}

func (b *bed) stored(src *Source, shard string) (Header, map[string]string) {
	b.t.Helper()
	s, _, err := src.Fetch(context.Background(), shard, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	if err := s.Records(func(r Record) error { out[r.Subject] = string(r.Data); return nil }); err != nil {
		b.t.Fatal(err)
	}
	return s.Header(), out
}

func TestIncrementalEqualsFull(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 300, "a"))
	b.tx("beta", 1, products(0, 100, "b"))
	w := NewWriter(b.js, WriterConfig{Feed: b.fc})
	res, err := w.WriteAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != 3 || res.Incremental != 0 {
		t.Fatalf("first pass %+v, want 3 full objects", res)
	}
	// Updates, deletions, a new tenant on a new shard; shard 1 is left alone.
	b.tx("alpha", 0, products(10, 50, "a2"))
	b.tx("alpha", 0, map[string]string{"3": "", "4": ""})
	b.tx("gamma", 2, products(0, 20, "g"))
	res, err = w.WriteAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Incremental != 2 || res.Unchanged != 1 || res.Objects != 3 {
		t.Fatalf("second pass %+v, want shard 0 and the registry incremental, shard 1 unchanged, shard 2 full", res)
	}
	// A second writer (a relay taking over) starts from the bucket's snapshots.
	b.tx("beta", 1, products(50, 10, "b2"))
	w2 := NewWriter(b.js, WriterConfig{Feed: b.fc})
	if res, err = w2.WriteAll(ctx); err != nil {
		t.Fatal(err)
	}
	if res.Incremental != 1 || res.Unchanged != 3 {
		t.Fatalf("third pass %+v, want shard 1 incremental, the rest unchanged", res)
	}
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"0", "1", "2", schema.PlatformLog} {
		filter := b.fc.Prefix + "." + sh + ".*.pub.>"
		if sh == schema.PlatformLog {
			filter = b.fc.Prefix + "." + sh + ".>"
		}
		h, got := b.stored(src, sh)
		want := b.fullSet(filter)
		if !maps.Equal(got, want) {
			t.Fatalf("shard %s: snapshot holds %d subjects, a full read %d", sh, len(got), len(want))
		}
		if sh == schema.PlatformLog && strings.Join(h.Shards, ",") != "0,1,2" {
			t.Fatalf("registry snapshot lists shards %v", h.Shards)
		}
		if len(h.Heads) == 0 {
			t.Fatalf("shard %s: no heads in the header", sh)
		}
	}
	if st := w.Stats(); st.Passes != 2 || st.Objects != 6 || st.Bytes == 0 {
		t.Fatalf("writer stats %+v", st)
	}
}

// recSink records what a Follower delivers: the state per subject key, the checkpoints.
type recSink struct {
	mu          sync.Mutex
	state       map[string]string
	checkpoints atomic.Int64
	resets      atomic.Int64
	prepared    atomic.Int64
}

func (s *recSink) Reset(string) {
	s.mu.Lock()
	s.state = map[string]string{}
	s.mu.Unlock()
	s.resets.Add(1)
	s.checkpoints.Store(0)
}

func (s *recSink) Change(c *schema.Change) {
	s.mu.Lock()
	s.state[c.Log+"/"+c.Key()] = fmt.Sprintf("%d %v %s", c.Version, c.Deleted, c.Data)
	s.mu.Unlock()
}

func (s *recSink) Checkpoint() { s.checkpoints.Add(1) }

func (s *recSink) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.state)
}

// prepSink is a recSink that is also a feed.Preparer.
type prepSink struct{ recSink }

func (s *prepSink) Prepare(*schema.Change) { s.prepared.Add(1) }

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// follow runs a Follower of filters into sink until the test ends.
func (b *bed) follow(filters []string, sink feed.Sink, src feed.SnapshotSource) *feed.Follower {
	f, err := feed.NewFollower(b.nc, b.fc, filters, sink, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	f.Watch = 100 * time.Millisecond
	if src != nil {
		f.UseSnapshots(src)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	b.t.Cleanup(func() { cancel(); <-done })
	return f
}

func TestFollowerFromSnapshots(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 200, "a"))
	b.tx("beta", 1, products(0, 100, "b"))
	w := NewWriter(b.js, WriterConfig{Feed: b.fc})
	if _, err := w.WriteAll(ctx); err != nil {
		t.Fatal(err)
	}
	// Shard 1 moves on and is written again: its snapshot stands later than the others, so
	// the follower skips its messages up to there.
	b.tx("beta", 1, products(20, 30, "b1"))
	if res, err := w.WriteAll(ctx); err != nil || res.Objects != 1 {
		t.Fatalf("second pass %+v, %v", res, err)
	}
	// After the snapshots: updates of both shards, a deletion, a new shard.
	b.tx("alpha", 0, products(5, 20, "a2"))
	b.tx("beta", 1, map[string]string{"7": ""})
	b.tx("gamma", 2, products(0, 5, "g"))
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		filters []string
	}{
		{"every shard", b.fc.PublicFilters(nil)},
		{"shards 1 and 2", b.fc.PublicFilters([]int{1, 2})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := &recSink{}
			b.follow(tc.filters, want, nil)
			got := &prepSink{}
			fol := b.follow(tc.filters, got, src)
			waitUntil(t, "both followers checkpointed", func() bool { return want.checkpoints.Load() > 0 && got.checkpoints.Load() > 0 })
			if g, w := got.snapshot(), want.snapshot(); !maps.Equal(g, w) {
				t.Fatalf("from snapshots %d states, from the stream %d", len(g), len(w))
			}
			st := fol.Stats()
			if st.FromSnapshot != 1 || st.SnapshotFallbacks != 0 || st.SnapshotSkipped == 0 {
				t.Fatalf("follower stats %+v", st)
			}
			if got.prepared.Load() == 0 {
				t.Fatal("Prepare was never called")
			}
			// Live changes keep flowing after a snapshot bootstrap.
			b.tx("beta", 1, products(0, 3, "b3"))
			waitUntil(t, "the live change", func() bool {
				return got.snapshot()["beta/pub.product.1"] == want.snapshot()["beta/pub.product.1"] && strings.Contains(got.snapshot()["beta/pub.product.1"], "b3")
			})
		})
	}
}

// shardSnapshot writes the snapshots of what b holds and returns the bucket, shard 0's snapshot
// as written (its bytes and opened) and its records.
func shardSnapshot(t *testing.T, b *bed) (jetstream.ObjectStore, []byte, *Snapshot, []Record) {
	t.Helper()
	ctx := context.Background()
	if _, err := NewWriter(b.js, WriterConfig{Feed: b.fc}).WriteAll(ctx); err != nil {
		t.Fatal(err)
	}
	obs, err := b.js.ObjectStore(ctx, DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := obs.GetBytes(ctx, "shard-0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	s.Records(func(r Record) error { recs = append(recs, r); return nil })
	return obs, raw, s, recs
}

func TestFollowerFallsBack(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 50, "a"))
	obs, good, s, recs := shardSnapshot(t, b)
	other := s.Header()
	other.Epoch = "epoch-0"
	otherEpoch, err := Encode(other, recs)
	if err != nil {
		t.Fatal(err)
	}
	old := s.Header()
	old.Taken = time.Now().Add(-b.fc.TombstoneTTL)
	tooOld, _ := Encode(old, recs)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x01
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	want := &recSink{}
	b.follow(b.fc.PublicFilters(nil), want, nil)
	waitUntil(t, "the stream follower", func() bool { return want.checkpoints.Load() > 0 })
	for _, tc := range []struct {
		name   string
		bytes  []byte
		reason string
	}{
		{"flipped byte", flipped, "corrupt"},
		{"truncated", good[:len(good)-100], "truncated"},
		{"other epoch", otherEpoch, "epoch"},
		{"too old", tooOld, "too old"},
		{"missing", nil, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bytes == nil {
				if err := obs.Delete(ctx, "shard-0"); err != nil {
					t.Fatal(err)
				}
			} else if _, err := obs.PutBytes(ctx, "shard-0", tc.bytes); err != nil {
				t.Fatal(err)
			}
			got := &recSink{}
			fol := b.follow(b.fc.PublicFilters(nil), got, src)
			waitUntil(t, "the fallback follower", func() bool { return got.checkpoints.Load() > 0 })
			st := fol.Stats()
			if st.SnapshotFallbacks != 1 || st.FromSnapshot != 0 || !strings.Contains(st.LastFallback, tc.reason) {
				t.Fatalf("stats %+v, want one fallback for %q", st, tc.reason)
			}
			if g, w := got.snapshot(), want.snapshot(); !maps.Equal(g, w) {
				t.Fatalf("after the fallback %d states, from the stream %d", len(g), len(w))
			}
		})
	}
}

// hbSink is a recSink that is also a feed.Heartbeats: it records when the stream was last
// heard from.
type hbSink struct {
	recSink
	heard atomic.Int64 // unix nanoseconds of the last Heard("")
}

func (s *hbSink) Heard(shard string, at time.Time) {
	if shard == "" {
		s.heard.Store(at.UnixNano())
	}
}

// An edge that bootstrapped from snapshots of a stream that then stays idle keeps hearing from
// the stream (its watch compared the consumer's start with nothing handled, so an idle store
// looked stale for ever: found with `make run`, /readyz degraded a minute after start).
func TestIdleAfterSnapshotIsHeardFrom(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 50, "a"))
	w := NewWriter(b.js, WriterConfig{Feed: b.fc})
	if _, err := w.WriteAll(ctx); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	sink := &hbSink{}
	fol := b.follow(b.fc.PublicFilters(nil), sink, src)
	waitUntil(t, "the checkpoint", func() bool { return sink.checkpoints.Load() > 0 })
	if st := fol.Stats(); st.FromSnapshot != 1 {
		t.Fatalf("follower stats %+v: not a snapshot bootstrap", st)
	}
	first := time.Now()
	waitUntil(t, "the idle stream heard from again", func() bool { return time.Unix(0, sink.heard.Load()).After(first.Add(300 * time.Millisecond)) })
}

// logAnnexes is a WriterConfig.Annexes that records the logs it was given the records of and
// makes one annex per log: its last version in the records.
type logAnnexes struct {
	mu    sync.Mutex
	given [][]string // per call, the logs, sorted
}

func (la *logAnnexes) make(_ context.Context, _, shard feed.SnapshotPart) ([]feed.Annex, error) {
	last := map[string]int64{}
	err := shard.Records(func(subject string, data []byte) error {
		c, err := schema.DecodeChange(data)
		if err != nil {
			return err
		}
		last[c.Log] = max(last[c.Log], c.Version)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var logs []string
	var out []feed.Annex
	for log, v := range last {
		logs = append(logs, log)
		out = append(out, feed.Annex{Kind: feed.AnnexSearchIndex, Log: log, Version: v, Data: []byte(fmt.Sprintf("%s@%d", log, v))})
	}
	slices.Sort(logs)
	la.mu.Lock()
	la.given = append(la.given, logs)
	la.mu.Unlock()
	return out, nil
}

// A pass keeps the previous snapshot's annex of a log without a message since (the registry
// neither) and makes the others again from those logs' records only; a moved registry or a new
// writer makes them all. A log whose batch is in flight at the pass (its head not yet stored)
// has moved, though its head has not.
func TestAnnexesKept(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 30, "a"))
	b.tx("beta", 0, products(0, 20, "b"))
	la := &logAnnexes{}
	w := NewWriter(b.js, WriterConfig{Feed: b.fc, Annexes: la.make})
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	stored := func() []string {
		s, _, err := src.Fetch(ctx, "0", nil)
		if err != nil {
			t.Fatal(err)
		}
		as, err := s.Annexes()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range as {
			out = append(out, string(a.Data))
		}
		return out
	}
	steps := []struct {
		name        string
		write       func()
		writer      *Writer
		given       []string // the logs the last call was given
		kept        int
		annexesHeld []string
	}{
		{"first pass", func() {}, w, []string{"alpha", "beta"}, 0, []string{"alpha@30", "beta@20"}},
		{"alpha written", func() { b.tx("alpha", 0, products(5, 3, "a2")) }, w, []string{"alpha"}, 1, []string{"alpha@33", "beta@20"}},
		{"registry moved", func() { b.tx("gamma", 1, products(0, 2, "g")); b.tx("alpha", 0, products(0, 1, "a3")) }, w, []string{"alpha", "beta"}, 0, []string{"alpha@34", "beta@20"}},
		{"beta written", func() { b.tx("beta", 0, products(0, 1, "b2")) }, w, []string{"beta"}, 1, []string{"alpha@34", "beta@21"}},
		{"beta's batch in flight", func() { b.txBody("beta", 0, products(2, 1, "b4")) }, w, []string{"beta"}, 1, []string{"alpha@34", "beta@22"}},
		{"its head", func() { b.head("beta", 0) }, w, []string{"beta"}, 1, []string{"alpha@34", "beta@22"}},
		{"another writer", func() { b.tx("beta", 0, products(1, 1, "b3")) }, NewWriter(b.js, WriterConfig{Feed: b.fc, Annexes: la.make}), []string{"alpha", "beta"}, 0, []string{"alpha@34", "beta@23"}},
	}
	for _, st := range steps {
		st.write()
		res, err := st.writer.WriteAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var given []string
		for _, g := range la.given {
			if slices.Contains(g, "alpha") || slices.Contains(g, "beta") {
				given = g // the last call of shard 0
			}
		}
		if !slices.Equal(given, st.given) || res.AnnexesKept != st.kept {
			t.Fatalf("%s: the annexes were made of %v, %d kept (%+v); want %v, %d kept", st.name, given, res.AnnexesKept, res, st.given, st.kept)
		}
		if got := stored(); !slices.Equal(got, st.annexesHeld) {
			t.Fatalf("%s: shard 0's snapshot holds annexes %q, want %q", st.name, got, st.annexesHeld)
		}
	}
}

// Run calls Config.Pass as each pass begins and what it returned once the pass is over, so a
// process can make room for exactly the pass (cmd/vitrine gives the relay a second P).
func TestRunBracketsEachPass(t *testing.T) {
	b := newBed(t)
	b.tx("alpha", 0, products(0, 20, "a"))
	var mu sync.Mutex
	var events []string
	var w *Writer
	w = NewWriter(b.js, WriterConfig{Feed: b.fc, Pass: func() func() {
		mu.Lock()
		events = append(events, fmt.Sprintf("begin %d", w.Stats().Passes))
		mu.Unlock()
		return func() {
			mu.Lock()
			events = append(events, fmt.Sprintf("end %d", w.Stats().Passes))
			mu.Unlock()
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, time.Hour, func() bool { return true }) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pass bracketed within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"begin 0", "end 1"}; !slices.Equal(events, want) {
		t.Fatalf("events %q, want %q (one pass, the end after it completed; the period is an hour)", events, want)
	}
}
