package relay_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// rig is a database, a nats-server, a running relay and an origin-scope replica following the
// stream.
type rig struct {
	db     *store.DB
	dsn    string
	ns     *natstest.Server
	relay  *relay.Relay
	rep    *replica.Replica
	cancel context.CancelFunc
	// stopRelay stops the running relay (and waits for it).
	stopRelay func()
}

func newRig(t *testing.T, cfg relay.Config) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &rig{cancel: cancel}
	r.ns = natstest.Run(t)
	nc := r.ns.Connect(t)
	r.relay = nil
	var err error
	r.db, r.dsn = storetest.Open(t, store.Config{OnCommit: func([]store.LogCommit) {
		if r.relay != nil {
			r.relay.Wake()
		}
	}})
	cfg.Logger = quietLogger()
	r.relay, err = relay.New(r.db, nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	rctx, rcancel := context.WithCancel(ctx)
	go func() { r.relay.Run(rctx); close(done) }()
	r.stopRelay = func() { rcancel(); <-done }
	t.Cleanup(r.stopRelay)

	r.rep = replica.New(replica.Config{Logger: quietLogger()})
	f, err := feed.NewFollower(r.ns.Connect(t), cfg.Feed, cfg.Feed.WithDefaults().AllFilters(), r.rep, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	f.Watch = 100 * time.Millisecond
	go f.Run(ctx)
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRelayReplicatesToReplica(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	var last int64
	for i := 0; i < 30; i++ {
		commits, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			p := &schema.Product{Slug: "p" + schema.IDString(int64(i)), Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}}
			if i%3 == 0 {
				p.Status = schema.ProductDraft
			}
			return tx.CreateProduct(ctx, tn, p)
		})
		if err != nil {
			t.Fatal(err)
		}
		last = commits[0].Version
	}
	waitFor(t, "the replica to reach the last write", func() bool {
		tt := r.rep.TenantBySlug("shop")
		return tt != nil && tt.Ready() && tt.Version() >= last
	})
	log, _ := r.db.LogBySlug(ctx, "shop")
	want, err := r.db.Digest(ctx, log, schema.Pub, schema.Priv)
	if err != nil {
		t.Fatal(err)
	}
	got := r.rep.TenantBySlug("shop").Snapshot().Digest("shop", schema.Pub, schema.Priv)
	if got.Sum() != want.Sum() {
		t.Fatalf("replica digest differs from the database:\n%v", got.Diff(want, 10))
	}
	if n := r.rep.TenantBySlug("shop").Snapshot().ProductCount(); n != 20 {
		t.Fatalf("%d public products, want 20", n)
	}
	if !r.rep.Ready() {
		t.Fatal("replica not ready")
	}
	// Changes go out without a Nats-Msg-Id, so that a retry stores all of them again, in order
	// (feed.Message.MsgID).
	_, _, st, cfg := r.stateStream(t)
	msg, err := st.GetLastMsgForSubject(ctx, cfg.Subject(0, "shop", "pub.product.2"))
	if err != nil {
		t.Fatal(err)
	}
	if id := msg.Header.Get(jetstream.MsgIDHeader); id != "" {
		t.Fatalf("a change published with Nats-Msg-Id %q", id)
	}
	// The outbox drains once the stream holds the rows.
	waitFor(t, "the outbox to drain", func() bool {
		rows, _ := r.db.OutboxRows(ctx, log.ID, 0, 10)
		return len(rows) == 0
	})
}

