package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
)

// Sink receives the stream's changes. Its methods are called from the Follower's goroutine only,
// never concurrently.
type Sink interface {
	// Reset starts a new bootstrap from a stream of the given epoch: what was delivered before
	// belongs to another bootstrap. The Sink decides whether it may keep serving old state while
	// the new bootstrap fills (same epoch) or must drop it at once (another epoch).
	Reset(epoch string)
	// Change delivers one change. A log's changes arrive in its version order; a head change
	// (Kind == schema.KindHead) is a checkpoint of its log at its Version.
	Change(c *schema.Change)
	// Checkpoint says that every change published so far has been delivered.
	Checkpoint()
}

// Heartbeats is a Sink that wants to know when the stream was last heard from (its staleness).
// The Follower calls Heard for every message it delivers, with the shard of the message's
// subject (its second token: a shard number, or schema.PlatformLog for the registry), and with
// shard "" whenever the stream confirmed that everything published so far was delivered: a
// checkpoint, or the Follower's consumer check at every Watch tick while the stream is idle
// (the check a consumer's idle heartbeat would make, but visible). Heard may be called
// concurrently with the Sink's other methods.
type Heartbeats interface {
	Heard(shard string, at time.Time)
}

// UnsupportedSink is a Sink that wants to know of the changes the Follower skipped because they
// are written in a change schema newer than this build reads (schema.UnsupportedSchemaError): a
// writer upgraded before its readers. log is the change's log (from the message, or its
// subject); Unsupported is called from the Follower's goroutine.
type UnsupportedSink interface {
	Unsupported(log string, schemaVersion int)
}

// Resyncer is a Sink that can ask for a new bootstrap: after each checkpoint the Follower asks
// it, and starts over (Sink.Reset with the same epoch) when the answer is not "". A replica
// that finds its state disagreeing with what the stream says it applied uses it to heal.
type Resyncer interface {
	ResyncWanted() string
}

// Follower keeps a Sink current with the state stream: it bootstraps with the last message of
// every subject of its filter, then follows new messages. It starts over (Sink.Reset) when the
// stream's epoch changes, when the stream is deleted or recreated, or when the connection was
// down for longer than half the tombstone horizon.
type Follower struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	cfg     Config
	filters []string
	sink    Sink
	log     *slog.Logger

	// Watch is how often the Follower checks the stream's identity and the connection (default
	// 1s).
	Watch time.Duration

	delivered atomic.Uint64                           // messages handed to the sink
	pending   atomic.Uint64                           // messages the server still had for us at the last delivery
	resets    atomic.Uint64                           // bootstraps started
	malformed atomic.Uint64                           // messages skipped because they did not decode
	resyncs   atomic.Uint64                           // bootstraps the sink asked for
	processed atomic.Uint64                           // stream sequence of the last message handled (Heartbeats)
	onApply   atomic.Pointer[func(lag time.Duration)] // SetOnApply

	// unsupported counts the messages skipped because their change schema is newer than this
	// build reads, newestSchema the newest such schema; warned names the (log, schema) pairs
	// already logged (Follower goroutine only).
	unsupported  atomic.Uint64
	newestSchema atomic.Int64
	warned       map[string]bool

	snaps         SnapshotSource // UseSnapshots; nil: bootstrap from the stream only
	fromSnapshot  atomic.Uint64  // bootstraps started from snapshots
	fallbacks     atomic.Uint64  // bootstraps that wanted snapshots and fell back to the stream
	fallbackWhy   atomic.Pointer[string]
	skippedBySnap atomic.Uint64 // stream messages skipped because a snapshot held them
}

// NewFollower returns a Follower of the state stream for the subject filters.
func NewFollower(nc *nats.Conn, cfg Config, filters []string, sink Sink, log *slog.Logger) (*Follower, error) {
	js, err := cfg.JetStream(nc)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Follower{nc: nc, js: js, cfg: cfg.WithDefaults(), filters: filters, sink: sink, log: log, Watch: time.Second}, nil
}

