package schema

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Global styles (WordPress's wp_global_styles): the styles and settings a store lays over its
// active theme's theme.json. They are one record of type TypeGlobalStyles per store and theme
// (Post.Design.Theme is the theme's stylesheet), made the first time the theme's user styles are
// asked for (NewGlobalStyles). The record's content is a user theme.json:
//
//	{"styles":{…},"settings":{…},"isGlobalStylesUserThemeJSON":true,"version":3}
//
// Updates replace styles and settings as wholes (DecodeGlobalStylesWrite, Apply) and keep
// revisions by the posts' rules. This file also renders the global styles, their revisions, a
// theme's own styles and the themes controller's view of a theme. What is stored is answered as
// written: WordPress runs user styles through WP_Theme_JSON, which drops what its schema does not
// know; this build does not (it keeps no copy of that schema).

// GlobalStylesTitle is the title of a new global styles record.
const GlobalStylesTitle = "Custom Styles"

// ThemeJSONVersion is the theme.json schema version written into global styles records
// (WordPress's WP_Theme_JSON::LATEST_SCHEMA).
const ThemeJSONVersion = 3

// GlobalStylesSlug returns the slug of the global styles record of a theme (WordPress's
// wp-global-styles-{stylesheet}).
func GlobalStylesSlug(stylesheet string) string { return "cms-global-styles-" + stylesheet }

// NewGlobalStyles returns a new global styles record of the theme stylesheet, made by author at
// now: published, titled GlobalStylesTitle, with empty styles and settings.
func NewGlobalStyles(stylesheet string, author UserID, now time.Time) *Post {
	return &Post{Type: TypeGlobalStyles, Status: StatusPublish, Slug: GlobalStylesSlug(stylesheet), Title: GlobalStylesTitle,
		Content: GlobalStylesConfig{}.Content(), Author: author, CommentStatus: "closed", PingStatus: "closed", Format: "standard",
		DateGMT: now, ModifiedGMT: now, Design: &Design{Theme: stylesheet}}
}

// GlobalStylesConfig is the user theme.json a global styles record (or one of its revisions)
// holds. Styles and Settings are JSON objects, nil when the content has none; User says the
// content is a user theme.json at all (its isGlobalStylesUserThemeJSON is true), which
// WordPress requires before it shows any of it.
type GlobalStylesConfig struct {
	Styles, Settings json.RawMessage
	User             bool
}

// ParseGlobalStyles reads the user theme.json of a record's content. Content that is not one
// gives a config with User false.
func ParseGlobalStyles(content string) GlobalStylesConfig {
	var c struct {
		Styles   json.RawMessage `json:"styles"`
		Settings json.RawMessage `json:"settings"`
		User     bool            `json:"isGlobalStylesUserThemeJSON"`
	}
	if json.Unmarshal([]byte(content), &c) != nil || !c.User {
		return GlobalStylesConfig{}
	}
	cfg := GlobalStylesConfig{User: true}
	if IsJSONObject(c.Styles) {
		cfg.Styles = c.Styles
	}
	if IsJSONObject(c.Settings) {
		cfg.Settings = c.Settings
	}
	return cfg
}

// Content encodes the config as a record's content: styles, settings (empty objects when nil),
// isGlobalStylesUserThemeJSON and version, in WordPress's order.
func (c GlobalStylesConfig) Content() string {
	b, err := MarshalJSON(struct {
		Styles   json.RawMessage `json:"styles"`
		Settings json.RawMessage `json:"settings"`
		User     bool            `json:"isGlobalStylesUserThemeJSON"`
		Version  int             `json:"version"`
	}{orEmptyObject(c.Styles), orEmptyObject(c.Settings), true, ThemeJSONVersion})
	if err != nil {
		panic("schema: global styles content: " + err.Error()) // only valid JSON objects get here
	}
	return string(b)
}

// IsJSONObject reports whether b is a JSON object (its first non-space byte is '{'); b is taken
// to be valid JSON.
func IsJSONObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// isEmptyJSONObject reports whether b is absent or the empty JSON object (PHP's empty() on the
// decoded array).
func isEmptyJSONObject(b json.RawMessage) bool {
	if len(b) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && len(m) == 0
}

// GlobalStylesWrite is the body of a global styles update (WordPress's global styles controller:
// styles, settings and title; anything else is ignored). Styles and Settings are JSON objects,
// nil when not sent; Title is nil when not sent or sent as {"raw": ""}, which WordPress ignores.
type GlobalStylesWrite struct {
	Styles, Settings json.RawMessage
	Title            *string
}

// DecodeGlobalStylesWrite decodes and validates the body of a global styles update, as
// WordPress's argument validation does: styles and settings must be objects (an empty array or
// an empty string is WordPress's empty object; null is absent), title a string or an object
// whose raw is a string. An empty body, or JSON that is not an object, changes nothing. A body
// that is not JSON is 400 rest_invalid_json; a wrong type 400 rest_invalid_param.
func DecodeGlobalStylesWrite(body []byte) (*GlobalStylesWrite, error) {
	w := &GlobalStylesWrite{}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return w, nil
	}
	if !json.Valid(body) {
		return nil, &Error{Code: CodeInvalid, CMSCode: "rest_invalid_json", Message: "malformed JSON body"}
	}
	var fields map[string]json.RawMessage
	if body[0] != '{' || json.Unmarshal(body, &fields) != nil {
		return w, nil // a JSON value that is not an object carries no parameters (WordPress ignores it)
	}
	object := func(name string) (json.RawMessage, error) {
		v := bytes.TrimSpace(fields[name])
		switch {
		case len(v) == 0 || string(v) == "null":
			return nil, nil
		case v[0] == '{':
			return v, nil
		case string(v) == `""` || isEmptyJSONArray(v):
			return json.RawMessage("{}"), nil
		}
		return nil, InvalidParam(name, name+" is not of type object.")
	}
	var err error
	if w.Styles, err = object("styles"); err != nil {
		return nil, err
	}
	if w.Settings, err = object("settings"); err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(fields["title"]); len(t) > 0 && string(t) != "null" {
		switch t[0] {
		case '"':
			var s string
			if err := json.Unmarshal(t, &s); err != nil {
				return nil, InvalidParam("title", "title is not of type object, string.")
			}
			w.Title = &s
		case '{':
			var o map[string]json.RawMessage
			if err := json.Unmarshal(t, &o); err != nil {
				return nil, InvalidParam("title", "title is not of type object, string.")
			}
			if raw := bytes.TrimSpace(o["raw"]); len(raw) > 0 && string(raw) != "null" {
				var s string
				if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
					return nil, InvalidParam("title", "title[raw] is not of type string.")
				}
				if s != "" {
					w.Title = &s
				}
			}
		default:
			return nil, InvalidParam("title", "title is not of type object, string.")
		}
	}
	return w, nil
}

