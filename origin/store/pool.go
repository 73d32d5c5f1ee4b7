package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pool is the connection pool as this package uses it: every call that may acquire a connection
// runs with the caller's context detached (see detach).
//
// Why: when the pool must open a connection, pgxpool (through puddle) does it in a background
// goroutine with a context that forwards Value calls to the acquiring context, and dialing calls
// Value. Handlers pass their *fasthttp.RequestCtx, which fasthttp reuses once the handler
// returns: a connection opened after that read a recycled request (a data race the race detector
// caught at server shutdown). Detached contexts keep the caller's cancellation and deadline and
// answer no values.
type pool struct{ p *pgxpool.Pool }

func (p pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.p.Query(detach(ctx), sql, args...)
}

func (p pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.p.QueryRow(detach(ctx), sql, args...)
}

func (p pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.p.Exec(detach(ctx), sql, args...)
}

func (p pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return p.p.BeginTx(detach(ctx), opts)
}

func (p pool) Begin(ctx context.Context) (pgx.Tx, error) { return p.p.Begin(detach(ctx)) }

func (p pool) Acquire(ctx context.Context) (*pgxpool.Conn, error) { return p.p.Acquire(detach(ctx)) }

func (p pool) Ping(ctx context.Context) error { return p.p.Ping(detach(ctx)) }

func (p pool) Close() { p.p.Close() }

// txConn is a transaction as this package's queries use it: every statement runs with the
// caller's context detached, for the reason pool gives and one more: pgx watches a statement's
// context from a goroutine (context.AfterFunc) that may call Done after the handler returned,
// and a *fasthttp.RequestCtx's Done reads its server's state, which Shutdown writes (a data race
// the race detector caught under make test).
//
// A transaction that DB.attempt runs is not begun with a round trip of its own: its BEGIN rides
// ahead of its first statement (txOpen), and its COMMIT behind its last (Tx.finish). Every
// statement sent ahead is read before the caller's own results. (pgx's Batch.BeginTx also sends
// BEGIN with a batch, but the pgx.Tx it gives commits on a round trip of its own. Saving both
// round trips saved 0.15 ms of server CPU per price write in the bench's short freshness runs,
// 0.12 of it in the database: bench/results/2026-11-27-roundtrips.)
type txConn struct {
	// q runs the statements: a connection of the pool (DB.attempt) or a begun pgx.Tx.
	q pgQuerier
	// open, when set, is the transaction's beginning, sent with the first statement.
	open *txOpen
	// fixed, when set, is the context every statement runs with, whatever its caller passes:
	// a transaction that carries other callers' writes (group commit, queue.go).
	fixed context.Context
	// ahead, when set, holds statements sent before the next one, in its round trip (group
	// commit: the previous write's deferred writes and the next write's savepoint).
	ahead *aheadState
}

// pgQuerier is what a txConn sends its statements through: *pgxpool.Conn and pgx.Tx both are.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// txOpen is the beginning of a transaction not sent yet: begin (BEGIN, and the settings for the
// transaction alone) goes in the round trip of the transaction's first statement. Once the
// results of that round trip are read, the transaction's snapshot exists, and opened is called
// (Tx reads its clock then: see Tx.Now). A failure of the beginning is kept in err, and every
// later statement of the transaction returns it.
type txOpen struct {
	ctx    context.Context // the attempt's, for a beginning sent on its own (Tx.Now)
	begin  []string
	sent   bool // begin went out (it may have failed: err)
	done   bool // the round trip that carried begin was read in full
	err    error
	opened func()
}

// pending reports whether the next statement carries statements before it: the transaction's
// beginning or statements held ahead.
func (c txConn) pending() bool {
	return (c.open != nil && !c.open.sent) || (c.ahead != nil && len(c.ahead.stmts) > 0)
}

// aheadState is the statements a txConn sends ahead of the next one, and the first failure of
// any it sent: it fails the whole transaction, whichever caller's read saw it.
type aheadState struct {
	stmts []laterExec
	err   error
}

// failedAhead returns the failure of a statement sent ahead, if one failed.
func (c txConn) failedAhead() error {
	if c.ahead == nil || c.ahead.err == nil {
		return nil
	}
	return &aheadError{c.ahead.err}
}

// ctx is the context a statement runs with.
func (c txConn) ctx(ctx context.Context) context.Context {
	if c.fixed != nil {
		return c.fixed
	}
	return detach(ctx)
}

// begun reports whether the transaction's beginning went out (always, for a begun pgx.Tx).
func (c txConn) begun() bool { return c.open == nil || c.open.sent }

// beginFailed returns why the transaction could not begin, if it could not.
func (c txConn) beginFailed() error {
	if c.open == nil {
		return nil
	}
	return c.open.err
}

// end ends a transaction's use of its connection: one begun and not ended (its function or its
// COMMIT failed) is rolled back, and the connection goes back to the pool, which closes it if it
// is still in a transaction (the ROLLBACK failed) or busy.
func (c txConn) end(ctx context.Context, conn *pgxpool.Conn) {
	if c.begun() && !conn.Conn().IsClosed() && conn.Conn().PgConn().TxStatus() != 'I' {
		conn.Exec(ctx, `ROLLBACK`)
	}
	conn.Release()
}

