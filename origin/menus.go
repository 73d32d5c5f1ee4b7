package origin

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Navigation menus (/cms/v2/menus) and menu locations (/cms/v2/menu-locations), as WordPress's
// menus controller (a terms controller of the nav_menu taxonomy) and menu locations controller.
// Menus are terms (the term machinery of terms.go and store/terms.go writes their rows) but are
// not public: they are not replicated, and every route reads the database in the request's
// transaction.

// menuInput is the writable fields of a menu.
type menuInput struct {
	ID          *handler.Int       `json:"id"`
	Name        *string            `json:"name"`
	Slug        *string            `json:"slug"`
	Description *string            `json:"description"`
	Parent      *handler.Int       `json:"parent"`
	Meta        *map[string]string `json:"meta"`
	Locations   *stringList        `json:"locations"`
	AutoAdd     *bool              `json:"auto_add"`
}

// stringList is a JSON array of strings, also accepted as one comma- or space-separated string
// (WordPress's list parsing).
type stringList []string

// UnmarshalJSON accepts ["a","b"] and "a,b".
func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &handler.FieldError{Err: schema.InvalidParam("locations", "locations is not of type array.")}
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return &handler.FieldError{Err: schema.InvalidParam("locations", "locations["+strconv.Itoa(i)+"] is not of type string.")}
		}
	}
	*l = out
	return nil
}

func (s *Server) menuHandlers() {
	s.bind("cms.menus.list", s.listMenus)
	s.bind("cms.menus.get", s.getMenu)
	s.bind("cms.menus.create", s.createMenu)
	s.bind("cms.menus.update", s.updateMenu)
	s.bind("cms.menus.delete", s.deleteMenu)
	s.bind("cms.menulocations.list", s.listMenuLocations)
	s.bind("cms.menulocations.get", s.getMenuLocation)
}

// canReadMenus is WordPress's read access to menus: edit_theme_options, or the edit capability
// of any post type served over REST (edit_posts and edit_others_posts here).
func canReadMenus(rq *handler.Request) bool {
	return canEditSomeType(rq) // edit_theme_options too: menu items map their capabilities to it
}

func menuAllow(rq *handler.Request) []string {
	if can(rq, schema.CapEditThemeOptions) {
		return []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	}
	return []string{"GET"}
}

func (s *Server) menuView(rq *handler.Request, m *schema.Menu, context string) *schema.MenuView {
	return schema.RenderMenu(m, context, menuAllow(rq), schema.Site{Base: rq.Info.BaseURL})
}

// escHTML escapes text as WordPress's esc_html does.
func escHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#039;").Replace(s)
}

// decodeMenu reads a menu body and validates its types and locations, before permissions, as
// WordPress validates arguments first.
func decodeMenu(ctx *fasthttp.RequestCtx, creating bool) (*menuInput, error) {
	var in menuInput
	missingName := &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "name",
		Message: "Missing parameter(s): name", Params: map[string]string{"name": "name"}}
	if len(ctx.Request.Body()) == 0 {
		if creating {
			return nil, missingName
		}
		return &in, nil
	}
	if err := handler.JSONBody(ctx, &in); err != nil {
		return nil, err
	}
	if creating && in.Name == nil {
		return nil, missingName
	}
	if in.Meta != nil {
		for k := range *in.Meta {
			return nil, schema.InvalidParam("meta", k+" is not a valid property of Object.")
		}
	}
	if in.Locations != nil {
		for _, l := range *in.Locations {
			if !schema.IsMenuLocation(l) {
				e := schema.InvalidParam("locations", "Invalid menu location.")
				e.DetailData = map[string]any{"locations": map[string]string{"location": l}}
				return nil, e
			}
		}
	}
	return &in, nil
}

var notHierarchical = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_taxonomy_not_hierarchical", Status: 400,
	Message: "Cannot set parent term, taxonomy is not hierarchical."}

