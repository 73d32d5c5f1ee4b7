package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/blob"
	"vitrine/sync/feed"
)

// WriterConfig configures a Writer. Zero values mean the defaults.
type WriterConfig struct {
	// Feed names the state stream, its subject prefix and its tombstone horizon.
	Feed feed.Config
	// Bucket is the object store bucket (default DefaultBucket).
	Bucket string
	// Replicas of the bucket's stream (default 1; 3 in a clustered deployment).
	Replicas int
	// ReadTimeout bounds reading one shard from the stream (default 5 minutes).
	ReadTimeout time.Duration
	// Annexes, when set, makes the annexes of each shard's snapshot (not the registry's): it is
	// given the registry's records as the pass read them at its start and the shard's records
	// the snapshot holds, both in stream order, but those of logs whose annexes the writer keeps
	// from its previous snapshot of the shard (the log's head and the registry did not move
	// since). Each annex names its log. An error is logged and the snapshot written without
	// annexes: they are an optimisation for readers, never needed.
	Annexes func(ctx context.Context, registry, shard feed.SnapshotPart) ([]feed.Annex, error)
	// CPUShare is the share of the time a pass may run (default DefaultCPUShare; 1 or more: no
	// limit): it rests between its steps so that the relay beside it keeps its latency.
	CPUShare float64
	// Busy, when set, reports whether the work the pass yields to is running (the relay
	// publishing): the pass rests only then, and runs at full speed beside an idle relay. Nil:
	// it always rests.
	Busy func() bool
	// Pass, when set, is called as each pass of Run begins; what it returns is called as the
	// pass ends (the process can make room for the pass and take it back).
	Pass   func() (end func())
	Logger *slog.Logger
}

// Writer writes the snapshot of every shard of the state stream, and the tenant registry's, to
// the bucket, each replacing the previous one. It keeps the bytes it last wrote of each object, so
// its next pass reads only the stream's messages after them (incremental).
type Writer struct {
	cfg  WriterConfig
	js   jetstream.JetStream
	log  *slog.Logger
	src  *Source
	mu   sync.Mutex // one pass at a time
	obs  jetstream.ObjectStore
	prev map[string][]byte // object name -> bytes this writer last wrote or read
	// regSeq is the registry's last sequence when this writer last made annexes (0: never):
	// an annex it wrote of a log whose head has not moved since is still that log's while the
	// registry has not moved either (the registry gives an image its currency).
	regSeq uint64
	pace   *pacer // of the pass running
	stats  writerStats
	lastMu sync.Mutex
	last   Result
}

type writerStats struct {
	passes, failures, objects, unchanged, bytes, records atomic.Uint64
	nanos                                                atomic.Int64
}

// WriterStats are a Writer's counters.
type WriterStats struct {
	// Passes counts completed passes, Failures failed ones.
	Passes, Failures uint64
	// Objects counts snapshots written, Unchanged shards left as they were (nothing new).
	Objects, Unchanged uint64
	// Bytes and Records written, over every pass.
	Bytes, Records uint64
	// Duration is the time spent in passes.
	Duration time.Duration
	// Last is the last completed pass.
	Last Result
}

// Stats returns the Writer's counters. Safe for concurrent use.
func (w *Writer) Stats() WriterStats {
	w.lastMu.Lock()
	last := w.last
	w.lastMu.Unlock()
	return WriterStats{Passes: w.stats.passes.Load(), Failures: w.stats.failures.Load(), Objects: w.stats.objects.Load(),
		Unchanged: w.stats.unchanged.Load(), Bytes: w.stats.bytes.Load(), Records: w.stats.records.Load(),
		Duration: time.Duration(w.stats.nanos.Load()), Last: last}
}

// Result describes one pass.
type Result struct {
	// Seq is the stream's last sequence when the pass started.
	Seq uint64
	// Objects written (Incremental of them from the previous snapshot), Unchanged left alone.
	Objects, Incremental, Unchanged int
	// Bytes and Records of the objects written; Annexes they carry (AnnexesKept of them kept
	// from the previous snapshots, not made again), and AnnexBytes of those.
	Bytes       int64
	Records     int
	Annexes     int
	AnnexesKept int
	AnnexBytes  int64
	Took        time.Duration
}

