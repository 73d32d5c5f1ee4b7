-- Label batches: one row per batch and one per order in it. The work is queued on a JetStream
-- work-queue stream, one message per order; any origin's worker buys that order's labels under
-- the batch's idempotency key ("batch:<id>"), so a redelivered message (an origin died before
-- acknowledging it) finds the purchase it started instead of buying again.
CREATE TABLE IF NOT EXISTS label_batches (
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id              UUID NOT NULL DEFAULT gen_random_uuid(),
    idempotency_key TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    service         TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, idempotency_key)
);

CREATE TABLE IF NOT EXISTS label_batch_items (
    tenant_id  UUID NOT NULL,
    batch_id   UUID NOT NULL,
    position   INT4 NOT NULL,
    reference  TEXT NOT NULL,
    status     TEXT NOT NULL,  -- queued, done, failed
    error      TEXT NOT NULL DEFAULT '',
    shipments  JSONB NOT NULL DEFAULT '[]',
    queued_at  TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, batch_id, position)
);
