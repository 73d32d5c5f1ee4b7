package feed

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"vitrine/schema"
)

// Preparer is a Sink that can do part of a change's work before the change is delivered: the
// Follower calls Prepare on a pool of goroutines (GOMAXPROCS of them) while it loads a snapshot,
// then passes each prepared change to Change, still one at a time and in stream order.
//
// Prepare must be safe for concurrent use with itself and with the Sink's other methods: it may
// be called on several goroutines at once, in any order, for changes that Change will receive
// only later (or never, when the bootstrap is abandoned). It must not depend on state that
// earlier changes install; typically it decodes the change's data into a form Change then uses.
type Preparer interface {
	Prepare(c *schema.Change)
}

// Annex is something a snapshot carries besides its records: a form of part of the state at the
// snapshot's point that a Sink may use instead of deriving it from the changes, such as one
// tenant's search index (Kind AnnexSearchIndex). An annex is an optimisation only: a Sink that
// cannot use one, or finds it does not match the state it applied, derives the state as if the
// annex were absent.
type Annex struct {
	// Kind names what the annex holds.
	Kind string
	// Log is the log (tenant) it is of, and Version the log's version it was made at.
	Log     string
	Version int64
	// Params says what else the annex depends on (for a search index: the store's default
	// currency, which the index's prices are in).
	Params string
	// Data is the annex itself. It may be a slice of the snapshot's bytes: a Sink that keeps it
	// past the bootstrap copies it.
	Data []byte
}

// AnnexSearchIndex is the kind of an annex holding a tenant's search index image (package
// edge/search, Index.AppendImage), made over the tenant's public products at Version.
const AnnexSearchIndex = "search-index"

// AnnexSink is a Sink that can use snapshot annexes: a Follower hands it a snapshot's annexes
// after Reset and before the snapshot's changes, on the delivering goroutine.
type AnnexSink interface {
	Annex(a Annex)
}

// SnapshotSource supplies the snapshots a Follower bootstraps from instead of reading the last
// message of every subject from the stream (package snapshot implements it over the
// "vitrine-snapshots" object store bucket).
type SnapshotSource interface {
	// Snapshots returns verified snapshots of the platform registry and of every shard of want:
	// of the stream want names (epoch and creation time), no older than want.MaxAge. Any
	// snapshot it cannot supply so (missing, corrupt, truncated, of another stream, too old,
	// store unreachable) is an error: the Follower then bootstraps from the stream alone.
	Snapshots(ctx context.Context, want SnapshotWant) (*SnapshotSet, error)
}

// SnapshotWant is what a Follower asks a SnapshotSource for.
type SnapshotWant struct {
	// Epoch and Created identify the state stream (its cluster epoch and creation time).
	Epoch   string
	Created time.Time
	// MaxAge is the oldest snapshot usable: half the tombstone horizon, so that a deletion
	// published after the snapshot is still in the stream when the Follower reads on from it.
	MaxAge time.Duration
	// Shards are the shard numbers the Follower's filter covers; nil means every shard.
	Shards []string
}

// SnapshotSet is a set of snapshots a Follower delivers before following the stream.
type SnapshotSet struct {
	// Parts hold the platform registry's snapshot and one per shard.
	Parts []SnapshotPart
	// Floor is a stream sequence at or below which no shard without a part has a message:
	// the Follower reads the stream on from min(Floor, every part's Seq) + 1.
	Floor uint64
	// Bytes is the size of the snapshots as stored (for logs).
	Bytes int64
}

// SnapshotPart is one shard's snapshot.
type SnapshotPart struct {
	// Shard is a shard number, or schema.PlatformLog.
	Shard string
	// Seq is the stream sequence the snapshot stands at: for every subject of the shard, the
	// last message at or below Seq is in the snapshot; the Follower skips the shard's stream
	// messages at or below Seq.
	Seq uint64
	// Records calls fn with each message (subject, data) in stream order, and stops at fn's
	// first error. fn may keep data.
	Records func(fn func(subject string, data []byte) error) error
	// Changes, when not nil, is used instead of Records: fn receives each message's subject
	// and its change as schema.DecodeChange would return it (its subject not yet checked), or
	// nil and the message data when the snapshot holds the message only as data.
	Changes func(fn func(subject string, c *schema.Change, data []byte) error) error
	// Annexes are what the snapshot carries besides its records (an AnnexSink receives them).
	Annexes []Annex
}

