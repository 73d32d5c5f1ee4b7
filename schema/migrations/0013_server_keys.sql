-- Server keys (esk_…): a store's back-office integrations. The plaintext is never stored: a
-- key is found by its keyed hash (HMAC-SHA256 with the server secret), which is unique. last4
-- is the redacted form shown in lists. A rolled key names its successor (rolled_to) and keeps
-- working until its expires_at, which the roll moved to the chosen overlap end.
CREATE TABLE IF NOT EXISTS server_keys (
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           UUID NOT NULL DEFAULT gen_random_uuid(),
    name         TEXT NOT NULL,
    key_hash     BYTEA NOT NULL,
    last4        TEXT NOT NULL,
    scopes       TEXT[] NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ,
    rolled_to    UUID,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS server_keys_hash ON server_keys (key_hash);
