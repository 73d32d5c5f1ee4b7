package origin

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// The write body of templates and template parts (and of their autosaves): WordPress's
// endpoint arguments of the templates controller's schema, validated as WordPress validates
// them (every invalid argument named in one 400 rest_invalid_param, a missing slug on create
// 400 rest_missing_callback_param) before permissions. Read-only members a client sends back
// (id, source, cms_id, …) and members the schema does not know are ignored, as WordPress
// ignores them; source "theme" is read all the same (it reverts a customised template).

// templateText is a template's title or content: a string, or an object whose raw is a string.
// Set says whether it sets the field: a string, an object with raw (for a title, a non-empty
// raw), as WordPress's prepare_item_for_database reads them.
type templateText struct {
	Raw string
	Set bool
}

// templateInput is a decoded template write.
type templateInput struct {
	// slug is the slug a creation asks for, sanitised (WordPress's sanitize_title).
	slug        string
	Theme       *string
	Title       *templateText
	Content     *templateText
	Description *string
	Author      *int64
	// Area is a template part's area as sent; apply files an unknown one as uncategorized.
	Area *string
	// Source "theme" reverts an update to the theme file.
	Source string
}

// templateSlugClass is the slug pattern as WordPress applies it: unanchored.
var templateSlugClass = regexp.MustCompile(schema.TemplateSlugPattern)

// decodeTemplate reads and validates a template write body (a JSON object; an empty body is an
// empty one). creating requires slug.
func decodeTemplate(ctx *fasthttp.RequestCtx, rq *handler.Request, creating bool) (*templateInput, error) {
	body := bytes.TrimSpace(ctx.Request.Body())
	if ct := ctx.Request.Header.ContentType(); len(body) > 0 && len(ct) > 0 && !isJSONContent(ct) {
		return nil, &schema.Error{Code: schema.CodeUnsupported, Message: "request body must be application/json"}
	}
	in, err := parseTemplateBody(body, postType(rq).Name == schema.TypeTemplatePart, creating)
	if err != nil {
		return nil, err
	}
	if in.Source == "" {
		in.Source = string(ctx.QueryArgs().Peek("source"))
	}
	return in, nil
}

// parseTemplateBody is decodeTemplate's pure part: body is the request's JSON (possibly empty);
// part says whether area is an argument (template parts).
func parseTemplateBody(body []byte, part, creating bool) (*templateInput, error) {
	var obj map[string]json.RawMessage
	if len(body) > 0 {
		if err := json.Unmarshal(body, &obj); err != nil {
			if !json.Valid(body) {
				return nil, handler.SyntaxError(body)
			}
			obj = nil // a JSON value that is not an object carries no parameters (WordPress)
		}
	}
	in := &templateInput{}
	if _, ok := obj["slug"]; creating && !ok {
		return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "slug",
			Message: "Missing parameter(s): slug"}
	}
	bad := map[string]string{}
	str := func(name string) *string {
		raw, ok := obj[name]
		if !ok {
			return nil
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			bad[name] = name + " is not of type string."
			return nil
		}
		return &s
	}
	if s := str("slug"); s != nil {
		switch {
		case *s == "":
			bad["slug"] = "slug must be at least 1 character long."
		case !templateSlugClass.MatchString(*s):
			bad["slug"] = "slug does not match pattern " + schema.TemplateSlugPattern + "."
		default:
			in.slug = schema.Slugify(*s)
			if in.slug == "" && creating {
				bad["slug"] = "slug does not match pattern " + schema.TemplateSlugPattern + "."
			}
		}
	}
	in.Theme = str("theme")
	str("type") // read-only in effect: validated, not used
	in.Description = str("description")
	if s := str("status"); s != nil && !slices.Contains([]string{"publish", "future", "draft", "pending", "private"}, *s) {
		bad["status"] = "status is not one of publish, future, draft, pending, and private."
	}
	if part {
		in.Area = str("area")
	}
	in.Title = templateTextParam(obj, "title", true, bad)
	in.Content = templateTextParam(obj, "content", false, bad)
	if raw, ok := obj["author"]; ok {
		n, err := jsonInteger(raw)
		if err != nil {
			bad["author"] = "author is not of type integer."
		} else {
			in.Author = &n
		}
	}
	if raw, ok := obj["source"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			in.Source = s
		}
	}
	if len(bad) > 0 {
		names := make([]string, 0, len(bad))
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Field: names[0], Params: bad, Message: bad[names[0]]}
	}
	return in, nil
}

