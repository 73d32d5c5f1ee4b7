package media

import (
	"context"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// update answers POST, PUT and PATCH /cms/v2/media/{id}: the attachment's fields, with the
// post rules (edit_post on the attachment; authors and contributors their own media).
func (s *Service) update(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in input
	err := handler.JSONBody(ctx, &in)
	if err == nil {
		err = in.validate(s.posts.ParseDate)
	}
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	s.filterHTML(rq, &in)
	var p *schema.Post
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadAttachment(ctx, rq, tx, pipeline.Param(ctx, "id"))
		if err != nil {
			return err
		}
		if err := updatePermission(ctx, rq, tx, &in, old); err != nil {
			return err
		}
		n := *old
		in.apply(&n, tx.Now(), rq.Location(), s.posts.ParseDate)
		if err := finish(ctx, rq, tx, &in, &n, old); err != nil {
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, old, &n); err != nil {
			return err
		}
		p = &n
		return nil
	})
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	s.answer(ctx, rq, commits, fasthttp.StatusOK, p)
}

// updatePermission is WordPress's update_item_permissions_check for an attachment, then its
// update_item's parent check: edit_post, edit_others_posts to give it another author, publish
// rights for a status that needs them, and a parent the caller may edit that is not an
// attachment (WordPress does not check the caller's rights on a new parent; Vitrine does, as for
// uploads, since the parent decides whether the attachment is public).
func updatePermission(ctx context.Context, rq *handler.Request, tx *store.Tx, in *input, old *schema.Post) error {
	if !canEdit(rq, old) {
		return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
	}
	caps := schema.PostTypeByName(schema.TypeAttachment).Caps
	if in.Author != nil && schema.UserID(*in.Author) != rq.User.ID && schema.UserID(*in.Author) != old.Author && !can(rq, caps.EditOthers) {
		return cannot(rq, "rest_cannot_edit_others", "Sorry, you are not allowed to update posts as this user.")
	}
	if in.publishes() && attachmentStatus(*in.Status) != old.Status && !can(rq, caps.Publish) {
		return cannot(rq, "rest_cannot_publish", "Sorry, you are not allowed to publish posts in this post type.")
	}
	if in.Post != nil && *in.Post != 0 && schema.PostID(*in.Post) != old.Parent {
		parent, err := tx.Post(ctx, rq.Info, schema.PostID(*in.Post))
		if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && !canEdit(rq, parent)) {
			return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to upload media to this post.")
		}
		if err != nil {
			return err
		}
		if parent.Type == schema.TypeAttachment {
			return badParent
		}
	}
	return nil
}
