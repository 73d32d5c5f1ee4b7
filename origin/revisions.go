package origin

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The revisions and autosaves routes of the CMS post types (schema/revisions.go), with
// WordPress's revisions and autosaves controllers' checks, codes and messages. Revisions are
// private and never replicated, so the origin answers these routes from its database, in
// transactions that also read the revised record; the record's revision count and latest
// revision (its version-history and predecessor-version links) are written with it.

func (s *Server) revisionHandlers() {
	for _, t := range schema.PostTypes {
		if t.OwnRoutes {
			continue
		}
		n := "cms." + t.RestBase
		if t.Revisions {
			s.bind(n+".revisions.list", s.listRevisions)
			s.bind(n+".revisions.get", s.getRevision)
			s.bind(n+".revisions.delete", s.deleteRevision)
		}
		if t.Autosaves {
			s.bind(n+".autosaves.list", s.listAutosaves)
			s.bind(n+".autosaves.create", s.createAutosave)
			s.bind(n+".autosaves.get", s.getAutosave)
		}
	}
}

var (
	parentNotFound   = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_parent", Message: "Invalid post parent ID."}
	revisionNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_id", Message: "Invalid revision ID."}
)

// keepRevision applies WordPress's revision rule to an update of p (the record as it will be
// stored) when its type keeps revisions: a revision copying p is made when the record has none
// yet (autosaves do not count), or when p's title, content or excerpt differ from the latest
// one's, whitespace normalised. p's revision count and latest revision follow. Creating a
// record makes no revision, and neither does an autosave that updates a draft in place.
func keepRevision(ctx context.Context, rq *handler.Request, tx *store.Tx, p *schema.Post) error {
	if t := schema.PostTypeByName(p.Type); t == nil || !t.Revisions {
		return nil
	}
	if err := tx.LockPost(ctx, rq.Info, p.ID); err != nil {
		return err
	}
	latest, err := tx.LatestRevision(ctx, rq.Info, p.ID)
	if err != nil {
		return err
	}
	if latest != nil && !schema.RevisionFieldsDiffer(p, latest) {
		return nil
	}
	// WordPress dates a revision with its record's modification time.
	if err := tx.CreateRevision(ctx, rq.Info, schema.NewRevision(p, rq.User.ID, false, p.ModifiedGMT)); err != nil {
		return err
	}
	_, err = tx.RevisionStats(ctx, rq.Info, p)
	return err
}

// restatRevisions stores a record's new revision count and latest revision after one of its
// revisions changed, when they moved (a replicated change of the record, whose links show them).
func restatRevisions(ctx context.Context, rq *handler.Request, tx *store.Tx, old *schema.Post) error {
	p := *old
	changed, err := tx.RevisionStats(ctx, rq.Info, &p)
	if err != nil || !changed {
		return err
	}
	return tx.UpdatePost(ctx, rq.Info, old, &p)
}