// UseSnapshots makes the Follower bootstrap from src's snapshots when its filters are public
// shard filters (Config.PublicFilters): the origin's filter, which includes private subjects,
// always bootstraps from the stream. Call it before Run.
func (f *Follower) UseSnapshots(src SnapshotSource) { f.snaps = src }

// snapshotShards returns the shards the filters cover when every filter is a public shard filter
// or the registry's (nil shards: every shard), and ok false otherwise.
func snapshotShards(prefix string, filters []string) (shards []string, ok bool) {
	all, platform := false, false
	for _, fl := range filters {
		rest, found := strings.CutPrefix(fl, prefix+".")
		if !found {
			return nil, false
		}
		if rest == schema.PlatformLog+".>" {
			platform = true
			continue
		}
		shard, tail, _ := strings.Cut(rest, ".")
		if tail != "*.pub.>" {
			return nil, false
		}
		if shard == "*" {
			all = true
			continue
		}
		for _, c := range shard {
			if c < '0' || c > '9' {
				return nil, false
			}
		}
		if shard == "" {
			return nil, false
		}
		shards = append(shards, shard)
	}
	if !platform {
		return nil, false
	}
	if all {
		return nil, true
	}
	return shards, true
}

// snapshotLoadTimeout bounds loading and delivering a bootstrap's snapshots.
const snapshotLoadTimeout = 5 * time.Minute

// fromSnapshots delivers the snapshots to the sink and returns where the stream is read on
// from and, per shard, the sequence at or below which the shard's messages are in the snapshot.
func (f *Follower) fromSnapshots(ctx context.Context, epoch string, created time.Time) (start uint64, skip map[string]uint64, err error) {
	shards, ok := snapshotShards(f.cfg.Prefix, f.filters)
	if !ok {
		return 0, nil, errNoSnapshot
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotLoadTimeout)
	defer cancel()
	t0 := time.Now()
	set, err := f.snaps.Snapshots(ctx, SnapshotWant{Epoch: epoch, Created: created, MaxAge: f.cfg.TombstoneTTL / 2, Shards: shards})
	if err != nil {
		return 0, nil, err
	}
	if len(set.Parts) == 0 {
		return 0, nil, errors.New("no snapshot")
	}
	start = set.Floor
	skip = make(map[string]uint64, len(set.Parts))
	for _, p := range set.Parts {
		start = min(start, p.Seq)
		skip[p.Shard] = p.Seq
	}
	fetched := time.Since(t0)
	n, err := f.deliverParts(ctx, set.Parts)
	if err != nil {
		return 0, nil, err
	}
	f.log.Info("bootstrap from snapshots", "parts", len(set.Parts), "bytes", set.Bytes, "changes", n,
		"fetch", fetched.Round(time.Millisecond), "total", time.Since(t0).Round(time.Millisecond), "follow_from", start+1)
	return start + 1, skip, nil
}

var errNoSnapshot = errors.New("the follower's filters are not public shard filters")

// prepBatch is a batch of snapshot records decoded (and prepared) by a worker: changes holds
// those the snapshot decoded, nil for the others until the worker decodes them.
type prepBatch struct {
	subjects []string
	data     [][]byte
	changes  []*schema.Change
	errs     []error
	done     chan struct{}
}

// deliverParts hands the parts' annexes to the sink when it is an AnnexSink, then decodes the
// parts' records on a pool of GOMAXPROCS workers (Prepare included, when the sink is a
// Preparer) and hands them to the sink in order. It returns the number of
// changes delivered.
func (f *Follower) deliverParts(ctx context.Context, parts []SnapshotPart) (int, error) {
	return deliverParts(ctx, f.sink, parts, &f.delivered, func(subject string, err error) {
		// A change of a newer schema than this build reads is skipped as the stream path skips
		// it (counted apart, the Sink told), not counted as malformed: a snapshot written by an
		// upgraded relay holds what its writers wrote.
		var unsupported *schema.UnsupportedSchemaError
		if errors.As(err, &unsupported) {
			f.skipUnsupported(subject, unsupported)
			return
		}
		f.malformed.Add(1)
		f.log.Error("skipping malformed snapshot message", "subject", subject, "err", err)
	})
}

