package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Media: attachments are posts of type schema.TypeAttachment whose file facts (Post.Attachment)
// live in the posts row's extra column. Two things set them apart here:
//
//   - Visibility follows the parent. An attachment is public when its status is inherit and its
//     parent is public or absent (schema.Post.Public, Attachment.ParentHidden). savePost sets
//     ParentHidden from the parent on every write of an attachment (inheritParent), and a write
//     that changes a record's publicness rewrites its attachments in the same transaction
//     (followParent): publishing a draft publishes its media, unpublishing, trashing or
//     deleting withdraws them (a deleted record's media move up to its own parent, as
//     WordPress's wp_delete_post does). A record with more attachments than a transaction may
//     change (schema.MaxChangesPerTxn, about 400 attachments) cannot change its publicness.
//   - File names are claimed in media_files (migration 0021) before their blobs are written
//     (ClaimMediaFiles), bound to the attachment in its transaction (BindMediaFiles), and
//     marked deleted with it (DropMediaFiles) until its blobs are gone (ForgetMediaFiles). The
//     sweeper expires what failed uploads left (ExpireMediaFiles) and adopts blobs no claim
//     names before deleting them (AdoptMediaFiles).

// Media file claim states (media_files.state).
const (
	mediaPending = "pending"
	mediaLive    = "live"
	mediaDeleted = "deleted"
)

// MaxMediaNameTries bounds the names ClaimMediaFiles tries for one upload: name, name-2, …
const MaxMediaNameTries = 100

// errNamesTaken is ClaimMediaFiles' refusal when every candidate was taken.
var errNamesTaken = &schema.Error{Code: schema.CodeConflict, Message: "the file names of this upload are taken; retry"}

