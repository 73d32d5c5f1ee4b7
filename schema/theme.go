package schema

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Themes are block themes built into the binary (schema/themes/{stylesheet}/, laid out as a
// WordPress block theme: style.css with the theme's headers, theme.json, templates/*.html with
// at least index.html, parts/*.html, styles/*.json). A theme is read only: what a store changes
// is kept in records (design.go) that override the theme's files. Every store has an active
// theme (Tenant.Theme; DefaultTheme when unset). A theme directory that is not a well-formed
// block theme is refused by loadTheme; the built-in ones are checked by the tests.

//go:embed themes
var themeFiles embed.FS

// DefaultTheme is the stylesheet of the theme a store starts with.
const DefaultTheme = "vitrine-blocks"

// Theme is one built-in block theme.
type Theme struct {
	// Stylesheet is the theme's id (its directory name), the "theme" of its templates.
	Stylesheet string
	// Name and Description are the theme's, from its style.css header (theme.json's title and
	// description when the header has none).
	Name        string
	Description string
	// Header holds the theme's style.css header fields (WordPress's theme headers).
	Header ThemeHeader
	// Version is the theme.json schema version.
	Version int
	// Settings and Styles are theme.json's settings and styles objects, as written.
	Settings json.RawMessage
	Styles   json.RawMessage
	// Variations are the theme's style variations (styles/*.json), by title.
	Variations []ThemeVariation
	// Templates and Parts are the theme's template files, by slug.
	Templates []ThemeTemplate
	Parts     []ThemeTemplate
}

// ThemeHeader is the header of a theme's style.css, as WordPress reads it (get_file_data):
// "Theme Name: …" lines in the file's first comment.
type ThemeHeader struct {
	Name        string // Theme Name (required)
	ThemeURI    string // Theme URI
	Author      string // Author
	AuthorURI   string // Author URI
	Description string // Description
	Version     string // Version
	RequiresWP  string // Requires at least
	RequiresPHP string // Requires PHP
	TextDomain  string // Text Domain
	// Tags are the comma separated Tags, trimmed, empty ones dropped.
	Tags []string
}

// ThemeVariation is one style variation of a theme (styles/*.json): its theme.json schema
// version, title (the file's name when it gives none), settings and styles.
type ThemeVariation struct {
	Version  int             `json:"version"`
	Title    string          `json:"title"`
	Settings json.RawMessage `json:"settings"`
	Styles   json.RawMessage `json:"styles"`
}

// ThemeTemplate is one template or template part file of a theme.
type ThemeTemplate struct {
	Slug        string
	Title       string
	Description string
	Content     string
	// Area is a part's area (TemplatePartAreas).
	Area string
	// IsCustom marks a custom template of theme.json's customTemplates (outside the hierarchy,
	// chosen per record); PostTypes are the post types it is offered for.
	IsCustom  bool
	PostTypes []string
}

// Template returns the theme's template with slug, or nil.
func (t *Theme) Template(slug string) *ThemeTemplate { return findTemplate(t.Templates, slug) }

// Part returns the theme's template part with slug, or nil.
func (t *Theme) Part(slug string) *ThemeTemplate { return findTemplate(t.Parts, slug) }

func findTemplate(list []ThemeTemplate, slug string) *ThemeTemplate {
	for i := range list {
		if list[i].Slug == slug {
			return &list[i]
		}
	}
	return nil
}

// DefaultTemplateTypes are the titles and descriptions of the templates of WordPress's template
// hierarchy, by slug (a template file of a theme takes them unless the theme names its own).
var DefaultTemplateTypes = map[string][2]string{
	"index":          {"Index", "The fallback of every page that has no more specific template."},
	"home":           {"Blog Home", "The latest posts, on the front page or on the page set to show posts. A Front Page template takes precedence on the front page."},
	"front-page":     {"Front Page", "The site's front page, showing the latest posts or a static page. It takes precedence over every other template there."},
	"singular":       {"Single Entries", "Any single entry, post or page, when no more specific template exists."},
	"single":         {"Single Posts", "A single post, unless the post names a custom template or a more specific template exists."},
	"page":           {"Pages", "A static page, unless the page names a custom template or a more specific template exists."},
	"archive":        {"All Archives", "Any archive (author, category, tag, taxonomy, date) when no more specific template exists."},
	"author":         {"Author Archives", "The posts of one author, when no template for that author exists."},
	"category":       {"Category Archives", "The posts of one category, when no template for that category exists."},
	"taxonomy":       {"Taxonomy", "The posts of one term of a custom taxonomy, when no more specific template exists."},
	"date":           {"Date Archives", "The posts of one year, month or day."},
	"tag":            {"Tag Archives", "The posts of one tag, when no template for that tag exists."},
	"attachment":     {"Attachment Pages", "The page of one media item."},
	"search":         {"Search Results", "The results of a search of the site."},
	"privacy-policy": {"Privacy Policy", "The site's privacy policy page."},
	"404":            {"Page: 404", "What a visitor sees when the page asked for does not exist."},
}

// Themes returns the built-in themes, loaded once from the embedded files.
func Themes() []*Theme { return builtinThemes().list }

// ThemeByStylesheet returns the built-in theme with that stylesheet id, or nil.
func ThemeByStylesheet(stylesheet string) *Theme {
	for _, t := range builtinThemes().list {
		if t.Stylesheet == stylesheet {
			return t
		}
	}
	return nil
}

// ActiveTheme returns the store's active theme: its Theme when built in, else DefaultTheme's.
func ActiveTheme(t *Tenant) *Theme {
	if th := ThemeByStylesheet(t.Theme); th != nil {
		return th
	}
	return ThemeByStylesheet(DefaultTheme)
}

type themeSet struct{ list []*Theme }

// builtinThemes parses the embedded themes once; a malformed built-in theme is a build defect,
// caught by the tests, so it panics.
var builtinThemes = sync.OnceValue(func() *themeSet {
	dirs, err := fs.ReadDir(themeFiles, "themes")
	if err != nil {
		panic("schema: built-in themes: " + err.Error())
	}
	set := &themeSet{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		th, err := loadTheme(themeFiles, path.Join("themes", d.Name()))
		if err != nil {
			panic("schema: built-in theme " + d.Name() + ": " + err.Error())
		}
		set.list = append(set.list, th)
	}
	return set
})

// themeJSON is what loadTheme reads of a theme.json.
type themeJSON struct {
	Version       int             `json:"version"`
	Title         string          `json:"title"`
	Description   string          `json:"description"`
	Settings      json.RawMessage `json:"settings"`
	Styles        json.RawMessage `json:"styles"`
	TemplateParts []struct {
		Name  string `json:"name"`
		Title string `json:"title"`
		Area  string `json:"area"`
	} `json:"templateParts"`
	CustomTemplates []struct {
		Name      string   `json:"name"`
		Title     string   `json:"title"`
		PostTypes []string `json:"postTypes"`
	} `json:"customTemplates"`
}

// themeFileSlug is what a theme's directory and its template, part and variation file names
// may be: WordPress's template slugs, lower case.
var themeFileSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// loadTheme reads the block theme in dir of fsys, refusing a malformed one: a stylesheet (the
// directory's name) or a file name that is not a slug, a style.css without a Theme Name, a
// theme.json that is not JSON, of a schema version other than 2 or 3, or whose settings or
// styles are not objects, no templates/index.html (WordPress's test of a block theme), and a
// style variation that is not JSON or whose settings or styles are not objects.
func loadTheme(fsys fs.FS, dir string) (*Theme, error) {
	stylesheet := path.Base(dir)
	if !themeFileSlug.MatchString(stylesheet) {
		return nil, fmt.Errorf("stylesheet %q is not a slug", stylesheet)
	}
	css, err := fs.ReadFile(fsys, path.Join(dir, "style.css"))
	if err != nil {
		return nil, fmt.Errorf("style.css: %w", err)
	}
	header := parseThemeHeader(css)
	if header.Name == "" {
		return nil, fmt.Errorf("style.css: no Theme Name header")
	}
	raw, err := fs.ReadFile(fsys, path.Join(dir, "theme.json"))
	if err != nil {
		return nil, fmt.Errorf("theme.json: %w", err)
	}
	var tj themeJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return nil, fmt.Errorf("theme.json: %w", err)
	}
	if tj.Version != 2 && tj.Version != 3 {
		return nil, fmt.Errorf("theme.json: schema version %d (this build reads 2 and 3)", tj.Version)
	}
	if err := objectsOrAbsent("theme.json", tj.Settings, tj.Styles); err != nil {
		return nil, err
	}
	th := &Theme{Stylesheet: stylesheet, Name: header.Name, Description: header.Description, Header: header,
		Version: tj.Version, Settings: orEmptyObject(tj.Settings), Styles: orEmptyObject(tj.Styles)}
	if th.Description == "" {
		th.Description = tj.Description
	}
	templates, err := themeDirFiles(fsys, dir, "templates", ".html")
	if err != nil {
		return nil, err
	}
	for _, name := range templates {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		tt := ThemeTemplate{Slug: strings.TrimSuffix(path.Base(name), ".html"), Content: string(body)}
		if d, ok := DefaultTemplateTypes[tt.Slug]; ok {
			tt.Title, tt.Description = d[0], d[1]
		}
		for _, c := range tj.CustomTemplates {
			if c.Name == tt.Slug {
				tt.Title, tt.IsCustom, tt.PostTypes = c.Title, true, c.PostTypes
			}
		}
		if tt.Title == "" {
			tt.Title = tt.Slug
		}
		th.Templates = append(th.Templates, tt)
	}
	if th.Template("index") == nil {
		return nil, fmt.Errorf("templates/index.html is missing: not a block theme")
	}
	parts, err := themeDirFiles(fsys, dir, "parts", ".html")
	if err != nil {
		return nil, err
	}
	for _, name := range parts {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		tt := ThemeTemplate{Slug: strings.TrimSuffix(path.Base(name), ".html"), Content: string(body), Area: AreaUncategorized}
		tt.Title = tt.Slug
		for _, p := range tj.TemplateParts {
			if p.Name == tt.Slug {
				tt.Title = p.Title
				if slices.Contains(TemplatePartAreas, p.Area) {
					tt.Area = p.Area // an unknown area is uncategorized, as WordPress makes it
				}
			}
		}
		th.Parts = append(th.Parts, tt)
	}
	variations, err := themeDirFiles(fsys, dir, "styles", ".json")
	if err != nil {
		return nil, err
	}
	for _, name := range variations {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var v ThemeVariation
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := objectsOrAbsent(name, v.Settings, v.Styles); err != nil {
			return nil, err
		}
		if v.Version == 0 {
			v.Version = tj.Version
		}
		if v.Title == "" {
			v.Title = strings.TrimSuffix(path.Base(name), ".json") // WordPress's fallback
		}
		v.Settings, v.Styles = orEmptyObject(v.Settings), orEmptyObject(v.Styles)
		th.Variations = append(th.Variations, v)
	}
	return th, nil
}

