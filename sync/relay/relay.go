// Package relay publishes the origin's outboxes to JetStream: the replication outbox to the
// compacted state stream, the event outbox to the event stream.
//
// # Overview
//
// One relay at a time publishes: it holds a lease in the database, renewed well before it expires,
// with a fencing token that increases with every new holder. The lease is short (2 s by default,
// renewed every half second, also between the batches of long work) so that a standby takes over
// about two seconds after the holder dies; a holder gives it up at once when it stops (Run's end)
// and when it loses its NATS connection, so that a standby still connected publishes meanwhile. A
// holder that cannot renew stops publishing a fifth of the lease before it can expire, by its own
// monotonic clock. For each log with pending rows it publishes whole transactions in version
// order, ending with the log's head marker, every message fenced on the head subject's last
// sequence and the head sent only after the rest was stored (feed.Publish). The relay learns a
// log's published version from the head in the stream, not from its own memory or the database,
// so a relay that restarts (or takes over) never republishes what a head covers; what a failed
// publish left above the head is sent again, all of it and in order, so that each subject ends at
// its last state before the head lands (changes carry no Nats-Msg-Id: feed.Message.MsgID says
// why). Readers take a second copy as the same state at the same version. Before it publishes on
// a head it did not store itself, or after a failed publish, the relay stores that head again
// (Relay.claim), so that any other publisher of the same head is fenced off before this relay's
// changes land.
// What the stream holds is recorded in the database (the log's slot versions and digest, the
// outbox rows deleted) a busy log's publishes at a time, at most Config.SettleEvery after the
// first of them; the relay computes each head's digest from that record and what it published
// since. A relay that takes over a log whose record is behind the stream, with the rows in
// between still in the outbox, settles them from there before it publishes. A log whose head is
// missing from the stream (a new tenant, or a stream that was recreated) is published from a
// snapshot of the database first. The event outbox goes to the
// event stream on a cadence of its own (Config.EventEvery): webhooks need no millisecond latency.
//
// A relay refuses to publish into a stream of another cluster epoch (a database reset under a
// running stream): it logs, reports it in Stats, and waits for `vitrine replica rebuild`.
//
// # Invariants
//
//   - A log's messages reach the stream in version order, and a head only after every change it
//     covers; a publisher fenced off (the head moved) writes nothing more. Nothing at or below a
//     head's version is stored after it; above it, a retry or a new lease holder may store a
//     change again, after its first copy and before the head that covers it.
//   - Outbox rows are deleted only after the stream acknowledged them, and only by the lease
//     holder; the log's record moves with them, in the same transaction.
//   - Run returns only when its context ends; every failure is logged and retried.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/feed"
)

// Outbox is the database side the relay reads and writes. The origin's *store.DB satisfies it.
type Outbox interface {
	Epoch(ctx context.Context) (string, error)
	Logs(ctx context.Context) ([]schema.LogRef, error)
	PendingLogs(ctx context.Context) ([]schema.LogRef, error)
	OutboxRows(ctx context.Context, logID string, after int64, limit int) ([]schema.OutboxRow, error)
	// OutboxRowsWithSlots is OutboxRows and SlotVersions of the rows' keys in one query.
	OutboxRowsWithSlots(ctx context.Context, logID string, after int64, limit int) ([]schema.OutboxRow, map[string]int64, error)
	LogDigestState(ctx context.Context, logID string) (schema.DigestState, bool, error)
	SlotVersions(ctx context.Context, logID string, keys []string) (map[string]int64, error)
	SettleOutbox(ctx context.Context, logID string, from, through int64, changes []schema.SlotChange, d schema.LogDigest, lease, holder string, token int64) (bool, error)
	ReplaceSlots(ctx context.Context, logID string, states map[string]int64, d schema.LogDigest, version int64, lease, holder string, token int64) (bool, error)
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (int64, error)
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (int64, error)
	RenewLease(ctx context.Context, name, holder string, token int64, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string, token int64) error
	PendingEvents(ctx context.Context, limit int) ([]schema.EventRow, error)
	DeleteEvents(ctx context.Context, ids []string) error
	Snapshot(ctx context.Context, log schema.LogRef, fn func(c schema.Change) error) (int64, error)
}

// Config tunes a relay. Zero values mean the defaults.
type Config struct {
	Feed feed.Config
	// Holder identifies this relay in the lease (default: host name, pid and a random suffix).
	Holder string
	// LeaseName is the lease all relays of a cluster compete for (default "relay").
	LeaseName string
	// LeaseTTL is the lease duration (default DefaultLeaseTTL); the relay renews it every quarter
	// of it and stops publishing a fifth of it before it would expire. A standby takes a dead
	// holder's lease within LeaseTTL (plus one Poll).
	LeaseTTL time.Duration
	// Poll is how often the outbox is read when nothing wakes the relay (default 50ms).
	Poll time.Duration
	// HeadScan is how often the relay looks for logs whose head is missing from the stream
	// (default 5s).
	HeadScan time.Duration
	// ChangeSchema is the change schema the relay publishes (default schema.ChangeSchemaVersion):
	// outbox rows written in a newer one are re-encoded (schema.EncodeChangeAt), so that a fleet
	// whose readers do not all read the newest schema yet can be upgraded first.
	ChangeSchema int
	// Linger spaces the rounds of a busy relay: after a round that published, the next one
	// begins no sooner than Linger after it began, so that the writes committed meanwhile share
	// one publish (and one settling transaction) instead of taking a round each. A write
	// arriving at an idle relay is published at once; under load each waits at most Linger more.
	// 0 disables it.
	Linger time.Duration
	// EventEvery spaces the rounds that read the event outbox (default DefaultEventEvery): a
	// round publishes events only when the last one that read them began at least EventEvery
	// before, or left some behind. Webhooks need no millisecond latency, and a round per write
	// that also read and emptied the event outbox cost two statements and a publish each.
	// Negative: every round reads it.
	EventEvery time.Duration
	// SettleEvery spaces the settling transactions of a log (default DefaultSettleEvery): after
	// a publish the relay records what the stream now holds (slot versions, digest, the outbox
	// rows deleted) only once SettleEvery has passed since the log's first unsettled publish,
	// for all its publishes since in one transaction. Meanwhile it keeps what it published in
	// memory. A relay that stops (or loses the lease) before settling leaves the record behind
	// the stream with the rows still in the outbox, which the next holder settles on adoption
	// (loadHead). Negative: settle every publish.
	SettleEvery time.Duration
	Logger      *slog.Logger
}

