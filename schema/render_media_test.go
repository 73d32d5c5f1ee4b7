package schema_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// mediaFixture is a public image attachment: a 4000×3000 upload scaled to 2560×1920 (the
// "-scaled" file), with the sub-sizes WordPress makes of it, attached to post 12.
func mediaFixture() *schema.Post {
	date := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	sz := func(name string, w, h int) schema.AttachmentSize {
		return schema.AttachmentSize{File: "2026/11/photo-9f86d081884c-" + name + ".jpg", Width: w, Height: h, MimeType: "image/jpeg",
			FileSize: int64(w * h / 10), SHA256: strings.Repeat("ab", 32)}
	}
	p := &schema.Post{ID: 42, Type: schema.TypeAttachment, Slug: "photo", Status: schema.StatusInherit, Title: "Photo",
		Content: "Taken at dawn.", Excerpt: "", Author: 1, CommentStatus: "open", PingStatus: "closed", Parent: 12,
		DateGMT: date, ModifiedGMT: date.Add(time.Hour),
		Attachment: &schema.Attachment{MimeType: "image/jpeg", File: "2026/11/photo-9f86d081884c-scaled.jpg", Width: 2560, Height: 1920,
			FileSize: 812345, SHA256: strings.Repeat("cd", 32), AltText: "A lake at dawn",
			Original: &schema.AttachmentSize{File: "2026/11/photo-9f86d081884c.jpg", Width: 4000, Height: 3000, MimeType: "image/jpeg",
				FileSize: 2456789, SHA256: strings.Repeat("ef", 32)},
			Sizes: map[string]schema.AttachmentSize{
				"thumbnail": sz("150x150", 150, 150), "medium": sz("300x225", 300, 225), "medium_large": sz("768x576", 768, 576),
				"large": sz("1024x768", 1024, 768), "1536x1536": sz("1536x1152", 1536, 1152),
			},
			ImageMeta: map[string]string{"camera": "X100", "iso": "200", "orientation": "1", "keywords": "lake, dawn"}},
	}
	p.Normalize()
	return p
}

func TestRenderMediaGolden(t *testing.T) {
	site := schema.Site{Base: "https://shop.example", Loc: paris(t)}
	parent := &schema.Post{ID: 12, Type: "post", Status: schema.StatusPublish}
	record := func(id schema.PostID) *schema.Post {
		if id == 12 {
			return parent
		}
		return nil
	}
	pdf := &schema.Post{ID: 43, Type: schema.TypeAttachment, Slug: "price-list", Status: schema.StatusInherit, Title: "Price list",
		Excerpt: "Our prices.", Author: 2, CommentStatus: "closed", PingStatus: "closed",
		DateGMT: time.Date(2026, 11, 4, 8, 0, 0, 0, time.UTC), ModifiedGMT: time.Date(2026, 11, 4, 8, 0, 0, 0, time.UTC),
		Attachment: &schema.Attachment{MimeType: "application/pdf", File: "2026/11/price-list-0123456789ab.pdf", FileSize: 5120, SHA256: strings.Repeat("01", 32)}}
	pdf.Normalize()
	cases := []struct {
		name string
		p    *schema.Post
		ctx  string
	}{
		{"media_view", mediaFixture(), "view"},
		{"media_embed", mediaFixture(), "embed"},
		{"media_edit", mediaFixture(), "edit"},
		{"media_file_view", pdf, "view"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := schema.RenderRecord(tc.p, schema.PostRender{Context: tc.ctx, Unlocked: tc.ctx == "edit", Record: record}, site)
			checkGolden(t, tc.name, v)
		})
	}
}

