package schema

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Templates and template parts as WordPress's templates controller answers them (its
// WP_Block_Template objects): one Template is either a file of the active theme the store has
// not customised (source "theme", no record) or a record (source "custom") that overrides the
// file of the same theme and slug, or stands alone. The origin resolves which (origin/templates.go);
// this file builds the objects and renders them, and declares their item schema.

// TemplateSlugPattern is the pattern a template or template part slug must match (WordPress's,
// unanchored as WordPress applies it: a slug needs one character of the class).
const TemplateSlugPattern = `[a-zA-Z0-9_\%-]+`

// Template is one template or template part: a theme file or a record.
type Template struct {
	// Type is TypeTemplate or TypeTemplatePart.
	Type  string
	Theme string
	Slug  string
	// Title, Content and Description are the file's, or the record's title, content and excerpt.
	Title, Content, Description string
	Status                      PostStatus
	// Record is the store's record, nil for a theme file. For a revision's view it is the
	// revision (its id is the view's cms_id).
	Record *Post
	// HasThemeFile: the active theme has a file of this type and slug, and Theme is the active
	// theme.
	HasThemeFile bool
	// IsCustom: a template outside the template hierarchy (not one of DefaultTemplateTypes).
	IsCustom bool
	// Area is a template part's area.
	Area string
	// Origin is "theme" for a record made by customising a theme file, else "".
	Origin string
	Author UserID
	// PostTypes are the post types a custom template is offered for; nil when it names none.
	PostTypes []string
	// Modified and Date are the record's (zero for a theme file, rendered as null).
	Modified, Date time.Time
}

// ID is the template's id, theme//slug.
func (t *Template) ID() string { return TemplateID(t.Theme, t.Slug) }

// Source is "custom" for a record and "theme" for a theme file.
func (t *Template) Source() string {
	if t.Record != nil {
		return "custom"
	}
	return "theme"
}

// IsDefaultTemplate reports whether a template slug is one of WordPress's template hierarchy
// (DefaultTemplateTypes).
func IsDefaultTemplate(slug string) bool {
	_, ok := DefaultTemplateTypes[slug]
	return ok
}

// IsTemplateType reports whether a stored post type is a template or a template part.
func IsTemplateType(typ string) bool { return typ == TypeTemplate || typ == TypeTemplatePart }

// ThemeFile returns the file of typ (template or part) with slug in th, or nil.
func (th *Theme) ThemeFile(typ, slug string) *ThemeTemplate {
	if typ == TypeTemplatePart {
		return th.Part(slug)
	}
	return th.Template(slug)
}

// filePostTypes returns the post types a theme file offers itself for: a custom template of
// theme.json names them (WordPress's default is pages); other files name none.
func filePostTypes(typ string, f *ThemeTemplate) []string {
	if typ != TypeTemplate || !f.IsCustom {
		return nil
	}
	if len(f.PostTypes) == 0 {
		return []string{"page"}
	}
	return f.PostTypes
}

// TemplateFromFile is the template of one file of th (WordPress's
// _build_block_template_result_from_file): published, with the hierarchy's title and
// description for a default template, is_custom for the others.
func TemplateFromFile(th *Theme, typ string, f *ThemeTemplate) *Template {
	t := &Template{Type: typ, Theme: th.Stylesheet, Slug: f.Slug, Title: f.Title, Content: f.Content,
		Status: StatusPublish, HasThemeFile: true, IsCustom: true, PostTypes: filePostTypes(typ, f)}
	if t.Title == "" {
		t.Title = f.Slug
	}
	if typ == TypeTemplate && IsDefaultTemplate(f.Slug) {
		d := DefaultTemplateTypes[f.Slug]
		t.Title, t.Description, t.IsCustom = d[0], d[1], false
	}
	if typ == TypeTemplatePart {
		t.Area = f.Area
		if t.Area == "" {
			t.Area = AreaUncategorized
		}
	}
	return t
}

// TemplateFromRecord is the template of a record (WordPress's
// _build_block_template_result_from_post), with active the store's active theme.
func TemplateFromRecord(active *Theme, p *Post) *Template {
	d := Design{}
	if p.Design != nil {
		d = *p.Design
	}
	t := &Template{Type: p.Type, Theme: d.Theme, Slug: p.Slug, Title: p.Title, Content: p.Content, Description: p.Excerpt,
		Status: p.Status, Record: p, IsCustom: true, Area: d.Area, Origin: d.Origin, Author: p.Author,
		Modified: p.ModifiedGMT, Date: p.DateGMT}
	if active != nil && active.Stylesheet == d.Theme {
		if f := active.ThemeFile(p.Type, p.Slug); f != nil {
			t.HasThemeFile = true
			t.PostTypes = filePostTypes(p.Type, f)
		}
	}
	if p.Type == TypeTemplate && IsDefaultTemplate(p.Slug) {
		t.IsCustom = false
	}
	if p.Type == TypeTemplatePart && t.Area == "" {
		t.Area = AreaUncategorized
	}
	return t
}

