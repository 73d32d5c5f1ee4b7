package store_test

import (
	"context"
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
