package schema_test

import (
	"encoding/json"
	"testing"

	"vitrine/schema"
)

// TestOptionsSchema: OPTIONS answers a route's index entry plus the item schema of its resource,
// whose properties are exactly the fields the renderers write in edit context.
func TestOptionsSchema(t *testing.T) {
	type answer struct {
		Namespace string
		Schema    *struct {
			Title      string
			Properties map[string]struct {
				Type     any
				Context  []string
				Readonly bool
			}
		}
	}
	cases := []struct {
		path, title string
		has, hasNot []string
	}{
		{"/cms/v2/posts/7", "post", []string{"sticky", "format", "categories", "tags", "author", "featured_media"}, []string{"parent", "menu_order"}},
		{"/cms/v2/pages", "page", []string{"parent", "menu_order", "author"}, []string{"sticky", "categories", "format"}},
		{"/cms/v2/blocks/3", "cms_block", []string{"cms_pattern_category", "meta"}, []string{"author", "sticky"}},
		{"/cms/v2/navigation", "cms_navigation", []string{"content", "template", "excerpt"}, []string{"author", "sticky"}},
		{"/cms/v2/menu-items/9", "nav_menu_item", []string{"url", "menus", "object_id", "xfn"}, []string{"content", "date"}},
		{"/cms/v2/categories/2", "category", []string{"parent", "count"}, nil},
		{"/cms/v2/tags", "post_tag", []string{"count"}, []string{"parent"}},
		{"/cms/v2/users/me", "user", []string{"avatar_urls", "roles"}, nil},
		{"/cms/v2/users/3/application-passwords", "application-password", []string{"uuid", "last_used"}, nil},
		{"/cms/v2", "", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			var a answer
			if err := json.Unmarshal(schema.CMSRouteDescription("https://shop.example", tc.path), &a); err != nil || a.Namespace != "cms/v2" {
				t.Fatalf("%s: %v %+v", tc.path, err, a)
			}
			if tc.title == "" {
				if a.Schema != nil {
					t.Errorf("a schema for %s", tc.path)
				}
				return
			}
			if a.Schema == nil || a.Schema.Title != tc.title {
				t.Fatalf("schema %+v, want title %s", a.Schema, tc.title)
			}
			for _, f := range tc.has {
				if p, ok := a.Schema.Properties[f]; !ok || p.Type == nil || p.Context == nil {
					t.Errorf("%s: property %s missing or without type and context: %+v", tc.path, f, p)
				}
			}
			for _, f := range tc.hasNot {
				if _, ok := a.Schema.Properties[f]; ok {
					t.Errorf("%s: property %s should not be there", tc.path, f)
				}
			}
		})
	}
	var post any
	json.Unmarshal(schema.CMSRouteDescription("https://shop.example", "/cms/v2/posts"), &post)
	checkGolden(t, "options_posts", post)
}

// TestItemSchemaMatchesRender: every field a post renders in edit context is in its schema.
func TestItemSchemaMatchesRender(t *testing.T) {
	for _, pt := range schema.PostTypes {
		if designType(pt) {
			continue // templates, parts, global styles: routes_design.go, tested in design_test.go
		}
		p := &schema.Post{ID: 5, Type: pt.Name, Slug: "x", Title: "X", Status: schema.StatusPublish}
		b, err := schema.MarshalJSON(schema.RenderRecord(p, schema.PostRender{Context: "edit", Unlocked: true}, schema.Site{Base: "https://shop.example"}))
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		json.Unmarshal(b, &fields)
		var desc struct {
			Schema struct {
				Properties map[string]any
			}
		}
		json.Unmarshal(schema.CMSRouteDescription("https://shop.example", pt.Collection()), &desc)
		sch := desc.Schema
		for f := range fields {
			if f == "_links" || f == "_embedded" {
				continue
			}
			if _, ok := sch.Properties[f]; !ok {
				t.Errorf("%s renders %q, which its schema does not describe", pt.Name, f)
			}
		}
		for f := range sch.Properties {
			if _, ok := fields[f]; !ok {
				t.Errorf("%s's schema describes %q, which it does not render in edit context", pt.Name, f)
			}
		}
	}
}
