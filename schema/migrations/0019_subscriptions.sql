-- Subscriptions: variants sold as subscriptions, and the subscriptions their checkouts start.
--
-- A plan belongs to a variant but is kept here, off the variant's row: it is not replicated, so
-- the variant's replicated state and its change encoding stay as they are. A signed-in
-- customer's checkout of a plan's variant starts one subscription per such line, in the
-- transaction that marks the order paid, with the reusable payment method the provider saved.
--
-- Origins' maintenance loops renew subscriptions whose next_attempt_at has come. A renewal
-- claims the row under its lock (renewal_order_id: a pending order holding the stock;
-- next_attempt_at pushed past a lease, so no other origin takes it meanwhile), charges the saved
-- method outside any transaction under the order's id, then settles the order and the
-- subscription under the row lock again. subscription_periods holds the order that paid each
-- period, once: a period can never be paid twice.
CREATE TABLE IF NOT EXISTS subscription_plans (
    tenant_id      UUID NOT NULL,
    variant_id     INT8 NOT NULL,
    interval_unit  TEXT NOT NULL CHECK (interval_unit IN ('day', 'week', 'month', 'year')),
    interval_count INT4 NOT NULL CHECK (interval_count BETWEEN 1 AND 12),
    renewal_limit  INT4 CHECK (renewal_limit >= 1), -- the total number of renewals; NULL: until cancelled
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, variant_id),
    FOREIGN KEY (tenant_id, variant_id) REFERENCES variants (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS subscriptions (
    tenant_id            UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id                   UUID NOT NULL,
    customer_id          INT8 NOT NULL,
    email                TEXT NOT NULL,
    status               TEXT NOT NULL,        -- active, past_due, cancelled, completed
    order_id             UUID NOT NULL,        -- the order that started it
    line_no              INT4 NOT NULL,        -- its line in that order
    order_reference      TEXT NOT NULL,
    last_order_reference TEXT NOT NULL,        -- the order that paid the current period
    variant_id           INT8 NOT NULL,
    interval_unit        TEXT NOT NULL,
    interval_count       INT4 NOT NULL,
    renewal_limit        INT4,
    terms                JSONB NOT NULL,       -- store.SubscriptionTerms: what a renewal orders, fixed at purchase
    payment_method       TEXT NOT NULL,        -- the provider's reusable payment method
    renewals             INT4 NOT NULL DEFAULT 0,
    anchor_at            TIMESTAMPTZ NOT NULL, -- period k starts k intervals after it
    current_period_start TIMESTAMPTZ NOT NULL,
    current_period_end   TIMESTAMPTZ NOT NULL,
    next_attempt_at      TIMESTAMPTZ,          -- when maintenance next acts on it; NULL: never again
    attempts             INT4 NOT NULL DEFAULT 0, -- renewal attempts begun for the next period
    failed_attempts      INT4 NOT NULL DEFAULT 0, -- of those, the declined ones
    renewal_order_id     UUID,                 -- the attempt in flight, if any
    cancel_reason        TEXT NOT NULL DEFAULT '',
    cancel_comment       TEXT NOT NULL DEFAULT '',
    cancelled_at         TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, order_id, line_no)
);
CREATE INDEX IF NOT EXISTS subscriptions_due ON subscriptions (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS subscriptions_customer ON subscriptions (tenant_id, customer_id, created_at);
CREATE INDEX IF NOT EXISTS subscriptions_list ON subscriptions (tenant_id, created_at);

CREATE TABLE IF NOT EXISTS subscription_periods (
    tenant_id       UUID NOT NULL,
    subscription_id UUID NOT NULL,
    period          INT4 NOT NULL, -- 0: the first order's; k: the k-th renewal's
    order_id        UUID NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, subscription_id, period),
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id) ON DELETE CASCADE
);

-- The test provider's saved payment methods (one per authorization that saved one), and which
-- method each of its off-session charges used.
CREATE TABLE IF NOT EXISTS test_payment_methods (
    tenant_id  UUID NOT NULL,
    id         TEXT NOT NULL,
    setup_key  TEXT NOT NULL, -- the idempotency key of the authorization that saved it
    token      TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, setup_key)
);
ALTER TABLE test_payments ADD COLUMN IF NOT EXISTS method_id TEXT NOT NULL DEFAULT '';