func isEmptyJSONArray(b []byte) bool {
	var a []json.RawMessage
	return len(b) > 0 && b[0] == '[' && json.Unmarshal(b, &a) == nil && len(a) == 0
}

// cssMarkup is WordPress's test of custom CSS: anything that looks like an HTML tag.
var cssMarkup = regexp.MustCompile(`</?\w`)

// CheckCSS validates the custom CSS of the styles sent (styles.css), as WordPress does when it
// prepares the update, after the permission check: a string without markup, else 400
// rest_custom_css_illegal_markup (or rest_invalid_param when it is not a string).
func (w *GlobalStylesWrite) CheckCSS() error {
	if w.Styles == nil {
		return nil
	}
	var s struct {
		CSS json.RawMessage `json:"css"`
	}
	if json.Unmarshal(w.Styles, &s) != nil || len(s.CSS) == 0 || string(s.CSS) == "null" {
		return nil
	}
	var css string
	if json.Unmarshal(s.CSS, &css) != nil {
		return InvalidParam("styles", "styles[css] is not of type string.")
	}
	if cssMarkup.MatchString(css) {
		return &Error{Code: CodeInvalid, CMSCode: "rest_custom_css_illegal_markup", Message: "Markup is not allowed in CSS."}
	}
	return nil
}