// DefaultSettleEvery is the default of Config.SettleEvery: a settling transaction a tenth of a
// second at most per busy log, not one per publish (~0.25 ms of PostgreSQL's CPU each, measured
// in the freshness bench).
const DefaultSettleEvery = 100 * time.Millisecond

// DefaultEventEvery is the default of Config.EventEvery: a domain event reaches the event stream
// within about a tenth of a second of its commit (one poll more at most), its webhooks after it.
const DefaultEventEvery = 100 * time.Millisecond

// DefaultLeaseTTL is the default lease duration: fail-over in about two seconds, renewals four
// times as often (a small UPDATE each), and 1.1 s of database trouble tolerated before the holder
// stops publishing.
const DefaultLeaseTTL = 2 * time.Second

func (c Config) withDefaults() Config {
	c.Feed = c.Feed.WithDefaults()
	if c.Holder == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		c.Holder = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if c.LeaseName == "" {
		c.LeaseName = "relay"
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.Poll == 0 {
		c.Poll = 50 * time.Millisecond
	}
	if c.HeadScan == 0 {
		c.HeadScan = 5 * time.Second
	}
	if c.ChangeSchema == 0 {
		c.ChangeSchema = schema.ChangeSchemaVersion
	}
	if c.EventEvery == 0 {
		c.EventEvery = DefaultEventEvery
	}
	if c.SettleEvery == 0 {
		c.SettleEvery = DefaultSettleEvery
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Relay publishes the outboxes. Wake and Stats are safe for concurrent use; Run and Rebuild are
// not (one Run per Relay).
type Relay struct {
	db   Outbox
	nc   *nats.Conn
	js   jetstream.JetStream
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	// What the wake-ups since the last round asked for: a scan of the whole outbox (Wake), or
	// only the named logs (WakeLogs).
	wakeMu    sync.Mutex
	wakeAll   bool
	wakeNames map[string]struct{}

	// Lease state, owned by the Run goroutine.
	token      int64
	leaseUntil time.Time // monotonic: the relay publishes only before it
	renewAt    time.Time
	epoch      string // the database's epoch, verified against the stream's while verified is set
	verified   bool
	checkedAt  time.Time
	heads      map[string]head // published head of each log, learned from the stream
	lastScan   time.Time
	// eventsAt is when the last round that read the event outbox began; eventsLeft is set when
	// it left events behind (its rounds' limit), so that the next round reads on at once.
	// eventsSkipped is set when the last round could have read them but was early: Run wakes
	// for them when they are due.
	eventsAt      time.Time
	eventsLeft    bool
	eventsSkipped bool
	refs          map[string]schema.LogRef // every log a scan returned, by name: what WakeLogs names
	// unsettled names the logs published beyond their record in the database (head.pending).
	unsettled map[string]schema.LogRef

	stats counters
}

// head is what the relay knows of a log in the stream: its head marker and, once the log is
// adopted, the digest of the live states the stream holds at the head's version. Its record in
// the database is settled at version settled: the head's, or below it by the publishes whose
// slot changes are pending (Config.SettleEvery).
type head struct {
	seq     uint64 // stream sequence of the log's head marker; 0 when the stream has none
	version int64
	adopted bool
	digest  schema.LogDigest
	// body is the head marker's message as stored; claimed is set while the message at seq is
	// one this relay stored since it last learned the head or failed to publish (claim).
	body    []byte
	claimed bool
	// settled is the version of the log's record in the database; pending holds the final state
	// of each key published above it, in first-published order (index: key to position), and
	// since when.
	settled int64
	pending []schema.SlotChange
	index   map[string]int
	since   time.Time
}

// merge adds a publish's slot changes to h's pending ones (a key's later state replaces its
// earlier one).
func (h *head) merge(changes []schema.SlotChange) {
	if len(h.pending) == 0 {
		h.since = time.Now()
	}
	if h.index == nil {
		h.index = make(map[string]int, len(changes))
	}
	for _, c := range changes {
		if i, ok := h.index[c.Key]; ok {
			h.pending[i] = c
			continue
		}
		h.index[c.Key] = len(h.pending)
		h.pending = append(h.pending, c)
	}
}

// overlay makes prev, the settled slot versions of some keys, what the stream holds for them:
// the pending state of each key published since the record.
func (h *head) overlay(prev map[string]int64) {
	for _, c := range h.pending {
		if c.Deleted {
			delete(prev, c.Key)
		} else {
			prev[c.Key] = c.Version
		}
	}
}

type counters struct {
	published, batches, fenced, snapshots, events, repairs, settles, claims atomic.Uint64
	lagNanos, publishedAt                                                   atomic.Int64 // publishedAt: unix nanoseconds
	leaseHeld, epochMismatch                                                atomic.Bool
	mu                                                                      sync.Mutex
	lastErr                                                                 string
}

// Stats are a relay's counters for metrics.
type Stats struct {
	// Published counts change messages written to the state stream (heads excluded).
	Published uint64
	// Batches counts publishes the stream took whole: a log's changes of a round with their head,
	// a part of a snapshot, or a claim (Claims).
	Batches uint64
	// Fenced counts publishes refused because another publisher moved a log's head.
	Fenced uint64
	// Settles counts the transactions that recorded publishes in the database (SettleOutbox).
	Settles uint64
	// Snapshots counts logs published from a database snapshot.
	Snapshots uint64
	// Claims counts head markers stored again to move a log's fence before publishing on a head
	// this relay did not store, or after a failed publish (Relay.claim).
	Claims uint64
	// Events counts domain events written to the event stream.
	Events uint64
	// Repairs counts logs republished from a snapshot because the stream no longer held what the
	// relay had recorded publishing (a lost tail, a gap in the outbox, a head published by
	// something else).
	Repairs uint64
	// Lag is the time from the commit of the oldest row of the last batch to its publication.
	Lag time.Duration
	// LeaseHeld reports whether this relay holds the lease.
	LeaseHeld bool
	// EpochMismatch reports that the stream belongs to another database: publishing is refused.
	EpochMismatch bool
}

// New returns a relay publishing db's outboxes over nc.
func New(db Outbox, nc *nats.Conn, cfg Config) (*Relay, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := schema.CheckWriteSchema(cfg.ChangeSchema); err != nil {
		return nil, err
	}
	return &Relay{db: db, nc: nc, js: js, cfg: cfg, log: cfg.Logger.With("component", "relay"), wake: make(chan struct{}, 1)}, nil
}

// Wake tells the relay that the outbox has new rows. It never blocks.
func (r *Relay) Wake() {
	r.wakeMu.Lock()
	r.wakeAll = true
	r.wakeMu.Unlock()
	r.signal()
}

// WakeLogs tells the relay that the named logs (tenant slugs, or the platform log's name) have
// new rows in the outbox. It never blocks. The round it starts publishes those logs without
// scanning the outbox for pending logs, unless a log is one the relay has not met in a scan yet;
// any other pending log waits for the next poll (Config.Poll) or Wake.
//
// The scan is what it saves: the outbox is a queue whose index keeps an entry for every row
// deleted since the last vacuum, and finding the pending logs walks them (without autovacuum, a
// few hundred buffers after 50,000 writes, growing with every write), where publishing a named log
// seeks straight to its first unpublished row.
func (r *Relay) WakeLogs(names []string) {
	r.wakeMu.Lock()
	if r.wakeNames == nil {
		r.wakeNames = map[string]struct{}{}
	}
	for _, n := range names {
		r.wakeNames[n] = struct{}{}
	}
	r.wakeMu.Unlock()
	r.signal()
}

func (r *Relay) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// woken returns what the wake-ups since the last call asked for: nil for a scan of the outbox,
// else the named logs (none when a poll's round took in what was asked). It clears them.
func (r *Relay) woken() []string {
	r.wakeMu.Lock()
	defer r.wakeMu.Unlock()
	all, names := r.wakeAll, r.wakeNames
	r.wakeAll, r.wakeNames = false, nil
	if all {
		return nil
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	return out
}

// PublishedWithin reports whether the relay published a log's changes within d: whether it is
// busy, for background work that yields to it (the snapshot writer). Safe for concurrent use.
func (r *Relay) PublishedWithin(d time.Duration) bool {
	at := r.stats.publishedAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < d
}

// Stats returns the relay's counters.
func (r *Relay) Stats() Stats {
	return Stats{
		Published: r.stats.published.Load(), Batches: r.stats.batches.Load(), Fenced: r.stats.fenced.Load(), Settles: r.stats.settles.Load(),
		Snapshots: r.stats.snapshots.Load(), Claims: r.stats.claims.Load(), Events: r.stats.events.Load(), Repairs: r.stats.repairs.Load(), Lag: time.Duration(r.stats.lagNanos.Load()),
		LeaseHeld: r.stats.leaseHeld.Load(), EpochMismatch: r.stats.epochMismatch.Load(),
	}
}

var errLeaseLost = errors.New("relay: lease lost")

// Run publishes until ctx ends, then gives the lease up.
func (r *Relay) Run(ctx context.Context) error {
	sub, err := r.nc.Subscribe(r.cfg.Feed.WakeSubject(), func(m *nats.Msg) {
		// An origin names the logs its commit took versions of, one per line; an empty hint
		// (an older origin) asks for a scan.
		if len(m.Data) == 0 {
			r.Wake()
			return
		}
		r.WakeLogs(strings.Split(string(m.Data), "\n"))
	})
	if err != nil {
		return fmt.Errorf("relay: subscribe to wake-ups: %w", err)
	}
	defer sub.Unsubscribe()
	poll := time.NewTicker(r.cfg.Poll)
	defer poll.Stop()
	defer r.release("shutdown")
	defer r.settleBeforeStop()
	var named []string // nil: scan the outbox for pending logs
	for {
		began, published := time.Now(), r.stats.published.Load()
		sctx, cancel := r.stepContext(ctx)
		err := r.step(sctx, named)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.noteErr(err)
		}
		if wait := r.cfg.Linger - time.Since(began); wait > 0 && r.stats.published.Load() != published {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		var eventsDue, settleDue <-chan time.Time
		var timer, settleTimer *time.Timer
		if r.eventsSkipped {
			timer = time.NewTimer(r.cfg.EventEvery - time.Since(r.eventsAt))
			eventsDue = timer.C
		}
		if next := r.nextSettle(); !next.IsZero() {
			settleTimer = time.NewTimer(time.Until(next))
			settleDue = settleTimer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
			named = r.woken()
		case <-poll.C:
			named = nil
			r.woken() // this round scans: what was asked is in it
		case <-eventsDue:
			named = []string{} // a round for the events alone
		case <-settleDue:
			named = []string{} // a round that settles what is due
		}
		if timer != nil {
			timer.Stop()
		}
		if settleTimer != nil {
			settleTimer.Stop()
		}
	}
}

// settleBeforeStop settles every log published beyond its record while the lease is held, so
// that the next holder adopts them without settling from the outbox.
func (r *Relay) settleBeforeStop() {
	if len(r.unsettled) == 0 || !r.holds() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.settleDue(ctx, true); err != nil {
		r.log.Warn("relay could not settle before stopping; the next holder settles from the outbox", "err", err)
	}
}

func (r *Relay) noteErr(err error) {
	r.stats.mu.Lock()
	repeat := r.stats.lastErr == err.Error()
	r.stats.lastErr = err.Error()
	r.stats.mu.Unlock()
	if !repeat {
		r.log.Warn("relay step failed; retrying", "err", err)
	}
}

// stepContext returns ctx, also canceled when the NATS connection drops: a publish waiting for an
// acknowledgement that cannot come ends at once, and the next step gives the lease up.
func (r *Relay) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				if r.nc.Status() != nats.CONNECTED {
					cancel()
					return
				}
			}
		}
	}()
	return sctx, cancel
}

