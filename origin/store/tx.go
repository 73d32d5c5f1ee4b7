package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"vitrine/schema"
)

// PlatformLogID is the log_versions key of the platform log (the tenant registry).
const PlatformLogID = "00000000-0000-0000-0000-000000000000"

// Tx is one attempt of a transaction. It is not safe for concurrent use, and must not be kept
// after the function given to DB.Tx returns.
type Tx struct {
	pg     txConn
	db     *DB
	now    time.Time
	logs   []*logState
	events []Event
	// hold is the attempt's write queues (queue.go); took the ids of the logs it took or tried
	// to take, in order.
	hold   *queueHold
	took   []string
	queued bool // the attempt stopped at a held queue (errQueued)
	// later are writes sent with finish's batch (execLater).
	later []laterExec
	// creds are the tenants whose users this attempt changed (credentialsChanged).
	creds []string
}

// laterExec is a statement execLater put off.
type laterExec struct {
	sql  string
	args []any
}

// execLater puts a write off to finish, which sends it first in its batch: one round trip fewer
// for a write nothing in the transaction reads back. Its error fails the transaction.
func (tx *Tx) execLater(sql string, args ...any) {
	tx.later = append(tx.later, laterExec{sql, args})
}

// savepoint begins the next write of a group: it moves the writes put off so far (execLater: the
// next write may read what they change) and a savepoint ahead of the next statement, whose round
// trip carries them (txConn.ahead).
func (tx *Tx) savepoint() {
	tx.sendLaterAhead()
	tx.pg.ahead.stmts = append(tx.pg.ahead.stmts, laterExec{sql: `SAVEPOINT joined_write`})
}

// sendLaterAhead moves the writes put off so far ahead of the next statement.
func (tx *Tx) sendLaterAhead() {
	if tx.pg.ahead == nil {
		tx.pg.ahead = &aheadState{}
	}
	tx.pg.ahead.stmts = append(tx.pg.ahead.stmts, tx.later...)
	clear(tx.later)
	tx.later = tx.later[:0]
}

// txMark is what a Tx had recorded at a savepoint (mark), for restore to put back when the
// transaction rolls back to it.
type txMark struct {
	logs    int
	used    []int64 // of the first logs logs
	changes []int
	events  int
	later   int
}

// mark records the Tx's state at a savepoint.
func (tx *Tx) mark() txMark {
	m := txMark{logs: len(tx.logs), events: len(tx.events), later: len(tx.later)}
	for _, l := range tx.logs {
		m.used = append(m.used, l.used)
		m.changes = append(m.changes, len(l.changes))
	}
	return m
}

// restore puts back the state mark recorded, after a ROLLBACK TO SAVEPOINT: the versions taken,
// changes, events and deferred writes since are forgotten. (A log first taken since stays in
// the attempt's queues until it ends; its row lock went with the savepoint.)
func (tx *Tx) restore(m txMark) {
	clear(tx.logs[m.logs:])
	tx.logs = tx.logs[:m.logs]
	for i, l := range tx.logs {
		l.used = m.used[i]
		clear(l.changes[m.changes[i]:])
		l.changes = l.changes[:m.changes[i]]
	}
	clear(tx.events[m.events:])
	tx.events = tx.events[:m.events]
	clear(tx.later[m.later:])
	tx.later = tx.later[:m.later]
}

// logState tracks the versions one transaction takes of one log.
type logState struct {
	id      string // log_versions key: the tenant id, or PlatformLogID
	name    string // the change's Log: the tenant slug, or schema.PlatformLog
	base    int64  // the log's version before this transaction
	used    int64  // versions taken so far
	changes []schema.Change
}

// Event is a domain event bound for the event outbox and, from there, webhooks.
type Event struct {
	ID       string          `json:"id"`
	TenantID string          `json:"-"`
	Tenant   string          `json:"tenant"`
	Kind     string          `json:"type"`
	Created  time.Time       `json:"created_at"`
	Data     json.RawMessage `json:"data"`
}

// credentialsChanged records that the attempt changes t's users: once it commits, what this
// process remembers of t's verified application passwords is forgotten (credcache.go).
func (tx *Tx) credentialsChanged(t *schema.Tenant) {
	for _, id := range tx.creds {
		if id == t.ID {
			return
		}
	}
	tx.creds = append(tx.creds, t.ID)
}

// Now is the transaction's clock reading: every timestamp a transaction writes is this one (in a
// group, each write's own: runGroup). It is read after the transaction's snapshot was taken, once
// the round trip that began the transaction was read (txOpen.opened). Read before the
// transaction's first statement, it begins the transaction on its own round trip first, as every
// transaction used to. Callers read a statement's results before they read the clock.
func (tx *Tx) Now() time.Time {
	if tx.now.IsZero() && tx.pg.open != nil {
		if !tx.pg.begun() {
			tx.pg.sendPending(tx.pg.open.ctx) // a failure is kept: the next statement returns it
		}
		if tx.now.IsZero() {
			tx.now = tx.db.now() // the beginning failed, or its round trip is being read
		}
	}
	return tx.now
}

