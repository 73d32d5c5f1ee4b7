package schema

import (
	"strings"
	"time"
)

// MaxExposedID is the bound of ids the CMS interface exposes: JavaScript clients read them as
// doubles, so they stay below 2^53.
const MaxExposedID = 1<<53 - 1

// Typed identifiers of CMS records. Posts, pages, media, blocks, navigation and revisions share
// one per-tenant id space; terms have another; users a third.
type (
	PostID int64
	UserID int64
	TermID int64
)

// PostStatus is a CMS record status.
type PostStatus string

// Statuses that can be written.
const (
	StatusPublish PostStatus = "publish"
	StatusFuture  PostStatus = "future"
	StatusDraft   PostStatus = "draft"
	StatusPending PostStatus = "pending"
	StatusPrivate PostStatus = "private"
	StatusTrash   PostStatus = "trash"
)

// PostFormats are the formats a post may take.
var PostFormats = []string{"standard", "aside", "chat", "gallery", "link", "image", "quote", "status", "video", "audio"}

// Post is a CMS post as replicated. Title, Content and Excerpt are the raw (edit) values; the
// rendered forms are derived at read time.
type Post struct {
	ID            PostID            `json:"id"`
	Type          string            `json:"type"`
	Slug          string            `json:"slug"`
	Status        PostStatus        `json:"status"`
	Password      string            `json:"password,omitempty"`
	Title         string            `json:"title"`
	Content       string            `json:"content"`
	Excerpt       string            `json:"excerpt"`
	Author        UserID            `json:"author"`
	FeaturedMedia PostID            `json:"featured_media"`
	CommentStatus string            `json:"comment_status"`
	PingStatus    string            `json:"ping_status"`
	Format        string            `json:"format"`
	Meta          map[string]string `json:"meta"`
	Sticky        bool              `json:"sticky"`
	Template      string            `json:"template"`
	Categories    []TermID          `json:"categories"`
	Tags          []TermID          `json:"tags"`
	// Parent and MenuOrder belong to hierarchical types (pages, menu items); zero elsewhere.
	Parent    PostID `json:"parent,omitempty"`
	MenuOrder int    `json:"menu_order,omitempty"`
	// PatternCategories are a reusable block's cms_pattern_category terms.
	PatternCategories []TermID `json:"pattern_categories,omitempty"`
	// MenuItem holds the fields of a menu item (type nav_menu_item), nil for other types.
	MenuItem *MenuItem `json:"menu_item,omitempty"`
	// Attachment holds the file facts of an attachment (type attachment), nil for other types
	// (attachment.go).
	Attachment *Attachment `json:"attachment,omitempty"`
	// Design holds the theme, area and kind of a template, template part or global styles record
	// (design.go), nil for other types.
	Design *Design `json:"design,omitempty"`
	// Embeds are the embeds of the content's bare URLs (autoembed.go): URL → the sanitised html
	// the origin resolved when the content was written. A URL missing here renders as a link.
	Embeds map[string]string `json:"embeds,omitempty"`
	// DateGMT is the publication date in UTC. DateFloating marks a draft whose date follows "now"
	// until it is published (WordPress's floating date).
	DateGMT      time.Time `json:"date_gmt"`
	DateFloating bool      `json:"date_floating,omitempty"`
	ModifiedGMT  time.Time `json:"modified_gmt"`
	// Protected marks the public copy of a password-protected post: its content and excerpt were
	// withheld before it was replicated to edges.
	Protected bool `json:"protected,omitempty"`
	// RevisionCount and LatestRevision describe the record's revisions and autosaves (which are
	// not replicated: revisions.go) for its version-history and predecessor-version links. The
	// store keeps them in the record's transaction whenever a revision is made or deleted.
	RevisionCount  int    `json:"revision_count,omitempty"`
	LatestRevision PostID `json:"latest_revision,omitempty"`
	Version        int64  `json:"version"`
}

// Public reports whether the post belongs to the public read model: published records of the
// types anonymous callers may read (PostType.PublicRead).
func (p *Post) Public() bool {
	if p.Type == TypeAttachment {
		// Media inherit their parent's visibility (attachment.go): public when attached to
		// nothing or to a public record.
		return p.Status == StatusInherit && p.Attachment != nil && !p.Attachment.ParentHidden
	}
	if p.Status != StatusPublish {
		return false
	}
	t := PostTypeByName(p.Type)
	return t != nil && t.PublicRead
}

// MenuItem is what a menu item holds beyond the Post record (the spec's menu item fields; title,
// status, parent and menu_order are the Post's).
type MenuItem struct {
	Type        string   `json:"type"` // taxonomy, post_type, post_type_archive, custom
	Object      string   `json:"object"`
	ObjectID    int64    `json:"object_id"`
	URL         string   `json:"url"`
	AttrTitle   string   `json:"attr_title"`
	Description string   `json:"description"`
	Target      string   `json:"target"` // "_blank" or ""
	Classes     []string `json:"classes"`
	XFN         []string `json:"xfn"`
	Menus       TermID   `json:"menus"`
}

// PublicCopy returns the copy of a public post that edges may hold: a password-protected post
// loses its password, content and excerpt, and is marked Protected.
func (p *Post) PublicCopy() *Post {
	c := *p
	if c.Password != "" {
		c.Password = ""
		c.Content = ""
		c.Excerpt = ""
		c.Protected = true
		c.Embeds = nil
	}
	return &c
}

