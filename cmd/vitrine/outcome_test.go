package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// TestCheckoutCommitOutcomeUnknown makes a checkout's COMMIT fail after PostgreSQL committed it
// (storetest.Proxy between the origin and the database: the connection dropped before the
// answer, or CockroachDB's 40003 in its place). The shopper gets 504 outcome_unknown, never a
// 500, and a retry with the same Idempotency-Key ends with one order, its stock taken once and
// one payment authorization: the retry takes the key over at once and resumes the order the
// first attempt placed.
func TestCheckoutCommitOutcomeUnknown(t *testing.T) {
	var proxy *storetest.Proxy
	sh := newShopWith(t, func(s *system) {
		var via string
		proxy, via = storetest.NewProxy(t, s.dsn)
		db, err := store.Open(context.Background(), via, store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		s.db = db
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		marker string // a statement of the transaction whose COMMIT fails
		fault  storetest.CommitFault
		// first is the first answer's status: the key's claim resolves itself (201).
		first int
	}{
		{"the reserve's commit is lost", "INSERT INTO orders", storetest.DropAfterCommit, 504},
		{"the reserve's commit is ambiguous (40003)", "INSERT INTO orders", storetest.AmbiguousCommit, 504},
		{"the settle's commit is lost", "UPDATE orders SET status", storetest.DropAfterCommit, 504},
		{"the key's claim commit is lost", "INSERT INTO idempotency_keys", storetest.DropAfterCommit, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := sh.product("Kettle", 3000, 5)
			session, key := newSession(), "k-"+newSession()
			sh.add(session, id, 1)
			fired := proxy.Fired()
			proxy.FailCommit(tc.marker, tc.fault)
			first := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", key)
			if proxy.Fired() != fired+1 {
				t.Fatalf("the fault did not fire (answer %d %s)", first.status, first.body)
			}
			if first.status != tc.first {
				t.Fatalf("first answer %d %s, want %d", first.status, first.body, tc.first)
			}
			if first.status == 504 {
				var e schema.CommerceError
				if err := json.Unmarshal(first.body, &e); err != nil || e.Code != string(schema.CodeOutcomeUnknown) ||
					!strings.Contains(e.Error, "same Idempotency-Key is safe") {
					t.Fatalf("first answer %s", first.body)
				}
			}
			retry := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", key)
			if retry.status != 201 {
				t.Fatalf("retry with the same key: %d %s", retry.status, retry.body)
			}
			if again := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", key); again.status != 201 || string(again.body) != string(retry.body) {
				t.Fatalf("second retry: %d %s, want the same order", again.status, again.body)
			}
			if got := sh.stock(id); got != 4 {
				t.Fatalf("stock %d, want 4: taken once", got)
			}
			pending, err := sh.s.db.StalePendingOrders(ctx, time.Now().Add(time.Hour), 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) != 0 {
				t.Fatalf("%d orders left pending: a second order was placed", len(pending))
			}
			ref := decode[schema.OrderView](t, retry).Reference
			var orderID string
			sh.settle(func(tx *store.Tx) error {
				o, err := tx.OrderByReference(ctx, sh.tn, ref)
				if err == nil {
					orderID = o.ID
				}
				return err
			})
			payments, err := sh.s.db.TestPayments(ctx, sh.tn.ID)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, p := range payments {
				if p.Key == orderID {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d authorizations of the order, want 1", n)
			}
		})
	}

	t.Run("without a key the answer gives no retry advice", func(t *testing.T) {
		id := sh.product("Kettle", 3000, 5)
		session := newSession()
		sh.add(session, id, 1)
		proxy.FailCommit("INSERT INTO orders", storetest.DropAfterCommit)
		r := sh.do("POST", "/api/checkout", session, guest)
		var e schema.CommerceError
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != 504 || e.Code != string(schema.CodeOutcomeUnknown) ||
			r.header.Get("Retry-After") != "" || strings.Contains(e.Error, "is safe") {
			t.Fatalf("answer %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
		}
	})
}
