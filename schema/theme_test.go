package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// The built-in theme loads whole: its style.css headers, the templates of WordPress's template
// hierarchy, its custom template, its parts with their areas and its style variations.
func TestBuiltinTheme(t *testing.T) {
	th := ThemeByStylesheet(DefaultTheme)
	if th == nil || len(Themes()) == 0 || Themes()[0] != th {
		t.Fatalf("built-in themes %v lack %s", Themes(), DefaultTheme)
	}
	h := th.Header
	if th.Name != "Vitrine Blocks" || h.Name != th.Name || h.Version != "1.0.0" || h.TextDomain != DefaultTheme ||
		h.RequiresWP != "6.6" || h.RequiresPHP != "7.2" || h.Author == "" || h.AuthorURI == "" || h.ThemeURI == "" || th.Description == "" {
		t.Errorf("header %+v, name %q, description %q", h, th.Name, th.Description)
	}
	if !slices.Contains(h.Tags, "full-site-editing") || slices.Contains(h.Tags, "") {
		t.Errorf("tags %q", h.Tags)
	}
	if th.Version != 3 || !IsJSONObject(th.Settings) || !IsJSONObject(th.Styles) {
		t.Errorf("theme.json version %d, settings %.20s, styles %.20s", th.Version, th.Settings, th.Styles)
	}
	for _, slug := range []string{"index", "home", "front-page", "singular", "single", "page", "archive", "author",
		"category", "tag", "taxonomy", "date", "search", "404"} {
		tt := th.Template(slug)
		if tt == nil {
			t.Errorf("no %s template", slug)
			continue
		}
		if tt.IsCustom || tt.Title != DefaultTemplateTypes[slug][0] || tt.Description == "" || !strings.Contains(tt.Content, "<!-- wp:") {
			t.Errorf("template %s: %+v", slug, tt)
		}
	}
	if c := th.Template("page-wide"); c == nil || !c.IsCustom || c.Title != "Page (full width)" || !slices.Equal(c.PostTypes, []string{"page", "post"}) {
		t.Errorf("custom template page-wide: %+v", c)
	}
	for slug, area := range map[string]string{"header": AreaHeader, "footer": AreaFooter, "sidebar": AreaUncategorized} {
		if p := th.Part(slug); p == nil || p.Area != area || p.Title == "" || p.Title == slug {
			t.Errorf("part %s: %+v, want area %s", slug, p, area)
		}
	}
	var titles []string
	for _, v := range th.Variations {
		titles = append(titles, v.Title)
		if v.Version != 3 || !IsJSONObject(v.Settings) || !IsJSONObject(v.Styles) {
			t.Errorf("variation %s: %+v", v.Title, v)
		}
	}
	if !slices.Equal(titles, []string{"Evening", "Linen"}) {
		t.Errorf("variations %q", titles)
	}
	b, err := json.Marshal(th.Variations[0])
	if err != nil || !strings.HasPrefix(string(b), `{"version":3,"title":"Evening","settings":{`) {
		t.Errorf("variation JSON %s (%v)", b, err)
	}

	for _, tc := range []struct{ theme, want string }{{"", DefaultTheme}, {DefaultTheme, DefaultTheme}, {"no-such-theme", DefaultTheme}} {
		if got := ActiveTheme(&Tenant{Theme: tc.theme}); got.Stylesheet != tc.want {
			t.Errorf("ActiveTheme(%q) = %s, want %s", tc.theme, got.Stylesheet, tc.want)
		}
	}
}

// validThemeFS is a minimal well-formed block theme in the directory themes/mini.
func validThemeFS() fstest.MapFS {
	return fstest.MapFS{
		"themes/mini/style.css":            {Data: []byte("/*\nTheme Name: Mini\n*/\n")},
		"themes/mini/theme.json":           {Data: []byte(`{"version":3,"settings":{},"styles":{},"templateParts":[{"name":"top","title":"Top","area":"nowhere"}]}`)},
		"themes/mini/templates/index.html": {Data: []byte("<!-- wp:post-content /-->")},
		"themes/mini/parts/top.html":       {Data: []byte("<!-- wp:site-title /-->")},
		"themes/mini/styles/dark.json":     {Data: []byte(`{"settings":{"color":{}}}`)},
	}
}

