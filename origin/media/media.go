package media

import (
	"context"
	"log/slog"
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/origin/handler"
	"vitrine/origin/kses"
	"vitrine/origin/media/imaging"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// Defaults of Config.
const (
	// DefaultMaxUploadBytes bounds an uploaded file: 32 MiB (the edges' upload limit too).
	DefaultMaxUploadBytes = 32 << 20
	// DefaultSizeTimeout bounds the time an upload or an edit spends making sub-sizes; the
	// sizes not made by then are left to post-process.
	DefaultSizeTimeout = 30 * time.Second
	// DefaultPostProcessTimeout bounds the time post-process spends making sub-sizes.
	DefaultPostProcessTimeout = 2 * time.Minute
	// MaxFormOverhead is what a multipart body may hold beyond its file: the other fields and
	// the parts' headers (UploadBodyLimit).
	MaxFormOverhead = 1 << 20
)

// Config configures the media handlers. Zero values mean the defaults.
type Config struct {
	// Blobs stores the media files. Without one, the write routes answer 503: the commands
	// always name one (vitrine dev: a directory; vitrine origin: a JetStream bucket).
	Blobs blob.Store
	// MaxUploadBytes bounds an uploaded file (DefaultMaxUploadBytes). The HTTP server's body
	// limit for the upload route must allow UploadBodyLimit(MaxUploadBytes).
	MaxUploadBytes int64
	// MaxPixels bounds an image's width × height (imaging.DefaultMaxPixels).
	MaxPixels int64
	// Budget bounds the memory of image processing across requests (imaging.NewBudget's
	// defaults: 1 GiB, a 10 s wait).
	Budget *imaging.Budget
	// SizeTimeout and PostProcessTimeout bound the making of sub-sizes (DefaultSizeTimeout,
	// DefaultPostProcessTimeout).
	SizeTimeout, PostProcessTimeout time.Duration
	// Logger receives what fails after a commit (a blob that could not be deleted).
	Logger *slog.Logger
	// Client fetches the images of uploads by URL (the url argument): the process's one
	// outbound client (decision 19). Without one, such uploads answer 503.
	Client *outbound.Client
	// SideloadAllowlist, when set, is the only addresses an upload by URL may fetch from
	// (outbound.CallOptions.Allowlist): for tests and closed deployments. Empty: any public
	// address, never a private one.
	SideloadAllowlist []netip.Prefix
}

func (c Config) withDefaults() Config {
	if c.MaxUploadBytes <= 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = imaging.DefaultMaxPixels
	}
	if c.Budget == nil {
		c.Budget = imaging.NewBudget(0, 0)
	}
	if c.SizeTimeout <= 0 {
		c.SizeTimeout = DefaultSizeTimeout
	}
	if c.PostProcessTimeout <= 0 {
		c.PostProcessTimeout = DefaultPostProcessTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// UploadBodyLimit is the request body an upload of a file of maxFile bytes may need: the file
// and a multipart form's overhead.
func UploadBodyLimit(maxFile int64) int64 {
	if maxFile <= 0 {
		maxFile = DefaultMaxUploadBytes
	}
	return maxFile + MaxFormOverhead
}

// Posts is what the media handlers borrow from the origin's post writes (package origin, which
// they may not import).
type Posts struct {
	// View renders a stored record as the answer of a write: the edit context, with the
	// targetHints of its links.
	View func(rq *handler.Request, p *schema.Post) any
	// ParseDate parses WordPress's date-time format; a value without a zone is in loc, and
	// zoned says whether it had one.
	ParseDate func(s string, loc *time.Location) (t time.Time, zoned bool, err error)
}

// Service answers the media write routes. It is safe for concurrent use.
type Service struct {
	resp  *handler.Responder
	db    *store.DB
	posts Posts
	kses  *kses.Filter
	cfg   Config
}

// New returns the media service writing db and cfg.Blobs. kf filters the HTML of users without
// unfiltered_html (the caption and description), as for posts.
func New(r *handler.Responder, db *store.DB, posts Posts, kf *kses.Filter, cfg Config) *Service {
	return &Service{resp: r, db: db, posts: posts, kses: kf, cfg: cfg.withDefaults()}
}

// Bind binds the media write routes (schema/routes_media.go). The read routes (cms.media.list,
// cms.media.get) are answered by the read engine like every post type's.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("cms.media.create", s.create)
	t.Bind("cms.media.update", s.update)
	t.Bind("cms.media.delete", s.delete)
	t.Bind("cms.media.postprocess", s.postProcess)
	t.Bind("cms.media.edit", s.edit)
}

// limits are the imaging limits of the service.
func (s *Service) limits() imaging.Limits {
	return imaging.Limits{MaxPixels: s.cfg.MaxPixels, MaxBytes: s.cfg.MaxUploadBytes}
}

var (
	errNoStore = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_upload_unavailable", RetryAfter: 60,
		Message: "Media storage is not configured on this server."}
	errStore = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_upload_unavailable", RetryAfter: 5,
		Message: "The media storage is not available; try again shortly."}
	postNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_id", Message: "Invalid post ID."}
	badParent    = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Field: "post", Message: "Invalid parent type."}
)

