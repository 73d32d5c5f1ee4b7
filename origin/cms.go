package origin

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// postInput is the writable fields of a CMS post. Text fields take a string or {"raw": …}.
type postInput struct {
	ID            *handler.Int       `json:"id"`
	Date          *string            `json:"date"`
	DateGMT       *string            `json:"date_gmt"`
	Slug          *string            `json:"slug"`
	Status        *string            `json:"status"`
	Password      *string            `json:"password"`
	Title         *handler.Text      `json:"title"`
	Content       *handler.Text      `json:"content"`
	Excerpt       *handler.Text      `json:"excerpt"`
	Author        *handler.Int       `json:"author"`
	FeaturedMedia *handler.Int       `json:"featured_media"`
	CommentStatus *string            `json:"comment_status"`
	PingStatus    *string            `json:"ping_status"`
	Format        *string            `json:"format"`
	Meta          *map[string]string `json:"meta"`
	Sticky        *bool              `json:"sticky"`
	Template      *string            `json:"template"`
	Categories    *[]handler.Int     `json:"categories"`
	Tags          *[]handler.Int     `json:"tags"`
	// Pages and menu items.
	Parent    *handler.Int `json:"parent"`
	MenuOrder *handler.Int `json:"menu_order"`
	// Blocks.
	PatternCategories *[]handler.Int `json:"cms_pattern_category"`
	// Menu items (type is the menu item's link type, not the post type).
	ItemType    *string      `json:"type"`
	URL         *string      `json:"url"`
	AttrTitle   *string      `json:"attr_title"`
	Description *string      `json:"description"`
	Target      *string      `json:"target"`
	Classes     *[]string    `json:"classes"`
	XFN         *[]string    `json:"xfn"`
	Object      *string      `json:"object"`
	ObjectID    *handler.Int `json:"object_id"`
	Menus       *handler.Int `json:"menus"`
}

// cmsHandlers registers the writes of every post type (schema.PostTypes), and the reads of the
// types edges do not answer (blocks and menu items need capabilities to read): those run the
// same read engine as edges, from the origin's full replica.
func (s *Server) cmsHandlers() {
	for _, t := range schema.PostTypes {
		if t.OwnRoutes {
			continue // attachments: origin/media
		}
		n := "cms." + t.RestBase
		s.bind(n+".create", s.createPost)
		s.bind(n+".update", s.updatePost)
		s.bind(n+".delete", s.deletePost)
		if !t.PublicRead {
			read := func(ctx *fasthttp.RequestCtx, rq *handler.Request) { s.read(ctx, rq.Route) }
			s.bind(n+".list", read)
			s.bind(n+".get", read)
		}
	}
	s.revisionHandlers() // revisions and autosaves (revisions.go)
}

// postType returns the post type of the request's route.
func postType(rq *handler.Request) *schema.PostType {
	if t := schema.PostTypeOfRoute(rq.Route); t != nil {
		return t
	}
	return schema.PostTypes[0]
}

var writableStatuses = []string{"publish", "future", "draft", "pending", "private", "trash"}