// revisionParent loads the record a revisions or autosaves route names in its capture
// (WordPress's get_parent): a record of the route's type, else 404 rest_post_invalid_parent.
// Templates and template parts name theirs by template id (templateParent, templates.go).
func revisionParent(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx, capture string) (*schema.Post, error) {
	if schema.IsTemplateType(postType(rq).Name) {
		return templateParent(ctx, rq, tx, capture)
	}
	id, err := strconv.ParseInt(pipeline.Param(ctx, capture), 10, 64)
	if err != nil || id <= 0 {
		return nil, parentNotFound
	}
	p, err := tx.Post(ctx, rq.Info, schema.PostID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound || err == nil && p.Type != postType(rq).Name {
		return nil, parentNotFound
	}
	return p, err
}

// canReadRevisions is WordPress's read check of revisions and autosaves: edit_post on the
// record, else 401/403 rest_cannot_read naming what was asked ("revisions", "autosaves").
func canReadRevisions(rq *handler.Request, p *schema.Post, what string) error {
	if rq.User == nil || !canEditPost(rq, p) {
		return cannot(rq, "rest_cannot_read", "Sorry, you are not allowed to view "+what+" of this post.")
	}
	return nil
}

// renderRevision renders a revision or autosave r of record: in the revision shape, or for
// templates and template parts in the template shape (renderTemplateRevision, templates.go).
func (s *Server) renderRevision(rq *handler.Request, record, r *schema.Post, context string, autosave bool) any {
	if schema.IsTemplateType(record.Type) {
		return s.renderTemplateRevision(rq, record, r, context, autosave)
	}
	return schema.RenderRevision(r, schema.RevisionRender{Context: context, Type: postType(rq), Autosave: autosave}, s.site(rq))
}

// revisionStart is where a page of a revisions collection with per_page starts: the page's
// offset, or a non-zero offset argument instead (WP_Query's absint of it).
func revisionStart(args *schema.Args) int {
	if offset := int(args.Int("offset")); offset != 0 {
		return min(max(offset, -offset), schema.MaxOffset)
	}
	return schema.PageOffset(args.Int("page"), args.Int("per_page"))
}

// revisionPages is the page count of a revisions collection of total items (one page without
// per_page), or WordPress's 400 for an offset at or past the total or, without offset, a page
// past the last.
func revisionPages(args *schema.Args, total int) (int, error) {
	page, perPage, offset := int(args.Int("page")), int(args.Int("per_page")), int(args.Int("offset"))
	totalPages := min(total, 1)
	if perPage > 0 {
		totalPages = (total + perPage - 1) / perPage
	}
	switch {
	case total == 0:
	case offset >= total:
		return 0, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_revision_invalid_offset_number", Field: "offset",
			Message: "The offset number requested is larger than or equal to the number of available revisions."}
	case offset == 0 && page > totalPages:
		return 0, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_revision_invalid_page_number", Field: "page",
			Message: "The page number requested is larger than the number of pages available."}
	}
	return totalPages, nil
}

// listRevisions answers GET /{type}/{parent}/revisions: every revision and autosave of the
// record, newest first, unpaginated unless per_page is sent.
func (s *Server) listRevisions(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var parent *schema.Post
	var revisions []*schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		if parent, err = revisionParent(ctx, rq, tx, "parent"); err != nil {
			return err
		}
		if err := canReadRevisions(rq, parent, "revisions"); err != nil {
			return err
		}
		revisions, err = tx.Revisions(ctx, rq.Info, parent.ID)
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	q := replica.PostQuery{Type: schema.RevisionType, Statuses: []schema.PostStatus{schema.StatusInherit},
		Search: args.Str("search"), OrderBy: args.Str("orderby"), Asc: args.Str("order") == "asc"}
	switch {
	case q.OrderBy == "relevance" && q.Search == "":
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_no_search_term_defined", Field: "orderby",
			Message: "You need to define a search term to order by relevance."})
		return
	case q.OrderBy == "include" && len(args.Get("include").Ints) == 0:
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_orderby_include_missing_include", Field: "orderby",
			Message: "You need to define an include parameter to order by include."})
		return
	case q.OrderBy == "include_slugs":
		// Revisions take no slug argument: WordPress's post_name__in ordering has nothing to
		// order by, and its default (date, then id) applies.
		q.OrderBy = "date"
	}
	for _, id := range args.Get("include").Ints {
		q.Include = append(q.Include, schema.PostID(id))
	}
	for _, id := range args.Get("exclude").Ints {
		q.Exclude = append(q.Exclude, schema.PostID(id))
	}
	// WordPress's paging of revisions: without per_page, every revision on one page (and offset
	// is only checked, not applied, as WP_Query ignores it then); a non-zero offset replaces the
	// page's.
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	q.Limit = len(revisions)
	if perPage > 0 {
		q.Offset, q.Limit = revisionStart(args), perPage
	}
	list, total := replica.MatchPosts(revisions, q)
	totalPages, err := revisionPages(args, total)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	context := args.Str("context")
	out := make([]any, 0, len(list))
	for _, r := range list {
		out = append(out, s.renderRevision(rq, parent, r, context, false))
	}
	s.cmsAnswer(ctx, rq, 200, out, schema.CollectionHeaders(s.site(rq).RestURL(schema.RevisionsPathOf(parent)), rq.Route, pipeline.Query(ctx), page, total, totalPages)...)
}

