package schema

import (
	"strconv"
	"time"
)

// Storefront search, catalog filters and the commerce view of blog posts: the arguments the
// routes of routes.go declare for them, and the shapes they answer.

// Bounds of the storefront search and post routes.
const (
	// DefaultSuggestions and MaxSuggestions bound /api/search/autocomplete's limit.
	DefaultSuggestions = 8
	MaxSuggestions     = 20
	// DefaultPostsPerPage is /api/posts's page size (MaxPerPage bounds it, as other lists).
	DefaultPostsPerPage = 10
)

// Catalog sorts, as the sort argument names them.
const (
	SortRelevance = "relevance"
	SortNewest    = "newest"
	SortPriceAsc  = "price_asc"
	SortPriceDesc = "price_desc"
	SortTitle     = "title"
)

// Arguments of the catalog filters, shared by /api/products and /api/search so that both
// filter alike. Price bounds have explicit defaults (the whole range) rather than an empty
// default: an absent bound and a bound of 0 must not share a cache key.
var (
	argCategory = Arg{Name: "category", Type: ArgString,
		Description: "Limit to products in this category or any of its descendants: a category id or slug."}
	argMinPrice = Arg{Name: "min_price", Type: ArgInt, Default: "0", HasMin: true, Min: 0, HasMax: true, Max: MaxMinorAmount,
		Description: "Lowest price shown, inclusive, in minor units of the requested currency."}
	argMaxPrice = Arg{Name: "max_price", Type: ArgInt, Default: strconv.FormatInt(MaxMinorAmount, 10), HasMin: true, Min: 0, HasMax: true, Max: MaxMinorAmount,
		Description: "Highest price shown, inclusive, in minor units of the requested currency."}
	argAvailability = Arg{Name: "availability", Type: ArgStringList, Enum: []string{string(InStock), string(LowStock), string(OutOfStock)}, MaxItems: 3,
		Description: "Limit to products of these availabilities (the best of their variants)."}
	argProductSort = Arg{Name: "sort", Type: ArgString, Default: SortNewest, Enum: []string{SortNewest, SortPriceAsc, SortPriceDesc, SortTitle},
		Description: "Order of the products; ties go to the newest."}
	argSearchSort = Arg{Name: "sort", Type: ArgString, Default: SortRelevance, Enum: []string{SortRelevance, SortNewest, SortPriceAsc, SortPriceDesc, SortTitle},
		Description: "Order of the results; relevance without a query is newest. Ties go to relevance, then the newest."}
	// argQuery is declared last on its routes: it is the one free-form string of their cache keys
	// (Args.AppendKey), so nothing another argument holds can be mistaken for part of it.
	argQuery = Arg{Name: "q", Type: ArgString,
		Description: "The words to search for; the last one also matches as a prefix, and words of 4 characters or more also match with one typo."}
	argSuggestLimit = Arg{Name: "limit", Type: ArgInt, Default: strconv.Itoa(DefaultSuggestions), HasMin: true, Min: 1, HasMax: true, Max: MaxSuggestions,
		Description: "Maximum number of suggestions."}
	argPostsPerPage = Arg{Name: "per_page", Type: ArgInt, Default: strconv.Itoa(DefaultPostsPerPage), HasMin: true, Min: 1, HasMax: true, Max: MaxPerPage,
		Description: "Maximum number of posts to be returned in result set."}
)

// SuggestionView is one autocomplete suggestion: a product a search box can link to.
type SuggestionView struct {
	ID    ProductID `json:"id"`
	Slug  string    `json:"slug"`
	Title string    `json:"title"`
	URL   string    `json:"url"`
}

// BlogPostView is a published CMS post as the commerce interface lists it (GET /api/posts).
type BlogPostView struct {
	ID    PostID `json:"id"`
	Slug  string `json:"slug"`
	Title string `json:"title"`
	// Excerpt and Content are HTML, rendered as the CMS renders them; both are empty for a
	// password-protected post (Protected), whose content never leaves the origin.
	Excerpt   string     `json:"excerpt"`
	Content   string     `json:"content"`
	Protected bool       `json:"protected"`
	Author    PostAuthor `json:"author"`
	// Date is the publication date; Modified the last change.
	Date     time.Time `json:"date"`
	Modified time.Time `json:"modified"`
	// FeaturedImage is the post's featured media, or null when it has none or its attachment is
	// not public.
	FeaturedImage *PostMedia `json:"featured_image"`
	// URL is the post's public permalink.
	URL string `json:"url"`
}

// PostAuthor is a post's author. Name is the author's display name from the replicated public
// profile (schema.Author), null when the replica has no profile for the id.
type PostAuthor struct {
	ID   UserID  `json:"id"`
	Name *string `json:"name"`
}

// PostMedia is a post's featured media: its id, the CMS route that describes it, and what a
// storefront needs to show it without that second request: the file's URL (served by edges),
// its alternative text, MIME type and dimensions, and its sub-sizes by name (media_details).
// Width and Height are 0 and Sizes empty for files that are not images.
type PostMedia struct {
	ID        PostID                   `json:"id"`
	Href      string                   `json:"href"`
	SourceURL string                   `json:"source_url"`
	AltText   string                   `json:"alt_text"`
	MimeType  string                   `json:"mime_type"`
	Width     int                      `json:"width"`
	Height    int                      `json:"height"`
	Sizes     map[string]PostMediaSize `json:"sizes"`
}

// PostMediaSize is one sub-size of a featured image.
type PostMediaSize struct {
	SourceURL string `json:"source_url"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
}

// RenderPostMedia builds the commerce view of a public attachment, or nil for anything else.
func RenderPostMedia(att *Post, site Site) *PostMedia {
	if att == nil || att.Type != TypeAttachment || att.Attachment == nil || att.Attachment.File == "" {
		return nil
	}
	a := att.Attachment
	m := &PostMedia{ID: att.ID, Href: site.RestURL("/cms/v2/media/" + strconv.FormatInt(int64(att.ID), 10)),
		SourceURL: site.UploadURL(a.File), AltText: a.AltText, MimeType: a.MimeType, Sizes: map[string]PostMediaSize{}}
	if a.IsImage() {
		m.Width, m.Height = a.Width, a.Height
		for name, s := range a.Sizes {
			m.Sizes[name] = PostMediaSize{SourceURL: site.UploadURL(s.File), Width: s.Width, Height: s.Height}
		}
	}
	return m
}

// RenderBlogPost builds the commerce view of a public post; featured is its featured attachment
// as the reader may see it (nil when it has none, or none that is public).
func RenderBlogPost(p *Post, featured *Post, site Site) BlogPostView {
	protected := p.Password != "" || p.Protected
	v := BlogPostView{
		ID:        p.ID,
		Slug:      p.Slug,
		Title:     p.Title,
		Protected: protected,
		Author:    PostAuthor{ID: p.Author},
		Date:      p.DateGMT.UTC(),
		Modified:  p.ModifiedGMT.UTC(),
		URL:       site.PostLink(p.ID),
	}
	if !protected {
		v.Content = RenderContentEmbeds(p.Content, p.Embeds) // bare URLs: autoembed.go
		v.Excerpt = RenderExcerpt(p.Excerpt, p.Content)
	}
	if p.FeaturedMedia != 0 && featured != nil && featured.ID == p.FeaturedMedia {
		v.FeaturedImage = RenderPostMedia(featured, site)
	}
	return v
}
