package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/sync/relay"
)

// The event outbox is read on its own cadence (Config.EventEvery): writes that wake the relay
// within it have their events read together, in a round that comes when they are due even if
// nothing else wakes the relay (no polling here), and every event is published.
func TestEventsOnTheirOwnCadence(t *testing.T) {
	const every = 400 * time.Millisecond // the writes below commit well within it, even under -race
	ctx := context.Background()
	writer, rl, c := wokenRelay(t, store.Config{GenericPlans: true},
		relay.Config{Poll: time.Hour, LeaseTTL: time.Minute, EventEvery: every})

	tn := storetest.Tenant(t, writer, "shop")
	create := func(slug string) {
		t.Helper()
		if _, err := writer.WriteTx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, product(slug)) }); err != nil {
			t.Fatal(err)
		}
	}
	create("first")
	waitFor(t, "the first write's event", func() bool { return rl.Stats().Events >= 1 })
	time.Sleep(every) // any other event of the store's creation is out too
	published, events := rl.Stats().Published, rl.Stats().Events
	c.Reset()
	began := time.Now()
	const n = 5
	for i := range n {
		create("next-" + string(rune('a'+i)))
	}
	wrote := time.Now()
	waitFor(t, "the writes", func() bool { return rl.Stats().Published >= published+n })
	waitFor(t, "their events", func() bool { return rl.Stats().Events >= events+n })
	took := time.Since(began)
	if late := time.Since(wrote); late > 3*every {
		t.Errorf("the events took %v after the last write to publish with no wake-up; due within %v", late, every)
	}
	reads := 0
	for _, s := range c.Texts() {
		if strings.Contains(s, "FROM event_outbox") {
			reads++
		}
	}
	// At most one read per EventEvery, one at the window's start (the cadence of the reads
	// before it) and one for the events the last read left: at most three when the writes commit
	// within one period, as they do on an idle machine, and a read per write (five) without the
	// cadence; a loaded machine (make test beside other packages) can stretch them over more
	// periods.
	if want := 3 + int(took/every); reads > want {
		t.Errorf("the event outbox was read %d times for %d writes woken within %v; want at most %d", reads, n, took, want)
	}
}

// A relay that was early for the events and then cannot publish (its lease taken) waits for a
// wake-up or a poll: it does not come back for the events it can no longer read, round after
// round.
func TestNoEventRoundsWithoutTheLease(t *testing.T) {
	ctx := context.Background()
	writer, rl, c := wokenRelay(t, store.Config{}, relay.Config{Poll: time.Hour, LeaseTTL: time.Second, EventEvery: 200 * time.Millisecond})
	tn := storetest.Tenant(t, writer, "shop")
	for _, slug := range []string{"first", "second"} { // the second's round is early for its event
		if _, err := writer.WriteTx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, product(slug)) }); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the writes", func() bool { return rl.Stats().Published >= 2 })
	if _, err := writer.TakeLease(ctx, "relay", "another", time.Hour); err != nil {
		t.Fatal(err)
	}
	// A round notices the lease gone at its renewal. With an hour's poll, only a wake-up or the
	// events' due time brings a round, and the writes' rounds may have read the events already.
	waitFor(t, "the relay to see its lease gone", func() bool { rl.Wake(); return !rl.Stats().LeaseHeld })
	time.Sleep(300 * time.Millisecond) // past the events' due time
	c.Reset()
	time.Sleep(500 * time.Millisecond)
	if trips, _ := c.Counts(); trips > 5 {
		t.Errorf("a relay without its lease sent %d round trips in 500 ms with nothing to wake it", trips)
	}
}
