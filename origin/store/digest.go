package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// This file is the relay's record of what the state stream holds (migration 0011): the live
// entity states it published for each log it adopted, and the log's schema.LogDigest over them,
// settled through a version. Only the lease holder writes it, after the stream acknowledged what
// it describes.

// DigestState and SlotChange are the schema types the relay exchanges with this file.
type (
	DigestState = schema.DigestState
	SlotChange  = schema.SlotChange
)

// LogDigestState returns the settled digest of a log; ok is false when the relay has not adopted
// the log yet.
func (db *DB) LogDigestState(ctx context.Context, logID string) (DigestState, bool, error) {
	var s DigestState
	var pubSum, privSum int64
	err := db.pool.QueryRow(ctx, `SELECT version, pub_count, pub_sum, priv_count, priv_sum FROM repl_digests WHERE log_id = $1`, logID).
		Scan(&s.Version, &s.Digest.PubCount, &pubSum, &s.Digest.PrivCount, &privSum)
	if err == pgx.ErrNoRows {
		return DigestState{}, false, nil
	}
	if err != nil {
		return DigestState{}, false, mapError(err)
	}
	s.Digest.PubSum, s.Digest.PrivSum = uint64(pubSum), uint64(privSum)
	return s, true, nil
}

// SlotVersions returns the published versions of the live states of a log among keys.
func (db *DB) SlotVersions(ctx context.Context, logID string, keys []string) (map[string]int64, error) {
	out := make(map[string]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err := eachRow(ctx, db.pool, `SELECT key, version FROM repl_slots WHERE log_id = $1 AND key = ANY($2::TEXT[])`, func(row pgx.Row) error {
		var k string
		var v int64
		if err := row.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = v
		return nil
	}, logID, keys)
	return out, mapError(err)
}

// SettleOutbox records what the stream acknowledged for a log: the slot changes, and the digest
// after them settled at version through (from settled, the version the digest was settled
// through before; 0 with no digest yet). It deletes the log's outbox rows through that version
// in the same transaction. Nothing is written unless the lease is held with the token and the
// log's digest is still settled at from; ok reports whether it was written.
//
// The transaction is two round trips: one batch of every statement (with the BEGIN, and the
// lease's locking read first), and COMMIT, or ROLLBACK when the lease or the digest says no: the
// statements after the checks then ran for nothing, and are undone.
func (db *DB) SettleOutbox(ctx context.Context, logID string, from, through int64, changes []SlotChange, d schema.LogDigest,
	lease, holder string, token int64) (ok bool, err error) {
	var upKeys, delKeys []string
	var upVersions []int64
	for _, c := range changes {
		if c.Deleted {
			delKeys = append(delKeys, c.Key)
		} else {
			upKeys, upVersions = append(upKeys, c.Key), append(upVersions, c.Version)
		}
	}
	_, err = db.tx(ctx, pgx.Serializable, func(tx *Tx) error {
		b := &pgx.Batch{}
		b.Queue(leaseIdleSQL)
		b.Queue(holdsLeaseSQL, lease, holder, token)
		b.Queue(`
			INSERT INTO repl_digests (log_id, version, pub_count, pub_sum, priv_count, priv_sum)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (log_id) DO UPDATE SET version = excluded.version, pub_count = excluded.pub_count,
				pub_sum = excluded.pub_sum, priv_count = excluded.priv_count, priv_sum = excluded.priv_sum
			WHERE repl_digests.version = $7`,
			logID, through, d.PubCount, int64(d.PubSum), d.PrivCount, int64(d.PrivSum), from)
		if len(delKeys) > 0 {
			b.Queue(`DELETE FROM repl_slots WHERE log_id = $1 AND key = ANY($2::TEXT[])`, logID, delKeys)
		}
		if len(upKeys) > 0 {
			b.Queue(`
				INSERT INTO repl_slots (log_id, key, version)
				SELECT $1, k, v FROM unnest($2::TEXT[], $3::INT8[]) AS r(k, v)
				ON CONFLICT (log_id, key) DO UPDATE SET version = excluded.version`, logID, upKeys, upVersions)
		}
		// Rows through from are gone already: whatever settled the digest at from (this or
		// ReplaceSlots) deleted them in its transaction, and rows are only ever added above the
		// log's version. Bounded below, the deletion seeks to its first row instead of walking the
		// index entries of every row deleted before it that no vacuum has removed yet.
		b.Queue(`DELETE FROM repl_outbox WHERE log_id = $1 AND version > $2 AND version <= $3`, logID, from, through)
		br := tx.pg.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		var one int
		held := true
		if err := br.QueryRow().Scan(&one); err == pgx.ErrNoRows {
			held = false
		} else if err != nil {
			return err
		}
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		if !held || tag.RowsAffected() == 0 {
			return errNotSettled // undo the rest
		}
		return nil
	})
	if errors.Is(err, errNotSettled) {
		return false, nil
	}
	return err == nil, err
}

// errNotSettled rolls back a SettleOutbox whose lease or digest check failed.
var errNotSettled = errors.New("store: outbox not settled")

// ReplaceSlots records a snapshot of a log published to the stream: its live states become
// exactly states (key to version), its digest d settled at version, and its outbox rows through
// version are deleted, in one transaction, only while the lease is held with the token.
func (db *DB) ReplaceSlots(ctx context.Context, logID string, states map[string]int64, d schema.LogDigest, version int64,
	lease, holder string, token int64) (ok bool, err error) {
	keys := make([]string, 0, len(states))
	versions := make([]int64, 0, len(states))
	for k, v := range states {
		keys, versions = append(keys, k), append(versions, v)
	}
	err = db.Tx(ctx, func(tx *Tx) error {
		ok = false
		if held, err := tx.holdsLease(ctx, lease, holder, token); err != nil || !held {
			return err
		}
		if _, err := tx.pg.Exec(ctx, `DELETE FROM repl_slots WHERE log_id = $1`, logID); err != nil {
			return err
		}
		const chunk = 5000
		for i := 0; i < len(keys); i += chunk {
			j := min(i+chunk, len(keys))
			if _, err := tx.pg.Exec(ctx, `INSERT INTO repl_slots (log_id, key, version)
				SELECT $1, k, v FROM unnest($2::TEXT[], $3::INT8[]) AS r(k, v)`, logID, keys[i:j], versions[i:j]); err != nil {
				return err
			}
		}
		if _, err := tx.pg.Exec(ctx, `
			INSERT INTO repl_digests (log_id, version, pub_count, pub_sum, priv_count, priv_sum)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (log_id) DO UPDATE SET version = excluded.version, pub_count = excluded.pub_count,
				pub_sum = excluded.pub_sum, priv_count = excluded.priv_count, priv_sum = excluded.priv_sum`,
			logID, version, d.PubCount, int64(d.PubSum), d.PrivCount, int64(d.PrivSum)); err != nil {
			return err
		}
		if _, err := tx.pg.Exec(ctx, `DELETE FROM repl_outbox WHERE log_id = $1 AND version <= $2`, logID, version); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

// holdsLeaseSQL reads the named lease's row if holder holds it with token, locking it until the
// transaction ends so that no new holder takes it meanwhile.
const holdsLeaseSQL = `SELECT 1 FROM relay_leases WHERE name = $1 AND holder = $2 AND token = $3 FOR UPDATE`

// leaseIdleSQL bounds how long a transaction holding the lease's row lock may sit idle between
// its statements. A relay frozen inside one (a SIGSTOP, a stalled VM, a partition keeping its
// connection open) would otherwise keep the lease's row locked for as long as it stays frozen,
// and a standby's take-over, which updates that row, would wait on the lock however long ago
// the lease expired: fail-over would depend on the frozen holder. Past the bound the server ends
// the frozen session, its transaction rolls back (nothing of it was written) and the lock goes.
// A healthy relay sends its next statement within milliseconds; one the bound cuts off sees an
// error and settles again, as after any failed settle.
const leaseIdleSQL = `SET LOCAL idle_in_transaction_session_timeout = '1s'`

// holdsLease reports whether the named lease is held by holder with token, locking its row until
// the transaction ends so that no new holder takes it meanwhile (bounded by leaseIdleSQL).
func (tx *Tx) holdsLease(ctx context.Context, lease, holder string, token int64) (bool, error) {
	if _, err := tx.pg.Exec(ctx, leaseIdleSQL); err != nil {
		return false, err
	}
	var one int
	err := tx.pg.QueryRow(ctx, holdsLeaseSQL, lease, holder, token).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}
