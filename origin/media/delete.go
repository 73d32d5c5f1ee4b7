package media

import (
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// errNoTrash is WordPress's answer to deleting an attachment without force: media have no
// trash (MEDIA_TRASH is off by default), and the posts controller's text says so.
var errNoTrash = &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: fasthttp.StatusNotImplemented,
	Message: "The post does not support trashing. Set 'force=true' to delete."}

// delete answers DELETE /cms/v2/media/{id}?force=true: the attachment goes, the records that
// feature it lose it (WordPress's wp_delete_attachment), its claims are marked deleted in the
// same transaction, and its blobs are deleted after the commit.
func (s *Service) delete(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	force := args.Bool("force")
	var out any
	var files []string
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadAttachment(ctx, rq, tx, pipeline.Param(ctx, "id"))
		if err != nil {
			return err
		}
		if !canDelete(rq, old) {
			return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete this post.")
		}
		if !force {
			return errNoTrash
		}
		featuring, err := tx.PostsFeaturing(ctx, rq.Info, old.ID)
		if err != nil {
			return err
		}
		for _, f := range featuring {
			n := *f
			n.FeaturedMedia = 0
			if err := tx.UpdatePost(ctx, rq.Info, f, &n); err != nil {
				return err
			}
		}
		if files, err = tx.DropMediaFiles(ctx, rq.Info, old.ID); err != nil {
			return err
		}
		if _, err := tx.DeletePost(ctx, rq.Info, old.ID); err != nil {
			return err
		}
		out = map[string]any{"deleted": true, "previous": s.posts.View(rq, old)}
		return nil
	})
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	s.remove(ctx, rq.Info, files)
	s.resp.Written(ctx, rq, commits, fasthttp.StatusOK, out)
}
