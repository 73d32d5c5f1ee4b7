package origin

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The CMS users routes. Users are not replicated (their e-mail addresses and roles are private),
// so the origin answers every users route, anonymous reads included, from the database; which
// profiles are public (authors of published posts) comes from its replica.

// userInput is the writable fields of a CMS user.
type userInput struct {
	ID          *handler.Int       `json:"id"`
	Username    *string            `json:"username"`
	Name        *string            `json:"name"`
	FirstName   *string            `json:"first_name"`
	LastName    *string            `json:"last_name"`
	Email       *string            `json:"email"`
	URL         *string            `json:"url"`
	Description *string            `json:"description"`
	Locale      *string            `json:"locale"`
	Nickname    *string            `json:"nickname"`
	Slug        *string            `json:"slug"`
	Roles       *[]string          `json:"roles"`
	Password    *string            `json:"password"`
	Meta        *map[string]string `json:"meta"`
}

func (s *Server) userHandlers() {
	s.bind("cms.users.list", s.listUsers)
	s.bind("cms.users.get", s.getUser)
	s.bind("cms.users.create", s.createUser)
	s.bind("cms.users.update", s.updateUser)
	s.bind("cms.users.delete", s.deleteUser)
	s.appPasswordHandlers()
	s.authorizeHandlers()
}

var (
	userNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_user_invalid_id", Message: "Invalid user ID."}
	notLoggedIn  = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_not_logged_in", Message: "You are not currently logged in.", Status: 401}
)

// cmsAnswer writes a CMS read answered by a handler (not from the replica's read engine).
func (s *Server) cmsAnswer(ctx *fasthttp.RequestCtx, rq *handler.Request, status int, body any, headers ...[2]string) {
	h := &ctx.Response.Header
	own := make([][2][]byte, 0, len(headers))
	for _, kv := range headers {
		h.Set(kv[0], kv[1])
		own = append(own, [2][]byte{[]byte(kv[0]), []byte(kv[1])})
	}
	handler.CMSHeaders(ctx, rq.Info, own)
	if rq.User != nil {
		h.Set(fasthttp.HeaderCacheControl, "no-cache, must-revalidate, max-age=0, no-store, private")
	} else {
		h.Set(fasthttp.HeaderCacheControl, "public, no-cache")
	}
	pipeline.SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
	pipeline.WriteJSON(ctx, rq.Iface, status, body)
	s.http.Observe(ctx, pipeline.RouteIndex(rq.Route), status)
}

func (s *Server) site(rq *handler.Request) schema.Site {
	return schema.Site{Base: rq.Info.BaseURL, Loc: rq.Location()}
}

// canEditUser is WordPress's edit_user meta capability: oneself, or edit_users.
func canEditUser(rq *handler.Request, id schema.UserID) bool {
	return rq.User != nil && (rq.User.ID == id || rq.User.Role.Can(schema.CapEditUsers))
}

// targetUser loads the user of the {id} capture, or the caller on the /me route.
func (s *Server) targetUser(ctx *fasthttp.RequestCtx, rq *handler.Request, param string) (*schema.User, error) {
	raw := pipeline.Param(ctx, param)
	if strings.HasSuffix(rq.Route.Path, "/me") || raw == "me" {
		if rq.User == nil {
			return nil, notLoggedIn
		}
		raw = strconv.FormatInt(int64(rq.User.ID), 10)
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, userNotFound
	}
	var u *schema.User
	err = s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		u, err = tx.User(ctx, rq.Info, schema.UserID(id))
		return err
	})
	if schema.ErrorCode(err) == schema.CodeNotFound {
		return nil, userNotFound
	}
	return u, err
}

