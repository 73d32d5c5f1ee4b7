package imaging

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// Default Budget settings: 1 GiB of estimated working memory across all concurrent image jobs,
// and a wait of at most 10 s for room before a job is refused as busy.
const (
	DefaultBudgetBytes = 1 << 30
	DefaultBudgetWait  = 10 * time.Second
)

// Budget bounds the memory that concurrent image processing may use: each job acquires its
// EstimateBytes before decoding and releases it when its pixels are dropped. A job waits for
// room at most the Budget's wait (or until its context ends), then gets a KindBusy error (503
// with Retry-After). A job larger than the whole budget is refused at once (KindTooLarge), so
// the bound holds: the pixel buffers of all jobs together stay under the capacity, whatever the
// number of uploads. Safe for concurrent use.
type Budget struct {
	sem      *semaphore.Weighted
	capacity int64
	wait     time.Duration
}

// NewBudget returns a Budget of capacity bytes (DefaultBudgetBytes when <= 0) whose jobs wait at
// most wait for room (DefaultBudgetWait when <= 0).
func NewBudget(capacity int64, wait time.Duration) *Budget {
	if capacity <= 0 {
		capacity = DefaultBudgetBytes
	}
	if wait <= 0 {
		wait = DefaultBudgetWait
	}
	return &Budget{sem: semaphore.NewWeighted(capacity), capacity: capacity, wait: wait}
}

// Capacity returns the budget's size in bytes.
func (b *Budget) Capacity() int64 { return b.capacity }

// Acquire reserves n bytes, waiting for room at most the budget's wait. The returned release
// must be called once, when the job's images are no longer referenced.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if n <= 0 {
		n = 1
	}
	if n > b.capacity {
		return nil, newError(KindTooLarge, fmt.Sprintf("the image needs %d MiB to process, more than the %d MiB budget", n>>20, b.capacity>>20), nil)
	}
	ctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, newError(KindBusy, "image processing is busy, try again later", err)
	}
	return func() { b.sem.Release(n) }, nil
}

// EstimateBytes is the working memory a job on an image of w×h stored pixels needs: the decoded
// buffer (bytesPerPixel, from Probe's Info) plus two 4-byte-per-pixel working copies (the upright
// or edited image, and a resize's intermediate pass with its result). The sub-sizes themselves
// are smaller than a working copy. For a 12-megapixel JPEG this is 144 MiB; for the default
// 40-megapixel limit, 480 MiB.
func EstimateBytes(w, h, bytesPerPixel int) int64 {
	if bytesPerPixel < 4 {
		bytesPerPixel = 4
	}
	return int64(w) * int64(h) * int64(bytesPerPixel+8)
}

// Cost is EstimateBytes for a probed image.
func (i Info) Cost() int64 { return EstimateBytes(i.Width, i.Height, i.BytesPerPixel) }
