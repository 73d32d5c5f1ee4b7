-- Per-tenant edge rate limit: requests per minute per client address on the tenant's public
-- routes; 0 uses the edge's configured default. Replicated with the registry entry.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS rate_limit INT8 NOT NULL DEFAULT 0;
