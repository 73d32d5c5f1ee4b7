package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// This file is the relay's view of the database: the outboxes, the logs and the leases. The relay
// package declares the interface it needs; *DB satisfies it.

// LogRef, OutboxRow and EventRow are the schema types the relay reads.
type (
	LogRef    = schema.LogRef
	OutboxRow = schema.OutboxRow
	EventRow  = schema.EventRow
)

const logRefSelect = `SELECT lv.log_id::TEXT, COALESCE(t.slug, '` + schema.PlatformLog + `'), COALESCE(t.shard, 0), lv.version
	FROM log_versions lv LEFT JOIN tenants t ON t.id = lv.log_id`

func scanLogRef(row pgx.Row) (LogRef, error) {
	var r LogRef
	err := row.Scan(&r.ID, &r.Name, &r.Shard, &r.Version)
	return r, err
}

// Logs returns every log (the platform log and each tenant's) with its current version.
func (db *DB) Logs(ctx context.Context) ([]LogRef, error) {
	refs, err := appendRows(ctx, db.pool, nil, logRefSelect+` ORDER BY lv.log_id`, scanLogRef)
	return refs, mapError(err)
}

// PendingLogs returns the logs that have rows in the replication outbox.
//
// It reads no more of the outbox than one index probe per log with unpublished versions. The
// outbox is a queue (every row is deleted once published), and its heap and index keep every row
// deleted since the last vacuum: SELECT DISTINCT log_id FROM repl_outbox, a sequential scan, read
// 3,611 pages on every relay round after 50,000 writes to one store with autovacuum off, growing
// with every write. The relay's record says where each log's live rows start: whatever settled a
// log's digest at version v (SettleOutbox, ReplaceSlots) deleted its rows through v in the same
// transaction, and rows are only added above the log's version. So only a log whose version is
// above its record can have rows, and the probe for them seeks past every deleted one.
func (db *DB) PendingLogs(ctx context.Context) ([]LogRef, error) {
	refs, err := appendRows(ctx, db.pool, nil, logRefSelect+` LEFT JOIN repl_digests d ON d.log_id = lv.log_id
		WHERE lv.version > COALESCE(d.version, 0)
			AND EXISTS (SELECT 1 FROM repl_outbox o WHERE o.log_id = lv.log_id AND o.version > COALESCE(d.version, 0))
		ORDER BY lv.log_id`,
		scanLogRef)
	return refs, mapError(err)
}

// OutboxRows returns up to limit outbox rows of a log with versions above after, in version
// order.
func (db *DB) OutboxRows(ctx context.Context, logID string, after int64, limit int) ([]OutboxRow, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT version, txn_first, txn_last, key, body, deleted, created_at FROM repl_outbox
		WHERE log_id = $1 AND version > $2 ORDER BY version LIMIT $3`, func(row pgx.Row) (OutboxRow, error) {
		var r OutboxRow
		err := row.Scan(&r.Version, &r.TxnFirst, &r.TxnLast, &r.Key, &r.Body, &r.Deleted, &r.CreatedAt)
		return r, err
	}, logID, after, limit)
	return out, mapError(err)
}

// OutboxRowsWithSlots is OutboxRows with, in the same query, the published versions of the
// rows' keys that SlotVersions would return: what the relay reads to publish a batch.
//
// Each row's slot is a correlated subquery, one primary-key probe per row, rather than a join:
// PostgreSQL planned the join as a hash join over every slot of the log (tens of thousands for a
// store of 10,000 products: ~40,000 index fetches per relay round, whatever the number of rows),
// which made the database's cost of publishing one write grow with the store's size.
func (db *DB) OutboxRowsWithSlots(ctx context.Context, logID string, after int64, limit int) ([]OutboxRow, map[string]int64, error) {
	slots := map[string]int64{}
	var out []OutboxRow
	err := eachRow(ctx, db.pool, `SELECT o.version, o.txn_first, o.txn_last, o.key, o.body, o.deleted, o.created_at,
			(SELECT s.version FROM repl_slots s WHERE s.log_id = o.log_id AND s.key = o.key)
		FROM repl_outbox o
		WHERE o.log_id = $1 AND o.version > $2 ORDER BY o.version LIMIT $3`, func(row pgx.Row) error {
		var r OutboxRow
		var slot *int64
		if err := row.Scan(&r.Version, &r.TxnFirst, &r.TxnLast, &r.Key, &r.Body, &r.Deleted, &r.CreatedAt, &slot); err != nil {
			return err
		}
		if slot != nil {
			slots[r.Key] = *slot
		}
		out = append(out, r)
		return nil
	}, logID, after, limit)
	if err != nil {
		return nil, nil, mapError(err)
	}
	return out, slots, nil
}

// DeleteOutbox deletes a log's outbox rows up to and including version through, once the stream
// holds them. It deletes nothing unless the lease is still held with the token.
func (db *DB) DeleteOutbox(ctx context.Context, logID string, through int64, lease, holder string, token int64) (bool, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM repl_outbox WHERE log_id = $1 AND version <= $2
		AND EXISTS (SELECT 1 FROM relay_leases WHERE name = $3 AND holder = $4 AND token = $5)`, logID, through, lease, holder, token)
	if err != nil {
		return false, mapError(err)
	}
	return tag.RowsAffected() > 0, nil
}

