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

// RecordLink is the permalink of any record of the post id space: pages are ?page_id=N under
// plain permalinks, everything else ?p=N.
func (s Site) RecordLink(p *Post) string {
	if p.Type == "page" {
		return s.Base + "/?page_id=" + strconv.FormatInt(int64(p.ID), 10)
	}
	if p.Type == TypeAttachment {
		return s.MediaLink(p.ID) // render_media.go
	}
	return s.PostLink(p.ID)
}

// CMSDateLayout is WordPress's REST date format: no zone suffix.
const CMSDateLayout = "2006-01-02T15:04:05"

// Rendered is a {rendered} or {raw, rendered, …} pair of the CMS interface.
type Rendered struct {
	Raw          *string `json:"raw,omitempty"`
	Rendered     string  `json:"rendered"`
	Protected    *bool   `json:"protected,omitempty"`
	BlockVersion *int    `json:"block_version,omitempty"`
	// RawOnly drops "rendered": reusable blocks show their raw title and content in every
	// context, and no rendered form.
	RawOnly bool `json:"-"`
}

// MarshalJSON encodes the pair, without "rendered" when RawOnly.
func (r Rendered) MarshalJSON() ([]byte, error) {
	type plain Rendered
	if !r.RawOnly {
		return MarshalJSON(plain(r))
	}
	return MarshalJSON(struct {
		Raw          *string `json:"raw,omitempty"`
		Protected    *bool   `json:"protected,omitempty"`
		BlockVersion *int    `json:"block_version,omitempty"`
	}{r.Raw, r.Protected, r.BlockVersion})
}

// Link is one entry of a CMS _links relation.
type Link struct {
	Href        string         `json:"href"`
	Embeddable  bool           `json:"embeddable,omitempty"`
	Count       *int           `json:"count,omitempty"`
	ID          *PostID        `json:"id,omitempty"`
	Taxonomy    string         `json:"taxonomy,omitempty"`
	PostType    string         `json:"post_type,omitempty"`
	Templated   bool           `json:"templated,omitempty"`
	Name        string         `json:"name,omitempty"`
	TargetHints map[string]any `json:"targetHints,omitempty"`
}