// step keeps the lease and publishes what is pending: in the named logs, or in every log when
// named is nil.
func (r *Relay) step(ctx context.Context, named []string) error {
	// Set again below only by a round that could have read the events but was early for them:
	// a relay that cannot publish (no lease, another epoch) must not be woken for them.
	r.eventsSkipped = false
	if r.nc.Status() != nats.CONNECTED {
		// Without NATS this relay cannot publish: give the lease to a standby that can, rather
		// than make edges wait for it to expire. Take none while disconnected.
		r.release("NATS connection lost")
		return nil
	}
	if err := r.keepLease(ctx); err != nil {
		return err
	}
	if !r.holds() || !r.verified {
		return nil
	}
	if err := r.publishLogs(ctx, named); err != nil {
		return err
	}
	if !r.eventsLeft && time.Since(r.eventsAt) < r.cfg.EventEvery {
		// Read them when they are due, even if nothing else wakes the relay before.
		r.eventsSkipped = true
		return nil
	}
	r.eventsAt, r.eventsSkipped = time.Now(), false
	return r.publishEvents(ctx)
}

// holds reports whether the lease is held with time to spare. It reads the monotonic clock, so a
// process that was frozen past its lease sees it expired when it resumes.
func (r *Relay) holds() bool { return r.token != 0 && time.Now().Before(r.leaseUntil) }