// SetOnApply has fn told the apply lag of every log head delivered once a bootstrap has caught
// up (its first checkpoint): the time from the head's publication (its stream timestamp, the
// NATS server's clock) to its delivery to the Sink, which applies its transaction. fn is called
// from the Follower's goroutine. Safe to call at any time, also while Run runs.
func (f *Follower) SetOnApply(fn func(lag time.Duration)) { f.onApply.Store(&fn) }

// Stats are the Follower's counters.
type Stats struct {
	Delivered, Pending, Resets, Malformed uint64
	// Resyncs counts the bootstraps started because the Sink asked for one (Resyncer).
	Resyncs uint64
	// FromSnapshot counts the bootstraps that started from snapshots (UseSnapshots);
	// SnapshotFallbacks those that wanted to and read the whole stream instead, the last one
	// for the reason LastFallback.
	FromSnapshot, SnapshotFallbacks uint64
	LastFallback                    string
	// SnapshotSkipped counts stream messages skipped because a snapshot already held them.
	SnapshotSkipped uint64
	// Unsupported counts the messages skipped because their change schema is newer than this
	// build reads (not counted as Malformed); UnsupportedSchema is the newest such schema.
	Unsupported       uint64
	UnsupportedSchema int
}

// Stats returns the Follower's counters. Safe for concurrent use.
func (f *Follower) Stats() Stats {
	st := Stats{Delivered: f.delivered.Load(), Pending: f.pending.Load(), Resets: f.resets.Load(), Malformed: f.malformed.Load(),
		Resyncs: f.resyncs.Load(), FromSnapshot: f.fromSnapshot.Load(), SnapshotFallbacks: f.fallbacks.Load(),
		SnapshotSkipped: f.skippedBySnap.Load(), Unsupported: f.unsupported.Load(), UnsupportedSchema: int(f.newestSchema.Load())}
	if why := f.fallbackWhy.Load(); why != nil {
		st.LastFallback = *why
	}
	return st
}

var (
	errRestart = errors.New("feed: restart the bootstrap")
	// errResync restarts a bootstrap the Sink asked for: the next one reads the whole stream
	// (a snapshot may be what disagreed).
	errResync = fmt.Errorf("%w: the sink asked for a new bootstrap", errRestart)
)

// Run follows the stream until ctx is done. It never returns another error: a missing stream or a
// broken connection is waited out, logged, and retried.
func (f *Follower) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	fullNext := false // the next bootstrap reads the whole stream (after a resync)
	for ctx.Err() == nil {
		s, err := f.js.Stream(ctx, f.cfg.Stream)
		if err != nil {
			switch {
			case ctx.Err() != nil:
			case errors.Is(err, jetstream.ErrStreamNotFound):
				// Normal until a relay has created it (first start, or during a rebuild).
				f.log.Info("waiting for the state stream", "stream", f.cfg.Stream)
			default:
				f.log.Warn("state stream unavailable; retrying", "stream", f.cfg.Stream, "err", err)
			}
			sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		info := s.CachedInfo()
		// A regional mirror (package region) names the stream it copies: snapshots of that
		// stream apply to it (sequences are the same in a mirror).
		epoch, identity := StreamIdentity(info)
		f.resets.Add(1)
		f.sink.Reset(epoch)
		var start uint64
		var skip map[string]uint64
		if f.snaps != nil && !fullNext {
			start, skip, err = f.fromSnapshots(ctx, epoch, identity)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				if !errors.Is(err, errNoSnapshot) {
					why := err.Error()
					f.fallbackWhy.Store(&why)
					f.fallbacks.Add(1)
					f.log.Warn("snapshot bootstrap failed: bootstrapping from the stream", "reason", why)
					// What was delivered belongs to an abandoned bootstrap.
					f.sink.Reset(epoch)
				}
				start, skip = 0, nil
			} else {
				f.fromSnapshot.Add(1)
			}
		}
		fullNext = false
		err = f.follow(ctx, s, epoch, info.Created, start, skip)
		if ctx.Err() != nil {
			return nil
		}
		fullNext = errors.Is(err, errResync)
		f.log.Info("state stream bootstrap restarts", "reason", err)
	}
	return nil
}

