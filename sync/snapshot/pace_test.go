package snapshot

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPacer: a paced loop rests so that its running time is about its share of the whole, a share
// of 1 (or none) never rests, and a rest ends with its context.
func TestPacer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share float64
		rests bool // false: no pacer at all
	}{
		{"a quarter", 0.25, true},
		{"a half", 0.5, true},
		{"no limit", 1, false},
		{"unset", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(tc.share, nil)
			if (p != nil) != tc.rests {
				t.Fatalf("pacer %v for share %v", p, tc.share)
			}
			if !tc.rests {
				return // a nil pacer's yield returns at once
			}
			const work = 40 * time.Millisecond
			start := time.Now()
			var ran time.Duration
			for ran < work {
				t0 := time.Now()
				for time.Since(t0) < 100*time.Microsecond { // busy: the step's work
				}
				ran += time.Since(t0)
				if err := p.yield(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			whole := time.Since(start)
			// The rests make the whole at least work/share (less one slice the last step may not
			// have rested for); a scheduler can only make it longer.
			if min := time.Duration(float64(ran)/tc.share) - time.Duration(float64(paceSlice)/tc.share); whole < min {
				t.Fatalf("%v of work at share %v took %v, want at least %v", ran, tc.share, whole, min)
			}
		})
	}
	// Busy decides whether a run that is due for a rest takes it: a rest is seen here as the
	// error of a context that has already ended.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		busy  func() bool
		rests bool
	}{
		{"no foreground to ask", nil, true},
		{"the foreground is busy", func() bool { return true }, true},
		{"the foreground is idle", func() bool { return false }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(0.25, tc.busy)
			p.began = time.Now().Add(-time.Second) // a run long past its slice
			before := time.Now()
			err := p.yield(ended)
			if rested := err != nil; rested != tc.rests {
				t.Fatalf("rested: %v (%v), want %v", rested, err, tc.rests)
			}
			if !tc.rests && p.began.Before(before) {
				t.Fatal("an idle foreground did not begin a new run")
			}
		})
	}
	t.Run("a rest ends with its context", func(t *testing.T) {
		p := newPacer(0.01, nil) // a slice's run then rests 99 times as long
		p.began = time.Now().Add(-time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := p.yield(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("yield: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("the rest outlived its context by %v", d)
		}
	})
}
