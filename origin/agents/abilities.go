package agents

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/schema"
)

// The refusals of the abilities routes, in WordPress's words.
var (
	errAbilityNotFound  = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_ability_not_found", Message: "Ability not found."}
	errCategoryNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_ability_category_not_found", Message: "Ability category not found."}
)

// link is one entry of an answer's _links.
type link struct {
	Href string `json:"href"`
}

// AbilityView is an ability as the abilities routes show it (WordPress's ability schema). In the
// embed context only name, label and category are shown.
type AbilityView struct {
	Name         string            `json:"name"`
	Label        string            `json:"label"`
	Description  string            `json:"description,omitempty"`
	Category     string            `json:"category"`
	InputSchema  json.RawMessage   `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage   `json:"output_schema,omitempty"`
	Meta         *AbilityMeta      `json:"meta,omitempty"`
	Links        map[string][]link `json:"_links"`
}

// AbilityMeta is an ability's meta: its annotations, and show_in_rest (every ability here is).
type AbilityMeta struct {
	Annotations Annotations `json:"annotations"`
	ShowInRest  bool        `json:"show_in_rest"`
}

// CategoryView is an ability category as the categories routes show it.
type CategoryView struct {
	Slug        string            `json:"slug"`
	Label       string            `json:"label"`
	Description string            `json:"description,omitempty"`
	Meta        *struct{}         `json:"meta,omitempty"`
	Links       map[string][]link `json:"_links"`
}

const abilitiesBase = "/cms-abilities/v1"

func site(rq *handler.Request) schema.Site {
	return schema.Site{Base: rq.Info.BaseURL, Loc: rq.Location()}
}

func viewOf(a *Ability, st schema.Site, context string) AbilityView {
	v := AbilityView{Name: a.Name, Label: a.Label, Category: a.Category, Links: map[string][]link{
		"self":          {{st.RestURL(abilitiesBase + "/abilities/" + a.Name)}},
		"collection":    {{st.RestURL(abilitiesBase + "/abilities")}},
		"wp:action-run": {{st.RestURL(abilitiesBase + "/abilities/" + a.Name + "/run")}},
	}}
	if context != "embed" {
		v.Description, v.InputSchema, v.OutputSchema = a.Description, a.inputDoc, a.outputDoc
		v.Meta = &AbilityMeta{Annotations: a.Annotations, ShowInRest: true}
	}
	return v
}

func categoryViewOf(c *Category, st schema.Site, context string) CategoryView {
	v := CategoryView{Slug: c.Slug, Label: c.Label, Links: map[string][]link{
		"self":       {{st.RestURL(abilitiesBase + "/categories/" + c.Slug)}},
		"collection": {{st.RestURL(abilitiesBase + "/categories")}},
		"abilities":  {{st.RestURL(abilitiesBase+"/abilities") + "&category=" + c.Slug}},
	}}
	if context != "embed" {
		v.Description, v.Meta = c.Description, &struct{}{}
	}
	return v
}

// canRead is the permission of the abilities' reads: a logged-in user with read.
func canRead(ctx *fasthttp.RequestCtx, rq *handler.Request) (*schema.Args, error) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		return nil, err // WordPress validates the arguments before the permission check
	}
	if rq.User == nil || !rq.User.Role.Can(schema.CapRead) {
		return nil, forbidden(rq.User, "rest_forbidden", "Sorry, you are not allowed to do that.")
	}
	return args, nil
}

// sanitizeKey is WordPress's sanitize_key: lowercase, and only a-z, 0-9, _ and - kept.
func sanitizeKey(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return -1
	}, s)
}

// paginate returns the page of n items (page and perPage from 1) as [from, to) and the number
// of pages.
func paginate(n int, page, perPage int64) (from, to, pages int) {
	pages = int((int64(n) + perPage - 1) / perPage)
	from = min(schema.PageOffset(page, perPage), n)
	return from, min(from+int(perPage), n), pages
}

func (s *Service) listAbilities(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := canRead(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	category := sanitizeKey(args.Str("category"))
	var list []*Ability
	for _, a := range s.reg.Abilities() {
		if category == "" || a.Category == category {
			list = append(list, a)
		}
	}
	page, perPage := args.Int("page"), args.Int("per_page")
	from, to, pages := paginate(len(list), page, perPage)
	st, out := site(rq), []AbilityView{}
	for _, a := range list[from:to] {
		out = append(out, viewOf(a, st, args.Str("context")))
	}
	s.answer(ctx, rq, http.StatusOK, out,
		schema.CollectionHeaders(st.RestURL(rq.Route.Path), rq.Route, pipeline.Query(ctx), int(page), len(list), pages)...)
}

func (s *Service) getAbility(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := canRead(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	a := s.reg.Ability(pipeline.Param(ctx, "name"))
	if a == nil {
		s.Fail(ctx, rq, errAbilityNotFound)
		return
	}
	s.answer(ctx, rq, http.StatusOK, viewOf(a, site(rq), args.Str("context")))
}

func (s *Service) listCategories(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := canRead(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	cats := s.reg.Categories()
	page, perPage := args.Int("page"), args.Int("per_page")
	from, to, pages := paginate(len(cats), page, perPage)
	st, out := site(rq), []CategoryView{}
	for i := from; i < to; i++ {
		out = append(out, categoryViewOf(&cats[i], st, args.Str("context")))
	}
	s.answer(ctx, rq, http.StatusOK, out,
		schema.CollectionHeaders(st.RestURL(rq.Route.Path), rq.Route, pipeline.Query(ctx), int(page), len(cats), pages)...)
}

func (s *Service) getCategory(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := canRead(ctx, rq)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	c := s.reg.Category(pipeline.Param(ctx, "slug"))
	if c == nil {
		s.Fail(ctx, rq, errCategoryNotFound)
		return
	}
	s.answer(ctx, rq, http.StatusOK, categoryViewOf(c, site(rq), args.Str("context")))
}

// methodError is WordPress's refusal of a run with the wrong method for the ability.
func methodError(want string) *schema.Error {
	msg := "Abilities that perform updates require POST method."
	switch want {
	case http.MethodGet:
		msg = "Read-only abilities require GET method."
	case http.MethodDelete:
		msg = "Abilities that perform destructive actions require DELETE method."
	}
	return &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_ability_invalid_method", Message: msg}
}

// runAbility runs an ability with WordPress's checks in WordPress's order: the ability exists
// (404), the method suits its annotations (405), the input passes its schema (400), the user
// may run it (401/403); then its output is the answer.
func (s *Service) runAbility(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	a := s.reg.Ability(pipeline.Param(ctx, "name"))
	if a == nil {
		s.Fail(ctx, rq, errAbilityNotFound)
		return
	}
	method := string(ctx.Method())
	if want := a.Annotations.Method(); method != want {
		s.Fail(ctx, rq, methodError(want))
		return
	}
	var input json.RawMessage
	if method == http.MethodGet || method == http.MethodDelete {
		input = a.QueryInput(func(visit func(k, v string)) {
			ctx.QueryArgs().VisitAll(func(k, v []byte) { visit(string(k), string(v)) })
		})
	} else {
		body, err := jsonParams(ctx)
		if err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		input = body["input"]
	}
	out, wrote, err := s.run(ctx, rq.User, a, input)
	if wrote > 0 {
		pipeline.SetWriteVersion(&ctx.Response.Header, wrote)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.answer(ctx, rq, http.StatusOK, out)
}

// jsonParams reads a JSON object body's members, as WordPress's get_json_params: a body that is
// not sent as JSON carries none; one that is, but does not parse, is rest_invalid_json.
func jsonParams(ctx *fasthttp.RequestCtx) (map[string]json.RawMessage, error) {
	body := bytes.TrimSpace(ctx.Request.Body())
	ct := strings.ToLower(string(ctx.Request.Header.ContentType()))
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	if len(body) == 0 || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, nil
	}
	if !json.Valid(body) {
		return nil, handler.SyntaxError(body)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil, nil // a JSON value that is not an object carries no parameters
	}
	return m, nil
}
