package store

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// PostStates returns the visibilities at which a post has state: a published post is public (and,
// when password-protected, also private, since its public copy withholds the content); any other
// post is private.
func PostStates(p *schema.Post) []schema.Visibility {
	if p == nil {
		return nil
	}
	if !p.Public() {
		return []schema.Visibility{schema.Priv}
	}
	if p.Password != "" {
		return []schema.Visibility{schema.Pub, schema.Priv}
	}
	return []schema.Visibility{schema.Pub}
}

// PostState returns the value a post has at one visibility.
func PostState(p *schema.Post, vis schema.Visibility) *schema.Post {
	if vis == schema.Pub {
		return p.PublicCopy()
	}
	return p
}

const postColumns = `id, type, slug, status, password, title, content, excerpt, author_id, featured_media, comment_status, ping_status,
	format, meta, sticky, template, categories, tags, date_gmt, date_floating, modified_gmt, version, parent, menu_order, extra,
	revision_count, latest_revision`

// postExtra is the extra column: the fields of one post type only (migration 0009).
type postExtra struct {
	PatternCategories []schema.TermID    `json:"pattern_categories,omitempty"`
	MenuItem          *schema.MenuItem   `json:"menu_item,omitempty"`
	Attachment        *schema.Attachment `json:"attachment,omitempty"` // media.go
	Design            *schema.Design     `json:"design,omitempty"`     // templates, parts, global styles
}

// postExtraEmbeds is the extra column of a post or page: postExtra's fields and the embeds of
// its content's bare URLs (schema.Post.Embeds), in the same JSON object.
type postExtraEmbeds struct {
	postExtra
	Embeds map[string]string `json:"embeds,omitempty"`
}

func scanPost(row pgx.Row) (*schema.Post, error) {
	var p schema.Post
	var status string
	var meta []byte
	var cats, tags []int64
	var parent, menuOrder int64
	var extra []byte
	var revisions int64
	if err := row.Scan(&p.ID, &p.Type, &p.Slug, &status, &p.Password, &p.Title, &p.Content, &p.Excerpt, &p.Author,
		&p.FeaturedMedia, &p.CommentStatus, &p.PingStatus, &p.Format, &meta, &p.Sticky, &p.Template, &cats, &tags,
		&p.DateGMT, &p.DateFloating, &p.ModifiedGMT, &p.Version, &parent, &menuOrder, &extra, &revisions, &p.LatestRevision); err != nil {
		return nil, err
	}
	p.RevisionCount = int(revisions)
	p.Parent, p.MenuOrder = schema.PostID(parent), int(menuOrder)
	var x postExtraEmbeds
	if err := json.Unmarshal(extra, &x); err != nil {
		return nil, err
	}
	p.PatternCategories, p.MenuItem, p.Attachment, p.Design = x.PatternCategories, x.MenuItem, x.Attachment, x.Design
	p.Embeds = x.Embeds
	p.Status = schema.PostStatus(status)
	if err := json.Unmarshal(meta, &p.Meta); err != nil {
		return nil, err
	}
	p.Categories = terms(cats)
	p.Tags = terms(tags)
	p.DateGMT, p.ModifiedGMT = p.DateGMT.UTC(), p.ModifiedGMT.UTC()
	return &p, nil
}

func terms(ids []int64) []schema.TermID {
	out := make([]schema.TermID, len(ids))
	for i, id := range ids {
		out[i] = schema.TermID(id)
	}
	return out
}

func termInts(ids []schema.TermID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}

// Post returns one post of the tenant.
func (tx *Tx) Post(ctx context.Context, t *schema.Tenant, id schema.PostID) (*schema.Post, error) {
	p, err := scanPost(tx.pg.QueryRow(ctx, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("post")
	}
	return p, err
}

// UniquePostSlug returns slug, or slug-2, slug-3… if another record of the type (other than
// excludeID) holds it, as WordPress does. A trashed record holding the slug keeps it only with its
// "__trashed" suffix, so it never blocks a live one.
func (tx *Tx) UniquePostSlug(ctx context.Context, t *schema.Tenant, typ, slug string, excludeID schema.PostID) (string, error) {
	if slug == "" {
		return "", nil
	}
	return tx.freeSlug(ctx, `SELECT slug FROM posts WHERE tenant_id = $1 AND type = $2 AND id <> $3 AND (slug = $4 OR slug LIKE $5)`,
		slug, t.ID, typ, int64(excludeID))
}

// freeSlug returns slug, or slug-2, slug-3…: the first that no row of query holds. query selects
// the slugs of the rows that compete, its last two parameters being the slug and the LIKE
// pattern of its numbered forms (args are the ones before). Products, posts and terms all name
// their records so.
//
// The query runs with the simple protocol, its arguments written into its text, so that it is
// planned with its pattern in view whatever the transaction's plan cache mode: a generic plan
// (genericPlansSession, a catalog write's) cannot bound an index scan by a LIKE parameter's prefix and
// would read every slug of the store.
func (tx *Tx) freeSlug(ctx context.Context, query, slug string, args ...any) (string, error) {
	args = append(append([]any{pgx.QueryExecModeSimpleProtocol}, args...), slug, strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(slug)+"-%")
	taken := map[string]bool{}
	err := eachRow(ctx, tx.pg, query, func(row pgx.Row) error {
		var s string
		if err := row.Scan(&s); err != nil {
			return err
		}
		taken[s] = true
		return nil
	}, args...)
	if err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		s := slug
		if n > 1 {
			s = slug + "-" + strconv.Itoa(n)
		}
		if !taken[s] {
			return s, nil
		}
	}
}