func (r *Relay) keepLease(ctx context.Context) error {
	ttl := r.cfg.LeaseTTL
	if r.token != 0 && time.Now().Before(r.renewAt) && r.holds() {
		// Between renewals, retry a failed or refused epoch check once a second.
		if !r.verified && time.Since(r.checkedAt) >= time.Second {
			return r.checkEpoch(ctx)
		}
		return nil
	}
	start := time.Now()
	if r.token != 0 {
		ok, err := r.db.RenewLease(ctx, r.cfg.LeaseName, r.cfg.Holder, r.token, ttl)
		if err != nil {
			if !r.holds() {
				r.dropLease("renewal failed")
			}
			return err
		}
		if !ok {
			r.dropLease("another relay holds the lease")
			return nil
		}
		r.leaseUntil, r.renewAt = start.Add(ttl-ttl/5), start.Add(ttl/4)
		return r.checkEpoch(ctx)
	}
	token, err := r.db.AcquireLease(ctx, r.cfg.LeaseName, r.cfg.Holder, ttl)
	if err != nil || token == 0 {
		return err
	}
	r.token = token
	r.leaseUntil, r.renewAt = start.Add(ttl-ttl/5), start.Add(ttl/4)
	r.heads, r.unsettled = map[string]head{}, nil
	r.lastScan = time.Time{}
	r.verified = false
	r.stats.leaseHeld.Store(true)
	r.log.Info("relay holds the lease", "holder", r.cfg.Holder, "token", token)
	return r.checkEpoch(ctx)
}

// renewIfDue renews the lease in the middle of long work (many batches, a large snapshot) when a
// renewal is due, so that the work does not outlast the lease. A failed renewal is left to holds().
func (r *Relay) renewIfDue(ctx context.Context) {
	if r.token == 0 || time.Now().Before(r.renewAt) {
		return
	}
	start, ttl := time.Now(), r.cfg.LeaseTTL
	ok, err := r.db.RenewLease(ctx, r.cfg.LeaseName, r.cfg.Holder, r.token, ttl)
	switch {
	case err != nil:
	case !ok:
		r.dropLease("another relay holds the lease")
	default:
		r.leaseUntil, r.renewAt = start.Add(ttl-ttl/5), start.Add(ttl/4)
	}
}

func (r *Relay) dropLease(why string) {
	if r.token != 0 {
		r.log.Info("relay lost the lease", "reason", why, "token", r.token)
	}
	r.token = 0
	r.heads, r.unsettled = nil, nil
	r.verified = false
	r.stats.leaseHeld.Store(false)
}

// release gives the lease up, if held, so that a standby takes it at once. It stops publishing
// first: whether or not the database hears of it, this relay holds no lease afterwards.
func (r *Relay) release(why string) {
	if r.token == 0 {
		return
	}
	token := r.token
	r.dropLease(why)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.db.ReleaseLease(ctx, r.cfg.LeaseName, r.cfg.Holder, token); err != nil {
		r.log.Warn("relay could not release its lease; it expires by itself", "err", err)
	}
}