// NewWriter returns a Writer over js (the relay's connection). It creates the bucket at its
// first pass.
func NewWriter(js jetstream.JetStream, cfg WriterConfig) *Writer {
	cfg.Feed = cfg.Feed.WithDefaults()
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultBucket
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 5 * time.Minute
	}
	if cfg.CPUShare == 0 {
		cfg.CPUShare = DefaultCPUShare
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Writer{cfg: cfg, js: js, log: cfg.Logger.With("component", "snapshots"), prev: map[string][]byte{}}
}

func (w *Writer) bucket(ctx context.Context) (jetstream.ObjectStore, error) {
	if w.obs != nil {
		return w.obs, nil
	}
	obs, err := blob.EnsureObjectStore(ctx, w.js, jetstream.ObjectStoreConfig{
		Bucket:      w.cfg.Bucket,
		Description: "Vitrine state stream snapshots per shard (sync/snapshot)",
		Storage:     jetstream.FileStorage,
		Replicas:    w.cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: bucket %s: %w", w.cfg.Bucket, err)
	}
	src, err := NewSource(ctx, w.js, w.cfg.Bucket)
	if err != nil {
		return nil, err
	}
	w.obs, w.src = obs, src
	return obs, nil
}

// WriteAll makes one pass: it lists the shards with public subjects, then writes each shard's
// snapshot and the registry's. A shard with nothing new since its previous snapshot is left as
// it is unless that snapshot is older than a quarter of the tombstone horizon.
func (w *Writer) WriteAll(ctx context.Context) (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t0 := time.Now()
	w.pace = newPacer(w.cfg.CPUShare, w.cfg.Busy)
	res, err := w.writeAll(ctx)
	res.Took = time.Since(t0)
	w.stats.nanos.Add(int64(res.Took))
	if err != nil {
		w.stats.failures.Add(1)
		return res, err
	}
	w.stats.passes.Add(1)
	w.lastMu.Lock()
	w.last = res
	w.lastMu.Unlock()
	return res, nil
}

func (w *Writer) writeAll(ctx context.Context) (Result, error) {
	var res Result
	obs, err := w.bucket(ctx)
	if err != nil {
		return res, err
	}
	fc := w.cfg.Feed
	st, err := w.js.Stream(ctx, fc.Stream)
	if err != nil {
		return res, fmt.Errorf("snapshot: state stream: %w", err)
	}
	// One request gives the last sequence and the head subjects at that point: every shard
	// with a message at or below it has a head there (the relay ends every publish with the log's head).
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(fc.Prefix+".*.*.pub."+string(schema.KindHead)+"."+schema.HeadID))
	if err != nil {
		return res, fmt.Errorf("snapshot: state stream info: %w", err)
	}
	id := streamID{epoch: info.Config.Metadata["vitrine_epoch"], created: info.Created, last: info.State.LastSeq}
	res.Seq = id.last
	var shards []string
	for subj := range info.State.Subjects {
		if sh := shardOf(fc.Prefix, subj); sh != "" && shardNumber(sh) && !slices.Contains(shards, sh) {
			shards = append(shards, sh)
		}
	}
	slices.SortFunc(shards, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	platFilter := fc.Prefix + "." + schema.PlatformLog + ".>"
	var reg *annexRegistry // the registry, for the annexes
	if w.cfg.Annexes != nil {
		set := &recordSet{index: map[string]int{}}
		if _, err := readStream(ctx, st, platFilter, 0, id.epoch, w.cfg.ReadTimeout, set, w.pace); err != nil {
			return res, fmt.Errorf("snapshot: registry: %w", err)
		}
		reg = &annexRegistry{recs: set.live(), seq: set.maxSeq}
		reg.same = w.regSeq != 0 && reg.seq == w.regSeq
	}
	for _, sh := range shards {
		if err := w.writeShard(ctx, obs, st, id, sh, fc.Prefix+"."+sh+".*.pub.>", nil, reg, &res); err != nil {
			return res, err
		}
	}
	if reg != nil {
		w.regSeq = reg.seq
	}
	plat := func(h *Header) { h.ListedAt, h.Shards = id.last, shards }
	if err := w.writeShard(ctx, obs, st, id, schema.PlatformLog, platFilter, plat, nil, &res); err != nil {
		return res, err
	}
	w.log.Info("snapshots written", "seq", id.last, "shards", len(shards), "objects", res.Objects, "incremental", res.Incremental,
		"unchanged", res.Unchanged, "bytes", res.Bytes, "records", res.Records, "annexes", res.Annexes, "annexes_kept", res.AnnexesKept, "annex_bytes", res.AnnexBytes)
	return res, nil
}

// streamID is the state stream as a pass found it.
type streamID struct {
	epoch   string
	created time.Time
	last    uint64
}

// previous returns the last snapshot of the shard this writer knows (its own last write, else
// the bucket's), or nil.
func (w *Writer) previous(ctx context.Context, shard string) *Snapshot {
	name := ObjectName(shard)
	if b := w.prev[name]; b != nil {
		if s, err := Open(b); err == nil {
			return s
		}
	}
	s, _, err := w.src.Fetch(ctx, shard, nil)
	if err != nil {
		if !errors.Is(err, blob.ErrNotFound) {
			w.log.Info("previous snapshot unusable: full pass", "object", name, "reason", err)
		}
		return nil
	}
	return s
}

// annexRegistry is the registry as a pass read it for the annexes: its records, its last
// sequence, and whether that is the one of this writer's previous annexes.
type annexRegistry struct {
	recs []Record
	seq  uint64
	same bool
}

// writeShard writes one shard's snapshot (the registry's when extra is set); reg is the
// registry for the annexes.
func (w *Writer) writeShard(ctx context.Context, obs jetstream.ObjectStore, st jetstream.Stream, id streamID, shard, filter string, extra func(*Header), reg *annexRegistry, res *Result) error {
	ttl := w.cfg.Feed.TombstoneTTL
	now := time.Now()
	prev := w.previous(ctx, shard)
	incremental := prev != nil && prev.Check(id.epoch, id.created, shard, ttl/2, now) == nil &&
		now.Sub(prev.Header().FullAt) < ttl/2 && prev.Header().Seq <= id.last
	h := Header{Epoch: id.epoch, Created: id.created, Shard: shard, Taken: now, FullAt: now}
	if extra != nil {
		extra(&h)
	}
	var set *recordSet
	var moved map[string]bool // logs with a message since prev (incremental passes)
	if incremental {
		// The messages after the previous snapshot first: with none, the previous snapshot
		// stays (not even decoded).
		ph := prev.Header()
		h.FullAt = ph.FullAt
		news := &recordSet{index: map[string]int{}}
		n, err := readStream(ctx, st, filter, ph.Seq+1, id.epoch, w.cfg.ReadTimeout, news, w.pace)
		if err != nil {
			return fmt.Errorf("snapshot: shard %s: %w", shard, err)
		}
		listedSame := extra == nil || slices.Equal(ph.Shards, h.Shards)
		if n == 0 && listedSame && now.Sub(ph.Taken) < ttl/4 {
			res.Unchanged++
			w.stats.unchanged.Add(1)
			return nil
		}
		set = &recordSet{index: make(map[string]int, ph.Records+uint64(len(news.recs)))}
		if err := prev.Records(func(r Record) error { set.add(r); return w.pace.yield(ctx) }); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			incremental = false
		} else {
			moved = map[string]bool{}
			for _, r := range news.recs {
				if r.Subject != "" {
					set.add(r)
					if log, _, _, ok := subjectParts(r.Subject); ok {
						moved[log] = true
					}
				}
			}
		}
	}
	if !incremental {
		set = &recordSet{index: map[string]int{}}
		if _, err := readStream(ctx, st, filter, 0, id.epoch, w.cfg.ReadTimeout, set, w.pace); err != nil {
			return fmt.Errorf("snapshot: shard %s: %w", shard, err)
		}
	}
	recs := set.live()
	h.Seq = max(id.last, set.maxSeq)
	h.Heads = heads(recs)
	var annexes []feed.Annex
	kept := 0
	if w.cfg.Annexes != nil && extra == nil {
		var err error
		annexes, kept, err = w.annexes(ctx, reg, shard, prev, incremental, moved, recs)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.log.Warn("snapshot written without annexes", "shard", shard, "err", err)
			annexes, kept = nil, 0
		}
	}
	if err := w.pace.yield(ctx); err != nil {
		return err
	}
	b, err := Encode(h, recs, annexes...)
	if err != nil {
		return err
	}
	if err := w.pace.yield(ctx); err != nil {
		return err
	}
	if _, err := obs.PutBytes(ctx, ObjectName(shard), b); err != nil {
		return fmt.Errorf("snapshot: put %s: %w", ObjectName(shard), err)
	}
	w.prev[ObjectName(shard)] = b
	res.Objects++
	if incremental {
		res.Incremental++
	}
	res.Bytes += int64(len(b))
	res.Records += len(recs)
	res.Annexes += len(annexes)
	res.AnnexesKept += kept
	for _, a := range annexes {
		res.AnnexBytes += int64(len(a.Data))
	}
	w.stats.objects.Add(1)
	w.stats.bytes.Add(uint64(len(b)))
	w.stats.records.Add(uint64(len(recs)))
	return nil
}

