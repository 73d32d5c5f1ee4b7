package schema_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

func TestSplitTemplateID(t *testing.T) {
	for _, tc := range []struct {
		id, theme, slug string
		ok              bool
	}{
		{"vitrine-blocks//single", "vitrine-blocks", "single", true},
		{"vitrine-blocks/single", "vitrine-blocks", "single", true}, // one slash is normalised
		{"vitrine-blocks//single__trashed", "vitrine-blocks", "single__trashed", true},
		{"theme//a-b_c%20", "theme", "a-b_c%20", true},
		{"vitrine-blocks", "", "", false},
		{"", "", "", false},
		{"//single", "", "", false},
		{"vitrine-blocks//", "", "", false},
		{"/single", "", "", false},
		{"vitrine-blocks/", "", "", false},
		{"a//b/c", "", "", false}, // a slug has no slash
		{"a/b/c", "", "", false},
		{"a///b", "", "", false},
	} {
		theme, slug, ok := schema.SplitTemplateID(tc.id)
		if theme != tc.theme || slug != tc.slug || ok != tc.ok {
			t.Errorf("SplitTemplateID(%q) = %q, %q, %v; want %q, %q, %v", tc.id, theme, slug, ok, tc.theme, tc.slug, tc.ok)
		}
		if ok && schema.TemplateID(theme, slug) != strings.Replace(tc.id, "/", "//", 1) && schema.TemplateID(theme, slug) != tc.id {
			t.Errorf("TemplateID(%q, %q) = %q does not give %q back", theme, slug, schema.TemplateID(theme, slug), tc.id)
		}
	}
}