// checkEpoch compares the database's epoch with the stream's, creating the streams when missing.
// The relay publishes only while the check holds (verified).
func (r *Relay) checkEpoch(ctx context.Context) error {
	r.verified = false
	r.checkedAt = time.Now()
	epoch, err := r.db.Epoch(ctx)
	if err != nil {
		return err
	}
	if epoch != r.epoch {
		r.heads, r.unsettled = map[string]head{}, nil
	}
	r.epoch = epoch
	_, err = feed.EnsureStream(ctx, r.js, r.cfg.Feed, epoch)
	if errors.Is(err, feed.ErrEpochMismatch) {
		if !r.stats.epochMismatch.Swap(true) {
			r.log.Error("relay refuses to publish: the stream belongs to another database", "err", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := feed.EnsureEventStream(ctx, r.js, r.cfg.Feed); err != nil {
		return err
	}
	if r.stats.epochMismatch.Swap(false) {
		r.log.Info("relay resumes: the stream matches the database epoch", "epoch", epoch)
		r.heads = map[string]head{}
	}
	r.verified = true
	return nil
}

// publishLogs publishes every log with pending rows, and (every HeadScan) every log whose head
// the stream lacks.
func (r *Relay) publishLogs(ctx context.Context, named []string) error {
	logs, err := r.pendingLogs(ctx, named)
	if err != nil {
		return err
	}
	if time.Since(r.lastScan) >= r.cfg.HeadScan {
		all, err := r.db.Logs(ctx)
		if err != nil {
			return err
		}
		r.lastScan = time.Now()
		if r.refs == nil {
			r.refs = map[string]schema.LogRef{}
		}
		for _, l := range all {
			r.refs[l.Name] = l
		}
		pending := map[string]bool{}
		for _, l := range logs {
			pending[l.ID] = true
		}
		for _, l := range all {
			if !pending[l.ID] {
				if _, known := r.heads[l.Name]; !known {
					logs = append(logs, l)
				}
			}
		}
	}
	// The registry first: edges resolve a new tenant before its data arrives.
	for i, l := range logs {
		if l.Name == schema.PlatformLog && i > 0 {
			logs[0], logs[i] = logs[i], logs[0]
		}
	}
	var firstErr error
	for _, l := range logs {
		if err := r.publishLog(ctx, l); err != nil {
			if errors.Is(err, errLeaseLost) {
				return err
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("log %s: %w", l.Name, err)
			}
		}
	}
	if err := r.settleDue(ctx, false); err != nil && firstErr == nil {
		firstErr = err
	}
	return firstErr
}

// pendingLogs returns the logs to publish: the named ones when every name is of a log a scan
// returned before, else those the outbox has rows of.
func (r *Relay) pendingLogs(ctx context.Context, named []string) ([]schema.LogRef, error) {
	if named != nil {
		logs := make([]schema.LogRef, 0, len(named))
		for _, n := range named {
			l, ok := r.refs[n]
			if !ok {
				logs = nil
				break
			}
			logs = append(logs, l)
		}
		if logs != nil {
			slices.SortFunc(logs, func(a, b schema.LogRef) int { return strings.Compare(a.ID, b.ID) })
			return logs, nil
		}
	}
	logs, err := r.db.PendingLogs(ctx)
	if err != nil {
		return nil, err
	}
	if r.refs == nil {
		r.refs = map[string]schema.LogRef{}
	}
	for _, l := range logs {
		r.refs[l.Name] = l
	}
	return logs, nil
}

// loadHead returns the log's published head, from the stream when not cached, and adopts the log
// when the relay's record in the database agrees with the stream: the record settled at the
// head's version, or behind it by rows still in the outbox (the relay stopped between a publish
// and its settling), which are settled now. A record ahead of the stream means the stream lost
// what it acknowledged; a record behind it without the rows means something else published the
// log. Either way the log stays unadopted, and publishLog republishes it from a snapshot.
func (r *Relay) loadHead(ctx context.Context, l schema.LogRef) (head, error) {
	if h, ok := r.heads[l.Name]; ok {
		return h, nil
	}
	subj := r.cfg.Feed.HeadSubject(l.Shard, l.Name)
	s, err := r.js.Stream(ctx, r.cfg.Feed.Stream)
	if err != nil {
		return head{}, err
	}
	var h head
	var stamped *schema.LogDigest
	msg, err := s.GetLastMsgForSubject(ctx, subj)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
	case err != nil:
		return head{}, err
	default:
		c, err := schema.DecodeChange(msg.Data)
		if err != nil || !c.IsHead() {
			return head{}, fmt.Errorf("relay: unreadable head on %s: %v", subj, err)
		}
		h.seq, h.version, h.body, stamped = msg.Sequence, c.Version, msg.Data, c.Digest
	}
	rec, ok, err := r.db.LogDigestState(ctx, l.ID)
	if err != nil {
		return head{}, err
	}
	switch {
	case !ok:
		// Never adopted: a new log (publishLog adopts it from its first row) or one published
		// before the relay kept digests.
	case rec.Version == h.version:
		h.adopted, h.digest, h.settled = true, rec.Digest, rec.Version
	case rec.Version > h.version:
		r.stats.repairs.Add(1)
		r.log.Warn("the stream lost what it acknowledged: republishing the log", "log", l.Name,
			"stream_head", h.version, "recorded", rec.Version)
	default:
		// Rows the stream holds may linger after a stop between publish and settling.
		rows, err := r.db.OutboxRows(ctx, l.ID, rec.Version, int(h.version-rec.Version)+1)
		if err != nil {
			return head{}, err
		}
		if len(rows) == 0 || rows[0].Version != rec.Version+1 || !contiguous(rows) || rows[len(rows)-1].Version < h.version {
			r.stats.repairs.Add(1)
			r.log.Warn("the stream holds a head the relay did not record: republishing the log", "log", l.Name,
				"stream_head", h.version, "recorded", rec.Version)
			break
		}
		rows = rows[:h.version-rec.Version]
		d, changes, err := r.advance(ctx, l, rec.Digest, rows)
		if err != nil {
			return head{}, err
		}
		if stamped != nil && *stamped != d {
			r.stats.repairs.Add(1)
			r.log.Warn("the stream's head digest differs from the settled rows: republishing the log", "log", l.Name)
			break
		}
		settled, err := r.db.SettleOutbox(ctx, l.ID, rec.Version, h.version, changes, d, r.cfg.LeaseName, r.cfg.Holder, r.token)
		if err != nil {
			return head{}, err
		}
		if !settled {
			return head{}, errLeaseLost
		}
		r.stats.settles.Add(1)
		h.adopted, h.digest, h.settled = true, d, h.version
	}
	r.heads[l.Name] = h
	return h, nil
}

// contiguous reports whether rows take consecutive versions.
func contiguous(rows []schema.OutboxRow) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].Version != rows[i-1].Version+1 {
			return false
		}
	}
	return true
}

// advance returns the log's digest after rows, from d (the digest at the version before the
// first row), and the slot changes to settle.
func (r *Relay) advance(ctx context.Context, l schema.LogRef, d schema.LogDigest, rows []schema.OutboxRow) (schema.LogDigest, []schema.SlotChange, error) {
	keys := make([]string, 0, len(rows))
	for _, row := range rows {
		keys = append(keys, row.Key)
	}
	prev, err := r.db.SlotVersions(ctx, l.ID, keys)
	if err != nil {
		return d, nil, err
	}
	d, changes := schema.AdvanceDigest(d, prev, rows)
	return d, changes, nil
}

// maxBatchesPerRound keeps one busy log from starving the others within a round.
const maxBatchesPerRound = 50

