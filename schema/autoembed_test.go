package schema_test

import (
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

func TestEmbedCandidates(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"alone on a line", "Hello\n\nhttps://www.youtube.com/watch?v=abc\n\nBye", []string{"https://www.youtube.com/watch?v=abc"}},
		{"with spaces around", "Hello\n   https://vimeo.com/1  \nBye", []string{"https://vimeo.com/1"}},
		{"alone in a paragraph", `<p>Intro</p><p class="x"> https://shop.example/?p=3 </p>`, []string{"https://shop.example/?p=3"}},
		{"an embed block", "<!-- wp:embed {\"url\":\"https://youtu.be/x\"} -->\n<figure class=\"wp-block-embed\"><div class=\"wp-block-embed__wrapper\">\nhttps://youtu.be/x\n</div></figure>\n<!-- /wp:embed -->",
			[]string{"https://youtu.be/x"}},
		{"escaped ampersands", "https://www.youtube.com/watch?v=a&amp;t=10", []string{"https://www.youtube.com/watch?v=a&t=10"}},
		{"once each", "https://a.example/x\n\nhttps://a.example/x\nhttps://b.example/y", []string{"https://a.example/x", "https://b.example/y"}},
		{"in a sentence", "See https://a.example/x for more", nil},
		{"inside a link", `<a href="https://a.example/x">https://a.example/x</a>`, nil},
		{"a tag over several lines", "<a\nhref=\"x\"\n>\nhttps://a.example/inside-tag-lines\n</a>", []string{"https://a.example/inside-tag-lines"}},
		{"an attribute on its own line", "<img\nsrc=\"x\"\nalt=\"\nhttps://a.example/attr\n\">", nil},
		{"not http", "ftp://a.example/x\njavascript://x", nil},
		{"nothing", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.EmbedCandidates(tc.content); !slices.Equal(got, tc.want) {
				t.Errorf("EmbedCandidates = %q, want %q", got, tc.want)
			}
		})
	}
	var many strings.Builder
	for i := range schema.MaxEmbedsPerPost + 5 {
		many.WriteString("https://a.example/" + strings.Repeat("x", i+1) + "\n")
	}
	if got := schema.EmbedCandidates(many.String()); len(got) != schema.MaxEmbedsPerPost {
		t.Errorf("%d candidates, want at most %d", len(got), schema.MaxEmbedsPerPost)
	}
}

func TestRenderContentEmbeds(t *testing.T) {
	embeds := map[string]string{
		"https://www.youtube.com/watch?v=a&t=10": `<iframe src="https://www.youtube.com/embed/a" sandbox="allow-scripts"></iframe>`,
		"https://shop.example/?p=3":              `<blockquote class="wp-embedded-content"><a href="https://shop.example/?p=3">Three</a></blockquote>`,
	}
	tests := []struct{ name, raw, want string }{
		{"an embed on its own line", "Intro\n\nhttps://www.youtube.com/watch?v=a&amp;t=10\n\nEnd",
			"<p>Intro</p>\n<p><iframe src=\"https://www.youtube.com/embed/a\" sandbox=\"allow-scripts\"></iframe></p>\n<p>End</p>\n"},
		{"a local embed is a block", "https://shop.example/?p=3",
			"<blockquote class=\"wp-embedded-content\"><a href=\"https://shop.example/?p=3\">Three</a></blockquote>\n"},
		{"an unknown URL is a link", "Look:\n\nhttps://unknown.example/a?b=1&c=2",
			"<p>Look:</p>\n<p><a href=\"https://unknown.example/a?b=1&amp;c=2\">https://unknown.example/a?b=1&amp;c=2</a></p>\n"},
		{"a quote ends a URL: not alone", "https://unknown.example/a\"b", "<p>https://unknown.example/a\"b</p>\n"},
		{"a block's paragraph", "<!-- wp:paragraph -->\n<p>https://shop.example/?p=3</p>\n<!-- /wp:paragraph -->",
			"<p><blockquote class=\"wp-embedded-content\"><a href=\"https://shop.example/?p=3\">Three</a></blockquote></p>\n"},
		{"nothing to embed", "Plain <b>text</b>\nand lines", "<p>Plain <b>text</b><br />\nand lines</p>\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.RenderContentEmbeds(tc.raw, embeds); got != tc.want {
				t.Errorf("RenderContentEmbeds:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	// A hostile "URL" cannot break out of the link it becomes.
	got := schema.AutoEmbed(`https://x.example/'onmouseover=alert(1)//`, nil)
	if !strings.HasPrefix(got, `<a href="https://x.example/&#39;onmouseover=alert(1)//">`) {
		t.Errorf("hostile URL: %s", got)
	}
}

// A rendered post shows its embeds; the copy an edge holds of a protected post has none.
func TestRenderPostEmbeds(t *testing.T) {
	p := &schema.Post{ID: 9, Type: "post", Status: schema.StatusPublish, Title: "T", Content: "https://vimeo.com/1",
		CommentStatus: "open", PingStatus: "open", Format: "standard",
		Embeds: map[string]string{"https://vimeo.com/1": `<iframe src="https://player.vimeo.com/video/1"></iframe>`}}
	v := schema.RenderPost(p, schema.PostRender{Context: "view"}, oembedSite)
	if !strings.Contains(v.Content.Rendered, `<iframe src="https://player.vimeo.com/video/1">`) {
		t.Errorf("rendered content: %s", v.Content.Rendered)
	}
	p.Password = "pw"
	if c := p.PublicCopy(); c.Embeds != nil || c.Content != "" {
		t.Errorf("public copy of a protected post keeps %v", c.Embeds)
	}
}

func FuzzAutoEmbed(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "<p>https://a.example/x</p>", "a\n<b\nc>\nhttps://x.example\n</b>", "\x00https://x\x00", "<p https://x.example </p>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := schema.AutoEmbed(s, nil)
		if !strings.Contains(s, "://") && out != s {
			t.Fatalf("content without URLs changed: %q → %q", s, out)
		}
		for _, u := range schema.EmbedCandidates(s) {
			if !strings.HasPrefix(strings.ToLower(u), "http") {
				t.Fatalf("candidate %q", u)
			}
		}
		_ = schema.RenderContentEmbeds(s, map[string]string{})
	})
}
