package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// writer makes random replicated writes to one tenant through the store, remembering what
// exists so that most writes touch live entities. Some writes change several entities in one
// transaction.
type writer struct {
	db       *store.DB
	t        *schema.Tenant
	rng      *rand.Rand
	n        int
	products []schema.ProductID
	variants map[schema.ProductID][]schema.VariantID
	cats     []schema.CategoryID
	posts    []schema.PostID
}

func newWriter(db *store.DB, t *schema.Tenant, seed uint64) *writer {
	return &writer{db: db, t: t, rng: rand.New(rand.NewPCG(seed, 7)), variants: map[schema.ProductID][]schema.VariantID{}}
}

func pick[T any](rng *rand.Rand, s []T) (T, bool) {
	var zero T
	if len(s) == 0 {
		return zero, false
	}
	return s[rng.IntN(len(s))], true
}

func remove[T comparable](s []T, v T) []T {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// step makes one random write (one transaction). The bookkeeping of ids is applied only after a
// successful commit.
func (w *writer) step(ctx context.Context) error {
	w.n++
	n := w.n
	var after func()
	_, err := w.db.WriteTx(ctx, func(tx *store.Tx) error {
		after = nil
		switch op := w.rng.IntN(100); {
		case op < 22 || len(w.products) < 3: // a product and its variants: several entities at once
			p := &schema.Product{Slug: fmt.Sprintf("p-%d", n), Title: fmt.Sprintf("Product %d", n), Status: schema.ProductActive,
				Prices: schema.Prices{"USD": int64(100 + w.rng.IntN(10000))}, Featured: w.rng.IntN(5) == 0}
			if c, ok := pick(w.rng, w.cats); ok {
				p.CategoryIDs = []schema.CategoryID{c}
			}
			if w.rng.IntN(6) == 0 {
				p.Status = schema.ProductDraft
			}
			if err := tx.CreateProduct(ctx, w.t, p); err != nil {
				return err
			}
			var vids []schema.VariantID
			for i := 0; i < 1+w.rng.IntN(3); i++ {
				v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("S-%d-%d", n, i), Position: i}, Stock: int64(w.rng.IntN(20))}
				if err := tx.CreateVariant(ctx, w.t, v); err != nil {
					return err
				}
				vids = append(vids, v.ID)
			}
			after = func() { w.products = append(w.products, p.ID); w.variants[p.ID] = vids }
		case op < 45: // update a product: price, title, visibility
			id, _ := pick(w.rng, w.products)
			old, err := tx.Product(ctx, w.t, id)
			if err != nil {
				return err
			}
			p := *old
			p.Title = fmt.Sprintf("Product %d rev %d", id, n)
			p.Prices = schema.Prices{"USD": int64(100 + w.rng.IntN(10000))}
			if w.rng.IntN(4) == 0 {
				if p.Status == schema.ProductActive {
					p.Status = schema.ProductDraft
				} else {
					p.Status = schema.ProductActive
				}
			}
			return tx.UpdateProduct(ctx, w.t, old, &p)
		case op < 50: // delete a product with its variants
			id, _ := pick(w.rng, w.products)
			if _, err := tx.DeleteProduct(ctx, w.t, id); err != nil {
				return err
			}
			after = func() { w.products = remove(w.products, id); delete(w.variants, id) }
		case op < 65: // stock moves (availability crosses thresholds)
			pid, _ := pick(w.rng, w.products)
			vid, ok := pick(w.rng, w.variants[pid])
			if !ok {
				return nil
			}
			old, err := tx.Variant(ctx, w.t, vid)
			if err != nil {
				return err
			}
			v := *old
			v.Stock = int64(w.rng.IntN(12))
			return tx.UpdateVariant(ctx, w.t, old, &v)
		case op < 68:
			pid, _ := pick(w.rng, w.products)
			vid, ok := pick(w.rng, w.variants[pid])
			if !ok {
				return nil
			}
			if err := tx.DeleteVariant(ctx, w.t, vid); err != nil {
				return err
			}
			after = func() { w.variants[pid] = remove(w.variants[pid], vid) }
		case op < 76: // categories, sometimes nested
			c := &schema.Category{Slug: fmt.Sprintf("c-%d", n), Name: fmt.Sprintf("Category %d", n)}
			if parent, ok := pick(w.rng, w.cats); ok && w.rng.IntN(2) == 0 {
				c.ParentID = parent
			}
			if err := tx.CreateCategory(ctx, w.t, c); err != nil {
				if schema.ErrorCode(err) == schema.CodeInvalid {
					return nil // too deep
				}
				return err
			}
			after = func() { w.cats = append(w.cats, c.ID) }
		case op < 79: // deleting a category reparents its children: several entities
			id, ok := pick(w.rng, w.cats)
			if !ok {
				return nil
			}
			if err := tx.DeleteCategory(ctx, w.t, id); err != nil {
				return err
			}
			after = func() { w.cats = remove(w.cats, id) }
		case op < 90: // posts, public, protected or draft
			p := &schema.Post{Title: fmt.Sprintf("Post %d", n), Content: "Body of post " + strconv.Itoa(n), Status: schema.StatusPublish,
				Author: 1, CommentStatus: "open", PingStatus: "open", Format: "standard", Slug: fmt.Sprintf("post-%d", n),
				DateGMT: tx.Now(), ModifiedGMT: tx.Now()}
			switch w.rng.IntN(4) {
			case 0:
				p.Status = schema.StatusDraft
			case 1:
				p.Password = "secret"
			}
			if err := tx.CreatePost(ctx, w.t, p); err != nil {
				return err
			}
			after = func() { w.posts = append(w.posts, p.ID) }
		case op < 97:
			id, ok := pick(w.rng, w.posts)
			if !ok {
				return nil
			}
			old, err := tx.Post(ctx, w.t, id)
			if err != nil {
				return err
			}
			p := *old
			p.Content = fmt.Sprintf("Revised at %d", n)
			if w.rng.IntN(3) == 0 {
				p.Password = ""
			}
			if w.rng.IntN(4) == 0 {
				p.Status = schema.StatusPrivate
			}
			p.ModifiedGMT = tx.Now()
			return tx.UpdatePost(ctx, w.t, old, &p)
		default:
			id, ok := pick(w.rng, w.posts)
			if !ok {
				return nil
			}
			if _, err := tx.DeletePost(ctx, w.t, id); err != nil {
				return err
			}
			after = func() { w.posts = remove(w.posts, id) }
		}
		return nil
	})
	if err == nil && after != nil {
		after()
	}
	return err
}