func (r *Relay) publishLog(ctx context.Context, l schema.LogRef) error {
	h, err := r.loadHead(ctx, l)
	if err != nil {
		return err
	}
	if !h.adopted {
		// A log the stream has nothing of is adopted from its first row when the outbox holds its
		// whole history; any other unadopted log is published from a snapshot of the database.
		rows, err := r.db.OutboxRows(ctx, l.ID, 0, 1)
		if err != nil {
			return err
		}
		if h.seq != 0 || len(rows) == 0 || rows[0].TxnFirst != 1 {
			return r.publishSnapshot(ctx, l)
		}
		h.adopted = true
	}
	for i := 0; i < maxBatchesPerRound; i++ {
		// The rows with the published versions of their keys (the slots settled through
		// h.version): one query, not two.
		rows, prev, err := r.db.OutboxRowsWithSlots(ctx, l.ID, h.version, feed.MaxBatch-1)
		if err != nil {
			return err
		}
		// Whole transactions only: drop a transaction the limit cut.
		last := len(rows)
		for last > 0 && rows[last-1].TxnLast > rows[last-1].Version {
			last--
		}
		if last < len(rows) && len(rows) < feed.MaxBatch-1 {
			// The outbox ends mid-transaction: impossible for committed rows; publish what is whole.
			r.log.Warn("outbox ends inside a transaction", "log", l.Name, "version", rows[len(rows)-1].Version)
		}
		rows = rows[:last]
		if len(rows) == 0 {
			return nil
		}
		if rows[0].Version != h.version+1 || !contiguous(rows) {
			// Versions the stream never got are gone from the outbox: only a snapshot can bring
			// the stream back to the database.
			r.log.Warn("the outbox does not continue the stream's head: republishing the log", "log", l.Name,
				"head", h.version, "first_row", rows[0].Version)
			r.stats.repairs.Add(1)
			delete(r.heads, l.Name)
			return r.publishSnapshot(ctx, l)
		}
		if h, err = r.claim(ctx, l, h); err != nil {
			return err
		}
		h.overlay(prev) // the keys published since the record: their state in the stream
		d, changes := schema.AdvanceDigest(h.digest, prev, rows)
		msgs := make([]feed.Message, 0, len(rows)+1)
		for _, row := range rows {
			body, err := schema.EncodeChangeAt(row.Body, r.cfg.ChangeSchema)
			if err != nil {
				return fmt.Errorf("outbox row %s@%d of %s in change schema %d: %w", row.Key, row.Version, l.Name, r.cfg.ChangeSchema, err)
			}
			// No Nats-Msg-Id: a retry must store every change again, in order (feed.Message.MsgID).
			m := feed.Message{Subject: r.cfg.Feed.Subject(l.Shard, l.Name, row.Key), Body: body}
			if row.Deleted {
				m.TTL = r.cfg.Feed.TombstoneTTL
			}
			msgs = append(msgs, m)
		}
		top := rows[len(rows)-1].Version
		msgs = append(msgs, r.headMessage(l, top, &d))
		seq, err := r.publish(ctx, l, msgs, h)
		if err != nil {
			return err
		}
		r.stats.published.Add(uint64(len(rows)))
		r.stats.publishedAt.Store(time.Now().UnixNano())
		r.stats.lagNanos.Store(int64(time.Since(rows[0].CreatedAt)))
		h.seq, h.version, h.digest, h.body, h.claimed = seq, top, d, msgs[len(msgs)-1].Body, true
		h.merge(changes)
		r.heads[l.Name] = h
		// A log's first publish is settled at once: a relay taking over adopts a log with a
		// record from the outbox, one without from a snapshot of the database.
		if h.settled == 0 || r.cfg.SettleEvery < 0 || time.Since(h.since) >= r.cfg.SettleEvery || len(h.pending) >= feed.MaxBatch {
			if h, err = r.settle(ctx, l, h); err != nil {
				return err
			}
		} else {
			if r.unsettled == nil {
				r.unsettled = map[string]schema.LogRef{}
			}
			r.unsettled[l.Name] = l
		}
		if len(rows) < feed.MaxBatch-2 {
			return nil
		}
	}
	r.Wake() // more to do: come back at once, after the other logs
	return nil
}

// settle records in the database what the stream holds of the log beyond its record: the
// pending slot changes, the digest at the head's version, the outbox rows through it deleted. A
// failure forgets the head: the stream has what the record lacks, and loadHead settles it from
// the outbox on the next round.
func (r *Relay) settle(ctx context.Context, l schema.LogRef, h head) (head, error) {
	delete(r.unsettled, l.Name)
	ok, err := r.db.SettleOutbox(ctx, l.ID, h.settled, h.version, h.pending, h.digest, r.cfg.LeaseName, r.cfg.Holder, r.token)
	if err != nil || !ok {
		delete(r.heads, l.Name)
		if err == nil {
			err = errLeaseLost
		}
		return h, err
	}
	r.stats.settles.Add(1)
	h.settled, h.pending, h.index = h.version, nil, nil
	r.heads[l.Name] = h
	return h, nil
}

// settleDue settles the logs whose first unsettled publish is SettleEvery old (every such log
// when all is set: before the relay stops).
func (r *Relay) settleDue(ctx context.Context, all bool) error {
	var firstErr error
	for name, l := range r.unsettled {
		h, ok := r.heads[name]
		if !ok || len(h.pending) == 0 {
			delete(r.unsettled, name)
			continue
		}
		if !all && time.Since(h.since) < r.cfg.SettleEvery {
			continue
		}
		if _, err := r.settle(ctx, l, h); err != nil {
			if errors.Is(err, errLeaseLost) {
				return err
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("log %s: %w", name, err)
			}
		}
	}
	return firstErr
}

// nextSettle returns when the earliest unsettled log is due (zero: none is).
func (r *Relay) nextSettle() time.Time {
	var next time.Time
	for name := range r.unsettled {
		if h, ok := r.heads[name]; ok && len(h.pending) > 0 {
			if due := h.since.Add(r.cfg.SettleEvery); next.IsZero() || due.Before(next) {
				next = due
			}
		}
	}
	return next
}

func (r *Relay) headMessage(l schema.LogRef, version int64, d *schema.LogDigest) feed.Message {
	c := schema.Change{Schema: schema.ChangeSchemaVersion, Log: l.Name, Kind: schema.KindHead, ID: schema.HeadID,
		Vis: schema.Pub, Version: version, Digest: d}
	return feed.Message{Subject: r.cfg.Feed.HeadSubject(l.Shard, l.Name), Body: r.encode(&c),
		MsgID: r.epoch + ":" + l.Name + ":head:" + fmt.Sprint(version)}
}