// validate checks the parameters' types and enums (WordPress's argument validation, before
// permissions).
func (in *postInput) validate() error {
	if in.Status != nil && !contains(writableStatuses, *in.Status) {
		return schema.InvalidParam("status", "status is not one of publish, future, draft, pending, private, and trash.")
	}
	if in.CommentStatus != nil && *in.CommentStatus != "open" && *in.CommentStatus != "closed" {
		return schema.InvalidParam("comment_status", "comment_status is not one of open and closed.")
	}
	if in.PingStatus != nil && *in.PingStatus != "open" && *in.PingStatus != "closed" {
		return schema.InvalidParam("ping_status", "ping_status is not one of open and closed.")
	}
	if in.Format != nil && !contains(schema.PostFormats, *in.Format) {
		return schema.InvalidParam("format", "format is not one of standard, aside, chat, gallery, link, image, quote, status, video, and audio.")
	}
	if in.ItemType != nil && !contains([]string{"taxonomy", "post_type", "post_type_archive", "custom"}, *in.ItemType) {
		return schema.InvalidParam("type", "type is not one of taxonomy, post_type, post_type_archive, and custom.")
	}
	if in.Target != nil && *in.Target != "" && *in.Target != "_blank" {
		return schema.InvalidParam("target", "target is not one of _blank and .")
	}
	if in.Parent != nil && *in.Parent < 0 {
		return schema.InvalidParam("parent", "parent must be greater than or equal to 0")
	}
	if in.ObjectID != nil && *in.ObjectID < 0 {
		return schema.InvalidParam("object_id", "object_id must be greater than or equal to 0")
	}
	for name, d := range map[string]*string{"date": in.Date, "date_gmt": in.DateGMT} {
		if d != nil {
			if _, _, err := parseCMSDate(*d, time.UTC); err != nil {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Field: name, Message: "Invalid date.",
					Params: map[string]string{name: "Invalid date."}}
			}
		}
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

var cmsDate = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}(:?\d{2})?)?$`)

// parseCMSDate parses WordPress's date-time format (fractional seconds are dropped, as
// WordPress stores seconds). A value without a zone is in loc. It reports whether the value
// carried a zone.
func parseCMSDate(s string, loc *time.Location) (time.Time, bool, error) {
	m := cmsDate.FindStringSubmatch(s)
	invalid := schema.Invalid("date", "Invalid date.")
	if m == nil {
		return time.Time{}, false, invalid
	}
	base := m[1] + "-" + m[2] + "-" + m[3] + "T" + m[4] + ":" + m[5] + ":" + m[6]
	if m[8] == "" {
		t, err := time.ParseInLocation("2006-01-02T15:04:05", base, loc)
		if err != nil {
			return time.Time{}, false, invalid
		}
		return t, false, nil
	}
	zone := m[8]
	switch {
	case zone == "Z":
	case len(zone) == 3: // +02
		zone += ":00"
	case !strings.Contains(zone, ":"): // +0200
		zone = zone[:3] + ":" + zone[3:]
	}
	t, err := time.Parse(time.RFC3339, base+zone)
	if err != nil {
		return time.Time{}, false, invalid
	}
	return t, true, nil
}

// cannot builds WordPress's 401-or-403 permission error.
func cannot(rq *handler.Request, code, msg string) *schema.Error {
	status := 401
	if rq.User != nil {
		status = 403
	}
	return &schema.Error{Code: schema.CodeForbidden, CMSCode: code, Message: msg, Status: status}
}

func can(rq *handler.Request, c schema.Capability) bool { return rq.User != nil && rq.User.Role.Can(c) }

// canEditSomeType is WordPress's "edit_posts, or the edit_posts capability of any post type
// shown in REST", which reading templates, the active theme and its styles needs (menus too: canReadMenus).
func canEditSomeType(rq *handler.Request) bool {
	if can(rq, schema.CapEditPosts) {
		return true
	}
	for _, t := range schema.PostTypes {
		if can(rq, t.Caps.Edit) {
			return true
		}
	}
	return false
}

// applyPost applies the input to p (a new post or a copy of the stored one), with WordPress's
// status and date rules, at the transaction's clock.
func applyPost(rq *handler.Request, now time.Time, in *postInput, p *schema.Post, old *schema.Post) {
	if in.Title != nil {
		p.Title = in.Title.Raw
	}
	if in.Content != nil {
		p.Content = in.Content.Raw
	}
	if in.Excerpt != nil {
		p.Excerpt = in.Excerpt.Raw
	}
	set(&p.Password, in.Password)
	set(&p.CommentStatus, in.CommentStatus)
	set(&p.PingStatus, in.PingStatus)
	set(&p.Format, in.Format)
	set(&p.Template, in.Template)
	set(&p.Sticky, in.Sticky)
	if in.Meta != nil {
		p.Meta = *in.Meta
	}
	if in.Author != nil {
		p.Author = schema.UserID(*in.Author)
	}
	if in.FeaturedMedia != nil {
		p.FeaturedMedia = schema.PostID(*in.FeaturedMedia)
	}
	if in.Categories != nil {
		p.Categories = termIDs(*in.Categories)
	}
	if in.Tags != nil {
		p.Tags = termIDs(*in.Tags)
	}
	if in.Parent != nil {
		p.Parent = schema.PostID(*in.Parent)
	}
	if in.MenuOrder != nil {
		p.MenuOrder = int(*in.MenuOrder)
	}
	if in.PatternCategories != nil {
		p.PatternCategories = termIDs(*in.PatternCategories)
	}
	if p.Type == "nav_menu_item" {
		mi := schema.MenuItem{Type: "custom"}
		if p.MenuItem != nil {
			mi = *p.MenuItem
		}
		set(&mi.Type, in.ItemType)
		set(&mi.URL, in.URL)
		set(&mi.AttrTitle, in.AttrTitle)
		set(&mi.Description, in.Description)
		set(&mi.Target, in.Target)
		set(&mi.Classes, in.Classes)
		set(&mi.XFN, in.XFN)
		set(&mi.Object, in.Object)
		if in.ObjectID != nil {
			mi.ObjectID = int64(*in.ObjectID)
		}
		if in.Menus != nil {
			mi.Menus = schema.TermID(*in.Menus)
		}
		p.MenuItem = &mi
	}
	if in.Status != nil {
		p.Status = schema.PostStatus(*in.Status)
	}
	// Dates: date (site time, or with a zone) wins over date_gmt.
	switch {
	case in.Date != nil:
		t, _, _ := parseCMSDate(*in.Date, rq.Location())
		p.DateGMT, p.DateFloating = t.UTC(), false
	case in.DateGMT != nil:
		t, zoned, _ := parseCMSDate(*in.DateGMT, time.UTC)
		if !zoned {
			t = t.UTC()
		}
		p.DateGMT, p.DateFloating = t.UTC(), false
	case old == nil:
		p.DateGMT, p.DateFloating = now, true
	}
	// A draft with a floating date takes "now" when it is published.
	if p.DateFloating && (p.Status == schema.StatusPublish || p.Status == schema.StatusFuture || p.Status == schema.StatusPrivate) {
		p.DateGMT, p.DateFloating = now, false
	}
	if p.DateFloating {
		p.DateGMT = now
	}
	// WordPress's future rule: a publish more than a minute ahead is scheduled; a schedule in the
	// past (or within the minute) publishes.
	switch {
	case p.Status == schema.StatusPublish && p.DateGMT.After(now.Add(time.Minute)):
		p.Status = schema.StatusFuture
	case p.Status == schema.StatusFuture && !p.DateGMT.After(now.Add(time.Minute)):
		p.Status = schema.StatusPublish
	}
	if in.Slug != nil {
		p.Slug = schema.Slugify(*in.Slug)
	}
	p.ModifiedGMT = now
}

// filterHTML filters the HTML a user without unfiltered_html writes, at write time, as
// WordPress's kses filters do for authors and contributors (decision 21): the title with the
// title policy (title_save_pre), the content, excerpt and footnotes with the post policy
// (content_save_pre, excerpt_save_pre, the footnotes meta); a menu item's description and
// attribute title are its content and excerpt. What is stored (raw) is the filtered text.
func (s *Server) filterHTML(rq *handler.Request, in *postInput) {
	if can(rq, schema.CapUnfilteredHTML) {
		return
	}
	for _, t := range []*handler.Text{in.Content, in.Excerpt} {
		if t != nil {
			t.Raw = s.kses.Post(t.Raw)
		}
	}
	if in.Title != nil {
		in.Title.Raw = s.kses.Title(in.Title.Raw)
	}
	for _, p := range []*string{in.Description, in.AttrTitle} {
		if p != nil {
			*p = s.kses.Post(*p)
		}
	}
	if in.Meta != nil {
		if f, ok := (*in.Meta)["footnotes"]; ok {
			meta := make(map[string]string, len(*in.Meta))
			for k, v := range *in.Meta {
				meta[k] = v
			}
			meta["footnotes"] = s.kses.Footnotes(f)
			in.Meta = &meta
		}
	}
}

func termIDs(ids []handler.Int) []schema.TermID {
	out := make([]schema.TermID, len(ids))
	for i, id := range ids {
		out[i] = schema.TermID(id)
	}
	return out
}

// checkPostPermissions applies WordPress's capability rules to a post about to be written.
func checkPostPermissions(rq *handler.Request, p, old *schema.Post, creating bool) error {
	caps := postType(rq).Caps
	verb := "create"
	if !creating {
		verb = "update"
	}
	if p.Author != rq.User.ID && !can(rq, caps.EditOthers) {
		return cannot(rq, "rest_cannot_edit_others", "Sorry, you are not allowed to "+verb+" posts as this user.")
	}
	publishing := p.Status == schema.StatusPublish || p.Status == schema.StatusFuture || p.Status == schema.StatusPrivate
	if publishing && (old == nil || old.Status != p.Status) && !can(rq, caps.Publish) {
		return cannot(rq, "rest_cannot_publish", "Sorry, you are not allowed to publish posts in this post type.")
	}
	if p.Sticky && (old == nil || !old.Sticky) && !(can(rq, caps.EditOthers) && can(rq, caps.Publish)) {
		return cannot(rq, "rest_cannot_assign_sticky", "Sorry, you are not allowed to make posts sticky.")
	}
	return nil
}

// canEditPost is WordPress's edit_post meta capability for an existing post.
func canEditPost(rq *handler.Request, p *schema.Post) bool {
	caps := postType(rq).Caps
	if !can(rq, caps.Edit) {
		return false
	}
	if p.Author != rq.User.ID && !can(rq, caps.EditOthers) {
		return false
	}
	if p.Status == schema.StatusPublish && !can(rq, caps.EditPublished) {
		return false
	}
	if p.Status == schema.StatusPrivate && !can(rq, caps.EditPrivate) {
		return false
	}
	return true
}

func canDeletePost(rq *handler.Request, p *schema.Post) bool {
	caps := postType(rq).Caps
	if !can(rq, caps.Delete) {
		return false
	}
	if p.Author != rq.User.ID && !can(rq, caps.DeleteOthers) {
		return false
	}
	if p.Status == schema.StatusPublish && !can(rq, caps.DeletePublished) {
		return false
	}
	if p.Status == schema.StatusPrivate && !can(rq, caps.DeletePrivate) {
		return false
	}
	return true
}

// finishPost checks what the stored post must satisfy: a known author, content, slug rules.
func finishPost(ctx context.Context, rq *handler.Request, tx *store.Tx, p *schema.Post, old *schema.Post) error {
	if _, err := tx.User(ctx, rq.Info, p.Author); err != nil {
		if schema.ErrorCode(err) == schema.CodeNotFound {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_author", Field: "author", Message: "Invalid author ID."}
		}
		return err
	}
	if p.Type == "post" && strings.TrimSpace(p.Title) == "" && strings.TrimSpace(p.Content) == "" && strings.TrimSpace(p.Excerpt) == "" {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "empty_content", Message: "Content, title, and excerpt are empty."}
	}
	if p.Sticky && p.Password != "" {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_field", Field: "sticky", Message: "A post can not be sticky and have a password."}
	}
	if err := checkTypeFields(ctx, rq, tx, p); err != nil {
		return err
	}
	if p.Slug == "" && (p.Status == schema.StatusPublish || p.Status == schema.StatusFuture || p.Status == schema.StatusPrivate) {
		p.Slug = schema.Slugify(p.Title)
		if p.Slug == "" {
			p.Slug = "post" // a title with nothing slug-worthy; uniqueness adds -2, -3…
		}
	}
	if p.Slug != "" && (old == nil || old.Slug != p.Slug) {
		slug, err := tx.UniquePostSlug(ctx, rq.Info, p.Type, p.Slug, p.ID)
		if err != nil {
			return err
		}
		p.Slug = slug
	}
	return nil
}

func (s *Server) postView(rq *handler.Request, p *schema.Post) any {
	st := schema.Site{Base: rq.Info.BaseURL, Loc: rq.Location()}
	allow := s.recordHints(context.Background(), rq, p, nil)(postType(rq).Item(p.ID)) // allow.go
	return schema.RenderRecord(p, schema.PostRender{Context: "edit", Unlocked: true, Allow: allow}, st)
}

func (s *Server) createPost(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in postInput
	err := handler.JSONBody(ctx, &in)
	if err == nil {
		err = in.validate()
	}
	if err == nil && in.ID != nil {
		err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_exists", Message: "Cannot create existing post."}
	}
	if err == nil && !can(rq, postType(rq).Caps.Edit) {
		err = cannot(rq, "rest_cannot_create", "Sorry, you are not allowed to create posts as this user.")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterHTML(rq, &in)
	embeds, setE := s.contentEmbeds(ctx, rq, &in) // bare URLs (embeds.go)
	var view any
	var id schema.PostID
	t := postType(rq)
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		p := newRecord(t, rq.User.ID)
		applyPost(rq, tx.Now(), &in, p, nil)
		setEmbeds(p, embeds, setE)
		if err := checkPostPermissions(rq, p, nil, true); err != nil {
			return err
		}
		if err := finishPost(ctx, rq, tx, p, nil); err != nil {
			return err
		}
		if err := tx.CreatePost(ctx, rq.Info, p); err != nil {
			return err
		}
		view, id = s.postView(rq, p), p.ID
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, schema.Site{Base: rq.Info.BaseURL}.RestURL(t.Item(id)))
	s.Written(ctx, rq, commits, fasthttp.StatusCreated, view)
}

var postNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_id", Message: "Invalid post ID."}

func (s *Server) loadPost(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx) (*schema.Post, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, postNotFound
	}
	p, err := tx.Post(ctx, rq.Info, schema.PostID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && p.Type != postType(rq).Name) {
		return nil, postNotFound
	}
	return p, err
}

func (s *Server) updatePost(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in postInput
	err := handler.JSONBody(ctx, &in)
	if err == nil {
		err = in.validate()
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.filterHTML(rq, &in)
	embeds, setE := s.contentEmbeds(ctx, rq, &in) // bare URLs (embeds.go)
	var view any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := s.loadPost(ctx, rq, tx)
		if err != nil {
			return err
		}
		if rq.User == nil || !canEditPost(rq, old) {
			return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
		}
		p := *old
		applyPost(rq, tx.Now(), &in, &p, old)
		setEmbeds(&p, embeds, setE)
		if err := checkPostPermissions(rq, &p, old, false); err != nil {
			return err
		}
		if err := finishPost(ctx, rq, tx, &p, old); err != nil {
			return err
		}
		if err := keepRevision(ctx, rq, tx, &p); err != nil {
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, old, &p); err != nil {
			return err
		}
		view = s.postView(rq, &p)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, view)
}

func (s *Server) deletePost(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	force := args.Bool("force")
	var out any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := s.loadPost(ctx, rq, tx)
		if err != nil {
			return err
		}
		if rq.User == nil || !canDeletePost(rq, old) {
			return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete this post.")
		}
		if force {
			if _, err := tx.DeletePost(ctx, rq.Info, old.ID); err != nil {
				return err
			}
			out = map[string]any{"deleted": true, "previous": s.postView(rq, old)}
			return nil
		}
		if !postType(rq).Trash { // menu items
			return &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: 501,
				Message: "Menu items do not support trashing. Set 'force=true' to delete."}
		}
		if old.Status == schema.StatusTrash {
			return &schema.Error{Code: schema.CodeGone, CMSCode: "rest_already_trashed", Message: "The post has already been deleted."}
		}
		p := *old
		p.Status = schema.StatusTrash
		if p.Slug != "" {
			p.Slug += "__trashed"
		}
		p.ModifiedGMT = tx.Now()
		if err := keepRevision(ctx, rq, tx, &p); err != nil { // trashing is an update too
			return err
		}
		if err := tx.UpdatePost(ctx, rq.Info, old, &p); err != nil {
			return err
		}
		out = s.postView(rq, &p)
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, out)
}
