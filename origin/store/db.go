package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"vitrine/schema"
)

// Config tunes the database layer. Zero values mean the defaults.
type Config struct {
	// MaxRetries bounds how many times a transaction is retried after its first attempt
	// (default 12).
	MaxRetries int
	// RetryBudget bounds the total time spent on one transaction, retries and backoff included
	// (default 3s).
	RetryBudget time.Duration
	// BaseBackoff is the first backoff; each retry doubles it, with full jitter, capped at
	// MaxBackoff (defaults 2ms and 200ms).
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxConns sizes the connection pool (default: pgxpool's).
	MaxConns int32
	// OnRetry is called once per retried attempt (the metric of transaction retries).
	OnRetry func()
	// OnTx, when set, is told how long each transaction took, its retries and backoff included,
	// whatever its outcome (the metric of transaction durations).
	OnTx func(time.Duration)
	// OnCommit is called after a transaction that recorded changes has committed, with the last
	// version it took of each log. The relay in the same process uses it to wake up.
	OnCommit func(commits []LogCommit)
	// Now returns the current time (tests fix it); default time.Now.
	Now func() time.Time
	// QueueDepth bounds how many of this process's transactions may wait for one log's write
	// queue (queue.go; default DefaultQueueDepth); past it a transaction is refused at once, 503.
	// A negative depth turns the queues off: transactions of one store collide in the database
	// and retry (the baseline of the write-ceiling measurement).
	QueueDepth int
	// OnGroup, when set, is told how many joined writes a committed transaction carried
	// besides its own (the metric of group commit; not called for none).
	OnGroup func(carried int)
	// GroupWrites bounds how many writes of one store queued in this process a transaction of
	// TenantWriteTx carries besides its own (group commit, queue.go; default
	// DefaultGroupWrites). Negative: each runs in a transaction of its own.
	GroupWrites int
	// Tracer, when set, is told of every statement and batch the pool runs (tests count the
	// statements and round trips of a write with it).
	Tracer pgx.QueryTracer
	// GenericPlans plans every statement of the pool as the replicated-write path's are
	// (genericPlansSession, noSeqScanSession): for a pool whose statements are all keyed reads
	// and writes, the relay's. Ignored on CockroachDB, which plans its own way.
	GenericPlans bool
	// CredentialTTL is how long a verified application password is trusted without asking the
	// database again (credcache.go; default DefaultCredentialTTL, negative: never cached). It
	// bounds how long a change made by another process to a tenant's users or application
	// passwords (a revocation, a new role) can go unseen here when OnCredentialsChange's
	// broadcast does not arrive.
	CredentialTTL time.Duration
	// OnCredentialsChange, when set, is told the tenants whose users or application passwords
	// this process changed, once the change has committed: the caller tells the other
	// processes sharing the database, which call DB.ForgetCredentials.
	OnCredentialsChange func(tenantIDs []string)
}

// DefaultCredentialTTL is Config.CredentialTTL's default.
const DefaultCredentialTTL = time.Second

// maxCredentials bounds the credential cache's entries.
const maxCredentials = 10000

// LogCommit is the last version a committed transaction took of one log.
type LogCommit struct {
	// Log is the tenant slug, or schema.PlatformLog.
	Log     string
	Version int64
}

// DB is the origin's database handle. It is safe for concurrent use.
type DB struct {
	pool pool
	cfg  Config
	rec  *sqlRecorder // nil unless the URL asks for recording (RecordSQLParam)
	// queues are the per-log write queues (queue.go); nil when Config.QueueDepth is negative.
	queues *logQueues
	// cockroach is set when the database is CockroachDB.
	cockroach bool
	// creds is the cache of verified application passwords (credcache.go); nil when off.
	creds *credentialCache
	// reservedSlugs is schema.ReservedProductSlugs, computed once: it scans every route, and
	// every product write validates against it (4% of the origin's CPU under price writes).
	reservedSlugs []string
}

// Open connects to the database at dsn (a PostgreSQL URL) and checks that it answers. The URL
// may carry RecordSQLParam (tests).
func Open(ctx context.Context, dsn string, cfg Config) (*DB, error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: parse database URL: %w", err)
	}
	var rec *sqlRecorder
	if dir, ok := pcfg.ConnConfig.RuntimeParams[RecordSQLParam]; ok {
		delete(pcfg.ConnConfig.RuntimeParams, RecordSQLParam)
		if dir != "" {
			rec = newSQLRecorder(dir)
			pcfg.ConnConfig.Tracer = rec
		}
	}
	if cfg.Tracer != nil {
		if rec != nil {
			pcfg.ConnConfig.Tracer = multitracer.New(rec, cfg.Tracer)
		} else {
			pcfg.ConnConfig.Tracer = cfg.Tracer
		}
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	// Every execution is planned with its arguments (plan_cache_mode = force_custom_plan),
	// foreign-key checks included. By default PostgreSQL switches a prepared statement, and
	// the plan of a foreign-key check, to a generic plan after five executions and keeps it for
	// the connection's life: plans made while a table was nearly empty (sequential scans) went
	// on being used as it grew, and seeding 100,000 products slowed from ~480 to ~30 products/s,
	// with the seeding connection's backend busy walking the variants' parent table. Planning a
	// point query costs tens of microseconds. CockroachDB plans its own way: not set there.
	pcfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if c.PgConn().ParameterStatus("crdb_version") != "" {
			return nil
		}
		if cfg.GenericPlans {
			// One statement per round trip: once per connection, and every statement the
			// store sends but BEGIN's parses alone under CockroachDB's grammar (crdbcheck).
			for _, set := range []string{genericPlansSession, noSeqScanSession} {
				if _, err := c.Exec(ctx, set); err != nil {
					return err
				}
			}
			return nil
		}
		_, err := c.Exec(ctx, "SET plan_cache_mode = force_custom_plan")
		return err
	}
	p, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var cockroach bool
	err = p.AcquireFunc(pctx, func(c *pgxpool.Conn) error {
		cockroach = c.Conn().PgConn().ParameterStatus("crdb_version") != ""
		return c.Ping(pctx)
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("store: database at %s does not answer: %w", pcfg.ConnConfig.Host, err)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 12
	}
	if cfg.RetryBudget == 0 {
		cfg.RetryBudget = 3 * time.Second
	}
	if cfg.BaseBackoff == 0 {
		cfg.BaseBackoff = 2 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 200 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.GroupWrites == 0 {
		cfg.GroupWrites = DefaultGroupWrites
	}
	if cfg.QueueDepth == 0 {
		cfg.QueueDepth = DefaultQueueDepth
	}
	if cfg.CredentialTTL == 0 {
		cfg.CredentialTTL = DefaultCredentialTTL
	}
	db := &DB{pool: pool{p}, cfg: cfg, rec: rec, cockroach: cockroach, creds: newCredentialCache(cfg.CredentialTTL, maxCredentials),
		reservedSlugs: schema.ReservedProductSlugs()}
	if cfg.QueueDepth > 0 {
		db.queues = newLogQueues(cfg.QueueDepth)
	}
	return db, nil
}

// Close closes the pool (and writes the recorded SQL, when recording).
func (db *DB) Close() {
	db.pool.Close()
	if db.rec != nil {
		// Best effort: a statement not written is a statement not checked, never a failure here.
		db.rec.flush()
	}
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// now is the transaction clock: UTC, truncated to the microsecond the database keeps, so that a
// value read back equals the value written.
func (db *DB) now() time.Time { return db.cfg.Now().UTC().Truncate(time.Microsecond) }

// errBudget is returned (as a schema.Error) when a transaction could not commit within its retry
// count and budget.
var errBudget = &schema.Error{Code: schema.CodeUnavailable, Message: "the database is busy; retry shortly", RetryAfter: 1}

// ErrOutcomeUnknown is the error (a *schema.Error, code outcome_unknown, answered 504) of a
// transaction whose COMMIT was sent but whose answer never came or said the outcome is unknown
// (CockroachDB's 40003, a connection lost during COMMIT): it may have been applied. It is never
// retried, as the first attempt may have committed; callers with an idempotency key resolve it
// on the client's retry (the checkout does). Compare codes with schema.ErrorCode, not pointers.
var ErrOutcomeUnknown = &schema.Error{Code: schema.CodeOutcomeUnknown,
	Message: "the database did not confirm whether this change was saved: it may have been applied; check before repeating it"}

// commitUnknown wraps the error of a COMMIT whose outcome is unknown.
type commitUnknown struct{ err error }

func (e *commitUnknown) Error() string { return "store: commit outcome unknown: " + e.err.Error() }
func (e *commitUnknown) Unwrap() error { return e.err }

// commitOutcomeUnknown reports whether err, returned by COMMIT, leaves the transaction's outcome
// unknown. A definite answer (a serialization failure, a deferred constraint, a transaction
// already rolled back) is known; 40003 (statement_completion_unknown, CockroachDB's "result is
// ambiguous"), an error sent as the connection ends, and no answer at all are not. Any error
// without an SQLSTATE counts as unknown, even one pgx calls safe to retry: when the answer to
// COMMIT never comes, pgx v5 reports "conn closed" (a connLockError, "safe to retry") rather
// than the read error (measured with storetest.Proxy). Unknown is the safe side: it is never
// retried and never reported as a failure.
func commitOutcomeUnknown(err error) bool {
	if errors.Is(err, pgx.ErrTxCommitRollback) || errors.Is(err, pgx.ErrTxClosed) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40003", strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
			return true
		}
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	return true
}

// Tx runs fn in a SERIALIZABLE transaction and commits it, retrying the whole transaction on
// serialization failures (40001) and deadlocks (40P01).
//
// This is our own loop rather than crdb.ExecuteCtx from cockroach-go: that helper retries
// immediately with no backoff or jitter, bounds only the count (not the time), and does not treat
// 40P01 as retryable, and its savepoint-based ExecuteTx is wrong on PostgreSQL (a statement-level
// 40001 is retried in the same snapshot, and a 40001 at COMMIT is swallowed).
func (db *DB) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := db.tx(ctx, pgx.Serializable, fn)
	return err
}

// TxValue runs fn as Tx does and returns the value it made: the shape of a read handler's one
// query, without a variable declared outside the closure.
func TxValue[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var v T
	err := db.Tx(ctx, func(tx *Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	return v, err
}

// WriteTx is Tx for replicated writes: it returns the last version the transaction took of each
// log it changed.
func (db *DB) WriteTx(ctx context.Context, fn func(tx *Tx) error) ([]LogCommit, error) {
	return db.tx(ctx, pgx.Serializable, fn)
}

// LockedWriteTx is WriteTx at READ COMMITTED, for a transaction that needs no serializable
// snapshot: every row it decides on it has locked first (SELECT … FOR UPDATE, or an UPDATE's own
// lock), and every other change it makes is a commutative increment (stock + q, balance + a).
// Settling a checkout is one: it locks its order, then moves it on or gives its reservation back.
// Run SERIALIZABLE, such a transaction only adds read-write dependencies through PostgreSQL's
// page-granular predicate locks (its order's index page, which concurrent checkouts insert
// into), and aborts other checkouts for nothing: measured, half the retries of 50 parallel
// checkouts. CockroachDB runs it SERIALIZABLE unless READ COMMITTED is enabled there.
func (db *DB) LockedWriteTx(ctx context.Context, fn func(tx *Tx) error) ([]LogCommit, error) {
	return db.tx(ctx, pgx.ReadCommitted, fn)
}

// TenantWriteTx is WriteTx for a write that takes the versions of t's log: it enters that log's
// write queue (queue.go) before its first attempt, where WriteTx finds the queue held only when
// it takes the log, after the statements before it began the transaction, and then rolls that
// attempt back to wait. Under a burst of writes to one store the queue is nearly always held, so
// WriteTx costs each such write a begun and rolled back transaction (round trips, a snapshot)
// before the attempt that counts; this costs none. A write that ends up not taking t's log has
// only waited its turn.
func (db *DB) TenantWriteTx(ctx context.Context, t *schema.Tenant, fn func(tx *Tx) error) ([]LogCommit, error) {
	return db.txGrouped(ctx, pgx.Serializable, []string{t.ID}, db.cfg.GroupWrites > 0, true, fn)
}

func (db *DB) tx(ctx context.Context, iso pgx.TxIsoLevel, fn func(tx *Tx) error) ([]LogCommit, error) {
	return db.txQueued(ctx, iso, nil, fn)
}

// txQueued runs fn as tx does; its first attempt waits for the queues of the logs in first.
func (db *DB) txQueued(ctx context.Context, iso pgx.TxIsoLevel, first []string, fn func(tx *Tx) error) ([]LogCommit, error) {
	return db.txGrouped(ctx, iso, first, false, false, fn)
}

// txGrouped is txQueued; with grouped, first is one store's log, and the transaction joins the
// write that holds its queue, or carries the writes that join while it holds it (group commit,
// queue.go).
func (db *DB) txGrouped(ctx context.Context, iso pgx.TxIsoLevel, first []string, grouped, generic bool, fn func(tx *Tx) error) ([]LogCommit, error) {
	if db.cfg.OnTx != nil {
		defer db.observeTx(time.Now())
	}
	deadline := time.Now().Add(db.cfg.RetryBudget)
	backoff := db.cfg.BaseBackoff
	hold := &queueHold{qs: db.queues}
	queued := first // the logs whose queues the next attempt waits for (queue.go)
	var group *txGroup
	if grouped && db.queues != nil && len(first) == 1 {
		w := &joinedWrite{fn: fn, picked: make(chan struct{}), done: make(chan joinedResult, 1)}
		res, joined, err := db.queues.join(ctx, first[0], deadline, w)
		switch {
		case err != nil:
			return nil, err
		case joined && res.panicked != nil:
			panic(res.panicked)
		case joined && !res.alone:
			return res.commits, res.err
		case joined: // carried by no transaction: run it alone
		default: // the queue is this transaction's: carry the writes that join it
			hold.held, queued = append(hold.held, first[0]), nil
			group = &txGroup{log: first[0], max: db.cfg.GroupWrites}
		}
	}
	// Whatever becomes of this transaction, every write it took is answered; unless answered
	// below, it did not happen here and runs on its own.
	defer group.deliver(false, nil, joinedResult{alone: true})
	for attempt := 0; ; attempt++ {
		if len(queued) > 0 && db.queues != nil {
			if err := hold.wait(ctx, queued, deadline); err != nil {
				return nil, err
			}
		}
		commits, took, err := db.attempt(ctx, iso, generic, fn, hold, group)
		if err == nil {
			if n := group.carried(); n > 0 && db.cfg.OnGroup != nil {
				db.cfg.OnGroup(n)
			}
			group.deliver(true, commits, joinedResult{})
		}
		var unknown *commitUnknown
		if errors.As(err, &unknown) {
			group.deliver(false, nil, joinedResult{err: ErrOutcomeUnknown})
		}
		hold.releaseAll()
		var ahead *aheadError
		if group != nil && errors.As(err, &ahead) && !retryable(err) {
			// A write put off by one of the group's writes failed after another began: the
			// failure is not the next one's to answer. Nothing committed; each runs alone. (A
			// serialization failure is retried as one below, as any other.)
			queued, attempt = group.withLog(took), attempt-1
			group.deliver(false, nil, joinedResult{alone: true})
			group = nil
			continue
		}
		if errors.Is(err, errQueued) {
			// The attempt stopped before taking a log another transaction of this process
			// holds: wait for it (and any log it took before) and run again, not as a retry.
			queued, attempt = group.withLog(took), attempt-1
			continue
		}
		if err == nil {
			if len(commits) > 0 && db.cfg.OnCommit != nil {
				db.cfg.OnCommit(commits)
			}
			return commits, nil
		}
		if unknown != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // the caller gave up while COMMIT was in flight
			}
			// Never retried: the attempt may have committed. Relays in this process learn of
			// its versions, if any, by polling.
			return nil, ErrOutcomeUnknown
		}
		if !retryable(err) {
			return nil, mapError(err)
		}
		queued = group.withLog(took) // a retry waits its turn for the logs the failed attempt took
		if attempt >= db.cfg.MaxRetries {
			return nil, errBudget
		}
		// Full jitter: sleep a random time up to the current backoff.
		sleep := time.Duration(rand.Int64N(int64(backoff)) + 1)
		if time.Now().Add(sleep).After(deadline) {
			return nil, errBudget
		}
		if db.cfg.OnRetry != nil {
			db.cfg.OnRetry()
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, db.cfg.MaxBackoff)
	}
}

// attempt runs fn once in a transaction and commits it. took lists the ids of the logs the
// attempt took versions of, or tried to (errQueued), for the queues of the next attempt. With a
// group, the writes joined to its store's queue run after fn, before the COMMIT (runGroup).
//
// The transaction costs no round trip of its own: its BEGIN goes with its first statement
// (txOpen), its COMMIT with its last (Tx.finish), and one that sent nothing is never begun. Its
// clock (Tx.Now) is read once the round trip that began it is read, after its snapshot: a
// transaction that sees another's writes then has a later time than it, so times (modified
// dates, revision dates) follow the order writes became visible. generic plans the
// transaction's statements as genericPlansSession says, on PostgreSQL.
func (db *DB) attempt(ctx context.Context, iso pgx.TxIsoLevel, generic bool, fn func(tx *Tx) error, hold *queueHold, group *txGroup) (commits []LogCommit, took []string, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx := &Tx{db: db, hold: hold}
	open := &txOpen{ctx: detach(ctx), begin: []string{beginSQL(iso)}, opened: func() {
		if tx.now.IsZero() { // not read while the round trip was (Tx.Now): one clock per write
			tx.now = db.now()
		}
	}}
	if generic && !db.cockroach {
		open.begin = append(open.begin, genericPlansLocal)
	}
	tx.pg = txConn{q: conn, open: open}
	defer tx.pg.end(context.WithoutCancel(detach(ctx)), conn)
	if group != nil {
		tx.pg.fixed = detach(ctx) // joined writes run with this context, not their callers'
	}
	defer func() { took = tx.took }()
	err = fn(tx)
	if tx.queued {
		// Whatever fn made of errQueued, the attempt stopped at a held queue.
		return nil, nil, errQueued
	}
	if err == nil {
		err = tx.pg.beginFailed() // whatever fn made of it
	}
	if err != nil {
		return nil, nil, err
	}
	if group != nil {
		if err := db.runGroup(ctx, tx, group); err != nil {
			return nil, nil, err
		}
	}
	commits, sent, err := tx.finish(ctx)
	if err != nil && sent && !pgconn.SafeToRetry(err) && commitOutcomeUnknown(err) {
		// The COMMIT went out with the batch, and the answer that says whether it ran did not
		// come: whatever failed, the transaction may have committed.
		db.credentialsChanged(tx.creds...)
		return nil, nil, &commitUnknown{err}
	}
	if aerr := tx.pg.failedAhead(); aerr != nil {
		return nil, nil, aerr
	}
	if err != nil {
		return nil, nil, err
	}
	db.credentialsChanged(tx.creds...)
	return commits, nil, nil
}

// beginSQL begins a transaction at the isolation level iso.
func beginSQL(iso pgx.TxIsoLevel) string {
	if iso == "" {
		return "BEGIN"
	}
	return "BEGIN ISOLATION LEVEL " + strings.ToUpper(string(iso))
}

// runGroup runs the writes joined to the group's queue in tx, each from a savepoint (queue.go):
// those of earlier attempts first, then those that joined since, up to the group's bound. An
// error it returns fails the whole attempt.
func (db *DB) runGroup(ctx context.Context, tx *Tx, g *txGroup) error {
	for i := 0; ; i++ {
		if i == len(g.members) {
			more := db.queues.take(g.log, g.max-len(g.members))
			if len(more) == 0 {
				if len(g.members) > 0 {
					tx.sendLaterAhead() // the last write's: its failure is its own (txGrouped)
				}
				return nil
			}
			g.members = append(g.members, more...)
		}
		w := g.members[i]
		w.res = joinedResult{}
		tx.savepoint()
		m := tx.mark()
		if !tx.now.IsZero() {
			tx.now = db.now() // the snapshot is the group's; each write reads the clock after it
		}
		err, panicked := runJoined(w.fn, tx)
		if err := tx.pg.failedAhead(); err != nil {
			return err // not this write's failure: the group's attempt fails (txGrouped)
		}
		switch {
		case err == nil && !tx.queued && panicked == nil:
			continue
		case err != nil && !tx.queued && panicked == nil && retryable(err):
			return err // the transaction cannot go on: the group is retried as one
		}
		if _, rerr := tx.pg.Exec(ctx, `ROLLBACK TO SAVEPOINT joined_write`); rerr != nil {
			return rerr
		}
		tx.restore(m)
		switch {
		case panicked != nil:
			w.res.panicked = panicked
		case tx.queued:
			tx.queued = false
			w.res.alone = true
		default:
			w.res.err = mapError(err)
		}
	}
}

// runJoined runs a joined write's work, catching a panic to raise it again in its caller.
func runJoined(fn func(tx *Tx) error, tx *Tx) (err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return fn(tx), nil
}

// genericPlansSession and noSeqScanSession are how the replicated-write path's statements are
// planned on PostgreSQL: once per connection and statement, with no argument's value in view
// (plan_cache_mode = force_generic_plan), and never as a sequential scan (enable_seqscan = off).
//
// Why. Planning a statement afresh on each execution (force_custom_plan, the pool's default, see
// Open) was 40% of the database's CPU on that path (perf on a backend: GetCachedPlan,
// standard_planner), more than executing it: its statements are keyed point reads and writes
// (a product by id, a log's row, outbox rows of a log above a version), for which a plan made
// with the arguments in view is the plan made without them. Sequential scans are ruled out
// because a generic plan is kept until the table's statistics change, and where nothing
// analyzes tables (autovacuum off) a plan made while a table was nearly empty, a scan, would be
// kept as it grows: the seeding regression that made the pool's default force_custom_plan.
//
// Statements whose best plan depends on an argument's value do not belong in such a transaction,
// or run with the simple protocol (literal arguments, planned each time): freeSlug's LIKE
// pattern, whose prefix bounds an index scan only when the planner sees it.
const (
	genericPlansSession = "SET plan_cache_mode = force_generic_plan"
	noSeqScanSession    = "SET enable_seqscan = off"
)

// genericPlansLocal is genericPlansSession and noSeqScanSession for the current transaction only,
// as one statement: it rides ahead of the transaction's first (txOpen), where a statement is
// sent with the extended protocol, one at a time.
const genericPlansLocal = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)"