// CreatePost inserts a post, allocating its id from the tenant's post id space.
func (tx *Tx) CreatePost(ctx context.Context, t *schema.Tenant, p *schema.Post) error {
	p.Normalize()
	if err := schema.ValidatePost(p); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "post", 1)
	if err != nil {
		return err
	}
	p.ID = schema.PostID(id)
	if err := tx.savePost(ctx, t, nil, p); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO posts (tenant_id, `+postColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`,
		t.ID, int64(p.ID), p.Type, p.Slug, string(p.Status), p.Password, p.Title, p.Content, p.Excerpt, int64(p.Author),
		int64(p.FeaturedMedia), p.CommentStatus, p.PingStatus, p.Format, jsonb(p.Meta), p.Sticky, p.Template,
		termInts(p.Categories), termInts(p.Tags), p.DateGMT, p.DateFloating, p.ModifiedGMT, p.Version,
		int64(p.Parent), int64(p.MenuOrder), jsonb(postExtraEmbeds{postExtra{p.PatternCategories, p.MenuItem, p.Attachment, p.Design}, p.Embeds}), int64(p.RevisionCount), int64(p.LatestRevision))
	return err
}

// UpdatePost writes p over old.
func (tx *Tx) UpdatePost(ctx context.Context, t *schema.Tenant, old, p *schema.Post) error {
	p.ID, p.Type = old.ID, old.Type
	p.Normalize()
	if err := schema.ValidatePost(p); err != nil {
		return err
	}
	if err := tx.savePost(ctx, t, old, p); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE posts SET slug=$3, status=$4, password=$5, title=$6, content=$7, excerpt=$8, author_id=$9,
		featured_media=$10, comment_status=$11, ping_status=$12, format=$13, meta=$14, sticky=$15, template=$16, categories=$17,
		tags=$18, date_gmt=$19, date_floating=$20, modified_gmt=$21, version=$22, parent=$23, menu_order=$24, extra=$25,
		revision_count=$26, latest_revision=$27
		WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(p.ID), p.Slug, string(p.Status), p.Password, p.Title, p.Content, p.Excerpt, int64(p.Author),
		int64(p.FeaturedMedia), p.CommentStatus, p.PingStatus, p.Format, jsonb(p.Meta), p.Sticky, p.Template,
		termInts(p.Categories), termInts(p.Tags), p.DateGMT, p.DateFloating, p.ModifiedGMT, p.Version,
		int64(p.Parent), int64(p.MenuOrder), jsonb(postExtraEmbeds{postExtra{p.PatternCategories, p.MenuItem, p.Attachment, p.Design}, p.Embeds}), int64(p.RevisionCount), int64(p.LatestRevision))
	return err
}

func (tx *Tx) savePost(ctx context.Context, t *schema.Tenant, old, p *schema.Post) error {
	if err := tx.inheritParent(ctx, t, p); err != nil { // an attachment's visibility: media.go
		return err
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	if err := tx.saveMarker(l, old, p); err != nil {
		return err
	}
	err = tx.writeEntity(l, schema.KindPost, schema.IDString(p.ID), PostStates(old), PostStates(p),
		func(v int64) { p.Version = v }, func(vis schema.Visibility) any { return PostState(p, vis) })
	if err != nil {
		return err
	}
	return tx.followParent(ctx, t, old, p, p.ID) // its attachments follow its visibility: media.go
}

// saveMarker records the existence marker of a record without a public state when it appears,
// changes (type, status) or goes (the record became public, or was deleted: p nil). It runs
// before the record's own write, so the marker's version is below the record's, which a snapshot
// gives the marker.
func (tx *Tx) saveMarker(l *logState, old, p *schema.Post) error {
	was, is := schema.MarkerOf(old), schema.MarkerOf(p)
	if (was == nil && is == nil) || (was != nil && is != nil && *was == *is) {
		return nil
	}
	var oldVis, newVis []schema.Visibility
	if was != nil {
		oldVis = pubOnly
	}
	if is != nil {
		newVis = pubOnly
	}
	id := old
	if p != nil {
		id = p
	}
	return tx.writeEntity(l, schema.KindPostMarker, schema.IDString(id.ID), oldVis, newVis, nil,
		func(schema.Visibility) any { return is })
}

// DeletePost deletes a post for good (the CMS "force" delete).
func (tx *Tx) DeletePost(ctx context.Context, t *schema.Tenant, id schema.PostID) (*schema.Post, error) {
	p, err := tx.Post(ctx, t, id)
	if err != nil {
		return nil, err
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := tx.saveMarker(l, p, nil); err != nil {
		return nil, err
	}
	if err := tx.writeEntity(l, schema.KindPost, schema.IDString(id), PostStates(p), nil, nil, nil); err != nil {
		return nil, err
	}
	// Its attachments move up to its own parent, as WordPress's wp_delete_post does (media.go).
	if err := tx.followParent(ctx, t, p, nil, p.Parent); err != nil {
		return nil, err
	}
	// Its revisions and autosaves go with it.
	if _, err := tx.pg.Exec(ctx, `DELETE FROM post_revisions WHERE tenant_id = $1 AND parent_id = $2`, t.ID, int64(id)); err != nil {
		return nil, err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM posts WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return p, err
}