func TestCollapseTemplateID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/cms/v2/templates/vitrine-blocks//single", "/cms/v2/templates/vitrine-blocks/single"},
		{"/cms/v2/template-parts/vitrine-blocks//header", "/cms/v2/template-parts/vitrine-blocks/header"},
		{"/cms/v2/templates/vitrine-blocks//single/revisions/12", "/cms/v2/templates/vitrine-blocks/single/revisions/12"},
		{"/cms/v2/templates/vitrine-blocks//single/autosaves", "/cms/v2/templates/vitrine-blocks/single/autosaves"},
		{"/CMS/V2/Templates/vitrine-blocks//single", "/CMS/V2/Templates/vitrine-blocks/single"}, // routes match case-insensitively
		{"/cms/v2/templates/vitrine-blocks/single", "/cms/v2/templates/vitrine-blocks/single"},  // already collapsed
		{"/cms/v2/templates", "/cms/v2/templates"},
		{"/cms/v2/templates/", "/cms/v2/templates/"},
		{"/cms/v2/templates/lookup", "/cms/v2/templates/lookup"},
		{"/cms/v2/templates///x", "/cms/v2/templates///x"}, // no theme
		{"/cms/v2/posts/a//b", "/cms/v2/posts/a//b"},       // not a collection of template ids
		{"/cms/v2/global-styles/themes//x", "/cms/v2/global-styles/themes//x"},
		{"/cms/v2/templates/a/b//c", "/cms/v2/templates/a/b//c"}, // the theme is one segment
	} {
		if got := schema.CollapseTemplateID(tc.in); got != tc.want {
			t.Errorf("CollapseTemplateID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The index keys of the template routes: one capture of the whole id (theme//slug), a regular
// expression Go (and the wpapi client's route tree) can compile, matching ids and nothing with
// a third segment.
func TestTemplateRouteKeys(t *testing.T) {
	for _, tc := range []struct {
		path, key string
		match     []string
		noMatch   []string
	}{
		{"/cms/v2/templates/{id*}", `/cms/v2/templates/(?P<id>[^/]+//[\w%-]+)`,
			[]string{"/cms/v2/templates/vitrine-blocks//single", "/cms/v2/templates/t//a_b-c"},
			[]string{"/cms/v2/templates/vitrine-blocks/single/x", "/cms/v2/templates/lookup", "/cms/v2/templates/a//b c"}},
		{"/cms/v2/template-parts/{parent*}/revisions/{id}", `/cms/v2/template-parts/(?P<parent>[^/]+//[\w%-]+)/revisions/(?P<id>[\d]+)`,
			[]string{"/cms/v2/template-parts/vitrine-blocks//header/revisions/7"},
			[]string{"/cms/v2/template-parts/vitrine-blocks//header/revisions/x"}},
		{"/cms/v2/templates/{id*}/autosaves", `/cms/v2/templates/(?P<id>[^/]+//[\w%-]+)/autosaves`,
			[]string{"/cms/v2/templates/vitrine-blocks//home/autosaves"}, nil},
	} {
		key := schema.CMSRouteKey(tc.path)
		if key != tc.key {
			t.Errorf("CMSRouteKey(%q) = %q, want %q", tc.path, key, tc.key)
			continue
		}
		re := regexp.MustCompile("^" + key + "$")
		for _, m := range tc.match {
			if !re.MatchString(m) {
				t.Errorf("%s does not match %s", key, m)
			}
		}
		for _, m := range tc.noMatch {
			if re.MatchString(m) {
				t.Errorf("%s matches %s", key, m)
			}
		}
	}
}

// FuzzTemplateID: splitting and collapsing never panic; a split id joins back to an id that
// splits the same; collapsing is idempotent and never lengthens a path.
func FuzzTemplateID(f *testing.F) {
	for _, s := range []string{"vitrine-blocks//single", "a/b", "//", "/", "", "a//b//c", "/cms/v2/templates/a//b",
		"/cms/v2/template-parts/x//y/revisions/1", "/CMS/V2/TEMPLATES/A//B", "/cms/v2/templates///", "\x00//\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if theme, slug, ok := schema.SplitTemplateID(s); ok {
			if theme == "" || slug == "" || strings.Contains(slug, "/") {
				t.Fatalf("SplitTemplateID(%q) = %q, %q", s, theme, slug)
			}
			th2, sl2, ok2 := schema.SplitTemplateID(schema.TemplateID(theme, slug))
			if !ok2 || th2 != theme || sl2 != slug {
				t.Fatalf("TemplateID(%q, %q) splits to %q, %q, %v", theme, slug, th2, sl2, ok2)
			}
		}
		once := schema.CollapseTemplateID(s)
		if twice := schema.CollapseTemplateID(once); twice != once {
			t.Fatalf("CollapseTemplateID not idempotent: %q → %q → %q", s, once, twice)
		}
		if len(once) > len(s) {
			t.Fatalf("CollapseTemplateID(%q) = %q is longer", s, once)
		}
	})
}

// render renders a template in a context and decodes the JSON a client sees.
func render(t *testing.T, tpl *schema.Template, r schema.TemplateRender) (map[string]any, string) {
	t.Helper()
	b, err := schema.MarshalJSON(schema.RenderTemplate(tpl, r, schema.Site{Base: "https://shop.example", Loc: time.UTC}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, string(b)
}

// keys returns the members of a JSON object in their order.
func keys(t *testing.T, body string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	var out []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A theme file's template and a record's, in each context: WordPress's members in its order,
// the contexts' hidden members gone, null dates for a file.
func TestRenderTemplate(t *testing.T) {
	th := schema.ThemeByStylesheet(schema.DefaultTheme)
	file := schema.TemplateFromFile(th, schema.TypeTemplate, th.Template("single"))
	if file.Source() != "theme" || file.IsCustom || file.ID() != "vitrine-blocks//single" || !file.HasThemeFile {
		t.Fatalf("file: %+v", file)
	}
	names := map[schema.UserID]string{7: "Ada"}
	r := schema.TemplateRender{Context: "edit", Allow: []string{"GET", "POST", "PUT", "PATCH", "DELETE"}, Publish: true, UnfilteredHTML: true,
		ThemeName: th.Name, SiteName: "Shop", AuthorName: func(id schema.UserID) (string, bool) { n, ok := names[id]; return n, ok }}
	m, body := render(t, file, r)
	want := "id theme content slug source origin type description title status cms_id has_theme_file is_custom author modified date author_text original_source _links"
	if got := strings.Join(keys(t, body), " "); got != want {
		t.Errorf("edit members:\n%s\nwant\n%s", got, want)
	}
	if m["origin"] != nil || m["modified"] != nil || m["date"] != nil || m["cms_id"] != 0.0 || m["type"] != "cms_template" ||
		m["author_text"] != "Vitrine Blocks" || m["original_source"] != "theme" || m["status"] != "publish" {
		t.Errorf("file: %s", body)
	}
	if c := m["content"].(map[string]any); c["block_version"] != 1.0 || !strings.Contains(c["raw"].(string), "wp:post-content") {
		t.Errorf("content: %v", c)
	}
	links := m["_links"].(map[string]any)
	if _, ok := links["version-history"]; ok {
		t.Errorf("a file has no revisions: %v", links)
	}
	if self := links["self"].([]any)[0].(map[string]any); self["href"] != "https://shop.example/index.php?rest_route=/cms/v2/templates/vitrine-blocks//single" {
		t.Errorf("self: %v", self)
	}
	for _, rel := range []string{"collection", "about", "wp:action-publish", "wp:action-unfiltered-html", "curies"} {
		if _, ok := links[rel]; !ok {
			t.Errorf("no %s link: %v", rel, links)
		}
	}

	// view: content without block_version, dates present (null); embed: content [] and no dates.
	r.Context = "view"
	m, body = render(t, file, r)
	if c := m["content"].(map[string]any); c["block_version"] != nil || c["raw"] == nil {
		t.Errorf("view content: %v", c)
	}
	if _, ok := m["modified"]; !ok {
		t.Errorf("view has modified (null): %s", body)
	}
	r.Context = "embed"
	_, body = render(t, file, r)
	if !strings.Contains(body, `"content":[]`) || strings.Contains(body, `"modified"`) || strings.Contains(body, `"date"`) {
		t.Errorf("embed: %s", body)
	}

	// A record customising the file: source custom, cms_id, origin theme, dates, revisions.
	mod := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := &schema.Post{ID: 42, Type: schema.TypeTemplate, Slug: "single", Status: schema.StatusPublish, Title: "Single", Content: "<p>x</p>",
		Author: 7, DateGMT: mod, ModifiedGMT: mod, RevisionCount: 2, LatestRevision: 44,
		Design: &schema.Design{Theme: th.Stylesheet, Origin: "theme"}}
	r.Context = "edit"
	m, body = render(t, schema.TemplateFromRecord(th, rec), r)
	if m["source"] != "custom" || m["cms_id"] != 42.0 || m["origin"] != "theme" || m["has_theme_file"] != true || m["is_custom"] != false ||
		m["modified"] != "2026-03-04T05:06:07" || m["author_text"] != "Vitrine Blocks" || m["original_source"] != "theme" {
		t.Errorf("record: %s", body)
	}
	links = m["_links"].(map[string]any)
	if vh := links["version-history"].([]any)[0].(map[string]any); vh["count"] != 2.0 ||
		vh["href"] != "https://shop.example/index.php?rest_route=/cms/v2/templates/vitrine-blocks//single/revisions" {
		t.Errorf("version-history: %v", vh)
	}
	if pv := links["predecessor-version"].([]any)[0].(map[string]any); pv["id"] != 44.0 {
		t.Errorf("predecessor-version: %v", pv)
	}

	// A custom template (no file): is_custom, a user's, by its author's name; a part has area
	// and no is_custom.
	custom := &schema.Post{ID: 50, Type: schema.TypeTemplate, Slug: "promo", Status: schema.StatusPublish, Author: 7, DateGMT: mod, ModifiedGMT: mod,
		Design: &schema.Design{Theme: th.Stylesheet}}
	m, _ = render(t, schema.TemplateFromRecord(th, custom), r)
	if m["is_custom"] != true || m["has_theme_file"] != false || m["original_source"] != "user" || m["author_text"] != "Ada" {
		t.Errorf("custom: %v", m)
	}
	custom.Author = 0
	if m, _ = render(t, schema.TemplateFromRecord(th, custom), r); m["original_source"] != "site" || m["author_text"] != "Shop" {
		t.Errorf("authorless: %v", m)
	}
	custom.Author = 99
	if m, _ = render(t, schema.TemplateFromRecord(th, custom), r); m["author_text"] != "Unknown author" {
		t.Errorf("unknown author: %v", m)
	}
	part := schema.TemplateFromFile(th, schema.TypeTemplatePart, th.Part("header"))
	m, body = render(t, part, r)
	if m["area"] != "header" || m["type"] != "cms_template_part" || strings.Contains(body, "is_custom") ||
		!strings.Contains(body, "/cms/v2/template-parts/vitrine-blocks//header") {
		t.Errorf("part: %s", body)
	}

	// A revision: the template as the revision has it, its id as cms_id, parent, its links.
	rev := &schema.Post{ID: 44, Type: schema.RevisionType, Status: schema.StatusInherit, Parent: 42, Title: "Old", Content: "old", Author: 7,
		DateGMT: mod, ModifiedGMT: mod}
	r.Revision, r.Parent = "revisions", 42
	m, body = render(t, schema.TemplateOfRevision(th, rec, rev), r)
	if m["cms_id"] != 44.0 || m["parent"] != 42.0 || m["id"] != "vitrine-blocks//single" || m["status"] != "inherit" || m["title"].(map[string]any)["raw"] != "Old" {
		t.Errorf("revision: %s", body)
	}
	links = m["_links"].(map[string]any)
	if len(links) != 2 || links["self"].([]any)[0].(map[string]any)["href"] != "https://shop.example/index.php?rest_route=/cms/v2/templates/vitrine-blocks//single/revisions/44" {
		t.Errorf("revision links: %v", links)
	}
}

// The item schema of the template routes: WordPress's properties, templates with is_custom,
// parts with area, revisions with parent; the slug's pattern.
func TestTemplateItemSchema(t *testing.T) {
	for _, tc := range []struct {
		path string
		has  []string
		not  []string
	}{
		{"/cms/v2/templates", []string{"id", "slug", "cms_id", "is_custom", "plugin"}, []string{"area", "parent", "wp_id"}},
		{"/cms/v2/templates/x//y", []string{"is_custom"}, []string{"parent"}},
		{"/cms/v2/template-parts/x//y", []string{"area"}, []string{"is_custom", "parent"}},
		{"/cms/v2/templates/x//y/revisions", []string{"parent", "is_custom"}, nil},
		{"/cms/v2/template-parts/x//y/autosaves/3", []string{"parent", "area"}, nil},
	} {
		var d struct {
			Schema struct {
				Title      string
				Properties map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(schema.CMSRouteDescription("https://shop.example", tc.path), &d); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		for _, p := range tc.has {
			if _, ok := d.Schema.Properties[p]; !ok {
				t.Errorf("%s: no %s in %v", tc.path, p, d.Schema.Properties)
			}
		}
		for _, p := range tc.not {
			if _, ok := d.Schema.Properties[p]; ok {
				t.Errorf("%s: has %s", tc.path, p)
			}
		}
		if !strings.Contains(string(d.Schema.Properties["slug"]), `"pattern":"[a-zA-Z0-9_\\%-]+"`) {
			t.Errorf("%s: slug %s", tc.path, d.Schema.Properties["slug"])
		}
	}
}