// annexes returns the annexes of a shard snapshot of recs: those of prev (this writer's previous
// snapshot of the shard, when incremental) whose log has no message since prev (moved) while
// the registry has not moved either, and the ones WriterConfig.Annexes makes from the records of
// the other logs; sorted by kind and log. kept is how many come from prev. A log's head alone
// does not tell: a pass can end between the messages of a publish (its head comes last), and
// the publish's first messages replace states the head's version had without moving the head.
func (w *Writer) annexes(ctx context.Context, reg *annexRegistry, shard string, prev *Snapshot, incremental bool, moved map[string]bool, recs []Record) (out []feed.Annex, kept int, err error) {
	keep := map[string]bool{} // logs whose annexes stay
	if incremental && reg.same && prev != nil && len(w.prev[ObjectName(shard)]) > 0 {
		pa, _ := prev.Annexes()
		for _, a := range pa {
			if !moved[a.Log] {
				keep[a.Log] = true
				out = append(out, a) // Encode copies it before prev's bytes are let go
			}
		}
		kept = len(out)
	}
	rest := recs
	if len(keep) > 0 {
		rest = make([]Record, 0, len(recs))
		for _, r := range recs {
			if log, _, _, ok := subjectParts(r.Subject); !ok || !keep[log] {
				rest = append(rest, r)
			}
		}
	}
	if len(rest) > 0 {
		made, err := w.cfg.Annexes(ctx, recordsPart(ctx, schema.PlatformLog, reg.recs, w.pace), recordsPart(ctx, shard, rest, w.pace))
		if err != nil {
			return nil, 0, err
		}
		out = append(out, made...)
	}
	slices.SortFunc(out, func(a, b feed.Annex) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Log, b.Log))
	})
	return out, kept, nil
}