// follow reads the stream: the last message of every subject (start 0), or every message from
// start on, skipping those of a shard at or below skip[shard] (a snapshot delivered them).
func (f *Follower) follow(ctx context.Context, s jetstream.Stream, epoch string, created time.Time, start uint64, skip map[string]uint64) error {
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: f.filters, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}
	if start > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
		// The snapshots handled everything before start: the watch compares the consumer's
		// delivered sequence (start-1 until a message comes) with what was handled, and an
		// idle stream after a snapshot bootstrap must count as heard from, not stale.
		f.processed.Store(start - 1)
	}
	cons, err := s.OrderedConsumer(ctx, cc)
	if err != nil {
		return fmt.Errorf("create consumer: %w", err)
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("consumer info: %w", err)
	}
	hb, _ := f.sink.(Heartbeats)
	// newer counts this bootstrap's messages of a newer schema: a bootstrap the Sink asks for
	// would skip them again, so none is started for it.
	var newer uint64
	live := ci.NumPending == 0 // caught up: heads from now on are timed (SetOnApply)
	if ci.NumPending == 0 {
		// Nothing matches the filter: the empty stream is a checkpoint already.
		f.sink.Checkpoint()
		if hb != nil {
			hb.Heard("", time.Now())
		}
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(4096))
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	defer it.Stop()

	// The watchdog stops the iterator when the bootstrap must restart.
	why := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		err := f.watch(wctx, epoch, created, cons, hb)
		why <- err
		it.Stop()
	}()

	for {
		msg, err := it.Next()
		if err != nil {
			select {
			case w := <-why:
				if w != nil {
					return w
				}
			default:
			}
			return err
		}
		if e := msg.Headers().Get(HeaderEpoch); e != epoch {
			return fmt.Errorf("%w: message of epoch %q in a stream of epoch %q", errRestart, e, epoch)
		}
		md, merr := msg.Metadata()
		sh := subjectShard(f.cfg.Prefix, msg.Subject())
		if hb != nil && sh != "" {
			hb.Heard(sh, time.Now())
		}
		var c *schema.Change
		skipped := false
		if s, ok := skip[sh]; ok && merr == nil && md.Sequence.Stream <= s {
			skipped = true // the shard's snapshot holds this message or a later one of its subject
			f.skippedBySnap.Add(1)
		} else {
			c, err = schema.DecodeChange(msg.Data())
			if err == nil && !subjectCarries(msg.Subject(), c) {
				err = fmt.Errorf("subject %s does not carry %s of %s", msg.Subject(), c.Key(), c.Log)
			}
		}
		var unsupported *schema.UnsupportedSchemaError
		switch {
		case skipped:
		case errors.As(err, &unsupported):
			newer++
			f.skipUnsupported(msg.Subject(), unsupported)
		case err != nil:
			// A message this build cannot read is skipped, not fatal: it is logged and counted,
			// and the log's next head still brings its readers forward.
			f.malformed.Add(1)
			f.log.Error("skipping malformed stream message", "subject", msg.Subject(), "err", err)
		default:
			f.delivered.Add(1)
			f.sink.Change(c)
			if fn := f.onApply.Load(); fn != nil && live && merr == nil && c.IsHead() {
				(*fn)(time.Since(md.Timestamp))
			}
		}
		if merr == nil {
			f.pending.Store(md.NumPending)
			f.processed.Store(md.Sequence.Stream)
			if md.NumPending == 0 {
				live = true
				f.sink.Checkpoint()
				if hb != nil {
					hb.Heard("", time.Now())
				}
				if rs, ok := f.sink.(Resyncer); ok {
					if why := rs.ResyncWanted(); why != "" && newer > 0 {
						if !f.warned["resync"] {
							f.warned["resync"] = true
							f.log.Warn("not bootstrapping again: this bootstrap skipped changes of a newer schema, which a new one would skip too",
								"why", why, "skipped", newer)
						}
					} else if why != "" {
						f.resyncs.Add(1)
						return fmt.Errorf("%w: %s", errResync, why)
					}
				}
			}
		}
	}
}

