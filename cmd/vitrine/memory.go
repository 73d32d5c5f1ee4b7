package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
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
//
// gc, when not nil, is the first bootstrap's relaxed collector (relaxGCForBootstrap): it is
// restored before the first forced collection.
func releaseBootstrapMemory(ctx context.Context, rep *replica.Replica, fol *feed.Follower, gc *bootstrapGC, log *slog.Logger) {
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
		gc.restore()
		debug.FreeOSMemory()
		runtime.ReadMemStats(&after)
		log.Info("bootstrap done: returned its transient memory",
			"took", time.Since(t0).Round(time.Millisecond),
			"heap_live_mib", after.HeapAlloc>>20, "released_mib", (after.HeapReleased-min(after.HeapReleased, before.HeapReleased))>>20)
	}
}

// bootstrapGC relaxes the garbage collector while an edge's first bootstrap fills its replica,
// and puts it back once that bootstrap serves.
//
// Nearly everything a bootstrap allocates stays live: it is the replica (entities, maps, the
// search index). With the default GOGC=100 the runtime collects each time the heap doubles, so
// filling a 1 GiB replica takes about nine collections that together mark some twice the final
// heap, nearly all of it live, on the core the bootstrap needs. Until the first bootstrap serves
// (or firstBootstrapGCBound passes), the heap may grow to bootstrapGCPercent% over what the last
// collection left live, about four collections for the same replica, under a soft memory limit:
// three quarters of the memory the process may still take (the smaller of the machine's
// available memory and what its cgroup leaves), or the operator's GOMEMLIMIT when that is lower.
// Measured in `vitrine bench coldstart` (README, "Edges at fleet scale"): an edge of every shard
// from snapshots served in 10.7 s instead of 13.5 s, for a peak RSS of 2.47 instead of 2.28 GiB;
// with collections off altogether it served in 10.5 s but peaked at 3.5 GiB. Once the bootstrap
// serves, releaseBootstrapMemory restores the operator's settings before it forces its
// collection, so the steady state runs exactly as configured.
//
// It is not applied when the operator set GOGC (their choice stands), when no memory figure can
// be read (not Linux), or to re-bootstraps of a serving edge, whose requests allocate garbage
// all along.
type bootstrapGC struct {
	once    sync.Once
	percent int   // the GC percent before
	limit   int64 // the memory limit before
}

// bootstrapGCPercent is the GC percent of a first bootstrap (see bootstrapGC).
const bootstrapGCPercent = 400

// firstBootstrapGCBound is how long the collector stays relaxed when the first bootstrap does
// not serve (the stream unreachable, say): the edge then runs as configured.
const firstBootstrapGCBound = 2 * time.Minute

// relaxGCForBootstrap relaxes the collector, under a soft memory limit, for the first bootstrap
// (see bootstrapGC). It returns nil when it left the collector alone.
func relaxGCForBootstrap(log *slog.Logger) *bootstrapGC {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	avail, ok := memoryAvailable("/")
	if !ok {
		return nil
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := int64(ms.Sys) + avail/4*3
	before := debug.SetMemoryLimit(-1)
	if before < limit {
		limit = before
	}
	g := &bootstrapGC{limit: before}
	debug.SetMemoryLimit(limit)
	g.percent = debug.SetGCPercent(bootstrapGCPercent)
	log.Info("first bootstrap: garbage collection relaxed under a soft memory limit until it serves",
		"gc_percent", bootstrapGCPercent, "memory_limit_mib", limit>>20)
	time.AfterFunc(firstBootstrapGCBound, g.restore)
	return g
}

// restore puts the collector back as it was; only the first call does anything. It is safe on a
// nil bootstrapGC.
func (g *bootstrapGC) restore() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		debug.SetGCPercent(g.percent)
		debug.SetMemoryLimit(g.limit)
	})
}

// memoryAvailable returns how many bytes the process may still take: the machine's available
// memory (MemAvailable), or less when its memory cgroup (v2, or v1) has a limit. root is the
// file system root the proc and sys files are read under ("/" but in tests).
func memoryAvailable(root string) (int64, bool) {
	avail, ok := memInfoAvailable(root)
	if !ok {
		return 0, false
	}
	if left, ok := cgroupMemoryLeft(root); ok && left < avail {
		avail = left
	}
	return avail, true
}

func memInfoAvailable(root string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kb <= 0 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// cgroupMemoryLeft returns the limit of the process's memory cgroup less its usage, when it has
// a limit.
func cgroupMemoryLeft(root string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var maxFile, curFile string
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			dir := filepath.Join(root, "sys/fs/cgroup", parts[2])
			maxFile, curFile = filepath.Join(dir, "memory.max"), filepath.Join(dir, "memory.current")
		case parts[1] == "memory": // v1
			dir := filepath.Join(root, "sys/fs/cgroup/memory", parts[2])
			maxFile, curFile = filepath.Join(dir, "memory.limit_in_bytes"), filepath.Join(dir, "memory.usage_in_bytes")
		default:
			continue
		}
		limit, ok := readBytesFile(maxFile)
		if !ok || limit >= 1<<60 { // "max", or v1's unlimited (just under 2^63)
			continue
		}
		used, _ := readBytesFile(curFile)
		return max(limit-used, 0), true
	}
	return 0, false
}

func readBytesFile(name string) (int64, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