func (s *Server) listUsers(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	listUsers := can(rq, schema.CapListUsers)
	switch orderby := args.Str("orderby"); {
	case len(args.Get("roles").Strs) > 0 && !listUsers:
		err = cannot(rq, "rest_user_cannot_view", "Sorry, you are not allowed to filter users by role.")
	case len(args.Get("capabilities").Strs) > 0 && !listUsers:
		err = cannot(rq, "rest_user_cannot_view", "Sorry, you are not allowed to filter users by capability.")
	case args.Str("context") == "edit" && !listUsers:
		err = cannot(rq, "rest_forbidden_context", "Sorry, you are not allowed to list users.")
	case (orderby == "email" || orderby == "registered_date") && !listUsers:
		err = cannot(rq, "rest_forbidden_orderby", "Sorry, you are not allowed to order users by this parameter.")
	case args.Str("who") == "authors" && !can(rq, schema.CapEditPosts):
		err = cannot(rq, "rest_forbidden_who", "Sorry, you are not allowed to query users by this parameter.")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var users []*schema.User
	if err := s.db.Tx(ctx, func(tx *store.Tx) (err error) { users, err = tx.Users(ctx, rq.Info); return }); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	authors := rq.Tenant.Snapshot().PublishedAuthors()
	include, exclude := args.Get("include").Ints, args.Get("exclude").Ints
	slugs, roles, caps := args.Get("slug").Strs, args.Get("roles").Strs, args.Get("capabilities").Strs
	search := strings.ToLower(strings.Trim(args.Str("search"), "*"))
	published := !listUsers || (args.Get("has_published_posts").Given && args.Bool("has_published_posts"))
	var all []*schema.User
	for _, u := range users {
		hasCap := len(caps) == 0
		for _, c := range caps {
			hasCap = hasCap || u.Role.Can(schema.Capability(c)) || c == string(u.Role)
		}
		matches := search == "" || strings.Contains(strings.ToLower(u.Login), search) || strings.Contains(u.Slug, search) ||
			strings.Contains(strings.ToLower(u.DisplayName), search) ||
			listUsers && (strings.Contains(strings.ToLower(u.Email), search) || strings.Contains(strings.ToLower(u.Profile.URL), search))
		switch {
		case len(include) > 0 && !slices.Contains(include, int64(u.ID)), slices.Contains(exclude, int64(u.ID)),
			len(slugs) > 0 && !slices.Contains(slugs, u.Slug), len(roles) > 0 && !slices.Contains(roles, string(u.Role)),
			!hasCap, !matches, published && authors[u.ID] == 0,
			args.Str("who") == "authors" && !u.Role.Can(schema.CapEditPosts):
			continue
		}
		all = append(all, u)
	}
	desc := args.Str("order") == "desc"
	slices.SortStableFunc(all, func(a, b *schema.User) int {
		var c int
		switch args.Str("orderby") {
		case "id":
			c = cmp.Compare(a.ID, b.ID)
		case "include":
			c = cmp.Compare(slices.Index(include, int64(a.ID)), slices.Index(include, int64(b.ID)))
		case "include_slugs":
			c = cmp.Compare(slices.Index(slugs, a.Slug), slices.Index(slugs, b.Slug))
		case "registered_date":
			c = a.CreatedAt.Compare(b.CreatedAt)
		case "slug":
			c = strings.Compare(a.Slug, b.Slug)
		case "email":
			c = strings.Compare(strings.ToLower(a.Email), strings.ToLower(b.Email))
		case "url":
			c = strings.Compare(a.Profile.URL, b.Profile.URL)
		default:
			c = strings.Compare(strings.ToLower(a.DisplayName), strings.ToLower(b.DisplayName))
		}
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.ID, b.ID))
	})
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	offset := schema.PageOffset(args.Int("page"), args.Int("per_page"))
	if o := args.Get("offset"); o.Given {
		offset = int(o.Int)
	}
	total := len(all)
	totalPages := (total + perPage - 1) / perPage
	if total > 0 && page > totalPages {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_page_number",
			Message: "The page number requested is larger than the number of pages available."})
		return
	}
	out := make([]*schema.UserView, 0, perPage)
	for i := offset; i < total && i < offset+perPage; i++ {
		out = append(out, schema.RenderUser(all[i], args.Str("context"), s.site(rq)))
	}
	s.cmsAnswer(ctx, rq, 200, out, schema.CollectionHeaders(s.site(rq).RestURL(rq.Route.Path), rq.Route, pipeline.Query(ctx), page, total, totalPages)...)
}

// collectionLinks renders a collection's Link header (rel prev and next) with the caller's
// declared arguments.