// Apply writes the update into p, a global styles record: the styles and settings sent replace
// the stored ones (those not sent are kept), and the title sent replaces the title.
func (w *GlobalStylesWrite) Apply(p *Post) {
	if w.Styles != nil || w.Settings != nil {
		cfg := ParseGlobalStyles(p.Content)
		if w.Styles != nil {
			cfg.Styles = w.Styles
		}
		if w.Settings != nil {
			cfg.Settings = w.Settings
		}
		p.Content = cfg.Content()
	}
	if w.Title != nil {
		p.Title = *w.Title
	}
}

// GlobalStylesPath returns the rest route of a global styles record.
func GlobalStylesPath(id PostID) string {
	return "/cms/v2/global-styles/" + strconv.FormatInt(int64(id), 10)
}

// GlobalStylesView is a global styles record as the CMS interface renders it (WordPress's global
// styles controller): id and title in every context, settings and styles in view and edit (an
// empty object when the record has none).
type GlobalStylesView struct {
	ID       PostID            `json:"id"`
	Title    Rendered          `json:"title"`
	Settings json.RawMessage   `json:"settings,omitempty"`
	Styles   json.RawMessage   `json:"styles,omitempty"`
	Links    map[string][]Link `json:"_links,omitempty"`
}

// GlobalStylesRender says how to render a global styles record.
type GlobalStylesRender struct {
	// Context is view, embed or edit.
	Context string
	// Allow lists the methods the caller may use on the record (the self link's targetHints).
	Allow []string
	// Publish and EditCSS add the action links of a caller who may publish posts and edit CSS.
	Publish, EditCSS bool
}

// wpCuries is the curies link of views whose relations are compacted to "wp:".
func wpCuries() []Link { return []Link{{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}} }

// RenderGlobalStyles builds the CMS view of a global styles record, with WordPress's links:
// self, about (its type), version-history with the revision count, and the action links.
func RenderGlobalStyles(p *Post, r GlobalStylesRender, site Site) *GlobalStylesView {
	self := site.RestURL(GlobalStylesPath(p.ID))
	v := &GlobalStylesView{ID: p.ID, Title: Rendered{Raw: ptr(p.Title), Rendered: p.Title}}
	if r.Context != "embed" {
		cfg := ParseGlobalStyles(p.Content)
		v.Settings, v.Styles = orEmptyObject(cfg.Settings), orEmptyObject(cfg.Styles)
	}
	v.Links = map[string][]Link{
		"self":            {{Href: self, TargetHints: SelfHints(r.Allow)}},
		"about":           {{Href: site.RestURL("/cms/v2/types/" + TypeGlobalStyles)}},
		"version-history": {{Href: site.RestURL(GlobalStylesPath(p.ID) + "/revisions"), Count: ptr(p.RevisionCount)}},
	}
	if r.Publish {
		v.Links["wp:action-publish"] = []Link{{Href: self}}
	}
	if r.EditCSS {
		v.Links["wp:action-edit-css"] = []Link{{Href: self}}
	}
	if r.Publish || r.EditCSS {
		v.Links["curies"] = wpCuries()
	}
	return v
}

// GlobalStylesRevisionView is a revision of a global styles record as the CMS interface renders
// it (WordPress's global styles revisions controller). Settings and styles are present in the
// view and edit contexts when the revision has either (each an empty object when it lacks it);
// the embed context shows author, date, id and parent.
type GlobalStylesRevisionView struct {
	Settings    json.RawMessage `json:"settings,omitempty"`
	Styles      json.RawMessage `json:"styles,omitempty"`
	Author      UserID          `json:"author"`
	Date        string          `json:"date"`
	DateGMT     *string         `json:"date_gmt,omitempty"`
	ID          PostID          `json:"id"`
	Modified    *string         `json:"modified,omitempty"`
	ModifiedGMT *string         `json:"modified_gmt,omitempty"`
	Parent      PostID          `json:"parent"`
}

