package edge

import (
	"net"
	"sync"
	"time"
)

// limiter is a per-IP token bucket: each address may spend Limit requests per minute, refilled
// continuously, with a burst of Limit. It is sharded to keep lock contention low, and bounded: it
// tracks at most maxKeys addresses, forgetting idle ones.
type limiter struct {
	perMinute float64
	shards    [64]limiterShard
	maxPer    int
}

type limiterShard struct {
	mu      sync.Mutex
	buckets map[[16]byte]*bucket
}

type bucket struct {
	tokens float64
	last   int64 // unix nanoseconds of the last refill
}

func newLimiter(perMinute int, maxKeys int) *limiter {
	l := &limiter{perMinute: float64(perMinute), maxPer: max(maxKeys/64, 16)}
	for i := range l.shards {
		l.shards[i].buckets = map[[16]byte]*bucket{}
	}
	return l
}

// allow spends one token of ip's bucket at now. It returns whether the request may proceed, the
// tokens left, and the seconds until a token is available when it may not. A new address
// allocates its bucket once; after that allow does not allocate.
func (l *limiter) allow(ip net.IP, now int64) (ok bool, remaining int, retryAfter int) {
	var key [16]byte
	copy(key[:], ip.To16())
	h := uint32(2166136261)
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	s := &l.shards[h%uint32(len(l.shards))]
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil {
		if len(s.buckets) >= l.maxPer {
			l.evict(s, now)
		}
		b = &bucket{tokens: l.perMinute, last: now}
		s.buckets[key] = b
	}
	elapsed := float64(now-b.last) / float64(time.Minute)
	b.tokens = min(l.perMinute, b.tokens+elapsed*l.perMinute)
	b.last = now
	if b.tokens < 1 {
		wait := (1 - b.tokens) / l.perMinute * 60
		return false, 0, int(wait) + 1
	}
	b.tokens--
	return true, int(b.tokens), 0
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