// logFor returns the version tracker of a log, locking its row on first use: the lock is held
// until commit, so versions of a log are taken in commit order, and finish writes the row once
// with the last version taken. (It used to reserve a block of versions with an UPDATE and give
// the unused part back in finish: two new row versions per write instead of one.)
func (tx *Tx) logFor(ctx context.Context, id, name string) (*logState, error) {
	if l := tx.takenLog(id); l != nil {
		return l, nil
	}
	if err := tx.claimLog(id); err != nil {
		return nil, err
	}
	var version int64
	err := tx.pg.QueryRow(ctx, lockLogSQL, id).Scan(&version)
	return tx.addLog(id, name, version, err)
}

// lockLogSQL locks a log's row for the transaction and reads its version. Under READ COMMITTED
// (LockedWriteTx) a locking read that waited returns the row as its holder committed it.
const lockLogSQL = `SELECT version FROM log_versions WHERE log_id = $1 FOR UPDATE`

// takenLog returns the tracker of a log this attempt took already, or nil.
func (tx *Tx) takenLog(id string) *logState {
	for _, l := range tx.logs {
		if l.id == id {
			return l
		}
	}
	return nil
}

// claimLog enters the log's write queue before the attempt touches its row: errQueued when
// another transaction of this process holds it.
func (tx *Tx) claimLog(id string) error {
	tx.took = append(tx.took, id)
	if tx.queued || !tx.hold.try(id) {
		tx.queued = true
		return errQueued // another transaction of this process is taking this log: wait for it
	}
	return nil
}

// addLog records a log whose row lockLogSQL read (err is the read's error).
func (tx *Tx) addLog(id, name string, version int64, err error) (*logState, error) {
	if err == pgx.ErrNoRows {
		return nil, &schema.Error{Code: schema.CodeNotFound, Message: "unknown log " + name}
	}
	if err != nil {
		return nil, err
	}
	l := &logState{id: id, name: name, base: version}
	tx.logs = append(tx.logs, l)
	return l, nil
}

func (tx *Tx) tenantLog(ctx context.Context, t *schema.Tenant) (*logState, error) {
	return tx.logFor(ctx, t.ID, t.Slug)
}

func (tx *Tx) platformLog(ctx context.Context) (*logState, error) {
	return tx.logFor(ctx, PlatformLogID, schema.PlatformLog)
}

// writeEntity records the replicated state of one entity. oldVis lists the visibilities at which
// the entity had state before this write, newVis those it has after (empty for a deletion). A
// visibility the entity leaves gets a tombstone first, so a reader of that subject never keeps a
// stale state. setVersion receives the version the entity takes (the last one of its changes)
// before stateFor encodes it at each new visibility.
func (tx *Tx) writeEntity(l *logState, kind schema.Kind, id string, oldVis, newVis []schema.Visibility,
	setVersion func(int64), stateFor func(schema.Visibility) any) error {
	tombs := schema.Left(oldVis, newVis)
	n := int64(len(tombs) + len(newVis))
	if n == 0 {
		return nil
	}
	if l.used+n > schema.MaxChangesPerTxn {
		return fmt.Errorf("store: transaction changes more than %d entities of log %s: split it", schema.MaxChangesPerTxn, l.name)
	}
	first := l.base + l.used + 1
	l.used += n
	last := first + n - 1
	if setVersion != nil {
		setVersion(last)
	}
	v := first
	for _, vis := range tombs {
		c := schema.NewChange(l.name, kind, id, vis, nil)
		c.Version = v
		v++
		l.changes = append(l.changes, c)
	}
	for _, vis := range newVis {
		c := schema.NewChange(l.name, kind, id, vis, stateFor(vis))
		c.Version = v
		v++
		l.changes = append(l.changes, c)
	}
	return nil
}

// emit queues a domain event for the event outbox.
func (tx *Tx) emit(t *schema.Tenant, kind string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic("store: marshal event: " + err.Error())
	}
	tx.events = append(tx.events, Event{ID: NewUUID(), TenantID: t.ID, Tenant: t.Slug, Kind: kind, Created: tx.Now(), Data: b})
}

