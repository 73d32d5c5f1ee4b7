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

// Global styles and their revisions (WordPress's global styles and global styles revisions
// controllers, routes of schema/routes_design.go), and the themes controller (themes.go).
//
// A store's global styles are one record per theme (schema.NewGlobalStyles), made the first time
// the active theme's user styles are asked for: the themes routes link it (wp:user-global-styles)
// and make it then, in a SERIALIZABLE transaction that looks for it first, so concurrent first
// reads make exactly one (store.Tx.GlobalStyles). Reads answer from the origin's replica (the
// record is a private post, which the origin's replica holds), falling back to the database for
// a record the replica has not applied yet; an update keeps a revision by the posts' rules
// (keepRevision). Revisions are not replicated: their routes read the database.
//
// Capabilities, as WordPress maps them for wp_global_styles: reading a record is edit_posts
// (its read capability), writing it and reading its revisions edit_theme_options; a theme's own
// styles and variations need the edit capability of any post type (or edit_theme_options).

// designHandlers binds the routes of global styles and themes (schema/routes_design.go).
func (s *Server) designHandlers() {
	s.bind("cms.global-styles.get", s.getGlobalStyles)
	s.bind("cms.global-styles.update", s.updateGlobalStyles)
	s.bind("cms.global-styles.revisions.list", s.listGlobalStylesRevisions)
	s.bind("cms.global-styles.revisions.get", s.getGlobalStylesRevision)
	s.bind("cms.global-styles.theme", s.getThemeStyles)
	s.bind("cms.global-styles.variations", s.getThemeVariations)
	s.themeHandlers() // themes.go
}

var (
	globalStylesNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_global_styles_not_found",
		Message: "No global styles config exist with that id."}
	globalStylesParentNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_parent", Message: "Invalid post parent ID."}
	themeNotFound              = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_theme_not_found", Message: "Theme not found."}
)

// canReadGlobalStyles is read_post on a global styles record: its type's read capability,
// edit_posts.
func canReadGlobalStyles(rq *handler.Request) bool { return can(rq, schema.CapEditPosts) }

// canEditGlobalStyles is edit_post on a global styles record (and reading its revisions):
// edit_theme_options.
func canEditGlobalStyles(rq *handler.Request) bool { return can(rq, schema.CapEditThemeOptions) }

// canReadThemeStyles is the permission of a theme's own styles and variations.
func canReadThemeStyles(rq *handler.Request) bool {
	return canEditSomeType(rq) || can(rq, schema.CapEditThemeOptions)
}

// globalStylesID parses an id capture: 0 when it is not a positive integer.
func globalStylesID(raw string) schema.PostID {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 || id > schema.MaxExposedID {
		return 0
	}
	return schema.PostID(id)
}

// loadGlobalStyles finds the global styles record of the id capture in the origin's replica,
// else in the database (a record just made, which the replica may not have applied yet):
// 404 rest_global_styles_not_found when there is none of that type.
func (s *Server) loadGlobalStyles(ctx context.Context, rq *handler.Request, raw string) (*schema.Post, error) {
	id := globalStylesID(raw)
	if id == 0 {
		return nil, globalStylesNotFound
	}
	p := rq.Tenant.Snapshot().Post(id, replica.Full)
	if p == nil {
		err := s.db.Tx(ctx, func(tx *store.Tx) (err error) {
			p, err = tx.Post(ctx, rq.Info, id)
			return err
		})
		if schema.ErrorCode(err) == schema.CodeNotFound {
			return nil, globalStylesNotFound
		}
		if err != nil {
			return nil, err
		}
	}
	if p.Type != schema.TypeGlobalStyles {
		return nil, globalStylesNotFound
	}
	return p, nil
}

// renderGlobalStyles renders a global styles record for the caller in a context.
func (s *Server) renderGlobalStyles(ctx context.Context, rq *handler.Request, p *schema.Post, context string) *schema.GlobalStylesView {
	allow := s.recordHints(ctx, rq, p, nil)(schema.GlobalStylesPath(p.ID)) // allow.go
	return schema.RenderGlobalStyles(p, schema.GlobalStylesRender{Context: context, Allow: allow,
		Publish: can(rq, schema.CapPublishPosts), EditCSS: can(rq, schema.CapEditThemeOptions) && can(rq, schema.CapUnfilteredHTML)}, s.site(rq))
}

