package origin

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The application-password authorization page, {base}/cms-admin/authorize-application.php
// (schema.AuthorizeAppURL): an application sends a user there with app_name, app_id,
// success_url and reject_url; the user signs in (login and an existing application password),
// approves or rejects, and is redirected to success_url with site_url, user_login and the new
// password, or to reject_url with success=false, as WordPress does.
//
// Safety: the sign-in sets a short-lived session cookie (15 minutes, HMAC-signed with the server
// secret, bound to the tenant and user; HttpOnly, SameSite=Strict, Secure on an https store,
// Path /cms-admin). Every POST carries a CSRF token derived from the session (or, for the
// sign-in form, from a per-form nonce cookie), so another site cannot submit the forms.
// Redirect targets are only the caller's success_url or reject_url, which must be absolute and
// not http (https or an application's own scheme; javascript:, data:, vbscript: and file: are
// refused), and the page's own URL; nothing else is ever a redirect target. The page may not be
// framed, and is never cached.

const (
	adminSessionCookie = pipeline.AdminSessionCookie
	adminNonceCookie   = "vitrine_admin_nonce"
	adminSessionTTL    = 15 * time.Minute
)

func (s *Server) authorizeHandlers() {
	s.bind("cms.authorize", s.authorizeApp)
}

// authorizeRequest is the application's request, carried through every form of the page.
type authorizeRequest struct {
	AppName, AppID, SuccessURL, RejectURL string
}

func (a *authorizeRequest) query() string {
	v := url.Values{}
	for k, x := range map[string]string{"app_name": a.AppName, "app_id": a.AppID, "success_url": a.SuccessURL, "reject_url": a.RejectURL} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return v.Encode()
}

// validRedirect checks a success or reject URL: absolute, not http, not a script or local scheme.
func validRedirect(name, raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "The " + name + " URL is not a valid URL."
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "The " + name + " URL must be served over a secure connection."
	case "javascript", "data", "vbscript", "file", "blob", "about":
		return "The " + name + " URL uses a forbidden scheme."
	}
	if strings.ToLower(u.Scheme) == "https" && u.Host == "" {
		return "The " + name + " URL is not a valid URL."
	}
	return ""
}

// addQuery appends parameters to a URL, keeping its own.
func addQuery(raw string, v url.Values) string {
	u, _ := url.Parse(raw)
	q := u.Query()
	for k, x := range v {
		q[k] = x
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func (s *Server) adminMAC(parts ...string) []byte {
	mac := hmac.New(sha256.New, s.cfg.Secret)
	mac.Write([]byte("vitrine-admin-session\x00"))
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	return mac.Sum(nil)
}

// sessionToken signs (tenant, user, expiry).
func (s *Server) sessionToken(tenantID string, user schema.UserID, exp time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(user))
	binary.BigEndian.PutUint64(b[8:], uint64(exp.Unix()))
	mac := s.adminMAC(tenantID, string(b[:]))
	return base64.RawURLEncoding.EncodeToString(append(b[:], mac...))
}

// sessionUser verifies a session token and returns its user id.
func (s *Server) sessionUser(tenantID, tok string, now time.Time) (schema.UserID, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) != 16+sha256.Size {
		return 0, false
	}
	if !hmac.Equal(raw[16:], s.adminMAC(tenantID, string(raw[:16]))) {
		return 0, false
	}
	if now.Unix() > int64(binary.BigEndian.Uint64(raw[8:16])) {
		return 0, false
	}
	return schema.UserID(binary.BigEndian.Uint64(raw[:8])), true
}

func (s *Server) csrfFor(binding string) string {
	return base64.RawURLEncoding.EncodeToString(s.adminMAC("csrf", binding))
}

// setAdminCookie sets a cookie of the administration pages: Path /cms-admin, HttpOnly,
// SameSite=Strict, Secure on an https store; maxAge -1 deletes it.
func setAdminCookie(ctx *fasthttp.RequestCtx, rq *handler.Request, name, value string, maxAge int) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath(schema.CMSAdminPath)
	c.SetHTTPOnly(true)
	c.SetSecure(strings.HasPrefix(rq.Info.BaseURL, "https://"))
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetMaxAge(maxAge)
	ctx.Response.Header.SetCookie(c)
}