// The fields of each context are WordPress's: embed shows no description, post, filename or
// guid; view no raw values; edit adds raw values and missing_image_sizes; no context shows a
// content, excerpt or password.
func TestRenderMediaContexts(t *testing.T) {
	site := schema.Site{Base: "https://shop.example"}
	keys := func(ctx string) map[string]any {
		b, err := schema.MarshalJSON(schema.RenderPost(mediaFixture(), schema.PostRender{Context: ctx}, site))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	cases := []struct {
		ctx       string
		has, hasN []string
	}{
		{"embed", []string{"id", "date", "slug", "type", "link", "title", "author", "featured_media", "caption", "alt_text", "media_type",
			"mime_type", "media_details", "source_url"},
			[]string{"description", "post", "guid", "status", "filename", "filesize", "missing_image_sizes", "content", "excerpt", "password", "meta", "class_list"}},
		{"view", []string{"guid", "status", "comment_status", "ping_status", "template", "meta", "class_list", "description", "caption", "post",
			"filename", "filesize"},
			[]string{"missing_image_sizes", "content", "excerpt", "password", "permalink_template", "format", "sticky", "categories"}},
		{"edit", []string{"missing_image_sizes", "permalink_template", "generated_slug"}, []string{"content", "excerpt", "password"}},
	}
	for _, tc := range cases {
		m := keys(tc.ctx)
		for _, k := range tc.has {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %q", tc.ctx, k)
			}
		}
		for _, k := range tc.hasN {
			if _, ok := m[k]; ok {
				t.Errorf("%s: %q should not be there", tc.ctx, k)
			}
		}
		if c := m["caption"].(map[string]any); (c["raw"] != nil) != (tc.ctx == "edit") {
			t.Errorf("%s: caption %v", tc.ctx, c)
		}
	}
	// An attachment without a parent has post null.
	p := mediaFixture()
	p.Parent = 0
	b, _ := schema.MarshalJSON(schema.RenderPost(p, schema.PostRender{Context: "view"}, site))
	if !strings.Contains(string(b), `"post":null`) {
		t.Errorf("post is not null without a parent: %s", b)
	}
	if strings.Contains(string(b), "wp:attached-to") {
		t.Errorf("an attached-to link without a parent")
	}
}

