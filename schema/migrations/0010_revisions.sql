-- Revisions and autosaves of CMS records (schema/revisions.go). Their ids come from the post id
-- space (id_alloc space 'post'); parent_id is the record they copy. They are private and never
-- replicated: the origin reads them here. An author keeps one autosave per record: writers lock
-- the record's row first (a user deleted with reassignment can leave the heir two, as WordPress).
CREATE TABLE IF NOT EXISTS post_revisions (
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           INT8 NOT NULL,
    parent_id    INT8 NOT NULL,
    autosave     BOOL NOT NULL,
    author_id    INT8 NOT NULL,
    title        TEXT NOT NULL,
    content      TEXT NOT NULL,
    excerpt      TEXT NOT NULL,
    meta         JSONB NOT NULL,
    date_gmt     TIMESTAMPTZ NOT NULL,
    modified_gmt TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS post_revisions_parent ON post_revisions (tenant_id, parent_id, date_gmt, id);

-- What a record's links show of its revisions (schema.Post.RevisionCount, LatestRevision), kept
-- in the transaction that makes or deletes one.
ALTER TABLE posts ADD COLUMN IF NOT EXISTS revision_count INT8 NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN IF NOT EXISTS latest_revision INT8 NOT NULL DEFAULT 0;
