package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"vitrine/schema"
)

// Write queues: the transactions of one origin process that take versions of the same log (a
// store's, or the platform's) wait their turn here instead of colliding in the database. Every
// such transaction updates its log's row in log_versions, so two of them running at once under
// SERIALIZABLE cannot both commit: the loser is retried with backoff, and under load the retries
// pile up into the retry budget and a 503. Queued, they run one after the other per log, each
// once; transactions of different stores still run in parallel. Across several origin processes
// the database's serialization check and the retry loop still decide.
//
// A transaction does not say up front which logs it will take, so the queue is entered in two
// ways. When an attempt first takes a log's versions (Tx.logFor) it tries that log's queue
// without waiting: free, it holds it until the attempt ends; held by another transaction, the
// attempt stops at once (errQueued, before touching the row) and the transaction waits for the
// queue, then runs again holding it from before its snapshot. A retry after a serialization
// failure also waits for the queues of the logs its failed attempt took. Waits are taken in log
// id order and never while holding a queue, and the in-attempt tries never wait, so queues
// cannot deadlock.

// DefaultQueueDepth bounds how many transactions may wait for one log's queue.
const DefaultQueueDepth = 256

// errQueued stops an attempt that found its log's queue held: the transaction waits for it and
// runs again. It never leaves the store.
var errQueued = errors.New("store: the log's write queue is held")

// errQueueFull answers a transaction that found its log's queue at its depth: the store is
// taking writes faster than the database commits them.
var errQueueFull = &schema.Error{Code: schema.CodeUnavailable, Message: "the store is busy with other writes; retry shortly", RetryAfter: 1}

// logQueues are the write queues of one process, by log id; a queue exists while something holds
// or waits for it.
type logQueues struct {
	depth int
	mu    sync.Mutex
	m     map[string]*logQueue
}

type logQueue struct {
	slot chan struct{} // capacity 1: full while a transaction holds the queue
	refs int           // the holder and the waiters (guarded by logQueues.mu)
}

func newLogQueues(depth int) *logQueues {
	return &logQueues{depth: depth, m: map[string]*logQueue{}}
}

// ref returns the queue of id with one more reference; waiting reports whether the caller would
// be a waiter past the depth (then it holds no reference).
func (qs *logQueues) ref(id string, waiter bool) (*logQueue, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[id]
	if q == nil {
		q = &logQueue{slot: make(chan struct{}, 1)}
		qs.m[id] = q
	}
	if waiter && q.refs > qs.depth { // the holder and depth waiters
		return nil, false
	}
	q.refs++
	return q, true
}

func (qs *logQueues) unref(id string, q *logQueue) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q.refs--; q.refs == 0 {
		delete(qs.m, id)
	}
}

// tryAcquire takes id's queue if it is free.
func (qs *logQueues) tryAcquire(id string) bool {
	q, _ := qs.ref(id, false)
	select {
	case q.slot <- struct{}{}:
		return true
	default:
		qs.unref(id, q)
		return false
	}
}

// acquire waits for id's queue until ctx ends or deadline passes (errBudget), or refuses at once
// when depth transactions already wait (errQueueFull).
func (qs *logQueues) acquire(ctx context.Context, id string, deadline time.Time) error {
	q, ok := qs.ref(id, true)
	if !ok {
		return errQueueFull
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case q.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		qs.unref(id, q)
		return ctx.Err()
	case <-t.C:
		qs.unref(id, q)
		return errBudget
	}
}

// release gives back id's queue, held by the caller.
func (qs *logQueues) release(id string) {
	qs.mu.Lock()
	q := qs.m[id]
	qs.mu.Unlock()
	<-q.slot
	qs.unref(id, q)
}

// queueHold is what one attempt holds: the queues it entered, by log id.
type queueHold struct {
	qs   *logQueues
	held []string
}

// has reports whether the attempt holds id's queue.
func (h *queueHold) has(id string) bool { return slices.Contains(h.held, id) }

// try enters id's queue without waiting (Tx.logFor): true when the attempt may take the log.
func (h *queueHold) try(id string) bool {
	if h == nil || h.qs == nil || h.has(id) {
		return true
	}
	if !h.qs.tryAcquire(id) {
		return false
	}
	h.held = append(h.held, id)
	return true
}

// wait enters the queues of ids, in id order, before an attempt begins.
func (h *queueHold) wait(ctx context.Context, ids []string, deadline time.Time) error {
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if err := h.qs.acquire(ctx, id, deadline); err != nil {
			h.releaseAll()
			return err
		}
		h.held = append(h.held, id)
	}
	return nil
}

// releaseAll gives back every queue the attempt holds.
func (h *queueHold) releaseAll() {
	for _, id := range h.held {
		h.qs.release(id)
	}
	h.held = h.held[:0]
}