// TemplateOfRevision is the template a revision or autosave of record shows (WordPress renders
// one as its record's template with the revision's title, content, description, author, status
// and dates, and the revision's id as cms_id).
func TemplateOfRevision(active *Theme, record, rev *Post) *Template {
	t := TemplateFromRecord(active, record)
	t.Title, t.Content, t.Description, t.Author = rev.Title, rev.Content, rev.Excerpt, rev.Author
	t.Status, t.Record, t.Modified, t.Date = rev.Status, rev, rev.ModifiedGMT, rev.DateGMT
	return t
}

// OriginalSource is where a template first came from (WordPress's original_source): "theme"
// for a theme file or a customised one, "site" for a record made from scratch without an
// author, else "user".
func (t *Template) OriginalSource() string {
	if t.HasThemeFile && (t.Origin == "theme" || t.Origin == "") {
		return "theme"
	}
	if !t.HasThemeFile && t.Record != nil && t.Author == 0 {
		return "site"
	}
	return "user"
}

// TemplateRender says how to render a template.
type TemplateRender struct {
	// Context is view, embed or edit.
	Context string
	// Route is the post type whose routes the links name (the route's own type: a lookup of the
	// template parts controller resolves templates, linked under template-parts, as WordPress).
	Route *PostType
	// Allow lists the methods the caller may use at the template's route (its self link's
	// targetHints); nil is a reader's GET alone.
	Allow []string
	// Publish and UnfilteredHTML add WordPress's action links (the type's publish capability,
	// unfiltered_html).
	Publish, UnfilteredHTML bool
	// ThemeName is the name of the template's theme, SiteName the store's; AuthorName finds a
	// user's display name (author_text).
	ThemeName, SiteName string
	AuthorName          func(UserID) (string, bool)
	// Revision renders a revision ("revisions") or an autosave ("autosaves") of the record
	// Parent: parent is added, and the links are the revision's.
	Revision string
	Parent   PostID
}

// TemplateContent is a template's content object: raw (view, edit) and block_version (edit).
// With neither, WordPress's empty array is printed.
type TemplateContent struct {
	Raw          *string
	BlockVersion *int
}

// MarshalJSON prints {"raw":…,"block_version":…}, or [] when both are hidden (embed).
func (c TemplateContent) MarshalJSON() ([]byte, error) {
	if c.Raw == nil && c.BlockVersion == nil {
		return []byte("[]"), nil
	}
	return MarshalJSON(struct {
		Raw          *string `json:"raw,omitempty"`
		BlockVersion *int    `json:"block_version,omitempty"`
	}{c.Raw, c.BlockVersion})
}

// TemplateView is a template or template part as the CMS interface renders it, in WordPress's
// member order. Modified and Date hold a *string (nil: JSON null) in the view and edit
// contexts and are absent in embed; Parent is a revision's.
type TemplateView struct {
	ID             string            `json:"id"`
	Theme          string            `json:"theme"`
	Content        TemplateContent   `json:"content"`
	Slug           string            `json:"slug"`
	Source         string            `json:"source"`
	Origin         *string           `json:"origin"`
	Type           string            `json:"type"`
	Description    string            `json:"description"`
	Title          Rendered          `json:"title"`
	Status         PostStatus        `json:"status"`
	CMSID          PostID            `json:"cms_id"`
	HasThemeFile   bool              `json:"has_theme_file"`
	IsCustom       *bool             `json:"is_custom,omitempty"`
	Author         UserID            `json:"author"`
	Area           *string           `json:"area,omitempty"`
	Modified       any               `json:"modified,omitempty"`
	Date           any               `json:"date,omitempty"`
	AuthorText     string            `json:"author_text"`
	OriginalSource string            `json:"original_source"`
	Parent         *PostID           `json:"parent,omitempty"`
	Links          map[string][]Link `json:"_links,omitempty"`
}