// A theme directory that is not a well-formed block theme is refused, naming what is wrong.
func TestLoadThemeRefusesMalformed(t *testing.T) {
	th, err := loadTheme(validThemeFS(), "themes/mini")
	if err != nil {
		t.Fatalf("a minimal theme: %v", err)
	}
	// An unknown part area is uncategorized; a variation without title takes its file's name and
	// the theme's schema version; absent settings are an empty object.
	if p := th.Part("top"); p == nil || p.Area != AreaUncategorized || p.Title != "Top" {
		t.Errorf("part top: %+v", p)
	}
	if v := th.Variations; len(v) != 1 || v[0].Title != "dark" || v[0].Version != 3 || string(v[0].Styles) != "{}" {
		t.Errorf("variations %+v", v)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(fstest.MapFS)
		dir        string
	}{
		{"no style.css", "style.css", func(m fstest.MapFS) { delete(m, "themes/mini/style.css") }, ""},
		{"no Theme Name", "Theme Name", func(m fstest.MapFS) { m["themes/mini/style.css"] = &fstest.MapFile{Data: []byte("/* Author: x */")} }, ""},
		{"no theme.json", "theme.json", func(m fstest.MapFS) { delete(m, "themes/mini/theme.json") }, ""},
		{"theme.json not JSON", "theme.json", func(m fstest.MapFS) { m["themes/mini/theme.json"] = &fstest.MapFile{Data: []byte(`{"version":3,`)} }, ""},
		{"schema version 1", "version 1", func(m fstest.MapFS) { m["themes/mini/theme.json"] = &fstest.MapFile{Data: []byte(`{"version":1}`)} }, ""},
		{"no version", "version 0", func(m fstest.MapFS) { m["themes/mini/theme.json"] = &fstest.MapFile{Data: []byte(`{}`)} }, ""},
		{"settings not an object", "objects", func(m fstest.MapFS) {
			m["themes/mini/theme.json"] = &fstest.MapFile{Data: []byte(`{"version":3,"settings":[1]}`)}
		}, ""},
		{"styles not an object", "objects", func(m fstest.MapFS) {
			m["themes/mini/theme.json"] = &fstest.MapFile{Data: []byte(`{"version":2,"styles":"red"}`)}
		}, ""},
		{"no index template", "index.html", func(m fstest.MapFS) { delete(m, "themes/mini/templates/index.html") }, ""},
		{"template name not a slug", "not a slug", func(m fstest.MapFS) {
			m["themes/mini/templates/Home Page.html"] = &fstest.MapFile{Data: []byte("x")}
		}, ""},
		{"part name not a slug", "not a slug", func(m fstest.MapFS) { m["themes/mini/parts/Top.html"] = &fstest.MapFile{Data: []byte("x")} }, ""},
		{"variation not JSON", "dark.json", func(m fstest.MapFS) { m["themes/mini/styles/dark.json"] = &fstest.MapFile{Data: []byte("{")} }, ""},
		{"variation styles not an object", "objects", func(m fstest.MapFS) {
			m["themes/mini/styles/dark.json"] = &fstest.MapFile{Data: []byte(`{"styles":true}`)}
		}, ""},
		{"stylesheet not a slug", "stylesheet", func(m fstest.MapFS) {
			for k, v := range m {
				m[strings.Replace(k, "themes/mini/", "themes/Mini Theme/", 1)] = v
			}
		}, "themes/Mini Theme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := validThemeFS()
			tc.edit(fsys)
			dir := tc.dir
			if dir == "" {
				dir = "themes/mini"
			}
			th, err := loadTheme(fsys, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("loadTheme = %v, %v; want an error naming %q", th, err, tc.want)
			}
		})
	}
}

// style.css headers are read as WordPress's get_file_data reads them.
func TestParseThemeHeader(t *testing.T) {
	css := "/**\n * theme name:  Shop  \n * Author: A & B\n\tVersion: 2.1 */\n@ Tags: one, , two ,three\n" +
		"Description: first: second\nTheme Name: ignored, the first wins\nText Domain: shop\r\nRequires PHP: 8.1"
	h := parseThemeHeader([]byte(css))
	want := ThemeHeader{Name: "Shop", Author: "A & B", Version: "2.1", Description: "first: second", TextDomain: "shop",
		RequiresPHP: "8.1", Tags: []string{"one", "two", "three"}}
	if h.Name != want.Name || h.Author != want.Author || h.Version != want.Version || h.Description != want.Description ||
		h.TextDomain != want.TextDomain || h.RequiresPHP != want.RequiresPHP || !slices.Equal(h.Tags, want.Tags) {
		t.Errorf("parseThemeHeader = %+v, want %+v", h, want)
	}
	long := "/*\n" + strings.Repeat("x", 9<<10) + "\nTheme Name: too far\n*/"
	if h := parseThemeHeader([]byte(long)); h.Name != "" {
		t.Errorf("a header past the first 8 KiB was read: %q", h.Name)
	}
}