// getGlobalStyles answers GET /cms/v2/global-styles/{id}, with WordPress's checks in its order:
// the record (404), the edit context (edit_post, rest_forbidden_context), reading (read_post,
// rest_cannot_view). The route declares no context argument, as WordPress's: the query's is
// read as given, and anything but embed and edit renders the view context.
func (s *Server) getGlobalStyles(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	context := string(ctx.QueryArgs().Peek("context"))
	p, err := s.loadGlobalStyles(ctx, rq, pipeline.Param(ctx, "id"))
	switch {
	case err != nil:
	case context == "edit" && !canEditGlobalStyles(rq):
		err = cannot(rq, "rest_forbidden_context", "Sorry, you are not allowed to edit this global style.")
	case !canReadGlobalStyles(rq):
		err = cannot(rq, "rest_cannot_view", "Sorry, you are not allowed to view this global style.")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.renderGlobalStyles(ctx, rq, p, context))
}

// updateGlobalStyles answers POST, PUT and PATCH /cms/v2/global-styles/{id}: the body's types
// first (400), then the record (404) and edit_post (rest_cannot_edit), then the custom CSS
// (rest_custom_css_illegal_markup), as WordPress. Styles and settings sent replace the stored
// ones; the update keeps a revision when the content or title changed, and answers the record
// in the view context.
func (s *Server) updateGlobalStyles(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	w, err := decodeGlobalStylesBody(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	id := globalStylesID(pipeline.Param(ctx, "id"))
	var view *schema.GlobalStylesView
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if id == 0 {
			return globalStylesNotFound
		}
		old, err := tx.Post(ctx, rq.Info, id)
		if schema.ErrorCode(err) == schema.CodeNotFound || err == nil && old.Type != schema.TypeGlobalStyles {
			return globalStylesNotFound
		}
		if err != nil {
			return err
		}
		if rq.User == nil || !canEditGlobalStyles(rq) {
			return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this global style.")
		}
		if err := w.CheckCSS(); err != nil {
			return err
		}
		p := *old
		w.Apply(&p)
		p.ModifiedGMT = tx.Now()
		if err := keepRevision(ctx, rq, tx, &p); err != nil { // revisions.go
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, old, &p); err != nil {
			return err
		}
		view = s.renderGlobalStyles(ctx, rq, &p, "view")
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}

// decodeGlobalStylesBody decodes an update's body (schema.DecodeGlobalStylesWrite): JSON only,
// as every CMS write of this build.
func decodeGlobalStylesBody(ctx *fasthttp.RequestCtx) (*schema.GlobalStylesWrite, error) {
	if ct := ctx.Request.Header.ContentType(); len(ctx.Request.Body()) > 0 && len(ct) > 0 && !isJSONContent(ct) {
		return nil, &schema.Error{Code: schema.CodeUnsupported, Message: "request body must be application/json"}
	}
	return schema.DecodeGlobalStylesWrite(ctx.Request.Body())
}

// globalStylesParent loads the global styles record a revisions route names (WordPress's
// get_parent, then the revisions controller's read check: edit_post on it), from the database
// in tx.
func globalStylesParent(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx) (*schema.Post, error) {
	id := globalStylesID(pipeline.Param(ctx, "parent"))
	if id == 0 {
		return nil, globalStylesParentNotFound
	}
	p, err := tx.Post(ctx, rq.Info, id)
	if schema.ErrorCode(err) == schema.CodeNotFound || err == nil && p.Type != schema.TypeGlobalStyles {
		return nil, globalStylesParentNotFound
	}
	if err != nil {
		return nil, err
	}
	if rq.User == nil || !canEditGlobalStyles(rq) {
		return nil, cannot(rq, "rest_cannot_read", "Sorry, you are not allowed to view revisions of this post.")
	}
	return p, nil
}

// listGlobalStylesRevisions answers GET /cms/v2/global-styles/{parent}/revisions: the record's
// revisions newest first, paged as WordPress's revisions are (no per_page: every revision on one
// page; a non-zero offset replaces the page's; an offset at or past the total and, without
// offset, a page past the last are 400), with X-WP-Total, X-WP-TotalPages and Link.
func (s *Server) listGlobalStylesRevisions(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var parent *schema.Post
	var revisions []*schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		if parent, err = globalStylesParent(ctx, rq, tx); err != nil {
			return err
		}
		revisions, err = tx.Revisions(ctx, rq.Info, parent.ID)
		return err
	})
	if err == nil && !schema.ParseGlobalStyles(parent.Content).User {
		err = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_global_styles_not_found", Message: "Cannot find user global styles revisions."}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage, total := int(args.Int("page")), int(args.Int("per_page")), len(revisions)
	list := revisions
	if perPage > 0 {
		start := revisionStart(args) // revisions.go
		list = revisions[min(start, total):min(start+perPage, total)]
	}
	totalPages, err := revisionPages(args, total)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := make([]*schema.GlobalStylesRevisionView, 0, len(list))
	for _, r := range list {
		out = append(out, schema.RenderGlobalStylesRevision(r, args.Str("context"), s.site(rq)))
	}
	url := s.site(rq).RestURL(schema.GlobalStylesPath(parent.ID) + "/revisions")
	s.cmsAnswer(ctx, rq, 200, out, schema.CollectionHeaders(url, rq.Route, pipeline.Query(ctx), page, total, totalPages)...)
}