// RenderTemplate builds the CMS view of a template (WordPress's prepare_item_for_response of
// the templates controller, or of its revisions and autosaves controllers when r.Revision is
// set).
func RenderTemplate(t *Template, r TemplateRender, site Site) *TemplateView {
	loc := site.Loc
	if loc == nil {
		loc = time.UTC
	}
	edit, embed := r.Context == "edit", r.Context == "embed"
	v := &TemplateView{ID: t.ID(), Theme: t.Theme, Slug: t.Slug, Source: t.Source(), Type: t.Type, Description: t.Description,
		Title: Rendered{Raw: ptr(t.Title), Rendered: t.Title}, Status: t.Status, HasThemeFile: t.HasThemeFile, Author: t.Author,
		OriginalSource: t.OriginalSource()}
	if !embed {
		v.Content.Raw = ptr(t.Content)
	}
	if edit {
		v.Content.BlockVersion = ptr(blockVersion(t.Content))
	}
	if t.Origin != "" {
		v.Origin = ptr(t.Origin)
	}
	if t.Record != nil {
		v.CMSID = t.Record.ID
	}
	if t.Type == TypeTemplate {
		v.IsCustom = ptr(t.IsCustom)
	}
	if t.Type == TypeTemplatePart {
		v.Area = ptr(t.Area)
	}
	if !embed {
		var modified, date *string
		if !t.Modified.IsZero() {
			modified = ptr(t.Modified.In(loc).Format(CMSDateLayout))
		}
		if !t.Date.IsZero() {
			date = ptr(t.Date.In(loc).Format(CMSDateLayout))
		}
		v.Modified, v.Date = modified, date
	}
	switch v.OriginalSource {
	case "theme":
		v.AuthorText = r.ThemeName
		if v.AuthorText == "" {
			v.AuthorText = t.Theme
		}
	case "site":
		v.AuthorText = r.SiteName
	default:
		v.AuthorText = "Unknown author"
		if r.AuthorName != nil {
			if name, ok := r.AuthorName(t.Author); ok {
				v.AuthorText = name
			}
		}
	}
	route := r.Route
	if route == nil {
		route = PostTypeByName(t.Type)
	}
	item := route.Collection() + "/" + t.ID()
	if r.Revision != "" {
		v.Parent = ptr(r.Parent)
		v.Links = map[string][]Link{
			"self":   {{Href: site.RestURL(item + "/" + r.Revision + "/" + strconv.FormatInt(int64(v.CMSID), 10))}},
			"parent": {{Href: site.RestURL(item)}},
		}
		return v
	}
	self := site.RestURL(item)
	v.Links = map[string][]Link{
		"self":       {{Href: self, TargetHints: SelfHints(r.Allow)}},
		"collection": {{Href: site.RestURL(route.Collection())}},
		"about":      {{Href: site.RestURL("/cms/v2/types/" + route.Name)}},
	}
	if t.Record != nil && t.Record.Type == route.Name && route.Revisions {
		// Revisions and autosaves, counted by the record (revisions.go).
		revisions := item + "/revisions"
		v.Links["version-history"] = []Link{{Href: site.RestURL(revisions), Count: ptr(t.Record.RevisionCount)}}
		if t.Record.RevisionCount > 0 {
			v.Links["predecessor-version"] = []Link{{Href: site.RestURL(revisions + "/" + strconv.FormatInt(int64(t.Record.LatestRevision), 10)),
				ID: ptr(t.Record.LatestRevision)}}
		}
	}
	if r.Publish {
		v.Links["wp:action-publish"] = []Link{{Href: self}}
	}
	if r.UnfilteredHTML {
		v.Links["wp:action-unfiltered-html"] = []Link{{Href: self}}
	}
	if r.Publish || r.UnfilteredHTML {
		v.Links["curies"] = []Link{{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}}
	}
	return v
}

// RevisionsPathOf returns the route of a record's revisions: by id for the post types, by
// template id (theme//slug) for templates and template parts.
func RevisionsPathOf(p *Post) string {
	t := PostTypeByName(p.Type)
	if t == nil {
		t = PostTypes[0]
	}
	if IsTemplateType(p.Type) && p.Design != nil {
		return t.Collection() + "/" + TemplateID(p.Design.Theme, p.Slug) + "/revisions"
	}
	return t.RevisionsPath(p.ID)
}

// tprop is one property of a template's item schema, in WordPress's member order (context
// after the type, the other keywords after it).
func tprop(desc string, typ any, ctx []string, extra ...jsonMember) jsonObject {
	o := jsonObject{}
	if desc != "" {
		o = append(o, jsonMember{"description", desc})
	}
	o = append(o, jsonMember{"type", typ}, jsonMember{"context", ctx})
	return append(o, extra...)
}

