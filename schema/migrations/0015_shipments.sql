-- Shipments. A label purchase (one or several parcels) is recorded pending under the order's row
-- lock, so that concurrent purchases never ship more units than were ordered; the carrier is
-- called outside any transaction, one call per parcel keyed by the purchase and the parcel; the
-- shipments are then written and the order's fulfilment status moved. A retry with the same
-- Idempotency-Key finds its purchase.
CREATE TABLE IF NOT EXISTS label_purchases (
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id              UUID NOT NULL DEFAULT gen_random_uuid(),
    order_id        UUID NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    kind            TEXT NOT NULL,  -- outbound, return
    parcels         JSONB NOT NULL, -- [{lines: [{line, quantity}], weight_grams, service}]
    status          TEXT NOT NULL,  -- pending, done, failed
    failure         TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, order_id, idempotency_key)
);

CREATE TABLE IF NOT EXISTS shipments (
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id              UUID NOT NULL DEFAULT gen_random_uuid(),
    order_id        UUID NOT NULL,
    purchase_id     UUID NOT NULL,
    parcel          INT4 NOT NULL,
    kind            TEXT NOT NULL,
    carrier         TEXT NOT NULL,
    service         TEXT NOT NULL,
    tracking_number TEXT NOT NULL,
    zone            INT4 NOT NULL,
    rate            INT8 NOT NULL,
    currency        TEXT NOT NULL,
    weight_grams    INT8 NOT NULL,
    lines           JSONB NOT NULL,
    status          TEXT NOT NULL,
    events          JSONB NOT NULL,
    label_pdf       BYTEA NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, purchase_id, parcel)
);
CREATE INDEX IF NOT EXISTS shipments_order ON shipments (tenant_id, order_id);