// templateTextParam reads a title or content argument ("object,string" in WordPress's schema).
// A title's object sets the title only with a non-empty raw.
func templateTextParam(obj map[string]json.RawMessage, name string, title bool, bad map[string]string) *templateText {
	raw, ok := obj[name]
	if !ok {
		return nil
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return &templateText{Raw: s, Set: true}
	}
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		bad[name] = name + " is not of type object,string."
		return nil
	}
	t := &templateText{}
	if r, ok := fields["raw"]; ok {
		if r[0] != '"' || json.Unmarshal(r, &t.Raw) != nil {
			bad[name] = name + "[raw] is not of type string."
			return nil
		}
		t.Set = !title || t.Raw != ""
	}
	if bv, ok := fields["block_version"]; ok && !title {
		if _, err := jsonInteger(bv); err != nil {
			bad[name] = name + "[block_version] is not of type integer."
			return nil
		}
	}
	if r, ok := fields["rendered"]; ok && title {
		var s string
		if r[0] != '"' || json.Unmarshal(r, &s) != nil {
			bad[name] = name + "[rendered] is not of type string."
			return nil
		}
	}
	return t
}

// jsonInteger reads a JSON integer, or a string holding one (WordPress's rest_is_integer).
func jsonInteger(raw json.RawMessage) (int64, error) {
	s := string(raw)
	if len(s) > 1 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, strconv.ErrSyntax
	}
	return int64(f), nil
}

// apply writes the input over p, a record of a template or template part. file is the theme
// file's template when p is being made from it (a title or content sent without a value then
// leaves the field empty, as WordPress's insert does), else nil.
func (in *templateInput) apply(p *schema.Post, file *schema.Template) {
	switch {
	case in.Title != nil && in.Title.Set:
		p.Title = in.Title.Raw
	case in.Title != nil && file != nil:
		p.Title = ""
	}
	switch {
	case in.Content != nil && in.Content.Set:
		p.Content = in.Content.Raw
	case in.Content != nil && file != nil:
		p.Content = ""
	}
	if in.Description != nil {
		p.Excerpt = *in.Description
	}
	if in.Author != nil && *in.Author != 0 {
		p.Author = schema.UserID(*in.Author)
	}
	if p.Type != schema.TypeTemplatePart {
		return
	}
	switch {
	case in.Area != nil:
		// WordPress files an unknown area as uncategorized (with a notice), never refuses it.
		p.Design.Area = schema.AreaUncategorized
		if slices.Contains(schema.TemplatePartAreas, *in.Area) {
			p.Design.Area = *in.Area
		}
	case p.Design.Area == "":
		p.Design.Area = schema.AreaUncategorized
	}
}

// filterTemplateHTML filters the HTML of a template write by a user without unfiltered_html, as
// the posts' writes are (filterHTML in cms.go).
func (s *Server) filterTemplateHTML(rq *handler.Request, in *templateInput) {
	if can(rq, schema.CapUnfilteredHTML) {
		return
	}
	if in.Content != nil {
		in.Content.Raw = s.kses.Post(in.Content.Raw)
	}
	if in.Title != nil {
		in.Title.Raw = s.kses.Title(in.Title.Raw)
	}
	if in.Description != nil {
		d := s.kses.Post(*in.Description)
		in.Description = &d
	}
}