var (
	ctxEVE = []string{"embed", "view", "edit"}
	ctxVEE = []string{"view", "edit", "embed"}
	ro     = jsonMember{"readonly", true}
)

// templateItemSchema is the item schema of templates (t TypeTemplate) or template parts
// (WordPress's templates controller get_item_schema); revision adds the parent property of the
// revisions and autosaves routes.
func templateItemSchema(t *PostType, revision bool) jsonObject {
	p := jsonObject{
		{"id", tprop("ID of template.", "string", ctxEVE, ro)},
		{"slug", tprop("Unique slug identifying the template.", "string", ctxEVE,
			jsonMember{"required", true}, jsonMember{"minLength", 1}, jsonMember{"pattern", TemplateSlugPattern})},
		{"theme", tprop("Theme identifier for the template.", "string", ctxEVE)},
		{"type", tprop("Type of template.", "string", ctxEVE)},
		{"source", tprop("Source of template", "string", ctxEVE, ro)},
		{"origin", tprop("Source of a customized template", "string", ctxEVE, ro)},
		{"content", jsonObject{{"description", "Content of template."}, {"type", []string{"object", "string"}}, {"default", ""},
			{"context", ctxEVE}, {"properties", jsonObject{
				{"raw", tprop("Content for the template, as it exists in the database.", "string", ctxVE)},
				{"block_version", tprop("Version of the content block format used by the template.", "integer", ctxEdit, ro)},
			}}}},
		{"title", jsonObject{{"description", "Title of template."}, {"type", []string{"object", "string"}}, {"default", ""},
			{"context", ctxEVE}, {"properties", jsonObject{
				{"raw", tprop("Title for the template, as it exists in the database.", "string", ctxVEE)},
				{"rendered", tprop("HTML title for the template, transformed for display.", "string", ctxVEE, ro)},
			}}}},
		{"description", jsonObject{{"description", "Description of template."}, {"type", "string"}, {"default", ""}, {"context", ctxEVE}}},
		{"status", jsonObject{{"description", "Status of template."}, {"type", "string"}, {"enum", statusEnum}, {"default", "publish"}, {"context", ctxEVE}}},
		{"cms_id", tprop("Post ID.", "integer", ctxEVE, ro)},
		{"has_theme_file", tprop("Theme file exists.", "bool", ctxEVE, ro)},
		{"author", tprop("The ID for the author of the template.", "integer", ctxVEE)},
		{"modified", jsonObject{{"description", "The date the template was last modified, in the site's timezone."},
			{"type", []string{"string", "null"}}, {"format", "date-time"}, {"context", ctxVE}, ro}},
		{"author_text", jsonObject{{"type", "string"}, {"description", "Human readable text for the author."}, ro, {"context", ctxVEE}}},
		{"original_source", jsonObject{{"description", "Where the template originally comes from e.g. 'theme'"}, {"type", "string"}, ro,
			{"context", ctxVEE}, {"enum", []string{"theme", "plugin", "site", "user"}}}},
		{"date", jsonObject{{"description", "The date the template was published, in the site's timezone."},
			{"type", []string{"string", "null"}}, {"format", "date-time"}, {"context", ctxVE}, ro}},
	}
	if t.Name == TypeTemplate {
		p = append(p,
			jsonMember{"is_custom", tprop("Whether a template is a custom template.", "bool", ctxEVE, ro)},
			jsonMember{"plugin", jsonObject{{"type", "string"}, {"description", "Plugin that registered the template."}, ro, {"context", ctxVEE}}})
	} else {
		p = append(p, jsonMember{"area", tprop("Where the template part is intended for use (header, footer, etc.)", "string", ctxEVE)})
	}
	if revision {
		p = append(p, jsonMember{"parent", jsonObject{{"description", "The ID for the parent of the revision."}, {"type", "integer"}, {"context", ctxVEE}}})
	}
	return itemSchema(t.Name, p)
}

// templateRouteSchema returns the item schema of a templates or template parts route path, or
// nil when path is not one.
func templateRouteSchema(path string) jsonObject {
	for _, name := range []string{TypeTemplate, TypeTemplatePart} {
		t := PostTypeByName(name)
		rest, ok := strings.CutPrefix(path, t.Collection())
		if !ok || rest != "" && rest[0] != '/' {
			continue
		}
		segs := strings.Split(strings.Trim(rest, "/"), "/")
		if rest == "/lookup" {
			return nil // WordPress's lookup route declares no schema
		}
		return templateItemSchema(t, slices.Contains(segs, "revisions") || slices.Contains(segs, "autosaves"))
	}
	return nil
}
