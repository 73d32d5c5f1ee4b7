package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
)

// Config.OnTx is told every transaction's duration, whatever its outcome; PoolStats reports the
// pool the transactions used.
func TestTransactionDurationsAndPoolStats(t *testing.T) {
	var mu sync.Mutex
	var got []time.Duration
	db, _ := storetest.Open(t, store.Config{OnTx: func(d time.Duration) { mu.Lock(); got = append(got, d); mu.Unlock() }})
	mu.Lock()
	got = nil // migrations and setup ran transactions of their own
	mu.Unlock()
	ctx := context.Background()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		fn      func(tx *store.Tx) error
		wantErr error
	}{
		{"committed", func(tx *store.Tx) error { time.Sleep(2 * time.Millisecond); return nil }, nil},
		{"rolled back", func(tx *store.Tx) error { return boom }, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			if err := db.Tx(ctx, tc.fn); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Tx: %v, want %v", err, tc.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] <= 0 {
				t.Fatalf("OnTx saw %v, want one positive duration", got)
			}
		})
	}
	st := db.PoolStats()
	if st.Max <= 0 || st.Total < 1 || st.Acquires < 2 || st.Acquired != 0 || st.Idle < 1 {
		t.Fatalf("pool stats after two transactions: %+v", st)
	}
}
