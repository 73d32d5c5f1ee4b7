package replica_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

func TestResetSameEpoch(t *testing.T) {
	s := newSite(t, replica.Config{PlatformDomain: "example.test"})
	old := s.bootstrap("e")
	oldSnap := old.Snapshot()

	s.r.Reset("e")
	if got := s.r.Lookup([]byte("shop.example.test"), nil); got != old {
		t.Fatalf("Lookup after a same-epoch Reset = %v, want the old tenant still serving", got)
	}
	if !s.r.Ready() {
		t.Fatalf("Ready() = false after a same-epoch Reset, want the old state still ready")
	}
	if got := old.Retired.Load(); got != 0 {
		t.Fatalf("old Retired = %d during the re-bootstrap, want 0", got)
	}

	// The new bootstrap carries the current state: product 10 renamed.
	s2 := newSite(t, replica.Config{})
	reg := s2.register(tenantEntry("shop", 1, schema.TenantActive, "shop.example.com"))
	seed := s2.seedShop("shop")
	for _, c := range seed {
		if c.Kind == schema.KindProduct && c.ID == "10" {
			p := *oldSnap.Product(10, replica.Public)
			p.Title = "rebuilt"
			*c = *chg("shop", schema.KindProduct, "10", schema.Pub, &p, c.Version)
		}
	}
	feed(s.r, reg, seed)
	if got := s.r.Lookup(nil, []byte("shop")); got != old {
		t.Fatalf("Lookup before the new bootstrap's checkpoint = %v, want the old tenant", got)
	}
	if got := old.Snapshot().Product(10, replica.Public).Title; got != "Product alpha" {
		t.Fatalf("old tenant shows %q before the new bootstrap's checkpoint, want %q", got, "Product alpha")
	}
	s.r.Checkpoint()
	nt := s.r.Lookup(nil, []byte("shop"))
	if nt == nil || nt == old {
		t.Fatalf("Lookup after the new bootstrap's checkpoint = %v, want a new tenant object", nt)
	}
	if got := old.Retired.Load(); got != 1 {
		t.Fatalf("old Retired = %d after the new bootstrap's checkpoint, want 1", got)
	}
	if got := nt.Retired.Load(); got != 0 {
		t.Fatalf("new Retired = %d, want 0", got)
	}
	if got := nt.Snapshot().Product(10, replica.Public).Title; got != "rebuilt" {
		t.Fatalf("new tenant product 10 title = %q, want %q", got, "rebuilt")
	}
	if !nt.Ready() || !s.r.Ready() || s.r.Epoch() != "e" {
		t.Fatalf("after the re-bootstrap: tenant ready=%v replica ready=%v epoch=%q, want true, true, e", nt.Ready(), s.r.Ready(), s.r.Epoch())
	}
	if got := s.r.Lookup([]byte("shop.example.com"), nil); got != nt {
		t.Fatalf("Lookup by custom domain = %v, want the new tenant", got)
	}
}

func TestResetSameEpochTwice(t *testing.T) {
	s := newSite(t, replica.Config{})
	old := s.bootstrap("e")
	s.r.Reset("e")
	s2 := newSite(t, replica.Config{})
	feed(s.r, s2.register(tenantEntry("shop", 1, schema.TenantActive)))
	// The re-bootstrap restarts before it completes: the abandoned generation is never served.
	s.r.Reset("e")
	if got := s.r.Lookup(nil, []byte("shop")); got != old {
		t.Fatalf("Lookup after a second same-epoch Reset = %v, want the old tenant", got)
	}
	s3 := newSite(t, replica.Config{})
	feed(s.r, s3.register(tenantEntry("shop", 1, schema.TenantActive)), s3.seedShop("shop"))
	s.r.Checkpoint()
	nt := s.r.Lookup(nil, []byte("shop"))
	if nt == nil || nt == old || !nt.Ready() || old.Retired.Load() != 1 {
		t.Fatalf("after the completed re-bootstrap: tenant %v ready=%v, old retired=%d; want a new ready tenant and the old retired",
			nt, nt != nil && nt.Ready(), old.Retired.Load())
	}
	if !s.r.Ready() {
		t.Fatalf("Ready() = false after the completed re-bootstrap, want true")
	}
}

