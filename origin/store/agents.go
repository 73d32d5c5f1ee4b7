package store

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// AgentSession is an agent session as stored (origin/agents): never its token, only the keyed
// hash it is found by. Nothing of it is replicated.
type AgentSession struct {
	ID     string
	UserID schema.UserID
	// AppPassword is the uuid of the application password the session was connected with:
	// revoking the password deletes the session.
	AppPassword    string
	Label          string
	Abilities      []string
	CallsPerMinute int
	CreatedAt      time.Time
	ExpiresAt      time.Time
}

const agentSessionColumns = `id::text, user_id, app_password::text, label, abilities, calls_per_minute, created_at, expires_at`

func scanAgentSession(row pgx.Row) (*AgentSession, error) {
	var s AgentSession
	var calls int32
	if err := row.Scan(&s.ID, &s.UserID, &s.AppPassword, &s.Label, &s.Abilities, &calls, &s.CreatedAt, &s.ExpiresAt); err != nil {
		return nil, err
	}
	s.CallsPerMinute = int(calls)
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	return &s, nil
}

// errAgentPassword refuses a session whose application password vanished while it was made.
var errAgentPassword = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "incorrect_password",
	Message: "The provided password is an invalid application password."}

// CreateAgentSession stores a new session of the user s.UserID (s.Label, s.Abilities,
// s.CallsPerMinute set by the caller) found by tokenHash, bound to the user's application
// password whose hash is passwordHash, expiring lifetime from now; it fills in s's id, password
// and times. A user may hold maxActive unexpired sessions at most: one more is a conflict.
func (db *DB) CreateAgentSession(ctx context.Context, t *schema.Tenant, s *AgentSession, tokenHash, passwordHash []byte,
	lifetime time.Duration, maxActive int) error {
	return db.Tx(ctx, func(tx *Tx) error {
		var active int
		if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM agent_sessions WHERE tenant_id = $1 AND user_id = $2 AND expires_at > $3`,
			t.ID, int64(s.UserID), tx.Now()).Scan(&active); err != nil {
			return err
		}
		if active >= maxActive {
			return &schema.Error{Code: schema.CodeConflict, CMSCode: "agent_too_many_sessions",
				Message: "You have too many active agent sessions; wait for one to expire."}
		}
		s.CreatedAt, s.ExpiresAt = tx.Now(), tx.Now().Add(lifetime)
		err := tx.pg.QueryRow(ctx, `INSERT INTO agent_sessions (tenant_id, user_id, app_password, token_hash, label, abilities,
				calls_per_minute, created_at, expires_at)
			SELECT $1, $2, uuid, $4, $5, $6, $7, $8, $9 FROM app_passwords WHERE tenant_id = $1 AND user_id = $2 AND hash = $3
			RETURNING id::text, app_password::text`,
			t.ID, int64(s.UserID), passwordHash, tokenHash, s.Label, s.Abilities, int32(s.CallsPerMinute), s.CreatedAt, s.ExpiresAt).
			Scan(&s.ID, &s.AppPassword)
		if errors.Is(err, pgx.ErrNoRows) {
			return errAgentPassword
		}
		return err
	})
}

// AgentSessionByToken returns the store's session with this token hash, expired or not, with its
// user as the user is now; nil when there is none. A session of another store is not found here.
func (db *DB) AgentSessionByToken(ctx context.Context, t *schema.Tenant, tokenHash []byte) (*AgentSession, *schema.User, error) {
	var s *AgentSession
	var u *schema.User
	err := db.Tx(ctx, func(tx *Tx) error {
		var err error
		s, err = scanAgentSession(tx.pg.QueryRow(ctx, `SELECT `+agentSessionColumns+` FROM agent_sessions
			WHERE token_hash = $1 AND tenant_id = $2`, tokenHash, t.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			s = nil
			return nil
		}
		if err != nil {
			return err
		}
		u, err = tx.User(ctx, t, s.UserID)
		return err
	})
	if err != nil || s == nil {
		return nil, nil, err
	}
	return s, u, nil
}

// AgentSessionByID returns one of the store's sessions, expired or not.
func (db *DB) AgentSessionByID(ctx context.Context, t *schema.Tenant, id string) (*AgentSession, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("agent session")
	}
	s, err := scanAgentSession(db.pool.QueryRow(ctx, `SELECT `+agentSessionColumns+` FROM agent_sessions
		WHERE tenant_id = $1 AND id = $2`, t.ID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("agent session")
	}
	return s, mapError(err)
}

// DeleteExpiredAgentSessions deletes up to limit sessions that expired before cutoff, with their
// claims and audit.
func (db *DB) DeleteExpiredAgentSessions(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM agent_sessions WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM agent_sessions WHERE expires_at < $1 LIMIT $2)`, cutoff, limit)
	if err != nil {
		return 0, mapError(err)
	}
	return int(tag.RowsAffected()), nil
}

// States of an agent request's claim.
const (
	AgentRequestRunning = "running"
	AgentRequestDone    = "done"
)

// AgentRequest is the claim of one write run through an agent session: its session and request
// id are its key, and a claim is made once, before the run.
type AgentRequest struct {
	SessionID   string
	RequestID   string
	Ability     string
	InputDigest []byte
	State       string
	// LeaseUntil bounds the run: a claim still running past it was cut off, and its outcome is
	// unknown.
	LeaseUntil time.Time
	// Status and Answer are the run's answer, once done.
	Status     int
	Answer     []byte
	CreatedAt  time.Time
	FinishedAt *time.Time
}

const agentRequestColumns = `session_id::text, request_id, ability, input_digest, state, lease_until, status, answer, created_at, finished_at`

func scanAgentRequest(row pgx.Row) (*AgentRequest, error) {
	var r AgentRequest
	var status int32
	if err := row.Scan(&r.SessionID, &r.RequestID, &r.Ability, &r.InputDigest, &r.State, &r.LeaseUntil, &status, &r.Answer,
		&r.CreatedAt, &r.FinishedAt); err != nil {
		return nil, err
	}
	r.Status = int(status)
	r.LeaseUntil, r.CreatedAt = r.LeaseUntil.UTC(), r.CreatedAt.UTC()
	return &r, nil
}

// ClaimAgentRequest claims r's (session, request id) for a run (r.Ability, r.InputDigest and
// r.LeaseUntil set by the caller): it inserts the claim, running, and returns nil; when the id
// was claimed before, it inserts nothing and returns that claim. Of any number of concurrent
// claims of one id, exactly one gets nil.
func (db *DB) ClaimAgentRequest(ctx context.Context, t *schema.Tenant, r *AgentRequest) (*AgentRequest, error) {
	r.State, r.CreatedAt = AgentRequestRunning, db.now()
	err := db.pool.QueryRow(ctx, `INSERT INTO agent_requests (tenant_id, session_id, request_id, ability, input_digest, state, lease_until, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (tenant_id, session_id, request_id) DO NOTHING RETURNING state`,
		t.ID, r.SessionID, r.RequestID, r.Ability, r.InputDigest, r.State, r.LeaseUntil, r.CreatedAt).Scan(&r.State)
	if err == nil {
		return nil, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, mapError(err)
	}
	return db.AgentRequest(ctx, t, r.SessionID, r.RequestID)
}

// AgentRequest returns the claim of a session's request id.
func (db *DB) AgentRequest(ctx context.Context, t *schema.Tenant, sessionID, requestID string) (*AgentRequest, error) {
	r, err := scanAgentRequest(db.pool.QueryRow(ctx, `SELECT `+agentRequestColumns+` FROM agent_requests
		WHERE tenant_id = $1 AND session_id = $2 AND request_id = $3`, t.ID, sessionID, requestID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("agent request")
	}
	return r, mapError(err)
}

// FinishAgentRequest records the answer of a claimed run. A claim already finished keeps its
// first answer.
func (db *DB) FinishAgentRequest(ctx context.Context, t *schema.Tenant, sessionID, requestID string, status int, answer []byte) error {
	_, err := db.pool.Exec(ctx, `UPDATE agent_requests SET state = $4, status = $5, answer = $6, finished_at = $7
		WHERE tenant_id = $1 AND session_id = $2 AND request_id = $3 AND state = $8`,
		t.ID, sessionID, requestID, AgentRequestDone, int32(status), answer, db.now(), AgentRequestRunning)
	return mapError(err)
}

// AgentCall is one audited call of an agent session.
type AgentCall struct {
	At          time.Time
	Ability     string
	RequestID   string
	InputDigest []byte
	Status      int
	Code        string
	Duration    time.Duration
	Replayed    bool
}

// RecordAgentCall adds a call to a session's audit.
func (db *DB) RecordAgentCall(ctx context.Context, t *schema.Tenant, sessionID string, c *AgentCall) error {
	digest := c.InputDigest
	if digest == nil {
		digest = []byte{}
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO agent_calls (tenant_id, session_id, at, ability, request_id, input_digest, status, code,
			duration_ms, replayed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.ID, sessionID, c.At.UTC().Truncate(time.Microsecond), c.Ability, c.RequestID, digest, int32(c.Status), c.Code,
		int32(min(c.Duration.Milliseconds(), 1<<31-1)), c.Replayed)
	return mapError(err)
}

// AgentCalls returns a session's last limit calls, newest first.
func (db *DB) AgentCalls(ctx context.Context, t *schema.Tenant, sessionID string, limit int) ([]*AgentCall, error) {
	out, err := appendRows(ctx, db.pool, []*AgentCall{}, `SELECT at, ability, request_id, input_digest, status, code, duration_ms, replayed
		FROM agent_calls WHERE tenant_id = $1 AND session_id = $2 ORDER BY at DESC, id LIMIT $3`,
		func(row pgx.Row) (*AgentCall, error) {
			var c AgentCall
			var status, ms int32
			if err := row.Scan(&c.At, &c.Ability, &c.RequestID, &c.InputDigest, &status, &c.Code, &ms, &c.Replayed); err != nil {
				return nil, err
			}
			c.At, c.Status, c.Duration = c.At.UTC(), int(status), time.Duration(ms)*time.Millisecond
			return &c, nil
		}, t.ID, sessionID, limit)
	return out, mapError(err)
}

// agentWindow is the window of a session's calls_per_minute.
const agentWindow = time.Minute

func agentThrottleKey(sessionID string) string { return "agent:session:" + sessionID }

// SpendAgentCall counts one call of a session against its calls_per_minute, in the throttles
// every origin shares, with Throttle's sliding window, and refuses it past the limit. It is one
// statement, never a transaction that a burst of calls of one session would have to retry.
func (db *DB) SpendAgentCall(ctx context.Context, t *schema.Tenant, sessionID string, limit int64) (ok bool, retryAfter time.Duration, err error) {
	now := db.now()
	start := now.Truncate(agentWindow)
	var n, prev int64
	err = db.pool.QueryRow(ctx, `WITH hit AS (
			INSERT INTO throttles (tenant_id, key, window_start, count) VALUES ($1, $2, $3, 1)
			ON CONFLICT (tenant_id, key, window_start) DO UPDATE SET count = throttles.count + 1 RETURNING count)
		SELECT hit.count, COALESCE((SELECT p.count FROM throttles p WHERE p.tenant_id = $1 AND p.key = $2 AND p.window_start = $4), 0)
		FROM hit`, t.ID, agentThrottleKey(sessionID), start, start.Add(-agentWindow)).Scan(&n, &prev)
	if err != nil {
		return false, 0, mapError(err)
	}
	ok, retryAfter = slidingWindow(n, prev, limit, now.Sub(start), agentWindow)
	return ok, retryAfter, nil
}

// AgentCallsLeft returns how many more calls a session may make now without spending one: its
// limit less the sliding-window estimate SpendAgentCall judges by, never below zero.
func (db *DB) AgentCallsLeft(ctx context.Context, t *schema.Tenant, sessionID string, limit int64) (int64, error) {
	now := db.now()
	start := now.Truncate(agentWindow)
	var n, prev int64
	err := db.pool.QueryRow(ctx, `SELECT
			COALESCE(max(CASE WHEN window_start = $3 THEN count END), 0),
			COALESCE(max(CASE WHEN window_start = $4 THEN count END), 0)
		FROM throttles WHERE tenant_id = $1 AND key = $2 AND window_start IN ($3, $4)`,
		t.ID, agentThrottleKey(sessionID), start, start.Add(-agentWindow)).Scan(&n, &prev)
	if err != nil {
		return 0, mapError(err)
	}
	used := float64(prev)*(1-float64(now.Sub(start))/float64(agentWindow)) + float64(n)
	return max(0, limit-int64(math.Ceil(used))), nil
}