// recordsPart is recs as a snapshot part of shard, read message by message at p's pace.
func recordsPart(ctx context.Context, shard string, recs []Record, p *pacer) feed.SnapshotPart {
	seq := uint64(0)
	if len(recs) > 0 {
		seq = recs[len(recs)-1].Seq
	}
	return feed.SnapshotPart{Shard: shard, Seq: seq, Records: func(fn func(subject string, data []byte) error) error {
		for _, r := range recs {
			if err := fn(r.Subject, r.Data); err != nil {
				return err
			}
			if err := p.yield(ctx); err != nil {
				return err
			}
		}
		return nil
	}}
}

// recordSet is the last message of each subject, in stream order.
type recordSet struct {
	recs   []Record
	dead   int
	index  map[string]int
	maxSeq uint64
}

func (s *recordSet) add(r Record) {
	if i, ok := s.index[r.Subject]; ok {
		if s.recs[i].Seq >= r.Seq {
			return
		}
		s.recs[i].Data = nil
		s.recs[i].Subject = ""
		s.dead++
	}
	s.index[r.Subject] = len(s.recs)
	s.recs = append(s.recs, r)
	s.maxSeq = max(s.maxSeq, r.Seq)
}

// live returns the records in stream order, superseded ones removed.
func (s *recordSet) live() []Record {
	out := s.recs
	if s.dead > 0 {
		out = make([]Record, 0, len(s.recs)-s.dead)
		for _, r := range s.recs {
			if r.Subject != "" {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// readStream adds filter's messages to set: the last of every subject (start 0), or every one
// from start on, until the stream has nothing more pending. It returns how many it read.
func readStream(ctx context.Context, st jetstream.Stream, filter string, start uint64, epoch string, timeout time.Duration, set *recordSet, p *pacer) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}
	if start > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := st.OrderedConsumer(ctx, cc)
	if err != nil {
		return 0, fmt.Errorf("create consumer: %w", err)
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("consumer info: %w", err)
	}
	if ci.NumPending == 0 {
		return 0, nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(4096))
	if err != nil {
		return 0, fmt.Errorf("consume: %w", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	n := 0
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return n, fmt.Errorf("reading the stream: %w", ctx.Err())
			}
			return n, fmt.Errorf("reading the stream: %w", err)
		}
		if e := msg.Headers().Get(feed.HeaderEpoch); e != epoch {
			return n, fmt.Errorf("message of epoch %q in a stream of epoch %q", e, epoch)
		}
		md, err := msg.Metadata()
		if err != nil {
			return n, fmt.Errorf("message metadata: %w", err)
		}
		set.add(Record{Seq: md.Sequence.Stream, Subject: msg.Subject(), Data: msg.Data()})
		n++
		if md.NumPending == 0 {
			return n, nil
		}
		if err := p.yield(ctx); err != nil {
			return n, fmt.Errorf("reading the stream: %w", err)
		}
	}
}

// heads returns the head versions of the records' logs.
func heads(recs []Record) []Head {
	var out []Head
	suffix := "." + string(schema.KindHead) + "." + schema.HeadID
	for _, r := range recs {
		if !strings.HasSuffix(r.Subject, suffix) {
			continue
		}
		c, err := schema.DecodeChange(r.Data)
		if err != nil || !c.IsHead() {
			continue
		}
		out = append(out, Head{Log: c.Log, Version: c.Version})
	}
	slices.SortFunc(out, func(a, b Head) int { return strings.Compare(a.Log, b.Log) })
	return out
}

// shardOf returns the shard token of a subject <prefix>.<shard>.…, or "".
func shardOf(prefix, subject string) string {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return ""
	}
	sh, _, _ := strings.Cut(rest, ".")
	return sh
}

// Run writes a pass every period while leader reports true (the relay holds its lease): two
// writers overlapping at a lease hand-over are harmless, as each snapshot is a consistent point
// of the stream. Its first pass comes as soon as the stream has settled (its last sequence did
// not move for a second, so the relay's first publish burst is in) with the lease held. A
// failed pass is logged and retried at the next period. It returns when ctx ends.
func (w *Writer) Run(ctx context.Context, period time.Duration, leader func() bool) error {
	if period <= 0 {
		return nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last uint64
	var lastPass time.Time
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if !leader() {
			continue
		}
		if first {
			seq, err := w.lastSeq(ctx)
			if err != nil || seq == 0 || seq != last {
				last = seq
				continue
			}
		} else if time.Since(lastPass) < period {
			continue
		}
		lastPass, first = time.Now(), false
		end := func() {}
		if w.cfg.Pass != nil {
			end = w.cfg.Pass()
		}
		_, err := w.WriteAll(ctx)
		end()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.log.Warn("snapshot pass failed", "err", err)
		}
	}
}

func (w *Writer) lastSeq(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := w.js.Stream(ctx, w.cfg.Feed.Stream)
	if err != nil {
		return 0, err
	}
	return st.CachedInfo().State.LastSeq, nil
}