// AcquireLease takes the named lease for holder if it is free, expired, or already the holder's,
// and returns its new fencing token. It returns 0 when another holder has it.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (int64, error) {
	var token int64
	err := db.pool.QueryRow(ctx, `INSERT INTO relay_leases (name, holder, token, expires_at)
		VALUES ($1, $2, 1, now() + ($3::INT8 * INTERVAL '1 millisecond'))
		ON CONFLICT (name) DO UPDATE SET holder = $2, token = relay_leases.token + 1,
			expires_at = now() + ($3::INT8 * INTERVAL '1 millisecond')
		WHERE relay_leases.expires_at < now() OR relay_leases.holder = $2
		RETURNING token`, name, holder, ttl.Milliseconds()).Scan(&token)
	if err == pgx.ErrNoRows {
		return 0, nil
	}
	return token, mapError(err)
}

// RenewLease extends a held lease. It reports false when the token is no longer current (another
// holder took the lease).
func (db *DB) RenewLease(ctx context.Context, name, holder string, token int64, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE relay_leases SET expires_at = now() + ($4::INT8 * INTERVAL '1 millisecond')
		WHERE name = $1 AND holder = $2 AND token = $3`, name, holder, token, ttl.Milliseconds())
	if err != nil {
		return false, mapError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease gives a lease up so that another holder can take it at once.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string, token int64) error {
	_, err := db.pool.Exec(ctx, `UPDATE relay_leases SET expires_at = now() - INTERVAL '1 second'
		WHERE name = $1 AND holder = $2 AND token = $3`, name, holder, token)
	return mapError(err)
}

// PendingEvents returns up to limit events in creation order.
func (db *DB) PendingEvents(ctx context.Context, limit int) ([]EventRow, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT e.id::TEXT, COALESCE(t.slug, ''), e.tenant_id::TEXT, e.kind, e.payload, e.created_at FROM event_outbox e
		LEFT JOIN tenants t ON t.id = e.tenant_id ORDER BY e.created_at, e.id LIMIT $1`, func(row pgx.Row) (EventRow, error) {
		var e EventRow
		err := row.Scan(&e.ID, &e.Tenant, &e.TenantID, &e.Kind, &e.Payload, &e.Created)
		return e, err
	}, limit)
	return out, mapError(err)
}

// DeleteEvents deletes published events.
func (db *DB) DeleteEvents(ctx context.Context, ids []string) error {
	idArg, err := uuidArray(ids)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `DELETE FROM event_outbox WHERE id = ANY($1::UUID[])`, idArg)
	return mapError(err)
}

// Lease describes the holder of a relay lease.
type Lease struct {
	Holder    string
	Token     int64
	ExpiresAt time.Time
}

// Lease returns the named lease's current holder (a zero Lease when nobody ever held it).
func (db *DB) Lease(ctx context.Context, name string) (Lease, error) {
	var l Lease
	err := db.pool.QueryRow(ctx, `SELECT holder, token, expires_at FROM relay_leases WHERE name = $1`, name).Scan(&l.Holder, &l.Token, &l.ExpiresAt)
	if err == pgx.ErrNoRows {
		return Lease{}, nil
	}
	return l, mapError(err)
}

// TakeLease takes the named lease for holder whoever holds it, with a new fencing token: the
// operator's `vitrine replica rebuild` uses it, since a relay refusing a stream of another epoch
// keeps its lease. The previous holder's next renewal fails and it stands by.
func (db *DB) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (int64, error) {
	var token int64
	err := db.pool.QueryRow(ctx, `INSERT INTO relay_leases (name, holder, token, expires_at)
		VALUES ($1, $2, 1, now() + ($3::INT8 * INTERVAL '1 millisecond'))
		ON CONFLICT (name) DO UPDATE SET holder = $2, token = relay_leases.token + 1,
			expires_at = now() + ($3::INT8 * INTERVAL '1 millisecond')
		RETURNING token`, name, holder, ttl.Milliseconds()).Scan(&token)
	return token, mapError(err)
}
