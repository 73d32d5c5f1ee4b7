package pipeline_test

import (
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/schema"
)

// fakeLog is a replica's version, advanced by the test.
type fakeLog struct {
	mu            sync.Mutex
	version, seen int64
}

func (f *fakeLog) Version() int64 { f.mu.Lock(); defer f.mu.Unlock(); return f.version }
func (f *fakeLog) Seen() int64    { f.mu.Lock(); defer f.mu.Unlock(); return f.seen }
func (f *fakeLog) WaitFor(v int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if f.Version() >= v {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return f.Version() >= v
}

// The read floor edges and the origin share: parsing, at-once answers, the far-ahead refusal,
// the bounded wait, and the waiter cap.
func TestReadFloor(t *testing.T) {
	parse := func(header, query string) (int64, error) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/api/products?" + query)
		f := &pipeline.ReadFloor{}
		return f.Parse(&ctx, []byte(header))
	}
	for _, c := range []struct {
		header, query string
		want          int64
		bad           bool
	}{
		{"", "", 0, false}, {"7", "", 7, false}, {"", "vitrine_min_version=9", 9, false}, {"12", "vitrine_min_version=9", 12, false},
		{"x", "", 0, true}, {"", "vitrine_min_version=-1", 0, true},
	} {
		got, err := parse(c.header, c.query)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("Parse(%q, %q) = %d, %v", c.header, c.query, got, err)
		}
	}

	log := &fakeLog{version: 10, seen: 12}
	timeouts := 0
	f := &pipeline.ReadFloor{Wait: 30 * time.Millisecond, MaxAhead: 100, MaxWaiters: 1, Behind: "behind", OnTimeout: func() { timeouts++ }}
	if err := f.Hold(log, 0); err != nil {
		t.Fatalf("no floor: %v", err)
	}
	if err := f.Hold(log, 10); err != nil {
		t.Fatalf("a floor already reached: %v", err)
	}
	if err := f.Hold(log, 113); schema.ErrorCode(err) != schema.CodeInvalid {
		t.Fatalf("a floor far ahead: %v", err)
	}
	if err := f.Hold(log, 11); schema.ErrorCode(err) != schema.CodeUnavailable || timeouts != 1 {
		t.Fatalf("a floor never reached: %v (%d timeouts)", err, timeouts)
	}
	// One waiter at most: a second concurrent wait is refused at once; the first succeeds when
	// the version arrives.
	capped := &pipeline.ReadFloor{Wait: 10 * time.Second, MaxWaiters: 1, Behind: "behind"}
	done := make(chan error, 1)
	go func() { done <- capped.Hold(log, 11) }()
	for capped.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := capped.Hold(log, 11); schema.ErrorCode(err) != schema.CodeUnavailable {
		t.Fatalf("a waiter past the cap: %v", err)
	}
	log.mu.Lock()
	log.version = 11
	log.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("the first waiter: %v", err)
	}
}
