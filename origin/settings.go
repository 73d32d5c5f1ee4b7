package origin

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/keys"
	"vitrine/origin/store"
	"vitrine/schema"
)

// The store settings page for server keys, {base}/cms-admin/store-settings/api-keys
// (schema.APIKeysPagePath): an administrator signs in (login and an application password, the
// same session as the authorization page), lists the store's keys (redacted, scopes, status,
// expiry, last use), creates one (its plaintext shown once, with a copy button), rolls one (the
// new plaintext shown once; the old key works for a day more) or revokes one. Every POST carries
// a CSRF token bound to the session; the page may not be framed and is never cached; its one
// script (the copy button) runs under a per-response CSP nonce.

func (s *Server) settingsHandlers() {
	s.bind("admin.settings.apikeys", s.apiKeysPage)
	s.bind("admin.settings.webhooks", s.webhooksPage) // settings_webhooks.go
}

// settingsSignIn is the part every settings page shares: its error, and the sign-in form while
// no administrator is signed in (the page's own content follows only once one is).
const settingsSignIn = `{{define "signin"}}{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
{{if .SignIn}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="action" value="signin"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="login">Username or email address</label><input type="text" id="login" name="login" autocomplete="username" required>
<label for="password">Application password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<p><button type="submit" id="signin">Sign in</button></p></form>
{{else if not .Refused}}
<p>Signed in as <strong id="user-login">{{.Login}}</strong>.</p>{{end}}{{end}}`

