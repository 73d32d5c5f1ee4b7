package origin

import (
	"context"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/sitehealth"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The Allow header and the targetHints of self links (WordPress's rest_send_allow_header and
// get_target_hints_for_link): the methods of the matched route's path (the route table's
// RoutesAt) whose permission check the caller passes for the request, evaluated after the
// handler ran, as WordPress does on rest_post_dispatch. The checks here are the handlers' own
// permission rules, without their argument validation or writes.

// allowCheck evaluates permission checks of the routes at one path for one request.
type allowCheck struct {
	s     *Server
	ctx   context.Context
	rq    *handler.Request
	param func(name string) string
	query func(name string) (string, bool)
	// target is the user a users or application-passwords route names, loaded once.
	target       *schema.User
	targetLoaded bool
	// post and term, when set, are the record a write just stored, checked as they are rather
	// than looked up in the replica, which may not have applied the write yet.
	post *schema.Post
	term *schema.Term
}

// allowed lists the methods at r's path whose permission check passes.
func (c *allowCheck) allowed(r *schema.Route) []string {
	return schema.AllowedMethods(c.s.router.At(r), c.permitted)
}

// permitted is the permission check of route r (WordPress's permission_callback).
func (c *allowCheck) permitted(r *schema.Route) bool {
	rq := *c.rq
	rq.Route = r
	user := rq.User
	context, _ := c.query("context")
	if ok, handled := c.s.designPermitted(&rq, r, c.param, c.query); handled {
		return ok // global styles and themes (globalstyles.go)
	}
	if ok, handled := c.s.templatePermitted(&rq, r, c.param); handled {
		return ok // templates and template parts (templates_allow.go)
	}
	if strings.HasPrefix(r.Name, "sitehealth.") {
		return sitehealth.Permitted(user) // site health tests: administrators (origin/sitehealth)
	}
	if t := schema.PostTypeOfRoute(r); t != nil {
		name := strings.TrimPrefix(r.Name, "cms."+t.RestBase+".")
		switch name {
		case "get":
			if c.post != nil {
				return (t.PublicRead && c.post.Public()) || can(&rq, t.Caps.Edit)
			}
			return reads.Permitted(&reads.Request{Route: r, Tenant: rq.Tenant, Param: c.param, Query: c.query, Viewer: reads.Viewer{User: user}})
		case "list":
			return reads.Permitted(&reads.Request{Route: r, Tenant: rq.Tenant, Param: c.param, Query: c.query, Viewer: reads.Viewer{User: user}})
		case "create":
			if t.Name == schema.TypeAttachment {
				return can(&rq, schema.CapUploadFiles) // the attachment type's create_posts
			}
			return can(&rq, t.Caps.Edit)
		case "update", "autosaves.create":
			p := c.record(t, "id")
			return user != nil && p != nil && canEditPost(&rq, p)
		case "delete":
			p := c.record(t, "id")
			return user != nil && p != nil && canDeletePost(&rq, p)
		case "revisions.list", "revisions.get", "autosaves.get":
			p := c.record(t, "parent")
			return user != nil && p != nil && canEditPost(&rq, p)
		case "autosaves.list":
			p := c.record(t, "id")
			return user != nil && p != nil && canEditPost(&rq, p)
		case "revisions.delete":
			p := c.record(t, "parent")
			return user != nil && p != nil && canEditPost(&rq, p) && canDeletePost(&rq, p)
		}
	}
	switch r.Name {
	case "cms.categories.create", "cms.tags.create":
		return can(&rq, schema.CapManageCategories)
	case "cms.categories.get", "cms.tags.get":
		if c.term != nil {
			return true
		}
	case "cms.categories.update", "cms.tags.update", "cms.categories.delete", "cms.tags.delete":
		if c.term != nil {
			return can(&rq, schema.CapManageCategories)
		}
		id, err := strconv.ParseInt(c.param("id"), 10, 64)
		return err == nil && rq.Tenant.Snapshot().Term(schema.TermID(id)) != nil && can(&rq, schema.CapManageCategories)
	case "cms.users.list":
		orderby, _ := c.query("orderby")
		roles, _ := c.query("roles")
		caps, _ := c.query("capabilities")
		who, _ := c.query("who")
		list := can(&rq, schema.CapListUsers)
		return (list || roles == "" && caps == "" && context != "edit" && orderby != "email" && orderby != "registered_date") &&
			(who != "authors" || can(&rq, schema.CapEditPosts))
	case "cms.users.create":
		return can(&rq, schema.CapCreateUsers)
	case "cms.users.get":
		if strings.HasSuffix(r.Path, "/me") {
			return true // get_current_item has no permission check (its callback answers 401)
		}
		u := c.targetUser(r, "id")
		switch {
		case u == nil:
			return false
		case user != nil && user.ID == u.ID:
			return true
		case context == "edit":
			return can(&rq, schema.CapListUsers)
		}
		return rq.Tenant.Snapshot().PublishedAuthors()[u.ID] != 0 || canEditUser(&rq, u.ID) || can(&rq, schema.CapListUsers)
	case "cms.users.update":
		u := c.targetUser(r, "id")
		return u != nil && canEditUser(&rq, u.ID)
	case "cms.users.delete":
		return c.targetUser(r, "id") != nil && can(&rq, schema.CapEditUsers)
	case "cms.apppasswords.introspect":
		u := c.targetUser(r, "user_id")
		return u != nil && user != nil && user.ID == u.ID
	case "cms.apppasswords.list", "cms.apppasswords.create", "cms.apppasswords.deleteall",
		"cms.apppasswords.get", "cms.apppasswords.update", "cms.apppasswords.delete":
		u := c.targetUser(r, "user_id")
		return u != nil && canEditUser(&rq, u.ID)
	}
	if r.Server == schema.AtEdge {
		return reads.Permitted(&reads.Request{Route: r, Tenant: rq.Tenant, Param: c.param, Query: c.query, Viewer: reads.Viewer{User: user}})
	}
	if r.Auth == schema.AuthStaff {
		return can(&rq, r.Cap)
	}
	return true // no permission check (the batch route)
}

// record is the record of type t in the path parameter capture, from the origin's full
// replica, or nil.
func (c *allowCheck) record(t *schema.PostType, capture string) *schema.Post {
	if c.post != nil {
		return c.post
	}
	id, err := strconv.ParseInt(c.param(capture), 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	p := c.rq.Tenant.Snapshot().Post(schema.PostID(id), replica.Full)
	if p == nil || p.Type != t.Name {
		return nil
	}
	return p
}

// targetUser is the user a users route names in capture (or the caller on a /me route), or nil.
func (c *allowCheck) targetUser(r *schema.Route, capture string) *schema.User {
	if c.targetLoaded {
		return c.target
	}
	c.targetLoaded = true
	raw := c.param(capture)
	if strings.HasSuffix(r.Path, "/me") || raw == "me" {
		if c.rq.User == nil {
			return nil
		}
		c.target = c.rq.User
		return c.target
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	_ = c.s.db.Tx(c.ctx, func(tx *store.Tx) (err error) {
		c.target, err = tx.User(c.ctx, c.rq.Info, schema.UserID(id))
		return err
	})
	return c.target
}

// setAllow sets the Allow header of a CMS answer from the route the request matched, with the
// request's path parameters and query: nothing when no check passes, as WordPress.
func (s *Server) setAllow(ctx *fasthttp.RequestCtx, rq *handler.Request, r *schema.Route) {
	c := &allowCheck{s: s, ctx: ctx, rq: rq, param: pipeline.Params(ctx), query: pipeline.Query(ctx)}
	if v := pipeline.AllowValue(c.allowed(r)); len(v) > 0 {
		ctx.Response.Header.SetBytesV(fasthttp.HeaderAllow, v)
	} else {
		ctx.Response.Header.Del(fasthttp.HeaderAllow)
	}
}

// selfHints returns the targetHints function of a request's renders: for the rest path of a
// self link, the methods of its route the caller may use on a GET of the link (no query).
func (s *Server) selfHints(ctx context.Context, rq *handler.Request) func(path string) []string {
	return s.recordHints(ctx, rq, nil, nil)
}

// recordHints is selfHints with the record a write just stored (post or term, else nil).
func (s *Server) recordHints(ctx context.Context, rq *handler.Request, post *schema.Post, term *schema.Term) func(path string) []string {
	var probe *fasthttp.RequestCtx
	return func(path string) []string {
		if probe == nil {
			probe = new(fasthttp.RequestCtx)
		}
		probe.ResetUserValues()
		r := s.router.Match(probe, schema.CMS, "GET", []byte(path))
		if r == nil {
			return []string{}
		}
		c := &allowCheck{s: s, ctx: ctx, rq: rq, param: pipeline.Params(probe),
			query: func(string) (string, bool) { return "", false }, post: post, term: term}
		return c.allowed(r)
	}
}
