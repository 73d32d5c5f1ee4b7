package schema_test

import (
	"reflect"
	"testing"
	"time"

	"vitrine/schema"
)

func TestStorefrontArgKeys(t *testing.T) {
	same := []struct {
		name, route string
		a, b        params
	}{
		{"absent min_price is 0", "products.list", params{}, params{"min_price": "0"}},
		{"absent max_price is the whole range", "search", params{}, params{"max_price": "1000000000000000"}},
		{"absent sort is newest", "products.list", params{}, params{"sort": "newest"}},
		{"absent sort is relevance", "search", params{}, params{"sort": "relevance"}},
		{"availability separators", "products.list", params{"availability": "in_stock,low_stock"}, params{"availability": "in_stock low_stock"}},
		{"absent and empty q", "search", params{}, params{"q": ""}},
		{"autocomplete defaults", "search.autocomplete", params{}, params{"limit": "8"}},
		{"posts defaults", "posts.list", params{}, params{"page": "1", "per_page": "10"}},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := string(parse(t, tc.route, tc.a).AppendKey(nil)), string(parse(t, tc.route, tc.b).AppendKey(nil))
			if ka != kb {
				t.Errorf("AppendKey(%v) = %q and AppendKey(%v) = %q, want equal", tc.a, ka, tc.b, kb)
			}
		})
	}
	distinct := []struct {
		name, route string
		a, b        params
	}{
		{"absent max_price versus 0", "products.list", params{}, params{"max_price": "0"}},
		{"category", "products.list", params{"category": "a"}, params{"category": "b"}},
		{"q", "search", params{"q": "lamp"}, params{"q": "lamps"}},
		{"q holding another argument", "search", params{"q": "x", "sort": "title"}, params{"q": "x&sort=title"}},
		{"sort", "search", params{}, params{"sort": "newest"}},
		{"limit", "search.autocomplete", params{}, params{"limit": "3"}},
	}
	for _, tc := range distinct {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := string(parse(t, tc.route, tc.a).AppendKey(nil)), string(parse(t, tc.route, tc.b).AppendKey(nil))
			if ka == kb {
				t.Errorf("AppendKey(%v) = AppendKey(%v) = %q, want different", tc.a, tc.b, ka)
			}
		})
	}
}

func TestStorefrontArgErrors(t *testing.T) {
	cases := []struct {
		route string
		p     params
		field string
	}{
		{"products.list", params{"per_page": "0"}, "per_page"},
		{"products.list", params{"min_price": "abc"}, "min_price"},
		{"products.list", params{"max_price": ""}, "max_price"},
		{"products.list", params{"max_price": "1000000000000001"}, "max_price"},
		{"products.list", params{"sort": "relevance"}, "sort"},
		{"search", params{"sort": "cheapest"}, "sort"},
		{"search", params{"availability": "in_stock,gone"}, "availability"},
		{"search", params{"availability": "in_stock,in_stock,in_stock,in_stock"}, "availability"},
		{"search.autocomplete", params{"limit": "21"}, "limit"},
		{"posts.list", params{"per_page": "101"}, "per_page"},
	}
	for _, tc := range cases {
		_, err := schema.ParseArgs(route(t, tc.route), tc.p.get)
		e, ok := err.(*schema.Error)
		if !ok || e.Code != schema.CodeInvalid || e.Field != tc.field {
			t.Errorf("ParseArgs(%s, %v) = %v, want an invalid %s", tc.route, tc.p, err, tc.field)
		}
	}
}

func TestRenderBlogPost(t *testing.T) {
	site := schema.Site{Base: "https://api.shop.test", Loc: time.UTC}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	p := &schema.Post{ID: 7, Slug: "hello", Title: "Hello", Content: "One.\n\nTwo.", Author: 3, FeaturedMedia: 9, DateGMT: date, ModifiedGMT: date}
	att := &schema.Post{ID: 9, Type: schema.TypeAttachment, Status: schema.StatusInherit, Attachment: &schema.Attachment{
		MimeType: "image/jpeg", File: "2026/01/cup-0123456789ab.jpg", Width: 640, Height: 480, AltText: "A cup",
		Sizes: map[string]schema.AttachmentSize{"thumbnail": {File: "2026/01/cup-0123456789ab-150x150.jpg", Width: 150, Height: 150, MimeType: "image/jpeg"}}}}
	v := schema.RenderBlogPost(p, att, site)
	if v.Content != "<p>One.</p>\n<p>Two.</p>\n" || v.Excerpt != "<p>One. Two.</p>\n" || v.Protected {
		t.Errorf("content %q, excerpt %q, protected %v", v.Content, v.Excerpt, v.Protected)
	}
	if v.URL != "https://api.shop.test/?p=7" || v.Author.ID != 3 || v.Author.Name != nil || v.Date.Location() != time.UTC || !v.Date.Equal(date) {
		t.Errorf("view %+v", v)
	}
	want := &schema.PostMedia{ID: 9, Href: "https://api.shop.test/index.php?rest_route=/cms/v2/media/9",
		SourceURL: "https://api.shop.test/cms-content/uploads/2026/01/cup-0123456789ab.jpg", AltText: "A cup", MimeType: "image/jpeg",
		Width: 640, Height: 480, Sizes: map[string]schema.PostMediaSize{
			"thumbnail": {SourceURL: "https://api.shop.test/cms-content/uploads/2026/01/cup-0123456789ab-150x150.jpg", Width: 150, Height: 150}}}
	if !reflect.DeepEqual(v.FeaturedImage, want) {
		t.Errorf("featured image %+v, want %+v", v.FeaturedImage, want)
	}
	// Featured media the reader may not see (not public, or not an attachment) is null.
	if v := schema.RenderBlogPost(p, nil, site); v.FeaturedImage != nil {
		t.Errorf("featured image %+v without a public attachment", v.FeaturedImage)
	}
	if v := schema.RenderBlogPost(p, &schema.Post{ID: 9, Type: "post"}, site); v.FeaturedImage != nil {
		t.Errorf("featured image %+v for a post that is not an attachment", v.FeaturedImage)
	}
	// A protected post shows no content, even on the origin where the password is known.
	p.Password = "secret"
	if v := schema.RenderBlogPost(p, att, site); v.Content != "" || v.Excerpt != "" || !v.Protected {
		t.Errorf("protected post rendered %q / %q", v.Content, v.Excerpt)
	}
	p.Password, p.FeaturedMedia = "", 0
	if v := schema.RenderBlogPost(p, att, site); v.FeaturedImage != nil {
		t.Errorf("featured image %+v for a post without one", v.FeaturedImage)
	}
}
