package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"vitrine/edge/replica"
	"vitrine/sync/feed"
)

// releaseBootstrapMemory returns a bootstrap's transient memory to the operating system once it
// is done. A bootstrap decodes and applies the whole of its shards at once (snapshot buffers,
// decoded batches, every intermediate state of the index): the heap peaks at several times what
// stays live, and the runtime keeps those pages mapped, returning them only slowly, so an edge's
// resident memory long after its start would be the bootstrap's peak rather than its replica.
// After every bootstrap (the follower's Resets moved) whose state serves (the replica is ready
// and nothing is pending), it forces one collection and returns the free pages
// (debug.FreeOSMemory): one pause of a few tens of milliseconds per bootstrap, none in steady
// state.
func releaseBootstrapMemory(ctx context.Context, rep *replica.Replica, fol *feed.Follower, log *slog.Logger) {
	var released uint64
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := fol.Stats()
		if st.Resets == released || !rep.Ready() || st.Pending != 0 {
			continue
		}
		released = st.Resets
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		debug.FreeOSMemory()
		runtime.ReadMemStats(&after)
		log.Info("bootstrap done: returned its transient memory",
			"took", time.Since(t0).Round(time.Millisecond),
			"heap_live_mib", after.HeapAlloc>>20, "released_mib", (after.HeapReleased-min(after.HeapReleased, before.HeapReleased))>>20)
	}
}
