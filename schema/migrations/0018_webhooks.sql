-- Webhooks: a store's endpoints, the deliveries owed to them, and every attempt made.
--
-- An event read from the event stream becomes one delivery per subscribed endpoint (unique per
-- endpoint and event, so a redelivered stream message adds nothing), committed before the
-- message is acknowledged. Origins claim due deliveries with a lease (lease_token fences a
-- worker whose lease ran out), send them, and record each attempt. A redelivery asked for by
-- staff, and a test event, are deliveries of their own (source 'redeliver' or 'test').
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id              UUID NOT NULL DEFAULT gen_random_uuid(),
    url             TEXT NOT NULL,
    events          TEXT[] NOT NULL,            -- the kinds delivered; empty: every kind
    ip_allowlist    TEXT[] NOT NULL,            -- CIDRs; empty: any public address
    description     TEXT NOT NULL,
    secret          BYTEA NOT NULL,             -- sealed (AES-GCM) with the server secret
    previous_secret BYTEA,                      -- during a rotation it signs too, until previous_until
    previous_until  TIMESTAMPTZ,
    enabled         BOOL NOT NULL,
    disabled_reason TEXT NOT NULL DEFAULT '',
    disabled_at     TIMESTAMPTZ,
    failing_since   TIMESTAMPTZ,                -- the first failed attempt since the last success
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    tenant_id       UUID NOT NULL,
    id              UUID NOT NULL DEFAULT gen_random_uuid(),
    endpoint_id     UUID NOT NULL,
    event_id        UUID NOT NULL,
    kind            TEXT NOT NULL,
    source          TEXT NOT NULL,              -- event, redeliver, test
    payload         BYTEA NOT NULL,             -- the envelope, byte for byte as signed and sent
    state           TEXT NOT NULL,              -- pending, delivered, failed, cancelled
    attempts        INT4 NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    lease_until     TIMESTAMPTZ,
    lease_token     UUID,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS webhook_deliveries_once ON webhook_deliveries (endpoint_id, event_id) WHERE source = 'event';
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_log ON webhook_deliveries (tenant_id, endpoint_id, created_at DESC);
CREATE INDEX IF NOT EXISTS webhook_deliveries_age ON webhook_deliveries (created_at);

CREATE TABLE IF NOT EXISTS webhook_attempts (
    tenant_id        UUID NOT NULL,
    delivery_id      UUID NOT NULL,
    attempt          INT4 NOT NULL,
    started_at       TIMESTAMPTZ NOT NULL,
    duration_ms      INT4 NOT NULL,
    request_headers  JSONB NOT NULL,
    remote_addr      TEXT NOT NULL DEFAULT '',
    response_status  INT4 NOT NULL DEFAULT 0,   -- 0: no answer (network error, timeout, refused)
    response_headers JSONB NOT NULL DEFAULT '{}',
    response_body    TEXT NOT NULL DEFAULT '', -- the first 4 KiB
    error            TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, delivery_id, attempt)
);
