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

func (p pool) Ping(ctx context.Context) error { return p.p.Ping(detach(ctx)) }

func (p pool) Close() { p.p.Close() }

// txConn is a transaction as this package's queries use it: every statement runs with the
// caller's context detached, for the reason pool gives and one more: pgx watches a statement's
// context from a goroutine (context.AfterFunc) that may call Done after the handler returned,
// and a *fasthttp.RequestCtx's Done reads its server's state, which Shutdown writes (a data race
// the race detector caught under make test).
type txConn struct {
	tx pgx.Tx
	// fixed, when set, is the context every statement runs with, whatever its caller passes:
	// a transaction that carries other callers' writes (group commit, queue.go).
	fixed context.Context
	// ahead, when set, holds statements sent before the next one, in its round trip (group
	// commit: the previous write's deferred writes and the next write's savepoint).
	ahead *aheadState
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

// sendAhead sends the statements held ahead on their own, before a statement that cannot carry
// them in its round trip.
func (c txConn) sendAhead(ctx context.Context) error {
	if c.ahead == nil || len(c.ahead.stmts) == 0 {
		return nil
	}
	return c.SendBatch(ctx, &pgx.Batch{}).Close()
}

func (c txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := c.sendAhead(ctx); err != nil {
		return nil, err
	}
	return c.tx.Query(c.ctx(ctx), sql, args...)
}

func (c txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := c.sendAhead(ctx); err != nil {
		return errRow{err}
	}
	return c.tx.QueryRow(c.ctx(ctx), sql, args...)
}

func (c txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := c.sendAhead(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return c.tx.Exec(c.ctx(ctx), sql, args...)
}

// SendBatch sends the statements of b in one round trip, after those held ahead; the caller
// reads (or Closes) the results before the next statement.
func (c txConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if c.ahead == nil || len(c.ahead.stmts) == 0 {
		return c.tx.SendBatch(c.ctx(ctx), b)
	}
	ahead := &pgx.Batch{}
	for _, w := range c.ahead.stmts {
		ahead.Queue(w.sql, w.args...)
	}
	n := len(ahead.QueuedQueries)
	clear(c.ahead.stmts)
	c.ahead.stmts = c.ahead.stmts[:0]
	ahead.QueuedQueries = append(ahead.QueuedQueries, b.QueuedQueries...)
	return &afterAhead{BatchResults: c.tx.SendBatch(c.ctx(ctx), ahead), skip: n, state: c.ahead}
}

// afterAhead is the results of a batch sent after statements held ahead: the caller reads its
// own, the ahead statements' are read first (their error, if any, is the first read's).
type afterAhead struct {
	pgx.BatchResults
	skip  int
	err   error
	state *aheadState
}

// pass reads the ahead statements' results.
func (r *afterAhead) pass() error {
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

func (r *afterAhead) Exec() (pgconn.CommandTag, error) {
	if err := r.pass(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.BatchResults.Exec()
}

func (r *afterAhead) Query() (pgx.Rows, error) {
	if err := r.pass(); err != nil {
		return nil, err
	}
	return r.BatchResults.Query()
}

func (r *afterAhead) QueryRow() pgx.Row {
	if err := r.pass(); err != nil {
		return errRow{err}
	}
	return r.BatchResults.QueryRow()
}

func (r *afterAhead) Close() error {
	if err := r.pass(); err != nil {
		r.BatchResults.Close()
		return err
	}
	return r.BatchResults.Close()
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
