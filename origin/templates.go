package origin

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Templates and template parts (/cms/v2/templates, /cms/v2/template-parts), as WordPress's
// templates controller and its revisions and autosaves controllers answer them. The active
// theme's files (schema.ActiveTheme) are the templates a store has not customised; a record of
// the same type, theme and slug (schema.Design) overrides a file, and a record without a file is
// a custom template. Reads need the edit capability of some post type and are answered from the
// origin's full replica, which has applied every write answered before (read-your-writes);
// writes need edit_theme_options and decide on the database, in their transaction. Revisions
// and autosaves are the posts' (revisions.go), their parent named by template id.

// templateHandlers binds the routes of templates and template parts (schema/routes_design.go).
func (s *Server) templateHandlers() {
	for _, typ := range []string{schema.TypeTemplate, schema.TypeTemplatePart} {
		n := "cms." + schema.PostTypeByName(typ).RestBase
		s.bind(n+".list", s.listTemplates)
		s.bind(n+".get", s.getTemplate)
		s.bind(n+".lookup", s.lookupTemplate)
		s.bind(n+".create", s.createTemplate)
		s.bind(n+".update", s.updateTemplate)
		s.bind(n+".delete", s.deleteTemplate)
		s.bind(n+".revisions.list", s.listRevisions) // revisions.go
		s.bind(n+".revisions.get", s.getRevision)
		s.bind(n+".revisions.delete", s.deleteRevision)
		s.bind(n+".autosaves.list", s.listAutosaves)
		s.bind(n+".autosaves.create", s.createTemplateAutosave)
		s.bind(n+".autosaves.get", s.getAutosave)
	}
}

var (
	templateNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_template_not_found", Message: "No templates exist with that id."}
	templateNoRemove = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_template", Status: 400,
		Message: "Templates based on theme files can't be removed."}
)

// templatesForbidden is the refusal of every templates route: 401 anonymous, 403 signed in.
func templatesForbidden(rq *handler.Request) error {
	return cannot(rq, "rest_cannot_manage_templates", "Sorry, you are not allowed to access the templates on this site.")
}

// templateStatuses are every status a template record can have (a customised template is
// published; a trashed one keeps its record).
var templateStatuses = []schema.PostStatus{schema.StatusPublish, schema.StatusFuture, schema.StatusDraft, schema.StatusPending,
	schema.StatusPrivate, schema.StatusTrash}

// templateRecords returns the records of type typ in snap, newest first (WordPress's query
// order), of the theme when theme is not "" and with the slug when slug is not "".
func templateRecords(snap *replica.Snapshot, typ, theme, slug string) []*schema.Post {
	q := replica.PostQuery{Scope: replica.Full, Type: typ, Statuses: templateStatuses, Limit: math.MaxInt32}
	if slug != "" {
		q.Slugs = []string{slug}
	}
	all, _ := snap.Posts(q)
	out := all[:0:0]
	for _, p := range all {
		if p.Design != nil && (theme == "" || p.Design.Theme == theme) {
			out = append(out, p)
		}
	}
	return out
}

// findTemplate resolves a template id in the replica as WordPress's get_block_template does: the
// record of that theme and slug (any status), else the active theme's file (files only when
// fileOnly); nil when neither exists.
func findTemplate(rq *handler.Request, snap *replica.Snapshot, typ, id string, fileOnly bool) *schema.Template {
	theme, slug, ok := schema.SplitTemplateID(id)
	if !ok {
		return nil
	}
	active := schema.ActiveTheme(rq.Info)
	if !fileOnly {
		if recs := templateRecords(snap, typ, theme, slug); len(recs) > 0 {
			return schema.TemplateFromRecord(active, recs[0])
		}
	}
	if theme != active.Stylesheet {
		return nil
	}
	if f := active.ThemeFile(typ, slug); f != nil {
		return schema.TemplateFromFile(active, typ, f)
	}
	return nil
}

// templateView renders a template for the request's caller.
func (s *Server) templateView(ctx context.Context, rq *handler.Request, snap *replica.Snapshot, tpl *schema.Template, context string) *schema.TemplateView {
	route := postType(rq)
	r := s.templateRender(rq, snap, context)
	r.Allow = s.selfHints(ctx, rq)(route.Collection() + "/" + tpl.ID()) // allow.go
	return schema.RenderTemplate(tpl, r, s.site(rq))
}

