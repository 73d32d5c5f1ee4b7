package media

import (
	"context"
	"encoding/json"
	"net/url"
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

// errIncomplete is the answer to an upload stored without all its sub-sizes (WordPress's
// rest_upload_unknown_error after a fatal error in wp_generate_attachment_metadata): the client
// finishes them with post-process, on the id of X-WP-Upload-Attachment-ID.
var errIncomplete = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_upload_unknown_error", Status: fasthttp.StatusInternalServerError,
	Message: "The file was uploaded, but not all of its image sub-sizes could be made. Make the missing ones with post-process (action create-image-subsizes)."}

// HeaderAttachmentID names the attachment an upload or an edit stored, also on its 500 answer
// (WordPress's X-WP-Upload-Attachment-ID).
const HeaderAttachmentID = "X-WP-Upload-Attachment-ID"

// create answers POST /cms/v2/media: an upload, raw or multipart, in WordPress's order:
// parameters, permissions, the file, then the attachment.
func (s *Service) create(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	start := time.Now()
	body := ctx.Request.Body()
	var up *upload
	var upErr error
	var fields map[string]string // a form's fields, or a JSON body's (an upload by URL)
	ctype := string(ctx.Request.Header.ContentType())
	if boundary, ok := isMultipart(ctype); ok {
		if up, upErr = readForm(body, boundary, s.cfg.MaxUploadBytes); up != nil {
			fields = up.fields
		}
	} else if isJSON(ctype) {
		fields = jsonFields(body)
	}
	query := pipeline.Query(ctx)
	get := func(name string) (string, bool) {
		if v, ok := fields[name]; ok {
			return v, true
		}
		return query(name)
	}
	var fromURL *url.URL
	var urlName string
	in, err := inputFromParams(get)
	if raw, ok := get("url"); err == nil && ok && raw != "" {
		fromURL, urlName, err = checkSideloadURL(raw)
	}
	if err == nil {
		err = in.validate(s.posts.ParseDate)
	}
	generate := true
	if err == nil {
		generate, err = boolParam(get, "generate_sub_sizes", true)
	}
	if err == nil {
		err = s.createPermission(ctx, rq, in)
	}
	if err == nil && s.cfg.Blobs == nil {
		err = errNoStore
	}
	if err == nil && fromURL != nil {
		up, upErr = nil, nil
		if data, err := s.sideload(ctx, fromURL); err != nil {
			upErr = err
		} else {
			up = &upload{data: data, filename: urlName}
		}
	} else if err == nil && up == nil && upErr == nil {
		up, upErr = readRaw(body, ctype, peekAll(ctx, "Content-Disposition"),
			string(ctx.Request.Header.Peek("Content-MD5")), s.cfg.MaxUploadBytes)
	}
	if err == nil && upErr != nil {
		err = upErr
	}
	if err == nil && up.multipart && fromURL == nil {
		err = checkMD5(up.data, string(ctx.Request.Header.Peek("Content-MD5")))
	}
	if err != nil {
		s.resp.Fail(ctx, rq, err)
		return
	}
	sniff := imaging.Sniff
	if fromURL != nil {
		sniff = sideloadType
	}
	mime, err := sniff(up.data)
	var st *stored
	if err == nil {
		st, err = s.prepare(ctx, up.data, mime, generate, start.Add(s.cfg.SizeTimeout))
	}
	if err != nil {
		s.resp.Fail(ctx, rq, uploadError(err, up.multipart, s.cfg.MaxUploadBytes))
		return
	}
	s.filterHTML(rq, in)
	p, commits, err := s.store(ctx, rq, in, st, Stem(up.filename), up.filename, nil)
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

// createPermission is WordPress's create_item_permissions_check for attachments: the id, the
// author, upload_files (the attachment type's create_posts), and the right to edit the post the
// upload is attached to, which must not be an attachment itself.
func (s *Service) createPermission(ctx context.Context, rq *handler.Request, in *input) error {
	if in.ID != nil {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_exists", Message: "Cannot create existing post."}
	}
	caps := schema.PostTypeByName(schema.TypeAttachment).Caps
	if in.Author != nil && (rq.User == nil || schema.UserID(*in.Author) != rq.User.ID) && !can(rq, caps.EditOthers) {
		return cannot(rq, "rest_cannot_edit_others", "Sorry, you are not allowed to create posts as this user.")
	}
	if !can(rq, schema.CapUploadFiles) {
		return cannot(rq, "rest_cannot_create", "Sorry, you are not allowed to create posts as this user.")
	}
	if in.Post != nil && *in.Post != 0 {
		if err := s.checkParent(ctx, rq, schema.PostID(*in.Post)); err != nil {
			return err
		}
	}
	if in.publishes() && !can(rq, caps.Publish) {
		if *in.Status == "private" {
			return cannot(rq, "rest_cannot_publish", "Sorry, you are not allowed to create private posts in this post type.")
		}
		return cannot(rq, "rest_cannot_publish", "Sorry, you are not allowed to publish posts in this post type.")
	}
	return nil
}

// checkParent checks the post an attachment is attached to: one the caller may edit (WordPress:
// rest_cannot_edit, also for a post that does not exist), and not an attachment.
func (s *Service) checkParent(ctx context.Context, rq *handler.Request, id schema.PostID) error {
	parent, err := store.TxValue(ctx, s.db, func(tx *store.Tx) (*schema.Post, error) { return tx.Post(ctx, rq.Info, id) })
	if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && !canEdit(rq, parent)) {
		return cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to upload media to this post.")
	}
	if err != nil {
		return err
	}
	if parent.Type == schema.TypeAttachment {
		return badParent
	}
	return nil
}

