package origin

import (
	"context"
	"time"

	"vitrine/origin/media"
	"vitrine/origin/subscriptions"
)

// Maintenance intervals and ages.
const (
	maintainEvery = 30 * time.Second
	// pendingOrderAge is how long an order may stay pending_payment before the sweeper voids its
	// authorization and releases its reservation: far longer than any checkout request.
	pendingOrderAge = 15 * time.Minute
	// throttleKeep outlives two of the longest throttle window (an hour): the sliding limit reads
	// the previous window as well as the current one.
	throttleKeep = 3 * time.Hour
	// statsEvery spaces social-proof refreshes: each aggregates a tenant's last 30 days of orders.
	statsEvery = 5 * time.Minute
	// mediaSweepEvery spaces sweeps of media blobs left by failed uploads (each walks the blob
	// store's media/ names).
	mediaSweepEvery = 15 * time.Minute
)

// Maintain runs the origin's housekeeping until ctx ends: expired carts, checkouts abandoned
// between reserving and settling, subscription renewals, forgotten idempotency keys, old
// throttle windows, the social-proof statistics (replicated only where a value changed), and,
// every mediaSweepEvery, the media blobs and claims failed uploads and deletions left behind.
// Every step is idempotent and bounded per round, so several origins may run it at once.
func (s *Server) Maintain(ctx context.Context) error {
	t := time.NewTicker(maintainEvery)
	defer t.Stop()
	var lastStats, lastSweep time.Time
	for {
		s.maintainOnce(ctx)
		if time.Since(lastSweep) >= mediaSweepEvery {
			if n, err := s.media.Sweep(ctx, time.Now(), media.SweepAge); err != nil {
				s.log.Warn("maintenance: media sweep", "err", err)
			} else if n != (media.Swept{}) {
				s.log.Info("maintenance: removed media files of failed uploads and deletions", "claims", n.Claims, "orphans", n.Orphans)
			}
			lastSweep = time.Now()
		}
		if time.Since(lastStats) >= statsEvery {
			if _, err := s.RefreshStats(ctx); err != nil {
				s.log.Warn("maintenance: social proof", "err", err)
			}
			lastStats = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Server) maintainOnce(ctx context.Context) {
	if n, err := s.fulfil.Requeue(ctx, 30*time.Second); err != nil {
		s.log.Warn("maintenance: label batches", "err", err)
	} else if n > 0 {
		s.log.Info("maintenance: queued label batch orders again", "count", n)
	}
	if n, err := s.db.DeleteExpiredCarts(ctx, 1000); err != nil {
		s.log.Warn("maintenance: expired carts", "err", err)
	} else if n > 0 {
		s.log.Info("maintenance: deleted expired carts", "count", n)
	}
	if n, err := s.SweepPendingOrders(ctx, pendingOrderAge); err != nil {
		s.log.Warn("maintenance: pending orders", "err", err)
	} else if n > 0 {
		s.log.Warn("maintenance: cancelled abandoned checkouts and released their reservations", "count", n)
	}
	if st, err := s.RenewSubscriptions(ctx, time.Now()); err != nil {
		s.log.Warn("maintenance: subscription renewals", "err", err)
	} else if st != (subscriptions.Stats{}) {
		s.log.Info("maintenance: subscription renewals", "renewed", st.Renewed, "declined", st.Declined, "cancelled", st.Cancelled, "waiting", st.Waiting)
	}
	if _, err := s.db.DeleteExpiredIdempotencyKeys(ctx, 1000); err != nil {
		s.log.Warn("maintenance: idempotency keys", "err", err)
	}
	if err := s.db.DeleteOldThrottles(ctx, time.Now().Add(-throttleKeep)); err != nil {
		s.log.Warn("maintenance: throttles", "err", err)
	}
	if _, err := s.agents.Sweep(ctx, time.Now()); err != nil {
		s.log.Warn("maintenance: agent sessions", "err", err)
	}
}

// RenewSubscriptions renews the subscriptions due at now, retries declined renewals and cancels
// those past their last retry (origin/subscriptions). Maintenance passes the clock; a test may
// pass a later time. Several origins may run it at once: no period is renewed twice.
func (s *Server) RenewSubscriptions(ctx context.Context, now time.Time) (subscriptions.Stats, error) {
	return s.subs.Renew(ctx, now)
}