var apiKeysPage = template.Must(template.Must(template.New("keys").Parse(settingsSignIn)).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>API Keys &lsaquo; {{.Site}}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2327}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #dcdcde;vertical-align:top}
th{background:#f6f7f7}label{display:block;margin:.5rem 0 .2rem}input[type=text],input[type=password],input[type=date]{padding:.4rem;box-sizing:border-box;width:100%;max-width:24rem}
fieldset{border:1px solid #dcdcde;padding:.5rem 1rem;margin:.5rem 0;max-width:24rem}button{padding:.4rem .9rem;margin:.2rem .3rem .2rem 0}
.error{color:#b32d2e}.notice{background:#fcf9e8;border-left:4px solid #dba617;padding:.8rem 1rem;margin:1rem 0}
.new-key{font:1rem ui-monospace,monospace;background:#f6f7f7;padding:.4rem .6rem;word-break:break-all;display:inline-block}
.status-revoked,.status-expired{color:#787c82}.inline{display:inline}</style></head>
<body><h1>API Keys</h1><p>{{.Site}} &middot; server keys for back-office integrations (<code>Authorization: Bearer esk_…</code>).</p>
{{template "signin" .}}
{{if and (not .SignIn) (not .Refused)}}
{{if .NewKey}}<div class="notice" id="new-key-notice"><p><strong>{{.NewKeyName}}</strong>: copy this key now. It will not be shown again.</p>
<p><span class="new-key" id="new-key">{{.NewKey}}</span> <button type="button" id="copy">Copy</button> <span id="copied"></span></p>
{{if .NewKeyNote}}<p>{{.NewKeyNote}}</p>{{end}}</div>
<script nonce="{{.Nonce}}">document.getElementById('copy').addEventListener('click',function(){navigator.clipboard.writeText(document.getElementById('new-key').textContent).then(function(){document.getElementById('copied').textContent='Copied'},function(){document.getElementById('copied').textContent='Select the key and copy it'})});</script>{{end}}
<h2>Keys</h2>
{{if .Keys}}<table id="keys"><thead><tr><th>Name</th><th>Key</th><th>Scopes</th><th>Status</th><th>Expires</th><th>Last used</th><th></th></tr></thead><tbody>
{{range .Keys}}<tr data-id="{{.ID}}"><td class="name">{{.Name}}</td><td><code>{{.Redacted}}</code></td><td class="scopes">{{range $i, $s := .Scopes}}{{if $i}}, {{end}}{{$s}}{{else}}<em>none</em>{{end}}</td>
<td class="status status-{{.Status}}">{{.Status}}</td><td>{{.ExpiresAt.Format "2006-01-02 15:04 UTC"}}</td><td>{{if .LastUsedAt}}{{.LastUsedAt.Format "2006-01-02 15:04 UTC"}}{{else}}never{{end}}</td>
<td>{{if eq .Status "active"}}{{if not .RolledTo}}<form method="post" action="{{$.Action}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="roll" class="roll">Roll</button></form>{{end}}
<form method="post" action="{{$.Action}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="revoke" class="revoke">Revoke</button></form>{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p id="no-keys">No keys yet.</p>{{end}}
<h2>Create a key</h2>
<form method="post" action="{{.Action}}" id="create">
<input type="hidden" name="action" value="create"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="name">Name</label><input type="text" id="name" name="name" maxlength="100" required placeholder="Warehouse">
<fieldset><legend>Scopes</legend>
{{range .Scopes}}<label><input type="checkbox" name="scopes" value="{{.}}" id="scope-{{.}}"> {{.}}</label>{{end}}</fieldset>
<label for="expires">Expires (optional; default one year)</label><input type="date" id="expires" name="expires">
<p><button type="submit" id="create-key">Create key</button></p></form>
{{end}}
</body></html>`))

// settingsPage is what every store settings page shows besides its own content.
type settingsPage struct {
	Site, Action, CSRF, Error, Login, Nonce string
	SignIn                                  bool
	// Refused: signed in, but not an administrator.
	Refused bool
}

// settingsRequest reads what every settings page needs of its request: whether it is a POST, its
// form values (none on a GET), and a fresh CSP nonce for the page's script.
func settingsRequest(ctx *fasthttp.RequestCtx) (post bool, arg func(string) string, nonce string) {
	post = string(ctx.Method()) == "POST"
	arg = func(name string) string {
		if post {
			return string(ctx.PostArgs().Peek(name))
		}
		return ""
	}
	var nb [16]byte
	rand.Read(nb[:])
	return post, arg, base64.RawStdEncoding.EncodeToString(nb[:])
}

// openSettings is what every store settings page does before its own work: the sign-in (the
// authorization page's session), the administrator check and, on a POST, the CSRF check of
// the token bound to the session and the page (scope). When proceed is false the answer is
// written (the sign-in form, or the refusal, rendered by render); csrfOK says a POST may act.
func (s *Server) openSettings(ctx *fasthttp.RequestCtx, rq *handler.Request, p *settingsPage, scope, refusal string, post bool,
	arg func(string) string, render func(status int)) (proceed, csrfOK bool) {
	user, csrf, errMsg, done := s.adminSignIn(ctx, rq, post, arg, p.Action)
	if done {
		return false, false
	}
	if user == nil {
		p.SignIn, p.CSRF, p.Error = true, csrf, errMsg
		status := 200
		if p.Error != "" {
			status = fasthttp.StatusUnauthorized
		}
		render(status)
		return false, false
	}
	p.Login = user.Login
	if !user.Role.Can(schema.CapManageOptions) {
		p.Error, p.Refused = refusal, true
		render(fasthttp.StatusForbidden)
		return false, false
	}
	p.CSRF = s.csrfFor(scope + ":" + string(ctx.Request.Header.Cookie(adminSessionCookie)))
	if post && !hmac.Equal([]byte(arg("csrf")), []byte(p.CSRF)) {
		p.Error = "Your session expired or the form was not sent from this page. Please try again."
		return true, false
	}
	return true, true
}

type apiKeysView struct {
	settingsPage
	Keys                           []*keys.View
	Scopes                         []schema.Scope
	NewKey, NewKeyName, NewKeyNote string
}

// apiKeysPage serves the API Keys settings page.
func (s *Server) apiKeysPage(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	post, arg, nonce := settingsRequest(ctx)
	view := apiKeysView{settingsPage: settingsPage{Site: rq.Info.Name, Action: schema.APIKeysPagePath, Nonce: nonce},
		Scopes: schema.Scopes}
	render := func(status int) {
		s.renderAdminPage(ctx, rq, apiKeysPage, view, status, "; script-src 'nonce-"+view.Nonce+"'; form-action 'self'")
	}
	now := time.Now()
	action := arg("action")
	proceed, csrfOK := s.openSettings(ctx, rq, &view.settingsPage, "apikeys", "Only administrators manage API keys.", post, arg, render)
	if !proceed {
		return
	}
	status := 200
	if post {
		if !csrfOK {
			status = fasthttp.StatusForbidden
		} else if err := s.apiKeysAction(ctx, rq, action, arg, &view, now); err != nil {
			view.Error = schema.AsError(err).Message
			status = pipeline.Status(schema.AsError(err))
		}
	}
	list, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]*store.ServerKey, error) { return tx.ServerKeys(ctx, rq.Info) })
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	for _, k := range list {
		view.Keys = append(view.Keys, keys.ViewOf(k, now))
	}
	render(status)
}

// apiKeysAction carries out a POST of the signed-in page: create, roll or revoke.
func (s *Server) apiKeysAction(ctx *fasthttp.RequestCtx, rq *handler.Request, action string, arg func(string) string, view *apiKeysView, now time.Time) error {
	switch action {
	case "create":
		var scopes []schema.Scope
		ctx.PostArgs().VisitAll(func(k, v []byte) {
			if string(k) == "scopes" {
				scopes = append(scopes, schema.Scope(v))
			}
		})
		var expires time.Time
		if e := arg("expires"); e != "" {
			d, err := time.Parse("2006-01-02", e)
			if err != nil {
				return schema.Invalid("expires", "expires is a date (YYYY-MM-DD)")
			}
			expires = d.Add(24*time.Hour - time.Second)
		}
		plain, k, err := keys.New(s.cfg.Secret, strings.TrimSpace(arg("name")), scopes, expires, now)
		if err != nil {
			return err
		}
		if err := s.db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateServerKey(ctx, rq.Info, k) }); err != nil {
			return err
		}
		view.NewKey, view.NewKeyName = plain, k.Name
	case "roll":
		plain, next, err := keys.New(s.cfg.Secret, "rolled", nil, time.Time{}, now)
		if err != nil {
			return err
		}
		until := now.Add(keys.DefaultOverlap)
		next, err = store.TxValue(ctx, s.db, func(tx *store.Tx) (*store.ServerKey, error) {
			return tx.RollServerKey(ctx, rq.Info, arg("id"), next, until)
		})
		if err != nil {
			return err
		}
		view.NewKey, view.NewKeyName = plain, next.Name
		view.NewKeyNote = "The key it replaces keeps working until " + until.UTC().Format("2006-01-02 15:04 UTC") + "."
	case "revoke":
		_, err := store.TxValue(ctx, s.db, func(tx *store.Tx) (*store.ServerKey, error) { return tx.RevokeServerKey(ctx, rq.Info, arg("id")) })
		return err
	default:
		return schema.Invalid("action", "unknown action")
	}
	return nil
}