// A publisher that does not know the current head has its whole batch refused.
func TestStaleBatchIsFenced(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	if err := r.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn, &schema.Product{Slug: "a", Title: "A", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replication", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= 1 })
	nc := r.ns.Connect(t)
	js, _ := jetstream.New(nc)
	cfg := feed.Config{}.WithDefaults()
	stale := schema.NewChange("shop", schema.KindProduct, "1", schema.Pub, &schema.Product{ID: 1, Slug: "a", Title: "OLD"})
	stale.Version, stale.TxnFirst, stale.TxnLast = 1, 1, 1
	_, err := feed.Publish(ctx, js, r.rep.Epoch(), []feed.Message{{Subject: cfg.Subject(0, "shop", stale.Key()), Body: stale.Encode()}},
		cfg.HeadSubject(0, "shop"), 0)
	if !errors.Is(err, feed.ErrFenced) {
		t.Fatalf("stale batch: err = %v, want fenced", err)
	}
	s, _ := js.Stream(ctx, cfg.Stream)
	msg, err := s.GetLastMsgForSubject(ctx, cfg.Subject(0, "shop", "pub.product.1"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := schema.DecodeChange(msg.Data)
	if string(c.Data) == string(stale.Data) {
		t.Fatal("the stale state reached the stream")
	}
}

// A message on the head subject whose headers carry a foreign Nats-Sequence (as a naive copy of a
// direct-get answer would) must not make the relay misread the head's sequence.
func TestHeadWithForeignSequenceHeader(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	write := func(slug string) int64 {
		c, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			return tx.CreateProduct(ctx, tn, &schema.Product{Slug: slug, Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
		})
		if err != nil {
			t.Fatal(err)
		}
		return c[0].Version
	}
	v := write("a")
	waitFor(t, "the first write", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v })
	_, js, st, cfg := r.stateStream(t)
	head, err := st.GetLastMsgForSubject(ctx, cfg.HeadSubject(0, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	dup := nats.NewMsg(head.Subject)
	dup.Data = head.Data
	dup.Header.Set("Nats-Sequence", "1")
	dup.Header.Set(feed.HeaderEpoch, r.rep.Epoch())
	dup.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(head.Sequence, 10))
	if _, err := js.PublishMsg(ctx, dup); err != nil {
		t.Fatal(err)
	}
	v = write("b")
	waitFor(t, "the write after the foreign head", func() bool { return r.rep.TenantBySlug("shop").Version() >= v })
}

// stateStream connects to the rig's nats-server and returns the connection, its JetStream API,
// the state stream and the feed configuration the rig's relays publish with.
func (r *rig) stateStream(t *testing.T) (*nats.Conn, jetstream.JetStream, jetstream.Stream, feed.Config) {
	t.Helper()
	nc := r.ns.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := feed.Config{}.WithDefaults()
	st, err := js.Stream(context.Background(), cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, st, cfg
}

// startRelay runs another relay on the rig's database and NATS until the test ends, and makes
// the rig's commits wake it (the rig's own relay stopped, say).
func (r *rig) startRelay(t *testing.T, cfg relay.Config) *relay.Relay {
	t.Helper()
	cfg.Logger = quietLogger()
	rl, err := relay.New(r.db, r.ns.Connect(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rl.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	r.relay = rl
	return rl
}

// write creates a product of the tenant and returns the version its write took.
func (r *rig) write(t *testing.T, tn *schema.Tenant, slug string, status schema.ProductStatus) int64 {
	t.Helper()
	ctx := context.Background()
	c, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn, &schema.Product{Slug: slug, Title: slug, Status: status, Prices: schema.Prices{"USD": 100}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return c[0].Version
}

// follow starts a Follower of the stream's subjects under filters feeding sink, until the test
// ends.
func (r *rig) follow(t *testing.T, sink feed.Sink, filters []string) *feed.Follower {
	t.Helper()
	f, err := feed.NewFollower(r.ns.Connect(t), feed.Config{}, filters, sink, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go f.Run(ctx)
	return f
}

// recorder is a feed.Sink in front of a replica that checks, after every change and checkpoint, that
// the replica claims no version whose state it does not hold: whenever the tenant's claimed
// version reached want, every key of must is present.
type recorder struct {
	*replica.Replica
	log      string
	want     int64
	must     func(*replica.Snapshot) bool
	claimed  atomic.Bool // the replica claimed want at some point
	violated atomic.Bool // ...while must did not hold
	heldSeen atomic.Bool // a head found the state incomplete
}

func (r *recorder) Change(c *schema.Change) {
	r.Replica.Change(c)
	r.check()
}

func (r *recorder) Checkpoint() {
	r.Replica.Checkpoint()
	r.check()
}

func (r *recorder) check() {
	t := r.Replica.TenantBySlug(r.log)
	if t == nil {
		return
	}
	if t.Held() {
		r.heldSeen.Store(true)
	}
	if t.Version() >= r.want {
		r.claimed.Store(true)
		if !r.must(t.Snapshot()) {
			r.violated.Store(true)
		}
	}
}

// republish publishes the latest message of a subject again, as it is stored, so that it lands
// after its log's head: the compacted stream then drops the original.
func republish(t *testing.T, ctx context.Context, js jetstream.JetStream, subject string) {
	t.Helper()
	st, err := js.Stream(ctx, feed.Config{}.WithDefaults().Stream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	dup := nats.NewMsg(subject)
	dup.Data = msg.Data
	dup.Header.Set(feed.HeaderEpoch, msg.Header.Get(feed.HeaderEpoch))
	dup.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(msg.Sequence, 10))
	if _, err := js.PublishMsg(ctx, dup); err != nil {
		t.Fatal(err)
	}
}

// The interleaving behind the chaos test's failure, made deterministic: an entity's only message
// is republished after its log's head, so a replica bootstrapping from the stream meets the
// head before the entity. The replica must not claim the head's version until the entity
// arrives; then it must.
func TestHeadBeforeMovedEntityIsNotClaimed(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	var last int64
	for _, slug := range []string{"lamp", "desk", "chair"} {
		last = r.write(t, tn, slug, schema.ProductActive)
	}
	waitFor(t, "replication", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= last })
	nc := r.ns.Connect(t)
	js, _ := jetstream.New(nc)
	cfg := feed.Config{}.WithDefaults()
	// The first product's only message moves behind the head.
	lamp := r.rep.TenantBySlug("shop").Snapshot().ProductBySlug("lamp")
	if lamp == nil {
		t.Fatal("lamp not replicated")
	}
	republish(t, ctx, js, cfg.Subject(0, "shop", "pub.product."+schema.IDString(lamp.ID)))

	rec := &recorder{Replica: replica.New(replica.Config{Logger: quietLogger()}), log: "shop", want: last,
		must: func(s *replica.Snapshot) bool { return s.ProductBySlug("lamp") != nil }}
	r.follow(t, rec, cfg.PublicFilters(nil))
	deadline := time.Now().Add(15 * time.Second)
	for !rec.claimed.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("the new replica never claimed version %d: %s", last, rec)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rec.violated.Load() {
		t.Fatal("the replica claimed the head's version without the entity moved behind the head")
	}
	if !rec.heldSeen.Load() || rec.Stats().HeldHeads == 0 {
		t.Fatal("the head was not held: the interleaving did not happen")
	}
	if st := rec.Stats(); st.Disagreements != 0 {
		t.Fatalf("%d disagreements: the moved entity arrived, nothing disagreed", st.Disagreements)
	}
}

// A replica whose state disagrees with its head's digest once everything is delivered reports it
// and asks its follower for a new bootstrap, which heals it.
func TestDisagreementRebootstraps(t *testing.T) {
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	v := r.write(t, tn, "lamp", schema.ProductActive)
	cfg := feed.Config{}.WithDefaults()
	// A replica that loses the product on its way in, once: its state then disagrees with the
	// head it claims, until a re-bootstrap delivers the product again.
	lossy := &lossySink{Replica: replica.New(replica.Config{Logger: quietLogger(), ResyncEvery: time.Millisecond}), drop: "pub.product."}
	f := r.follow(t, lossy, cfg.PublicFilters(nil))
	waitFor(t, "the healed replica to claim the write", func() bool {
		tt := lossy.TenantBySlug("shop")
		return tt != nil && tt.Version() >= v
	})
	if lossy.TenantBySlug("shop").Snapshot().ProductBySlug("lamp") == nil {
		t.Fatal("claimed the version without the product")
	}
	st := lossy.Stats()
	if st.Disagreements == 0 || st.Resyncs == 0 || f.Stats().Resyncs == 0 {
		t.Fatalf("stats %+v, follower %+v: the loss went unnoticed", st, f.Stats())
	}
}

// lossySink drops the first change whose key starts with drop.
type lossySink struct {
	*replica.Replica
	drop    string
	dropped bool
}

func (l *lossySink) Change(c *schema.Change) {
	if !l.dropped && strings.HasPrefix(c.Key(), l.drop) {
		l.dropped = true
		return
	}
	l.Replica.Change(c)
}

// The stream loses what it acknowledged (here: the tenant's subjects purged, as a lost tail would
// leave it): the relay's record is ahead of the stream, so it republishes the log from a
// snapshot, and a new replica converges to the database.
func TestRelayRepairsALostTail(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{HeadScan: 50 * time.Millisecond})
	tn := storetest.Tenant(t, r.db, "shop")
	write := func(slug string, status schema.ProductStatus) int64 { return r.write(t, tn, slug, status) }
	write("lamp", schema.ProductActive)
	write("draft", schema.ProductDraft)
	v := write("desk", schema.ProductActive)
	waitFor(t, "replication", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v })
	_, _, st, cfg := r.stateStream(t)
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(cfg.Subject(0, "shop", ">"))); err != nil {
		t.Fatal(err)
	}
	// The relay notices at its next look at the log: a write, or its restart.
	v = write("chair", schema.ProductActive)
	waitFor(t, "the repair", func() bool { return r.relay.Stats().Repairs > 0 })
	fresh := replica.New(replica.Config{Logger: quietLogger(), Private: true})
	r.follow(t, fresh, cfg.AllFilters())
	waitFor(t, "a new replica to claim the last write", func() bool {
		tt := fresh.TenantBySlug("shop")
		return tt != nil && tt.Version() >= v
	})
	log, _ := r.db.LogBySlug(ctx, "shop")
	want, _ := r.db.Digest(ctx, log, schema.Pub, schema.Priv)
	got := fresh.TenantBySlug("shop").Snapshot().Digest("shop", schema.Pub, schema.Priv)
	if got.Sum() != want.Sum() {
		t.Fatalf("the repaired stream differs from the database:\n%v", got.Diff(want, 10))
	}
	// The relay settles its record after the stream acknowledged a batch, in its own
	// transaction: a replica can hold the head a moment before the record catches up with it.
	var rec store.DigestState
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ok bool
		var err error
		rec, ok, err = r.db.LogDigestState(ctx, log.ID)
		if err != nil || !ok {
			t.Fatalf("no digest record: %v", err)
		}
		if rec.Digest == fresh.TenantBySlug("shop").Snapshot().LogDigest || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec.Digest != fresh.TenantBySlug("shop").Snapshot().LogDigest {
		t.Fatalf("the relay's record %+v differs from what a replica of the stream holds %+v", rec.Digest, fresh.TenantBySlug("shop").Snapshot().LogDigest)
	}
}

// The relay's record of a log equals what a replica of the whole stream holds, across inserts,
// updates that move entities between visibilities, and deletions.
func TestRelayRecordMatchesTheStream(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	var ids []schema.ProductID
	var last int64
	for i := 0; i < 12; i++ {
		c, err := r.db.WriteTx(ctx, func(tx *store.Tx) error {
			switch {
			case i < 6 || len(ids) == 0:
				p := &schema.Product{Slug: "p" + strconv.Itoa(i), Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}}
				if err := tx.CreateProduct(ctx, tn, p); err != nil {
					return err
				}
				ids = append(ids, p.ID)
			case i%3 == 0:
				_, err := tx.DeleteProduct(ctx, tn, ids[0])
				ids = ids[1:]
				return err
			default:
				old, err := tx.Product(ctx, tn, ids[len(ids)-1])
				if err != nil {
					return err
				}
				p := *old
				p.Status = schema.ProductDraft
				if i%2 == 0 {
					p.Status = schema.ProductActive
				}
				return tx.UpdateProduct(ctx, tn, old, &p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last = c[0].Version
	}
	r.rep = nil
	cfg := feed.Config{}.WithDefaults()
	full := replica.New(replica.Config{Logger: quietLogger(), Private: true})
	r.follow(t, full, cfg.AllFilters())
	waitFor(t, "the replica", func() bool { tt := full.TenantBySlug("shop"); return tt != nil && tt.Version() >= last })
	log, _ := r.db.LogBySlug(ctx, "shop")
	waitFor(t, "the relay to settle", func() bool { rec, ok, _ := r.db.LogDigestState(ctx, log.ID); return ok && rec.Version >= last })
	rec, _, _ := r.db.LogDigestState(ctx, log.ID)
	if got := full.TenantBySlug("shop").Snapshot().LogDigest; got != rec.Digest {
		t.Fatalf("replica digest %+v, relay record %+v", got, rec.Digest)
	}
}

func (r *recorder) String() string {
	t := r.Replica.TenantBySlug(r.log)
	if t == nil {
		return "no tenant"
	}
	return fmt.Sprintf("version %d seen %d ready %v held %v snapshot %d digest %+v stats %+v", t.Version(), t.Seen(), t.Ready(), t.Held(), t.Snapshot().Version, t.Snapshot().LogDigest, r.Stats())
}

// A log the stream holds from a relay that kept no digests (the record is missing) is adopted by
// republishing it from a snapshot fenced on its head; the snapshot's message ids must not collide
// with what the stream holds (a head at the same version), or the dedup window refuses the batch.
func TestRelayAdoptsALogWithoutRecord(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	v := r.write(t, tn, "lamp", schema.ProductActive)
	waitFor(t, "replication", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v })
	log, _ := r.db.LogBySlug(ctx, "shop")
	waitFor(t, "the record", func() bool { rec, ok, _ := r.db.LogDigestState(ctx, log.ID); return ok && rec.Version >= v })
	r.stopRelay()
	conn, err := pgx.Connect(ctx, r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM repl_digests; DELETE FROM repl_slots`); err != nil {
		t.Fatal(err)
	}
	next := r.startRelay(t, relay.Config{Holder: "next", LeaseTTL: time.Second})
	// The next write makes the relay look at the log within the dedup window of its head.
	v = r.write(t, tn, "desk", schema.ProductActive)
	next.Wake()
	waitFor(t, "the adopted log to reach the replica", func() bool { return r.rep.TenantBySlug("shop").Version() >= v })
	// The record is written once the stream acknowledged the snapshot: wait for it too.
	waitFor(t, "the adoption's record", func() bool { rec, ok, _ := r.db.LogDigestState(ctx, log.ID); return ok && rec.Version >= v })
	// The relay counts a snapshot after its record is written: the test may see the record first.
	waitFor(t, "the adoptions through snapshots (the registry's and the shop's)", func() bool { return next.Stats().Snapshots >= 2 })
	rec, _, _ := r.db.LogDigestState(ctx, log.ID)
	if got := r.rep.TenantBySlug("shop").Snapshot().LogDigest; got.PubCount != rec.Digest.PubCount || got.PubSum != rec.Digest.PubSum {
		t.Fatalf("replica %+v, record %+v", got, rec.Digest)
	}
}

// A relay publishing on a head it did not store claims it first: it stores the head again, so
// that a publisher that learned the same head (a relay frozen past its lease, with a publish
// still in flight) is fenced off before this relay's changes land, not only after its head.
func TestTakeOverClaimsTheHead(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, relay.Config{})
	tn := storetest.Tenant(t, r.db, "shop")
	v1 := r.write(t, tn, "a", schema.ProductActive)
	waitFor(t, "the first write", func() bool { tt := r.rep.TenantBySlug("shop"); return tt != nil && tt.Version() >= v1 })
	v1 = r.write(t, tn, "z", schema.ProductActive)
	waitFor(t, "the second write", func() bool { return r.rep.TenantBySlug("shop").Version() >= v1 })
	if n := r.relay.Stats().Claims; n != 0 {
		t.Fatalf("the relay that stored every head claimed %d", n)
	}
	// Stopped once its record holds the publish (the outbox drained), so that the next relay
	// adopts the log from it; stopped before, the next would republish the log from a snapshot,
	// which it claims first all the same.
	log, _ := r.db.LogBySlug(ctx, "shop")
	waitFor(t, "the first publish to be settled", func() bool {
		rows, _ := r.db.OutboxRows(ctx, log.ID, 0, 10)
		return len(rows) == 0
	})
	r.stopRelay()
	nc, js, st, cfg := r.stateStream(t)
	headSubject := cfg.HeadSubject(0, "shop")
	old, err := st.GetLastMsgForSubject(ctx, headSubject)
	if err != nil {
		t.Fatal(err)
	}
	v2 := r.write(t, tn, "b", schema.ProductActive)
	// The stream is compacted (the claim is superseded by the next head), so the messages are
	// watched as they are published (nothing else publishes on the log's subjects here).
	var mu sync.Mutex
	var got []string
	sub, err := nc.Subscribe(cfg.Subject(0, "shop", ">"), func(m *nats.Msg) {
		c, err := schema.DecodeChange(m.Data)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			got = append(got, "undecodable")
		case m.Subject == headSubject && string(m.Data) == string(old.Data):
			got = append(got, "the old head")
		default:
			got = append(got, fmt.Sprintf("%s@%d", c.Key(), c.Version))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	next := r.startRelay(t, relay.Config{})
	waitFor(t, "the write after the take-over", func() bool { return r.rep.TenantBySlug("shop").Version() >= v2 })
	// The log's messages after the old head: the same head again, then the change, then its head.
	head := fmt.Sprintf("pub.%s.%s@%d", schema.KindHead, schema.HeadID, v2)
	waitFor(t, "the watch to see the head", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1] == head
	})
	mu.Lock()
	defer mu.Unlock()
	want := []string{"the old head", fmt.Sprintf("pub.product.3@%d", v2), head}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("after the take-over the stream holds\n%s\nwant\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	if n := next.Stats().Claims; n != 1 {
		t.Fatalf("claims = %d, want 1", n)
	}
	// Fenced on the old head's sequence, nothing lands any more.
	stale := schema.NewChange("shop", schema.KindProduct, "1", schema.Pub, &schema.Product{ID: 1, Slug: "a", Title: "OLD"})
	stale.Version, stale.TxnFirst, stale.TxnLast = v1, v1, v1
	if _, err := feed.Publish(ctx, js, r.rep.Epoch(), []feed.Message{{Subject: cfg.Subject(0, "shop", stale.Key()), Body: stale.Encode()}},
		headSubject, old.Sequence); !errors.Is(err, feed.ErrFenced) {
		t.Fatalf("a publish fenced on the old head: err = %v, want fenced", err)
	}
	// The claim is made once: the next write is published on the relay's own head.
	v3 := r.write(t, tn, "c", schema.ProductActive)
	waitFor(t, "the next write", func() bool { return r.rep.TenantBySlug("shop").Version() >= v3 })
	if n := next.Stats().Claims; n != 1 {
		t.Fatalf("claims after another write = %d, want 1", n)
	}
}
