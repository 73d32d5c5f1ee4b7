package media

import (
	"strconv"
	"strings"
	"time"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// input is the writable fields of an attachment (the spec's Media fields; WordPress's attachment
// schema: no content, excerpt or password, but caption, description, alt_text and post). Text
// fields take a string or {"raw": …}.
type input struct {
	ID            *handler.Int       `json:"id"`
	Date          *string            `json:"date"`
	DateGMT       *string            `json:"date_gmt"`
	Slug          *string            `json:"slug"`
	Status        *string            `json:"status"`
	Title         *handler.Text      `json:"title"`
	Author        *handler.Int       `json:"author"`
	FeaturedMedia *handler.Int       `json:"featured_media"`
	CommentStatus *string            `json:"comment_status"`
	PingStatus    *string            `json:"ping_status"`
	Meta          *map[string]string `json:"meta"`
	Template      *string            `json:"template"`
	AltText       *string            `json:"alt_text"`
	Caption       *handler.Text      `json:"caption"`
	Description   *handler.Text      `json:"description"`
	Post          *handler.Int       `json:"post"`
}

// inputFromParams reads the fields from string parameters: an upload's query string and form
// fields (get returns a parameter and whether it was sent). A text field may also come as
// name[raw].
func inputFromParams(get func(name string) (string, bool)) (*input, error) {
	in := &input{}
	str := func(name string) *string {
		if v, ok := get(name); ok {
			return &v
		}
		return nil
	}
	text := func(name string) *handler.Text {
		if v, ok := get(name); ok {
			return &handler.Text{Raw: v}
		}
		if v, ok := get(name + "[raw]"); ok {
			return &handler.Text{Raw: v}
		}
		return nil
	}
	integer := func(name string) (*handler.Int, error) {
		v, ok := get(name)
		if !ok {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, schema.InvalidParam(name, name+" is not of type integer.")
		}
		i := handler.Int(n)
		return &i, nil
	}
	var err error
	for _, f := range []struct {
		name string
		dst  **handler.Int
	}{{"id", &in.ID}, {"author", &in.Author}, {"featured_media", &in.FeaturedMedia}, {"post", &in.Post}} {
		if *f.dst, err = integer(f.name); err != nil {
			return nil, err
		}
	}
	in.Date, in.DateGMT, in.Slug, in.Status = str("date"), str("date_gmt"), str("slug"), str("status")
	in.CommentStatus, in.PingStatus, in.Template, in.AltText = str("comment_status"), str("ping_status"), str("template"), str("alt_text")
	in.Title, in.Caption, in.Description = text("title"), text("caption"), text("description")
	return in, nil
}

var writableStatuses = []string{"publish", "future", "draft", "pending", "private", "trash"}

// validate checks types, enums and bounds (WordPress's argument validation, before
// permissions).
func (in *input) validate(parse func(string, *time.Location) (time.Time, bool, error)) error {
	if in.Status != nil && !contains(writableStatuses, *in.Status) {
		return schema.InvalidParam("status", "status is not one of publish, future, draft, pending, private, and trash.")
	}
	for name, v := range map[string]*string{"comment_status": in.CommentStatus, "ping_status": in.PingStatus} {
		if v != nil && *v != "open" && *v != "closed" {
			return schema.InvalidParam(name, name+" is not one of open and closed.")
		}
	}
	for name, v := range map[string]*handler.Int{"post": in.Post, "author": in.Author, "featured_media": in.FeaturedMedia} {
		if v != nil && (*v < 0 || *v > schema.MaxExposedID) {
			return schema.InvalidParam(name, name+" must be between 0 (inclusive) and "+strconv.FormatInt(schema.MaxExposedID, 10)+" (inclusive)")
		}
	}
	for name, d := range map[string]*string{"date": in.Date, "date_gmt": in.DateGMT} {
		if d != nil {
			if _, _, err := parse(*d, time.UTC); err != nil {
				return schema.InvalidParam(name, "Invalid date.")
			}
		}
	}
	if in.AltText != nil && len(*in.AltText) > 2048 {
		return schema.InvalidParam("alt_text", "alt_text must be at most 2048 characters long.")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// attachmentStatus is the status WordPress stores for an attachment written with status s:
// private and trash stay, anything else is inherit (wp_insert_post).
func attachmentStatus(s string) schema.PostStatus {
	switch s {
	case "private", "trash":
		return schema.PostStatus(s)
	}
	return schema.StatusInherit
}

// publishes reports whether the input asks for a status that needs publish rights
// (WordPress's handle_status_param).
func (in *input) publishes() bool {
	return in.Status != nil && (*in.Status == "publish" || *in.Status == "future" || *in.Status == "private")
}

// apply writes the input onto p (a new attachment or a copy of the stored one) at the
// transaction's clock now. loc is the store's time zone, for dates without one.
func (in *input) apply(p *schema.Post, now time.Time, loc *time.Location, parse func(string, *time.Location) (time.Time, bool, error)) {
	if in.Title != nil {
		p.Title = in.Title.Raw
	}
	if in.Caption != nil {
		p.Excerpt = in.Caption.Raw
	}
	if in.Description != nil {
		p.Content = in.Description.Raw
	}
	a := *p.Attachment
	if in.AltText != nil {
		a.AltText = textField(*in.AltText)
	}
	p.Attachment = &a
	if in.Post != nil {
		p.Parent = schema.PostID(*in.Post)
	}
	if in.Author != nil {
		p.Author = schema.UserID(*in.Author)
	}
	set(&p.CommentStatus, in.CommentStatus)
	set(&p.PingStatus, in.PingStatus)
	set(&p.Template, in.Template)
	if in.Meta != nil {
		p.Meta = *in.Meta
	}
	if in.Status != nil {
		p.Status = attachmentStatus(*in.Status)
	}
	switch {
	case in.Date != nil:
		t, _, _ := parse(*in.Date, loc)
		p.DateGMT = t.UTC()
	case in.DateGMT != nil:
		t, _, _ := parse(*in.DateGMT, time.UTC)
		p.DateGMT = t.UTC()
	}
	if in.Slug != nil {
		p.Slug = schema.Slugify(*in.Slug)
	}
	p.DateFloating = false // attachments are dated when they are uploaded
	p.ModifiedGMT = now
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// textField is WordPress's sanitize_text_field, for alt texts: tags removed, line breaks and
// tabs turned to spaces, runs of spaces collapsed, trimmed.
func textField(s string) string {
	var b strings.Builder
	inTag := false
	space := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
		case inTag:
			if r == '>' {
				inTag = false
			}
		case r == '\n' || r == '\r' || r == '\t' || r == ' ':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		case r < ' ' || r == 0x7f:
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return strings.TrimSpace(b.String())
}

// filterHTML filters the HTML a user without unfiltered_html writes, at write time, as for
// posts (decision 21): the title with the title policy, the caption and description with the
// post policy.
func (s *Service) filterHTML(rq *handler.Request, in *input) {
	if can(rq, schema.CapUnfilteredHTML) {
		return
	}
	if in.Title != nil {
		in.Title.Raw = s.kses.Title(in.Title.Raw)
	}
	for _, t := range []*handler.Text{in.Caption, in.Description} {
		if t != nil {
			t.Raw = s.kses.Post(t.Raw)
		}
	}
}
