package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// groupFixture is a store with products whose prices writers bump through TenantWriteTx (the
// origin's path, which carries the writes joined to a store's queue in one transaction).
type groupFixture struct {
	db  *store.DB
	dsn string
	c   *storetest.Counter
	t   *schema.Tenant
	ids []schema.ProductID
}

func newGroupFixture(t *testing.T, cfg store.Config, products int) *groupFixture {
	f := &groupFixture{c: &storetest.Counter{}}
	cfg.Tracer = f.c
	f.db, f.dsn = storetest.Open(t, cfg)
	return f.seed(t, products)
}

// seed creates the fixture's store and products.
func (f *groupFixture) seed(t *testing.T, products int) *groupFixture {
	f.t = storetest.Tenant(t, f.db, "grouped")
	for i := range products {
		p := &schema.Product{Slug: fmt.Sprintf("p%d", i), Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 0}}
		if err := f.db.Tx(context.Background(), func(tx *store.Tx) error { return tx.CreateProduct(context.Background(), f.t, p) }); err != nil {
			t.Fatal(err)
		}
		f.ids = append(f.ids, p.ID)
	}
	f.c.Reset()
	return f
}

// bumpIn adds one to the price of product i of t in tx.
func bumpIn(ctx context.Context, tx *store.Tx, t *schema.Tenant, id schema.ProductID) error {
	old, err := tx.Product(ctx, t, id)
	if err != nil {
		return err
	}
	p := *old
	p.Prices = schema.Prices{"USD": old.Prices["USD"] + 1}
	return tx.UpdateProduct(ctx, t, old, &p)
}

// handlerBumpIn adds one to the price of product id of t in tx on the admin handler's path:
// ProductForUpdate, then UpdateProductVariants (whose product update waits for the
// transaction's last batch).
func handlerBumpIn(ctx context.Context, tx *store.Tx, t *schema.Tenant, id schema.ProductID) error {
	old, vs, err := tx.ProductForUpdate(ctx, t, id)
	if err != nil {
		return err
	}
	p := *old
	p.Prices = schema.Prices{"USD": old.Prices["USD"] + 1}
	return tx.UpdateProductVariants(ctx, t, old, &p, vs)
}

// write runs fn as one of the origin's writes of the fixture's store.
func (f *groupFixture) write(fn func(ctx context.Context, tx *store.Tx) error) ([]store.LogCommit, error) {
	ctx := context.Background()
	return f.db.TenantWriteTx(ctx, f.t, func(tx *store.Tx) error { return fn(ctx, tx) })
}

// bump is a write adding one to product i's price.
func (f *groupFixture) bump(i int) func(ctx context.Context, tx *store.Tx) error {
	return func(ctx context.Context, tx *store.Tx) error { return bumpIn(ctx, tx, f.t, f.ids[i]) }
}

// hold starts a write that bumps product 0 and then waits (on its first attempt only) until
// release is closed. It returns once the write holds the store's queue.
func (f *groupFixture) hold(t *testing.T) (release func(), done <-chan writeResult) {
	held, rel := make(chan struct{}), make(chan struct{})
	out := make(chan writeResult, 1)
	var once sync.Once
	go func() {
		commits, err := f.write(func(ctx context.Context, tx *store.Tx) error {
			if err := f.bump(0)(ctx, tx); err != nil {
				return err
			}
			once.Do(func() { close(held); <-rel })
			return nil
		})
		out <- writeResult{commits, err, nil}
	}()
	<-held
	return func() { close(rel) }, out
}

type writeResult struct {
	commits  []store.LogCommit
	err      error
	panicked any
}

// join starts a write that will find the queue held, and waits until it waits for it.
func (f *groupFixture) join(t *testing.T, fn func(ctx context.Context, tx *store.Tx) error) <-chan writeResult {
	t.Helper()
	before := f.db.QueueWaiters(f.t.ID)
	out := make(chan writeResult, 1)
	go func() {
		var r writeResult
		defer func() {
			r.panicked = recover()
			out <- r
		}()
		r.commits, r.err = f.write(fn)
	}()
	for deadline := time.Now().Add(10 * time.Second); f.db.QueueWaiters(f.t.ID) <= before; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the write never waited for the store's queue")
		}
	}
	return out
}