// encode returns a change's wire form in the schema the relay publishes (Config.ChangeSchema,
// checked by New).
func (r *Relay) encode(c *schema.Change) []byte {
	b, err := c.EncodeAt(r.cfg.ChangeSchema)
	if err != nil {
		panic("relay: " + err.Error()) // New refused a schema this build cannot write
	}
	return b
}

// snapshotID is the Nats-Msg-Id of a snapshot's message: a snapshot republishes states (and a
// head) at versions the stream may already hold, so its ids name the head sequence it is fenced
// on, unique to this snapshot, or the dedup window would drop its messages as duplicates.
func (r *Relay) snapshotID(l schema.LogRef, fence uint64, what string) string {
	return r.epoch + ":" + l.Name + ":snap@" + strconv.FormatUint(fence, 10) + ":" + what
}

// publish stores msgs fenced on the log's head h and returns the stream sequence of the last
// message (the new head).
func (r *Relay) publish(ctx context.Context, l schema.LogRef, msgs []feed.Message, h head) (uint64, error) {
	r.renewIfDue(ctx)
	if !r.holds() {
		r.dropLease("lease expired before publishing")
		return 0, errLeaseLost
	}
	seq, err := feed.Publish(ctx, r.js, r.epoch, msgs, r.cfg.Feed.HeadSubject(l.Shard, l.Name), h.seq)
	if errors.Is(err, feed.ErrFenced) {
		// Someone else wrote this log: forget what we believed and re-read the stream next time.
		r.stats.fenced.Add(1)
		delete(r.heads, l.Name)
		return 0, err
	}
	if err != nil {
		// Messages of this publish may still reach the stream (a cut connection, a context that
		// ended with acknowledgements outstanding): the next publish claims the head first.
		if cur, ok := r.heads[l.Name]; ok {
			cur.claimed = false
			r.heads[l.Name] = cur
		}
		return 0, err
	}
	r.stats.batches.Add(1)
	return seq, nil
}

// claim stores the log's head marker again, fenced on itself, unless the relay stored the
// message at h.seq itself and has not failed a publish since. Every message of a publish is
// fenced on the head's sequence, so a publisher that learned the same head (a relay frozen past
// its lease and resumed, with messages of a publish still in flight; this relay's own earlier
// attempt) passes the fence until the head moves. Without the claim that is until this relay's
// publish ends with its head: a stale message landing among this relay's changes, after the
// copy of its subject, would leave the subject at an older state under the new head, which no
// replica could then claim (its digest counts the newer state). With it, the fence moves before
// this relay stores any change: what the other publisher stored before is below everything this
// relay sends, and what it sends after is refused. A log without a head in the stream has nothing
// to claim (a head at version 0 would make it ready, empty, on every edge); its first publish is
// fenced on the subject being empty, as before. The copy is the same head (version and digest):
// replicas take it as already applied. It costs one message per log the relay publishes after it
// learned the log's head from the stream (a start, a lost fence) or failed a publish.
func (r *Relay) claim(ctx context.Context, l schema.LogRef, h head) (head, error) {
	if h.claimed || h.seq == 0 {
		return h, nil
	}
	m := feed.Message{Subject: r.cfg.Feed.HeadSubject(l.Shard, l.Name), Body: h.body,
		MsgID: r.epoch + ":" + l.Name + ":claim@" + strconv.FormatUint(h.seq, 10)}
	seq, err := r.publish(ctx, l, []feed.Message{m}, h)
	if err != nil {
		return h, err
	}
	r.stats.claims.Add(1)
	h.seq, h.claimed = seq, true
	r.heads[l.Name] = h
	return h, nil
}