// applyMenu applies the input to m as wp_update_nav_menu_object does: a name no other menu
// holds (compared case-insensitively: menu_exists), and a slug always derived from the name
// and made unique (WordPress drops the slug of a menu write).
func applyMenu(ctx context.Context, rq *handler.Request, tx *store.Tx, in *menuInput, m, old *schema.Menu) error {
	if in.Name != nil {
		m.Name = strings.TrimSpace(*in.Name)
		dup, err := tx.TermByName(ctx, rq.Info, schema.TaxNavMenu, m.Name, 0)
		if err != nil {
			return err
		}
		if dup != nil && (old == nil || dup.ID != old.ID) {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "menu_exists", Status: 400, TermID: int64(dup.ID),
				Message: "The menu name <strong>" + escHTML(*in.Name) + "</strong> conflicts with another menu name. Please try another."}
		}
		if m.Name == "" {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "empty_term_name", Status: 400, Message: "A name is required for this term."}
		}
	}
	if in.Description != nil {
		m.Description = *in.Description
	}
	var exclude schema.TermID
	if old != nil {
		exclude = old.ID
	}
	base := schema.Slugify(m.Name)
	if base == "" {
		base = "menu"
	}
	slug, err := tx.UniqueTermSlug(ctx, rq.Info, schema.TaxNavMenu, base, exclude)
	if err != nil {
		return err
	}
	m.Slug = slug
	if in.AutoAdd != nil {
		m.AutoAdd = *in.AutoAdd
	}
	if in.Locations != nil {
		m.Locations = []string{}
		for _, l := range schema.MenuLocations() { // in the platform's order, once each
			if slices.Contains(*in.Locations, l.Name) {
				m.Locations = append(m.Locations, l.Name)
			}
		}
	}
	return nil
}

func (s *Server) createMenu(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeMenu(ctx, true)
	if err == nil && !can(rq, schema.CapEditThemeOptions) {
		err = cannot(rq, "rest_cannot_create", "Sorry, you are not allowed to create terms in this taxonomy.")
	}
	if err == nil && in.Parent != nil {
		err = notHierarchical
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var m schema.Menu
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		m = schema.Menu{Term: schema.Term{Taxonomy: schema.TaxNavMenu}, Locations: []string{}}
		if err := applyMenu(ctx, rq, tx, in, &m, nil); err != nil {
			return err
		}
		if err := tx.CreateTerm(ctx, rq.Info, &m.Term); err != nil {
			return err
		}
		var locations []string
		if in.Locations != nil {
			locations = m.Locations
		}
		return tx.SaveMenuSettings(ctx, rq.Info, m.ID, m.AutoAdd, locations)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, schema.Site{Base: rq.Info.BaseURL}.RestURL("/cms/v2/menus/"+strconv.FormatInt(int64(m.ID), 10)))
	s.Written(ctx, rq, commits, fasthttp.StatusCreated, s.menuView(rq, &m, "view"))
}

var menuNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_term_invalid", Message: "Term does not exist."}

func loadMenu(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx) (*schema.Menu, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, menuNotFound
	}
	m, err := tx.Menu(ctx, rq.Info, schema.TermID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound {
		return nil, menuNotFound
	}
	return m, err
}

func (s *Server) updateMenu(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeMenu(ctx, false)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var m schema.Menu
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadMenu(ctx, rq, tx)
		if err != nil {
			return err
		}
		if !can(rq, schema.CapEditThemeOptions) {
			return cannot(rq, "rest_cannot_update", "Sorry, you are not allowed to edit this term.")
		}
		if in.Parent != nil {
			return notHierarchical
		}
		m = *old
		if err := applyMenu(ctx, rq, tx, in, &m, old); err != nil {
			return err
		}
		if m.Term != old.Term {
			if err := tx.UpdateTerm(ctx, rq.Info, &old.Term, &m.Term); err != nil {
				return err
			}
		}
		var locations []string
		if in.Locations != nil {
			locations = m.Locations
		}
		return tx.SaveMenuSettings(ctx, rq.Info, m.ID, m.AutoAdd, locations)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, s.menuView(rq, &m, "view"))
}

func (s *Server) deleteMenu(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var out any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadMenu(ctx, rq, tx)
		if err != nil {
			return err
		}
		if !can(rq, schema.CapEditThemeOptions) {
			return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete this term.")
		}
		if !args.Bool("force") {
			return &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: 501,
				Message: "Menus do not support trashing. Set 'force=true' to delete."}
		}
		prev := s.menuView(rq, old, "view")
		if _, err := tx.DeleteMenu(ctx, rq.Info, old); err != nil {
			return err
		}
		out = map[string]any{"deleted": true, "previous": prev}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, out)
}

// menuReadCheck is WordPress's read permission of the menus routes: the terms controller's
// (the edit context needs edit_theme_options), then read access (rest_cannot_view).
func menuReadCheck(rq *handler.Request, context, forbiddenContext string) error {
	if context == "edit" && !can(rq, schema.CapEditThemeOptions) {
		return cannot(rq, "rest_forbidden_context", forbiddenContext)
	}
	if !canReadMenus(rq) {
		return cannot(rq, "rest_cannot_view", "Sorry, you are not allowed to view menus.")
	}
	return nil
}

