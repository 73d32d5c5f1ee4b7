-- Media files: every file name under a store's uploads root that an attachment owns, is about to
-- own, or owned until its blobs are gone. Attachments themselves are posts (type attachment, their
-- file facts in posts.extra); this table is what keeps their blobs (sync/blob, named
-- schema.MediaBlobName) and their records in step, and is never replicated.
--
-- A name is claimed (pending) in a transaction of its own before its blob is written, so whoever
-- writes a blob owns its name alone: two uploads of the same file under the same name get
-- distinct names (-2, -3, as WordPress does), and a failed upload deletes only its own blobs.
-- The transaction that stores the attachment binds its claims (live). Deleting the attachment
-- marks them deleted in its transaction; the blobs are removed after the commit and only then
-- the rows, so a name is not reused while its old blob may still exist. Pending and deleted rows
-- older than an hour, and blobs no row names, are swept by the origins' maintenance.
CREATE TABLE IF NOT EXISTS media_files (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    file       TEXT NOT NULL,                -- path under the uploads root: 2026/11/photo-9f86d081884c-150x150.jpg
    state      TEXT NOT NULL CHECK (state IN ('pending', 'live', 'deleted')),
    post_id    INT8 NOT NULL DEFAULT 0,      -- the attachment owning it (live, deleted); 0 while pending
    changed_at TIMESTAMPTZ NOT NULL,         -- when the state was last set
    PRIMARY KEY (tenant_id, file)
);

CREATE INDEX IF NOT EXISTS media_files_post ON media_files (tenant_id, post_id);

CREATE INDEX IF NOT EXISTS media_files_sweep ON media_files (state, changed_at);