// RenderGlobalStylesRevision builds the CMS view of a global styles revision in a context.
func RenderGlobalStylesRevision(r *Post, context string, site Site) *GlobalStylesRevisionView {
	loc := site.Loc
	if loc == nil {
		loc = time.UTC
	}
	v := &GlobalStylesRevisionView{Author: r.Author, Date: r.DateGMT.In(loc).Format(CMSDateLayout), ID: r.ID, Parent: r.Parent}
	if context == "embed" {
		return v
	}
	v.DateGMT = ptr(r.DateGMT.UTC().Format(CMSDateLayout))
	v.Modified = ptr(r.ModifiedGMT.In(loc).Format(CMSDateLayout))
	v.ModifiedGMT = ptr(r.ModifiedGMT.UTC().Format(CMSDateLayout))
	if cfg := ParseGlobalStyles(r.Content); !isEmptyJSONObject(cfg.Styles) || !isEmptyJSONObject(cfg.Settings) {
		v.Settings, v.Styles = orEmptyObject(cfg.Settings), orEmptyObject(cfg.Styles)
	}
	return v
}

// ThemeStylesView is a theme's own global styles (GET /cms/v2/global-styles/themes/{stylesheet}):
// its theme.json settings and styles, as written.
type ThemeStylesView struct {
	Settings json.RawMessage   `json:"settings"`
	Styles   json.RawMessage   `json:"styles"`
	Links    map[string][]Link `json:"_links"`
}

// ThemeStylesPath returns the rest route of a theme's global styles.
func ThemeStylesPath(stylesheet string) string { return "/cms/v2/global-styles/themes/" + stylesheet }

// RenderThemeStyles builds the view of a theme's own styles; allow is the self link's targetHints.
func RenderThemeStyles(th *Theme, allow []string, site Site) *ThemeStylesView {
	return &ThemeStylesView{Settings: th.Settings, Styles: th.Styles,
		Links: map[string][]Link{"self": {{Href: site.RestURL(ThemeStylesPath(th.Stylesheet)), TargetHints: SelfHints(allow)}}}}
}

// ThemeView is a theme as WordPress's themes controller renders it. ThemeSupports is present for
// the active theme only.
type ThemeView struct {
	Stylesheet    string            `json:"stylesheet"`
	Template      string            `json:"template"`
	RequiresPHP   string            `json:"requires_php"`
	RequiresWP    string            `json:"requires_wp"`
	TextDomain    string            `json:"textdomain"`
	Version       string            `json:"version"`
	Screenshot    string            `json:"screenshot"`
	Author        Rendered          `json:"author"`
	AuthorURI     Rendered          `json:"author_uri"`
	Description   Rendered          `json:"description"`
	Name          Rendered          `json:"name"`
	Tags          ThemeTags         `json:"tags"`
	ThemeURI      Rendered          `json:"theme_uri"`
	Status        string            `json:"status"`
	ThemeSupports jsonObject        `json:"theme_supports,omitempty"`
	IsBlockTheme  bool              `json:"is_block_theme"`
	Links         map[string][]Link `json:"_links,omitempty"`
}

// ThemeTags are a theme's tags: the list, and the list joined for display.
type ThemeTags struct {
	Raw      []string `json:"raw"`
	Rendered string   `json:"rendered"`
}

// ThemeRender says how to render a theme.
type ThemeRender struct {
	// Active: the theme is the store's active theme.
	Active bool
	// UserStyles is the id of the theme's global styles record (0: none, no link).
	UserStyles PostID
	// Allow lists the methods the caller may use on the theme (the self link's targetHints).
	Allow []string
}

// ThemePath returns the rest route of a theme.
func ThemePath(stylesheet string) string { return "/cms/v2/themes/" + stylesheet }