func (f *groupFixture) price(t *testing.T, i int) int64 {
	p, err := store.TxValue(context.Background(), f.db, func(tx *store.Tx) (*schema.Product, error) {
		return tx.Product(context.Background(), f.t, f.ids[i])
	})
	if err != nil {
		t.Fatal(err)
	}
	return p.Prices["USD"]
}

// commits counts the COMMITs the store sent since the counter's last reset.
func (f *groupFixture) commits() int {
	n := 0
	for _, s := range f.c.Texts() {
		if strings.EqualFold(strings.TrimPrefix(s, "batch: "), "commit") { // on its own, or its batch's last
			n++
		}
	}
	return n
}

// checkOutbox checks the store's replication outbox: versions from 1 without a gap, each
// transaction's rows exactly its bounds, and the last state of every product its price.
func (f *groupFixture) checkOutbox(t *testing.T) {
	t.Helper()
	rows, err := f.db.OutboxRows(context.Background(), f.t.ID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Version != int64(i+1) {
			t.Fatalf("outbox row %d has version %d: a gap", i, r.Version)
		}
		if r.TxnFirst > r.Version || r.Version > r.TxnLast || r.TxnLast > int64(len(rows)) {
			t.Fatalf("outbox row %d: version %d outside its transaction %d–%d", i, r.Version, r.TxnFirst, r.TxnLast)
		}
		if i > 0 && r.TxnFirst != rows[i-1].TxnFirst && (r.TxnFirst != r.Version || rows[i-1].TxnLast != rows[i-1].Version) {
			t.Fatalf("outbox rows %d and %d: transactions %d–%d and %d–%d overlap", i-1, i, rows[i-1].TxnFirst, rows[i-1].TxnLast, r.TxnFirst, r.TxnLast)
		}
	}
}

// Writes that join a held store queue are carried by the holder's transaction: one COMMIT for
// all of them, every write applied once and answered with the group's version. With grouping
// off (the baseline), each takes a transaction of its own.
func TestGroupCommitCarriesJoinedWrites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		group   int
		commits int
	}{{"grouped", 0, 1}, {"one transaction each", -1, 9}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGroupFixture(t, store.Config{MaxConns: 16, GroupWrites: tc.group, RetryBudget: 20 * time.Second}, 2)
			release, held := f.hold(t)
			var joined []<-chan writeResult
			for i := range 8 {
				joined = append(joined, f.join(t, f.bump(i%2)))
			}
			release()
			h := <-held
			if h.err != nil {
				t.Fatal(h.err)
			}
			for i, ch := range joined {
				r := <-ch
				if r.err != nil || r.panicked != nil {
					t.Fatalf("joined write %d: %v %v", i, r.err, r.panicked)
				}
				if tc.group == 0 && (len(r.commits) != 1 || r.commits[0] != h.commits[0]) {
					t.Errorf("joined write %d answered %v, the group %v", i, r.commits, h.commits)
				}
			}
			if got := f.commits(); got != tc.commits {
				t.Errorf("%d COMMITs for 9 writes, want %d", got, tc.commits)
			}
			if p0, p1 := f.price(t, 0), f.price(t, 1); p0 != 5 || p1 != 4 {
				t.Errorf("prices %d and %d, want 5 and 4", p0, p1)
			}
			f.checkOutbox(t)
			if n := f.db.QueuedLogs(); n != 0 {
				t.Errorf("%d queues left behind", n)
			}
		})
	}
}

