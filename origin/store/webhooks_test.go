package store_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
)

// The dispatcher reads a store's enabled endpoints, then queues the event's deliveries in a
// second statement; an endpoint disabled (or deleted) in between must not be left with a pending
// delivery, since disabling cancelled the pending ones before it was queued. Rounds race the two.
func TestDeliveriesNeverQueuedAtADisabledEndpoint(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{MaxConns: 8})
	tn := storetest.Tenant(t, db, "hooks")
	const rounds = 60
	for round := range rounds {
		e := &store.WebhookEndpoint{URL: "https://example.test/hook", Secret: []byte("s"), Enabled: true}
		if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateWebhookEndpoint(ctx, tn, e) }); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var addErr, disableErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, addErr = db.AddDeliveries(ctx, []*store.WebhookDelivery{{TenantID: tn.ID, EndpointID: e.ID, EventID: store.NewUUID(),
				Kind: "product.created", Source: store.SourceEvent, Payload: []byte(`{}`)}}, time.Now())
		}()
		go func() {
			defer wg.Done()
			disableErr = db.Tx(ctx, func(tx *store.Tx) error {
				cur, err := tx.WebhookEndpointByID(ctx, tn, e.ID, true)
				if err != nil {
					return err
				}
				cur.Enabled = false
				return tx.UpdateWebhookEndpoint(ctx, tn, cur)
			})
		}()
		wg.Wait()
		if addErr != nil || disableErr != nil {
			t.Fatalf("round %d: add %v, disable %v", round, addErr, disableErr)
		}
		pending, err := store.TxValue(ctx, db, func(tx *store.Tx) (int, error) {
			_, n, err := tx.WebhookDeliveries(ctx, tn, store.DeliveryFilter{EndpointID: e.ID, State: store.DeliveryPending, Limit: 10})
			return n, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if pending != 0 {
			t.Fatalf("round %d: %d deliveries pending at a disabled endpoint", round, pending)
		}
	}
}

// PruneWebhookLog removes finished deliveries (delivered, failed, cancelled) created before the
// horizon, with their attempts, and keeps every pending one with its attempts, whatever its age.
func TestPruneWebhookLogKeepsPending(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{MaxConns: 4})
	tn := storetest.Tenant(t, db, "prune")
	endpoint := func() *store.WebhookEndpoint {
		e := &store.WebhookEndpoint{URL: "https://example.test/hook", Secret: []byte("s"), Enabled: true}
		if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateWebhookEndpoint(ctx, tn, e) }); err != nil {
			t.Fatal(err)
		}
		return e
	}
	live, gone := endpoint(), endpoint()
	start := time.Now()
	queue := func(e *store.WebhookEndpoint, n int) {
		ds := make([]*store.WebhookDelivery, n)
		for i := range ds {
			ds[i] = &store.WebhookDelivery{TenantID: tn.ID, EndpointID: e.ID, EventID: store.NewUUID(),
				Kind: "product.created", Source: store.SourceEvent, Payload: []byte(`{}`)}
		}
		if _, err := db.AddDeliveries(ctx, ds, start); err != nil {
			t.Fatal(err)
		}
	}
	// live: three attempted (left pending, delivered, failed) and one never attempted.
	queue(live, 3)
	claimed, err := db.ClaimDeliveries(ctx, start, time.Minute, 10, 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claimed %d (%v), want 3", len(claimed), err)
	}
	outcomes := []store.AttemptOutcome{
		{State: store.DeliveryPending, RetryAt: start.Add(time.Hour)},
		{State: store.DeliveryDelivered, Succeeded: true},
		{State: store.DeliveryFailed},
	}
	for i, c := range claimed {
		a := &store.WebhookAttempt{Attempt: 1, StartedAt: start, ResponseStatus: 500}
		if outcomes[i].Succeeded {
			a.ResponseStatus = 200
		}
		if held, _, err := db.RecordAttempt(ctx, c, a, outcomes[i], start); err != nil || !held {
			t.Fatalf("record attempt %d: held %v, %v", i, held, err)
		}
	}
	queue(live, 1)
	// gone: one delivery, cancelled when the endpoint is disabled.
	queue(gone, 1)
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		cur, err := tx.WebhookEndpointByID(ctx, tn, gone.ID, true)
		if err != nil {
			return err
		}
		cur.Enabled = false
		return tx.UpdateWebhookEndpoint(ctx, tn, cur)
	}); err != nil {
		t.Fatal(err)
	}

	type state struct {
		states   map[string]int
		attempts int
	}
	read := func() state {
		st, err := store.TxValue(ctx, db, func(tx *store.Tx) (state, error) {
			st := state{states: map[string]int{}}
			for _, e := range []*store.WebhookEndpoint{live, gone} {
				ds, _, err := tx.WebhookDeliveries(ctx, tn, store.DeliveryFilter{EndpointID: e.ID, Limit: 100})
				if err != nil {
					return st, err
				}
				ids := make([]string, len(ds))
				for i, d := range ds {
					st.states[d.State]++
					ids[i] = d.ID
				}
				log, err := tx.WebhookAttempts(ctx, tn, ids)
				if err != nil {
					return st, err
				}
				for _, as := range log {
					st.attempts += len(as)
				}
			}
			return st, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	before := read()
	if want := map[string]int{"pending": 2, "delivered": 1, "failed": 1, "cancelled": 1}; !maps.Equal(before.states, want) || before.attempts != 3 {
		t.Fatalf("before pruning: %v and %d attempts, want %v and 3", before.states, before.attempts, want)
	}
	// A horizon before every delivery prunes nothing.
	if n, err := db.PruneWebhookLog(ctx, start.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v) before the horizon, want 0", n, err)
	}
	if n, err := db.PruneWebhookLog(ctx, time.Now().Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("pruned %d (%v), want the 3 finished deliveries", n, err)
	}
	after := read()
	if want := map[string]int{"pending": 2}; !maps.Equal(after.states, want) || after.attempts != 1 {
		t.Fatalf("after pruning: %v and %d attempts, want %v and the pending one's 1", after.states, after.attempts, want)
	}
}
