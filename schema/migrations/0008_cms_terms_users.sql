-- CMS terms (categories and tags) in their own per-tenant id space (id_alloc space "term").
-- Names are unique per taxonomy and parent, slugs per taxonomy, as WordPress keeps them. A
-- term's post count is not stored: readers count the published posts carrying it.
CREATE TABLE IF NOT EXISTS terms (
    tenant_id   UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          INT8 NOT NULL,
    taxonomy    TEXT NOT NULL,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    parent_id   INT8 NOT NULL DEFAULT 0,
    version     INT8 NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, taxonomy, slug)
);

-- Staff user profile fields the CMS users routes write.
ALTER TABLE users ADD COLUMN IF NOT EXISTS first_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN IF NOT EXISTS last_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN IF NOT EXISTS nickname TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN IF NOT EXISTS description TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN IF NOT EXISTS url TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN IF NOT EXISTS locale TEXT NOT NULL DEFAULT '';

-- Application passwords: the app id an authorization page approved them for, and the last
-- use and address the introspection route reports.
ALTER TABLE app_passwords ADD COLUMN IF NOT EXISTS app_id TEXT NOT NULL DEFAULT '';
ALTER TABLE app_passwords ADD COLUMN IF NOT EXISTS last_ip TEXT NOT NULL DEFAULT '';