// Each joined write keeps its own answer: one that fails after writing is rolled back to its
// savepoint and answered its error (a 422 of its own, a unique violation's 409), one that
// panics panics in its caller, one that needs another store's queue held elsewhere runs on its
// own afterwards; the rest of the group commits.
func TestGroupCommitKeepsEachWritesAnswer(t *testing.T) {
	f := newGroupFixture(t, store.Config{MaxConns: 16, RetryBudget: 20 * time.Second}, 1)
	other := storetest.Tenant(t, f.db, "other")
	q := &schema.Product{Slug: "q", Title: "Q", Status: schema.ProductActive, Prices: schema.Prices{"USD": 0}}
	if err := f.db.Tx(context.Background(), func(tx *store.Tx) error { return tx.CreateProduct(context.Background(), other, q) }); err != nil {
		t.Fatal(err)
	}
	f.c.Reset()
	// Another write holds the other store's queue until the end.
	otherHeld, otherRelease := make(chan struct{}), make(chan struct{})
	otherDone := make(chan error, 1)
	go func() {
		var once sync.Once
		_, err := f.db.TenantWriteTx(context.Background(), other, func(tx *store.Tx) error {
			once.Do(func() { close(otherHeld); <-otherRelease })
			return nil
		})
		otherDone <- err
	}()
	<-otherHeld

	release, held := f.hold(t)
	invalid := schema.Invalid("title", "no")
	answers := []struct {
		name string
		fn   func(ctx context.Context, tx *store.Tx) error
		code schema.Code
		bump int64
	}{
		{"ok", f.bump(0), "", 1},
		{"fails after writing", func(ctx context.Context, tx *store.Tx) error {
			if err := f.bump(0)(ctx, tx); err != nil {
				return err
			}
			return invalid
		}, schema.CodeInvalid, 0},
		{"unique violation", func(ctx context.Context, tx *store.Tx) error {
			if err := f.bump(0)(ctx, tx); err != nil {
				return err
			}
			return tx.CreateProduct(ctx, f.t, &schema.Product{Slug: "p0", Title: "Dup", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
		}, schema.CodeConflict, 0},
		{"panics", func(ctx context.Context, tx *store.Tx) error {
			if err := f.bump(0)(ctx, tx); err != nil {
				return err
			}
			panic("joined write panicked")
		}, "", 0},
		{"needs another store", func(ctx context.Context, tx *store.Tx) error {
			if err := f.bump(0)(ctx, tx); err != nil {
				return err
			}
			return bumpIn(ctx, tx, other, q.ID)
		}, "", 1},
		{"ok after the failures", f.bump(0), "", 1},
	}
	var joined []<-chan writeResult
	for _, a := range answers {
		joined = append(joined, f.join(t, a.fn))
	}
	release()
	h := <-held
	if h.err != nil {
		t.Fatal(h.err)
	}
	results := make([]writeResult, len(answers))
	for i, a := range answers {
		if a.name == "needs another store" {
			continue // it waits for the other store's queue
		}
		results[i] = <-joined[i]
		r := results[i]
		switch {
		case a.name == "panics":
			if r.panicked != "joined write panicked" {
				t.Errorf("%s: panicked %v, err %v", a.name, r.panicked, r.err)
			}
		case r.panicked != nil || (a.code == "") != (r.err == nil) || (r.err != nil && schema.ErrorCode(r.err) != a.code):
			t.Errorf("%s: %v (%v), want code %q", a.name, r.err, r.panicked, a.code)
		case a.code == "" && (len(r.commits) != 1 || r.commits[0] != h.commits[0]):
			t.Errorf("%s: answered %v, the group %v", a.name, r.commits, h.commits)
		}
	}
	if got := f.commits(); got != 1 {
		t.Errorf("%d COMMITs before the write that needs another store ran; want the group's one", got)
	}
	// The write that needs the other store runs once its queue is free.
	close(otherRelease)
	if err := <-otherDone; err != nil {
		t.Fatal(err)
	}
	if r := <-joined[4]; r.err != nil || r.panicked != nil {
		t.Fatalf("needs another store: %v %v", r.err, r.panicked)
	}
	var want int64 = 1 // the holder's
	for _, a := range answers {
		want += a.bump
	}
	if got := f.price(t, 0); got != want {
		t.Errorf("price %d, want %d (the failed writes' bumps rolled back)", got, want)
	}
	if p, err := store.TxValue(context.Background(), f.db, func(tx *store.Tx) (*schema.Product, error) {
		return tx.Product(context.Background(), other, q.ID)
	}); err != nil || p.Prices["USD"] != 1 {
		t.Errorf("the other store's product: %v, %v; want price 1", p, err)
	}
	f.checkOutbox(t)
	if n := f.db.QueuedLogs(); n != 0 {
		t.Errorf("%d queues left behind", n)
	}
}

// A serialization failure in a joined write fails the whole attempt, and the group is retried
// as one transaction: every write still lands exactly once.
func TestGroupCommitRetriesAsOne(t *testing.T) {
	var retries atomic.Int64
	f := newGroupFixture(t, store.Config{MaxConns: 16, RetryBudget: 20 * time.Second, OnRetry: func() { retries.Add(1) }}, 2)
	release, held := f.hold(t)
	var joined []<-chan writeResult
	for range 4 {
		joined = append(joined, f.join(t, f.bump(1)))
	}
	// Another session (another origin process, say) changes product 1 after the group's
	// snapshot: the first joined write's update of it is a serialization failure.
	conn, err := pgx.Connect(context.Background(), f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE products SET title = title WHERE tenant_id = $1 AND id = $2`, f.t.ID, int64(f.ids[1])); err != nil {
		t.Fatal(err)
	}
	release()
	if h := <-held; h.err != nil {
		t.Fatal(h.err)
	}
	for i, ch := range joined {
		if r := <-ch; r.err != nil || r.panicked != nil {
			t.Fatalf("joined write %d: %v %v", i, r.err, r.panicked)
		}
	}
	if retries.Load() != 1 || f.commits() != 1 {
		t.Errorf("%d retries and %d COMMITs; want the group retried once and committed once", retries.Load(), f.commits())
	}
	if p0, p1 := f.price(t, 0), f.price(t, 1); p0 != 1 || p1 != 4 {
		t.Errorf("prices %d and %d, want 1 and 4", p0, p1)
	}
	f.checkOutbox(t)
}

// Many writers of one store, a quarter of whose writes fail after writing, half of them on the
// admin handler's path (a product update put off to the transaction's last batch), through TenantWriteTx
// with a retry budget too short for collisions: every acknowledged bump is in, no failed one is,
// and the outbox stays gapless. The COMMITs per write are logged.
func TestGroupCommitUnderConcurrentWriters(t *testing.T) {
	f := newGroupFixture(t, store.Config{MaxConns: 16, MaxRetries: 2, RetryBudget: 20 * time.Second}, 4)
	const writers, each = 48, 5
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	errOwn := schema.Invalid("x", "refused by its own work")
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				fail := (w+i)%4 == 0
				_, err := f.write(func(ctx context.Context, tx *store.Tx) error {
					if w%2 == 0 {
						// The admin handler's path: the next joined write must still read
						// the product update it puts off.
						if err := handlerBumpIn(ctx, tx, f.t, f.ids[w%4]); err != nil {
							return err
						}
					} else if err := f.bump(w%4)(ctx, tx); err != nil {
						return err
					}
					if fail {
						return errOwn
					}
					return nil
				})
				switch {
				case err == nil && !fail:
					ok.Add(1)
				case fail && errors.Is(err, errOwn):
					failed.Add(1)
				default:
					t.Errorf("writer %d write %d: %v", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	var sum int64
	for i := range f.ids {
		sum += f.price(t, i)
	}
	t.Logf("%d writes acknowledged, %d refused by their own work, %d COMMITs", ok.Load(), failed.Load(), f.commits())
	if sum != ok.Load() {
		t.Errorf("prices sum to %d after %d acknowledged bumps", sum, ok.Load())
	}
	if f.commits() >= writers*each {
		t.Errorf("%d COMMITs for %d writes: nothing was grouped", f.commits(), writers*each)
	}
	f.checkOutbox(t)
	if n := f.db.QueuedLogs(); n != 0 {
		t.Errorf("%d queues left behind", n)
	}
}

// When the answer to the group's COMMIT is lost after the server committed, every write of the
// group is answered outcome_unknown (none is retried: each was applied once).
func TestGroupCommitOutcomeUnknown(t *testing.T) {
	for _, fault := range []storetest.CommitFault{storetest.DropAfterCommit, storetest.AmbiguousCommit} {
		f := &groupFixture{c: &storetest.Counter{}}
		var p *storetest.Proxy
		f.db, p = openProxied(t, store.Config{MaxConns: 16, RetryBudget: 20 * time.Second, Tracer: f.c})
		f.seed(t, 1)
		release, held := f.hold(t)
		var joined []<-chan writeResult
		for range 3 {
			joined = append(joined, f.join(t, f.bump(0)))
		}
		p.FailCommit("SAVEPOINT joined_write", fault)
		release()
		all := append([]<-chan writeResult{held}, joined...)
		for i, ch := range all {
			if r := <-ch; schema.ErrorCode(r.err) != schema.CodeOutcomeUnknown {
				t.Errorf("fault %d, write %d: %v (%v), want outcome_unknown", fault, i, r.err, r.panicked)
			}
		}
		if p.Fired() != 1 {
			t.Fatalf("the proxy failed %d COMMITs", p.Fired())
		}
		if got := f.price(t, 0); got != 4 {
			t.Errorf("fault %d: price %d, want 4 (the group committed once)", fault, got)
		}
	}
}

// A write put off to the transaction's last batch (the admin handler's product update) that
// fails is answered to the write that put it off, not to the one whose round trip carried it:
// the group's attempt fails as a whole and each of its writes runs on its own. Whether the
// failing write is the group's last (its deferred write rides in the COMMIT's batch) or not (it
// rides ahead of the next write's first statement), the holder and the other writes land.
func TestGroupCommitDeferredWriteFailure(t *testing.T) {
	for _, last := range []bool{false, true} {
		t.Run(fmt.Sprintf("last %v", last), func(t *testing.T) {
			f := newGroupFixture(t, store.Config{MaxConns: 16, RetryBudget: 20 * time.Second}, 2)
			release, held := f.hold(t)
			failing := func(ctx context.Context, tx *store.Tx) error {
				if err := f.bump(1)(ctx, tx); err != nil {
					return err
				}
				// Product 1 takes product 0's slug: a unique violation, found only when the
				// transaction sends its deferred writes.
				tx.ExecLater(`UPDATE products SET slug = 'p0' WHERE tenant_id = $1 AND id = $2`, f.t.ID, int64(f.ids[1]))
				return nil
			}
			var fns []func(ctx context.Context, tx *store.Tx) error
			fns = append(fns, f.bump(0), failing)
			if !last {
				fns = append(fns, f.bump(0))
			}
			var joined []<-chan writeResult
			for _, fn := range fns {
				joined = append(joined, f.join(t, fn))
			}
			release()
			if h := <-held; h.err != nil {
				t.Fatalf("holder: %v", h.err)
			}
			for i, ch := range joined {
				r := <-ch
				want := schema.Code("")
				if i == 1 {
					want = schema.CodeConflict
				}
				if r.panicked != nil || (want == "") != (r.err == nil) || (r.err != nil && schema.ErrorCode(r.err) != want) {
					t.Errorf("write %d: %v (%v), want code %q", i, r.err, r.panicked, want)
				}
			}
			wantP0 := int64(len(fns)) // the holder and the bumps of product 0
			if p0, p1 := f.price(t, 0), f.price(t, 1); p0 != wantP0 || p1 != 0 {
				t.Errorf("prices %d and %d, want %d and 0", p0, p1, wantP0)
			}
			f.checkOutbox(t)
		})
	}
}
