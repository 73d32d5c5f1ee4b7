package origin

import (
	"context"
	"slices"
	"strconv"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The store's themes (WordPress's themes controller): the built-in block themes (schema.Themes),
// the store's active one (schema.ActiveTheme: Tenant.Theme, else schema.DefaultTheme) marked
// active. Block editors read the active theme here to find its global styles record, which the
// active theme's wp:user-global-styles link names, and which reading it makes when the store has
// none yet (as WordPress's get_user_global_styles_post_id does).
//
// Every theme is readable by administrators (WordPress's switch_themes, which this build names
// manage_options: held by exactly the same role); the active theme, alone, by any user who may
// edit some post type. Switching themes is not a REST route in WordPress (wp-admin does it); the
// store's theme is its registry entry's (Tenant.Theme), written by the platform's operators.

func (s *Server) themeHandlers() {
	s.bind("cms.themes.list", s.listThemes)
	s.bind("cms.themes.get", s.getTheme)
}

// canSwitchThemes is WordPress's switch_themes: administrators.
func canSwitchThemes(rq *handler.Request) bool { return can(rq, schema.CapManageOptions) }

// listThemes answers GET /cms/v2/themes: every built-in theme of the statuses asked (active,
// inactive; all without status), with X-WP-Total and X-WP-TotalPages 1, unpaginated. Without
// switch_themes only status=active exactly may be asked, by a user who may edit some post type
// (401/403 rest_cannot_view_active_theme), and anything else is 401/403 rest_cannot_view_themes.
func (s *Server) listThemes(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	status := args.Get("status")
	if !canSwitchThemes(rq) {
		switch {
		case !status.Given || !slices.Equal(status.Strs, []string{"active"}):
			err = cannot(rq, "rest_cannot_view_themes", "Sorry, you are not allowed to view themes.")
		case !canEditSomeType(rq):
			err = cannot(rq, "rest_cannot_view_active_theme", "Sorry, you are not allowed to view the active theme.")
		}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	active := schema.ActiveTheme(rq.Info)
	out := []*schema.ThemeView{}
	for _, th := range schema.Themes() {
		st := "inactive"
		if th == active {
			st = "active"
		}
		if status.Given && !slices.Contains(status.Strs, st) {
			continue
		}
		v, err := s.themeView(ctx, rq, th, th == active)
		if err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		out = append(out, v)
	}
	s.announceWrites(ctx, rq) // a global styles record made for the active theme (server.go)
	s.cmsAnswer(ctx, rq, 200, out, [2]string{"X-WP-Total", strconv.Itoa(len(out))}, [2]string{"X-WP-TotalPages", "1"})
}

// getTheme answers GET /cms/v2/themes/{stylesheet}: the permission first (switch_themes, or the
// active theme's stylesheet and the edit capability of some post type), then 404
// rest_theme_not_found for a stylesheet no built-in theme has.
func (s *Server) getTheme(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	stylesheet := pipeline.Param(ctx, "stylesheet")
	active := schema.ActiveTheme(rq.Info)
	var err error
	if !canSwitchThemes(rq) {
		switch {
		case stylesheet != active.Stylesheet:
			err = cannot(rq, "rest_cannot_view_themes", "Sorry, you are not allowed to view themes.")
		case !canEditSomeType(rq):
			err = cannot(rq, "rest_cannot_view_active_theme", "Sorry, you are not allowed to view the active theme.")
		}
	}
	th := schema.ThemeByStylesheet(stylesheet)
	if err == nil && th == nil {
		err = themeNotFound
	}
	var v *schema.ThemeView
	if err == nil {
		v, err = s.themeView(ctx, rq, th, th == active)
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.announceWrites(ctx, rq)
	s.cmsAnswer(ctx, rq, 200, v)
}

// themeView renders a theme for the caller. The active theme links its global styles record,
// made now when the store has none; another theme links its record only when one exists.
func (s *Server) themeView(ctx *fasthttp.RequestCtx, rq *handler.Request, th *schema.Theme, active bool) (*schema.ThemeView, error) {
	var styles schema.PostID
	if p := findGlobalStyles(rq, th.Stylesheet); p != nil {
		styles = p.ID
	} else if active {
		id, err := s.ensureGlobalStyles(ctx, rq, th.Stylesheet)
		if err != nil {
			return nil, err
		}
		styles = id
	}
	allow := s.selfHints(ctx, rq)(schema.ThemePath(th.Stylesheet)) // allow.go
	return schema.RenderTheme(th, schema.ThemeRender{Active: active, UserStyles: styles, Allow: allow}, s.site(rq)), nil
}

// findGlobalStyles returns the global styles record of a theme from the origin's replica, or nil.
func findGlobalStyles(rq *handler.Request, stylesheet string) *schema.Post {
	found, _ := rq.Tenant.Snapshot().Posts(replica.PostQuery{Scope: replica.Full, Type: schema.TypeGlobalStyles,
		Slugs: []string{schema.GlobalStylesSlug(stylesheet)}, OrderBy: "id", Asc: true, Limit: 1})
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// ensureGlobalStyles returns the id of a theme's global styles record, making it when the
// database has none: the lookup and the insert are one SERIALIZABLE transaction, so of
// concurrent first reads one makes the record and the others, retried, find it. The write's
// commits join the request's (announced by announceWrites).
func (s *Server) ensureGlobalStyles(ctx context.Context, rq *handler.Request, stylesheet string) (schema.PostID, error) {
	var id schema.PostID
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		p, err := tx.GlobalStyles(ctx, rq.Info, stylesheet)
		if err != nil {
			return err
		}
		if p == nil {
			var author schema.UserID
			if rq.User != nil {
				author = rq.User.ID
			}
			p = schema.NewGlobalStyles(stylesheet, author, tx.Now())
			if err := tx.CreatePost(ctx, rq.Info, p); err != nil {
				return err
			}
		}
		id = p.ID
		return nil
	})
	rq.Commits = append(rq.Commits, commits...)
	return id, err
}
