package media

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/media/imaging"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Edit refusals, with WordPress's codes and messages.
var (
	errUnknownAttachment = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_unknown_attachment", Message: "Unable to get meta information for file."}
	errNotEditable       = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_cannot_edit_file_type", Message: "This type of file cannot be edited."}
	errNotEdited         = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_image_not_edited", Message: "The image was not edited. Edit the image before applying the changes."}
)

// missing is WordPress's rest_missing_callback_param for one required argument.
func missing(name string) *schema.Error {
	return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: name, Message: "Missing parameter(s): " + name}
}

// editInput is the body of POST /cms/v2/media/{id}/edit (WordPress's get_edit_media_item_args):
// the source file, the modifiers (or the deprecated rotation, x, y, width, height and flip),
// and the fields of the new attachment.
type editInput struct {
	Src       *string          `json:"src"`
	Modifiers *[]editModifier  `json:"modifiers"`
	Rotation  *json.Number     `json:"rotation"`
	X         *float64         `json:"x"`
	Y         *float64         `json:"y"`
	Width     *float64         `json:"width"`
	Height    *float64         `json:"height"`
	Flip      *map[string]bool `json:"flip"`
	Caption   *handler.Text    `json:"caption"`
	Desc      *handler.Text    `json:"description"`
	Title     *handler.Text    `json:"title"`
	Post      *handler.Int     `json:"post"`
	AltText   *string          `json:"alt_text"`
}

// editModifier is one item of modifiers: {"type": "flip"|"rotate"|"crop", "args": {…}}.
type editModifier struct {
	Type *string         `json:"type"`
	Args json.RawMessage `json:"args"`
}

// decodeEdit reads the edit's JSON body (or, without one, its query string for src and the
// deprecated arguments) and validates it as WordPress's schema does.
func decodeEdit(ctx *fasthttp.RequestCtx) (*editInput, []imaging.Modifier, error) {
	var in editInput
	if len(bytes.TrimSpace(ctx.Request.Body())) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			return nil, nil, err
		}
	}
	q := pipeline.Query(ctx)
	if in.Src == nil {
		if v, ok := q("src"); ok {
			in.Src = &v
		}
	}
	for name, dst := range map[string]**float64{"x": &in.X, "y": &in.Y, "width": &in.Width, "height": &in.Height} {
		if v, ok := q(name); ok && *dst == nil {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, nil, schema.InvalidParam(name, name+" is not of type number.")
			}
			*dst = &f
		}
	}
	if v, ok := q("rotation"); ok && in.Rotation == nil {
		n := json.Number(v)
		in.Rotation = &n
	}
	if in.Src == nil {
		return nil, nil, missing("src")
	}
	var mods []imaging.Modifier
	if in.Modifiers != nil {
		if len(*in.Modifiers) == 0 {
			return nil, nil, schema.InvalidParam("modifiers", "modifiers must contain at least 1 item.")
		}
		for i, m := range *in.Modifiers {
			mod, err := parseModifier(m)
			if err != nil {
				return nil, nil, schema.InvalidParam("modifiers", fmt.Sprintf("modifiers[%d] does not match any of the expected formats: %s", i, err))
			}
			mods = append(mods, mod)
		}
		return &in, mods, nil
	}
	var flip imaging.Flip
	if in.Flip != nil {
		flip = imaging.Flip{Horizontal: (*in.Flip)["horizontal"], Vertical: (*in.Flip)["vertical"]}
	}
	var rotation float64
	if in.Rotation != nil {
		r, err := in.Rotation.Int64()
		if err != nil {
			return nil, nil, schema.InvalidParam("rotation", "rotation is not of type integer.")
		}
		if r <= 0 || r >= 360 {
			return nil, nil, schema.InvalidParam("rotation", "rotation must be between 0 (exclusive) and 360 (exclusive)")
		}
		rotation = float64(r)
	}
	for name, v := range map[string]*float64{"x": in.X, "y": in.Y, "width": in.Width, "height": in.Height} {
		if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 100) {
			return nil, nil, schema.InvalidParam(name, name+" must be between 0 (inclusive) and 100 (inclusive)")
		}
	}
	var crop *imaging.Crop
	if in.X != nil && in.Y != nil && in.Width != nil && in.Height != nil {
		crop = &imaging.Crop{Left: *in.X, Top: *in.Y, Width: *in.Width, Height: *in.Height}
	}
	return &in, imaging.LegacyModifiers(flip, rotation, crop), nil
}