// templateRender is how the caller sees templates: the action links of its capabilities, the
// names author_text shows.
func (s *Server) templateRender(rq *handler.Request, snap *replica.Snapshot, context string) schema.TemplateRender {
	return schema.TemplateRender{Context: context, Route: postType(rq),
		Publish: can(rq, postType(rq).Caps.Publish), UnfilteredHTML: can(rq, schema.CapUnfilteredHTML),
		ThemeName: themeName(schema.ActiveTheme(rq.Info)), SiteName: rq.Info.Name,
		AuthorName: func(id schema.UserID) (string, bool) {
			if a := snap.Author(id); a != nil {
				return a.Name, true
			}
			return "", false
		}}
}

func themeName(th *schema.Theme) string {
	if th.Name != "" {
		return th.Name
	}
	return th.Stylesheet
}

// readTemplates runs a read's common start: its arguments, then the read permission.
func readTemplates(ctx *fasthttp.RequestCtx, rq *handler.Request) (*schema.Args, error) {
	args, err := requestArgs(ctx, rq.Route)
	if err == nil && !canEditSomeType(rq) {
		err = templatesForbidden(rq)
	}
	return args, err
}

// listTemplates answers GET /templates (and /template-parts): WordPress's get_block_templates
// for the active theme, unpaginated. The published records come first (newest first), then the
// files no record of the list overrides. cms_id lists records only (drafts too; 0 any record);
// area filters template parts; post_type keeps the custom templates offered for that type.
func (s *Server) listTemplates(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := readTemplates(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	typ := postType(rq).Name
	active := schema.ActiveTheme(rq.Info)
	snap := rq.Tenant.Snapshot()
	cmsID, area, forType := args.Get("cms_id"), args.Get("area"), args.Get("post_type")
	var list []*schema.Template
	for _, p := range templateRecords(snap, typ, active.Stylesheet, "") {
		switch {
		case cmsID.Given && p.Status != schema.StatusPublish && p.Status != schema.StatusDraft,
			!cmsID.Given && p.Status != schema.StatusPublish,
			cmsID.Given && cmsID.Int != 0 && int64(p.ID) != cmsID.Int,
			typ == schema.TypeTemplatePart && area.Given && p.Design.Area != area.Str:
			continue
		}
		tpl := schema.TemplateFromRecord(active, p)
		if forType.Str != "" && (!tpl.IsCustom || tpl.PostTypes != nil && !slices.Contains(tpl.PostTypes, forType.Str)) {
			continue
		}
		list = append(list, tpl)
	}
	if !cmsID.Given {
		taken := map[string]bool{}
		for _, tpl := range list {
			taken[tpl.Slug] = true
		}
		files := active.Templates
		if typ == schema.TypeTemplatePart {
			files = active.Parts
		}
		for i := range files {
			tpl := schema.TemplateFromFile(active, typ, &files[i])
			switch {
			case taken[tpl.Slug], typ == schema.TypeTemplatePart && area.Given && tpl.Area != area.Str:
				continue
			case !forType.Given,
				tpl.PostTypes != nil && slices.Contains(tpl.PostTypes, forType.Str),
				tpl.PostTypes == nil && !schema.IsDefaultTemplate(tpl.Slug):
				list = append(list, tpl)
			}
		}
	}
	context := args.Str("context")
	out := make([]*schema.TemplateView, 0, len(list))
	for _, tpl := range list {
		out = append(out, s.templateView(ctx, rq, snap, tpl, context))
	}
	s.cmsAnswer(ctx, rq, 200, out)
}

// getTemplate answers GET /templates/{theme//slug}: the record, else the theme file (only the
// file with ?source=theme), else 404 rest_template_not_found.
func (s *Server) getTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := readTemplates(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	source := string(ctx.QueryArgs().Peek("source"))
	snap := rq.Tenant.Snapshot()
	tpl := findTemplate(rq, snap, postType(rq).Name, pipeline.Param(ctx, "id"), source == "theme" || source == "plugin")
	if tpl == nil {
		s.Fail(ctx, rq, templateNotFound)
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.templateView(ctx, rq, snap, tpl, args.Str("context")))
}

// lookupTemplate answers GET /templates/lookup?slug=: the template a new template of that slug
// falls back to (WordPress's get_template_fallback): the first of the slug's template hierarchy
// that resolves to a template with content, or {} when none resolves. It resolves templates
// (never parts), on either route, as WordPress does.
func (s *Server) lookupTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := readTemplates(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	slug := args.Str("slug")
	snap := rq.Tenant.Snapshot()
	active := schema.ActiveTheme(rq.Info)
	hierarchy := templateHierarchy(slug, args.Bool("is_custom"), args.Str("template_prefix")) // templates_lookup.go
	records := templateRecords(snap, schema.TypeTemplate, active.Stylesheet, "")
	var found *schema.Template
	for {
		found = resolveTemplate(records, active, slug, hierarchy)
		hierarchy = hierarchy[1:]
		if len(hierarchy) == 0 || found != nil && found.Content != "" {
			break
		}
	}
	if found == nil {
		s.cmsAnswer(ctx, rq, 200, struct{}{})
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.templateView(ctx, rq, snap, found, "view"))
}

// resolveTemplate is WordPress's resolve_block_template: of the published templates (records,
// the active theme's template records, else its files) whose slugs the hierarchy names, the
// first in the hierarchy's order; nil when none, or when the slug asked for is empty.
func resolveTemplate(records []*schema.Post, active *schema.Theme, slug string, hierarchy []string) *schema.Template {
	if slug == "" {
		return nil
	}
	for _, h := range hierarchy {
		if base, ok := strings.CutSuffix(h, ".php"); ok {
			h = base
		} else {
			h = strings.TrimSuffix(h, ".html")
		}
		for _, p := range records {
			if p.Slug == h && p.Status == schema.StatusPublish {
				return schema.TemplateFromRecord(active, p)
			}
		}
		if f := active.Template(h); f != nil {
			return schema.TemplateFromFile(active, schema.TypeTemplate, f)
		}
	}
	return nil
}

// templateAtID splits the route's template id and reads its record in tx (nil when none) and
// the active theme's file of that id (nil when none, or when the id names another theme).
func templateAtID(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx, capture string) (rec *schema.Post, file *schema.ThemeTemplate, theme, slug string, err error) {
	theme, slug, ok := schema.SplitTemplateID(pipeline.Param(ctx, capture))
	if !ok {
		return nil, nil, "", "", templateNotFound
	}
	typ := postType(rq).Name
	if rec, err = tx.TemplateRecord(ctx, rq.Info, typ, theme, slug); err != nil {
		return nil, nil, "", "", err
	}
	if active := schema.ActiveTheme(rq.Info); active.Stylesheet == theme {
		file = active.ThemeFile(typ, slug)
	}
	return rec, file, theme, slug, nil
}

// writeView renders a template just written, in the transaction's terms: the record as stored
// (the replica has not applied it yet), the caller's capabilities.
func (s *Server) writeView(ctx context.Context, rq *handler.Request, tpl *schema.Template, context string) *schema.TemplateView {
	return s.templateView(ctx, rq, rq.Tenant.Snapshot(), tpl, context)
}

// newTemplateRecord is a record of a template or template part of theme, published, by author.
func newTemplateRecord(typ, theme, slug string, author schema.UserID) *schema.Post {
	return &schema.Post{Type: typ, Slug: slug, Status: schema.StatusPublish, Author: author, CommentStatus: "closed",
		PingStatus: "closed", Format: "standard", Design: &schema.Design{Theme: theme}}
}

// checkTemplateAuthor is WordPress's author check of a template write: another user than the
// caller must exist (400 rest_invalid_author).
func checkTemplateAuthor(ctx context.Context, rq *handler.Request, tx *store.Tx, in *templateInput) error {
	if in.Author == nil || *in.Author == 0 || schema.UserID(*in.Author) == rq.User.ID {
		return nil
	}
	if _, err := tx.User(ctx, rq.Info, schema.UserID(*in.Author)); err != nil {
		if schema.ErrorCode(err) == schema.CodeNotFound {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_author", Status: 400, Field: "author", Message: "Invalid author ID."}
		}
		return err
	}
	return nil
}

// createTemplate answers POST /templates: a custom template of the active theme (source custom)
// with the slug, made unique within the theme as WordPress does (slug-2…). 201 with Location.
func (s *Server) createTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeTemplate(ctx, rq, true) // templates_input.go
	if err == nil && !can(rq, schema.CapEditThemeOptions) {
		err = templatesForbidden(rq)
	}
	active := schema.ActiveTheme(rq.Info)
	theme := active.Stylesheet
	if err == nil && in.Theme != nil && *in.Theme != theme {
		// WordPress creates it, then finds no template of the active theme with its id.
		err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_template_insert_error", Status: 400, Message: "No templates exist with that id."}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterTemplateHTML(rq, in)
	typ := postType(rq).Name
	var tpl *schema.Template
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := checkTemplateAuthor(ctx, rq, tx, in); err != nil {
			return err
		}
		slug, err := tx.UniqueTemplateSlug(ctx, rq.Info, typ, theme, in.slug, 0)
		if err != nil {
			return err
		}
		p := newTemplateRecord(typ, theme, slug, rq.User.ID)
		in.apply(p, nil)
		if typ == schema.TypeTemplate {
			p.Design.IsCustom = !schema.IsDefaultTemplate(slug)
		}
		now := tx.Now()
		p.DateGMT, p.ModifiedGMT = now, now
		if err := tx.CreatePost(ctx, rq.Info, p); err != nil {
			return err
		}
		tpl = schema.TemplateFromRecord(active, p)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, s.site(rq).RestURL(postType(rq).Collection()+"/"+tpl.ID()))
	context := "view" // WordPress renders a creation in the request's context, view by default
	if c := string(ctx.QueryArgs().Peek("context")); c == "edit" || c == "embed" {
		context = c
	}
	s.Written(ctx, rq, commits, fasthttp.StatusCreated, s.writeView(ctx, rq, tpl, context))
}

