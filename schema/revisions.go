package schema

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Revisions and autosaves of the CMS post types (WordPress's revision post type). A revision is
// a Post of type RevisionType, status inherit, whose Parent is the record it copies: its id comes
// from the post id space, its slug is "{parent}-revision-v1" (or "{parent}-autosave-v1" for an
// autosave, of which each author keeps one per record), and it holds the record's title,
// content, excerpt and revisioned meta (footnotes) as they were. Revisions are not replicated:
// they are private, read only by the origin from its database; the record carries only their
// count and the latest one's id (Post.RevisionCount, Post.LatestRevision), which its links show.

// RevisionType is the stored type of revisions and autosaves.
const RevisionType = "revision"

// StatusInherit is the status of every revision.
const StatusInherit PostStatus = "inherit"

// RevisionSlug returns the slug of a record's revisions, or of its autosaves.
func RevisionSlug(parent PostID, autosave bool) string {
	kind := "-revision-v1"
	if autosave {
		kind = "-autosave-v1"
	}
	return strconv.FormatInt(int64(parent), 10) + kind
}

// IsAutosave reports whether a revision is an autosave (WordPress tells them by their slug).
func (p *Post) IsAutosave() bool {
	return p.Type == RevisionType && strings.Contains(p.Slug, "-autosave")
}

// NewRevision returns a revision (or autosave) of p made by author at now: p's title, content,
// excerpt and footnotes, dated now. Its id is given when it is stored.
func NewRevision(p *Post, author UserID, autosave bool, now time.Time) *Post {
	r := &Post{Type: RevisionType, Status: StatusInherit, Parent: p.ID, Slug: RevisionSlug(p.ID, autosave), Author: author,
		Title: p.Title, Content: p.Content, Excerpt: p.Excerpt, Meta: map[string]string{}, DateGMT: now, ModifiedGMT: now}
	if f, ok := p.Meta["footnotes"]; ok {
		r.Meta["footnotes"] = f
	}
	return r
}

// RevisionFieldsDiffer reports whether a's and b's title, content or excerpt differ once their
// whitespace is normalised: WordPress makes a revision on update only then (or when the record
// has none yet), and an autosave equal to its record is not saved again.
func RevisionFieldsDiffer(a, b *Post) bool {
	return NormalizeWhitespace(a.Title) != NormalizeWhitespace(b.Title) ||
		NormalizeWhitespace(a.Content) != NormalizeWhitespace(b.Content) ||
		NormalizeWhitespace(a.Excerpt) != NormalizeWhitespace(b.Excerpt)
}

var (
	newlineRuns = regexp.MustCompile(`\n+`)
	blankRuns   = regexp.MustCompile(`[ \t]+`)
)

// NormalizeWhitespace is WordPress's normalize_whitespace: trimmed (PHP's trim set), carriage
// returns made newlines, runs of newlines one newline, runs of spaces and tabs one space.
func NormalizeWhitespace(s string) string {
	s = strings.Trim(s, " \t\n\r\x00\x0B")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = newlineRuns.ReplaceAllString(s, "\n")
	return blankRuns.ReplaceAllString(s, " ")
}

// ValidateRevision checks a revision before it is written.
func ValidateRevision(r *Post) error {
	if r.Type != RevisionType || r.Status != StatusInherit || r.Parent <= 0 || r.Parent > MaxExposedID {
		return Invalid("parent", "a revision needs its record")
	}
	if r.Slug != RevisionSlug(r.Parent, true) && r.Slug != RevisionSlug(r.Parent, false) {
		return Invalid("slug", "a revision's slug is its record's id with -revision-v1 or -autosave-v1")
	}
	if err := ValidateText("title", r.Title, MaxTitleLen*4, false); err != nil {
		return err
	}
	if err := ValidateText("content", r.Content, 4<<20, false); err != nil {
		return err
	}
	if err := ValidateText("excerpt", r.Excerpt, MaxDescriptionLen, false); err != nil {
		return err
	}
	for k, v := range r.Meta {
		if k != "footnotes" {
			return Invalid("meta", "meta key %q is not revisioned", k)
		}
		if err := ValidateText("meta", v, 1<<20, false); err != nil {
			return err
		}
	}
	return nil
}

// RevisionsPath returns the route of a record's revisions ("/cms/v2/posts/7/revisions").
func (t *PostType) RevisionsPath(parent PostID) string { return t.Item(parent) + "/revisions" }

// revisionOrderBy are the orderings of a revisions collection (WordPress's revisions controller).
var revisionOrderBy = []string{"date", "id", "include", "relevance", "slug", "include_slugs", "title"}

// revisionListArgs are the arguments of a revisions collection (WordPress's revisions
// controller).
func revisionListArgs() []Arg {
	return []Arg{
		argContext,
		cmsPageArg(),
		// No default: without per_page every revision is listed.
		{Name: "per_page", Type: ArgInt, HasMin: true, Min: 1, HasMax: true, Max: CMSMaxPerPage, Description: "Maximum number of items to be returned in result set."},
		{Name: "search", Type: ArgString, Description: "Limit results to those matching a string."},
		{Name: "exclude", Type: ArgIntList, Description: "Ensure result set excludes specific IDs."},
		{Name: "include", Type: ArgIntList, Description: "Limit result set to specific IDs."},
		{Name: "offset", Type: ArgInt, Description: "Offset the result set by a specific number of items."},
		{Name: "order", Type: ArgString, Default: "desc", Enum: []string{"asc", "desc"}, Description: "Order sort attribute ascending or descending."},
		{Name: "orderby", Type: ArgString, Default: "date", Enum: revisionOrderBy, Description: "Sort collection by object attribute."},
	}
}

// revisionRoutes declares the revisions and autosaves routes of a post type: credentialed reads
// and writes, answered by the origin (edges forward them), never batch-capable.
func (t *PostType) revisionRoutes() []Route {
	n, item := "cms."+t.RestBase, t.Collection()+"/{id}"
	parent := t.Collection() + "/{parent}"
	context := Route{Interface: CMS, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Edit, Args: []Arg{argContext}}
	var out []Route
	if t.Revisions {
		list := Route{Name: n + ".revisions.list", Method: "GET", Interface: CMS, Path: parent + "/revisions", Server: AtOrigin,
			Auth: AuthStaff, Cap: t.Caps.Edit, Args: revisionListArgs()}
		get := context
		get.Name, get.Method, get.Path = n+".revisions.get", "GET", parent+"/revisions/{id}"
		del := Route{Name: n + ".revisions.delete", Method: "DELETE", Interface: CMS, Path: parent + "/revisions/{id}", Server: AtOrigin,
			Auth: AuthStaff, Cap: t.Caps.Delete, Args: []Arg{
				{Name: "force", Type: ArgBool, Default: "false", Description: "Required to be true, as revisions do not support trashing."},
			}}
		out = append(out, list, get, del)
	}
	if t.Autosaves {
		list := context
		list.Name, list.Method, list.Path = n+".autosaves.list", "GET", item+"/autosaves"
		create := Route{Name: n + ".autosaves.create", Method: "POST", Interface: CMS, Path: item + "/autosaves", Server: AtOrigin,
			Auth: AuthStaff, Cap: t.Caps.Edit}
		get := context
		get.Name, get.Method, get.Path = n+".autosaves.get", "GET", parent+"/autosaves/{id}"
		out = append(out, list, create, get)
	}
	return out
}

// RevisionView is a revision or an autosave as the CMS interface renders it (WordPress's
// revisions and autosaves controllers), in WordPress's member order. Pointer fields are present
// only in the contexts that show them. Date and DateGMT hold a *string: a nil one is JSON null
// (a draft whose date floats, rendered by an autosave that updated it), an unset one is absent.
type RevisionView struct {
	Author      UserID             `json:"author"`
	Date        any                `json:"date,omitempty"`
	DateGMT     any                `json:"date_gmt,omitempty"`
	ID          PostID             `json:"id"`
	Modified    *string            `json:"modified,omitempty"`
	ModifiedGMT *string            `json:"modified_gmt,omitempty"`
	Parent      PostID             `json:"parent"`
	Slug        string             `json:"slug"`
	GUID        *Rendered          `json:"guid,omitempty"`
	Title       *Rendered          `json:"title,omitempty"`
	Content     *Rendered          `json:"content,omitempty"`
	Excerpt     *Rendered          `json:"excerpt,omitempty"`
	Meta        *map[string]string `json:"meta,omitempty"`
	PreviewLink *string            `json:"preview_link,omitempty"`
	Links       map[string][]Link  `json:"_links,omitempty"`
}

// RevisionRender says how to render a revision.
type RevisionRender struct {
	// Context is view, embed or edit.
	Context string
	// Type is the post type of the revised record.
	Type *PostType
	// Autosave renders through the autosaves controller: preview_link in the edit context.
	Autosave bool
}

// RenderRevision builds the CMS view of r: a revision or an autosave, or the record itself when
// an autosave of its author's draft updated it in place (WordPress then answers with the record
// in the revision's shape). Title, content and excerpt are the revised type's (menu items have
// a title only); blocks show their raw title and content in the view context too. The fields
// are those of revisionItemSchema.
func RenderRevision(r *Post, rr RevisionRender, site Site) *RevisionView {
	loc := site.Loc
	if loc == nil {
		loc = time.UTC
	}
	t := rr.Type
	if t == nil {
		t = PostTypes[0]
	}
	edit, embed := rr.Context == "edit", rr.Context == "embed"
	menuItem, block := t.Name == "nav_menu_item", t.Name == "cms_block"
	v := &RevisionView{Author: r.Author, ID: r.ID, Parent: r.Parent, Slug: r.Slug}
	// A floating date (a draft never dated) is null here, as WordPress's zero post_date_gmt.
	var date, dateGMT *string
	if !r.DateFloating {
		date, dateGMT = ptr(r.DateGMT.In(loc).Format(CMSDateLayout)), ptr(r.DateGMT.UTC().Format(CMSDateLayout))
	}
	v.Date = date
	if !embed {
		v.DateGMT = dateGMT
		v.Modified = ptr(r.ModifiedGMT.In(loc).Format(CMSDateLayout))
		v.ModifiedGMT = ptr(r.ModifiedGMT.UTC().Format(CMSDateLayout))
	}
	raw := func(s string, shown bool) *string {
		if shown {
			return ptr(s)
		}
		return nil
	}
	if !embed {
		v.GUID = &Rendered{Raw: raw(site.RecordLink(r), edit), Rendered: site.RecordLink(r)}
	}
	v.Title = &Rendered{Raw: raw(r.Title, edit || block && !embed), Rendered: r.Title}
	if !menuItem {
		if !embed {
			v.Content = &Rendered{Raw: raw(r.Content, edit || block), Rendered: RenderContent(r.Content)}
		}
		v.Excerpt = &Rendered{Raw: raw(r.Excerpt, edit), Rendered: RenderContent(r.Excerpt)}
	}
	if !embed {
		meta := map[string]string{}
		if !menuItem {
			meta["footnotes"] = ""
		}
		if block {
			meta["cms_pattern_sync_status"] = ""
		}
		for k, val := range r.Meta {
			if _, registered := meta[k]; registered {
				meta[k] = val
			}
		}
		v.Meta = &meta
	}
	if rr.Autosave && edit {
		v.PreviewLink = ptr(PreviewLink(r, t, site))
	}
	if r.Parent != 0 {
		v.Links = map[string][]Link{"parent": {{Href: site.RestURL(t.Item(r.Parent))}}}
	}
	return v
}

// PreviewLink is an autosave's preview_link: the revised record's permalink with
// preview_id={record}&preview=true (or, for a record an autosave updated in place, its own
// permalink with preview=true); "" for types that have no public page (blocks, menu items,
// navigation). WordPress adds a preview_nonce for its front end; this build serves no preview
// page, so it has none.
func PreviewLink(r *Post, t *PostType, site Site) string {
	if t.Name != "post" && t.Name != "page" {
		return ""
	}
	if r.Type != RevisionType {
		return site.RecordLink(r) + "&preview=true"
	}
	parent := &Post{ID: r.Parent, Type: t.Name}
	return site.RecordLink(parent) + "&preview_id=" + strconv.FormatInt(int64(r.Parent), 10) + "&preview=true"
}

// revisionItemSchema is the item schema of a revisions or autosaves route of t (the OPTIONS
// answer's "schema", itemschema.go), or nil when path is not one: WordPress's revision
// properties, with the revised type's title, content, excerpt, guid and meta in their place,
// and preview_link for autosaves.
func revisionItemSchema(t *PostType, path string) jsonObject {
	rest, ok := strings.CutPrefix(path, t.Collection()+"/")
	autosave := strings.Contains(rest, "/autosaves")
	if !ok || !autosave && !strings.Contains(rest, "/revisions") {
		return nil
	}
	parent := postItemSchema(t)
	parentProp := func(name string) any {
		for _, m := range parent {
			if m.key != "properties" {
				continue
			}
			for _, p := range m.value.(jsonObject) {
				if p.key == name {
					return p.value
				}
			}
		}
		return nil
	}
	p := jsonObject{
		{"author", prop("The ID for the author of the revision.", "integer", ctxAll)},
		{"date", prop("The date the revision was published, in the site's timezone.", "string", ctxAll, jsonMember{"format", "date-time"})},
		{"date_gmt", prop("The date the revision was published, as GMT.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"guid", prop("GUID for the revision, as it exists in the database.", "string", ctxVE)},
		{"id", prop("Unique identifier for the revision.", "integer", ctxAll)},
		{"modified", prop("The date the revision was last modified, in the site's timezone.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"modified_gmt", prop("The date the revision was last modified, as GMT.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"parent", prop("The ID for the parent of the revision.", "integer", ctxAll)},
		{"slug", prop("An alphanumeric identifier for the revision unique to its type.", "string", ctxAll)},
	}
	for _, name := range []string{"title", "content", "excerpt", "guid", "meta"} {
		v := parentProp(name)
		if v == nil {
			continue
		}
		if i := slices.IndexFunc(p, func(m jsonMember) bool { return m.key == name }); i >= 0 {
			p[i].value = v // as PHP, a replaced key keeps its place
			continue
		}
		p = append(p, jsonMember{name, v})
	}
	if autosave {
		p = append(p, jsonMember{"preview_link", readonly(prop("Preview link for the post.", "string", ctxEdit, jsonMember{"format", "uri"}))})
	}
	return itemSchema(t.Name+"-revision", p)
}
