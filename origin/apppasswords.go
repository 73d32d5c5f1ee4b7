package origin

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The application passwords routes: /cms/v2/users/{user_id}/application-passwords[/{uuid}],
// /introspect. A user manages their own passwords; edit_users manages anyone's. Passwords are
// stored as a keyed hash (HashAppPassword). Every credentialed request reaches an origin, which
// trusts a password it verified for at most --credential-ttl (store.Config.CredentialTTL): a
// revoked password is refused on that origin's next request, on the others once told over NATS,
// or when their verification expires.

type appPasswordInput struct {
	Name  *string `json:"name"`
	AppID *string `json:"app_id"`
}

// AppPasswordView is an application password as its routes render it.
type AppPasswordView struct {
	UUID     string                   `json:"uuid"`
	AppID    string                   `json:"app_id"`
	Name     string                   `json:"name"`
	Password string                   `json:"password,omitempty"`
	Created  string                   `json:"created"`
	LastUsed *string                  `json:"last_used"`
	LastIP   *string                  `json:"last_ip"`
	Links    map[string][]schema.Link `json:"_links"`
}

func (s *Server) appPasswordHandlers() {
	s.bind("cms.apppasswords.list", s.listAppPasswords)
	s.bind("cms.apppasswords.create", s.createAppPassword)
	s.bind("cms.apppasswords.deleteall", s.deleteAppPasswords)
	s.bind("cms.apppasswords.introspect", s.introspectAppPassword)
	s.bind("cms.apppasswords.get", s.getAppPassword)
	s.bind("cms.apppasswords.update", s.updateAppPassword)
	s.bind("cms.apppasswords.delete", s.deleteAppPassword)
}

const wpDate = "2006-01-02T15:04:05"

func appPasswordView(rq *handler.Request, a *store.AppPasswordInfo) *AppPasswordView {
	v := &AppPasswordView{UUID: a.UUID, AppID: a.AppID, Name: a.Name, Created: a.CreatedAt.UTC().Format(wpDate)}
	if a.LastUsed != nil {
		lu := a.LastUsed.UTC().Format(wpDate)
		v.LastUsed = &lu
		if a.LastIP != "" {
			ip := a.LastIP
			v.LastIP = &ip
		}
	}
	v.Links = map[string][]schema.Link{"self": {{Href: schema.Site{Base: rq.Info.BaseURL}.RestURL(
		"/cms/v2/users/" + strconv.FormatInt(int64(a.UserID), 10) + "/application-passwords/" + a.UUID)}}}
	return v
}

// appUser resolves {user_id} ("me" or an id) and checks that the caller may manage that user's
// application passwords; code and msg are the route's permission error.
func (s *Server) appUser(ctx *fasthttp.RequestCtx, rq *handler.Request, code, msg string) (*schema.User, error) {
	u, err := s.targetUser(ctx, rq, "user_id")
	if err != nil {
		return nil, err
	}
	if !canEditUser(rq, u.ID) {
		return nil, cannot(rq, code, msg)
	}
	return u, nil
}

var appPasswordNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_application_password_not_found", Message: "Application password not found."}

func (s *Server) listAppPasswords(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if _, err := requestArgs(ctx, rq.Route); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, err := s.appUser(ctx, rq, "rest_cannot_list_application_passwords", "Sorry, you are not allowed to list application passwords for this user.")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	list, err := s.db.AppPasswords(ctx, rq.Info, u.ID)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := make([]*AppPasswordView, 0, len(list))
	for _, a := range list {
		out = append(out, appPasswordView(rq, a))
	}
	s.cmsAnswer(ctx, rq, 200, out)
}

func decodeAppPassword(ctx *fasthttp.RequestCtx, creating bool) (*appPasswordInput, error) {
	var in appPasswordInput
	if len(ctx.Request.Body()) > 0 || creating {
		if err := handler.JSONBody(ctx, &in); err != nil {
			if creating && len(ctx.Request.Body()) == 0 {
				return nil, missingParams("name")
			}
			return nil, err
		}
	}
	if creating && in.Name == nil {
		return nil, missingParams("name")
	}
	if in.Name != nil && (len(*in.Name) == 0 || schema.ValidateText("name", *in.Name, 200, true) != nil) {
		return nil, schema.InvalidParam("name", "name does not match pattern .*\\S.*.")
	}
	if in.AppID != nil && *in.AppID != "" && !schema.ValidUUID(*in.AppID) {
		return nil, schema.InvalidParam("app_id", "app_id is not a valid UUID.")
	}
	return &in, nil
}

// nameTaken reports whether the user already has an application password with the name.
func (s *Server) nameTaken(ctx *fasthttp.RequestCtx, rq *handler.Request, user schema.UserID, name, except string) (bool, error) {
	list, err := s.db.AppPasswords(ctx, rq.Info, user)
	for _, a := range list {
		if a.Name == name && a.UUID != except {
			return true, err
		}
	}
	return false, err
}

