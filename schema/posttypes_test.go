package schema_test

import (
	"testing"
	"time"

	"vitrine/schema"
)

// Golden bodies of the post types beyond posts, in view and edit contexts.
func TestRenderPostTypes(t *testing.T) {
	site := schema.Site{Base: "https://blog.example.com", Loc: paris(t)}
	date := time.Date(2024, 5, 2, 8, 0, 0, 0, time.UTC)
	page := &schema.Post{ID: 50, Type: "page", Slug: "about", Status: schema.StatusPublish, Title: "About us",
		Content: "We make <b>lamps</b>.", Author: 3, CommentStatus: "closed", PingStatus: "closed", Format: "standard",
		Parent: 49, MenuOrder: 2, DateGMT: date, ModifiedGMT: date, RevisionCount: 3, LatestRevision: 61}
	block := &schema.Post{ID: 51, Type: "cms_block", Slug: "hero", Status: schema.StatusPublish, Title: "Hero",
		Content: "<!-- wp:heading -->\n<h2>Welcome</h2>\n<!-- /wp:heading -->", Author: 3, CommentStatus: "closed", PingStatus: "closed",
		Format: "standard", Meta: map[string]string{"cms_pattern_sync_status": "unsynced"}, PatternCategories: []schema.TermID{4},
		DateGMT: date, ModifiedGMT: date}
	item := &schema.Post{ID: 52, Type: "nav_menu_item", Status: schema.StatusPublish, Title: "Shop", Author: 3, CommentStatus: "closed",
		PingStatus: "closed", Format: "standard", MenuOrder: 3, Parent: 0, DateGMT: date, ModifiedGMT: date,
		MenuItem: &schema.MenuItem{Type: "custom", URL: "https://shop.example/", Target: "_blank", Classes: []string{"cta"}, Menus: 7}}
	for _, p := range []*schema.Post{page, block, item} {
		p.Normalize()
		if err := schema.ValidatePost(p); err != nil {
			t.Fatalf("fixture %s: %v", p.Type, err)
		}
	}
	editor := schema.PostRender{Context: "edit", Unlocked: true, Allow: []string{"GET", "POST", "PUT", "PATCH", "DELETE"}}
	cases := []struct {
		name   string
		post   *schema.Post
		render schema.PostRender
	}{
		{"page_view", page, schema.PostRender{Context: "view"}},
		{"page_edit", page, editor},
		{"block_view", block, schema.PostRender{Context: "view", Unlocked: true}},
		{"block_edit", block, editor},
		{"menu_item_view", item, schema.PostRender{Context: "view", Unlocked: true}},
		{"menu_item_edit", item, editor},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, tc.name, schema.RenderRecord(tc.post, tc.render, site))
		})
	}
}

func TestPostTypeRoutes(t *testing.T) {
	for _, pt := range schema.PostTypes {
		if designType(pt) {
			continue // templates, parts, global styles: routes_design.go, tested in design_test.go
		}
		for _, suffix := range []string{".list", ".create", ".get", ".update", ".delete"} {
			r := schema.RouteByName("cms." + pt.RestBase + suffix)
			if r == nil {
				t.Fatalf("no route cms.%s%s", pt.RestBase, suffix)
			}
			if r.Batch == pt.OwnRoutes { // attachments are not batch-capable (WordPress)
				t.Errorf("%s batch-capable = %v", r.Name, r.Batch)
			}
			if schema.PostTypeOfRoute(r) != pt {
				t.Errorf("PostTypeOfRoute(%s) = %v, want %s", r.Name, schema.PostTypeOfRoute(r), pt.Name)
			}
			wantEdge := (suffix == ".list" || suffix == ".get") && pt.PublicRead
			if got := r.Server == schema.AtEdge; got != wantEdge {
				t.Errorf("%s answered at the edge = %v, want %v", r.Name, got, wantEdge)
			}
		}
		list := schema.RouteByName("cms." + pt.RestBase + ".list")
		for _, a := range list.Args {
			if a.Name == "per_page" && a.Default != map[bool]string{true: "100", false: "10"}[pt.Name == "nav_menu_item"] {
				t.Errorf("%s per_page default %s", list.Name, a.Default)
			}
		}
	}
	if !(&schema.Post{Type: "page", Status: schema.StatusPublish}).Public() || (&schema.Post{Type: "cms_block", Status: schema.StatusPublish}).Public() {
		t.Errorf("Public: pages are public when published, blocks never")
	}
}

// designType reports whether pt is a site design type (templates, parts, global styles), whose
// routes are routes_design.go's rather than the generic post routes.
func designType(pt *schema.PostType) bool {
	switch pt.Name {
	case schema.TypeTemplate, schema.TypeTemplatePart, schema.TypeGlobalStyles:
		return true
	}
	return false
}
