package schema

import (
	"html"
	"regexp"
	"slices"
	"strings"
)

// Bare URLs in post content (WordPress's WP_Embed::autoembed): a URL alone on its own line, or
// alone in a paragraph — which is also how a core/embed block stores its URL — renders as the
// embed of what it names. Edges cannot fetch other sites, so the origin resolves a post's URLs
// when its content is written (origin/oembed) and stores the sanitised html with the post
// (Post.Embeds, replicated with it); rendering only substitutes, with no I/O. A URL without an
// embed (an unknown site, a failed fetch, a record that is not public) renders as a link to
// itself. WordPress leaves such a URL as plain text; a link is what a reader expects of it.

// MaxEmbedsPerPost bounds the bare URLs of one post the origin resolves; later ones stay links.
const MaxEmbedsPerPost = 20

// MaxEmbedHTML bounds the html kept for one embed.
const MaxEmbedHTML = 64 << 10

var (
	// A URL alone on a line, and a URL alone in a paragraph: WordPress's two patterns.
	embedLine      = regexp.MustCompile(`(?im)^(\s*)(https?://[^\s<>"]+)(\s*)$`)
	embedParagraph = regexp.MustCompile(`(?i)(<p(?: [^>]*)?>\s*)(https?://[^\s<>"]+)(\s*</p>)`)
)

// bareURLs returns the spans of content's bare URLs, in order, without overlaps. Line breaks
// inside HTML tags and comments do not count (WordPress's wp_replace_in_html_tags), so that a
// tag written over several lines never leaves a URL alone on a line.
func bareURLs(content string) [][2]int {
	if !strings.Contains(content, "://") {
		return nil
	}
	s := []byte(content)
	inTag := false
	for i, c := range s {
		switch {
		case c == '<':
			inTag = true
		case c == '>':
			inTag = false
		case c == '\n' && inTag:
			s[i] = 0 // same length: the spans found are spans of content
		}
	}
	var spans [][2]int
	for _, re := range []*regexp.Regexp{embedLine, embedParagraph} {
		for _, m := range re.FindAllSubmatchIndex(s, -1) {
			spans = append(spans, [2]int{m[4], m[5]})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := spans[:0]
	end := -1
	for _, sp := range spans {
		if sp[0] >= end {
			out = append(out, sp)
			end = sp[1]
		}
	}
	return out
}

// embedKey is the URL an occurrence in content stands for: its HTML-escaped ampersands decoded,
// as WordPress's embed shortcode reads it.
func embedKey(u string) string { return strings.ReplaceAll(u, "&amp;", "&") }

// EmbedCandidates returns the URLs that content would embed, once each in order of appearance,
// at most MaxEmbedsPerPost: what the origin resolves when the content is written.
func EmbedCandidates(content string) []string {
	var out []string
	seen := map[string]bool{}
	for _, sp := range bareURLs(content) {
		k := embedKey(content[sp[0]:sp[1]])
		if !seen[k] && len(out) < MaxEmbedsPerPost {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// AutoEmbed replaces each bare URL of content with its embed: embeds[url] when there is one,
// else a link to the URL.
func AutoEmbed(content string, embeds map[string]string) string {
	spans := bareURLs(content)
	if len(spans) == 0 {
		return content
	}
	var b strings.Builder
	b.Grow(len(content))
	last := 0
	for _, sp := range spans {
		b.WriteString(content[last:sp[0]])
		b.WriteString(embedFor(content[sp[0]:sp[1]], embeds))
		last = sp[1]
	}
	b.WriteString(content[last:])
	return b.String()
}
func embedFor(u string, embeds map[string]string) string {
	k := embedKey(u)
	if h, ok := embeds[k]; ok && h != "" {
		return h
	}
	e := html.EscapeString(k)
	return `<a href="` + e + `">` + e + `</a>`
}

// RenderContentEmbeds renders post content as RenderContent does, after AutoEmbed: what the
// CMS shows as content.rendered of a record whose bare URLs were resolved into embeds.
func RenderContentEmbeds(raw string, embeds map[string]string) string {
	return RenderContent(AutoEmbed(raw, embeds))
}
