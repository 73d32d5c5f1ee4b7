package store

import (
	"bytes"
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/payment"
	"vitrine/schema"
)

// IdempotencyState is what BeginIdempotent found for a key.
type IdempotencyState int

// Idempotency states.
const (
	// IdempotencyNew: the key was free; the caller now holds it and must Finish or Release it.
	IdempotencyNew IdempotencyState = iota
	// IdempotencyDone: the key's request finished; replay its recorded response.
	IdempotencyDone
	// IdempotencyRunning: a request with the key is still running (answer 409).
	IdempotencyRunning
	// IdempotencyMismatch: the key was used with another request body (answer 422).
	IdempotencyMismatch
	// IdempotencyTakeover: the key's request stopped without finishing (its process died) past
	// the lease; the caller now holds the key and should resume from its Resource.
	IdempotencyTakeover
)

// IdempotencyRecord is the recorded outcome of an idempotent request.
type IdempotencyRecord struct {
	Status   int
	Body     []byte
	Resource string
	// Claimed is when this request claimed the key (IdempotencyNew, IdempotencyTakeover): it
	// identifies the claim for EndIdempotentLease.
	Claimed time.Time
}

// IdempotencyKeyTTL is how long a finished key is remembered.
const IdempotencyKeyTTL = 24 * time.Hour

// ValidateIdempotencyKey checks an Idempotency-Key header value: 1 to 255 visible ASCII
// characters (UUIDs and random strings are typical).
func ValidateIdempotencyKey(k string) error {
	if len(k) == 0 || len(k) > 255 {
		return schema.Invalid("Idempotency-Key", "Idempotency-Key must be 1 to 255 visible ASCII characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return schema.Invalid("Idempotency-Key", "Idempotency-Key must be 1 to 255 visible ASCII characters")
		}
	}
	return nil
}

// BeginIdempotent claims key in scope for a request whose body hashes to requestHash. A key
// whose request is running for longer than lease is taken over.
//
// A claim whose COMMIT has an unknown outcome is resolved here: the claim is stamped with a
// time fixed before the first attempt, and the transaction runs again; if the first one
// committed, the row it left (running, that time, that body) is recognised as this request's
// own. The locking read waits for a COMMIT still in flight on the server.
func (db *DB) BeginIdempotent(ctx context.Context, t *schema.Tenant, scope, key string, requestHash []byte, lease time.Duration) (IdempotencyState, IdempotencyRecord, error) {
	var state IdempotencyState
	var rec IdempotencyRecord
	claim := db.now()
	claimOnce := func(tx *Tx) error {
		state, rec = IdempotencyNew, IdempotencyRecord{Claimed: claim}
		var hash []byte
		var st string
		var created, expires time.Time
		err := tx.pg.QueryRow(ctx, `SELECT request_hash, state, response_status, response_body, resource, created_at, expires_at
			FROM idempotency_keys WHERE tenant_id = $1 AND scope = $2 AND key = $3 FOR UPDATE`, t.ID, scope, key).
			Scan(&hash, &st, &rec.Status, &rec.Body, &rec.Resource, &created, &expires)
		switch {
		case err == pgx.ErrNoRows:
			tag, err := tx.pg.Exec(ctx, `INSERT INTO idempotency_keys (tenant_id, key, scope, request_hash, state, created_at, expires_at)
				VALUES ($1, $2, $3, $4, 'running', $5, $6) ON CONFLICT DO NOTHING`,
				t.ID, key, scope, requestHash, claim, claim.Add(IdempotencyKeyTTL))
			if err == nil && tag.RowsAffected() == 0 {
				state = IdempotencyRunning // another request inserted it a moment ago
			}
			return err
		case err != nil:
			return err
		case st == "running" && created.Equal(claim) && bytes.Equal(hash, requestHash):
			// This request's own claim, committed by an attempt whose outcome was unknown.
			if rec.Resource != "" {
				state = IdempotencyTakeover
			}
			return nil
		case !expires.After(tx.Now()):
			// Forgotten: the key starts over.
			rec = IdempotencyRecord{Claimed: claim}
			_, err := tx.pg.Exec(ctx, `UPDATE idempotency_keys SET request_hash = $4, state = 'running', response_status = 0,
				response_body = '', resource = '', created_at = $5, expires_at = $6 WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
				t.ID, scope, key, requestHash, claim, claim.Add(IdempotencyKeyTTL))
			return err
		case !bytes.Equal(hash, requestHash):
			state = IdempotencyMismatch
			return nil
		case st == "done":
			state = IdempotencyDone
			return nil
		case tx.Now().Sub(created) < lease:
			state = IdempotencyRunning
			return nil
		}
		state = IdempotencyTakeover
		_, err = tx.pg.Exec(ctx, `UPDATE idempotency_keys SET created_at = $4 WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
			t.ID, scope, key, claim)
		return err
	}
	var err error
	for range 3 {
		if err = db.Tx(ctx, claimOnce); schema.ErrorCode(err) != schema.CodeOutcomeUnknown {
			break
		}
	}
	return state, rec, err
}

// EndIdempotentLease ends at once the lease of a key this request claimed at claimed (its
// IdempotencyRecord.Claimed) and still holds: the next request with the key takes it over and
// resumes from its resource, instead of waiting for the lease. A request whose last write has
// an unknown outcome calls it, so that the client's retry finds out what happened. The UPDATE
// waits for that write's transaction if it is still committing (it locked the same row).
func (db *DB) EndIdempotentLease(ctx context.Context, t *schema.Tenant, scope, key string, claimed time.Time) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `UPDATE idempotency_keys SET created_at = $5
			WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND state = 'running' AND created_at = $4`,
			t.ID, scope, key, claimed, time.Unix(0, 0).UTC())
		return err
	})
}