var duplicateAppName = &schema.Error{Code: schema.CodeConflict, CMSCode: "application_password_duplicate_name", Message: "Each application name should be unique.", Status: 409}

// createAppPasswordFor makes a new application password for u and returns its view with the
// password shown once (in WordPress's groups of four).
func (s *Server) createAppPasswordFor(ctx *fasthttp.RequestCtx, rq *handler.Request, u *schema.User, name, appID string) (*AppPasswordView, error) {
	if taken, err := s.nameTaken(ctx, rq, u.ID, name, ""); err != nil || taken {
		if err == nil {
			err = duplicateAppName
		}
		return nil, err
	}
	pw := schema.NewAppPassword()
	a, err := s.db.NewAppPassword(ctx, rq.Info, u.ID, name, appID, schema.HashAppPassword(s.cfg.Secret, pw))
	if err != nil {
		return nil, err
	}
	v := appPasswordView(rq, a)
	v.Password = schema.ChunkAppPassword(pw)
	return v, nil
}

func (s *Server) createAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeAppPassword(ctx, true)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, err := s.appUser(ctx, rq, "rest_cannot_create_application_passwords", "Sorry, you are not allowed to create application passwords for this user.")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	appID := ""
	if in.AppID != nil {
		appID = *in.AppID
	}
	v, err := s.createAppPasswordFor(ctx, rq, u, *in.Name, appID)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, v.Links["self"][0].Href)
	s.Written(ctx, rq, nil, fasthttp.StatusCreated, v)
}

func (s *Server) deleteAppPasswords(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	u, err := s.appUser(ctx, rq, "rest_cannot_delete_application_passwords", "Sorry, you are not allowed to delete application passwords for this user.")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	n, err := s.db.RevokeAppPasswords(ctx, rq.Info, u.ID)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, nil, 200, map[string]any{"deleted": true, "count": n})
}

func (s *Server) oneAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request, code, msg string) (*schema.User, *store.AppPasswordInfo, error) {
	u, err := s.appUser(ctx, rq, code, msg)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.db.AppPassword(ctx, rq.Info, u.ID, pipeline.Param(ctx, "uuid"))
	if schema.ErrorCode(err) == schema.CodeNotFound {
		return nil, nil, appPasswordNotFound
	}
	return u, a, err
}

func (s *Server) getAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if _, err := requestArgs(ctx, rq.Route); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	_, a, err := s.oneAppPassword(ctx, rq, "rest_cannot_read_application_password", "Sorry, you are not allowed to read this application password.")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, appPasswordView(rq, a))
}

func (s *Server) updateAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	in, err := decodeAppPassword(ctx, false)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, a, err := s.oneAppPassword(ctx, rq, "rest_cannot_edit_application_password", "Sorry, you are not allowed to edit this application password.")
	if err == nil && in.Name != nil && *in.Name != a.Name {
		var taken bool
		if taken, err = s.nameTaken(ctx, rq, u.ID, *in.Name, a.UUID); err == nil && taken {
			err = duplicateAppName
		}
		if err == nil {
			err = s.db.RenameAppPassword(ctx, rq.Info, u.ID, a.UUID, *in.Name)
			a.Name = *in.Name
		}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, nil, 200, appPasswordView(rq, a))
}

func (s *Server) deleteAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	u, a, err := s.oneAppPassword(ctx, rq, "rest_cannot_delete_application_password", "Sorry, you are not allowed to delete this application password.")
	if err == nil {
		err = s.db.RevokeAppPassword(ctx, rq.Info, u.ID, a.UUID)
	}
	if schema.ErrorCode(err) == schema.CodeNotFound {
		err = appPasswordNotFound
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, nil, 200, map[string]any{"deleted": true, "previous": appPasswordView(rq, a)})
}

func (s *Server) introspectAppPassword(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if _, err := requestArgs(ctx, rq.Route); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	u, err := s.targetUser(ctx, rq, "user_id")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if rq.User == nil || rq.User.ID != u.ID {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_cannot_introspect_app_password_for_non_authenticated_user", Status: 401,
			Message: "The authenticated application password can only be introspected for the current user."})
		return
	}
	var a *store.AppPasswordInfo
	if hash := s.requestPasswordHash(ctx); hash != nil {
		a, err = s.db.AppPasswordByHash(ctx, rq.Info, hash)
	}
	if a == nil || schema.ErrorCode(err) == schema.CodeNotFound {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_no_authenticated_app_password", Message: "Cannot introspect application password."})
		return
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.cmsAnswer(ctx, rq, 200, appPasswordView(rq, a))
}