// injectDuplicates republishes the latest message of random subjects as it is stored, only while
// it is still the subject's latest (a true duplicate, as a retrying publisher would make), half
// of them without their Nats-Msg-Id so that the dedup window cannot drop them.
func injectDuplicates(ctx context.Context, t *testing.T, s *system, slugs []string, seed uint64, injected *atomic.Int64) {
	nc := s.connect()
	defer nc.Close()
	js, _ := jetstream.New(nc)
	rng := rand.New(rand.NewPCG(seed, 2))
	var subjects []string
	refreshed := time.Time{}
	for ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		st, err := js.Stream(ctx, s.fc.Stream)
		if err != nil {
			continue
		}
		if time.Since(refreshed) > 300*time.Millisecond {
			slug, _ := pick(rng, slugs)
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(s.fc.Prefix+".*."+slug+".>"))
			if err != nil {
				continue
			}
			subjects = subjects[:0]
			for subj := range info.State.Subjects {
				subjects = append(subjects, subj)
			}
			refreshed = time.Now()
		}
		subj, ok := pick(rng, subjects)
		if !ok {
			continue
		}
		msg, err := st.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			continue
		}
		dup := nats.NewMsg(subj)
		dup.Data = msg.Data
		for k, vs := range msg.Header {
			// Keep what the publisher sent; drop what the server added on the way out.
			switch k {
			case "Nats-Stream", "Nats-Sequence", "Nats-Subject", "Nats-Time-Stamp", "Nats-Last-Sequence", "Nats-Num-Pending":
				continue
			}
			if strings.HasPrefix(k, "Nats-Batch-") || strings.HasPrefix(k, "Nats-Expected-") {
				continue
			}
			if k == jetstream.MsgIDHeader && rng.IntN(2) == 0 {
				continue
			}
			dup.Header[k] = vs
		}
		dup.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(msg.Sequence, 10))
		if ack, err := js.PublishMsg(ctx, dup); err == nil && !ack.Duplicate {
			injected.Add(1)
		}
	}
}

