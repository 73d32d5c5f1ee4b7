package pipeline

import (
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Versioned is what a read floor waits on: a tenant's replica (replica.Tenant).
type Versioned interface {
	// Version is the version the replica is at.
	Version() int64
	// Seen is the highest version delivered to it, applied or not.
	Seen() int64
	// WaitFor blocks until the replica is at v or timeout passes, reporting whether it is.
	WaitFor(v int64, timeout time.Duration) bool
}

// ReadFloor holds a read until its tenant's replica has applied the floor the caller sent
// (Vitrine-Min-Version, or vitrine_min_version, kept out of cache keys), the same way at every
// edge and at the origin: a floor far above any version the tenant has seen is refused (400), at
// most MaxWaiters reads wait at once, and none longer than Wait (then 503 with Retry-After,
// never older data). Safe for concurrent use; the zero value takes the defaults.
type ReadFloor struct {
	// Wait bounds a wait (default 2s).
	Wait time.Duration
	// MaxAhead refuses a floor further than this above the highest version seen (default 10^6).
	MaxAhead int64
	// MaxWaiters caps concurrent waits; more answer 503 at once (default 10,000).
	MaxWaiters int64
	// Behind is the message of the 503 (who has not caught up).
	Behind string
	// OnTimeout, when set, is called for every wait that ran out (a metric).
	OnTimeout func()

	waiters atomic.Int64
}

// Waiters returns how many reads wait now.
func (f *ReadFloor) Waiters() int64 { return f.waiters.Load() }

// Parse returns the floor a request carries (0 for none): the higher of the header and the
// query parameter. It does not allocate unless the value is malformed.
func (f *ReadFloor) Parse(ctx *fasthttp.RequestCtx, header []byte) (int64, error) {
	var floor int64
	for _, v := range [2][]byte{header, ctx.QueryArgs().Peek("vitrine_min_version")} {
		if len(v) == 0 {
			continue
		}
		n, err := fasthttp.ParseUint(v)
		if err != nil {
			return 0, &schema.Error{Code: schema.CodeInvalid, Field: "vitrine_min_version", CMSCode: "rest_invalid_param",
				Message: "Vitrine-Min-Version must be a non-negative integer", Params: map[string]string{"vitrine_min_version": "vitrine_min_version is not of type integer."}}
		}
		floor = max(floor, int64(n))
	}
	return floor, nil
}

// Hold waits until t is at floor. It returns nil once it is (at once when it already is), or the
// error to answer: the floor is refused, too many reads wait, or the wait ran out.
func (f *ReadFloor) Hold(t Versioned, floor int64) error {
	if floor <= t.Version() {
		return nil
	}
	maxAhead, maxWaiters, wait := f.MaxAhead, f.MaxWaiters, f.Wait
	if maxAhead == 0 {
		maxAhead = 1_000_000
	}
	if maxWaiters == 0 {
		maxWaiters = 10_000
	}
	if wait == 0 {
		wait = 2 * time.Second
	}
	if floor > t.Seen()+maxAhead {
		return &schema.Error{Code: schema.CodeInvalid, Field: "vitrine_min_version", CMSCode: "rest_invalid_param",
			Message: "Vitrine-Min-Version is far above any version this store has written",
			Params:  map[string]string{"vitrine_min_version": "vitrine_min_version is far above any version this store has written."}}
	}
	behind := &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_replica_behind", Message: f.Behind, RetryAfter: 1}
	if f.waiters.Add(1) > maxWaiters {
		f.waiters.Add(-1)
		return behind
	}
	reached := t.WaitFor(floor, wait)
	f.waiters.Add(-1)
	if !reached {
		if f.OnTimeout != nil {
			f.OnTimeout()
		}
		return behind
	}
	return nil
}