// themeDirFiles lists the files of a theme's sub directory with the extension, sorted, refusing a
// file whose name is not a slug.
func themeDirFiles(fsys fs.FS, dir, sub, ext string) ([]string, error) {
	names, err := fs.Glob(fsys, path.Join(dir, sub, "*"+ext))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, n := range names {
		if !themeFileSlug.MatchString(strings.TrimSuffix(path.Base(n), ext)) {
			return nil, fmt.Errorf("%s: the file name is not a slug", n)
		}
	}
	return names, nil
}

// objectsOrAbsent checks that each of the theme.json members given is absent or a JSON object.
func objectsOrAbsent(file string, members ...json.RawMessage) error {
	for _, m := range members {
		if len(m) > 0 && !IsJSONObject(m) {
			return fmt.Errorf("%s: settings and styles must be objects", file)
		}
	}
	return nil
}

// themeHeaderLine matches one header line of a style.css: WordPress's get_file_data pattern,
// which allows leading comment punctuation before "Name: value".
var themeHeaderLine = regexp.MustCompile(`^[ \t/*#@]*([A-Za-z][A-Za-z ]*?)[ \t]*:(.*)$`)

// parseThemeHeader reads the headers of a style.css from its first 8 KiB, as WordPress does:
// names are matched case-insensitively, values are trimmed and lose a closing "*/".
func parseThemeHeader(css []byte) ThemeHeader {
	if len(css) > 8<<10 {
		css = css[:8<<10]
	}
	var h ThemeHeader
	fields := map[string]*string{"theme name": &h.Name, "theme uri": &h.ThemeURI, "author": &h.Author, "author uri": &h.AuthorURI,
		"description": &h.Description, "version": &h.Version, "requires at least": &h.RequiresWP, "requires php": &h.RequiresPHP,
		"text domain": &h.TextDomain}
	var tags string
	for _, line := range strings.Split(strings.ReplaceAll(string(css), "\r", "\n"), "\n") {
		m := themeHeaderLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := strings.ToLower(m[1])
		value := strings.TrimSpace(strings.TrimSpace(m[2]))
		if i := strings.Index(value, "*/"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
		if name == "tags" {
			if tags == "" {
				tags = value
			}
			continue
		}
		if f, ok := fields[name]; ok && *f == "" {
			*f = value
		}
	}
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			h.Tags = append(h.Tags, t)
		}
	}
	return h
}

func orEmptyObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