// Sub-size dimensions follow WordPress's image_resize_dimensions: never upscaled, a size within
// a pixel of the original not made, crops centred to the exact box.
func TestResizeDimensions(t *testing.T) {
	type dims struct{ w, h int }
	cases := []struct {
		w, h int
		want map[string]dims // absent: not made
	}{
		{4000, 3000, map[string]dims{"medium": {300, 225}, "large": {1024, 768}, "thumbnail": {150, 150}, "medium_large": {768, 576},
			"1536x1536": {1536, 1152}, "2048x2048": {2048, 1536}}},
		{300, 200, map[string]dims{"thumbnail": {150, 150}}},
		{3000, 4000, map[string]dims{"medium": {225, 300}, "large": {768, 1024}, "thumbnail": {150, 150}, "medium_large": {768, 1024},
			"1536x1536": {1152, 1536}, "2048x2048": {1536, 2048}}},
		{1000, 100, map[string]dims{"medium": {300, 30}, "thumbnail": {150, 100}, "medium_large": {768, 77}}},
		{151, 151, map[string]dims{}},
		{0, 10, map[string]dims{}},
	}
	for _, tc := range cases {
		got := map[string]dims{}
		for _, s := range schema.ImageSizes {
			if w, h, ok := schema.ResizeDimensions(tc.w, tc.h, s); ok {
				got[s.Name] = dims{w, h}
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%dx%d: %v, want %v", tc.w, tc.h, got, tc.want)
		}
	}
}

func TestMissingSizes(t *testing.T) {
	p := mediaFixture()
	// The original is 4000×3000: every size applies; 2048x2048 was not made.
	if got := p.Attachment.MissingSizes(); !reflect.DeepEqual(got, []string{"2048x2048"}) {
		t.Errorf("missing %v", got)
	}
	p.Attachment.Sizes = nil
	p.Attachment.Original = nil
	p.Attachment.Width, p.Attachment.Height = 300, 200
	if got := p.Attachment.MissingSizes(); !reflect.DeepEqual(got, []string{"thumbnail"}) {
		t.Errorf("missing %v for 300x200", got)
	}
	p.Attachment.MimeType = "application/pdf"
	if got := p.Attachment.MissingSizes(); len(got) != 0 {
		t.Errorf("missing %v for a file", got)
	}
}

func TestMediaDetailsShapes(t *testing.T) {
	site := schema.Site{Base: "https://shop.example"}
	enc := func(a *schema.Attachment) string {
		b, err := schema.MarshalJSON(a.Details(site))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// A tiny image has no sub-sizes: sizes is {} and WordPress adds no "full".
	tiny := &schema.Attachment{MimeType: "image/png", File: "2026/11/dot-0123456789ab.png", Width: 10, Height: 10, FileSize: 99}
	if got := enc(tiny); !strings.HasPrefix(got, `{"width":10,"height":10,"file":"2026/11/dot-0123456789ab.png","filesize":99,"sizes":{},"image_meta":{"aperture":"0"`) ||
		!strings.HasSuffix(got, `"keywords":[]}}`) {
		t.Errorf("tiny image: %s", got)
	}
	if got := enc(&schema.Attachment{MimeType: "text/csv", File: "2026/11/a-0123456789ab.csv", FileSize: 7}); got != `{"filesize":7,"sizes":{}}` {
		t.Errorf("file: %s", got)
	}
	if got := enc(nil); got != `{}` {
		t.Errorf("no facts: %s", got)
	}
	// Sizes come in WordPress's order, "full" last without a filesize.
	got := enc(mediaFixture().Attachment)
	order := []string{`"medium"`, `"large"`, `"thumbnail"`, `"medium_large"`, `"1536x1536"`, `"full":{"file":"photo-9f86d081884c-scaled.jpg","width":2560,"height":1920,"mime_type"`, `"original_image":"photo-9f86d081884c.jpg"`}
	last := 0
	for _, o := range order {
		i := strings.Index(got, o)
		if i < last {
			t.Fatalf("%s out of order in %s", o, got)
		}
		last = i
	}
}

func TestMediaMimeFilter(t *testing.T) {
	got := schema.MediaMimeFilter([]string{"image/jpeg", "image/unknown", "text/html", "application/pdf", "image/jpeg"})
	if !reflect.DeepEqual(got, []string{"image/jpeg", "application/pdf"}) {
		t.Errorf("filter %v", got)
	}
	if got := schema.MediaMimeFilter([]string{"foo/bar"}); got != nil {
		t.Errorf("unknown types filter by %v", got)
	}
}

// The description shows the image at its medium size with the srcset of the files of the same
// crop (the cropped thumbnail is not one), src first, before the description's paragraphs; a
// file that is not an image is linked by its title.
func TestMediaDescription(t *testing.T) {
	site := schema.Site{Base: "https://shop.example"}
	v := schema.RenderPost(mediaFixture(), schema.PostRender{Context: "view"}, site)
	want := `<p class="attachment"><a href='https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-scaled.jpg'>` +
		`<img width="300" height="225" src="https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-300x225.jpg" ` +
		`class="attachment-medium size-medium" alt="A lake at dawn" decoding="async" loading="lazy" srcset="` +
		`https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-300x225.jpg 300w, ` +
		`https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-1024x768.jpg 1024w, ` +
		`https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-768x576.jpg 768w, ` +
		`https://shop.example/cms-content/uploads/2026/11/photo-9f86d081884c-1536x1152.jpg 1536w" ` +
		`sizes="auto, (max-width: 300px) 100vw, 300px" /></a></p>` + "\n<p>Taken at dawn.</p>\n"
	if v.Description.Rendered != want {
		t.Errorf("description\n%s\nwant\n%s", v.Description.Rendered, want)
	}
	// An empty caption is made from the description's text, as WordPress's excerpt is.
	if v.Caption.Rendered != "<p>Taken at dawn.</p>\n" {
		t.Errorf("caption %q", v.Caption.Rendered)
	}
	file := &schema.Post{ID: 5, Type: schema.TypeAttachment, Title: "Menu <b>", Status: schema.StatusInherit,
		Attachment: &schema.Attachment{MimeType: "application/pdf", File: "2026/11/menu-0123456789ab.pdf"}}
	v = schema.RenderPost(file, schema.PostRender{Context: "view"}, site)
	if want := "<p class=\"attachment\"><a href='https://shop.example/cms-content/uploads/2026/11/menu-0123456789ab.pdf'>Menu <b></a></p>\n"; v.Description.Rendered != want {
		t.Errorf("file description %q", v.Description.Rendered)
	}
	if v.Link != "https://shop.example/?attachment_id=5" || v.GUID.Rendered != "https://shop.example/cms-content/uploads/2026/11/menu-0123456789ab.pdf" {
		t.Errorf("link %s guid %s", v.Link, v.GUID.Rendered)
	}
}