// ValidatePost checks a post before it is written.
func ValidatePost(p *Post) error {
	if p.Slug != "" {
		// A trashed record keeps its slug with WordPress's "__trashed" suffix.
		slug := p.Slug
		if p.Status == StatusTrash {
			slug = strings.TrimSuffix(slug, "__trashed")
		}
		if err := ValidateSlug("slug", slug, nil); err != nil {
			return err
		}
	}
	switch p.Status {
	case StatusPublish, StatusFuture, StatusDraft, StatusPending, StatusPrivate, StatusTrash:
	case StatusInherit: // attachments only
		if p.Type != TypeAttachment {
			return Invalid("status", "status is not one of publish, future, draft, pending, private")
		}
	default:
		return Invalid("status", "status is not one of publish, future, draft, pending, private")
	}
	if err := ValidateText("title", p.Title, MaxTitleLen*4, false); err != nil {
		return err
	}
	if err := ValidateText("content", p.Content, 4<<20, false); err != nil {
		return err
	}
	if err := ValidateText("excerpt", p.Excerpt, MaxDescriptionLen, false); err != nil {
		return err
	}
	if err := ValidateText("password", p.Password, 255, false); err != nil {
		return err
	}
	if p.CommentStatus != "open" && p.CommentStatus != "closed" {
		return Invalid("comment_status", "comment_status is not one of open and closed.")
	}
	if p.PingStatus != "open" && p.PingStatus != "closed" {
		return Invalid("ping_status", "ping_status is not one of open and closed.")
	}
	okFormat := false
	for _, f := range PostFormats {
		okFormat = okFormat || p.Format == f
	}
	if !okFormat {
		return Invalid("format", "format is not one of standard, aside, chat, gallery, link, image, quote, status, video, and audio.")
	}
	if p.Sticky && p.Password != "" {
		return &Error{Code: CodeInvalid, CMSCode: "rest_invalid_field", Field: "sticky", Message: "A post can not be sticky and have a password."}
	}
	for field, ids := range map[string][]TermID{"categories": p.Categories, "tags": p.Tags} {
		for _, t := range ids {
			if t <= 0 || t > MaxExposedID {
				return Invalid(field, "%s must contain positive term ids", field)
			}
		}
	}
	if err := validateTypeFields(p); err != nil {
		return err
	}
	for k, v := range p.Meta {
		if k != "footnotes" && !(p.Type == "cms_block" && k == "cms_pattern_sync_status") {
			return Invalid("meta", "meta key %q is not registered", k)
		}
		if err := ValidateText("meta", v, 1<<20, false); err != nil {
			return err
		}
	}
	return nil
}

// Normalize replaces nil collections with empty ones (see Product.Normalize).
func (p *Post) Normalize() {
	if p.Meta == nil {
		p.Meta = map[string]string{}
	}
	if p.Categories == nil {
		p.Categories = []TermID{}
	}
	if p.Tags == nil {
		p.Tags = []TermID{}
	}
	if p.Type == "" {
		p.Type = "post"
	}
	if p.MenuItem != nil {
		if p.MenuItem.Classes == nil {
			p.MenuItem.Classes = []string{}
		}
		if p.MenuItem.XFN == nil {
			p.MenuItem.XFN = []string{}
		}
	}
	if len(p.PatternCategories) == 0 {
		p.PatternCategories = nil
	}
	// The database keeps UTC microseconds: a value written must encode like the value read back.
	p.DateGMT = p.DateGMT.UTC().Truncate(time.Microsecond)
	p.ModifiedGMT = p.ModifiedGMT.UTC().Truncate(time.Microsecond)
}

// validateTypeFields checks the fields one post type has (schema.PostType): the parent and menu
// order of pages and menu items, a menu item's link, a block's sync status.
func validateTypeFields(p *Post) error {
	t := PostTypeByName(p.Type)
	if t == nil {
		return Invalid("type", "unknown post type %q", p.Type)
	}
	if p.Parent < 0 || p.Parent > MaxExposedID {
		return Invalid("parent", "parent must be greater than or equal to 0")
	}
	if p.Type == "cms_block" {
		if s := p.Meta["cms_pattern_sync_status"]; s != "" && s != "partial" && s != "unsynced" {
			return Invalid("meta", "meta.cms_pattern_sync_status is not one of partial and unsynced.")
		}
	}
	for _, id := range p.PatternCategories {
		if id <= 0 || id > MaxExposedID {
			return Invalid("cms_pattern_category", "cms_pattern_category must contain positive term ids")
		}
	}
	if (p.Type == TypeAttachment) != (p.Attachment != nil) {
		return Invalid("type", "attachments, and only they, have file facts")
	}
	if p.Type != "nav_menu_item" {
		if p.MenuItem != nil {
			return Invalid("type", "only menu items have menu item fields")
		}
		return nil
	}
	mi := p.MenuItem
	if mi == nil {
		return Invalid("type", "a menu item needs its menu item fields")
	}
	if p.MenuOrder < 1 {
		return Invalid("menu_order", "menu_order must be greater than or equal to 1")
	}
	switch mi.Type {
	case "custom", "post_type", "post_type_archive", "taxonomy":
	default:
		return Invalid("type", "type is not one of taxonomy, post_type, post_type_archive, and custom.")
	}
	if mi.Target != "" && mi.Target != "_blank" {
		return Invalid("target", "target is not one of _blank and .")
	}
	if mi.ObjectID < 0 || mi.ObjectID > MaxExposedID {
		return Invalid("object_id", "object_id must be greater than or equal to 0")
	}
	for name, v := range map[string]string{"url": mi.URL, "attr_title": mi.AttrTitle, "description": mi.Description, "object": mi.Object} {
		if err := ValidateText(name, v, 2048, false); err != nil {
			return err
		}
	}
	for name, list := range map[string][]string{"classes": mi.Classes, "xfn": mi.XFN} {
		if len(list) > 50 {
			return Invalid(name, "%s must contain at most 50 items.", name)
		}
		for _, c := range list {
			if err := ValidateText(name, c, 200, false); err != nil {
				return err
			}
		}
	}
	return nil
}