// sendPending sends what the next statement would carry on its own, before a statement that
// cannot carry it in its round trip (a multi-row Query): for a transaction not begun yet, with
// a SELECT 1 that takes its snapshot, so that its clock is read after it.
func (c txConn) sendPending(ctx context.Context) error {
	if !c.pending() {
		return c.beginFailed()
	}
	b := &pgx.Batch{}
	if !c.begun() {
		b.Queue(`SELECT 1`)
	}
	return c.SendBatch(ctx, b).Close()
}

func (c txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := c.sendPending(ctx); err != nil {
		return nil, err
	}
	return c.q.Query(c.ctx(ctx), sql, args...)
}

func (c txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := c.beginFailed(); err != nil {
		return errRow{err}
	}
	if !c.pending() {
		return c.q.QueryRow(c.ctx(ctx), sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := c.SendBatch(ctx, b)
	return batchRow{row: br.QueryRow(), br: br}
}

func (c txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := c.beginFailed(); err != nil {
		return pgconn.CommandTag{}, err
	}
	if !c.pending() {
		return c.q.Exec(c.ctx(ctx), sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := c.SendBatch(ctx, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// SendBatch sends the statements of b in one round trip, after the transaction's beginning (if
// not sent yet) and those held ahead; the caller reads (or Closes) the results before the next
// statement.
func (c txConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := c.beginFailed(); err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	if !c.pending() {
		return c.q.SendBatch(c.ctx(ctx), b)
	}
	all := &pgx.Batch{}
	var open *txOpen
	if !c.begun() {
		open = c.open
		open.sent = true
		for _, s := range open.begin {
			all.Queue(s)
		}
	}
	r := &pipelined{open: open, begin: all.Len(), state: c.ahead}
	if c.ahead != nil {
		for _, w := range c.ahead.stmts {
			all.Queue(w.sql, w.args...)
		}
		r.skip = len(c.ahead.stmts)
		clear(c.ahead.stmts)
		c.ahead.stmts = c.ahead.stmts[:0]
	}
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	r.BatchResults = c.q.SendBatch(c.ctx(ctx), all)
	return r
}

// pipelined is the results of a batch sent after a transaction's beginning or statements held
// ahead: the caller reads its own; the others' are read first (their error, if any, is the first
// read's). A failed beginning is the transaction's (txOpen.err); a failed statement held ahead
// is the group's (aheadState.err).
type pipelined struct {
	pgx.BatchResults
	open  *txOpen // when the batch carries the transaction's beginning
	begin int     // how many of its statements begin the transaction
	skip  int     // how many statements held ahead follow them
	err   error
	state *aheadState
}

// pass reads the results of the statements sent before the caller's.
func (r *pipelined) pass() error {
	for ; r.begin > 0 && r.err == nil; r.begin-- {
		if _, err := r.BatchResults.Exec(); err != nil {
			r.err = err
			r.open.err = err
		}
	}
	for ; r.skip > 0 && r.err == nil; r.skip-- {
		if _, err := r.BatchResults.Exec(); err != nil {
			r.err = &aheadError{err}
			if r.state.err == nil {
				r.state.err = err
			}
		}
	}
	return r.err
}

// aheadError is the failure of a statement sent ahead: it belongs to no write of a group in
// particular (a write put off by the one before, or a savepoint), so the group's attempt fails as
// a whole and each of its writes runs on its own (txGrouped). Callers may have wrapped or mapped
// it: runGroup and attempt ask the txConn (failedAhead), not the error.
type aheadError struct{ err error }

func (e *aheadError) Error() string { return e.err.Error() }
func (e *aheadError) Unwrap() error { return e.err }

func (r *pipelined) Exec() (pgconn.CommandTag, error) {
	if err := r.pass(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.BatchResults.Exec()
}

func (r *pipelined) Query() (pgx.Rows, error) {
	if err := r.pass(); err != nil {
		return nil, err
	}
	return r.BatchResults.Query()
}

func (r *pipelined) QueryRow() pgx.Row {
	if err := r.pass(); err != nil {
		return errRow{err}
	}
	return r.BatchResults.QueryRow()
}

// Close reads what is left of the batch. When the batch began the transaction, its snapshot was
// taken in it: the transaction is open from here (txOpen.opened).
func (r *pipelined) Close() error {
	err := r.pass()
	cerr := r.BatchResults.Close()
	if err == nil {
		err = cerr
	}
	if r.open != nil && !r.open.done {
		r.open.done = true
		if r.open.err == nil && r.open.opened != nil {
			r.open.opened()
		}
	}
	return err
}

// batchRow is the one row of a batch sent for a QueryRow: scanning it closes the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// errRow is a row whose statement was not sent: Scan returns why.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// detached is a context with a caller's cancellation channel and deadline, read once when it was
// made, and no values.
type detached struct {
	done        <-chan struct{}
	deadline    time.Time
	hasDeadline bool
}

// detach returns a context that is cancelled when ctx is, without ever calling ctx again.
func detach(ctx context.Context) context.Context {
	if ctx == context.Background() {
		return ctx
	}
	d := detached{done: ctx.Done()}
	d.deadline, d.hasDeadline = ctx.Deadline()
	return d
}

func (d detached) Deadline() (time.Time, bool) { return d.deadline, d.hasDeadline }
func (d detached) Done() <-chan struct{}       { return d.done }
func (d detached) Value(any) any               { return nil }

func (d detached) Err() error {
	if d.done == nil {
		return nil
	}
	select {
	case <-d.done:
		if d.hasDeadline && !time.Now().Before(d.deadline) {
			return context.DeadlineExceeded
		}
		return context.Canceled
	default:
		return nil
	}
}