// updateTemplate answers POST/PUT/PATCH /templates/{theme//slug}. A record is updated (a trashed
// one comes back under its slug, published); a theme file is customised: a record of the same
// id is made from the file and the request. source "theme" reverts a customised template to its
// file (the record and its revisions go). The answer is in the edit context.
func (s *Server) updateTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeTemplate(ctx, rq, false)
	if err == nil && !can(rq, schema.CapEditThemeOptions) {
		err = templatesForbidden(rq)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterTemplateHTML(rq, in)
	typ := postType(rq).Name
	active := schema.ActiveTheme(rq.Info)
	var tpl *schema.Template
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		rec, file, theme, slug, err := templateAtID(ctx, rq, tx, "id")
		if err != nil {
			return err
		}
		if rec == nil && file == nil {
			return templateNotFound
		}
		if in.Source == "theme" {
			if file == nil {
				// Nothing to revert to: the template is the record alone.
				return templateNotFound
			}
			if rec != nil {
				if _, err := tx.DeletePost(ctx, rq.Info, rec.ID); err != nil {
					return err
				}
			}
			tpl = schema.TemplateFromFile(active, typ, file)
			return nil
		}
		if err := checkTemplateAuthor(ctx, rq, tx, in); err != nil {
			return err
		}
		now := tx.Now()
		if rec == nil {
			// A theme file's first customisation: the file is the record's start.
			f := schema.TemplateFromFile(active, typ, file)
			p := newTemplateRecord(typ, theme, slug, rq.User.ID)
			p.Title, p.Content, p.Excerpt, p.Design.Area, p.Design.Origin = f.Title, f.Content, f.Description, f.Area, "theme"
			p.Design.IsCustom = typ == schema.TypeTemplate && f.IsCustom
			in.apply(p, f)
			p.DateGMT, p.ModifiedGMT = now, now
			if err := tx.CreatePost(ctx, rq.Info, p); err != nil {
				return err
			}
			tpl = schema.TemplateFromRecord(active, p)
			return nil
		}
		p := *rec
		d := *rec.Design
		p.Design = &d
		if p.Status == schema.StatusTrash {
			// WordPress publishes the template again and gives it its slug back.
			p.Slug = strings.TrimSuffix(p.Slug, "__trashed")
			if p.Slug, err = tx.UniqueTemplateSlug(ctx, rq.Info, typ, theme, p.Slug, p.ID); err != nil {
				return err
			}
		}
		p.Status = schema.StatusPublish
		in.apply(&p, nil)
		p.ModifiedGMT = now
		if err := keepRevision(ctx, rq, tx, &p); err != nil { // revisions.go
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, rec, &p); err != nil {
			return err
		}
		tpl = schema.TemplateFromRecord(active, &p)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, s.writeView(ctx, rq, tpl, "edit"))
}