// boolParam reads a boolean parameter as WordPress does (true, false, 1, 0).
func boolParam(get func(string) (string, bool), name string, def bool) (bool, error) {
	v, ok := get(name)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1":
		return true, nil
	case "false", "0", "":
		return false, nil
	}
	return false, schema.InvalidParam(name, name+" is not of type boolean.")
}

// isJSON reports whether a Content-Type is JSON's.
func isJSON(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// jsonFields reads the parameters of a JSON body (an upload by URL, as api-fetch sends it):
// strings as they are, numbers and booleans as written, {"raw": …} objects as their raw text.
// A body that is not a JSON object gives none.
func jsonFields(body []byte) map[string]string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var str string
		var obj struct {
			Raw *string `json:"raw"`
		}
		switch {
		case json.Unmarshal(v, &str) == nil:
			out[k] = str
		case json.Unmarshal(v, &obj) == nil && obj.Raw != nil:
			out[k] = *obj.Raw
		case len(v) > 0 && v[0] != '{' && v[0] != '[' && string(v) != "null":
			out[k] = string(v)
		}
	}
	return out
}

func peekAll(ctx *fasthttp.RequestCtx, name string) []string {
	var out []string
	for _, v := range ctx.Request.Header.PeekAll(name) {
		out = append(out, string(v))
	}
	return out
}

// uploadError maps a refusal of the file's content to WordPress's codes: a type refused by
// sniffing, or a file that does not decode, is rest_upload_sideload_error (a raw body) or
// rest_upload_unknown_error (a form), as wp_handle_sideload's and wp_handle_upload's errors are,
// but a 400, not WordPress's 500: it is the client's input. Too many pixels is
// rest_upload_file_too_big; a full processing budget is a 503 with Retry-After.
func uploadError(err error, multipart bool, max int64) error {
	code := "rest_upload_sideload_error"
	if multipart {
		code = "rest_upload_unknown_error"
	}
	switch imaging.KindOf(err) {
	case imaging.KindUnsupported:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: code, Message: "Sorry, you are not allowed to upload this file type."}
	case imaging.KindCorrupt, imaging.KindInvalidEdit:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: code, Message: "The file could not be read as the image it claims to be: " + schema.AsError(err).Message + "."}
	case imaging.KindTooLarge:
		e := tooBig(max)
		e.Message = "This image is too large: " + schema.AsError(err).Message + "."
		return e
	case imaging.KindBusy:
		e := *schema.AsError(err)
		e.CMSCode = "rest_upload_busy"
		return &e
	}
	return err
}