// chaosSeed is the seed of the chaos test's writers and duplicate injector: 1, or
// $VITRINE_CHAOS_SEED (make soak runs the test with a new seed each time).
func chaosSeed(t *testing.T) uint64 {
	v := os.Getenv("VITRINE_CHAOS_SEED")
	if v == "" {
		return 1
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("VITRINE_CHAOS_SEED=%q: %v", v, err)
	}
	return n
}

// Convergence under chaos: random writes over three tenants (multi-entity transactions
// included) while duplicates are injected into the stream, the relay is killed and restarted
// after a shortened dedup window, and the nats-server restarts mid-follow. Then a freshly
// bootstrapped edge, the long-running edges and the origin hold exactly the database's state at
// the version they claim.
//
// The duplicates land after their log's head: in the compacted stream each one deletes the
// original, so a consumer that had not reached the original meets the head first. A replica
// claims a head's version only when its state matches the digest the relay stamped on the head
// (before that fix, one run in about ten claimed the version with the moved entities missing).
func TestChaosConvergence(t *testing.T) {
	t.Parallel() // a system of its own; nothing here measures time
	if testing.Short() {
		t.Skip("chaos test: not in -short")
	}
	const totalWrites = 1000
	seed := chaosSeed(t)
	t.Logf("seed %d", seed)
	s := newSystem(t, systemOptions{dedup: time.Second})
	relayProc := s.startRelayProcess("--lease-ttl", "2s")
	o := s.startOrigin()
	long := []*component{s.startEdge(edge.Config{}), s.startEdge(edge.Config{CacheBytes: -1})}
	slugs := []string{"alpha", "beta", "gamma"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var writers []*writer
	for i, slug := range slugs {
		tn, _ := s.tenant(slug)
		writers = append(writers, newWriter(s.db, tn, seed*10+uint64(i)))
	}
	var injected atomic.Int64
	injectDone := make(chan struct{})
	go func() { injectDuplicates(ctx, t, s, slugs, seed, &injected); close(injectDone) }()

	var wg sync.WaitGroup
	var written atomic.Int64
	errs := make(chan error, len(writers))
	for _, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < totalWrites/len(writers)+1; i++ {
				err := w.step(ctx)
				for schema.ErrorCode(err) == schema.CodeUnavailable {
					time.Sleep(10 * time.Millisecond)
					err = w.step(ctx)
				}
				if err != nil && schema.ErrorCode(err) != schema.CodeNotFound {
					errs <- fmt.Errorf("%s write %d: %w", w.t.Slug, i, err)
					return
				}
				written.Add(1)
				// About 1000 writes over ~6 s: the chaos below happens while they go on.
				time.Sleep(time.Duration(10+w.rng.IntN(10)) * time.Millisecond)
			}
		}()
	}

	// Chaos, while the writes go on.
	time.Sleep(700 * time.Millisecond)
	relayProc.kill() // SIGKILL: no lease release, batches possibly cut short
	t.Logf("relay killed after %d writes", written.Load())
	time.Sleep(s.fc.DedupWindow + 500*time.Millisecond) // past the dedup window
	relayProc = s.startRelayProcess("--lease-ttl", "2s")
	time.Sleep(1500 * time.Millisecond)
	s.ns.Restart(t)
	t.Logf("nats-server restarted after %d writes", written.Load())
	if written.Load() >= totalWrites {
		t.Fatal("the writes ended before the nats-server restart: the chaos did not happen under load")
	}
	time.Sleep(1500 * time.Millisecond)
	relayProc.kill()
	t.Logf("relay killed again after %d writes", written.Load())
	time.Sleep(s.fc.DedupWindow + 200*time.Millisecond)
	s.startRelayProcess("--lease-ttl", "2s")

	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-injectDone
	t.Logf("%d writes, %d duplicates injected", written.Load(), injected.Load())
	if injected.Load() == 0 {
		t.Fatal("no duplicate was injected")
	}

	fresh := s.startEdge(edge.Config{})
	for _, e := range append(long, fresh) {
		s.converged(e, pubOnly, slugs...)
	}
	s.converged(o, []schema.Visibility{schema.Pub, schema.Priv}, slugs...)
	for _, c := range append(append(long, fresh), o) {
		st := c.rep.Stats()
		t.Logf("%s: %d heads held until their moved states arrived, %d disagreements, %d re-bootstraps asked",
			c.name, st.HeldHeads, st.Disagreements, st.Resyncs)
	}
	// And the edges answer from it.
	for _, slug := range slugs {
		for _, e := range append(long, fresh) {
			r := call(t, "GET", e.addr, slug+".example.test", "/api/products?per_page=100", "")
			total := r.json(t)["total"].(float64)
			if int(total) != e.rep.TenantBySlug(slug).Snapshot().ProductCount() {
				t.Fatalf("%s on %s lists %v products", slug, e.addr, total)
			}
		}
	}
}

