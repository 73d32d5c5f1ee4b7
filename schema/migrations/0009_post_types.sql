-- Post types beyond posts (pages, reusable blocks, menu items, navigation) share the posts
-- table and its id space. Pages and menu items have a parent and a menu order; what only one
-- type holds (a menu item's link fields, a block's pattern categories) is in extra, a JSON
-- object decoded into schema.Post (schema.PostExtra).
ALTER TABLE posts ADD COLUMN IF NOT EXISTS parent INT8 NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN IF NOT EXISTS menu_order INT8 NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN IF NOT EXISTS extra JSONB NOT NULL DEFAULT '{}';
