package schema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

func TestNormalizeWhitespace(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  Hello  ", "Hello"},
		{"a  b\t\tc", "a b c"},
		{"a\r\nb", "a\nb"},         // \r becomes \n, and the run of two is one
		{"a\n\n\nb", "a\nb"},       // runs of newlines
		{"a \n b", "a \n b"},       // a space beside a newline stays (WordPress's rules)
		{"\x00\x0Bx\x0B\x00", "x"}, // PHP's trim set
		{"a\u00a0b", "a\u00a0b"},   // no-break spaces are not whitespace to it
	} {
		if got := schema.NormalizeWhitespace(tc.in); got != tc.want {
			t.Errorf("NormalizeWhitespace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRevisionFieldsDiffer(t *testing.T) {
	base := &schema.Post{Title: "Hello", Content: "<p>One</p>\n\n<p>Two</p>", Excerpt: ""}
	for _, tc := range []struct {
		name string
		edit func(p *schema.Post)
		want bool
	}{
		{"identical", func(p *schema.Post) {}, false},
		{"trailing spaces", func(p *schema.Post) { p.Title += "  " }, false},
		{"doubled blank lines", func(p *schema.Post) { p.Content = "<p>One</p>\n\n\n\n<p>Two</p>" }, false},
		{"crlf", func(p *schema.Post) { p.Content = "<p>One</p>\r\n\r\n<p>Two</p>" }, false},
		{"title", func(p *schema.Post) { p.Title = "Hello!" }, true},
		{"content", func(p *schema.Post) { p.Content = "<p>One</p>" }, true},
		{"excerpt", func(p *schema.Post) { p.Excerpt = "Short." }, true},
		{"slug is not revisioned", func(p *schema.Post) { p.Slug = "other" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := *base
			tc.edit(&p)
			if got := schema.RevisionFieldsDiffer(&p, base); got != tc.want {
				t.Errorf("RevisionFieldsDiffer = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidateRevision(t *testing.T) {
	now := time.Date(2024, 5, 2, 8, 0, 0, 0, time.UTC)
	post := &schema.Post{ID: 7, Type: "post", Title: "T", Meta: map[string]string{"footnotes": "[]"}}
	for _, tc := range []struct {
		name string
		edit func(r *schema.Post)
		ok   bool
	}{
		{"revision", func(r *schema.Post) {}, true},
		{"autosave", func(r *schema.Post) { r.Slug = schema.RevisionSlug(7, true) }, true},
		{"no parent", func(r *schema.Post) { r.Parent = 0 }, false},
		{"another record's slug", func(r *schema.Post) { r.Slug = "8-revision-v1" }, false},
		{"not a revision", func(r *schema.Post) { r.Type = "post" }, false},
		{"meta that is not revisioned", func(r *schema.Post) { r.Meta["cms_pattern_sync_status"] = "unsynced" }, false},
		{"title too long", func(r *schema.Post) { r.Title = strings.Repeat("x", 5000) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := schema.NewRevision(post, 3, false, now)
			tc.edit(r)
			if err := schema.ValidateRevision(r); (err == nil) != tc.ok {
				t.Errorf("ValidateRevision = %v, want ok %v", err, tc.ok)
			}
		})
	}
	if r := schema.NewRevision(post, 3, true, now); r.Slug != "7-autosave-v1" || !r.IsAutosave() || r.Meta["footnotes"] != "[]" || r.Parent != 7 {
		t.Errorf("NewRevision autosave = %+v", r)
	}
}

// Golden bodies of revisions and autosaves in each context, and of a draft an autosave updated
// in place (revision-shaped, its floating date null).
func TestRenderRevision(t *testing.T) {
	site := schema.Site{Base: "https://blog.example.com", Loc: paris(t)}
	date := time.Date(2024, 5, 2, 8, 0, 0, 0, time.UTC)
	post := &schema.Post{ID: 42, Type: "post", Title: "Hello", Content: "First.\n\nSecond.", Excerpt: "Short.",
		Meta: map[string]string{"footnotes": "[]"}, ModifiedGMT: date}
	rev := schema.NewRevision(post, 3, false, date)
	rev.ID = 60
	auto := schema.NewRevision(post, 4, true, date.Add(time.Minute))
	auto.ID, auto.Title = 61, "Hello (autosaved)"
	page := &schema.Post{ID: 50, Type: "page", Title: "About", Content: "Us.", ModifiedGMT: date}
	pageAuto := schema.NewRevision(page, 3, true, date)
	pageAuto.ID = 62
	block := &schema.Post{ID: 51, Type: "cms_block", Title: "Hero", Content: "<!-- wp:heading -->\n<h2>Hi</h2>\n<!-- /wp:heading -->", ModifiedGMT: date}
	blockRev := schema.NewRevision(block, 3, false, date)
	blockRev.ID = 63
	item := &schema.Post{ID: 52, Type: "nav_menu_item", Title: "Shop", ModifiedGMT: date}
	itemAuto := schema.NewRevision(item, 3, true, date)
	itemAuto.ID = 64
	draft := &schema.Post{ID: 53, Type: "post", Status: schema.StatusDraft, Title: "Draft", Content: "Body.", Author: 3,
		DateGMT: date, DateFloating: true, ModifiedGMT: date, Meta: map[string]string{}}
	pt := schema.PostTypeByName
	for _, tc := range []struct {
		name   string
		r      *schema.Post
		render schema.RevisionRender
	}{
		{"revision_view", rev, schema.RevisionRender{Context: "view", Type: pt("post")}},
		{"revision_edit", rev, schema.RevisionRender{Context: "edit", Type: pt("post")}},
		{"revision_embed", rev, schema.RevisionRender{Context: "embed", Type: pt("post")}},
		{"autosave_edit", auto, schema.RevisionRender{Context: "edit", Type: pt("post"), Autosave: true}},
		{"autosave_view", auto, schema.RevisionRender{Context: "view", Type: pt("post"), Autosave: true}},
		{"page_autosave_edit", pageAuto, schema.RevisionRender{Context: "edit", Type: pt("page"), Autosave: true}},
		{"block_revision_view", blockRev, schema.RevisionRender{Context: "view", Type: pt("cms_block")}},
		{"menu_item_autosave_edit", itemAuto, schema.RevisionRender{Context: "edit", Type: pt("nav_menu_item"), Autosave: true}},
		{"draft_autosaved_in_place", draft, schema.RevisionRender{Context: "edit", Type: pt("post"), Autosave: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, tc.name, schema.RenderRevision(tc.r, tc.render, site))
		})
	}
	// A floating date is null, not absent.
	b, _ := json.Marshal(schema.RenderRevision(draft, schema.RevisionRender{Context: "view", Type: pt("post")}, site))
	if !strings.Contains(string(b), `"date":null,"date_gmt":null`) {
		t.Errorf("floating draft: %s", b)
	}
}

// The revisions and autosaves routes: the types that keep revisions have all six, menu items
// only the autosaves; none is batch-capable, and every one is answered by the origin.
func TestRevisionRoutes(t *testing.T) {
	for _, pt := range schema.PostTypes {
		if designType(pt) {
			continue // templates, parts, global styles: routes_design.go, tested in design_test.go
		}
		for _, tc := range []struct {
			suffix, method, path string
			has                  bool
		}{
			{".revisions.list", "GET", "/{parent}/revisions", pt.Revisions},
			{".revisions.get", "GET", "/{parent}/revisions/{id}", pt.Revisions},
			{".revisions.delete", "DELETE", "/{parent}/revisions/{id}", pt.Revisions},
			{".autosaves.list", "GET", "/{id}/autosaves", pt.Autosaves},
			{".autosaves.create", "POST", "/{id}/autosaves", pt.Autosaves},
			{".autosaves.get", "GET", "/{parent}/autosaves/{id}", pt.Autosaves},
		} {
			r := schema.RouteByName("cms." + pt.RestBase + tc.suffix)
			if (r != nil) != tc.has {
				t.Errorf("cms.%s%s declared: %v, want %v", pt.RestBase, tc.suffix, r != nil, tc.has)
				continue
			}
			if r == nil {
				continue
			}
			if r.Batch || r.Server != schema.AtOrigin || r.Method != tc.method || r.Path != pt.Collection()+tc.path {
				t.Errorf("%s: batch %v, server %v, %s %s", r.Name, r.Batch, r.Server, r.Method, r.Path)
			}
			if schema.PostTypeOfRoute(r) != pt {
				t.Errorf("%s: post type %v", r.Name, schema.PostTypeOfRoute(r))
			}
		}
	}
	if pt := schema.PostTypeByName("nav_menu_item"); pt.Revisions || !pt.Autosaves {
		t.Errorf("menu items: revisions %v, autosaves %v; want autosaves only", pt.Revisions, pt.Autosaves)
	}
	// Revisions have no default per_page: without one, every revision is listed.
	list := schema.RouteByName("cms.posts.revisions.list")
	for _, a := range list.Args {
		if a.Name == "per_page" && a.Default != "" {
			t.Errorf("revisions per_page default %q", a.Default)
		}
	}
}

// TestRevisionSchemaMatchesRender: the OPTIONS schema of every revisions and autosaves route
// describes exactly the fields its revisions render in the edit context.
func TestRevisionSchemaMatchesRender(t *testing.T) {
	site := schema.Site{Base: "https://shop.example"}
	for _, pt := range schema.PostTypes {
		if designType(pt) {
			continue // templates, parts, global styles: routes_design.go, tested in design_test.go
		}
		for _, tc := range []struct {
			path          string
			has, autosave bool
		}{
			{pt.Collection() + "/5/revisions", pt.Revisions, false},
			{pt.Collection() + "/5/revisions/6", pt.Revisions, false},
			{pt.Collection() + "/5/autosaves", pt.Autosaves, true},
			{pt.Collection() + "/5/autosaves/6", pt.Autosaves, true},
		} {
			if !tc.has {
				continue
			}
			r := schema.NewRevision(&schema.Post{ID: 5, Type: pt.Name, Title: "X"}, 1, tc.autosave, time.Now())
			r.ID = 6
			b, err := schema.MarshalJSON(schema.RenderRevision(r, schema.RevisionRender{Context: "edit", Type: pt, Autosave: tc.autosave}, site))
			if err != nil {
				t.Fatal(err)
			}
			var fields map[string]any
			json.Unmarshal(b, &fields)
			var desc struct {
				Schema struct {
					Title      string
					Properties map[string]any
				}
			}
			json.Unmarshal(schema.CMSRouteDescription(site.Base, tc.path), &desc)
			if desc.Schema.Title != pt.Name+"-revision" {
				t.Errorf("%s: schema title %q", tc.path, desc.Schema.Title)
			}
			for f := range fields {
				if _, ok := desc.Schema.Properties[f]; !ok && f != "_links" {
					t.Errorf("%s renders %q, which its schema does not describe", tc.path, f)
				}
			}
			for f := range desc.Schema.Properties {
				if _, ok := fields[f]; !ok {
					t.Errorf("%s's schema describes %q, which it does not render in edit context", tc.path, f)
				}
			}
		}
	}
}