// parseModifier reads one modifier, each kind with its required arguments.
func parseModifier(m editModifier) (imaging.Modifier, error) {
	if m.Type == nil || len(m.Args) == 0 {
		return nil, fmt.Errorf("type and args are required")
	}
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(m.Args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("args do not fit %s", *m.Type)
		}
		return nil
	}
	switch *m.Type {
	case "flip":
		var a struct {
			Flip *struct {
				Horizontal *bool `json:"horizontal"`
				Vertical   *bool `json:"vertical"`
			} `json:"flip"`
		}
		if err := strict(&a); err != nil || a.Flip == nil || a.Flip.Horizontal == nil || a.Flip.Vertical == nil {
			return nil, fmt.Errorf("flip needs args.flip.horizontal and args.flip.vertical")
		}
		return imaging.Flip{Horizontal: *a.Flip.Horizontal, Vertical: *a.Flip.Vertical}, nil
	case "rotate":
		var a struct {
			Angle *float64 `json:"angle"`
		}
		if err := strict(&a); err != nil || a.Angle == nil {
			return nil, fmt.Errorf("rotate needs args.angle")
		}
		return imaging.Rotate{Angle: *a.Angle}, nil
	case "crop":
		var a struct {
			Left, Top, Width, Height *float64
		}
		if err := strict(&a); err != nil || a.Left == nil || a.Top == nil || a.Width == nil || a.Height == nil {
			return nil, fmt.Errorf("crop needs args.left, args.top, args.width and args.height")
		}
		return imaging.Crop{Left: *a.Left, Top: *a.Top, Width: *a.Width, Height: *a.Height}, nil
	}
	return nil, fmt.Errorf("type is not one of flip, rotate and crop")
}

// edit answers POST /cms/v2/media/{id}/edit: the modifiers applied to the attachment's original
// make a new attachment (the source is untouched), named "<stem>-edited", with the source's
// texts unless given, parent_image naming the source, and its sub-sizes; 201 with Location.
func (s *Service) edit(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	start := time.Now()
	in, mods, err := decodeEdit(ctx)
	if err == nil && !can(rq, schema.CapUploadFiles) {
		err = cannot(rq, "rest_cannot_edit_image", "Sorry, you are not allowed to upload media on this site.")
	}
	var src *schema.Post
	if err == nil {
		src, err = store.TxValue(ctx, s.db, func(tx *store.Tx) (*schema.Post, error) {
			return loadAttachment(ctx, rq, tx, pipeline.Param(ctx, "id"))
		})
	}
	if err == nil && !canEdit(rq, src) {
		err = cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
	}
	if err == nil && !matchesFile(*in.Src, src.Attachment) {
		err = errUnknownAttachment
	}
	if err == nil && !imaging.IsImage(src.Attachment.MimeType) {
		err = errNotEditable
	}
	if err == nil && len(mods) == 0 {
		err = errNotEdited
	}
	if err == nil && in.Post != nil && *in.Post != 0 {
		err = s.checkParent(ctx, rq, schema.PostID(*in.Post))
	}
	if err == nil && s.cfg.Blobs == nil {
		err = errNoStore
	}
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	base, ext := storedBase(src.Attachment)
	st, err := s.editImage(ctx, rq, base+"."+ext, src.Attachment.MimeType, mods, start.Add(s.cfg.SizeTimeout))
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	fields := &input{Title: in.Title, Caption: in.Caption, Description: in.Desc, AltText: in.AltText, Post: in.Post}
	s.filterHTML(rq, fields)
	p, commits, err := s.store(ctx, rq, fields, st, editedStem(base), "", &editSource{post: src, file: base + "." + ext})
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(HeaderAttachmentID, strconv.FormatInt(int64(p.ID), 10))
	if !st.complete {
		setWriteVersion(ctx, rq, commits)
		s.resp.Fail(ctx, rq, errIncomplete)
		return
	}
	s.answer(ctx, rq, commits, fasthttp.StatusCreated, p)
}