// SetIdempotentResource records the resource a running idempotent request created, in the
// transaction that creates it.
func (tx *Tx) SetIdempotentResource(ctx context.Context, t *schema.Tenant, scope, key, resource string) error {
	_, err := tx.pg.Exec(ctx, `UPDATE idempotency_keys SET resource = $4 WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
		t.ID, scope, key, resource)
	return err
}

// FinishIdempotent records the response of a key's request; later requests with the key and
// the same body get it replayed.
func (db *DB) FinishIdempotent(ctx context.Context, t *schema.Tenant, scope, key string, status int, body []byte) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `UPDATE idempotency_keys SET state = 'done', response_status = $4, response_body = $5
			WHERE tenant_id = $1 AND scope = $2 AND key = $3`, t.ID, scope, key, status, body)
		return err
	})
}

// ReleaseIdempotent forgets a key whose request failed in a way worth retrying (the database or
// the payment provider was unavailable), so that a retry with the same key runs again.
func (db *DB) ReleaseIdempotent(ctx context.Context, t *schema.Tenant, scope, key string) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND scope = $2 AND key = $3`, t.ID, scope, key)
		return err
	})
}

// DeleteExpiredIdempotencyKeys deletes up to limit forgotten keys and returns how many.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, limit int) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE (tenant_id, scope, key) IN
		(SELECT tenant_id, scope, key FROM idempotency_keys WHERE expires_at < now() AND state = 'done' LIMIT $1)`, limit)
	if err != nil {
		return 0, mapError(err)
	}
	return int(tag.RowsAffected()), nil
}

// TestPayment is one authorization in the built-in test payment provider's ledger.
type TestPayment struct {
	ID       string
	Key      string
	Amount   int64
	Currency string
	Status   string
	// Method is the saved payment method an off-session charge used (empty for an
	// authorization at checkout).
	Method string
}

// TestAuthorize records an authorization in the test provider's ledger under key, unless one
// exists: a second call with the same key returns the first call's result and charges nothing.
func (db *DB) TestAuthorize(ctx context.Context, tenantID, key, id string, amount int64, currency, status string) (payment.LedgerEntry, error) {
	var p TestPayment
	err := db.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.pg.Exec(ctx, `INSERT INTO test_payments (tenant_id, idempotency_key, id, amount, currency, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT DO NOTHING`, tenantID, key, id, amount, currency, status, tx.Now()); err != nil {
			return err
		}
		p.Key = key
		return tx.pg.QueryRow(ctx, `SELECT id, amount, currency, status FROM test_payments WHERE tenant_id = $1 AND idempotency_key = $2`,
			tenantID, key).Scan(&p.ID, &p.Amount, &p.Currency, &p.Status)
	})
	return payment.LedgerEntry{ID: p.ID, Status: p.Status}, err
}

// TestVoid voids the test provider's authorization under key, if it is authorized.
func (db *DB) TestVoid(ctx context.Context, tenantID, key string) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `UPDATE test_payments SET status = 'voided', updated_at = $3
			WHERE tenant_id = $1 AND idempotency_key = $2 AND status = 'authorized'`, tenantID, key, tx.Now())
		return err
	})
}

// TestRefund records a refund of the test provider's authorization under paymentKey, once
// under key: a repeated key returns the first refund. It refuses (ok false) a refund of a
// payment that is not authorized or whose refunds would exceed its amount.
func (db *DB) TestRefund(ctx context.Context, tenantID, paymentKey, key, id string, amount int64) (string, bool, error) {
	var out string
	var ok bool
	err := db.Tx(ctx, func(tx *Tx) error {
		out, ok = "", false
		if err := tx.pg.QueryRow(ctx, `SELECT id FROM test_refunds WHERE tenant_id = $1 AND idempotency_key = $2`, tenantID, key).Scan(&out); err == nil {
			ok = true
			return nil
		} else if err != pgx.ErrNoRows {
			return err
		}
		var paid, refunded int64
		var status string
		err := tx.pg.QueryRow(ctx, `SELECT amount, status FROM test_payments WHERE tenant_id = $1 AND idempotency_key = $2 FOR UPDATE`,
			tenantID, paymentKey).Scan(&paid, &status)
		if err == pgx.ErrNoRows || (err == nil && status != "authorized" && status != "captured") {
			return nil
		} else if err != nil {
			return err
		}
		if err := tx.pg.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0) FROM test_refunds WHERE tenant_id = $1 AND payment_key = $2`,
			tenantID, paymentKey).Scan(&refunded); err != nil {
			return err
		}
		if amount <= 0 || refunded+amount > paid {
			return nil
		}
		if _, err := tx.pg.Exec(ctx, `INSERT INTO test_refunds (tenant_id, idempotency_key, payment_key, id, amount, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, tenantID, key, paymentKey, id, amount, tx.Now()); err != nil {
			return err
		}
		out, ok = id, true
		return nil
	})
	return out, ok, mapError(err)
}

// TestPayments lists the test provider's ledger of a tenant (for tests and the demo).
func (db *DB) TestPayments(ctx context.Context, tenantID string) ([]TestPayment, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT id, idempotency_key, amount, currency, status, method_id FROM test_payments
		WHERE tenant_id = $1 ORDER BY created_at, id`, func(row pgx.Row) (TestPayment, error) {
		var p TestPayment
		err := row.Scan(&p.ID, &p.Key, &p.Amount, &p.Currency, &p.Status, &p.Method)
		return p, err
	}, tenantID)
	return out, mapError(err)
}

