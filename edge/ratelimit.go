package edge

import (
	"net/netip"
	"sync"
	"time"

	"vitrine/edge/pipeline"
)

// limiter is a token bucket per client address (an IPv6 client's /64: pipeline.LimitKey) and
// tenant: each address may spend a tenant's limit of requests per minute on that tenant,
// refilled continuously, with a burst of the limit; its use of one store does not count against
// another. It is sharded to keep lock contention
// low, and bounded: it tracks at most maxKeys buckets, forgetting idle ones.
type limiter struct {
	shards [64]limiterShard
	maxPer int
}

type limiterShard struct {
	mu      sync.Mutex
	buckets map[limitKey]*bucket
}

// limitKey names a bucket. The tenant slug is the replica's own string: no allocation.
type limitKey struct {
	addr   [16]byte
	tenant string
}

type bucket struct {
	tokens float64
	last   int64 // unix nanoseconds of the last refill
}

func newLimiter(maxKeys int) *limiter {
	l := &limiter{maxPer: max(maxKeys/64, 16)}
	for i := range l.shards {
		l.shards[i].buckets = map[limitKey]*bucket{}
	}
	return l
}

// allow spends one token of the bucket of addr at tenant, whose limit is perMinute, at now. It
// returns whether the request may proceed, the tokens left, and the seconds until a token is
// available when it may not (else until the bucket is full again). A new bucket is allocated
// once; after that allow does not allocate.
func (l *limiter) allow(addr netip.Addr, tenant string, perMinute int, now int64) (ok bool, remaining int, reset int) {
	// An IPv6 client counts by its /64 (one subscriber's network), an IPv4 one by its address.
	key := limitKey{addr: pipeline.LimitKey(addr).As16(), tenant: tenant}
	limit := float64(perMinute)
	h := uint32(2166136261)
	for _, b := range key.addr {
		h = (h ^ uint32(b)) * 16777619
	}
	for i := 0; i < len(tenant); i++ {
		h = (h ^ uint32(tenant[i])) * 16777619
	}
	s := &l.shards[h%uint32(len(l.shards))]
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil {
		if len(s.buckets) >= l.maxPer {
			l.evict(s, now)
		}
		b = &bucket{tokens: limit, last: now}
		s.buckets[key] = b
	}
	elapsed := float64(now-b.last) / float64(time.Minute)
	b.tokens = min(limit, b.tokens+elapsed*limit)
	b.last = now
	if b.tokens < 1 {
		wait := (1 - b.tokens) / limit * 60
		return false, 0, int(wait) + 1
	}
	b.tokens--
	return true, int(b.tokens), int((limit - b.tokens) / limit * 60)
}

// evict forgets the buckets of idle addresses (a full minute without requests: their bucket
// has refilled, so forgetting them changes nothing) and, if the shard is still full, an arbitrary
// half of the rest, so that the limiter never grows past its bound.
func (l *limiter) evict(s *limiterShard, now int64) {
	for k, b := range s.buckets {
		if now-b.last > int64(time.Minute) {
			delete(s.buckets, k)
		}
	}
	for k := range s.buckets {
		if len(s.buckets) < l.maxPer/2 {
			break
		}
		delete(s.buckets, k)
	}
}
