package customers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"vitrine/schema"
)

// instrument wraps k's argon2id with a gauge of computations running at once, recording its peak.
func instrument(k *KDF) (peak *atomic.Int64) {
	var running atomic.Int64
	peak = new(atomic.Int64)
	k.idKey = func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		defer running.Add(-1)
		return argon2.IDKey(password, salt, time, memory, threads, keyLen)
	}
	return peak
}

// A budget of one hash runs one argon2id at a time, however many sign-ins arrive together, and a
// sign-in whose wait runs out gets the 503 answer (unavailable, Retry-After), never a verdict.
func TestKDFCapsConcurrentHashes(t *testing.T) {
	hash, err := NewKDF(0, 0).hash(context.Background(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		budget   int64 // bytes
		parallel int
		wantPeak int64
	}{
		{"one hash", argonMemoryKiB << 10, 4, 1},
		{"below one hash still allows one", 1 << 20, 3, 1},
		{"two hashes", 2 * argonMemoryKiB << 10, 6, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKDF(tc.budget, time.Minute)
			peak := instrument(k)
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, tc.parallel)
			for i := 0; i < tc.parallel; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					ok, err := k.verify(context.Background(), "correct horse battery", hash)
					if err == nil && !ok {
						err = errors.New("the right password did not match")
					}
					errs <- err
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := peak.Load(); got != tc.wantPeak {
				t.Fatalf("peak concurrent argon2id computations %d, want %d", got, tc.wantPeak)
			}
		})
	}

	t.Run("waiters past the bound get 503", func(t *testing.T) {
		k := NewKDF(argonMemoryKiB<<10, 20*time.Millisecond)
		inside, release := make(chan struct{}), make(chan struct{})
		k.idKey = func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
			close(inside)
			<-release // hold the whole budget until the test lets go
			return make([]byte, keyLen)
		}
		go k.hash(context.Background(), "held")
		<-inside
		for _, call := range []struct {
			name string
			f    func() error
		}{
			{"verify", func() error { _, err := k.verify(context.Background(), "x", hash); return err }},
			{"hash", func() error { _, err := k.hash(context.Background(), "y"); return err }},
		} {
			err := call.f()
			var se *schema.Error
			if !errors.As(err, &se) || se.Code != schema.CodeUnavailable || se.RetryAfter < 1 {
				t.Errorf("%s while the budget is held: %v, want unavailable with Retry-After", call.name, err)
			}
		}
		close(release)
	})
}

// A stored hash naming more memory than the whole budget weighs the whole budget: it runs, alone.
func TestKDFOversizedHashWeighsTheBudget(t *testing.T) {
	k := NewKDF(argonMemoryKiB<<10, time.Second)
	peak := instrument(k)
	big := "$argon2id$v=19$m=65536,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$9mYqL0XzE2Vv0ZlJm8rRzP6m4rjC7bVv4nqkq1cD3xA"
	ok, err := k.verify(context.Background(), "whatever", big)
	if err != nil || ok || peak.Load() != 1 {
		t.Fatalf("verify against a 64 MiB hash with a 19 MiB budget: %v %v (peak %d)", ok, err, peak.Load())
	}
}