func (s *Server) getUser(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, err := s.targetUser(ctx, rq, "id")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	self := rq.User != nil && rq.User.ID == u.ID
	context := args.Str("context")
	switch {
	case self:
	case context == "edit" && !can(rq, schema.CapListUsers):
		err = cannot(rq, "rest_user_cannot_view", "Sorry, you are not allowed to list users.")
	case rq.Tenant.Snapshot().PublishedAuthors()[u.ID] == 0 && !canEditUser(rq, u.ID) && !can(rq, schema.CapListUsers):
		err = cannot(rq, "rest_user_cannot_view", "Sorry, you are not allowed to list users.")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, schema.RenderUser(u, context, s.site(rq)))
}

// decodeUser reads a user body and checks its types and formats (before permissions).
func decodeUser(ctx *fasthttp.RequestCtx, creating bool) (*userInput, error) {
	var in userInput
	if len(bytes.TrimSpace(ctx.Request.Body())) == 0 && !creating {
		return &in, nil
	}
	if err := handler.JSONBody(ctx, &in); err != nil {
		if creating && len(bytes.TrimSpace(ctx.Request.Body())) == 0 {
			return nil, missingParams("username", "email")
		}
		return nil, err
	}
	if creating {
		var missing []string
		if in.Username == nil {
			missing = append(missing, "username")
		}
		if in.Email == nil {
			missing = append(missing, "email")
		}
		if len(missing) > 0 {
			return nil, missingParams(missing...)
		}
	}
	if in.Email != nil && schema.ValidateEmail("email", *in.Email) != nil {
		return nil, schema.InvalidParam("email", "Invalid email address.")
	}
	if in.Roles != nil {
		for _, r := range *in.Roles {
			if !schema.Role(r).Valid() {
				return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_role", Field: "roles",
					Message: "The role " + r + " does not exist."}
			}
		}
		if len(*in.Roles) > 1 {
			return nil, schema.InvalidParam("roles", "roles must contain at most 1 item.")
		}
	}
	if in.Meta != nil {
		for k := range *in.Meta {
			return nil, schema.InvalidParam("meta", k+" is not a valid property of Object.")
		}
	}
	return &in, nil
}

func missingParams(names ...string) *schema.Error {
	return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: names[0],
		Message: "Missing parameter(s): " + strings.Join(names, ", ")}
}

// applyUser applies the input to u and checks the role change and uniqueness.
func applyUser(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx, in *userInput, u *schema.User, old *schema.User) error {
	set(&u.DisplayName, in.Name)
	set(&u.Email, in.Email)
	p := &u.Profile
	set(&p.FirstName, in.FirstName)
	set(&p.LastName, in.LastName)
	set(&p.URL, in.URL)
	set(&p.Description, in.Description)
	set(&p.Locale, in.Locale)
	set(&p.Nickname, in.Nickname)
	if in.Slug != nil {
		u.Slug = schema.Slugify(*in.Slug)
	}
	if in.Roles != nil && len(*in.Roles) == 1 {
		role := schema.Role((*in.Roles)[0])
		if old == nil || role != old.Role {
			if !can(rq, schema.CapEditUsers) {
				return cannot(rq, "rest_cannot_edit_roles", "Sorry, you are not allowed to edit roles of this user.")
			}
			if old != nil && old.ID == rq.User.ID && !role.Can(schema.CapEditUsers) {
				return cannot(rq, "rest_user_invalid_role", "Sorry, you are not allowed to give users that role.")
			}
		}
		u.Role = role
	}
	var exclude schema.UserID
	if old != nil {
		exclude = old.ID
	}
	loginTaken, emailTaken, slugTaken, err := tx.UserTaken(ctx, rq.Info, u.Login, u.Email, u.Slug, exclude)
	if err != nil {
		return err
	}
	switch {
	case old == nil && loginTaken:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "existing_user_login", Message: "Sorry, that username already exists!"}
	case old == nil && emailTaken:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "existing_user_email", Message: "Sorry, that email address is already used!"}
	case emailTaken:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_email", Message: "Invalid email address."}
	case slugTaken && old == nil:
		// WordPress makes a new user's nicename unique with -2, -3…
		base := u.Slug
		for n := 2; slugTaken; n++ {
			u.Slug = base + "-" + strconv.Itoa(n)
			if _, _, slugTaken, err = tx.UserTaken(ctx, rq.Info, "", "", u.Slug, 0); err != nil {
				return err
			}
		}
	case slugTaken:
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_slug", Message: "Invalid slug."}
	}
	if err := schema.ValidateUser(u); err != nil {
		e := schema.AsError(err)
		e.CMSCode = "rest_invalid_param"
		e.Params = map[string]string{e.Field: e.Message}
		return e
	}
	return nil
}