// DeliverSnapshots hands the parts' records to sink exactly as a Follower's snapshot bootstrap
// does (decoded on GOMAXPROCS workers, prepared when sink is a Preparer, delivered in order),
// without Reset or Checkpoint: the caller calls those around it. It is the Follower's load path,
// for benchmarks and tools. It returns the changes delivered and the records skipped as
// malformed.
func DeliverSnapshots(ctx context.Context, sink Sink, parts []SnapshotPart) (delivered, malformed int, err error) {
	var d atomic.Uint64
	n, err := deliverParts(ctx, sink, parts, &d, func(string, error) { malformed++ })
	return n, malformed, err
}

// deliverParts is the load path of DeliverSnapshots; delivered counts the changes as they are
// handed over, and bad is told of each malformed record (from the caller's goroutine).
func deliverParts(ctx context.Context, sink Sink, parts []SnapshotPart, delivered *atomic.Uint64, bad func(subject string, err error)) (int, error) {
	const batchSize = 256
	workers := max(1, runtime.GOMAXPROCS(0))
	prep, _ := sink.(Preparer)
	if as, ok := sink.(AnnexSink); ok {
		for _, p := range parts {
			for _, a := range p.Annexes {
				as.Annex(a)
			}
		}
	}
	jobs := make(chan *prepBatch, workers)
	order := make(chan *prepBatch, 2*workers) // bounds the batches decoded ahead of delivery
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				for i, subj := range b.subjects {
					c, err := b.changes[i], error(nil)
					if c == nil {
						c, err = schema.DecodeChange(b.data[i])
					}
					if err == nil && !subjectCarries(subj, c) {
						err = fmt.Errorf("subject %s does not carry %s of %s", subj, c.Key(), c.Log)
					}
					if err == nil && prep != nil {
						prep.Prepare(c)
					}
					b.changes[i], b.errs[i] = c, err
				}
				close(b.done)
			}
		}()
	}
	var perr error
	go func() {
		defer close(order)
		defer close(jobs)
		newBatch := func() *prepBatch {
			return &prepBatch{subjects: make([]string, 0, batchSize), data: make([][]byte, 0, batchSize), changes: make([]*schema.Change, 0, batchSize)}
		}
		cur := newBatch()
		flush := func() bool {
			if len(cur.subjects) == 0 {
				return true
			}
			cur.errs, cur.done = make([]error, len(cur.subjects)), make(chan struct{})
			select {
			case order <- cur:
			case <-ctx.Done():
				return false
			}
			select {
			case jobs <- cur:
			case <-ctx.Done():
				close(cur.done) // never decoded: the consumer stops on ctx
				return false
			}
			cur = newBatch()
			return true
		}
		for _, p := range parts {
			var err error
			if p.Changes != nil {
				err = p.Changes(func(subject string, c *schema.Change, data []byte) error {
					cur.subjects, cur.data, cur.changes = append(cur.subjects, subject), append(cur.data, data), append(cur.changes, c)
					if len(cur.subjects) == batchSize && !flush() {
						return ctx.Err()
					}
					return nil
				})
			} else {
				err = p.Records(func(subject string, data []byte) error {
					cur.subjects, cur.data, cur.changes = append(cur.subjects, subject), append(cur.data, data), append(cur.changes, nil)
					if len(cur.subjects) == batchSize && !flush() {
						return ctx.Err()
					}
					return nil
				})
			}
			if err != nil {
				perr = fmt.Errorf("snapshot of shard %s: %w", p.Shard, err)
				return
			}
		}
		if !flush() {
			perr = ctx.Err()
		}
	}()

	n := 0
	for b := range order {
		<-b.done
		if ctx.Err() != nil {
			continue // drain
		}
		for i, c := range b.changes {
			if b.errs[i] != nil {
				bad(b.subjects[i], b.errs[i])
				continue
			}
			delivered.Add(1)
			sink.Change(c)
			n++
		}
	}
	wg.Wait()
	if perr != nil { // written before order was closed
		return n, perr
	}
	return n, ctx.Err()
}
