package schema

import "strings"

// Site design (WordPress's block themes): templates, template parts and global styles are post
// records of their own types (as WordPress's wp_template, wp_template_part and wp_global_styles
// are), so they share the posts' storage, replication, read engine, revisions and autosaves.
// What a record holds beyond the Post is its Design. The theme's own files (theme.go) are not
// records: a template the store has not customised is answered from its theme file, and a
// customised one (a record with the same theme and slug) overrides it.

// Stored post types of the site design.
const (
	TypeTemplate     = "cms_template"
	TypeTemplatePart = "cms_template_part"
	TypeGlobalStyles = "cms_global_styles"
)

// Template part areas (WordPress's).
const (
	AreaHeader            = "header"
	AreaFooter            = "footer"
	AreaUncategorized     = "uncategorized"
	AreaNavigationOverlay = "navigation-overlay"
)

// TemplatePartAreas are the areas a template part may be in.
var TemplatePartAreas = []string{AreaHeader, AreaFooter, AreaUncategorized, AreaNavigationOverlay}

// Design holds what a template, template part or global styles record holds beyond the Post
// record: the theme it belongs to (its stylesheet id), a part's area, and whether a template is
// a custom one made by a user (is_custom: outside the template hierarchy, chosen per page).
// Title, content and description (the Post's excerpt) are the Post's own fields; a global
// styles record keeps its {styles, settings} JSON in the Post's content.
type Design struct {
	Theme    string `json:"theme"`
	Area     string `json:"area,omitempty"`
	IsCustom bool   `json:"is_custom,omitempty"`
	// Origin is where a customised template came from: "theme" when the record was made by
	// editing the active theme's file (WordPress's origin meta), "" for one created as new.
	Origin string `json:"origin,omitempty"`
}

// TemplateIDSeparator separates the theme and the slug of a template id ("vitrine-blocks//home").
const TemplateIDSeparator = "//"

// TemplateID returns the id of a template or template part: theme, "//", slug.
func TemplateID(theme, slug string) string { return theme + TemplateIDSeparator + slug }

// SplitTemplateID splits a template id into its theme and slug. A single slash is accepted for
// the double one, as WordPress normalises it; ok is false when either part is empty.
func SplitTemplateID(id string) (theme, slug string, ok bool) {
	theme, slug, found := strings.Cut(id, TemplateIDSeparator)
	if !found {
		theme, slug, found = strings.Cut(id, "/")
	}
	if !found || theme == "" || slug == "" || strings.Contains(slug, "/") {
		return "", "", false
	}
	return theme, slug, true
}

// JoinedCapture is a path capture that spans two segments: a template id (theme//slug) or an
// ability name (namespace/name). Route paths write it "{id*}". The router matches its two
// segments and joins them with Sep into the parameter Name; the discovery index prints Pattern.
type JoinedCapture struct {
	Name        string
	Sep         string
	Pattern     string
	SlugPattern string // the router's pattern of the second segment
	Description string
}

var joinedCaptures = map[string]JoinedCapture{
	"id*":     {Name: "id", Sep: TemplateIDSeparator, Pattern: `[^/]+//[\w%-]+`, SlugPattern: `[a-zA-Z0-9_%-]+`, Description: "The id of a template"},
	"parent*": {Name: "parent", Sep: TemplateIDSeparator, Pattern: `[^/]+//[\w%-]+`, SlugPattern: `[a-zA-Z0-9_%-]+`, Description: "The id of a template"},
	"name*":   {Name: "name", Sep: "/", Pattern: `[a-z0-9-]+/[a-z0-9-]+`, SlugPattern: `[a-z0-9-]+`, Description: "Unique identifier for the ability."},
}

// JoinedCaptureOf returns the joined capture a path segment declares ("{id*}"), if it is one.
func JoinedCaptureOf(seg string) (JoinedCapture, bool) {
	if len(seg) < 4 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return JoinedCapture{}, false
	}
	c, ok := joinedCaptures[seg[1:len(seg)-1]]
	return c, ok
}

// stringIDCollections are the collections whose item ids are template ids.
var stringIDCollections = []string{"/cms/v2/templates/", "/cms/v2/template-parts/"}

// CollapseTemplateID rewrites a CMS rest route whose template id is written theme//slug into
// the two-segment form theme/slug the router matches; any other path is returned as is.
func CollapseTemplateID(path string) string {
	for _, base := range stringIDCollections {
		if len(path) <= len(base) || !strings.EqualFold(path[:len(base)], base) {
			continue
		}
		rest := path[len(base):]
		i := strings.Index(rest, TemplateIDSeparator)
		// A third slash would leave an empty segment (theme///slug): not an id, left as is, so
		// that collapsing twice changes nothing more than collapsing once.
		if i > 0 && !strings.Contains(rest[:i], "/") && !strings.HasPrefix(rest[i+len(TemplateIDSeparator):], "/") {
			return path[:len(base)] + rest[:i] + "/" + rest[i+len(TemplateIDSeparator):]
		}
	}
	return path
}
