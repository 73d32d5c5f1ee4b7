package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// The update body of global styles is validated as WordPress validates its arguments.
func TestDecodeGlobalStylesWrite(t *testing.T) {
	for _, tc := range []struct {
		name, body       string
		styles, settings string // the decoded members ("" when absent)
		title            *string
		code, param      string // the error's CMS code and the parameter it names
	}{
		{name: "empty body", body: ""},
		{name: "not an object", body: `[1,2]`},
		{name: "a string", body: `"styles"`},
		{name: "unknown members are ignored", body: `{"id":5,"_links":{},"foo":[1]}`},
		{name: "styles and settings", body: `{"styles":{"color":{"text":"red"}},"settings":{ }}`, styles: `{"color":{"text":"red"}}`, settings: `{ }`},
		{name: "null is absent", body: `{"styles":null,"settings":null,"title":null}`},
		{name: "empty array is an empty object", body: `{"styles":[]}`, styles: `{}`},
		{name: "empty string is an empty object", body: `{"settings":""}`, settings: `{}`},
		{name: "title string", body: `{"title":"Mine"}`, title: ptr("Mine")},
		{name: "title empty string", body: `{"title":""}`, title: ptr("")},
		{name: "title raw", body: `{"title":{"raw":"Raw one","rendered":"x"}}`, title: ptr("Raw one")},
		{name: "title empty raw is ignored", body: `{"title":{"raw":""}}`},
		{name: "title without raw", body: `{"title":{}}`},
		{name: "not JSON", body: `{"styles":`, code: "rest_invalid_json"},
		{name: "styles a string", body: `{"styles":"red"}`, code: "rest_invalid_param", param: "styles"},
		{name: "styles a list", body: `{"styles":[{"a":1}]}`, code: "rest_invalid_param", param: "styles"},
		{name: "settings a number", body: `{"settings":5}`, code: "rest_invalid_param", param: "settings"},
		{name: "settings true", body: `{"styles":{},"settings":true}`, code: "rest_invalid_param", param: "settings"},
		{name: "title a number", body: `{"title":7}`, code: "rest_invalid_param", param: "title"},
		{name: "title raw a number", body: `{"title":{"raw":7}}`, code: "rest_invalid_param", param: "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := schema.DecodeGlobalStylesWrite([]byte(tc.body))
			if tc.code != "" {
				var e *schema.Error
				if !errors.As(err, &e) || e.CMSCode != tc.code || e.Code != schema.CodeInvalid || tc.param != "" && e.Params[tc.param] == "" {
					t.Fatalf("error %#v, want %s naming %q", err, tc.code, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(w.Styles) != tc.styles || string(w.Settings) != tc.settings {
				t.Errorf("styles %s, settings %s; want %s, %s", w.Styles, w.Settings, tc.styles, tc.settings)
			}
			if (w.Title == nil) != (tc.title == nil) || w.Title != nil && *w.Title != *tc.title {
				t.Errorf("title %v, want %v", w.Title, tc.title)
			}
		})
	}
}

// Custom CSS must be a string without markup (checked after the permission check).
func TestGlobalStylesCheckCSS(t *testing.T) {
	for body, code := range map[string]string{
		`{"styles":{"css":"body { color: red }"}}`:               "",
		`{"styles":{"css":"a::after { content: '<' }"}}`:         "",
		`{"styles":{"css":null}}`:                                "",
		`{"settings":{"css":"</style><script>"}}`:                "", // only styles.css is CSS
		`{"styles":{"css":"</style><script>alert(1)</script>"}}`: "rest_custom_css_illegal_markup",
		`{"styles":{"css":"<b>"}}`:                               "rest_custom_css_illegal_markup",
		`{"styles":{"css":["body"]}}`:                            "rest_invalid_param",
	} {
		w, err := schema.DecodeGlobalStylesWrite([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		err = w.CheckCSS()
		var e *schema.Error
		if code == "" && err != nil || code != "" && (!errors.As(err, &e) || e.CMSCode != code) {
			t.Errorf("%s: CheckCSS = %v, want %q", body, err, code)
		}
	}
}

// A record is made empty; an update replaces what it sends and keeps the rest; the views show
// WordPress's fields per context.
func TestGlobalStylesRecordAndViews(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := schema.NewGlobalStyles(schema.DefaultTheme, 7, now)
	p.ID = 42
	if p.Slug != "cms-global-styles-vitrine-blocks" || p.Title != "Custom Styles" || p.Status != schema.StatusPublish ||
		p.Design == nil || p.Design.Theme != schema.DefaultTheme || p.Type != schema.TypeGlobalStyles {
		t.Fatalf("new record %+v", p)
	}
	if p.Content != `{"styles":{},"settings":{},"isGlobalStylesUserThemeJSON":true,"version":3}` {
		t.Errorf("content %s", p.Content)
	}
	if err := schema.ValidatePost(p); err != nil {
		t.Errorf("a new record does not validate: %v", err)
	}
	w, err := schema.DecodeGlobalStylesWrite([]byte(`{"styles":{"color":{"background":"#000"}},"title":"Night"}`))
	if err != nil {
		t.Fatal(err)
	}
	w.Apply(p)
	w, _ = schema.DecodeGlobalStylesWrite([]byte(`{"settings":{"layout":{"contentSize":"640px"}}}`))
	w.Apply(p)
	cfg := schema.ParseGlobalStyles(p.Content)
	if !cfg.User || string(cfg.Styles) != `{"color":{"background":"#000"}}` || string(cfg.Settings) != `{"layout":{"contentSize":"640px"}}` || p.Title != "Night" {
		t.Errorf("after updates: %s, title %q", p.Content, p.Title)
	}

	site := schema.Site{Base: "https://shop.example", Loc: time.UTC}
	view := func(v any) string {
		b, err := schema.MarshalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	got := view(schema.RenderGlobalStyles(p, schema.GlobalStylesRender{Context: "view", Allow: []string{"GET", "POST", "PUT", "PATCH"}, Publish: true, EditCSS: true}, site))
	for _, want := range []string{
		`{"id":42,"title":{"raw":"Night","rendered":"Night"},"settings":{"layout":{"contentSize":"640px"}},"styles":{"color":{"background":"#000"}},"_links":{`,
		`"self":[{"href":"https://shop.example/index.php?rest_route=/cms/v2/global-styles/42","targetHints":{"allow":["GET","POST","PUT","PATCH"]}}]`,
		`"version-history":[{"href":"https://shop.example/index.php?rest_route=/cms/v2/global-styles/42/revisions","count":0}]`,
		`"about":[{"href":"https://shop.example/index.php?rest_route=/cms/v2/types/cms_global_styles"}]`,
		`"wp:action-publish":[`, `"wp:action-edit-css":[`, `"curies":[{"href":"https://api.w.org/{rel}","templated":true,"name":"wp"}]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %s:\n%s", want, got)
		}
	}
	if got := view(schema.RenderGlobalStyles(p, schema.GlobalStylesRender{Context: "embed"}, site)); strings.Contains(got, `"styles":`) ||
		strings.Contains(got, `"settings":`) || strings.Contains(got, "action-") {
		t.Errorf("embed view %s", got)
	}
	// A record whose content is not a user theme.json shows empty objects.
	odd := *p
	odd.Content = `{"styles":{"a":1}}`
	if got := view(schema.RenderGlobalStyles(&odd, schema.GlobalStylesRender{Context: "edit"}, site)); !strings.Contains(got, `"settings":{},"styles":{}`) {
		t.Errorf("not a user theme.json: %s", got)
	}

	// Revisions: settings and styles only when the revision has either.
	rev := schema.NewRevision(p, 7, false, now)
	rev.ID = 50
	got = view(schema.RenderGlobalStylesRevision(rev, "view", site))
	if !strings.HasPrefix(got, `{"settings":{"layout":{"contentSize":"640px"}},"styles":{"color":{"background":"#000"}},"author":7,"date":"2026-03-01T12:00:00","date_gmt":"2026-03-01T12:00:00","id":50,"modified":"2026-03-01T12:00:00","modified_gmt":"2026-03-01T12:00:00","parent":42}`) {
		t.Errorf("revision %s", got)
	}
	if got := view(schema.RenderGlobalStylesRevision(rev, "embed", site)); got != `{"author":7,"date":"2026-03-01T12:00:00","id":50,"parent":42}` {
		t.Errorf("embedded revision %s", got)
	}
	empty := schema.NewRevision(schema.NewGlobalStyles("x", 7, now), 7, false, now)
	if got := view(schema.RenderGlobalStylesRevision(empty, "edit", site)); strings.Contains(got, `"styles":`) || strings.Contains(got, `"settings":`) {
		t.Errorf("an empty revision shows styles: %s", got)
	}
}

// The themes controller's view of the built-in theme.
func TestRenderTheme(t *testing.T) {
	th := schema.ThemeByStylesheet(schema.DefaultTheme)
	site := schema.Site{Base: "https://shop.example", Loc: time.UTC}
	b, _ := schema.MarshalJSON(schema.RenderTheme(th, schema.ThemeRender{Active: true, UserStyles: 9, Allow: []string{"GET"}}, site))
	got := string(b)
	for _, want := range []string{
		`{"stylesheet":"vitrine-blocks","template":"vitrine-blocks","requires_php":"7.2","requires_wp":"6.6","textdomain":"vitrine-blocks","version":"1.0.0","screenshot":"",`,
		`"author":{"raw":"The Vitrine team","rendered":"<a href=\"https://vitrine.example\">The Vitrine team</a>"}`,
		`"name":{"raw":"Vitrine Blocks","rendered":"Vitrine Blocks"}`,
		`"tags":{"raw":["block-patterns",`, `"status":"active","theme_supports":{"align-wide":false,"automatic-feed-links":true,`,
		`"formats":["standard"]`, `"is_block_theme":true,"_links":{`,
		`"wp:user-global-styles":[{"href":"https://shop.example/index.php?rest_route=/cms/v2/global-styles/9"}]`,
		`"self":[{"href":"https://shop.example/index.php?rest_route=/cms/v2/themes/vitrine-blocks","targetHints":{"allow":["GET"]}}]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("theme view lacks %s:\n%s", want, got)
		}
	}
	b, _ = schema.MarshalJSON(schema.RenderTheme(th, schema.ThemeRender{}, site))
	if got := string(b); !strings.Contains(got, `"status":"inactive"`) || strings.Contains(got, "theme_supports") || strings.Contains(got, "user-global-styles") {
		t.Errorf("inactive theme view %s", got)
	}
}

// FuzzDecodeGlobalStylesWrite: any body is decoded or refused with a 400 of WordPress's shape,
// never a panic; what is accepted has objects for styles and settings, and applies to a record
// as a user theme.json that still reads back.
func FuzzDecodeGlobalStylesWrite(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `"x"`, `null`, `{"styles":{"css":"a{}"}}`, `{"styles":[],"settings":""}`, `{"title":{"raw":"t"}}`,
		`{"styles":{"css":"</style>"}}`, `{"styles":"x"}`, `{"settings":[1]}`, `{"title":5}`, `{"styles":{"a":{"b":[1,{"c":null}]}}}`,
		`{"styles":`, `{"styles":{},"styles":"dup"}`, "{\"title\":\"\xff\"}", `{"title":{"raw":["x"]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := schema.DecodeGlobalStylesWrite(body)
		if err != nil {
			var e *schema.Error
			if !errors.As(err, &e) || e.Code != schema.CodeInvalid || (e.CMSCode != "rest_invalid_param" && e.CMSCode != "rest_invalid_json") {
				t.Fatalf("error %#v", err)
			}
			return
		}
		for _, m := range []json.RawMessage{w.Styles, w.Settings} {
			if m != nil && (!json.Valid(m) || !schema.IsJSONObject(m)) {
				t.Fatalf("accepted a member that is not an object: %s", m)
			}
		}
		if err := w.CheckCSS(); err != nil {
			var e *schema.Error
			if !errors.As(err, &e) || e.Code != schema.CodeInvalid {
				t.Fatalf("CheckCSS error %#v", err)
			}
		}
		p := schema.NewGlobalStyles(schema.DefaultTheme, 1, time.Unix(0, 0))
		w.Apply(p)
		cfg := schema.ParseGlobalStyles(p.Content)
		if !cfg.User || !schema.IsJSONObject(cfg.Styles) || !schema.IsJSONObject(cfg.Settings) {
			t.Fatalf("content after the update does not read back: %s", p.Content)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// OPTIONS on the global styles and themes routes: WordPress's item schemas, none on a theme's
// own styles.
func TestDesignRouteSchemas(t *testing.T) {
	for _, tc := range []struct {
		path, title string
		props       int
	}{
		{"/cms/v2/global-styles/5", "cms_global_styles", 4},
		{"/cms/v2/global-styles/5/revisions", "cms_global_styles-revision", 9},
		{"/cms/v2/global-styles/5/revisions/6", "cms_global_styles-revision", 9},
		{"/cms/v2/global-styles/themes/vitrine-blocks", "", 0},
		{"/cms/v2/global-styles/themes/vitrine-blocks/variations", "", 0},
		{"/cms/v2/themes", "theme", 16},
		{"/cms/v2/themes/vitrine-blocks", "theme", 16},
	} {
		var d struct {
			Schema *struct {
				Title      string
				Properties map[string]json.RawMessage
			}
		}
		body := schema.CMSRouteDescription("https://shop.example", tc.path)
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatalf("%s: %s", tc.path, body)
		}
		switch {
		case tc.title == "" && d.Schema != nil:
			t.Errorf("%s has a schema: %s", tc.path, body)
		case tc.title != "" && (d.Schema == nil || d.Schema.Title != tc.title || len(d.Schema.Properties) != tc.props):
			t.Errorf("%s: schema %+v, want %s with %d properties", tc.path, d.Schema, tc.title, tc.props)
		}
	}
}