// getGlobalStylesRevision answers GET /cms/v2/global-styles/{parent}/revisions/{id}: 404
// rest_post_invalid_id for what is not a revision, rest_revision_parent_id_mismatch for a
// revision of another record.
func (s *Server) getGlobalStylesRevision(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var rev *schema.Post
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		parent, err := globalStylesParent(ctx, rq, tx)
		if err != nil {
			return err
		}
		id := globalStylesID(pipeline.Param(ctx, "id"))
		if id != 0 {
			rev, err = tx.Revision(ctx, rq.Info, id)
		}
		if id == 0 || schema.ErrorCode(err) == schema.CodeNotFound {
			return &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_id", Message: "Invalid revision ID."}
		}
		if err != nil {
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
	s.cmsAnswer(ctx, rq, 200, schema.RenderGlobalStylesRevision(rev, args.Str("context"), s.site(rq)))
}

// activeThemeOf answers the theme styles routes' checks: the caller may read theme styles
// (rest_cannot_read_global_styles, before the stylesheet is looked at), and the stylesheet is
// the store's active theme (404 rest_theme_not_found: only the active theme is served).
func activeThemeOf(ctx *fasthttp.RequestCtx, rq *handler.Request) (*schema.Theme, error) {
	if !canReadThemeStyles(rq) {
		return nil, cannot(rq, "rest_cannot_read_global_styles", "Sorry, you are not allowed to access the global styles on this site.")
	}
	th := schema.ActiveTheme(rq.Info)
	if pipeline.Param(ctx, "stylesheet") != th.Stylesheet {
		return nil, themeNotFound
	}
	return th, nil
}

// getThemeStyles answers GET /cms/v2/global-styles/themes/{stylesheet}: the active theme's own
// settings and styles (its theme.json's; WordPress merges its core defaults into the settings).
func (s *Server) getThemeStyles(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	th, err := activeThemeOf(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	allow := s.selfHints(ctx, rq)(schema.ThemeStylesPath(th.Stylesheet)) // allow.go
	s.cmsAnswer(ctx, rq, 200, schema.RenderThemeStyles(th, allow, s.site(rq)))
}

// getThemeVariations answers GET /cms/v2/global-styles/themes/{stylesheet}/variations: the
// active theme's style variations, each {version, title, settings, styles}.
func (s *Server) getThemeVariations(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	th, err := activeThemeOf(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := append([]schema.ThemeVariation{}, th.Variations...)
	s.cmsAnswer(ctx, rq, 200, out)
}

// designPermitted is the permission check of the global styles and themes routes, for the Allow
// header and the targetHints of self links (allow.go): the handlers' own checks, without their
// argument validation. handled is false for any other route.
func (s *Server) designPermitted(rq *handler.Request, r *schema.Route, param func(string) string, query func(string) (string, bool)) (allowed, handled bool) {
	switch r.Name {
	case "cms.global-styles.get":
		context, _ := query("context")
		return s.knownGlobalStyles(rq, param("id")) && (context != "edit" || canEditGlobalStyles(rq)) && canReadGlobalStyles(rq), true
	case "cms.global-styles.update":
		return s.knownGlobalStyles(rq, param("id")) && canEditGlobalStyles(rq), true
	case "cms.global-styles.revisions.list", "cms.global-styles.revisions.get":
		return s.knownGlobalStyles(rq, param("parent")) && canEditGlobalStyles(rq), true
	case "cms.global-styles.theme", "cms.global-styles.variations":
		return canReadThemeStyles(rq), true
	case "cms.themes.list":
		status, _ := query("status")
		return canSwitchThemes(rq) || status == "active" && canEditSomeType(rq), true
	case "cms.themes.get":
		return canSwitchThemes(rq) || param("stylesheet") == schema.ActiveTheme(rq.Info).Stylesheet && canEditSomeType(rq), true
	}
	return false, false
}

// knownGlobalStyles reports whether the origin's replica holds the global styles record of an
// id capture.
func (s *Server) knownGlobalStyles(rq *handler.Request, raw string) bool {
	id := globalStylesID(raw)
	p := rq.Tenant.Snapshot().Post(id, replica.Full)
	return id != 0 && p != nil && p.Type == schema.TypeGlobalStyles
}