// RenderTheme builds the themes controller's view of a built-in theme: its style.css headers
// raw and rendered as WordPress's WP_Theme::display does (the author linked to the author URI,
// URIs escaped, tags joined), its status, the supports of a block theme (BlockThemeSupports)
// when it is active, and its links (self, collection, wp:user-global-styles).
func RenderTheme(th *Theme, r ThemeRender, site Site) *ThemeView {
	h := th.Header
	name := h.Name
	if name == "" {
		name = th.Stylesheet
	}
	author := html.EscapeString(h.Author)
	switch {
	case h.AuthorURI != "":
		author = `<a href="` + html.EscapeString(h.AuthorURI) + `">` + author + `</a>`
	case author == "":
		author = "Anonymous"
	}
	pair := func(raw, rendered string) Rendered { return Rendered{Raw: ptr(raw), Rendered: rendered} }
	v := &ThemeView{Stylesheet: th.Stylesheet, Template: th.Stylesheet, RequiresPHP: h.RequiresPHP, RequiresWP: h.RequiresWP,
		TextDomain: h.TextDomain, Version: h.Version,
		Author: pair(h.Author, author), AuthorURI: pair(h.AuthorURI, html.EscapeString(h.AuthorURI)),
		Description: pair(th.Description, html.EscapeString(th.Description)), Name: pair(name, html.EscapeString(name)),
		Tags:     ThemeTags{Raw: append([]string{}, h.Tags...), Rendered: strings.Join(h.Tags, ", ")},
		ThemeURI: pair(h.ThemeURI, html.EscapeString(h.ThemeURI)), Status: "inactive", IsBlockTheme: true}
	if r.Active {
		v.Status, v.ThemeSupports = "active", BlockThemeSupports()
	}
	v.Links = map[string][]Link{
		"self":       {{Href: site.RestURL(ThemePath(th.Stylesheet)), TargetHints: SelfHints(r.Allow)}},
		"collection": {{Href: site.RestURL("/cms/v2/themes")}},
	}
	if r.UserStyles != 0 {
		v.Links["wp:user-global-styles"] = []Link{{Href: site.RestURL(GlobalStylesPath(r.UserStyles))}}
		v.Links["curies"] = wpCuries()
	}
	return v
}

// BlockThemeSupports are the theme supports of a built-in block theme, as the themes controller
// lists them (WordPress's registered theme features in their order, by REST name): what
// WordPress adds for every block theme (feed links, block templates and parts, editor styles,
// HTML5 markup, post thumbnails, responsive embeds), the standard post format, and every other
// feature off.
func BlockThemeSupports() jsonObject {
	return jsonObject{
		{"align-wide", false},
		{"automatic-feed-links", true},
		{"block-templates", true},
		{"block-template-parts", true},
		{"custom-background", false},
		{"custom-header", false},
		{"custom-logo", false},
		{"customize-selective-refresh-widgets", false},
		{"dark-editor-style", false},
		{"disable-custom-colors", false},
		{"disable-custom-font-sizes", false},
		{"disable-custom-gradients", false},
		{"disable-layout-styles", false},
		{"editor-color-palette", false},
		{"editor-font-sizes", false},
		{"editor-gradient-presets", false},
		{"editor-styles", true},
		{"html5", []string{"comment-form", "comment-list", "search-form", "gallery", "caption", "style", "script"}},
		{"formats", []string{"standard"}},
		{"post-thumbnails", true},
		{"responsive-embeds", true},
		{"title-tag", false},
		{"wp-block-styles", false},
	}
}

// designRouteSchema is the item schema (OPTIONS) of the global styles and themes routes, or nil
// for other paths: WordPress's global styles schema on the record's route, the global styles
// revisions schema on its revisions, the themes schema on the themes routes. A theme's own
// styles and variations have none, as in WordPress.
func designRouteSchema(path string) (sch jsonObject, handled bool) {
	const gs = "/cms/v2/global-styles/"
	switch {
	case path == gs+"{id}":
		return globalStylesSchema(), true
	case path == gs+"{parent}/revisions" || path == gs+"{parent}/revisions/{id}":
		return globalStylesRevisionSchema(), true
	case strings.HasPrefix(path, gs+"themes/"):
		return nil, true
	case path == "/cms/v2/themes" || path == "/cms/v2/themes/{stylesheet}":
		return themeSchema(), true
	}
	return nil, false
}

func globalStylesSchema() jsonObject {
	title := prop("Title of the global styles variation.", []string{"object", "string"}, ctxAll, jsonMember{"default", ""},
		jsonMember{"properties", jsonObject{
			{"raw", prop("Title for the global styles variation, as it exists in the database.", "string", ctxAll)},
			{"rendered", readonly(prop("HTML title for the post, transformed for display.", "string", ctxAll))},
		}})
	return itemSchema(TypeGlobalStyles, jsonObject{
		{"id", readonly(prop("ID of global styles config.", "string", ctxAll))},
		{"styles", prop("Global styles.", []string{"object"}, ctxVE)},
		{"settings", prop("Global settings.", []string{"object"}, ctxVE)},
		{"title", title},
	})
}

