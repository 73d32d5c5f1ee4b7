package snapshot

import (
	"context"
	"time"
)

// DefaultCPUShare is WriterConfig.CPUShare's default: a pass runs at most a quarter of the time.
const DefaultCPUShare = 0.25

// paceSlice is the longest a pass runs between two rests: what a relay goroutine waiting for the
// processor behind it may wait (Go preempts a goroutine only after 10 ms).
const paceSlice = 2 * time.Millisecond

// pacer keeps a pass, background work, to a share of the time: at each of the pass's steps
// (yield) that comes after a slice of running, it rests long enough for the run to be that share
// of the run and the rest. A snapshot pass runs beside the relay, in its process and often on its
// core, and is CPU-bound for as long as a shard takes to read, load and encode (~0.5 s for a
// shard of 10,000 products on a 2-core machine); unpaced, it delayed every write published
// meanwhile by up to the whole pass (README, "fifth pass"). The pass then takes 1/share as long,
// which nothing waits for. It rests only while busy (when set) reports the foreground work
// running: spread over four times as long beside an idle relay, a pass only took a share of
// the core from edges on it for longer. A nil pacer, or a share of 1 or more, never rests.
type pacer struct {
	share float64
	busy  func() bool
	began time.Time // of the current run
}

// newPacer returns a pacer for one pass, or nil when share does not limit it.
func newPacer(share float64, busy func() bool) *pacer {
	if share <= 0 || share >= 1 {
		return nil
	}
	return &pacer{share: share, busy: busy, began: time.Now()}
}

// yield rests when the pass has run a slice since its last rest; it returns ctx's error if ctx
// ends meanwhile.
func (p *pacer) yield(ctx context.Context) error {
	if p == nil {
		return nil
	}
	ran := time.Since(p.began)
	if ran < paceSlice {
		return nil
	}
	if p.busy != nil && !p.busy() {
		p.began = time.Now() // a run begins when the foreground work does
		return nil
	}
	t := time.NewTimer(time.Duration(float64(ran) * (1 - p.share) / p.share))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	p.began = time.Now()
	return nil
}