// deleteTemplate answers DELETE /templates/{theme//slug}. A theme file is not removable (400
// rest_invalid_template). A record is trashed (its slug takes "__trashed", so the id then
// answers with the theme file, or 404; a second delete of the trashed id is 410) or, with
// force=true, deleted for good with its revisions: {deleted, previous}. Either way a customised
// template answers with its theme file again.
func (s *Server) deleteTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err == nil && !can(rq, schema.CapEditThemeOptions) {
		err = templatesForbidden(rq)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	active := schema.ActiveTheme(rq.Info)
	var tpl *schema.Template
	force := args.Bool("force")
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		rec, file, _, _, err := templateAtID(ctx, rq, tx, "id")
		switch {
		case err != nil:
			return err
		case rec == nil && file != nil:
			return templateNoRemove
		case rec == nil:
			return templateNotFound
		}
		tpl = schema.TemplateFromRecord(active, rec)
		if force {
			_, err := tx.DeletePost(ctx, rq.Info, rec.ID)
			return err
		}
		if rec.Status == schema.StatusTrash {
			return &schema.Error{Code: schema.CodeGone, CMSCode: "rest_template_already_trashed", Message: "The template has already been deleted."}
		}
		p := *rec
		p.Status = schema.StatusTrash
		if !strings.HasSuffix(p.Slug, "__trashed") {
			p.Slug += "__trashed"
		}
		p.ModifiedGMT = tx.Now()
		if err := keepRevision(ctx, rq, tx, &p); err != nil { // trashing is an update too
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, rec, &p); err != nil {
			return err
		}
		// WordPress answers with the template it found, marked trashed.
		shown := *rec
		shown.Status, shown.RevisionCount, shown.LatestRevision = schema.StatusTrash, p.RevisionCount, p.LatestRevision
		tpl = schema.TemplateFromRecord(active, &shown)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	view := s.writeView(ctx, rq, tpl, "edit")
	if force {
		s.Written(ctx, rq, commits, 200, map[string]any{"deleted": true, "previous": view})
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}

// templateParent is revisionParent for templates and template parts (WordPress's template
// revisions controller get_parent): the record of the template id in capture; a theme file
// without one has no revisions (400 rest_invalid_template), an unknown id is 404
// rest_post_invalid_parent.
func templateParent(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx, capture string) (*schema.Post, error) {
	rec, file, _, _, err := templateAtID(ctx, rq, tx, capture)
	switch {
	case err == templateNotFound || err == nil && rec == nil && file == nil:
		return nil, &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_parent", Message: "Invalid template parent ID."}
	case err != nil:
		return nil, err
	case rec == nil:
		return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_template", Status: 400,
			Message: "Templates based on theme files can't have revisions."}
	}
	return rec, nil
}