// loadRevision reads the revision of the route's {id}: 404 rest_post_invalid_id when it is not one.
func loadRevision(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx) (*schema.Post, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, revisionNotFound
	}
	r, err := tx.Revision(ctx, rq.Info, schema.PostID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound {
		return nil, revisionNotFound
	}
	return r, err
}

// getRevision answers GET /{type}/{parent}/revisions/{id}.
func (s *Server) getRevision(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var rev, parent *schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		parent, err = revisionParent(ctx, rq, tx, "parent")
		if err != nil {
			return err
		}
		if err := canReadRevisions(rq, parent, "revisions"); err != nil {
			return err
		}
		if rev, err = loadRevision(ctx, rq, tx); err != nil {
			return err
		}
		if rev.Parent != parent.ID {
			return &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_revision_parent_id_mismatch",
				Message: `The revision does not belong to the specified parent with id of "` + schema.IDString(parent.ID) + `"`}
		}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.renderRevision(rq, parent, rev, args.Str("context"), false))
}

// deleteRevision answers DELETE /{type}/{parent}/revisions/{id}: force=true only (revisions
// have no trash), {deleted, previous} with the revision in the view context. As WordPress, the
// parent in the path must be deletable and readable by the caller, and so must the record the
// revision belongs to (delete_post on a revision is delete_post on its record), which the path
// does not have to name.
func (s *Server) deleteRevision(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var out any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		parent, err := revisionParent(ctx, rq, tx, "parent")
		if err != nil {
			return err
		}
		if rq.User == nil || !canDeletePost(rq, parent) {
			return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete revisions of this post.")
		}
		rev, err := loadRevision(ctx, rq, tx)
		if err != nil {
			return err
		}
		if err := canReadRevisions(rq, parent, "revisions"); err != nil {
			return err
		}
		record := parent
		if rev.Parent != parent.ID {
			if record, err = tx.Post(ctx, rq.Info, rev.Parent); err != nil {
				return err
			}
			if record.Type != parent.Type || !canDeletePost(rq, record) {
				return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete this revision.")
			}
		}
		if !args.Bool("force") {
			return &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: 501,
				Message: "Revisions do not support trashing. Set 'force=true' to delete."}
		}
		if err := tx.LockPost(ctx, rq.Info, record.ID); err != nil {
			return err
		}
		if err := tx.DeleteRevision(ctx, rq.Info, rev.ID); err != nil {
			return err
		}
		if err := restatRevisions(ctx, rq, tx, record); err != nil {
			return err
		}
		out = map[string]any{"deleted": true, "previous": s.renderRevision(rq, record, rev, "view", false)}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, out)
}

// listAutosaves answers GET /{type}/{id}/autosaves: the autosaves of every author, newest
// first, unpaginated.
func (s *Server) listAutosaves(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var revisions []*schema.Post
	var parent *schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		parent, err = revisionParent(ctx, rq, tx, "id")
		if err != nil {
			return err
		}
		if err := canReadRevisions(rq, parent, "autosaves"); err != nil {
			return err
		}
		revisions, err = tx.Revisions(ctx, rq.Info, parent.ID)
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := make([]any, 0, len(revisions))
	for _, r := range revisions {
		if r.IsAutosave() {
			out = append(out, s.renderRevision(rq, parent, r, args.Str("context"), true))
		}
	}
	s.cmsAnswer(ctx, rq, 200, out)
}

