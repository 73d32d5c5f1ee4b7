-- Commerce state that never leaves the origin: carts, orders, customers, coupons, gift cards,
-- idempotency keys, throttles and the test payment provider's ledger. None of it has a log
-- version or outbox rows; only stock availability crossings are replicated (as variant changes).

-- Per-tenant commerce settings: tax, cart and session lifetimes.
CREATE TABLE IF NOT EXISTS tenant_settings (
    tenant_id          UUID PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    tax_basis_points   INT8 NOT NULL DEFAULT 0,      -- 1075 = 10.75%
    tax_inclusive      BOOL NOT NULL DEFAULT false,
    tax_on_shipping    BOOL NOT NULL DEFAULT false,
    cart_ttl_seconds   INT8 NOT NULL DEFAULT 2592000, -- 30 days idle
    token_ttl_seconds  INT8 NOT NULL DEFAULT 2592000, -- customer sessions: 30 days idle
    updated_at         TIMESTAMPTZ NOT NULL
);

-- Shipping methods, priced per currency (minor units); free over a merchandise subtotal.
CREATE TABLE IF NOT EXISTS shipping_methods (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    code       TEXT NOT NULL,
    name       TEXT NOT NULL,
    prices     JSONB NOT NULL,   -- {"USD": 500}
    free_over  JSONB NOT NULL,   -- {"USD": 10000}: free at or above; absent: never
    position   INT4 NOT NULL,
    active     BOOL NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, code)
);

-- Carts, keyed by the SHA-256 of the client's X-Cart-Session value: a leaked database does not
-- reveal sessions. Items are keyed by variant: adding a variant twice adds to its quantity.
CREATE TABLE IF NOT EXISTS carts (
    tenant_id       UUID NOT NULL,
    session_hash    BYTEA NOT NULL,
    currency        TEXT NOT NULL,
    customer_id     INT8,
    shipping_method TEXT NOT NULL DEFAULT '',
    notes           TEXT NOT NULL DEFAULT '',
    gift_wrap       BOOL NOT NULL DEFAULT false,
    gift_message    TEXT NOT NULL DEFAULT '',
    coupon_codes    TEXT[] NOT NULL DEFAULT '{}',
    gift_card_codes TEXT[] NOT NULL DEFAULT '{}',
    revision        INT8 NOT NULL,            -- increases with every change (ETag of the cart)
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, session_hash)
);
CREATE INDEX IF NOT EXISTS carts_expiry ON carts (expires_at);

CREATE TABLE IF NOT EXISTS cart_items (
    tenant_id    UUID NOT NULL,
    session_hash BYTEA NOT NULL,
    variant_id   INT8 NOT NULL,
    quantity     INT8 NOT NULL,
    added_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, session_hash, variant_id),
    FOREIGN KEY (tenant_id, session_hash) REFERENCES carts (tenant_id, session_hash) ON DELETE CASCADE
);

-- Customers of a store. Passwords: argon2id (memory-hard), encoded with their parameters.
CREATE TABLE IF NOT EXISTS customers (
    tenant_id     UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id            INT8 NOT NULL,
    email         TEXT NOT NULL,   -- lowercased
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, email)
);

-- Customer session tokens, stored hashed; looked up by hash.
CREATE TABLE IF NOT EXISTS customer_tokens (
    tenant_id   UUID NOT NULL,
    token_hash  BYTEA NOT NULL,
    customer_id INT8 NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, token_hash),
    FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS customer_addresses (
    tenant_id   UUID NOT NULL,
    customer_id INT8 NOT NULL,
    id          INT8 NOT NULL,
    address     JSONB NOT NULL,
    is_default  BOOL NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, customer_id, id),
    FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS wishlist_items (
    tenant_id   UUID NOT NULL,
    customer_id INT8 NOT NULL,
    product_id  INT8 NOT NULL,
    added_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, customer_id, product_id),
    FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id) ON DELETE CASCADE
);

-- Coupons, by normalised (uppercase) code. usage_count is taken with a conditional update, so a
-- single-use coupon is redeemed once whatever the concurrency.
CREATE TABLE IF NOT EXISTS coupons (
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    code               TEXT NOT NULL,
    kind               TEXT NOT NULL,          -- percent | fixed
    value              INT8 NOT NULL,          -- basis points, or minor units of currency
    currency           TEXT NOT NULL DEFAULT '', -- fixed coupons: the currency they are in
    free_shipping      BOOL NOT NULL DEFAULT false,
    min_subtotal       INT8 NOT NULL DEFAULT 0,
    product_ids        INT8[] NOT NULL DEFAULT '{}', -- empty: every product
    starts_at          TIMESTAMPTZ,
    ends_at            TIMESTAMPTZ,
    usage_limit        INT8,                    -- null: unlimited
    usage_count        INT8 NOT NULL DEFAULT 0,
    per_customer_limit INT8,
    active             BOOL NOT NULL DEFAULT true,
    created_at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, code)
);