// editImage reads the original file, applies the modifiers under the memory budget (twice the
// original's cost: a turned canvas grows) and prepares the result.
func (s *Service) editImage(ctx context.Context, rq *handler.Request, file, mime string, mods []imaging.Modifier, deadline time.Time) (*stored, error) {
	data, err := s.read(ctx, rq.Info, file)
	if err != nil {
		return nil, err
	}
	lim := s.limits()
	info, err := imaging.Probe(data, lim)
	if err != nil {
		return nil, editError(err)
	}
	release, err := s.cfg.Budget.Acquire(ctx, 2*info.Cost())
	if err != nil {
		return nil, editError(err)
	}
	defer release()
	img, err := imaging.DecodeBytes(data, lim)
	if err != nil {
		return nil, editError(err)
	}
	if img, err = imaging.Apply(img, mods); err != nil {
		return nil, editError(err)
	}
	st, err := prepareEdited(img, mime, imaging.ImageMeta{}, deadline)
	if err != nil {
		return nil, editError(err)
	}
	return st, nil
}

// read reads a stored file of the tenant whole (at most MaxUploadBytes).
func (s *Service) read(ctx context.Context, t *schema.Tenant, file string) ([]byte, error) {
	obj, err := s.cfg.Blobs.Open(ctx, schema.MediaBlobName(t.ID, file), 0)
	if err != nil {
		s.cfg.Logger.Warn("media: stored file unreadable", "tenant", t.Slug, "file", file, "err", err)
		return nil, errStore
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, s.cfg.MaxUploadBytes+1))
	if err != nil {
		return nil, errStore
	}
	return data, nil
}

// editError maps imaging errors of an edit: bad modifiers are the client's (400), a busy budget
// a 503; a stored file that no longer decodes is an internal error.
func editError(err error) error {
	switch imaging.KindOf(err) {
	case imaging.KindInvalidEdit:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Field: "modifiers", Message: schema.AsError(err).Message + ".",
			Params: map[string]string{"modifiers": schema.AsError(err).Message + "."}}
	case imaging.KindBusy:
		e := *schema.AsError(err)
		e.CMSCode = "rest_upload_busy"
		return &e
	case imaging.KindTooLarge:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_image_too_large", Message: "The edited image would be too large: " + schema.AsError(err).Message + "."}
	case 0:
		return err
	}
	return fmt.Errorf("media: edit: %w", err)
}

var editedSuffix = regexp.MustCompile(`-edited(-[0-9]+)?$`)

// editedStem is WordPress's name of an edited image: "-edited" appended once ("photo" →
// "photo-edited", "photo-edited-2" → "photo-edited").
func editedStem(base string) string {
	stem := stemOfStored(base + ".x")
	if editedSuffix.MatchString(stem) {
		return editedSuffix.ReplaceAllString(stem, "-edited")
	}
	if len(stem) > maxStemLen {
		stem = stem[:maxStemLen]
	}
	return stem + "-edited"
}

// matchesFile reports whether src is the URL (or path) of one of the attachment's files: its
// file, its original, or a sub-size (WordPress's wp_image_file_matches_image_meta).
func matchesFile(src string, a *schema.Attachment) bool {
	u, err := url.Parse(strings.TrimSpace(src))
	if err != nil {
		return false
	}
	p := u.Path
	if i := strings.Index(p, schema.UploadsPath); i >= 0 {
		p = p[i+len(schema.UploadsPath):]
	} else {
		return false
	}
	if p == a.File || (a.Original != nil && p == a.Original.File) {
		return true
	}
	for _, z := range a.Sizes {
		if p == z.File {
			return true
		}
	}
	return false
}

