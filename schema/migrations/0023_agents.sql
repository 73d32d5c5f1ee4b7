-- Agent sessions (origin/agents): a staff user connects an agent with an application password
-- and gets a session token (vas_…) that may run a granted set of abilities, as that user, until
-- the session expires. Nothing here is replicated: sessions, claims and the audit stay at the
-- origin.
--
-- A session is bound to the application password it was connected with: revoking that password
-- (or deleting the user, which deletes their passwords) deletes its sessions, their claims and
-- their audit. The token itself is never stored, only its keyed hash (HMAC-SHA256 with the
-- server secret), which it is found by.
CREATE TABLE IF NOT EXISTS agent_sessions (
    tenant_id        UUID NOT NULL,
    id               UUID NOT NULL DEFAULT gen_random_uuid(),
    user_id          INT8 NOT NULL,
    app_password     UUID NOT NULL,
    token_hash       BYTEA NOT NULL,
    label            TEXT NOT NULL,
    abilities        TEXT[] NOT NULL,            -- the granted ability names
    calls_per_minute INT4 NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    expires_at       TIMESTAMPTZ NOT NULL,
    CONSTRAINT agent_sessions_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT agent_sessions_token_hash_key UNIQUE (token_hash),
    CONSTRAINT agent_sessions_app_password_fkey FOREIGN KEY (tenant_id, app_password)
        REFERENCES app_passwords (tenant_id, uuid) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS agent_sessions_user ON agent_sessions (tenant_id, user_id, expires_at);
CREATE INDEX IF NOT EXISTS agent_sessions_expiry ON agent_sessions (expires_at);

-- The claims of the writes run through a session, one per (session, request id), inserted before
-- the ability runs: a duplicate of the request (a retry, a concurrent twin) finds the claim and
-- never runs it again. A finished run keeps its answer (status and body) for replays; a claim
-- still running past its lease was cut off (the origin running it died): its outcome is unknown.
CREATE TABLE IF NOT EXISTS agent_requests (
    tenant_id    UUID NOT NULL,
    session_id   UUID NOT NULL,
    request_id   TEXT NOT NULL,
    ability      TEXT NOT NULL,
    input_digest BYTEA NOT NULL,                 -- SHA-256 of the input's canonical JSON
    state        TEXT NOT NULL,                  -- running, done
    lease_until  TIMESTAMPTZ NOT NULL,
    status       INT4 NOT NULL DEFAULT 0,        -- the answer's HTTP status, once done
    answer       BYTEA,                          -- the answer's body, once done
    created_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ,
    CONSTRAINT agent_requests_pkey PRIMARY KEY (tenant_id, session_id, request_id),
    CONSTRAINT agent_requests_session_fkey FOREIGN KEY (tenant_id, session_id)
        REFERENCES agent_sessions (tenant_id, id) ON DELETE CASCADE
);

-- The audit: every call to execute that named a session, refused or not.
CREATE TABLE IF NOT EXISTS agent_calls (
    tenant_id    UUID NOT NULL,
    session_id   UUID NOT NULL,
    id           UUID NOT NULL DEFAULT gen_random_uuid(),
    at           TIMESTAMPTZ NOT NULL,           -- when the call arrived
    ability      TEXT NOT NULL,                  -- as named by the call ('' when the body had none)
    request_id   TEXT NOT NULL,
    input_digest BYTEA NOT NULL,                 -- empty when the body did not parse
    status       INT4 NOT NULL,
    code         TEXT NOT NULL,                  -- the error's code; '' on success
    duration_ms  INT4 NOT NULL,
    replayed     BOOL NOT NULL,
    CONSTRAINT agent_calls_pkey PRIMARY KEY (tenant_id, session_id, id),
    CONSTRAINT agent_calls_session_fkey FOREIGN KEY (tenant_id, session_id)
        REFERENCES agent_sessions (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS agent_calls_recent ON agent_calls (tenant_id, session_id, at DESC);

-- Staff's list of orders (GET /api/admin/orders, which the agents' orders ability reads): a
-- store's orders by the time they were placed.
CREATE INDEX IF NOT EXISTS orders_placed ON orders (tenant_id, created_at);
