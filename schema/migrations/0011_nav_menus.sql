-- Navigation menus are terms of taxonomy nav_menu in the terms table (migration 0008). What
-- WordPress keeps in options and theme mods: a menu's auto_add flag (nav_menu_options), and the
-- menu assigned to each menu location (nav_menu_locations: one menu per location). Menus are
-- not replicated: the origin reads them here.
ALTER TABLE terms ADD COLUMN IF NOT EXISTS auto_add BOOL NOT NULL DEFAULT false;

CREATE TABLE IF NOT EXISTS menu_locations (
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    location  TEXT NOT NULL,
    menu_id   INT8 NOT NULL,
    PRIMARY KEY (tenant_id, location)
);