// retryable reports whether a whole-transaction retry may succeed.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", "CR000":
			return true
		}
	}
	return false
}

// mapError turns database errors into schema errors at the package boundary. Errors that are
// already *schema.Error and context errors pass through unchanged.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var se *schema.Error
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &schema.Error{Code: schema.CodeNotFound, Message: "not found"}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return &schema.Error{Code: schema.CodeConflict, Message: uniqueMessage(pgErr.ConstraintName)}
		case "23503": // foreign_key_violation
			return &schema.Error{Code: schema.CodeInvalid, Message: "a referenced record does not exist"}
		case "22021": // character_not_in_repertoire: a value that is not UTF-8 (a %FF in a path)
			return &schema.Error{Code: schema.CodeInvalid, Message: "a value is not valid UTF-8 text"}
		case "22P05": // untranslatable_character (a NUL byte in text)
			return &schema.Error{Code: schema.CodeInvalid, Message: "a value holds a character text cannot hold (NUL)"}
		case "22001": // string_data_right_truncation
			return &schema.Error{Code: schema.CodeInvalid, Message: "a value is too long"}
		case "22003": // numeric_value_out_of_range
			return &schema.Error{Code: schema.CodeInvalid, Message: "a number is out of range"}
		case "40003": // statement_completion_unknown (CockroachDB: "result is ambiguous")
			return ErrOutcomeUnknown
		case "57014": // query_canceled (statement timeout)
			return &schema.Error{Code: schema.CodeUnavailable, Message: "the database is busy; retry shortly", RetryAfter: 1}
		}
		if class := pgErr.Code[:min(2, len(pgErr.Code))]; class == "08" || class == "53" || class == "57" {
			return &schema.Error{Code: schema.CodeUnavailable, Message: "the database is unavailable; retry shortly", RetryAfter: 1}
		}
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || pgconn.Timeout(err) {
		return &schema.Error{Code: schema.CodeUnavailable, Message: "the database is unavailable; retry shortly", RetryAfter: 1}
	}
	return fmt.Errorf("store: %w", err)
}

// uniqueMessages words the unique violations of constraints the migrations name explicitly
// (CONSTRAINT <name>: CockroachDB's generated names are not PostgreSQL's); a test checks that
// each exists after migrating.
var uniqueMessages = map[string]string{
	"products_tenant_id_slug_key":   "slug already exists",
	"categories_tenant_id_slug_key": "slug already exists",
	"variants_tenant_id_sku_key":    "sku already exists",
	"currencies_pkey":               "currency already exists",
	"users_tenant_id_login_key":     "login already exists",
	"users_tenant_id_email_key":     "email already exists",
	"tenants_slug_key":              "tenant slug already exists",
	"tenant_domains_pkey":           "domain already belongs to a tenant",
}

func uniqueMessage(constraint string) string {
	if m, ok := uniqueMessages[constraint]; ok {
		return m
	}
	return "already exists"
}
