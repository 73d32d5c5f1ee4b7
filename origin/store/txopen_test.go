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

// TestTransactionRoundTrips counts what a transaction costs beyond its own statements: its BEGIN
// rides with its first statement and its COMMIT with its last, a transaction that sends nothing
// is never begun, and one that reads its clock before any statement begins on a round trip of
// its own (the clock must follow the snapshot).
func TestTransactionRoundTrips(t *testing.T) {
	ctx := context.Background()
	var c storetest.Counter
	db, _ := storetest.Open(t, store.Config{Tracer: &c})
	tn := storetest.Tenant(t, db, "shop")
	p := product("lamp")
	if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, p) }); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		fn    func(tx *store.Tx) error
		trips int
	}{
		{"nothing sent", func(tx *store.Tx) error { return nil }, 0},
		{"one read", func(tx *store.Tx) error {
			_, err := tx.Product(ctx, tn, p.ID)
			return err
		}, 2}, // BEGIN and the read; COMMIT
		{"clock, then a read", func(tx *store.Tx) error {
			if tx.Now().IsZero() {
				t.Error("the clock read before any statement is zero")
			}
			_, err := tx.Product(ctx, tn, p.ID)
			return err
		}, 3}, // BEGIN and SELECT 1; the read; COMMIT
		{"a read, then the clock", func(tx *store.Tx) error {
			_, err := tx.Product(ctx, tn, p.ID)
			if tx.Now().IsZero() {
				t.Error("the clock read after the first statement is zero")
			}
			return err
		}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the first run prepares the statements on a connection
				c.Reset()
				if err := db.Tx(ctx, tc.fn); err != nil {
					t.Fatal(err)
				}
			}
			if trips, _ := c.Counts(); trips != tc.trips {
				t.Errorf("%d round trips, want %d: %q", trips, tc.trips, c.Texts())
			}
		})
	}
}

// TestClockFollowsSnapshot holds a transaction inside its clock reading while another commits a
// new price, dated later. Whenever the held transaction reads its clock (before any statement,
// or after its first), its snapshot must already exist: it must not see the later-dated price,
// or a change dated earlier would include one dated after it.
func TestClockFollowsSnapshot(t *testing.T) {
	ctx := context.Background()
	var armed atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	db, _ := storetest.Open(t, store.Config{Now: func() time.Time {
		now := time.Now()
		if armed.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return now
	}})
	tn := storetest.Tenant(t, db, "shop")
	lamp, desk := product("lamp"), product("desk")
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateProduct(ctx, tn, lamp); err != nil {
			return err
		}
		return tx.CreateProduct(ctx, tn, desk)
	}); err != nil {
		t.Fatal(err)
	}
	price := int64(1999)
	tests := []struct {
		name  string
		first func(tx *store.Tx) error // what the held transaction does before its clock
	}{
		{"clock first", func(tx *store.Tx) error { return nil }},
		{"a read first", func(tx *store.Tx) error {
			_, err := tx.Product(ctx, tn, desk.ID)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held, release = make(chan struct{}), make(chan struct{})
			type seen struct {
				at    time.Time
				price int64
				err   error
			}
			done := make(chan seen, 1)
			armed.Store(true)
			go func() {
				var s seen
				s.err = db.Tx(ctx, func(tx *store.Tx) error {
					if err := tc.first(tx); err != nil {
						return err
					}
					s.at = tx.Now() // held here until the other write committed
					p, err := tx.Product(ctx, tn, lamp.ID)
					if err == nil {
						s.price = p.Prices["USD"]
					}
					return err
				})
				done <- s
			}()
			select {
			case <-held:
			case s := <-done:
				t.Fatalf("the transaction ended without reading its clock: %v", s.err)
			}
			old := price
			price++
			var updated time.Time
			if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
				cur, vs, err := tx.ProductForUpdate(ctx, tn, lamp.ID)
				if err != nil {
					return err
				}
				p := *cur
				p.Prices = schema.Prices{"USD": price}
				err = tx.UpdateProductVariants(ctx, tn, cur, &p, vs)
				updated = p.UpdatedAt
				return err
			}); err != nil {
				t.Fatal(err)
			}
			close(release)
			s := <-done
			if s.err != nil {
				t.Fatal(s.err)
			}
			if !s.at.Before(updated) {
				t.Fatalf("the held transaction's clock %v is not before the write's %v: the test shows nothing", s.at, updated)
			}
			if s.price != old {
				t.Errorf("the transaction dated %v saw the price %d written at %v: its snapshot followed its clock", s.at, s.price, updated)
			}
		})
	}
}
