package origin

import (
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

// The template hierarchy of WordPress's get_template_hierarchy, slug by slug.
func TestTemplateHierarchy(t *testing.T) {
	for _, tc := range []struct {
		slug   string
		custom bool
		prefix string
		want   string
	}{
		{"index", false, "", "index"},
		{"index", true, "", "index"},
		{"anything", true, "", "page singular index"},
		{"front-page", false, "", "front-page home index"},
		{"home", false, "", "home index"},
		{"single-post-hello-world", false, "", "single-post-hello-world single-post single singular index"},
		{"single-post", false, "", "single-post single singular index"},
		{"single-page-about", false, "", "single-page-about single-page single singular index"},
		{"single-postcard", false, "", "single-postcard single-post single singular index"}, // "post" prefixes "postcard", as in WordPress
		{"single-unknown-x", false, "", "single-unknown-x singular index"},
		{"single", false, "", "single singular index"},
		{"singular", false, "", "singular index"},
		{"page-about", false, "", "page-about page singular index"},
		{"page", false, "", "page singular index"},
		{"category-news", false, "", "category-news category archive index"},
		{"tag-x", false, "", "tag-x tag archive index"},
		{"author-admin", false, "", "author-admin author archive index"},
		{"archive-product", false, "", "archive-product archive index"},
		{"taxonomy-category-news", false, "", "taxonomy-category-news taxonomy-category taxonomy archive index"},
		{"taxonomy-post_tag", false, "", "taxonomy-post_tag taxonomy archive index"},
		{"taxonomy-genre-rock", false, "", "taxonomy-genre-rock archive index"}, // an unknown taxonomy
		{"taxonomy-genre-rock", false, "taxonomy-genre", "taxonomy-genre-rock taxonomy-genre taxonomy archive index"},
		{"taxonomy-genre", false, "taxonomy-genre", "taxonomy-genre taxonomy archive index"},
		{"single-product-mug", false, "single-product", "single-product-mug single-product single singular index"},
		{"date", false, "", "date archive index"},
		{"search", false, "", "search index"},
		{"404", false, "", "404 index"},
		{"attachment", false, "", "attachment single singular index"},
		{"unknown-xyz", false, "", "unknown-xyz index"},
		{"", false, "", " index"},
	} {
		if got := strings.Join(templateHierarchy(tc.slug, tc.custom, tc.prefix), " "); got != tc.want {
			t.Errorf("templateHierarchy(%q, %v, %q) = %q, want %q", tc.slug, tc.custom, tc.prefix, got, tc.want)
		}
	}
}

// The template write body: WordPress's argument checks, each refused with a 400 and its code.
func TestParseTemplateBody(t *testing.T) {
	for _, tc := range []struct {
		body     string
		part     bool
		creating bool
		code     string // "" for success
		param    string // the argument an invalid_param names
	}{
		{`{"slug":"my-template","title":"T","content":"<!-- wp:paragraph /-->"}`, false, true, "", ""},
		{`{"slug":"My Template"}`, false, true, "", ""}, // sanitised, not refused (the pattern is unanchored)
		{``, false, false, "", ""},
		{`[]`, false, false, "", ""}, // not an object: no parameters
		{``, false, true, "rest_missing_callback_param", ""},
		{`{"title":"x"}`, false, true, "rest_missing_callback_param", ""},
		{`{"slug":""}`, false, true, "rest_invalid_param", "slug"},
		{`{"slug":"!!!"}`, false, true, "rest_invalid_param", "slug"},
		{`{"slug":"%%"}`, false, true, "rest_invalid_param", "slug"}, // matches, but sanitises to nothing
		{`{"slug":7}`, false, true, "rest_invalid_param", "slug"},
		{`{"slug":null}`, false, true, "rest_invalid_param", "slug"},
		{`{"title":7}`, false, false, "rest_invalid_param", "title"},
		{`{"title":{"raw":7}}`, false, false, "rest_invalid_param", "title"},
		{`{"title":{"raw":""}}`, false, false, "", ""},
		{`{"content":{"raw":"x","block_version":"one"}}`, false, false, "rest_invalid_param", "content"},
		{`{"content":["x"]}`, false, false, "rest_invalid_param", "content"},
		{`{"status":"trash"}`, false, false, "rest_invalid_param", "status"},
		{`{"status":"draft"}`, false, false, "", ""},
		{`{"author":"3"}`, false, false, "", ""},
		{`{"author":3.5}`, false, false, "rest_invalid_param", "author"},
		{`{"author":true}`, false, false, "rest_invalid_param", "author"},
		{`{"area":7}`, true, false, "rest_invalid_param", "area"},
		{`{"area":7}`, false, false, "", ""}, // templates take no area
		{`{"area":"sidebar-ish"}`, true, false, "", ""},
		{`{"description":false}`, false, false, "rest_invalid_param", "description"},
		{`{"id":"x//y","source":"theme","cms_id":3,"has_theme_file":true,"unknown":1}`, false, false, "", ""},
		{`{"slug":`, false, true, "rest_invalid_json", ""},
		{`{"a":1}x`, false, false, "rest_invalid_json", ""},
	} {
		in, err := parseTemplateBody([]byte(tc.body), tc.part, tc.creating)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		e, ok := err.(*schema.Error)
		if !ok || e.CMSCode != tc.code || tc.param != "" && e.Params[tc.param] == "" {
			t.Errorf("%s: %v (%+v), want %s naming %q", tc.body, err, in, tc.code, tc.param)
		}
	}
	in, err := parseTemplateBody([]byte(`{"slug":"Hello World","title":{"raw":""},"content":{"raw":""},"area":"bogus","source":"theme"}`), true, true)
	if err != nil {
		t.Fatal(err)
	}
	if in.slug != "hello-world" || in.Title.Set || !in.Content.Set || in.Source != "theme" {
		t.Errorf("decoded %+v", in)
	}
	p := &schema.Post{Type: schema.TypeTemplatePart, Title: "Keep", Design: &schema.Design{Theme: "t"}}
	in.apply(p, nil)
	if p.Title != "Keep" || p.Content != "" || p.Design.Area != schema.AreaUncategorized {
		t.Errorf("applied %+v %+v", p, p.Design)
	}
}

// FuzzTemplateBody: no body, however malformed, panics the decoder or is answered with anything
// but a CMS validation error (a 4xx, never a 500); a body it accepts applies to a record.
func FuzzTemplateBody(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"slug":"a"}`, `{"slug":"!!"}`, `{"title":{"raw":null}}`, `{"content":{"raw":"x","block_version":1}}`,
		`{"author":"12"}`, `{"author":1e3}`, `{"area":"footer"}`, `[1,2]`, `"x"`, `{"slug":`, `{"title":{}}`, `{"content":7}`, "{\"slug\":\"\xff\"}"} {
		f.Add([]byte(s), true, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, part, creating bool) {
		in, err := parseTemplateBody(body, part, creating)
		if err != nil {
			e, ok := err.(*schema.Error)
			if !ok || e.Code != schema.CodeInvalid || !strings.HasPrefix(e.CMSCode, "rest_") {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		typ := schema.TypeTemplate
		if part {
			typ = schema.TypeTemplatePart
		}
		p := newTemplateRecord(typ, "t", "s", 1)
		in.apply(p, nil)
		if part && !slices.Contains(schema.TemplatePartAreas, p.Design.Area) {
			t.Fatalf("area %q", p.Design.Area)
		}
	})
}