// Throttle counts one hit of key and reports whether the client is within limit hits per
// window. It holds across every origin process, as the counts live in the database.
//
// The limit slides: hits are counted in fixed windows, and a hit is judged on the current
// window's count plus the previous window's weighted by how much of it still lies within one
// window of now. A fixed window alone lets a client spend the limit twice across a window's
// boundary (and lets a test that happens to straddle one see its count reset). Refused hits
// count too, so a client that keeps hammering stays refused.
func (db *DB) Throttle(ctx context.Context, t *schema.Tenant, key string, limit int64, window time.Duration) (ok bool, retryAfter time.Duration, err error) {
	err = db.Tx(ctx, func(tx *Tx) error {
		start := tx.Now().Truncate(window)
		var n, prev int64
		if err := tx.pg.QueryRow(ctx, `INSERT INTO throttles (tenant_id, key, window_start, count) VALUES ($1, $2, $3, 1)
			ON CONFLICT (tenant_id, key, window_start) DO UPDATE SET count = throttles.count + 1 RETURNING count`,
			t.ID, key, start).Scan(&n); err != nil {
			return err
		}
		if err := tx.pg.QueryRow(ctx, `SELECT COALESCE(max(count), 0) FROM throttles
			WHERE tenant_id = $1 AND key = $2 AND window_start = $3`,
			t.ID, key, start.Add(-window)).Scan(&prev); err != nil {
			return err
		}
		ok, retryAfter = slidingWindow(n, prev, limit, tx.Now().Sub(start), window)
		return nil
	})
	return ok, retryAfter, err
}

// slidingWindow judges a hit by the sliding-window estimate prev*(1-elapsed/window) + n, where n
// counts the hits of the current window (this one included), prev those of the previous window
// and elapsed how far into the current window now is. When the hit is refused, retryAfter is how
// long until one more hit would be allowed, if none came in between.
func slidingWindow(n, prev, limit int64, elapsed, window time.Duration) (ok bool, retryAfter time.Duration) {
	w := float64(window)
	left := 1 - float64(elapsed)/w // the previous window's weight now
	if float64(prev)*left+float64(n) <= float64(limit) {
		return true, 0
	}
	// The next hit would make the current count n+1. Within this window it is allowed once
	// prev*(1-t/window) <= limit-(n+1); past it, the current count becomes the previous one
	// and the next hit is allowed once n*(1-t'/window) <= limit-1.
	var at float64 // when the next hit is allowed, from the start of the current window
	if room := float64(limit - n - 1); room >= 0 && prev > 0 {
		at = w * (1 - room/float64(prev))
	} else {
		at = w + w*(1-float64(limit-1)/float64(n))
	}
	retryAfter = time.Duration(at) - elapsed
	return false, max(retryAfter, time.Second)
}

// DeleteOldThrottles deletes throttle windows that ended before cutoff.
func (db *DB) DeleteOldThrottles(ctx context.Context, cutoff time.Time) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM throttles WHERE window_start < $1`, cutoff)
	return mapError(err)
}