// watch returns when the bootstrap must restart: the stream was deleted or recreated, its epoch
// changed, or the connection was down for longer than half the tombstone horizon (deletions may
// have expired unseen). It returns nil when ctx ends.
//
// With a Heartbeats sink, each tick whose stream check passes also asks the consumer whether
// anything is pending: when nothing is, and every message it delivered was handled, the stream
// has been heard from for every shard.
func (f *Follower) watch(ctx context.Context, epoch string, created time.Time, cons jetstream.Consumer, hb Heartbeats) error {
	t := time.NewTicker(f.Watch)
	defer t.Stop()
	var downSince time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if f.nc.Status() != nats.CONNECTED {
			if downSince.IsZero() {
				downSince = time.Now()
			}
			continue
		}
		if !downSince.IsZero() {
			down := time.Since(downSince)
			downSince = time.Time{}
			if down > f.cfg.TombstoneTTL/2 {
				return fmt.Errorf("%w: disconnected for %s, longer than half the tombstone horizon", errRestart, down.Round(time.Second))
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s, err := f.js.Stream(cctx, f.cfg.Stream)
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return fmt.Errorf("%w: stream %s deleted", errRestart, f.cfg.Stream)
		case err != nil:
			continue // transient: try again at the next tick
		}
		info := s.CachedInfo()
		if e := info.Config.Metadata[epochKey]; e != epoch {
			return fmt.Errorf("%w: stream epoch changed from %q to %q", errRestart, epoch, e)
		}
		if !info.Created.Equal(created) {
			return fmt.Errorf("%w: stream %s was recreated", errRestart, f.cfg.Stream)
		}
		// A regional mirror cut off from its source is idle, not current: the stream is heard
		// from only while the mirror hears from its source (StreamCurrent).
		if hb != nil && StreamCurrent(info) {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			ci, err := cons.Info(cctx)
			cancel()
			if err == nil && ci.NumPending == 0 && ci.Delivered.Stream <= f.processed.Load() {
				hb.Heard("", time.Now())
			}
		}
	}
}

// skipUnsupported skips a message of a change schema newer than this build reads: it is counted,
// told to an UnsupportedSink, and logged once per log and schema (a writer switched before its
// readers sends many).
func (f *Follower) skipUnsupported(subject string, u *schema.UnsupportedSchemaError) {
	f.unsupported.Add(1)
	if int64(u.Schema) > f.newestSchema.Load() {
		f.newestSchema.Store(int64(u.Schema))
	}
	log := u.Log
	if log == "" {
		log = subjectLog(f.cfg.Prefix, subject)
	}
	if f.warned == nil {
		f.warned = map[string]bool{}
	}
	if key := fmt.Sprint(log, "@", u.Schema); !f.warned[key] {
		f.warned[key] = true
		f.log.Error("skipping changes of a newer change schema: the log keeps its last state here until this process is upgraded",
			"log", log, "schema", u.Schema, "reads_up_to", schema.ChangeSchemaVersion, "subject", subject)
	}
	if us, ok := f.sink.(UnsupportedSink); ok {
		us.Unsupported(log, u.Schema)
	}
}

// subjectLog returns the log of a state stream subject: schema.PlatformLog for the registry's,
// else its tenant token (<prefix>.<shard>.<tenant>.…); "" for a subject of another shape.
func subjectLog(prefix, subject string) string {
	sh := subjectShard(prefix, subject)
	if sh == "" || sh == schema.PlatformLog {
		return sh
	}
	rest := subject[len(prefix)+1+len(sh)+1:]
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		return rest[:i]
	}
	return ""
}

// subjectShard returns the shard token of a state stream subject (<prefix>.<shard>.…): a shard
// number, or schema.PlatformLog; "" for a subject of another shape. It does not allocate.
func subjectShard(prefix, subject string) string {
	if len(subject) <= len(prefix) || subject[:len(prefix)] != prefix || subject[len(prefix)] != '.' {
		return ""
	}
	rest := subject[len(prefix)+1:]
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		return rest[:i]
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// subjectCarries reports whether a message's subject is the one its change belongs on, so that a
// change published on a foreign subject (a tenant's data under another tenant) is never applied.
func subjectCarries(subject string, c *schema.Change) bool {
	if c.Log == schema.PlatformLog {
		return c.Vis == schema.Pub && strings.HasSuffix(subject, "."+schema.PlatformLog+"."+string(c.Kind)+"."+c.ID)
	}
	return strings.HasSuffix(subject, "."+c.Log+"."+c.Key())
}