// ClaimMediaFiles claims the file names of one upload for the tenant, so that its blobs can be
// written: names(n) lists the names of the n-th candidate (n = 1, 2, …: the first unsuffixed,
// then with WordPress's -2, -3…), and the first candidate none of whose names is claimed is
// claimed whole (pending) and returned with its n. At most tries candidates are tried
// (MaxMediaNameTries when tries <= 0); past them the answer is a CodeConflict error. The claim is
// a transaction of its own, committed before any blob is written: two uploads never write the
// same name, and one that fails deletes only blobs it owns.
func (db *DB) ClaimMediaFiles(ctx context.Context, t *schema.Tenant, tries int, names func(n int) []string) (int, []string, error) {
	if tries <= 0 {
		tries = MaxMediaNameTries
	}
	var claimed []string
	var n int
	err := db.Tx(ctx, func(tx *Tx) error {
		for n = 1; n <= tries; n++ {
			cand := names(n)
			var taken bool
			if err := tx.pg.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM media_files WHERE tenant_id = $1 AND file = ANY($2))`,
				t.ID, cand).Scan(&taken); err != nil {
				return err
			}
			if taken {
				continue
			}
			// A concurrent claimer may take a name between the check and the insert: the
			// insert skips what it took (after waiting for its outcome), and the names this
			// candidate got are given back.
			var got []string
			err := eachRow(ctx, tx.pg, `INSERT INTO media_files (tenant_id, file, state, post_id, changed_at)
				SELECT $1, f, $2, 0, $3 FROM unnest($4::TEXT[]) AS r(f)
				ON CONFLICT (tenant_id, file) DO NOTHING RETURNING file`, func(row pgx.Row) error {
				var f string
				if err := row.Scan(&f); err != nil {
					return err
				}
				got = append(got, f)
				return nil
			}, t.ID, mediaPending, tx.Now(), cand)
			if err != nil {
				return err
			}
			if len(got) == len(cand) {
				claimed = cand
				return nil
			}
			if _, err := tx.pg.Exec(ctx, `DELETE FROM media_files WHERE tenant_id = $1 AND file = ANY($2)`, t.ID, got); err != nil {
				return err
			}
		}
		return errNamesTaken
	})
	if err != nil {
		return 0, nil, err
	}
	return n, claimed, nil
}

// BindMediaFiles makes the pending claims of files the attachment id's (live), in the
// transaction that stores it. A claim that is no longer pending (swept after an hour) fails the
// transaction.
func (tx *Tx) BindMediaFiles(ctx context.Context, t *schema.Tenant, id schema.PostID, files []string) error {
	if len(files) == 0 {
		return nil
	}
	tag, err := tx.pg.Exec(ctx, `UPDATE media_files SET state = $2, post_id = $3, changed_at = $4
		WHERE tenant_id = $1 AND file = ANY($5) AND state = $6`, t.ID, mediaLive, int64(id), tx.Now(), files, mediaPending)
	if err != nil {
		return err
	}
	if int(tag.RowsAffected()) != len(files) {
		return fmt.Errorf("store: %d of %d media file claims of attachment %d were lost", len(files)-int(tag.RowsAffected()), len(files), id)
	}
	return nil
}

// ReleaseMediaFiles gives up pending claims whose blobs were deleted (an upload that failed).
func (db *DB) ReleaseMediaFiles(ctx context.Context, t *schema.Tenant, files []string) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `DELETE FROM media_files WHERE tenant_id = $1 AND file = ANY($2) AND state = $3`, t.ID, files, mediaPending)
		return err
	})
}

// DropMediaFiles marks the files of the attachment id deleted, in the transaction that deletes
// it, and returns them: the caller deletes their blobs after the commit, then forgets them
// (ForgetMediaFiles). Until then the names stay taken.
func (tx *Tx) DropMediaFiles(ctx context.Context, t *schema.Tenant, id schema.PostID) ([]string, error) {
	var files []string
	err := eachRow(ctx, tx.pg, `UPDATE media_files SET state = $3, changed_at = $4 WHERE tenant_id = $1 AND post_id = $2 AND state = $5 RETURNING file`,
		func(row pgx.Row) error {
			var f string
			if err := row.Scan(&f); err != nil {
				return err
			}
			files = append(files, f)
			return nil
		}, t.ID, int64(id), mediaDeleted, tx.Now(), mediaLive)
	return files, err
}

// ForgetMediaFiles removes the deleted claims of files of a tenant whose blobs are gone,
// freeing the names.
func (db *DB) ForgetMediaFiles(ctx context.Context, tenantID string, files []string) error {
	return db.Tx(ctx, func(tx *Tx) error {
		_, err := tx.pg.Exec(ctx, `DELETE FROM media_files WHERE tenant_id = $1 AND file = ANY($2) AND state = $3`, tenantID, files, mediaDeleted)
		return err
	})
}

// MediaFile names one media file of a tenant.
type MediaFile struct {
	TenantID string
	File     string
}

// ExpireMediaFiles returns up to limit claims pending or deleted since before (uploads that
// never finished, a crash between a blob's write and its record's commit; deletions whose blobs
// were not removed), marking the pending ones deleted so that no late upload binds them. The
// sweeper deletes their blobs, then ForgetMediaFiles.
func (db *DB) ExpireMediaFiles(ctx context.Context, before time.Time, limit int) ([]MediaFile, error) {
	var out []MediaFile
	err := db.Tx(ctx, func(tx *Tx) error {
		out = out[:0]
		return eachRow(ctx, tx.pg, `UPDATE media_files SET state = $1
			WHERE (tenant_id, file) IN (SELECT tenant_id, file FROM media_files WHERE state IN ($1, $2) AND changed_at < $3 ORDER BY changed_at LIMIT $4)
			RETURNING tenant_id::TEXT, file`,
			func(row pgx.Row) error {
				var f MediaFile
				if err := row.Scan(&f.TenantID, &f.File); err != nil {
					return err
				}
				out = append(out, f)
				return nil
			}, mediaDeleted, mediaPending, before, limit)
	})
	return out, err
}

// AdoptMediaFiles claims, as deleted, those of files (blobs the sweeper found) that no claim
// names, and returns them: the sweeper then owns their names while it deletes the blobs, so an
// upload cannot take a name whose blob is about to go.
func (db *DB) AdoptMediaFiles(ctx context.Context, tenantID string, files []string) ([]string, error) {
	var out []string
	err := db.Tx(ctx, func(tx *Tx) error {
		out = out[:0]
		return eachRow(ctx, tx.pg, `INSERT INTO media_files (tenant_id, file, state, post_id, changed_at)
			SELECT $1, f, $2, 0, $3 FROM unnest($4::TEXT[]) AS r(f)
			ON CONFLICT (tenant_id, file) DO NOTHING RETURNING file`,
			func(row pgx.Row) error {
				var f string
				if err := row.Scan(&f); err != nil {
					return err
				}
				out = append(out, f)
				return nil
			}, tenantID, mediaDeleted, tx.Now(), files)
	})
	return out, err
}

// inheritParent sets an attachment's ParentHidden from its parent before it is written: hidden
// while the parent exists and is not public. Records of other types are left alone.
func (tx *Tx) inheritParent(ctx context.Context, t *schema.Tenant, p *schema.Post) error {
	if p.Type != schema.TypeAttachment || p.Attachment == nil {
		return nil
	}
	hidden := false
	if p.Parent != 0 {
		parent, err := tx.Post(ctx, t, p.Parent)
		switch {
		case schema.ErrorCode(err) == schema.CodeNotFound: // attached to nothing
		case err != nil:
			return err
		default:
			hidden = !parent.Public()
		}
	}
	if p.Attachment.ParentHidden != hidden {
		a := *p.Attachment // the caller's copy of a stored record may share it with the old one
		a.ParentHidden = hidden
		p.Attachment = &a
	}
	return nil
}

// followParent rewrites the attachments of a record whose publicness changes (old → p, p nil
// when it is deleted), in its transaction: their ParentHidden follows the record's new state, and
// their replicated states (public copies or tombstones) follow. parent is the attachments' parent
// afterwards: the record itself, or, when it is deleted, its own parent.
func (tx *Tx) followParent(ctx context.Context, t *schema.Tenant, old, p *schema.Post, parent schema.PostID) error {
	rec := p
	if rec == nil {
		rec = old
	}
	if old == nil || rec.Type == schema.TypeAttachment {
		return nil // a new record has no attachments yet; attachments have none
	}
	hidden := false
	switch {
	case p != nil:
		if old.Public() == p.Public() {
			return nil
		}
		hidden = !p.Public()
	case parent != 0:
		gp, err := tx.Post(ctx, t, parent)
		switch {
		case schema.ErrorCode(err) == schema.CodeNotFound:
			parent = 0
		case err != nil:
			return err
		default:
			hidden = !gp.Public()
		}
	}
	var media []*schema.Post
	err := eachRow(ctx, tx.pg, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 AND parent = $2 AND type = $3 ORDER BY id`,
		func(row pgx.Row) error {
			m, err := scanPost(row)
			if err != nil {
				return err
			}
			media = append(media, m)
			return nil
		}, t.ID, int64(rec.ID), schema.TypeAttachment)
	if err != nil {
		return err
	}
	if len(media) == 0 {
		return nil
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	for _, m := range media {
		if m.Attachment == nil {
			return errors.New("store: attachment " + schema.IDString(m.ID) + " has no file facts")
		}
		n := *m
		a := *m.Attachment
		a.ParentHidden = hidden
		n.Attachment, n.Parent = &a, parent
		if n.Parent == m.Parent && a.ParentHidden == m.Attachment.ParentHidden {
			continue
		}
		if err := tx.saveMarker(l, m, &n); err != nil {
			return err
		}
		if err := tx.writeEntity(l, schema.KindPost, schema.IDString(n.ID), PostStates(m), PostStates(&n),
			func(v int64) { n.Version = v }, func(vis schema.Visibility) any { return PostState(&n, vis) }); err != nil {
			return err
		}
		if _, err := tx.pg.Exec(ctx, `UPDATE posts SET parent = $3, extra = $4, version = $5 WHERE tenant_id = $1 AND id = $2`,
			t.ID, int64(n.ID), int64(n.Parent), jsonb(postExtra{n.PatternCategories, n.MenuItem, n.Attachment, n.Design}), n.Version); err != nil {
			return err
		}
	}
	return nil
}

// UniqueAttachmentSlug returns slug, or slug-2, slug-3…: attachment slugs are unique across
// every post type (WordPress's wp_unique_post_slug), excluding the attachment excludeID itself.
func (tx *Tx) UniqueAttachmentSlug(ctx context.Context, t *schema.Tenant, slug string, excludeID schema.PostID) (string, error) {
	if slug == "" {
		return "", nil
	}
	return tx.freeSlug(ctx, `SELECT slug FROM posts WHERE tenant_id = $1 AND id <> $2 AND (slug = $3 OR slug LIKE $4)`,
		slug, t.ID, int64(excludeID))
}

// PostsFeaturing returns the records whose featured media is the attachment id (WordPress
// clears them when the attachment is deleted).
func (tx *Tx) PostsFeaturing(ctx context.Context, t *schema.Tenant, id schema.PostID) ([]*schema.Post, error) {
	var out []*schema.Post
	err := eachRow(ctx, tx.pg, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 AND featured_media = $2 ORDER BY id`,
		func(row pgx.Row) error {
			p, err := scanPost(row)
			if err != nil {
				return err
			}
			out = append(out, p)
			return nil
		}, t.ID, int64(id))
	return out, err
}
