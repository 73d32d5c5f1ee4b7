package media

import (
	"context"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// editSource is the attachment an edit was made from: the new attachment copies its texts
// unless the edit gives them.
type editSource struct {
	post *schema.Post
	// file is the source's original, which parent_image names.
	file string
}

// store writes the files of st (claimed first, then put) and stores the attachment they make
// with in's fields, in one transaction that binds the claims. stem names the files; filename
// (the client's) gives the default title; src, for an edit, the texts copied. A transaction
// that fails deletes the blobs it was to name.
func (s *Service) store(ctx context.Context, rq *handler.Request, in *input, st *stored, stem, filename string, src *editSource) (*schema.Post, []store.LogCommit, error) {
	nm := newNaming(time.Now(), stem, st.mime, st.orig)
	files, err := s.claimAndPut(ctx, rq, 0, func(n int) []blobFile { return st.files(nm.base(n), nm.ext) })
	if err != nil {
		return nil, nil, err
	}
	a := st.attachment(strings.TrimSuffix(files[0].name, "."+nm.ext), nm.ext)
	for k, v := range a.ImageMeta {
		a.ImageMeta[k] = s.kses.Post(v) // wp_kses_post_deep, as wp_read_image_metadata's caller does
	}
	var p *schema.Post
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		p = &schema.Post{Type: schema.TypeAttachment, Status: schema.StatusInherit, Author: rq.User.ID, CommentStatus: "open",
			PingStatus: "closed", Format: "standard", DateGMT: now, ModifiedGMT: now, Attachment: a}
		s.defaults(p, st, filename, src)
		in.apply(p, now, rq.Location(), s.posts.ParseDate)
		if err := finish(ctx, rq, tx, in, p, nil); err != nil {
			return err
		}
		if err := tx.CreatePost(ctx, rq.Info, p); err != nil {
			return err
		}
		return tx.BindMediaFiles(ctx, rq.Info, p.ID, names(files))
	})
	if err != nil {
		s.afterFailedWrite(ctx, rq.Info, files, err)
		return nil, nil, err
	}
	return p, commits, nil
}

// defaults sets what an attachment takes when the request does not say: the title and caption
// of the image's IPTC/EXIF data, else the file's name (WordPress's insert_attachment); for an
// edit, the source's title, caption, description and alternative text.
func (s *Service) defaults(p *schema.Post, st *stored, filename string, src *editSource) {
	if src != nil {
		p.Title, p.Excerpt, p.Content = src.post.Title, src.post.Excerpt, src.post.Content
		p.Attachment.AltText = src.post.Attachment.AltText
		p.Attachment.ParentImage = &schema.ParentImage{AttachmentID: src.post.ID, File: src.file}
		// The source's image_meta fills what the edited image lacks (it has none: its
		// metadata was dropped); its pixels are upright now.
		for k, v := range src.post.Attachment.ImageMeta {
			if cur := p.Attachment.ImageMeta[k]; cur == "" || cur == "0" {
				p.Attachment.ImageMeta[k] = v
			}
		}
		if p.Attachment.ImageMeta["orientation"] != "0" && p.Attachment.ImageMeta["orientation"] != "" {
			p.Attachment.ImageMeta["orientation"] = "1"
		}
		return
	}
	if t := strings.TrimSpace(st.meta.Title); t != "" && !numeric(schema.Slugify(t)) {
		p.Title = s.kses.Title(t)
	}
	if c := strings.TrimSpace(st.meta.Caption); c != "" {
		p.Excerpt = s.kses.Post(c)
	}
	if p.Title == "" {
		p.Title = s.kses.Title(titleOf(filename))
	}
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// finish checks what the stored attachment must satisfy: a known author, no featured media
// (WordPress supports it on audio and video attachments only, which this build's themes do
// not), and a slug unique across every post type.
func finish(ctx context.Context, rq *handler.Request, tx *store.Tx, in *input, p, old *schema.Post) error {
	if _, err := tx.User(ctx, rq.Info, p.Author); err != nil {
		if schema.ErrorCode(err) == schema.CodeNotFound {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_author", Field: "author", Message: "Invalid author ID."}
		}
		return err
	}
	if in.FeaturedMedia != nil && *in.FeaturedMedia != 0 {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_no_featured_media", Field: "featured_media",
			Message: "This site does not support post thumbnails on attachments with MIME type " + p.Attachment.MimeType + "."}
	}
	if p.Slug == "" && p.Status != schema.StatusTrash {
		if p.Slug = schema.Slugify(p.Title); p.Slug == "" {
			p.Slug = "attachment"
		}
	}
	if p.Slug != "" && (old == nil || old.Slug != p.Slug) {
		slug, err := tx.UniqueAttachmentSlug(ctx, rq.Info, p.Slug, p.ID)
		if err != nil {
			return err
		}
		p.Slug = slug
	}
	return nil
}

// setWriteVersion sets Vitrine-Write-Version on an answer that is not Written's (the 500 of an
// upload stored without all its sizes).
func setWriteVersion(ctx *fasthttp.RequestCtx, rq *handler.Request, commits []store.LogCommit) {
	for _, c := range commits {
		if c.Log == rq.Tenant.Slug {
			pipeline.SetWriteVersion(&ctx.Response.Header, c.Version)
		}
	}
}
