package replica

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"vitrine/schema"
)

// heardTimes records when the state stream was last heard from: per shard, the last message
// delivered on one of the shard's subjects; for every shard at once, the last time the stream
// confirmed that nothing published was pending (a checkpoint, or the follower's periodic
// consumer check while the stream is idle). Writers are the follower's goroutines; readers are
// requests, metrics and /readyz. Times are Unix nanoseconds; 0 is never.
type heardTimes struct {
	born     int64        // the replica's creation: staleness counts from it until the stream is heard
	all      atomic.Int64 // every shard
	platform atomic.Int64 // the tenant registry's subjects
	mu       sync.Mutex   // serialises adding a shard to shards
	shards   atomic.Pointer[map[int]*atomic.Int64]
}

func (h *heardTimes) init(now time.Time) {
	h.born = now.UnixNano()
	h.shards.Store(&map[int]*atomic.Int64{})
}

// Heard records that the stream was heard from at time at (feed.Heartbeats): for shard (a shard
// number, or schema.PlatformLog for the registry), or for every shard when shard is "". Safe for
// concurrent use; it does not allocate once a shard has been heard from.
func (r *Replica) Heard(shard string, at time.Time) {
	h, ns := &r.heard, at.UnixNano()
	switch shard {
	case "":
		h.all.Store(ns)
		return
	case schema.PlatformLog:
		h.platform.Store(ns)
		return
	}
	n, err := strconv.Atoi(shard)
	if err != nil {
		return
	}
	if a := (*h.shards.Load())[n]; a != nil {
		a.Store(ns)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	m := *h.shards.Load()
	if a := m[n]; a != nil {
		a.Store(ns)
		return
	}
	next := maps.Clone(m)
	a := new(atomic.Int64)
	a.Store(ns)
	next[n] = a
	h.shards.Store(&next)
}

// Staleness returns how long the replica has not heard from the stream about shard: the time
// since the later of the shard's last message and the stream's last "nothing pending"
// confirmation (since the replica's creation when neither happened). It does not allocate.
func (r *Replica) Staleness(shard int, now time.Time) time.Duration {
	var last int64
	if a := (*r.heard.shards.Load())[shard]; a != nil {
		last = a.Load()
	}
	return r.heard.since(last, now)
}

func (h *heardTimes) since(last int64, now time.Time) time.Duration {
	last = max(last, h.all.Load())
	if last == 0 {
		last = h.born
	}
	return max(0, time.Duration(now.UnixNano()-last))
}

// ShardStaleness is the staleness of one shard's replicated state.
type ShardStaleness struct {
	// Shard is the shard number, or schema.PlatformLog for the tenant registry.
	Shard     string
	Staleness time.Duration
}

// StalenessByShard returns the staleness of the registry and of every shard the replica serves
// or has heard from: its configured shards, the shards of its tenants, and the shards of
// messages it received; the registry first, then shards in order.
func (r *Replica) StalenessByShard(now time.Time) []ShardStaleness {
	var nums []int
	nums = append(nums, r.cfg.Shards...)
	for n := range *r.heard.shards.Load() {
		nums = append(nums, n)
	}
	for _, t := range r.Tenants() {
		if info := t.Info(); info != nil {
			nums = append(nums, info.Shard)
		}
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	out := make([]ShardStaleness, 0, len(nums)+1)
	out = append(out, ShardStaleness{Shard: schema.PlatformLog, Staleness: r.heard.since(r.heard.platform.Load(), now)})
	for _, n := range nums {
		out = append(out, ShardStaleness{Shard: strconv.Itoa(n), Staleness: r.Staleness(n, now)})
	}
	return out
}