// getAutosave answers GET /{type}/{parent}/autosaves/{id}: as WordPress, the record's newest
// autosave by any author, whatever {id} says (404 rest_post_no_autosave when there is none).
func (s *Server) getAutosave(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var autosave, parent *schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		parent, err = revisionParent(ctx, rq, tx, "parent")
		if err != nil {
			return err
		}
		if err := canReadRevisions(rq, parent, "revisions"); err != nil {
			return err
		}
		if autosave, err = tx.Autosave(ctx, rq.Info, parent.ID, 0); err == nil && autosave == nil {
			what := "post"
			if schema.IsTemplateType(parent.Type) {
				what = "template"
			}
			err = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_no_autosave", Message: "There is no autosave revision for this " + what + "."}
		}
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.renderRevision(rq, parent, autosave, args.Str("context"), true))
}

// createAutosave answers POST /{type}/{id}/autosaves with the record's writable fields, checked
// as an update (WordPress's update permission). A draft autosaved by its own author is updated in
// place, without a revision, and answered in the revision shape with its own id. Otherwise the
// caller's autosave of the record is written: created (fields not sent are the record's), or
// rewritten when the caller has one; when the title, content, excerpt and footnotes sent equal
// the record's and the caller has an autosave, that one is answered unchanged. The record
// itself is then untouched but for its revision count and latest revision. The answer is 200
// in the edit context, with preview_link.
func (s *Server) createAutosave(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in postInput
	err := handler.JSONBody(ctx, &in)
	if err == nil {
		err = in.validate()
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterHTML(rq, &in) // cms.go
	var view any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := s.loadPost(ctx, rq, tx)
		if err != nil {
			return err
		}
		if rq.User == nil || !canEditPost(rq, old) {
			return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
		}
		now := tx.Now()
		p := *old
		applyPost(rq, now, &in, &p, old)
		if err := checkPostPermissions(rq, &p, old, false); err != nil {
			return err
		}
		if old.Status == schema.StatusDraft && old.Author == rq.User.ID {
			// The author's draft: updated in place, no revision (WordPress's DOING_AUTOSAVE).
			if err := finishPost(ctx, rq, tx, &p, old); err != nil {
				return err
			}
			if err := tx.UpdatePost(ctx, rq.Info, old, &p); err != nil {
				return err
			}
			view = s.renderRevision(rq, old, &p, "edit", true)
			return nil
		}
		if err := tx.LockPost(ctx, rq.Info, old.ID); err != nil {
			return err
		}
		mine, err := tx.Autosave(ctx, rq.Info, old.ID, rq.User.ID)
		if err != nil {
			return err
		}
		if mine != nil && !autosaveDiffers(&in, old) {
			view = s.renderRevision(rq, old, mine, "edit", true)
			return nil
		}
		a := mine
		if a == nil {
			a = schema.NewRevision(old, rq.User.ID, true, now)
		}
		if in.Title != nil {
			a.Title = in.Title.Raw
		}
		if in.Content != nil {
			a.Content = in.Content.Raw
		}
		if in.Excerpt != nil {
			a.Excerpt = in.Excerpt.Raw
		}
		if in.Meta != nil {
			a.Meta = map[string]string{"footnotes": (*in.Meta)["footnotes"]}
		}
		a.Author, a.DateGMT, a.ModifiedGMT = rq.User.ID, now, now
		if mine != nil {
			err = tx.UpdateRevision(ctx, rq.Info, a)
		} else {
			err = tx.CreateRevision(ctx, rq.Info, a)
		}
		if err != nil {
			return err
		}
		if err := restatRevisions(ctx, rq, tx, old); err != nil {
			return err
		}
		view = s.renderRevision(rq, old, a, "edit", true)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}

// autosaveDiffers reports whether an autosave's title, content, excerpt or footnotes, those it
// sends, differ from the record's, whitespace normalised (WordPress's create_post_autosave).
func autosaveDiffers(in *postInput, p *schema.Post) bool {
	differs := func(sent *handler.Text, have string) bool {
		return sent != nil && schema.NormalizeWhitespace(sent.Raw) != schema.NormalizeWhitespace(have)
	}
	if differs(in.Title, p.Title) || differs(in.Content, p.Content) || differs(in.Excerpt, p.Excerpt) {
		return true
	}
	return in.Meta != nil && (*in.Meta)["footnotes"] != p.Meta["footnotes"]
}