func (s *Server) getMenu(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var m *schema.Menu
	if err := s.db.Tx(ctx, func(tx *store.Tx) (err error) { m, err = loadMenu(ctx, rq, tx); return }); err != nil {
		s.Fail(ctx, rq, err) // an unknown menu is a 404 before permissions, as WordPress's get_term
		return
	}
	if err := menuReadCheck(rq, args.Str("context"), "Sorry, you are not allowed to edit this term."); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, s.menuView(rq, m, args.Str("context")))
}

func (s *Server) listMenus(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := menuReadCheck(rq, args.Str("context"), "Sorry, you are not allowed to edit terms in this taxonomy."); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var menus []*schema.Menu
	var counts map[schema.TermID]int
	var onPost schema.TermID
	post := args.Int("post")
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		if menus, err = tx.Menus(ctx, rq.Info); err != nil {
			return err
		}
		if counts, err = tx.MenuItemCounts(ctx, rq.Info); err != nil {
			return err
		}
		if post > 0 {
			p, err := tx.Post(ctx, rq.Info, schema.PostID(post))
			if err == nil && p.MenuItem != nil {
				onPost = p.MenuItem.Menus
			} else if err != nil && schema.ErrorCode(err) != schema.CodeNotFound {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	filter := schema.TermFilterOf(args)
	key := func(m *schema.Menu) schema.TermOrder {
		return schema.TermOrder{ID: m.ID, Name: m.Name, Slug: m.Slug, Description: m.Description, Count: counts[m.ID]}
	}
	var all []*schema.Menu
	for _, m := range menus {
		if filter.Keeps(key(m)) && (post <= 0 || m.ID == onPost) {
			all = append(all, m)
		}
	}
	orderby, desc := args.Str("orderby"), args.Str("order") == "desc"
	slices.SortStableFunc(all, func(a, b *schema.Menu) int {
		return schema.CompareTerms(orderby, desc, filter.Include, filter.Slugs, key(a), key(b))
	})
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	offset := schema.PageOffset(args.Int("page"), args.Int("per_page"))
	if o := args.Get("offset"); o.Given && o.Int > 0 {
		offset = int(min(o.Int, schema.MaxOffset))
	}
	total := len(all)
	totalPages := (total + perPage - 1) / perPage
	out := make([]*schema.MenuView, 0, perPage)
	for i := offset; i < total && i < offset+perPage; i++ {
		out = append(out, s.menuView(rq, all[i], args.Str("context")))
	}
	s.cmsAnswer(ctx, rq, 200, out, schema.CollectionHeaders(s.site(rq).RestURL(rq.Route.Path), rq.Route, pipeline.Query(ctx), page, total, totalPages)...)
}

// menuLocationsCheck is the menu locations controller's permission: edit_theme_options.
func menuLocationsCheck(rq *handler.Request) error {
	if !can(rq, schema.CapEditThemeOptions) {
		return cannot(rq, "rest_cannot_view", "Sorry, you are not allowed to view menu locations.")
	}
	return nil
}

// listMenuLocations answers every location as an object keyed by name, as WordPress does.
func (s *Server) listMenuLocations(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if _, err := requestArgs(ctx, rq.Route); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := menuLocationsCheck(rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var assigned map[string]schema.TermID
	if err := s.db.Tx(ctx, func(tx *store.Tx) (err error) { assigned, err = tx.MenuLocations(ctx, rq.Info); return }); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, schema.RenderMenuLocations(assigned, schema.Site{Base: rq.Info.BaseURL}))
}

func (s *Server) getMenuLocation(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if _, err := requestArgs(ctx, rq.Route); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := menuLocationsCheck(rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	name := pipeline.Param(ctx, "location")
	i := slices.IndexFunc(schema.MenuLocations(), func(l schema.MenuLocation) bool { return l.Name == name })
	if i < 0 {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_menu_location_invalid", Message: "Invalid menu location."})
		return
	}
	var assigned map[string]schema.TermID
	if err := s.db.Tx(ctx, func(tx *store.Tx) (err error) { assigned, err = tx.MenuLocations(ctx, rq.Info); return }); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	l := schema.MenuLocations()[i]
	s.cmsAnswer(ctx, rq, 200, schema.RenderMenuLocation(l, assigned[l.Name], schema.Site{Base: rq.Info.BaseURL}))
}