// publishSnapshot publishes a log's current state from the database, in batches, the head last
// with the digest of what it published, and records that state as what the stream holds. Subjects
// of the log the stream holds and the snapshot does not name (a deletion the stream lost) get a
// tombstone at the snapshot's version, so that replicas drop them too.
func (r *Relay) publishSnapshot(ctx context.Context, l schema.LogRef) error {
	h, err := r.loadHead(ctx, l)
	if err != nil {
		return err
	}
	if h, err = r.claim(ctx, l, h); err != nil {
		return err
	}
	stale, err := r.streamSubjects(ctx, l)
	if err != nil {
		return err
	}
	fence := h.seq
	var (
		batch    []feed.Message
		headBody []byte // the head marker this snapshot stored
	)
	first := fence
	flush := func(withHead bool, top int64, d *schema.LogDigest) error {
		if withHead {
			m := r.headMessage(l, top, d)
			m.MsgID = r.snapshotID(l, first, "head:"+fmt.Sprint(top))
			batch = append(batch, m)
			headBody = m.Body
		}
		if len(batch) == 0 {
			return nil
		}
		seq, err := r.publish(ctx, l, batch, head{seq: fence})
		if err != nil {
			return err
		}
		r.stats.published.Add(uint64(len(batch)))
		if withHead {
			fence = seq
		}
		batch = batch[:0]
		return nil
	}
	var d schema.LogDigest
	states := map[string]int64{}
	version, err := r.db.Snapshot(ctx, l, func(c schema.Change) error {
		key := c.Key()
		subj := r.cfg.Feed.Subject(l.Shard, l.Name, key)
		delete(stale, subj)
		d.Add(c.Vis, key, c.Version)
		states[key] = c.Version
		batch = append(batch, feed.Message{Subject: subj, Body: r.encode(&c),
			MsgID: r.snapshotID(l, first, key+":"+fmt.Sprint(c.Version))})
		if len(batch) == feed.MaxBatch-1 {
			return flush(false, 0, nil)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if version > 0 {
		for subj, key := range stale {
			c := schema.Change{Schema: schema.ChangeSchemaVersion, Log: l.Name, Vis: key.vis, Kind: key.kind, ID: key.id,
				Version: version, TxnFirst: version, TxnLast: version, Deleted: true}
			batch = append(batch, feed.Message{Subject: subj, Body: r.encode(&c), TTL: r.cfg.Feed.TombstoneTTL,
				MsgID: r.snapshotID(l, first, "tomb:"+c.Key()+":"+fmt.Sprint(version))})
			if len(batch) == feed.MaxBatch-1 {
				if err := flush(false, 0, nil); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(true, version, &d); err != nil {
		return err
	}
	ok, err := r.db.ReplaceSlots(ctx, l.ID, states, d, version, r.cfg.LeaseName, r.cfg.Holder, r.token)
	if err != nil || !ok {
		delete(r.heads, l.Name)
		if err == nil {
			err = errLeaseLost
		}
		return err
	}
	r.heads[l.Name] = head{seq: fence, version: version, adopted: true, digest: d, settled: version, body: headBody, claimed: true}
	delete(r.unsettled, l.Name)
	r.stats.snapshots.Add(1)
	r.log.Info("published log snapshot", "log", l.Name, "version", version, "tombstoned", len(stale))
	return nil
}

// subjectKey is a change key parsed from a stream subject.
type subjectKey struct {
	vis  schema.Visibility
	kind schema.Kind
	id   string
}

// streamSubjects returns the entity subjects the stream holds for a log (its head excluded).
func (r *Relay) streamSubjects(ctx context.Context, l schema.LogRef) (map[string]subjectKey, error) {
	out := map[string]subjectKey{}
	st, err := r.js.Stream(ctx, r.cfg.Feed.Stream)
	if err != nil {
		return nil, err
	}
	// Tenant logs: <prefix>.<shard>.<log>.<vis>.<kind>.<id>; the registry drops the visibility:
	// <prefix>._platform.<kind>.<id>.
	platform := l.Name == schema.PlatformLog
	filter := r.cfg.Feed.Prefix + "." + strconv.Itoa(l.Shard) + "." + l.Name + ".>"
	if platform {
		filter = r.cfg.Feed.Prefix + "." + schema.PlatformLog + ".>"
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, err
	}
	headSubj := r.cfg.Feed.HeadSubject(l.Shard, l.Name)
	for subj := range info.State.Subjects {
		if subj == headSubj {
			continue
		}
		toks := strings.Split(subj, ".")
		if len(toks) < 4 {
			continue
		}
		k := subjectKey{vis: schema.Pub, kind: schema.Kind(toks[len(toks)-2]), id: toks[len(toks)-1]}
		if !platform {
			k.vis = schema.Visibility(toks[len(toks)-3])
		}
		if k.vis != schema.Pub && k.vis != schema.Priv {
			continue
		}
		out[subj] = k
	}
	return out, nil
}

// publishEvents moves the event outbox to the event stream, up to ten batches of 500 events; it
// sets eventsLeft when it stopped with more to move, or failed.
func (r *Relay) publishEvents(ctx context.Context) error {
	r.eventsLeft = true
	for round := 0; round < 10; round++ {
		evs, err := r.db.PendingEvents(ctx, 500)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			r.eventsLeft = false
			return nil
		}
		if !r.holds() {
			return errLeaseLost
		}
		futures := make([]jetstream.PubAckFuture, len(evs))
		for i, e := range evs {
			m := nats.NewMsg(r.cfg.Feed.EventSubject(e.Tenant, e.Kind))
			m.Data = e.Payload
			m.Header.Set(jetstream.MsgIDHeader, e.ID)
			m.Header.Set(feed.HeaderEventKind, e.Kind)
			m.Header.Set(feed.HeaderEventTenant, e.TenantID)
			m.Header.Set(feed.HeaderEventCreated, e.Created.UTC().Format(time.RFC3339Nano))
			if futures[i], err = r.js.PublishMsgAsync(m); err != nil {
				return err
			}
		}
		select {
		case <-r.js.PublishAsyncComplete():
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return fmt.Errorf("relay: event publish timed out")
		}
		done := make([]string, 0, len(evs))
		for i, f := range futures {
			select {
			case <-f.Ok():
				done = append(done, evs[i].ID)
			case err := <-f.Err():
				r.log.Warn("event not published", "id", evs[i].ID, "err", err)
			}
		}
		if !r.holds() {
			return errLeaseLost
		}
		if err := r.db.DeleteEvents(ctx, done); err != nil {
			return err
		}
		r.stats.events.Add(uint64(len(done)))
		if len(evs) < 500 {
			r.eventsLeft = len(done) < len(evs) // some not published: try them again at once
			return nil
		}
	}
	return nil
}

// Rebuild republishes the state stream from the database: it takes the lease over (a running
// relay stands by until the rebuild releases it; one refusing a stream of another epoch would
// otherwise keep it), recreates the stream for the database's epoch, and publishes every log
// from a snapshot. progress, when not nil, is called after each log.
func (r *Relay) Rebuild(ctx context.Context, progress func(done, total int, log string)) error {
	start := time.Now()
	token, err := r.db.TakeLease(ctx, r.cfg.LeaseName, r.cfg.Holder, r.cfg.LeaseTTL)
	if err != nil {
		return err
	}
	r.token = token
	r.leaseUntil, r.renewAt = start.Add(r.cfg.LeaseTTL-r.cfg.LeaseTTL/5), start.Add(r.cfg.LeaseTTL/4)
	// A publisher that held the lease may have a batch in flight: let it land (or be fenced)
	// before the stream is replaced.
	time.Sleep(min(r.cfg.LeaseTTL/5, time.Second))
	defer r.release("rebuild done")
	epoch, err := r.db.Epoch(ctx)
	if err != nil {
		return err
	}
	r.epoch = epoch
	r.heads = map[string]head{}
	if _, err := feed.RecreateStream(ctx, r.js, r.cfg.Feed, epoch); err != nil {
		return err
	}
	logs, err := r.db.Logs(ctx)
	if err != nil {
		return err
	}
	for i, l := range logs {
		if l.Name == schema.PlatformLog && i > 0 {
			logs[0], logs[i] = logs[i], logs[0]
		}
	}
	for i, l := range logs {
		// Renew between logs so that a large rebuild keeps its lease.
		if err := r.keepLease(ctx); err != nil {
			return err
		}
		if !r.holds() {
			return errLeaseLost
		}
		if err := r.publishSnapshot(ctx, l); err != nil {
			return fmt.Errorf("relay: rebuild %s: %w", l.Name, err)
		}
		if progress != nil {
			progress(i+1, len(logs), l.Name)
		}
	}
	return nil
}