// SelfHints returns the targetHints of a self link from the methods the caller may use at its
// route (AllowedMethods for a GET of the link): {"allow": [...]}, or nil when none is allowed
// (WordPress then leaves targetHints out). A nil allow means a reader's GET alone.
func SelfHints(allow []string) map[string]any {
	if allow == nil {
		allow = []string{"GET"}
	}
	if len(allow) == 0 {
		return nil
	}
	return map[string]any{"allow": allow}
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
	Excerpt           Rendered           `json:"excerpt,omitzero"` // attachments have none
	Author            *UserID            `json:"author,omitempty"`
	FeaturedMedia     *PostID            `json:"featured_media,omitempty"`
	Parent            *PostID            `json:"parent,omitempty"`
	MenuOrder         *int               `json:"menu_order,omitempty"`
	CommentStatus     *string            `json:"comment_status,omitempty"`
	PingStatus        *string            `json:"ping_status,omitempty"`
	Sticky            *bool              `json:"sticky,omitempty"`
	Template          *string            `json:"template,omitempty"`
	Format            *string            `json:"format,omitempty"`
	Meta              *map[string]string `json:"meta,omitempty"`
	Categories        *[]TermID          `json:"categories,omitempty"`
	Tags              *[]TermID          `json:"tags,omitempty"`
	PatternCategories *[]TermID          `json:"cms_pattern_category,omitempty"`
	PermalinkTemplate *string            `json:"permalink_template,omitempty"`
	GeneratedSlug     *string            `json:"generated_slug,omitempty"`
	ClassList         *[]string          `json:"class_list,omitempty"`
	// MediaFields are an attachment's own fields (render_media.go), nil for other types.
	*MediaFields
	Links map[string][]Link `json:"_links,omitempty"`
	// Embedded holds the expanded embeddable links when the caller asked _embed.
	Embedded map[string][]any `json:"_embedded,omitempty"`
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
	// ExcerptWords overrides the length in words of an excerpt made from the content (the
	// excerpt_length argument); 0 or less means ExcerptWords (55).
	ExcerptWords int
	// Record, when set, finds another record of the tenant that the caller may know exists,
	// for links that name its type (an attachment's wp:attached-to); nil leaves them out.
	Record func(id PostID) *Post
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
		contentRendered = RenderContentEmbeds(p.Content, p.Embeds) // bare URLs: autoembed.go
		excerptRendered = RenderExcerptWords(p.Excerpt, p.Content, r.ExcerptWords)
	}
	typ := p.Type
	if typ == "" {
		typ = "post"
	}
	isPost, isPage, isBlock := typ == "post", typ == "page", typ == "cms_block"
	v := &PostView{
		ID:    p.ID,
		Date:  &localDate,
		Slug:  p.Slug,
		Type:  typ,
		Link:  site.RecordLink(p),
		Title: Rendered{Rendered: p.Title},
	}
	if isBlock {
		// Blocks show raw title and content in every context, and no rendered form.
		v.Title = Rendered{Raw: ptr(p.Title), RawOnly: true}
	}
	// Posts and pages have an author, a featured image and comments; blocks and navigation
	// menus do not (their types do not support them).
	authored := isPost || isPage
	v.Excerpt = Rendered{Rendered: excerptRendered, Protected: ptr(protected)}
	if authored {
		v.Author, v.FeaturedMedia = ptr(p.Author), ptr(p.FeaturedMedia)
	}
	if !embed {
		v.DateGMT = ptr(date.UTC().Format(CMSDateLayout))
		v.GUID = &Rendered{Rendered: site.RecordLink(p)}
		v.Modified = ptr(p.ModifiedGMT.In(loc).Format(CMSDateLayout))
		v.ModifiedGMT = ptr(p.ModifiedGMT.UTC().Format(CMSDateLayout))
		v.Status = ptr(p.Status)
		v.Content = &Rendered{Rendered: contentRendered, Protected: ptr(protected), BlockVersion: nil}
		if isBlock {
			v.Content = &Rendered{Raw: ptr(p.Content), Protected: ptr(protected), BlockVersion: ptr(blockVersion(p.Content)), RawOnly: true}
		}
		if isPage {
			v.Parent, v.MenuOrder = ptr(p.Parent), ptr(p.MenuOrder)
		}
		if authored {
			v.CommentStatus = ptr(p.CommentStatus)
			v.PingStatus = ptr(p.PingStatus)
		}
		v.Template = ptr(p.Template)
		meta := map[string]string{"footnotes": ""}
		if isBlock {
			meta["cms_pattern_sync_status"] = ""
		}
		for k, val := range p.Meta {
			meta[k] = val
		}
		v.Meta = &meta
		if isPost {
			v.Sticky = ptr(p.Sticky)
			v.Format = ptr(p.Format)
			v.Categories = ptr(nonNilTerms(p.Categories))
			v.Tags = ptr(nonNilTerms(p.Tags))
		}
		if isBlock {
			v.PatternCategories = ptr(nonNilTerms(p.PatternCategories))
		}
		v.ClassList = ptr(postClassList(p))
	}
	if edit {
		v.Title.Raw = ptr(p.Title)
		v.Content.Raw = ptr(p.Content)
		v.Content.BlockVersion = ptr(blockVersion(p.Content))
		v.Excerpt.Raw = ptr(p.Excerpt)
		v.GUID.Raw = ptr(site.RecordLink(p))
		v.Password = ptr(p.Password)
		v.PermalinkTemplate = ptr(site.RecordLink(p))
		gen := p.Slug
		if gen == "" {
			gen = Slugify(p.Title)
		}
		v.GeneratedSlug = ptr(gen)
	}
	v.Links = postLinks(p, r, site)
	if typ == TypeAttachment {
		renderMedia(p, r, site, v) // render_media.go
	}
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
	typ := p.Type
	if typ == "" {
		typ = "post"
	}
	cl := []string{"post-" + id, typ, "type-" + typ, "status-" + string(p.Status)}
	if typ == "post" {
		cl = append(cl, "format-"+p.Format)
	}
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
	t := PostTypeByName(p.Type)
	if t == nil {
		t = PostTypes[0]
	}
	links := map[string][]Link{
		"self":       {{Href: site.RestURL(t.Item(p.ID)), TargetHints: SelfHints(r.Allow)}},
		"collection": {{Href: site.RestURL(t.Collection())}},
		"about":      {{Href: site.RestURL("/cms/v2/types/" + t.Name)}},
		"curies":     {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	if t.Name == "post" || t.Name == "page" {
		links["author"] = []Link{{Href: site.RestURL("/cms/v2/users/" + strconv.FormatInt(int64(p.Author), 10)), Embeddable: true}}
		links["replies"] = []Link{{Href: site.RestURL("/cms/v2/comments") + "&post=" + id, Embeddable: true}}
		links["wp:attachment"] = []Link{{Href: site.RestURL("/cms/v2/media") + "&parent=" + id}}
		if p.FeaturedMedia != 0 {
			links["wp:featuredmedia"] = []Link{{Href: site.RestURL("/cms/v2/media/" + strconv.FormatInt(int64(p.FeaturedMedia), 10)), Embeddable: true}}
		}
	}
	if t.Name == "post" {
		links["wp:term"] = []Link{
			{Href: site.RestURL("/cms/v2/categories") + "&post=" + id, Taxonomy: "category", Embeddable: true},
			{Href: site.RestURL("/cms/v2/tags") + "&post=" + id, Taxonomy: "post_tag", Embeddable: true},
		}
	}
	if t.Name == "cms_block" {
		links["wp:term"] = []Link{{Href: site.RestURL("/cms/v2/cms_pattern_category") + "&post=" + id, Taxonomy: "cms_pattern_category", Embeddable: true}}
	}
	if t.Revisions {
		// Revisions and autosaves, counted by the record (revisions.go).
		links["version-history"] = []Link{{Href: site.RestURL(t.RevisionsPath(p.ID)), Count: ptr(p.RevisionCount)}}
		if p.RevisionCount > 0 {
			links["predecessor-version"] = []Link{{Href: site.RestURL(t.RevisionsPath(p.ID) + "/" + strconv.FormatInt(int64(p.LatestRevision), 10)),
				ID: ptr(p.LatestRevision)}}
		}
	}
	if t.Hierarchical && p.Parent != 0 {
		links["up"] = []Link{{Href: site.RestURL(t.Item(p.Parent)), Embeddable: true}}
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
	return RenderExcerptWords(rawExcerpt, content, ExcerptWords)
}

// RenderExcerptWords is RenderExcerpt with an excerpt made from the content cut at n words
// (n ≤ 0: ExcerptWords), as WordPress's excerpt_length filter does; a written excerpt is
// never cut.
func RenderExcerptWords(rawExcerpt, content string, n int) string {
	if n <= 0 {
		n = ExcerptWords
	}
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
	if len(words) > n {
		words = words[:n]
		more = " [&hellip;]"
	}
	return "<p>" + html.EscapeString(strings.Join(words, " ")) + more + "</p>\n"
}