// renderAdminPage answers an administration page: never cached or framed, no referrer, and a
// Content-Security-Policy of nothing but inline styles plus the page's own directives (csp:
// its script source, its form targets).
func (s *Server) renderAdminPage(ctx *fasthttp.RequestCtx, rq *handler.Request, page *template.Template, view any, status int, csp string) {
	h := &ctx.Response.Header
	h.Set(fasthttp.HeaderCacheControl, "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"+csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.SetContentType("text/html; charset=utf-8")
	var buf bytes.Buffer
	if err := page.Execute(&buf, view); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetBody(buf.Bytes())
	s.http.Observe(ctx, pipeline.RouteIndex(rq.Route), status)
}

// redirectAdmin answers 303 to one of the administration pages' own URLs.
func (s *Server) redirectAdmin(ctx *fasthttp.RequestCtx, rq *handler.Request, to string) {
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	ctx.Response.Header.Set(fasthttp.HeaderLocation, to)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
	s.http.Observe(ctx, pipeline.RouteIndex(rq.Route), fasthttp.StatusSeeOther)
}

// adminSignIn is the sign-in the administration pages share. It returns the user of a valid
// session. Without one, a sign-in POST (action=signin) with the right CSRF token and an
// application password starts a session and redirects to back (done true); otherwise it returns
// the CSRF token of a new sign-in form and the error to show with it.
func (s *Server) adminSignIn(ctx *fasthttp.RequestCtx, rq *handler.Request, post bool, arg func(string) string, back string) (user *schema.User, csrf, errMsg string, done bool) {
	now := time.Now()
	if tok := ctx.Request.Header.Cookie(adminSessionCookie); len(tok) > 0 {
		if id, ok := s.sessionUser(rq.Info.ID, string(tok), now); ok {
			if u, err := s.userByID(ctx, rq, id); err == nil {
				return u, "", "", false
			}
		}
	}
	// Sign-in: the form's CSRF token is bound to a nonce cookie set with the form.
	nonce := string(ctx.Request.Header.Cookie(adminNonceCookie))
	if post && arg("action") == "signin" {
		if nonce == "" || !hmac.Equal([]byte(arg("csrf")), []byte(s.csrfFor("signin:"+nonce))) {
			errMsg = "Your sign-in form expired. Please try again."
		} else if u, err := s.db.Authenticate(ctx, rq.Info, arg("login"), schema.HashAppPassword(s.cfg.Secret, arg("password"))); err != nil {
			errMsg = "Unknown username or incorrect application password."
		} else {
			setAdminCookie(ctx, rq, adminSessionCookie, s.sessionToken(rq.Info.ID, u.ID, now.Add(adminSessionTTL)), int(adminSessionTTL/time.Second))
			setAdminCookie(ctx, rq, adminNonceCookie, "", -1)
			s.redirectAdmin(ctx, rq, back)
			return nil, "", "", true
		}
	}
	nonce = schema.NewAppPassword()
	setAdminCookie(ctx, rq, adminNonceCookie, nonce, int(adminSessionTTL/time.Second))
	return nil, s.csrfFor("signin:" + nonce), errMsg, false
}

var authorizePage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}} &lsaquo; {{.Site}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1d2327}
form{margin:1rem 0}label{display:block;margin:.5rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.5rem 1rem;margin-right:.5rem}.error{color:#b32d2e}code{font-size:1.2rem}</style></head>
<body><h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
{{if eq .Step "signin"}}
<p>Sign in to {{.Site}} to continue{{if .Req.AppName}} connecting <strong>{{.Req.AppName}}</strong>{{end}}.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="action" value="signin"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="login">Username or email address</label><input type="text" id="login" name="login" autocomplete="username" required>
<label for="password">Application password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<p><button type="submit" id="signin">Sign in</button></p></form>
{{else if eq .Step "approve"}}
<p>Would you like to give <strong id="app-name">{{if .Req.AppName}}{{.Req.AppName}}{{else}}this application{{end}}</strong> access to your account
(<strong id="user-login">{{.Login}}</strong>) on {{.Site}}? You should only do this if you trust the application.</p>
{{if .Req.SuccessURL}}<p>You will be sent to <code>{{.SuccessHost}}</code>.</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="action" value="approve" id="approve">Yes, I approve of this connection</button>
<button type="submit" name="action" value="reject" id="reject">No, I do not approve of this connection</button></form>
{{else if eq .Step "password"}}
<p>Your new password for <strong>{{.Req.AppName}}</strong> is:</p><p><code id="new-password">{{.Password}}</code></p>
<p>Be sure to save this in a safe location. You will not be able to retrieve it.</p>
{{end}}
</body></html>`))

type authorizeView struct {
	Title, Site, Step, Error, Action, CSRF, Login, SuccessHost, Password string
	Req                                                                  authorizeRequest
}

func (s *Server) authorizeApp(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	post := string(ctx.Method()) == "POST"
	arg := func(name string) string {
		if post {
			if v := ctx.PostArgs().Peek(name); v != nil {
				return string(v)
			}
		}
		return string(ctx.QueryArgs().Peek(name))
	}
	req := authorizeRequest{AppName: arg("app_name"), AppID: arg("app_id"), SuccessURL: arg("success_url"), RejectURL: arg("reject_url")}
	view := authorizeView{Title: "Authorize Application", Site: rq.Info.Name, Req: req,
		Action: schema.AuthorizeAppPath + "?" + req.query()}
	render := func(status int) { s.renderAdminPage(ctx, rq, authorizePage, view, status, "") }
	redirect := func(to string) { s.redirectAdmin(ctx, rq, to) }
	// The application's request is checked first, as WordPress does: nothing else happens with
	// a bad one.
	msg := validRedirect("success", req.SuccessURL)
	if msg == "" {
		msg = validRedirect("reject", req.RejectURL)
	}
	if msg == "" && req.AppID != "" && !schema.ValidUUID(req.AppID) {
		msg = "The application ID must be a UUID."
	}
	if msg == "" && len(req.AppName) > 200 {
		msg = "The application name is too long."
	}
	if msg != "" {
		view.Title, view.Step, view.Error = "Cannot Authorize Application", "", msg
		render(fasthttp.StatusBadRequest)
		return
	}
	now := time.Now()
	user, csrf, errMsg, done := s.adminSignIn(ctx, rq, post, arg, view.Action)
	if done {
		return
	}
	action := arg("action")
	if user == nil {
		view.Step, view.CSRF, view.Error = "signin", csrf, errMsg
		status := 200
		if view.Error != "" {
			status = fasthttp.StatusUnauthorized
		}
		render(status)
		return
	}
	session := string(ctx.Request.Header.Cookie(adminSessionCookie))
	view.Login, view.CSRF = user.Login, s.csrfFor("approve:"+session)
	if u, err := url.Parse(req.SuccessURL); err == nil {
		view.SuccessHost = u.Host
		if view.SuccessHost == "" {
			view.SuccessHost = u.Scheme + ":"
		}
	}
	if post && (action == "approve" || action == "reject") {
		if !hmac.Equal([]byte(arg("csrf")), []byte(view.CSRF)) {
			view.Step, view.Error = "approve", "Your session expired or the form was not sent from this page. Please try again."
			render(fasthttp.StatusForbidden)
			return
		}
		if action == "reject" {
			to := req.RejectURL
			if to == "" {
				to = req.SuccessURL
			}
			if to == "" {
				view.Step, view.Title = "", "Application Rejected"
				render(200)
				return
			}
			redirect(addQuery(to, url.Values{"success": {"false"}}))
			return
		}
		name := req.AppName
		if strings.TrimSpace(name) == "" {
			name = "Application " + strconv.FormatInt(now.Unix(), 10)
		}
		v, err := s.createAppPasswordFor(ctx, rq, user, name, req.AppID)
		if err != nil {
			view.Step, view.Error = "approve", schema.AsError(err).Message
			render(fasthttp.StatusConflict)
			return
		}
		if req.SuccessURL == "" {
			view.Step, view.Password, view.Req.AppName = "password", v.Password, name
			render(200)
			return
		}
		redirect(addQuery(req.SuccessURL, url.Values{"site_url": {rq.Info.BaseURL}, "user_login": {user.Login}, "password": {v.Password}}))
		return
	}
	view.Step = "approve"
	render(200)
}

func (s *Server) userByID(ctx *fasthttp.RequestCtx, rq *handler.Request, id schema.UserID) (*schema.User, error) {
	var u *schema.User
	err := s.db.Tx(ctx, func(tx *store.Tx) (err error) {
		u, err = tx.User(ctx, rq.Info, id)
		return err
	})
	return u, err
}
