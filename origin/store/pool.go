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
}

// ctx is the context a statement runs with.
func (c txConn) ctx(ctx context.Context) context.Context {
	if c.fixed != nil {
		return c.fixed
	}
	return detach(ctx)
}

func (c txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.tx.Query(c.ctx(ctx), sql, args...)
}

func (c txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.tx.QueryRow(c.ctx(ctx), sql, args...)
}

func (c txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.tx.Exec(c.ctx(ctx), sql, args...)
}

// SendBatch sends the statements of b in one round trip; the caller reads (or Closes) the
// results before the next statement.
func (c txConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.tx.SendBatch(c.ctx(ctx), b)
}

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
