package relay_test

import (
	"testing"
	"time"

	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// With Linger, a write reaching an idle relay is published at once, and the writes committed
// while a busy relay lingers after a round share the next round's publish; each version
// still reaches the replica.
func TestLingerBatchesABusyRelaysWrites(t *testing.T) {
	const linger = time.Second // long enough for the five writes below to commit within it under -race
	r := newRig(t, relay.Config{Linger: linger, Poll: time.Hour})
	tn := storetest.Tenant(t, r.db, "shop")
	waitFor(t, "the tenant's first publication", func() bool { return r.rep.TenantBySlug("shop") != nil })
	time.Sleep(linger + 200*time.Millisecond) // idle: the linger after the last round is over

	before := r.relay.Stats()
	began := time.Now()
	v := r.write(t, tn, "first", schema.ProductActive)
	waitFor(t, "the first write", func() bool { return r.rep.TenantBySlug("shop").Version() >= v })
	if took := time.Since(began); took >= linger {
		t.Errorf("a write to an idle relay took %v to replicate: it waited for the linger (%v)", took, linger)
	}
	// The relay is lingering after the round that published the first write: these five wake it,
	// and wait for the rest of the linger together.
	for i := range 5 {
		v = r.write(t, tn, "next-"+string(rune('a'+i)), schema.ProductActive)
	}
	waitFor(t, "the five writes", func() bool { return r.rep.TenantBySlug("shop").Version() >= v })
	// The replica can apply a head before the relay, past the acknowledgement, counts it.
	waitFor(t, "the relay to count the six changes", func() bool { return r.relay.Stats().Published >= before.Published+6 })
	after := r.relay.Stats()
	if got := after.Published - before.Published; got != 6 {
		t.Errorf("published %d changes, want 6", got)
	}
	if got := after.Batches - before.Batches; got != 2 {
		t.Errorf("published the 6 writes in %d batches, want 2 (the first at once, the five together)", got)
	}
}
