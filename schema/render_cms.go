package schema

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Site is what CMS rendering needs to know about a tenant.
type Site struct {
	// Base is the tenant's canonical base URL, without a trailing slash.
	Base string
	// Loc is the tenant's timezone; CMS "date" fields are local times in it.
	Loc *time.Location
}

// RestURL returns the absolute URL of a CMS route under plain-permalink addressing:
// {base}/index.php?rest_route={route}.
func (s Site) RestURL(route string) string { return s.Base + "/index.php?rest_route=" + route }

// APIRoot is the URL of the discovery index, sent in every CMS response's Link header.
func (s Site) APIRoot() string { return s.RestURL("/") }

// PostLink is a post's public permalink under plain permalinks.
func (s Site) PostLink(id PostID) string { return s.Base + "/?p=" + strconv.FormatInt(int64(id), 10) }

// CMSDateLayout is WordPress's REST date format: no zone suffix.
const CMSDateLayout = "2006-01-02T15:04:05"

// Rendered is a {rendered} or {raw, rendered, …} pair of the CMS interface.
type Rendered struct {
	Raw          *string `json:"raw,omitempty"`
	Rendered     string  `json:"rendered"`
	Protected    *bool   `json:"protected,omitempty"`
	BlockVersion *int    `json:"block_version,omitempty"`
}

// Link is one entry of a CMS _links relation.
type Link struct {
	Href        string         `json:"href"`
	Embeddable  bool           `json:"embeddable,omitempty"`
	Count       *int           `json:"count,omitempty"`
	Taxonomy    string         `json:"taxonomy,omitempty"`
	Templated   bool           `json:"templated,omitempty"`
	Name        string         `json:"name,omitempty"`
	TargetHints map[string]any `json:"targetHints,omitempty"`
}

// PostView is a post as the CMS interface renders it. Pointer fields are present only in the
// contexts that show them (view, embed, edit), in WordPress's order.
type PostView struct {
	ID                PostID             `json:"id"`
	Date              *string            `json:"date,omitempty"`
	DateGMT           *string            `json:"date_gmt,omitempty"`
	GUID              *Rendered          `json:"guid,omitempty"`
	Modified          *string            `json:"modified,omitempty"`
	ModifiedGMT       *string            `json:"modified_gmt,omitempty"`
	Password          *string            `json:"password,omitempty"`
	Slug              string             `json:"slug"`
	Status            *PostStatus        `json:"status,omitempty"`
	Type              string             `json:"type"`
	Link              string             `json:"link"`
	Title             Rendered           `json:"title"`
	Content           *Rendered          `json:"content,omitempty"`
	Excerpt           Rendered           `json:"excerpt"`
	Author            UserID             `json:"author"`
	FeaturedMedia     PostID             `json:"featured_media"`
	CommentStatus     *string            `json:"comment_status,omitempty"`
	PingStatus        *string            `json:"ping_status,omitempty"`
	Sticky            *bool              `json:"sticky,omitempty"`
	Template          *string            `json:"template,omitempty"`
	Format            *string            `json:"format,omitempty"`
	Meta              *map[string]string `json:"meta,omitempty"`
	Categories        *[]TermID          `json:"categories,omitempty"`
	Tags              *[]TermID          `json:"tags,omitempty"`
	PermalinkTemplate *string            `json:"permalink_template,omitempty"`
	GeneratedSlug     *string            `json:"generated_slug,omitempty"`
	ClassList         *[]string          `json:"class_list,omitempty"`
	Links             map[string][]Link  `json:"_links,omitempty"`
}

// PostRender says how to render a post.
type PostRender struct {
	// Context is view, embed or edit.
	Context string
	// Unlocked shows a password-protected post's content: the caller gave the password or may
	// edit the post.
	Unlocked bool
	// Allow lists the methods the caller may use on the post (the self link's targetHints).
	Allow []string
}

func ptr[T any](v T) *T { return &v }

// RenderPost builds the CMS view of a post.
func RenderPost(p *Post, r PostRender, site Site) *PostView {
	loc := site.Loc
	if loc == nil {
		loc = time.UTC
	}
	date := p.DateGMT
	if p.DateFloating && date.IsZero() {
		date = p.ModifiedGMT
	}
	localDate := date.In(loc).Format(CMSDateLayout)
	protected := p.Password != "" || p.Protected
	showContent := !protected || r.Unlocked
	edit := r.Context == "edit"
	embed := r.Context == "embed"

	contentRendered, excerptRendered := "", ""
	if showContent {
		contentRendered = RenderContent(p.Content)
		excerptRendered = RenderExcerpt(p.Excerpt, p.Content)
	}
	v := &PostView{
		ID:            p.ID,
		Date:          &localDate,
		Slug:          p.Slug,
		Type:          p.Type,
		Link:          site.PostLink(p.ID),
		Title:         Rendered{Rendered: p.Title},
		Excerpt:       Rendered{Rendered: excerptRendered, Protected: ptr(protected)},
		Author:        p.Author,
		FeaturedMedia: p.FeaturedMedia,
	}
	if v.Type == "" {
		v.Type = "post"
	}
	if !embed {
		v.DateGMT = ptr(date.UTC().Format(CMSDateLayout))
		v.GUID = &Rendered{Rendered: site.PostLink(p.ID)}
		v.Modified = ptr(p.ModifiedGMT.In(loc).Format(CMSDateLayout))
		v.ModifiedGMT = ptr(p.ModifiedGMT.UTC().Format(CMSDateLayout))
		v.Status = ptr(p.Status)
		v.Content = &Rendered{Rendered: contentRendered, Protected: ptr(protected), BlockVersion: nil}
		v.CommentStatus = ptr(p.CommentStatus)
		v.PingStatus = ptr(p.PingStatus)
		v.Sticky = ptr(p.Sticky)
		v.Template = ptr(p.Template)
		v.Format = ptr(p.Format)
		meta := map[string]string{"footnotes": ""}
		for k, val := range p.Meta {
			meta[k] = val
		}
		v.Meta = &meta
		v.Categories = ptr(nonNilTerms(p.Categories))
		v.Tags = ptr(nonNilTerms(p.Tags))
		v.ClassList = ptr(postClassList(p))
	}
	if edit {
		v.Title.Raw = ptr(p.Title)
		v.Content.Raw = ptr(p.Content)
		v.Content.BlockVersion = ptr(blockVersion(p.Content))
		v.Excerpt.Raw = ptr(p.Excerpt)
		v.GUID.Raw = ptr(site.PostLink(p.ID))
		v.Password = ptr(p.Password)
		v.PermalinkTemplate = ptr(site.Base + "/?p=" + strconv.FormatInt(int64(p.ID), 10))
		gen := p.Slug
		if gen == "" {
			gen = Slugify(p.Title)
		}
		v.GeneratedSlug = ptr(gen)
	}
	v.Links = postLinks(p, r, site)
	return v
}

