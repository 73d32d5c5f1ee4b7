-- A store's active block theme (schema.Tenant.Theme): the stylesheet of a built-in theme, '' for
-- the default one. Replicated with the registry entry.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS theme TEXT NOT NULL DEFAULT '';