func (s *Server) createUser(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeUser(ctx, true)
	if err == nil && !can(rq, schema.CapCreateUsers) {
		err = cannot(rq, "rest_cannot_create_user", "Sorry, you are not allowed to create new users.")
	}
	if err == nil && in.ID != nil {
		err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_exists", Message: "Cannot create existing user."}
	}
	if err == nil {
		login := *in.Username
		probe := schema.User{Login: login}
		if schema.ValidateUser(&probe) != nil && strings.HasPrefix(schema.ValidateUser(&probe).Error(), "invalid: login") {
			err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_username",
				Message: "This username is invalid because it uses illegal characters. Please enter a valid username."}
		}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u := &schema.User{Login: *in.Username, Role: schema.RoleSubscriber}
	u.Slug, u.DisplayName = schema.Slugify(u.Login), u.Login
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := applyUser(ctx, rq, tx, in, u, nil); err != nil {
			return err
		}
		return tx.CreateUserTx(ctx, rq.Info, u)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, schema.Site{Base: rq.Info.BaseURL}.RestURL("/cms/v2/users/"+strconv.FormatInt(int64(u.ID), 10)))
	s.Written(ctx, rq, commits, fasthttp.StatusCreated, schema.RenderUser(u, "edit", s.site(rq)))
}

func (s *Server) updateUser(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeUser(ctx, false)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	old, err := s.targetUser(ctx, rq, "id")
	if err == nil && !canEditUser(rq, old.ID) {
		err = cannot(rq, "rest_cannot_edit", "Sorry, you are not allowed to edit this user.")
	}
	if err == nil && in.Username != nil && *in.Username != old.Login {
		err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_argument", Message: "Username isn't editable."}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u := *old
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := applyUser(ctx, rq, tx, in, &u, old); err != nil {
			return err
		}
		return tx.UpdateUser(ctx, rq.Info, &u)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, schema.RenderUser(&u, "edit", s.site(rq)))
}

func (s *Server) deleteUser(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := requestArgs(ctx, rq.Route)
	if err == nil && !args.Get("reassign").Given {
		e := missingParams("reassign")
		err = e
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, err := s.targetUser(ctx, rq, "id")
	if err == nil && !can(rq, schema.CapEditUsers) {
		err = cannot(rq, "rest_user_cannot_delete", "Sorry, you are not allowed to delete this user.")
	}
	if err == nil && !args.Bool("force") {
		err = &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: 501,
			Message: "Users do not support trashing. Set 'force' to true to delete."}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	reassign := schema.UserID(args.Int("reassign"))
	prev := schema.RenderUser(u, "edit", s.site(rq))
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if reassign == u.ID {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_reassign", Message: "Invalid user ID for reassignment."}
		}
		if _, err := tx.User(ctx, rq.Info, reassign); err != nil {
			if schema.ErrorCode(err) == schema.CodeNotFound {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_user_invalid_reassign", Message: "Invalid user ID for reassignment."}
			}
			return err
		}
		return tx.DeleteUser(ctx, rq.Info, u.ID, reassign)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, map[string]any{"deleted": true, "previous": prev})
}

// requestPasswordHash returns the keyed hash of the application password the request
// authenticated with, or nil.
func (s *Server) requestPasswordHash(ctx *fasthttp.RequestCtx) []byte {
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	if !bytes.EqualFold(scheme, []byte("Basic")) {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(cred)))
	if err != nil {
		return nil
	}
	_, pw, ok := bytes.Cut(raw, []byte{':'})
	if !ok {
		return nil
	}
	return schema.HashAppPassword(s.cfg.Secret, string(pw))
}