func nonNilTerms(t []TermID) []TermID {
	if t == nil {
		return []TermID{}
	}
	return t
}

func postClassList(p *Post) []string {
	id := strconv.FormatInt(int64(p.ID), 10)
	cl := []string{"post-" + id, "post", "type-post", "status-" + string(p.Status), "format-" + p.Format}
	if p.Password != "" || p.Protected {
		cl = append(cl, "post-password-required")
	}
	if p.Sticky {
		cl = append(cl, "sticky")
	}
	cl = append(cl, "hentry")
	for _, c := range p.Categories {
		cl = append(cl, "category-"+strconv.FormatInt(int64(c), 10))
	}
	for _, t := range p.Tags {
		cl = append(cl, "tag-"+strconv.FormatInt(int64(t), 10))
	}
	return cl
}

func postLinks(p *Post, r PostRender, site Site) map[string][]Link {
	id := strconv.FormatInt(int64(p.ID), 10)
	allow := r.Allow
	if allow == nil {
		allow = []string{"GET"}
	}
	links := map[string][]Link{
		"self":          {{Href: site.RestURL("/cms/v2/posts/" + id), TargetHints: map[string]any{"allow": allow}}},
		"collection":    {{Href: site.RestURL("/cms/v2/posts")}},
		"about":         {{Href: site.RestURL("/cms/v2/types/post")}},
		"author":        {{Href: site.RestURL("/cms/v2/users/" + strconv.FormatInt(int64(p.Author), 10)), Embeddable: true}},
		"replies":       {{Href: site.RestURL("/cms/v2/comments") + "&post=" + id, Embeddable: true}},
		"wp:attachment": {{Href: site.RestURL("/cms/v2/media") + "&parent=" + id}},
		"wp:term": {
			{Href: site.RestURL("/cms/v2/categories") + "&post=" + id, Taxonomy: "category", Embeddable: true},
			{Href: site.RestURL("/cms/v2/tags") + "&post=" + id, Taxonomy: "post_tag", Embeddable: true},
		},
		"curies": {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	if p.FeaturedMedia != 0 {
		links["wp:featuredmedia"] = []Link{{Href: site.RestURL("/cms/v2/media/" + strconv.FormatInt(int64(p.FeaturedMedia), 10)), Embeddable: true}}
	}
	return links
}

func blockVersion(content string) int {
	if strings.Contains(content, "<!-- wp:") {
		return 1
	}
	return 0
}

var blockComment = regexp.MustCompile(`<!-- /?wp:[^>]*-->\n?`)

var blockLevel = regexp.MustCompile(`^<(?:h[1-6]|p|ul|ol|li|div|blockquote|pre|table|figure|hr|section|aside|header|footer|dl|form|address|details)[\s>/]`)

// RenderContent renders raw post content the way WordPress's content filters do for plain
// content: block delimiters are removed from block markup; otherwise paragraphs separated by
// blank lines are wrapped in <p>, single newlines become <br />.
func RenderContent(raw string) string {
	if raw == "" {
		return ""
	}
	if strings.Contains(raw, "<!-- wp:") {
		out := strings.TrimSpace(blockComment.ReplaceAllString(raw, ""))
		if out == "" {
			return ""
		}
		return out + "\n"
	}
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	var b strings.Builder
	for _, para := range strings.Split(raw, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if blockLevel.MatchString(para) {
			b.WriteString(para)
		} else {
			b.WriteString("<p>")
			b.WriteString(strings.ReplaceAll(para, "\n", "<br />\n"))
			b.WriteString("</p>")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var tag = regexp.MustCompile(`<[^>]*>`)

// ExcerptWords is WordPress's default excerpt length.
const ExcerptWords = 55

// RenderExcerpt renders an excerpt: the raw excerpt in a paragraph, or, when empty, the first
// ExcerptWords words of the content's text followed by " [&hellip;]" if anything was cut.
func RenderExcerpt(rawExcerpt, content string) string {
	if strings.TrimSpace(rawExcerpt) != "" {
		return RenderContent(rawExcerpt)
	}
	// Like WordPress's wp_strip_all_tags: tags go without leaving a space, so inline markup
	// never splits a word.
	text := tag.ReplaceAllString(blockComment.ReplaceAllString(content, ""), "")
	words := strings.Fields(html.UnescapeString(text))
	if len(words) == 0 {
		return ""
	}
	more := ""
	if len(words) > ExcerptWords {
		words = words[:ExcerptWords]
		more = " [&hellip;]"
	}
	return "<p>" + html.EscapeString(strings.Join(words, " ")) + more + "</p>\n"
}
