package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// openProxied opens a migrated store whose connections go through a storetest.Proxy.
func openProxied(t *testing.T, cfg store.Config) (*store.DB, *storetest.Proxy) {
	t.Helper()
	dsn := storetest.NewDatabase(t)
	p, via := storetest.NewProxy(t, dsn)
	db, err := store.Open(context.Background(), via, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, p
}

// TestCommitOutcomeUnknown fails the answer to a real COMMIT after PostgreSQL committed it, as
// a lost connection or CockroachDB's 40003 would: the transaction is not retried (it
// committed: a retry would apply it twice) and the caller gets outcome_unknown, not an
// internal error. The next transaction works.
func TestCommitOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault storetest.CommitFault
	}{
		{"connection lost during COMMIT", storetest.DropAfterCommit},
		{"40003 statement_completion_unknown", storetest.AmbiguousCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var retries atomic.Int64
			db, p := openProxied(t, store.Config{OnRetry: func() { retries.Add(1) }})
			tn := storetest.Tenant(t, db, "shop")
			p.FailCommit("INSERT INTO throttles", tc.fault)
			_, _, err := db.Throttle(ctx, tn, "login:ann", 10, time.Minute)
			if p.Fired() != 1 {
				t.Fatalf("the fault fired %d times", p.Fired())
			}
			if got := schema.ErrorCode(err); got != schema.CodeOutcomeUnknown {
				t.Fatalf("error %v (code %s), want outcome_unknown", err, got)
			}
			if retries.Load() != 0 {
				t.Fatalf("a transaction with an unknown outcome was retried %d times", retries.Load())
			}
			// It did commit, once: the next hit counts 2.
			ok, _, err := db.Throttle(ctx, tn, "login:ann", 2, time.Minute)
			if err != nil || !ok {
				t.Fatalf("next hit: ok %v, err %v", ok, err)
			}
			if ok, _, _ := db.Throttle(ctx, tn, "login:ann", 2, time.Minute); ok {
				t.Fatal("the committed hit was not counted (or counted twice): the third hit is within a limit of 2")
			}
		})
	}
}

// TestClaimWithUnknownOutcome: a client's Idempotency-Key claim whose COMMIT has an unknown
// outcome is resolved in place. The claim committed, and the request recognises it as its own
// (not as another request running with the key, which would answer 409).
func TestClaimWithUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p := openProxied(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	for _, fault := range []storetest.CommitFault{storetest.DropAfterCommit, storetest.AmbiguousCommit} {
		key := "k" + string(rune('0'+fault))
		p.FailCommit("INSERT INTO idempotency_keys", fault)
		state, rec, err := db.BeginIdempotent(ctx, tn, "checkout:x", key, []byte("body"), time.Minute)
		if err != nil || state != store.IdempotencyNew || p.Fired() != int(fault) {
			t.Fatalf("fault %d: state %v, err %v, fired %d", fault, state, err, p.Fired())
		}
		// The claim holds: another request with the key is told it is running.
		if state, _, _ := db.BeginIdempotent(ctx, tn, "checkout:x", key, []byte("body"), time.Minute); state != store.IdempotencyRunning {
			t.Fatalf("fault %d: a second request got state %v", fault, state)
		}
		// Ending the claim's lease lets the next request take the key over at once.
		if err := db.EndIdempotentLease(ctx, tn, "checkout:x", key, rec.Claimed); err != nil {
			t.Fatal(err)
		}
		if state, _, _ := db.BeginIdempotent(ctx, tn, "checkout:x", key, []byte("body"), time.Minute); state != store.IdempotencyNew && state != store.IdempotencyTakeover {
			t.Fatalf("fault %d: after the lease ended, state %v", fault, state)
		}
	}
}