// postProcess answers POST /cms/v2/media/{id}/post-process with action create-image-subsizes:
// the sub-sizes the attachment lacks are made (from its file, judged on its original), written
// and recorded; 200 with the attachment in the edit context. Permission: as for an update.
func (s *Service) postProcess(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	start := time.Now()
	var body struct {
		Action *string `json:"action"`
	}
	var err error
	if len(bytes.TrimSpace(ctx.Request.Body())) > 0 {
		err = handler.JSONBody(ctx, &body)
	}
	if err == nil && body.Action == nil {
		if v, ok := pipeline.Query(ctx)("action"); ok {
			body.Action = &v
		}
	}
	switch {
	case err != nil:
	case body.Action == nil:
		err = missing("action")
	case *body.Action != "create-image-subsizes":
		err = schema.InvalidParam("action", "action is not create-image-subsizes.")
	}
	var p *schema.Post
	if err == nil {
		p, err = store.TxValue(ctx, s.db, func(tx *store.Tx) (*schema.Post, error) {
			return loadAttachment(ctx, rq, tx, pipeline.Param(ctx, "id"))
		})
	}
	if err == nil && !canEdit(rq, p) {
		err = cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
	}
	if err == nil && s.cfg.Blobs == nil {
		err = errNoStore
	}
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	if len(p.Attachment.MissingSizes()) == 0 {
		s.resp.Written(ctx, rq, nil, fasthttp.StatusOK, s.posts.View(rq, p))
		return
	}
	p, commits, err := s.makeMissing(ctx, rq, p, start.Add(s.cfg.PostProcessTimeout))
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	s.answer(ctx, rq, commits, fasthttp.StatusOK, p)
}

// makeMissing makes the sub-sizes p lacks, writes them under claimed names and records them in
// a transaction that reads the attachment again (sizes recorded meanwhile are kept).
func (s *Service) makeMissing(ctx context.Context, rq *handler.Request, p *schema.Post, deadline time.Time) (*schema.Post, []store.LogCommit, error) {
	a := p.Attachment
	data, err := s.read(ctx, rq.Info, a.File)
	if err != nil {
		return nil, nil, err
	}
	lim := s.limits()
	info, err := imaging.Probe(data, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("media: post-process %d: %w", p.ID, err)
	}
	release, err := s.cfg.Budget.Acquire(ctx, info.Cost())
	if err != nil {
		return nil, nil, editError(err)
	}
	img, err := imaging.DecodeBytes(data, lim)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("media: post-process %d: %w", p.ID, err)
	}
	origW, origH := a.Width, a.Height
	if a.Original != nil {
		origW, origH = a.Original.Width, a.Original.Height
	}
	made, _ := makeSizes(img, a.MimeType, origW, origH, a.Sizes, deadline)
	release()
	if len(made) == 0 {
		return p, nil, nil
	}
	base, ext := storedBase(a)
	have := map[string]bool{}
	for _, z := range a.Sizes {
		have[z.File] = true
	}
	st := &stored{mime: a.MimeType}
	for _, z := range made {
		if !have[sizeName(base, ext, z.w, z.h)] {
			st.sizes = append(st.sizes, z)
		}
	}
	var files []blobFile
	if len(st.sizes) > 0 {
		files, err = s.claimAndPut(ctx, rq, 1, func(int) []blobFile { return st.sizeFiles(base, ext) })
		if err != nil {
			return nil, nil, err
		}
	}
	var out *schema.Post
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadAttachment(ctx, rq, tx, strconv.FormatInt(int64(p.ID), 10))
		if err != nil {
			return err
		}
		n := *old
		na := *old.Attachment
		addSizes(&na, base, ext, made)
		n.Attachment = &na
		if err := tx.UpdatePost(ctx, rq.Info, old, &n); err != nil {
			return err
		}
		out = &n
		return tx.BindMediaFiles(ctx, rq.Info, n.ID, names(files))
	})
	if err != nil {
		s.afterFailedWrite(ctx, rq.Info, files, err)
		return nil, nil, err
	}
	return out, commits, nil
}
