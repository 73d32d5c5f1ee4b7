-- Cluster identity. The epoch is written once by migrate; it names the database the replication
-- stream belongs to, so a reset database is never mistaken for the one a stream was built from.
CREATE TABLE IF NOT EXISTS cluster_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Tenant registry. Replicated on the platform log so edges resolve hosts without the origin.
CREATE TABLE IF NOT EXISTS tenants (
    id          UUID PRIMARY KEY,
    slug        TEXT NOT NULL CONSTRAINT tenants_slug_key UNIQUE,
    name        TEXT NOT NULL,
    base_url    TEXT NOT NULL,
    shard       INT4 NOT NULL DEFAULT 0,
    status      TEXT NOT NULL DEFAULT 'active',
    timezone    TEXT NOT NULL DEFAULT 'UTC',
    currencies  TEXT[] NOT NULL,
    low_stock_threshold INT8 NOT NULL DEFAULT 5,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     INT8 NOT NULL
);

-- Custom domains: one host names one tenant.
CREATE TABLE IF NOT EXISTS tenant_domains (
    domain    TEXT CONSTRAINT tenant_domains_pkey PRIMARY KEY,
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS tenant_domains_tenant ON tenant_domains (tenant_id);

-- Per-log version: one small row per tenant (and one for the platform registry, keyed by the
-- nil UUID). A transaction changing k replicated rows adds k here and takes those k versions.
CREATE TABLE IF NOT EXISTS log_versions (
    log_id  UUID PRIMARY KEY,
    version INT8 NOT NULL
);

-- Replication outbox: one row per replicated change, written in the changing transaction. The
-- relay publishes rows in version order and deletes them once the stream holds them.
CREATE TABLE IF NOT EXISTS repl_outbox (
    log_id    UUID NOT NULL,
    version   INT8 NOT NULL,
    txn_first INT8 NOT NULL,
    txn_last  INT8 NOT NULL,
    key       TEXT NOT NULL,   -- "<pub|priv>.<kind>.<id>", the subject below the log
    body      BYTEA NOT NULL,  -- the encoded schema.Change
    deleted   BOOL NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (log_id, version)
);

-- Event outbox: domain events for webhooks. Never bumps a log version; never reaches an edge.
CREATE TABLE IF NOT EXISTS event_outbox (
    id         UUID PRIMARY KEY,
    tenant_id  UUID NOT NULL,
    kind       TEXT NOT NULL,
    payload    BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS event_outbox_created ON event_outbox (created_at, id);

-- Relay leases: one holder per name at a time; the token increases with every new holder and
-- fences the bookkeeping of a holder that lost its lease.
CREATE TABLE IF NOT EXISTS relay_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    token      INT8 NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- Per-tenant integer id allocator. Spaces: 'post' (posts, pages, media, blocks, navigation,
-- revisions), 'term', 'user', 'catalog' (products, variants, categories).
CREATE TABLE IF NOT EXISTS id_alloc (
    tenant_id UUID NOT NULL,
    space     TEXT NOT NULL,
    next_id   INT8 NOT NULL,
    PRIMARY KEY (tenant_id, space)
);

-- Staff users of a tenant (CMS authors and catalog managers).
CREATE TABLE IF NOT EXISTS users (
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           INT8 NOT NULL,
    login        TEXT NOT NULL,
    email        TEXT NOT NULL,
    display_name TEXT NOT NULL,
    slug         TEXT NOT NULL,
    role         TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    version      INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT users_tenant_id_login_key UNIQUE (tenant_id, login),
    CONSTRAINT users_tenant_id_email_key UNIQUE (tenant_id, email)
);

-- Application passwords: a keyed hash of the password (HMAC-SHA256 with the server secret), looked
-- up by hash. They are high-entropy, so a fast keyed hash is the right tool; a slow KDF would make
-- every wrong password a CPU sink.
CREATE TABLE IF NOT EXISTS app_passwords (
    tenant_id    UUID NOT NULL,
    uuid         UUID NOT NULL,
    user_id      INT8 NOT NULL,
    name         TEXT NOT NULL,
    hash         BYTEA NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    PRIMARY KEY (tenant_id, uuid),
    UNIQUE (tenant_id, hash),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS categories (
    tenant_id   UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          INT8 NOT NULL,
    parent_id   INT8 NOT NULL DEFAULT 0,
    slug        TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    position    INT4 NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT categories_tenant_id_slug_key UNIQUE (tenant_id, slug)
);

CREATE TABLE IF NOT EXISTS products (
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           INT8 NOT NULL,
    slug         TEXT NOT NULL,
    title        TEXT NOT NULL,
    description  TEXT NOT NULL,
    status       TEXT NOT NULL,
    featured     BOOL NOT NULL,
    prices       JSONB NOT NULL,  -- {"USD": 1999}: minor units per currency
    images       JSONB NOT NULL,
    category_ids INT8[] NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    version      INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT products_tenant_id_slug_key UNIQUE (tenant_id, slug)
);

CREATE TABLE IF NOT EXISTS variants (
    tenant_id    UUID NOT NULL,
    id           INT8 NOT NULL,
    product_id   INT8 NOT NULL,
    sku          TEXT NOT NULL,
    title        TEXT NOT NULL,
    options      JSONB NOT NULL,
    prices       JSONB NOT NULL,  -- overrides of the product's prices
    stock        INT8 NOT NULL,   -- never replicated; availability is
    availability TEXT NOT NULL,
    position     INT4 NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    version      INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT variants_tenant_id_sku_key UNIQUE (tenant_id, sku),
    FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS variants_product ON variants (tenant_id, product_id);

CREATE TABLE IF NOT EXISTS currencies (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    code       TEXT NOT NULL,
    name       TEXT NOT NULL,
    symbol     TEXT NOT NULL,
    exponent   INT4 NOT NULL,
    rate       TEXT NOT NULL,  -- canonical decimal string (schema.ParseRate)
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    version    INT8 NOT NULL,
    CONSTRAINT currencies_pkey PRIMARY KEY (tenant_id, code)
);

-- CMS posts (and, later, the other records of the post id space).
CREATE TABLE IF NOT EXISTS posts (
    tenant_id      UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id             INT8 NOT NULL,
    type           TEXT NOT NULL,
    slug           TEXT NOT NULL,
    status         TEXT NOT NULL,
    password       TEXT NOT NULL,
    title          TEXT NOT NULL,
    content        TEXT NOT NULL,
    excerpt        TEXT NOT NULL,
    author_id      INT8 NOT NULL,
    featured_media INT8 NOT NULL,
    comment_status TEXT NOT NULL,
    ping_status    TEXT NOT NULL,
    format         TEXT NOT NULL,
    meta           JSONB NOT NULL,
    sticky         BOOL NOT NULL,
    template       TEXT NOT NULL,
    categories     INT8[] NOT NULL,
    tags           INT8[] NOT NULL,
    date_gmt       TIMESTAMPTZ NOT NULL,
    date_floating  BOOL NOT NULL,
    modified_gmt   TIMESTAMPTZ NOT NULL,
    version        INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS posts_slug ON posts (tenant_id, type, slug);