func TestResetBeforeFirstCheckpointDropsState(t *testing.T) {
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.register(tenantEntry("shop", 1, schema.TenantActive)), s.seedShop("shop"))
	old := s.r.Lookup(nil, []byte("shop"))
	if old == nil {
		t.Fatalf("Lookup(shop) = nil after its registry head, want the tenant")
	}
	s.r.Reset("e") // same epoch, but the current state never completed a bootstrap
	if got := s.r.Lookup(nil, []byte("shop")); got != nil {
		t.Fatalf("Lookup after Reset of an unfinished bootstrap = %v, want nil", got)
	}
	if got := old.Retired.Load(); got != 1 {
		t.Fatalf("old Retired = %d, want 1", got)
	}
}

func TestResetOtherEpoch(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("during re-bootstrap=%v", during), func(t *testing.T) {
			s := newSite(t, replica.Config{PlatformDomain: "example.test"})
			old := s.bootstrap("e")
			if during {
				s.r.Reset("e")
				s2 := newSite(t, replica.Config{})
				feed(s.r, s2.register(tenantEntry("shop", 1, schema.TenantActive)))
			}
			s.r.Reset("f")
			if got := s.r.Lookup(nil, []byte("shop")); got != nil {
				t.Fatalf("Lookup after a Reset to another epoch = %v, want nil", got)
			}
			if got := s.r.Lookup([]byte("shop.example.test"), nil); got != nil {
				t.Fatalf("Lookup by host after a Reset to another epoch = %v, want nil", got)
			}
			if s.r.Ready() {
				t.Fatalf("Ready() = true after a Reset to another epoch, want false")
			}
			if got := old.Retired.Load(); got != 1 {
				t.Fatalf("old Retired = %d, want 1", got)
			}
			if got := s.r.Epoch(); got != "f" {
				t.Fatalf("Epoch() = %q, want f", got)
			}
			if got := len(s.r.Tenants()); got != 0 {
				t.Fatalf("len(Tenants()) = %d after a Reset to another epoch, want 0", got)
			}

			s3 := newSite(t, replica.Config{})
			feed(s.r, s3.register(tenantEntry("shop", 1, schema.TenantActive)))
			nt := s.r.Lookup(nil, []byte("shop"))
			if nt == nil || nt == old || nt.Ready() {
				t.Fatalf("after the new registry head: %v (ready %v), want a new, not ready tenant", nt, nt != nil && nt.Ready())
			}
			feed(s.r, s3.seedShop("shop"))
			if !nt.Ready() || nt.Snapshot().ProductCount() != 3 {
				t.Fatalf("after the new tenant head: ready=%v products=%d, want true, 3", nt.Ready(), nt.Snapshot().ProductCount())
			}
			if s.r.Ready() {
				t.Fatalf("Ready() = true before the new bootstrap's checkpoint, want false")
			}
			s.r.Checkpoint()
			if !s.r.Ready() {
				t.Fatalf("Ready() = false after the new bootstrap's checkpoint, want true")
			}
		})
	}
}