// cannot builds WordPress's 401-or-403 permission error.
func cannot(rq *handler.Request, code, msg string) *schema.Error {
	status := fasthttp.StatusUnauthorized
	if rq.User != nil {
		status = fasthttp.StatusForbidden
	}
	return &schema.Error{Code: schema.CodeForbidden, CMSCode: code, Message: msg, Status: status}
}

func can(rq *handler.Request, c schema.Capability) bool { return rq.User != nil && rq.User.Role.Can(c) }

// canEdit is WordPress's edit_post meta capability on a stored record, with its own type's
// capabilities (an attachment's, or its parent's).
func canEdit(rq *handler.Request, p *schema.Post) bool {
	t := schema.PostTypeByName(p.Type)
	if t == nil || rq.User == nil {
		return false
	}
	caps := t.Caps
	switch {
	case !can(rq, caps.Edit):
		return false
	case p.Author != rq.User.ID && !can(rq, caps.EditOthers):
		return false
	case p.Status == schema.StatusPublish && !can(rq, caps.EditPublished):
		return false
	case p.Status == schema.StatusPrivate && !can(rq, caps.EditPrivate):
		return false
	}
	return true
}

// canDelete is WordPress's delete_post meta capability on an attachment.
func canDelete(rq *handler.Request, p *schema.Post) bool {
	caps := schema.PostTypeByName(schema.TypeAttachment).Caps
	if rq.User == nil || !can(rq, caps.Delete) {
		return false
	}
	if p.Author != rq.User.ID && !can(rq, caps.DeleteOthers) {
		return false
	}
	return p.Status != schema.StatusPrivate || can(rq, caps.DeletePrivate)
}

// loadAttachment reads the attachment of the request's id in tx: WordPress's 404 for anything
// that is not an attachment of the store.
func loadAttachment(ctx context.Context, rq *handler.Request, tx *store.Tx, rawID string) (*schema.Post, error) {
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil || id <= 0 || id > schema.MaxExposedID {
		return nil, postNotFound
	}
	p, err := tx.Post(ctx, rq.Info, schema.PostID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && (p.Type != schema.TypeAttachment || p.Attachment == nil)) {
		return nil, postNotFound
	}
	return p, err
}

// answer renders an attachment as a write's answer, with its Location (201) when created.
func (s *Service) answer(ctx *fasthttp.RequestCtx, rq *handler.Request, commits []store.LogCommit, status int, p *schema.Post) {
	if status == fasthttp.StatusCreated {
		ctx.Response.Header.Set(fasthttp.HeaderLocation, schema.Site{Base: rq.Info.BaseURL}.RestURL(schema.PostTypeByName(schema.TypeAttachment).Item(p.ID)))
	}
	s.resp.Written(ctx, rq, commits, status, s.posts.View(rq, p))
}