func globalStylesRevisionSchema() jsonObject {
	return itemSchema(TypeGlobalStyles+"-revision", jsonObject{
		{"author", prop("The ID for the author of the revision.", "integer", ctxAll)},
		{"date", prop("The date the revision was published, in the site's timezone.", "string", ctxAll, jsonMember{"format", "date-time"})},
		{"date_gmt", prop("The date the revision was published, as GMT.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"id", readonly(prop("ID of global styles config.", "string", ctxAll))},
		{"modified", prop("The date the revision was last modified, in the site's timezone.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"modified_gmt", prop("The date the revision was last modified, as GMT.", "string", ctxVE, jsonMember{"format", "date-time"})},
		{"parent", prop("The ID for the parent of the revision.", "integer", ctxAll)},
		{"styles", prop("Global styles.", []string{"object"}, ctxVE)},
		{"settings", prop("Global settings.", []string{"object"}, ctxVE)},
	})
}

// themeSchema is WordPress's themes schema, whose properties carry no context.
func themeSchema() jsonObject {
	ro := func(desc string, typ any, extra ...jsonMember) jsonObject {
		return append(append(jsonObject{{"description", desc}, {"type", typ}}, extra...), jsonMember{"readonly", true})
	}
	pair := func(desc, rawDesc, renderedDesc string, format bool) jsonObject {
		field := func(d string) jsonObject {
			o := jsonObject{{"description", d}, {"type", "string"}}
			if format {
				o = append(o, jsonMember{"format", "uri"})
			}
			return o
		}
		return ro(desc, "object", jsonMember{"properties", jsonObject{{"raw", field(rawDesc)}, {"rendered", field(renderedDesc)}}})
	}
	supports := jsonObject{}
	for _, m := range BlockThemeSupports() {
		typ := "boolean"
		if _, list := m.value.([]string); list {
			typ = "array"
		}
		supports = append(supports, jsonMember{m.key, jsonObject{{"type", typ}}})
	}
	return itemSchema("theme", jsonObject{
		{"stylesheet", ro("The theme's stylesheet. This uniquely identifies the theme.", "string")},
		{"template", ro("The theme's template. If this is a child theme, this refers to the parent theme, otherwise this is the same as the theme's stylesheet.", "string")},
		{"author", pair("The theme author.", "The theme author's name, as found in the theme header.", "HTML for the theme author, transformed for display.", false)},
		{"author_uri", pair("The website of the theme author.", "The website of the theme author, as found in the theme header.", "The website of the theme author, transformed for display.", true)},
		{"description", pair("A description of the theme.", "The theme description, as found in the theme header.", "The theme description, transformed for display.", false)},
		{"is_block_theme", ro("Whether the theme is a block-based theme.", "boolean")},
		{"name", pair("The name of the theme.", "The theme name, as found in the theme header.", "The theme name, transformed for display.", false)},
		{"requires_php", ro("The minimum PHP version required for the theme to work.", "string")},
		{"requires_wp", ro("The minimum WordPress version required for the theme to work.", "string")},
		{"screenshot", ro("The theme's screenshot URL.", "string", jsonMember{"format", "uri"})},
		{"tags", ro("Tags indicating styles and features of the theme.", "object", jsonMember{"properties", jsonObject{
			{"raw", jsonObject{{"description", "The theme tags, as found in the theme header."}, {"type", "array"}, {"items", jsonObject{{"type", "string"}}}}},
			{"rendered", jsonObject{{"description", "The theme tags, transformed for display."}, {"type", "string"}}},
		}})},
		{"textdomain", ro("The theme's text domain.", "string")},
		{"theme_supports", ro("Features supported by this theme.", "object", jsonMember{"properties", supports})},
		{"theme_uri", pair("The URI of the theme's webpage.", "The URI of the theme's webpage, as found in the theme header.", "The URI of the theme's webpage, transformed for display.", true)},
		{"version", ro("The theme's current version.", "string")},
		{"status", jsonObject{{"description", "A named status for the theme."}, {"type", "string"}, {"enum", []string{"inactive", "active"}}}},
	})
}