func TestWaitFor(t *testing.T) {
	t.Run("reached", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		start := time.Now()
		for _, v := range []int64{0, 1, tn.Version()} {
			if !tn.WaitFor(v, time.Minute) {
				t.Fatalf("WaitFor(%d) = false at version %d, want true", v, tn.Version())
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("WaitFor of a reached version took %v, want immediate", d)
		}
	})
	t.Run("blocks until a head advances the version", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		w := s.log("shop")
		target := w.version + 2
		done := make(chan bool, 1)
		go func() { done <- tn.WaitFor(target, 10*time.Second) }()
		time.Sleep(20 * time.Millisecond)
		select {
		case got := <-done:
			t.Fatalf("WaitFor(%d) returned %v at version %d, want it to block", target, got, tn.Version())
		default:
		}
		tx := w.begin()
		tx.putProduct(nil, product(13, "delta", t0))
		tx.putProduct(nil, product(14, "epsilon", t0))
		batch := tx.commit()
		feed(s.r, body(batch)) // buffered changes do not satisfy a waiter
		select {
		case got := <-done:
			t.Fatalf("WaitFor(%d) returned %v before the head", target, got)
		case <-time.After(20 * time.Millisecond):
		}
		feed(s.r, batch[len(batch)-1:])
		select {
		case got := <-done:
			if !got {
				t.Fatalf("WaitFor(%d) = false after the head, want true", target)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("WaitFor(%d) still blocked after the head brought version %d", target, tn.Version())
		}
		if tn.Snapshot().ProductBySlug("epsilon") == nil {
			t.Fatalf("WaitFor returned true but the snapshot lacks the batch")
		}
	})
	t.Run("a checkpoint does not advance the version past the last head", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		w := s.log("shop")
		tx := w.begin()
		tx.putProduct(nil, product(13, "delta", t0))
		batch := tx.commit()
		feed(s.r, body(batch))
		s.r.Checkpoint()
		if tn.WaitFor(w.version, 20*time.Millisecond) {
			t.Fatalf("WaitFor(%d) = true with the batch in flight", w.version)
		}
		done := make(chan bool, 1)
		go func() { done <- tn.WaitFor(w.version, 10*time.Second) }()
		feed(s.r, batch[len(batch)-1:])
		if got := <-done; !got {
			t.Fatalf("WaitFor(%d) = false after the head, want true", w.version)
		}
	})
	t.Run("times out", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		const timeout = 30 * time.Millisecond
		start := time.Now()
		if tn.WaitFor(tn.Version()+100, timeout) {
			t.Fatalf("WaitFor of an unreached version = true, want false")
		}
		if d := time.Since(start); d < timeout {
			t.Fatalf("WaitFor returned after %v, want at least the %v timeout", d, timeout)
		}
	})
	t.Run("many waiters", func(t *testing.T) {
		s := newSite(t, replica.Config{})
		tn := s.bootstrap("e")
		w := s.log("shop")
		base := w.version
		var wg sync.WaitGroup
		results := make(chan bool, 16)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- tn.WaitFor(base+int64(1+i%3), 10*time.Second)
			}()
		}
		for i := 0; i < 3; i++ {
			tx := w.begin()
			tx.putProduct(nil, product(int64(40+i), fmt.Sprintf("w-%d", i), t0))
			feed(s.r, tx.commit())
		}
		wg.Wait()
		close(results)
		for got := range results {
			if !got {
				t.Fatalf("a waiter returned false after its version was reached")
			}
		}
	})
}

// TestWaitForWakesOnRetirement waits on a tenant object that a Reset replaces. The retired object
// can never advance again (its log is followed by the new generation), and retire() documents
// that "waiters wake": WaitFor should return (false) promptly instead of sleeping out its timeout.
// Today a request held by the edge's waitFloor or forward (edge/server.go) on a tenant replaced
// by a re-bootstrap waits the full FloorWait/WriteWait and then answers "behind".
func TestWaitForWakesOnRetirement(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	done := make(chan bool, 1)
	go func() { done <- tn.WaitFor(tn.Version()+1, 10*time.Second) }()
	time.Sleep(20 * time.Millisecond)
	s.r.Reset("other-epoch")
	if tn.Retired.Load() != 1 {
		t.Fatalf("Retired = %d after a Reset to another epoch, want 1", tn.Retired.Load())
	}
	select {
	case got := <-done:
		if got {
			t.Fatalf("WaitFor on a retired tenant = true, want false")
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("WaitFor on a retired tenant still blocked 2s after the retirement, want a prompt return")
	}
}
