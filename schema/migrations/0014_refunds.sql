-- Refunds of orders. A refund is recorded pending under the order's row lock before the payment
-- provider is called, so that concurrent refunds of one order see each other and never exceed
-- what was paid; the provider is called outside any transaction with the refund's id as its
-- idempotency key; the refund then succeeds (money moved, gift cards credited, stock restocked)
-- or fails (its amount is free again). A retry with the same Idempotency-Key finds its refund.
CREATE TABLE IF NOT EXISTS refunds (
    tenant_id        UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id               UUID NOT NULL DEFAULT gen_random_uuid(),
    order_id         UUID NOT NULL,
    idempotency_key  TEXT NOT NULL,
    request_hash     TEXT NOT NULL,
    amount           INT8 NOT NULL CHECK (amount > 0),
    card_amount      INT8 NOT NULL CHECK (card_amount >= 0),
    gift_card_amount INT8 NOT NULL CHECK (gift_card_amount >= 0),
    lines            JSONB NOT NULL DEFAULT '[]',
    restock          BOOL NOT NULL DEFAULT false,
    reason           TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL,  -- pending, succeeded, failed
    provider_ref     TEXT NOT NULL DEFAULT '',
    failure          TEXT NOT NULL DEFAULT '',
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, order_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS refunds_order ON refunds (tenant_id, order_id);

-- The test provider's refunds, each once under its idempotency key.
CREATE TABLE IF NOT EXISTS test_refunds (
    tenant_id       UUID NOT NULL,
    idempotency_key TEXT NOT NULL,
    payment_key     TEXT NOT NULL,
    id              TEXT NOT NULL,
    amount          INT8 NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, idempotency_key)
);