// observed is one state-stream message as a consumer saw it.
type observed struct {
	subject string
	log     string
	version int64
	head    bool
}

// watchStream records every message published to the state stream from now on, in stream order.
func watchStream(ctx context.Context, t *testing.T, s *system) func() []observed {
	nc := s.connect()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctx, s.fc.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []observed
	cc, err := cons.Consume(func(m jetstream.Msg) {
		c, err := schema.DecodeChange(m.Data())
		if err != nil {
			t.Errorf("undecodable message on %s: %v", m.Subject(), err)
			return
		}
		mu.Lock()
		seen = append(seen, observed{subject: m.Subject(), log: c.Log, version: c.Version, head: c.IsHead()})
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() []observed {
		cc.Stop()
		nc.Close()
		mu.Lock()
		defer mu.Unlock()
		return append([]observed(nil), seen...)
	}
}

// Two relays at once, one frozen (SIGSTOP) past its lease and then resumed: the stream gets no
// duplicate, no subject goes back to an older version, and each tenant's messages stay in order.
func TestFrozenRelayIsFencedOff(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	a := s.startRelayProcess("--lease-ttl", "1s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waitFor(t, 10*time.Second, "the first relay to hold the lease", func() bool {
		l, _ := s.db.Lease(ctx, "relay")
		return strings.Contains(l.Holder, fmt.Sprintf("-%d-", a.cmd.Process.Pid))
	})
	// The stream exists once a relay holds the lease; start observing before any write.
	waitFor(t, 10*time.Second, "the state stream", func() bool {
		nc := s.connect()
		defer nc.Close()
		js, _ := jetstream.New(nc)
		_, err := js.Stream(ctx, s.fc.Stream)
		return err == nil
	})
	stopObserving := watchStream(ctx, t, s)
	b := s.startRelayProcess("--lease-ttl", "1s")
	e := s.startEdge(edge.Config{})
	slugs := []string{"north", "south"}
	var writers []*writer
	for i, slug := range slugs {
		tn, _ := s.tenant(slug)
		writers = append(writers, newWriter(s.db, tn, uint64(10+i)))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := w.step(ctx); err != nil && schema.ErrorCode(err) != schema.CodeNotFound && schema.ErrorCode(err) != schema.CodeUnavailable {
					t.Errorf("write: %v", err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(800 * time.Millisecond)
	before, _ := s.db.Lease(ctx, "relay")
	frozen, other := a, b
	if strings.Contains(before.Holder, fmt.Sprintf("-%d-", b.cmd.Process.Pid)) {
		frozen, other = b, a
	}
	frozen.signal(syscall.SIGSTOP)
	t.Logf("froze relay %d holding token %d", frozen.cmd.Process.Pid, before.Token)
	waitFor(t, 10*time.Second, "the other relay to take the lease", func() bool {
		l, _ := s.db.Lease(ctx, "relay")
		return l.Token > before.Token && strings.Contains(l.Holder, fmt.Sprintf("-%d-", other.cmd.Process.Pid))
	})
	time.Sleep(1500 * time.Millisecond) // the other relay publishes while the first is frozen
	frozen.signal(syscall.SIGCONT)
	time.Sleep(2 * time.Second) // the resumed relay runs into the fence, or notices its lost lease
	stop.Store(true)
	wg.Wait()
	s.converged(e, pubOnly, slugs...)
	msgs := stopObserving()
	if len(msgs) < 100 {
		t.Fatalf("only %d messages observed", len(msgs))
	}

	resent, err := checkFenced(msgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages observed: heads in order, nothing stored under a head, every subject at its latest state at each head; %d changes resent above their head", len(msgs), resent)
}

// checkFenced checks what fencing guarantees of a state stream's messages, in stream order: a
// log's heads never go back; once a head is stored, no change of its log at or below the head's
// version is stored after it (a publisher that lost the fence is refused); and when a head is
// stored, every subject of its log whose states are all at or below the head's version is at the
// latest of them (a copy resent by one publisher never lands behind the newer copy another
// sent). A change stored again above its log's latest head is allowed, and counted: a retry, or
// the new lease holder republishing what a frozen one stored without its head, sends every change
// above the head again, in order.
func checkFenced(msgs []observed) (resent int, err error) {
	type subjectState struct{ last, top int64 }
	heads := map[string]int64{}
	subjects := map[string]map[string]*subjectState{}
	for i, m := range msgs {
		if m.head {
			if m.version < heads[m.log] {
				return resent, fmt.Errorf("message %d: the head of %s went from version %d back to %d", i, m.log, heads[m.log], m.version)
			}
			heads[m.log] = m.version
			for subj, st := range subjects[m.log] {
				if st.top <= m.version && st.last != st.top {
					return resent, fmt.Errorf("message %d: at the head %d of %s, %s is at version %d though %d was stored", i, m.version, m.log, subj, st.last, st.top)
				}
			}
			continue
		}
		if h, ok := heads[m.log]; ok && m.version <= h {
			return resent, fmt.Errorf("message %d: %s version %d stored after its log's head %d", i, m.subject, m.version, h)
		}
		if subjects[m.log] == nil {
			subjects[m.log] = map[string]*subjectState{}
		}
		st := subjects[m.log][m.subject]
		if st == nil {
			st = &subjectState{}
			subjects[m.log][m.subject] = st
		}
		if m.version <= st.last {
			resent++
		}
		st.last, st.top = m.version, max(st.top, m.version)
	}
	return resent, nil
}

// checkFenced accepts what a retry or a take-over may store and refuses what a fence must stop.
func TestCheckFenced(t *testing.T) {
	ch := func(subject string, version int64) observed {
		return observed{subject: "s." + subject, log: "shop", version: version}
	}
	hd := func(version int64) observed {
		return observed{subject: "s.head", log: "shop", version: version, head: true}
	}
	for _, tc := range []struct {
		name   string
		msgs   []observed
		resent int
		err    string
	}{
		{"in order", []observed{ch("a", 1), ch("b", 2), hd(2), ch("a", 3), hd(3)}, 0, ""},
		{"a cut publish resent above the head", []observed{hd(2), ch("a", 3), ch("b", 4), ch("a", 3), ch("b", 4), ch("a", 5), hd(5)}, 2, ""},
		{"a head claimed again", []observed{ch("a", 1), hd(1), hd(1), ch("a", 2), hd(2)}, 0, ""},
		{"another log's versions are its own", []observed{hd(9), {subject: "t.a", log: "other", version: 1}}, 0, ""},
		{"a change under its head", []observed{ch("a", 3), hd(3), ch("a", 3)}, 0, "s.a version 3 stored after its log's head 3"},
		{"a head going back", []observed{hd(5), hd(4)}, 0, "went from version 5 back to 4"},
		{"a stale copy behind the newer one at a head", []observed{hd(2), ch("a", 3), ch("a", 5), ch("a", 3), hd(5)}, 1, "s.a is at version 3 though 5 was stored"},
		{"a state above the head is not judged yet", []observed{hd(2), ch("a", 6), ch("a", 3), hd(4)}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resent, err := checkFenced(tc.msgs)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want an error containing %q", err, tc.err)
			case tc.err == "" && resent != tc.resent:
				t.Fatalf("resent %d, want %d", resent, tc.resent)
			}
		})
	}
}

// A database reset under a running stream is detected by the epoch: the relay refuses to write
// the new database's rows into the old stream, and after `replica rebuild` edges drop the old
// state at once and serve the new one.
func TestDatabaseResetIsDetectedByEpoch(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	rel := s.startRelay(relay.Config{LeaseTTL: time.Second})
	e := s.startEdge(edge.Config{})
	ctx := context.Background()
	tn, _ := s.tenant("shop")
	if err := s.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn, &schema.Product{Slug: "old-lamp", Title: "Old Lamp", Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}})
	}); err != nil {
		t.Fatal(err)
	}
	s.converged(e, pubOnly, "shop")
	oldEpoch := e.rep.Epoch()
	host := "shop.example.test"
	if r := call(t, "GET", e.addr, host, "/api/products/old-lamp", ""); r.status != 200 {
		t.Fatalf("before the reset: %d", r.status)
	}
	nc := s.connect()
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, _ := js.Stream(ctx, s.fc.Stream)
	info, _ := st.Info(ctx)
	lastSeq := info.State.LastSeq

	// Reset the database under the running system: same URL, new contents.
	storetest.ResetDatabase(t, s.dsn)
	if err := s.db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s.replicas = nil // the new tenant is not expected on the old stream
	tn2, _ := s.tenant("shop")
	if err := s.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn2, &schema.Product{Slug: "new-lamp", Title: "New Lamp", Status: schema.ProductActive, Prices: schema.Prices{"USD": 200}})
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the relay to notice the epoch change", func() bool { return rel.relay.Stats().EpochMismatch })
	time.Sleep(300 * time.Millisecond)
	info, _ = st.Info(ctx)
	if info.State.LastSeq != lastSeq {
		t.Fatalf("the relay wrote the new database's rows into the old stream (last seq %d -> %d)", lastSeq, info.State.LastSeq)
	}
	if r := call(t, "GET", e.addr, host, "/api/products/new-lamp", ""); r.status != 404 {
		t.Fatalf("new data leaked into the old stream's replica: %d", r.status)
	}

	// The operator rebuilds: edges switch to the new epoch wholesale.
	rb, err := relay.New(s.db, nc, relay.Config{Feed: s.fc, Holder: "rebuild", LeaseTTL: time.Second, Logger: s.log})
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the edge to follow the new epoch", func() bool { return e.rep.Epoch() != oldEpoch })
	s.converged(e, pubOnly, "shop")
	if r := call(t, "GET", e.addr, host, "/api/products/old-lamp", ""); r.status != 404 {
		t.Fatalf("old data served after the rebuild: %d", r.status)
	}
	if r := call(t, "GET", e.addr, host, "/api/products/new-lamp", ""); r.status != 200 {
		t.Fatalf("new data not served after the rebuild: %d", r.status)
	}
	// The running relay resumes on the rebuilt stream.
	waitFor(t, 15*time.Second, "the relay to resume", func() bool { return !rel.relay.Stats().EpochMismatch })
	if err := s.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateProduct(ctx, tn2, &schema.Product{Slug: "newer-lamp", Title: "Newer Lamp", Status: schema.ProductActive, Prices: schema.Prices{"USD": 300}})
	}); err != nil {
		t.Fatal(err)
	}
	s.converged(e, pubOnly, "shop")
}
