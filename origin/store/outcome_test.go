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

// TestThrottleSlidesAcrossWindows: a throttle's limit holds across the boundary of its counting
// windows. A client that spent its limit at the end of one minute is still refused at the start
// of the next, told when to come back, and allowed again at that moment.
func TestThrottleSlidesAcrossWindows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var now atomic.Pointer[time.Time]
	at := func(s string) {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		now.Store(&tm)
	}
	at("2026-11-26T12:00:40Z")
	db, _ := openProxied(t, store.Config{Now: func() time.Time { return *now.Load() }})
	tn := storetest.Tenant(t, db, "shop")
	hit := func() (bool, time.Duration) {
		t.Helper()
		ok, retry, err := db.Throttle(ctx, tn, "coupon:ip:198.51.100.7", 20, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok, retry
	}
	for i := range 20 {
		if ok, _ := hit(); !ok {
			t.Fatalf("hit %d of 20 refused", i+1)
		}
	}
	// Refused until the next window has worn the 21 hits down: 21*(1-t/60) + 1 <= 20 at
	// t = 5.71s into it, 25.71s from now.
	if ok, retry := hit(); ok || !near(retry, 25714285714*time.Nanosecond) {
		t.Fatalf("21st hit in the same minute: ok %v, retry after %v (want refused, 25.71s)", ok, retry)
	}
	// Two seconds into the next window the previous one still weighs 58/60 of its 21 hits.
	at("2026-11-26T12:01:02Z")
	ok, retry := hit()
	if ok {
		t.Fatal("the limit was spent again right after the window's boundary")
	}
	// The next hit is allowed once 21*(1-t/60) + 2 <= 20: t >= 60*(1-18/21) = 8.57s.
	if !near(retry, 6571428571*time.Nanosecond) {
		t.Fatalf("retry after %v, want 6.57s", retry)
	}
	at("2026-11-26T12:01:08Z")
	if ok, _ := hit(); ok {
		t.Fatal("allowed before the time it was told to retry")
	}
	at("2026-11-26T12:01:20Z")
	if ok, _ := hit(); !ok {
		t.Fatal("refused after the time it was told to retry")
	}
	// Another client is untouched, and a whole idle window later the slate is clean.
	if ok, _, err := db.Throttle(ctx, tn, "coupon:ip:198.51.100.8", 20, time.Minute); err != nil || !ok {
		t.Fatalf("another client: ok %v, err %v", ok, err)
	}
	at("2026-11-26T12:03:00Z")
	for i := range 20 {
		if ok, _ := hit(); !ok {
			t.Fatalf("after an idle window, hit %d refused", i+1)
		}
	}
}

func near(d, want time.Duration) bool { return d > want-time.Millisecond && d < want+time.Millisecond }
