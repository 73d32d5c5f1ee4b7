-- Post-purchase and storefront data.
--
-- Origin-only: returns, newsletter subscribers, contact messages.
-- Replicated (public, with a log version like the catalog): flash sales, storefront sections,
-- approved reviews and per-product social-proof statistics.

-- Return requests (RMAs): line-level, with a reason per line.
-- Status: submitted -> approved | declined; approved -> received -> refunded.
CREATE TABLE IF NOT EXISTS returns (
    tenant_id     UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id            UUID NOT NULL,
    order_id      UUID NOT NULL,
    rma           TEXT NOT NULL,        -- the reference shown to the shopper
    status        TEXT NOT NULL,
    lines         JSONB NOT NULL,       -- [{line_no, variant_id, quantity, reason}]
    note          TEXT NOT NULL,
    staff_note    TEXT NOT NULL DEFAULT '',
    refund_amount INT8 NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, rma)
);
CREATE INDEX IF NOT EXISTS returns_order ON returns (tenant_id, order_id);
CREATE INDEX IF NOT EXISTS returns_status ON returns (tenant_id, status, created_at);

-- Newsletter subscriptions, one per email (lowercased): subscribing twice changes nothing.
CREATE TABLE IF NOT EXISTS newsletter_subscribers (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, email)
);

-- Contact form messages, stored for the merchant.
CREATE TABLE IF NOT EXISTS contact_messages (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id         UUID NOT NULL,
    name       TEXT NOT NULL,
    email      TEXT NOT NULL,
    subject    TEXT NOT NULL,
    message    TEXT NOT NULL,
    client_ip  TEXT NOT NULL,
    handled    BOOL NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS contact_messages_created ON contact_messages (tenant_id, created_at);

-- Product reviews. Only approved reviews are replicated. One review per customer per product.
CREATE TABLE IF NOT EXISTS reviews (
    tenant_id   UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          INT8 NOT NULL,
    product_id  INT8 NOT NULL,
    customer_id INT8 NOT NULL,
    author      TEXT NOT NULL,
    rating      INT8 NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    status      TEXT NOT NULL,          -- pending | approved | rejected
    verified    BOOL NOT NULL,          -- the customer bought the product
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, product_id, customer_id)
);
CREATE INDEX IF NOT EXISTS reviews_status ON reviews (tenant_id, status, created_at);

-- Flash sales: a percentage off listed products between two instants. Replicated; edges apply
-- them at read time and expire cached bodies at each start and end.
CREATE TABLE IF NOT EXISTS flash_sales (
    tenant_id   UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          INT8 NOT NULL,
    slug        TEXT NOT NULL,
    title       TEXT NOT NULL,
    percent_off INT8 NOT NULL,          -- basis points: 2500 = 25% off
    product_ids INT8[] NOT NULL,
    starts_at   TIMESTAMPTZ NOT NULL,
    ends_at     TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, slug)
);

-- Merchant-defined storefront sections (hero, collection, banner...), ordered. Replicated.
CREATE TABLE IF NOT EXISTS storefront_sections (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id         INT8 NOT NULL,
    kind       TEXT NOT NULL,
    title      TEXT NOT NULL,
    position   INT4 NOT NULL,
    content    JSONB NOT NULL,
    active     BOOL NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    version    INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

-- Social proof per product, computed at the origin from orders and approved reviews, and
-- replicated in batches of changed values only (never per request, never per order).
CREATE TABLE IF NOT EXISTS product_stats (
    tenant_id     UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    product_id    INT8 NOT NULL,
    purchases_7d  INT8 NOT NULL,
    purchases_30d INT8 NOT NULL,
    review_count  INT8 NOT NULL,
    rating_sum    INT8 NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    version       INT8 NOT NULL,
    PRIMARY KEY (tenant_id, product_id)
);