// finish settles each log at the last version taken, stamps transaction bounds on the changes,
// writes both outboxes and commits. It sends its statements and the COMMIT as one batch: one
// round trip whatever the number of logs. sent reports whether the COMMIT went out: when it did
// and err says the connection failed, the transaction may have committed. A transaction that
// sent no statement and has none to send was never begun, and is not committed.
func (tx *Tx) finish(ctx context.Context) (commits []LogCommit, sent bool, err error) {
	b := &pgx.Batch{}
	for _, w := range tx.later {
		b.Queue(w.sql, w.args...)
	}
	for _, l := range tx.logs {
		if l.used == 0 {
			continue // the log was locked, never written: its row stays as it was
		}
		first, last := l.base+1, l.base+l.used
		b.Queue(`UPDATE log_versions SET version = $2 WHERE log_id = $1`, l.id, last)
		var (
			versions = make([]int64, len(l.changes))
			keys     = make([]string, len(l.changes))
			bodies   = make([][]byte, len(l.changes))
			deleted  = make([]bool, len(l.changes))
		)
		for i := range l.changes {
			c := &l.changes[i]
			c.TxnFirst, c.TxnLast = first, last
			versions[i], keys[i], bodies[i], deleted[i] = c.Version, c.Key(), c.Encode(), c.Deleted
		}
		b.Queue(`
			INSERT INTO repl_outbox (log_id, version, txn_first, txn_last, key, body, deleted, created_at)
			SELECT $1, v, $2, $3, k, b, d, $4
			FROM unnest($5::INT8[], $6::TEXT[], $7::BYTEA[], $8::BOOL[]) AS r(v, k, b, d)`,
			l.id, first, last, tx.Now(), versions, keys, bodies, deleted)
		commits = append(commits, LogCommit{Log: l.name, Version: last})
	}
	if len(tx.events) > 0 {
		ids := make([]string, len(tx.events))
		tenants := make([]string, len(tx.events))
		kinds := make([]string, len(tx.events))
		payloads := make([][]byte, len(tx.events))
		for i, e := range tx.events {
			ids[i], tenants[i], kinds[i] = e.ID, e.TenantID, e.Kind
			payloads[i], _ = json.Marshal(e)
		}
		idArg, err := uuidArray(ids)
		if err != nil {
			return nil, false, err
		}
		tenantArg, err := uuidArray(tenants)
		if err != nil {
			return nil, false, err
		}
		b.Queue(`
			INSERT INTO event_outbox (id, tenant_id, kind, payload, created_at)
			SELECT i, t, k, p, $1 FROM unnest($2::UUID[], $3::UUID[], $4::TEXT[], $5::BYTEA[]) AS r(i, t, k, p)`,
			tx.Now(), idArg, tenantArg, kinds, payloads)
	}
	if b.Len() == 0 && !tx.pg.begun() && (tx.pg.ahead == nil || len(tx.pg.ahead.stmts) == 0) {
		return nil, false, nil
	}
	if err := tx.pg.beginFailed(); err != nil {
		return nil, false, err
	}
	n := b.Len()
	b.Queue(`COMMIT`)
	br := tx.pg.SendBatch(ctx, b)
	defer br.Close()
	for range n {
		if _, err := br.Exec(); err != nil {
			return nil, true, err
		}
	}
	tag, err := br.Exec()
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback // the transaction had failed: COMMIT rolled it back
	}
	if err == nil {
		err = br.Close()
	}
	if err != nil {
		return nil, true, err
	}
	return commits, true, nil
}

// allocIDs takes n consecutive integer ids from a tenant's id space and returns the first.
func (tx *Tx) allocIDs(ctx context.Context, tenantID, space string, n int64) (int64, error) {
	var next int64
	err := tx.pg.QueryRow(ctx, `
		INSERT INTO id_alloc (tenant_id, space, next_id) VALUES ($1, $2, $3 + 1)
		ON CONFLICT (tenant_id, space) DO UPDATE SET next_id = id_alloc.next_id + $3
		RETURNING next_id`, tenantID, space, n).Scan(&next)
	if err != nil {
		return 0, err
	}
	first := next - n
	if next-1 > schema.MaxExposedID {
		return 0, fmt.Errorf("store: id space %s of tenant %s is exhausted", space, tenantID)
	}
	return first, nil
}

// uuidArray returns ids as a uuid[] parameter that pgx encodes in binary at once. Bound as a
// []string, a uuid[] parameter first fails pgx's binary encode plan, which pgx v5.12 plans again
// at every execution because it memoizes no failed plan, and then goes as text: 3.2 µs against
// 0.45 µs per parameter (BenchmarkUUIDArrayParam), and in a profile of the freshness bench's
// price writes pgx's parameter building fell from 14% to 2% of the origin's CPU (README,
// "Twentieth session"). An id that is not a UUID is invalid input here instead of a database
// error.
func uuidArray(ids []string) ([]pgtype.UUID, error) {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		if err := out[i].Scan(id); err != nil {
			return nil, &schema.Error{Code: schema.CodeInvalid, Message: fmt.Sprintf("%q is not a UUID", id)}
		}
	}
	return out, nil
}

// NewUUID returns a random (version 4) UUID in text form.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("store: crypto/rand: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
