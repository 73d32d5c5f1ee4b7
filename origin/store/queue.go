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
	// joined are the waiters a holder may carry in its transaction (group commit, below),
	// oldest first (guarded by logQueues.mu).
	joined []*joinedWrite
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

// Group commit: a transaction that entered a store's queue through DB.TenantWriteTx (the
// origin's replicated writes of one store) and holds it runs, after its own work and before its
// COMMIT, the writes that joined the queue meanwhile, each from a savepoint, in the order they
// came: one transaction, one version bump of the log, one outbox insert, one COMMIT, and for
// the relay one round and one publish, for up to 1+DefaultGroupWrites writes. The writes
// run one after the other in one serializable transaction, so their outcome is that of running
// them serially in that order. Each keeps its own answer:
//
//   - a write whose work fails is rolled back to its savepoint and answered with its error once
//     the transaction commits (its error may depend on the writes before it, which are then
//     durable); a serialization failure or a broken connection fails the whole attempt instead,
//     and the group is retried as one transaction;
//   - a write that needs a log another transaction of this process holds is rolled back to its
//     savepoint and runs on its own afterwards, as do all the joined writes when the
//     transaction does not commit for any other reason (nothing of theirs is in the database);
//   - when the COMMIT's outcome is unknown, every write of the group is answered
//     ErrOutcomeUnknown.
//
// A joined write's statements run with the holder's context, so a joined caller that goes away
// cannot break the transaction others share.

// DefaultGroupWrites bounds how many joined writes one transaction carries besides its own.
// Each joined write takes a subtransaction; PostgreSQL keeps 64 per backend in shared memory
// before other sessions' snapshots must consult pg_subtrans, so this stays well under 64.
const DefaultGroupWrites = 16

// joinedWrite is a write waiting in a store's queue that the holder may carry in its
// transaction.
type joinedWrite struct {
	fn     func(tx *Tx) error
	taken  bool          // a holder took it (guarded by logQueues.mu)
	picked chan struct{} // closed when a holder takes it
	done   chan joinedResult
	res    joinedResult // the holder's record of its current attempt
}

// joinedResult is what a joined write is answered.
type joinedResult struct {
	commits []LogCommit
	err     error
	// alone: the write did not happen in the holder's transaction; it runs on its own.
	alone bool
	// panicked is what the write's work panicked with, raised again in its caller's goroutine.
	panicked any
}

// landed reports whether the write is in the holder's transaction.
func (r joinedResult) landed() bool { return r.err == nil && !r.alone && r.panicked == nil }

// join waits for id's queue as acquire does, offering w to the holder meanwhile. It returns
// with the queue held (joined false), or with w's result once a holder took it (joined true).
func (qs *logQueues) join(ctx context.Context, id string, deadline time.Time, w *joinedWrite) (res joinedResult, joined bool, err error) {
	q, ok := qs.ref(id, true)
	if !ok {
		return joinedResult{}, false, errQueueFull
	}
	qs.mu.Lock()
	q.joined = append(q.joined, w)
	qs.mu.Unlock()
	// leave takes w off the queue's list; true when a holder took it first.
	leave := func() bool {
		qs.mu.Lock()
		defer qs.mu.Unlock()
		if w.taken {
			return true
		}
		q.joined = slices.DeleteFunc(q.joined, func(x *joinedWrite) bool { return x == w })
		return false
	}
	// result waits for the holder's answer to w (it always comes: txQueued delivers one to
	// every write it took, whatever happens to its own).
	result := func() (joinedResult, bool, error) {
		r := <-w.done
		qs.unref(id, q)
		return r, true, nil
	}
	// giveUp stops waiting with err, unless a holder took w first.
	giveUp := func(err error) (joinedResult, bool, error) {
		if leave() {
			return result()
		}
		qs.unref(id, q)
		return joinedResult{}, false, err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case q.slot <- struct{}{}:
		if leave() {
			// Taken, and the holder has released the queue since: give it back.
			<-q.slot
			return result()
		}
		return joinedResult{}, false, nil
	case <-w.picked:
		return result()
	case <-ctx.Done():
		return giveUp(ctx.Err())
	case <-t.C:
		return giveUp(errBudget)
	}
}

// take moves up to n writes joined to id's queue, oldest first, to the caller, which holds it.
func (qs *logQueues) take(id string, n int) []*joinedWrite {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[id]
	if q == nil || len(q.joined) == 0 || n <= 0 {
		return nil
	}
	n = min(n, len(q.joined))
	out := slices.Clone(q.joined[:n])
	q.joined = slices.Delete(q.joined, 0, n)
	for _, w := range out {
		w.taken = true
		close(w.picked)
	}
	return out
}

// txGroup is the writes a holder carries in its transaction besides its own.
type txGroup struct {
	log     string // the store's log id, whose queue the holder holds
	max     int
	members []*joinedWrite
}

// deliver answers every member once: res for each when the transaction committed (their own
// errors kept), otherwise the same answer for all.
func (g *txGroup) deliver(committed bool, commits []LogCommit, all joinedResult) {
	if g == nil {
		return
	}
	for _, w := range g.members {
		r := all
		if committed {
			r = w.res
			if r.landed() {
				r.commits = commits
			}
		}
		w.done <- r
	}
	g.members = nil
}

// withLog returns ids with the group's log added: an attempt that carries a group holds its
// store's queue from its beginning.
func (g *txGroup) withLog(ids []string) []string {
	if g == nil {
		return ids
	}
	return append(ids, g.log)
}

// carried counts the members whose writes the group's transaction holds.
func (g *txGroup) carried() int {
	n := 0
	if g != nil {
		for _, w := range g.members {
			if w.res.landed() {
				n++
			}
		}
	}
	return n
}
