-- oEmbed proxy cache: what other sites' oEmbed endpoints answered, shared by every origin
-- process. A row is one proxied request (its key hashes the request's arguments) and lives until
-- expires_at (a day by default); a fresh row answers without any outbound request. Local URLs
-- and failures are never stored. Expired rows are deleted when a tenant stores a new one.
CREATE TABLE IF NOT EXISTS oembed_cache (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,               -- hex SHA-256 of the normalised arguments
    url        TEXT NOT NULL,               -- the URL embedded, for operators
    body       BYTEA NOT NULL,              -- the response, as JSON
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