CREATE TABLE IF NOT EXISTS coupon_redemptions (
    tenant_id   UUID NOT NULL,
    code        TEXT NOT NULL,
    order_id    UUID NOT NULL,
    customer_id INT8,
    email       TEXT NOT NULL,
    amount      INT8 NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, code, order_id)
);
CREATE INDEX IF NOT EXISTS coupon_redemptions_customer ON coupon_redemptions (tenant_id, code, email);

-- Gift cards, by the SHA-256 of their normalised code; the API only ever shows the last four.
CREATE TABLE IF NOT EXISTS gift_cards (
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    code_hash       BYTEA NOT NULL,
    last4           TEXT NOT NULL,
    currency        TEXT NOT NULL,
    initial_balance INT8 NOT NULL,
    balance         INT8 NOT NULL CHECK (balance >= 0),
    expires_at      TIMESTAMPTZ,
    active          BOOL NOT NULL DEFAULT true,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, code_hash)
);

CREATE TABLE IF NOT EXISTS gift_card_uses (
    tenant_id  UUID NOT NULL,
    code_hash  BYTEA NOT NULL,
    order_id   UUID NOT NULL,
    amount     INT8 NOT NULL,   -- negative: a refund to the card
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS gift_card_uses_card ON gift_card_uses (tenant_id, code_hash);

-- Orders. The reference is random and unguessable; orders are never replicated.
CREATE TABLE IF NOT EXISTS orders (
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id                 UUID NOT NULL,
    reference          TEXT NOT NULL,
    customer_id        INT8,
    email              TEXT NOT NULL,
    currency           TEXT NOT NULL,
    status             TEXT NOT NULL,   -- pending_payment, paid, payment_failed, cancelled, refunded
    fulfillment_status TEXT NOT NULL DEFAULT 'unfulfilled',
    totals             JSONB NOT NULL,  -- schema.Totals as computed at checkout
    total              INT8 NOT NULL,
    due                INT8 NOT NULL,
    shipping_address   JSONB NOT NULL,
    billing_address    JSONB NOT NULL,
    shipping_method    TEXT NOT NULL,
    notes              TEXT NOT NULL,
    payment_ref        TEXT NOT NULL DEFAULT '',
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, reference)
);
CREATE INDEX IF NOT EXISTS orders_customer ON orders (tenant_id, customer_id, created_at);

CREATE TABLE IF NOT EXISTS order_lines (
    tenant_id  UUID NOT NULL,
    order_id   UUID NOT NULL,
    line_no    INT4 NOT NULL,
    variant_id INT8 NOT NULL,
    product_id INT8 NOT NULL,
    sku        TEXT NOT NULL,
    title      TEXT NOT NULL,
    options    JSONB NOT NULL,
    unit_price INT8 NOT NULL,
    quantity   INT8 NOT NULL,
    discount   INT8 NOT NULL,
    tax        INT8 NOT NULL,
    total      INT8 NOT NULL,
    PRIMARY KEY (tenant_id, order_id, line_no),
    -- Named explicitly: migration 0007 drops it by this name (PostgreSQL's generated name).
    CONSTRAINT order_lines_tenant_id_order_id_fkey FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id) ON DELETE CASCADE
);

-- Idempotency keys of POST requests: the first request's outcome is replayed for the same key
-- and body; another body is refused; a request still running makes the next one wait (409).
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id       UUID NOT NULL,
    key             TEXT NOT NULL,
    scope           TEXT NOT NULL,   -- the route and the caller (cart session or customer)
    request_hash    BYTEA NOT NULL,
    state           TEXT NOT NULL,   -- running | done
    response_status INT4 NOT NULL DEFAULT 0,
    response_body   BYTEA NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Fixed-window counters for the throttles that must hold across origins (logins, tracking,
-- coupon and gift-card checks, newsletter, contact).
CREATE TABLE IF NOT EXISTS throttles (
    tenant_id    UUID NOT NULL,
    key          TEXT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    count        INT8 NOT NULL,
    PRIMARY KEY (tenant_id, key, window_start)
);

-- The built-in test payment provider's ledger: authorizations by idempotency key, so that a
-- retried checkout never charges twice.
CREATE TABLE IF NOT EXISTS test_payments (
    tenant_id       UUID NOT NULL,
    idempotency_key TEXT NOT NULL,
    id              TEXT NOT NULL,
    amount          INT8 NOT NULL,
    currency        TEXT NOT NULL,
    status          TEXT NOT NULL,   -- authorized | captured | voided | declined
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, idempotency_key)
);