// renderTemplateRevision renders a revision or autosave of a template record (WordPress's template
// revisions and autosaves controllers: the template as the revision has it, with parent).
func (s *Server) renderTemplateRevision(rq *handler.Request, record, rev *schema.Post, context string, autosave bool) *schema.TemplateView {
	tpl := schema.TemplateOfRevision(schema.ActiveTheme(rq.Info), record, rev)
	r := s.templateRender(rq, rq.Tenant.Snapshot(), context)
	r.Revision, r.Parent = "revisions", rev.Parent
	if autosave {
		r.Revision = "autosaves"
	}
	return schema.RenderTemplate(tpl, r, s.site(rq))
}

// createTemplateAutosave answers POST /templates/{theme//slug}/autosaves: the caller's autosave
// of the template's record, with the template write body (an update's permission). As the
// posts' (createAutosave), fields not sent are the record's, and an autosave equal to the record
// is not written again when the caller has one. Templates are never drafts, so the record itself
// is never updated in place. A theme file without a record has none (400).
func (s *Server) createTemplateAutosave(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeTemplate(ctx, rq, false)
	if err == nil && !can(rq, schema.CapEditThemeOptions) {
		err = templatesForbidden(rq)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterTemplateHTML(rq, in)
	var view *schema.TemplateView
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		record, err := templateParent(ctx, rq, tx, "id")
		if err != nil {
			return err
		}
		if err := tx.LockPost(ctx, rq.Info, record.ID); err != nil {
			return err
		}
		want := *record
		d := *record.Design
		want.Design = &d
		in.apply(&want, nil)
		mine, err := tx.Autosave(ctx, rq.Info, record.ID, rq.User.ID)
		if err != nil {
			return err
		}
		if mine != nil && !schema.RevisionFieldsDiffer(&want, record) {
			view = s.renderTemplateRevision(rq, record, mine, "edit", true)
			return nil
		}
		now := tx.Now()
		a := mine
		if a == nil {
			a = schema.NewRevision(record, rq.User.ID, true, now)
		}
		a.Title, a.Content, a.Excerpt = want.Title, want.Content, want.Excerpt
		a.Author, a.DateGMT, a.ModifiedGMT = rq.User.ID, now, now
		if mine != nil {
			err = tx.UpdateRevision(ctx, rq.Info, a)
		} else {
			err = tx.CreateRevision(ctx, rq.Info, a)
		}
		if err != nil {
			return err
		}
		if err := restatRevisions(ctx, rq, tx, record); err != nil { // revisions.go
			return err
		}
		view = s.renderTemplateRevision(rq, record, a, "edit", true)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}
