package origin

import (
	"bytes"
	"encoding/json"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/webhooks"
	"vitrine/schema"
)

// The store settings page for webhooks, {base}/cms-admin/store-settings/webhooks
// (schema.WebhooksPagePath), beside the API Keys page and made the same way: an administrator
// signs in (the session the authorization page shares), lists the store's endpoints (URL, kinds,
// allowlist, enabled or disabled and why, failing since), registers one (its signing secret
// shown once, with a copy button), rotates a secret (the new one shown once), enables, disables
// or deletes an endpoint, sends it a test event, and reads its delivery log (?endpoint=<id>):
// every delivery with every attempt's request headers and answer. The operations are
// webhooks.Service's, the admin API's own. Every POST carries a CSRF token bound to the session;
// the page may not be framed and is never cached; its one script (the copy button) runs under a
// per-response CSP nonce.

// webhookLogPage is how many deliveries one page of the delivery log shows.
const webhookLogPage = 20

var webhooksPage = template.Must(template.Must(template.New("webhooks").Funcs(template.FuncMap{
	"when":       formatWhen,
	"statusText": fasthttp.StatusMessage,
	"pretty":     prettyJSON,
}).Parse(settingsSignIn)).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Webhooks &lsaquo; {{.Site}}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2327}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #dcdcde;vertical-align:top}
th{background:#f6f7f7}label{display:block;margin:.5rem 0 .2rem}input[type=text],input[type=password],input[type=url],textarea{padding:.4rem;box-sizing:border-box;width:100%;max-width:32rem;font:inherit}
textarea{font:14px/1.4 ui-monospace,monospace}fieldset{border:1px solid #dcdcde;padding:.5rem 1rem;margin:.5rem 0}
fieldset label{margin:.1rem 0;font:14px/1.5 ui-monospace,monospace}.kinds{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:0 1rem}
button{padding:.4rem .9rem;margin:.2rem .3rem .2rem 0}.error{color:#b32d2e}.hint{color:#646970;font-size:.9rem;margin:.2rem 0}
.notice{background:#fcf9e8;border-left:4px solid #dba617;padding:.8rem 1rem;margin:1rem 0}.notice p{margin:.2rem 0}
.notice-error{background:#fcf0f1;border-left-color:#d63638}.updated{background:#edfaef;border-left:4px solid #00a32a;padding:.6rem 1rem;margin:1rem 0}
.new-secret{font:1rem ui-monospace,monospace;background:#f6f7f7;padding:.4rem .6rem;word-break:break-all;display:inline-block}
.url{font:14px ui-monospace,monospace;word-break:break-all}.muted{color:#646970;font-size:.9rem}
.status-enabled,.state-delivered{color:#008a20;font-weight:600}.status-disabled,.state-failed{color:#b32d2e;font-weight:600}
.state-pending{color:#996800;font-weight:600}.state-cancelled{color:#787c82;font-weight:600}
#error{background:#fcf0f1;border-left:4px solid #d63638;padding:.6rem 1rem}#endpoints td:first-child{min-width:16rem}
.inline{display:inline}.actions{white-space:nowrap}.actions button{display:block;width:100%;margin:.15rem 0;padding:.25rem .6rem}
.actions a{display:block;margin:.15rem 0 .3rem}tr.selected td{background:#f0f6fc}
.delivery{border:1px solid #dcdcde;border-radius:4px;padding:.6rem .9rem;margin:.7rem 0}.delivery-head{display:flex;gap:.6rem;align-items:baseline;flex-wrap:wrap}
.delivery-head form{margin-left:auto}details{margin:.35rem 0}summary{cursor:pointer}details>div{padding:.2rem 0 .2rem 1.1rem}
h4{margin:.5rem 0 .2rem;font-size:.9rem}pre{white-space:pre-wrap;word-break:break-all;background:#f6f7f7;padding:.5rem .6rem;margin:.3rem 0;font-size:13px}
table.headers{margin:.2rem 0;font-size:13px}table.headers th,table.headers td{padding:.15rem .5rem;background:none;border-bottom:1px solid #f0f0f1}
table.headers th{font-weight:600;white-space:nowrap;width:1%}table.headers td{font-family:ui-monospace,monospace;word-break:break-all}
nav a{margin-right:1rem}</style></head>
<body><nav class="muted"><a href="{{.APIKeys}}">API Keys</a><strong>Webhooks</strong></nav>
<h1>Webhooks</h1><p>{{.Site}} &middot; signed deliveries of the store's events to your endpoints (<code>X-Webhook-Signature: sha256=…</code>).</p>
{{template "signin" .}}
{{if and (not .SignIn) (not .Refused)}}
{{if .Notices}}<div id="notices">{{range .Notices}}<div class="notice notice-error notice-disabled" data-id="{{.EndpointID}}"><p><strong>Endpoint disabled</strong> {{when .At}}: <span class="url">{{.URL}}</span></p><p>Reason: {{.Reason}}. It receives no events until it is enabled again.</p></div>{{end}}</div>{{end}}
{{if .Message}}<p class="updated" id="message">{{.Message}}</p>{{end}}
{{if .NewSecret}}<div class="notice" id="new-secret-notice"><p>Signing secret of <span class="url">{{.NewSecretFor}}</span>: copy it now. It will not be shown again.</p>
<p><span class="new-secret" id="new-secret">{{.NewSecret}}</span> <button type="button" id="copy">Copy</button> <span id="copied"></span></p>
{{if .NewSecretNote}}<p>{{.NewSecretNote}}</p>{{end}}</div>
<script nonce="{{.Nonce}}">document.getElementById('copy').addEventListener('click',function(){navigator.clipboard.writeText(document.getElementById('new-secret').textContent).then(function(){document.getElementById('copied').textContent='Copied'},function(){document.getElementById('copied').textContent='Select the secret and copy it'})});</script>{{end}}
<h2>Endpoints</h2>
{{if .Endpoints}}<table id="endpoints"><thead><tr><th>Endpoint</th><th>Events</th><th>IP allowlist</th><th>Status</th><th></th></tr></thead><tbody>
{{range .Endpoints}}<tr data-id="{{.ID}}"{{if eq .ID $.Selected}} class="selected"{{end}}>
<td><span class="url">{{.URL}}</span>{{if .Description}}<div class="muted description">{{.Description}}</div>{{end}}<div class="muted">Created {{when .CreatedAt}}</div></td>
<td class="events">{{range $i, $k := .Events}}{{if $i}}, {{end}}<code>{{$k}}</code>{{else}}all{{end}}</td>
<td class="allowlist">{{range .IPAllowlist}}<code>{{.}}</code><br>{{else}}<span class="muted">none</span>{{end}}</td>
<td>{{if .Enabled}}<span class="status status-enabled">enabled</span>{{else}}<span class="status status-disabled">disabled</span><div class="muted reason">{{.DisabledReason}}</div>{{end}}
{{if .FailingSince}}<div class="error failing">Failing since {{when .FailingSince}}</div>{{end}}
{{if .PreviousUntil}}<div class="muted">Previous secret signs too until {{when .PreviousUntil}}</div>{{end}}</td>
<td class="actions"><a href="{{$.Path}}?endpoint={{.ID}}" class="log">Delivery log</a>
{{if .Enabled}}<form method="post" action="{{$.Path}}?endpoint={{.ID}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="test" class="test">Send test event</button></form>
<form method="post" action="{{$.Action}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="disable" class="disable">Disable</button></form>
{{else}}<form method="post" action="{{$.Action}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="enable" class="enable">Enable</button></form>{{end}}
<form method="post" action="{{$.Action}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="rotate" class="rotate">Rotate secret</button></form>
<form method="post" action="{{if eq .ID $.Selected}}{{$.Path}}{{else}}{{$.Action}}{{end}}" class="inline"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" name="action" value="delete" class="delete">Delete</button></form></td></tr>
{{end}}</tbody></table>{{else}}<p id="no-endpoints">No endpoints yet.</p>{{end}}
{{with .Log}}<h2 id="log">Delivery log</h2>
<p>Deliveries to <span class="url">{{.Endpoint.URL}}</span>, newest first: {{.Total}} in all. <a href="{{$.Path}}">Close</a></p>
{{range .Deliveries}}<div class="delivery" data-id="{{.ID}}">
<div class="delivery-head"><strong class="kind">{{.Kind}}</strong><span class="state state-{{.State}}">{{.State}}</span>
<span class="attempts">{{.Attempts}} {{if eq .Attempts 1}}attempt{{else}}attempts{{end}}</span><span class="muted">{{when .CreatedAt}}{{if .NextAttemptAt}} &middot; next attempt {{when .NextAttemptAt}}{{end}}</span>
{{if $.LogEnabled}}<form method="post" action="{{$.Action}}"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.EndpointID}}"><input type="hidden" name="delivery" value="{{.ID}}"><button type="submit" name="action" value="redeliver" class="redeliver">Redeliver</button></form>{{end}}</div>
<div class="muted">Event <code class="event-id">{{.EventID}}</code> &middot; {{.Source}}</div>
<details class="payload"><summary>Payload</summary><pre>{{pretty .Payload}}</pre></details>
{{range .Log}}<details class="attempt"><summary>Attempt {{.Attempt}}: {{if .ResponseStatus}}<span class="response-status">{{.ResponseStatus}} {{statusText .ResponseStatus}}</span>{{else}}<span class="error">no answer</span>{{end}} &middot; {{.DurationMS}} ms &middot; {{when .StartedAt}}</summary><div>
{{if .Error}}<p class="error attempt-error">{{.Error}}</p>{{end}}
<h4>Request headers</h4>{{if .RequestHeaders}}<table class="headers request-headers">{{range $k, $v := .RequestHeaders}}<tr><th>{{$k}}</th><td>{{$v}}</td></tr>{{end}}</table>{{else}}<p class="muted">Not recorded.</p>{{end}}
{{if .RemoteAddr}}<p class="muted">Sent to {{.RemoteAddr}}</p>{{end}}
{{if .ResponseStatus}}<h4>Response: <span class="response-status">{{.ResponseStatus}} {{statusText .ResponseStatus}}</span></h4>
{{if .ResponseHeaders}}<table class="headers response-headers">{{range $k, $v := .ResponseHeaders}}<tr><th>{{$k}}</th><td>{{$v}}</td></tr>{{end}}</table>{{end}}
{{if .ResponseBody}}<pre class="response-body">{{.ResponseBody}}</pre>{{else}}<p class="muted">Empty body.</p>{{end}}{{end}}
</div></details>{{else}}<p class="muted">No attempt yet.</p>{{end}}
</div>{{else}}<p id="no-deliveries">No deliveries yet.{{if $.LogEnabled}} Send a test event to see one.{{end}}</p>{{end}}
{{if or .Prev .Next}}<p>{{if .Prev}}<a href="{{.Prev}}" id="newer">&larr; Newer</a> {{end}}Page {{.Page}} of {{.Pages}}{{if .Next}} <a href="{{.Next}}" id="older">Older &rarr;</a>{{end}}</p>{{end}}
{{end}}
<h2>Add an endpoint</h2>
<form method="post" action="{{.Action}}" id="create">
<input type="hidden" name="action" value="create"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="url">URL</label><input type="url" id="url" name="url" maxlength="2048" required placeholder="https://example.com/webhooks" value="{{.Form.URL}}">
<p class="hint">https; http only to an IP address the allowlist names.</p>
<fieldset><legend>Events (none checked: every kind)</legend><div class="kinds">
{{range .Form.Kinds}}<label><input type="checkbox" name="events" value="{{.Kind}}"{{if .Checked}} checked{{end}}> {{.Kind}}</label>{{end}}</div></fieldset>
<label for="allowlist">IP allowlist (optional; one CIDR or address per line)</label><textarea id="allowlist" name="allowlist" rows="3" placeholder="203.0.113.0/24">{{.Form.Allowlist}}</textarea>
<p class="hint">When set, deliveries go only to these addresses, private ones included.</p>
<label for="description">Description (optional)</label><input type="text" id="description" name="description" maxlength="500" value="{{.Form.Description}}">
<p><button type="submit" id="create-endpoint">Add endpoint</button></p></form>
{{end}}
</body></html>`))

type webhooksView struct {
	settingsPage
	Path, APIKeys string
	Message       string
	Endpoints     []*webhooks.Endpoint
	Notices       []webhookNotice
	// Selected is the endpoint whose delivery log is shown (?endpoint=).
	Selected                               string
	Log                                    *webhookLog
	LogEnabled                             bool
	NewSecret, NewSecretFor, NewSecretNote string
	Form                                   webhookForm
}

// webhookNotice is a webhooks.Notice with its endpoint's URL.
type webhookNotice struct {
	webhooks.Notice
	URL string
}

// webhookLog is one page of an endpoint's delivery log; Prev and Next link the pages around it.
type webhookLog struct {
	Endpoint           *webhooks.Endpoint
	Deliveries         []*webhookDelivery
	Total, Page, Pages int
	Prev, Next         string
}

// webhookDelivery is a delivery of the log with its endpoint's id, for its redeliver form.
type webhookDelivery struct {
	*webhooks.Delivery
	EndpointID string
}

// webhookForm is the create form as last sent, shown again with its error.
type webhookForm struct {
	URL, Allowlist, Description string
	Kinds                       []kindOption
}

type kindOption struct {
	Kind    string
	Checked bool
}

func newWebhookForm(checked []string) webhookForm {
	var f webhookForm
	for _, k := range schema.EventKinds {
		f.Kinds = append(f.Kinds, kindOption{Kind: k, Checked: slices.Contains(checked, k)})
	}
	return f
}

// webhooksPage serves the Webhooks settings page.
func (s *Server) webhooksPage(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	post, arg, nonce := settingsRequest(ctx)
	view := webhooksView{settingsPage: settingsPage{Site: rq.Info.Name, Action: schema.WebhooksPagePath, Nonce: nonce},
		Path: schema.WebhooksPagePath, APIKeys: schema.APIKeysPagePath, Form: newWebhookForm(nil)}
	render := func(status int) {
		s.renderAdminPage(ctx, rq, webhooksPage, view, status, "; script-src 'nonce-"+view.Nonce+"'; form-action 'self'")
	}
	// The endpoint whose log is open; only a well-formed id is ever put back into a URL.
	selected := string(ctx.QueryArgs().Peek("endpoint"))
	badSelection := selected != "" && !schema.ValidUUID(selected)
	if badSelection {
		selected = ""
	}
	if selected != "" {
		view.Action += "?endpoint=" + selected
	}
	proceed, csrfOK := s.openSettings(ctx, rq, &view.settingsPage, "webhooks", "Only administrators manage webhooks.", post, arg, render)
	if !proceed {
		return
	}
	status := 200
	if post {
		if !csrfOK {
			status = fasthttp.StatusForbidden
		} else if err := s.webhooksAction(ctx, rq, arg, &view); err != nil {
			e := schema.AsError(err)
			if e.Code == schema.CodeInternal {
				s.log.Error("webhooks page", "tenant", rq.Info.Slug, "action", arg("action"), "err", err)
			}
			view.Error = formMessage(e)
			status = pipeline.Status(e)
		}
	}
	list, err := s.webhooks.List(ctx, rq.Info)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	view.Endpoints = list.Data
	byID := map[string]*webhooks.Endpoint{}
	for _, e := range list.Data {
		byID[e.ID] = e
	}
	for _, n := range list.Notices {
		if e := byID[n.EndpointID]; e != nil {
			view.Notices = append(view.Notices, webhookNotice{Notice: n, URL: e.URL})
		}
	}
	if e := byID[selected]; e != nil {
		page := 1
		if p, err := strconv.Atoi(string(ctx.QueryArgs().Peek("page"))); err == nil && p > 1 {
			page = p
		}
		view.Selected, view.LogEnabled = e.ID, e.Enabled
		view.Log, err = s.webhookLog(ctx, rq, e, page)
		if err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	} else if (selected != "" || badSelection) && view.Error == "" {
		view.Error = "That webhook endpoint does not exist (any more)."
		if !post {
			status = fasthttp.StatusNotFound
		}
	}
	render(status)
}

// webhookLog reads one page of an endpoint's delivery log.
func (s *Server) webhookLog(ctx *fasthttp.RequestCtx, rq *handler.Request, e *webhooks.Endpoint, page int) (*webhookLog, error) {
	list, total, err := s.webhooks.Deliveries(ctx, rq.Info, e.ID, webhooks.DeliveryFilter{Limit: webhookLogPage, Offset: (page - 1) * webhookLogPage})
	if err != nil {
		return nil, err
	}
	l := &webhookLog{Endpoint: e, Total: total, Page: page, Pages: max(1, (total+webhookLogPage-1)/webhookLogPage)}
	for _, d := range list {
		l.Deliveries = append(l.Deliveries, &webhookDelivery{Delivery: d, EndpointID: e.ID})
	}
	base := schema.WebhooksPagePath + "?endpoint=" + e.ID + "&page="
	if page > 1 {
		l.Prev = base + strconv.Itoa(min(page-1, l.Pages))
	}
	if page < l.Pages {
		l.Next = base + strconv.Itoa(page+1)
	}
	return l, nil
}

// webhooksAction carries out a POST of the signed-in page through the webhooks service: create,
// rotate, enable, disable, delete, test or redeliver.
func (s *Server) webhooksAction(ctx *fasthttp.RequestCtx, rq *handler.Request, arg func(string) string, view *webhooksView) error {
	id := arg("id")
	switch arg("action") {
	case "create":
		var events []string
		ctx.PostArgs().VisitAll(func(k, v []byte) {
			if string(k) == "events" {
				events = append(events, string(v))
			}
		})
		allowlist := strings.FieldsFunc(arg("allowlist"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		url, description := strings.TrimSpace(arg("url")), strings.TrimSpace(arg("description"))
		// Shown again with the error, should there be one.
		view.Form = newWebhookForm(events)
		view.Form.URL, view.Form.Allowlist, view.Form.Description = url, strings.Join(allowlist, "\n"), description
		if allowlist == nil {
			allowlist = []string{}
		}
		if events == nil {
			events = []string{}
		}
		e, err := s.webhooks.Create(ctx, rq.Info, webhooks.EndpointInput{URL: &url, Events: &events, IPAllowlist: &allowlist, Description: &description})
		if err != nil {
			return err
		}
		view.Form = newWebhookForm(nil)
		view.NewSecret, view.NewSecretFor = e.Secret, e.URL
		view.Message = "Endpoint added."
	case "rotate":
		e, err := s.webhooks.Rotate(ctx, rq.Info, id, webhooks.DefaultOverlap)
		if err != nil {
			return err
		}
		view.NewSecret, view.NewSecretFor = e.Secret, e.URL
		if e.PreviousUntil != nil {
			view.NewSecretNote = "The previous secret keeps signing too (X-Webhook-Signature-Previous) until " + formatWhen(e.PreviousUntil) +
				": update your receiver before then."
		}
	case "enable", "disable":
		on := arg("action") == "enable"
		if _, err := s.webhooks.Update(ctx, rq.Info, id, webhooks.EndpointInput{Enabled: &on}); err != nil {
			return err
		}
		view.Message = "Endpoint disabled; its pending deliveries were cancelled."
		if on {
			view.Message = "Endpoint enabled."
		}
	case "delete":
		if err := s.webhooks.Delete(ctx, rq.Info, id); err != nil {
			return err
		}
		view.Message = "Endpoint deleted."
	case "test":
		q, err := s.webhooks.SendTest(ctx, rq.Info, id)
		if err != nil {
			return err
		}
		view.Message = "Test event " + q.EventID + " queued; its attempts appear in the delivery log."
	case "redeliver":
		q, err := s.webhooks.Redeliver(ctx, rq.Info, id, arg("delivery"))
		if err != nil {
			return err
		}
		view.Message = "Event " + q.EventID + " (" + q.Kind + ") queued again."
	default:
		return schema.Invalid("action", "unknown action")
	}
	return nil
}

// formatWhen formats a time (or a *time.Time; nil is "") for the page, in UTC.
func formatWhen(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return ""
		}
		t = *x
	default:
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// prettyJSON indents a JSON body for reading; anything else is shown as it is.
func prettyJSON(b json.RawMessage) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// fieldLabels name the create form's fields in error messages.
var fieldLabels = map[string]string{"url": "The URL", "events": "Events", "ip_allowlist": "IP allowlist", "description": "The description"}

// formMessage words an error for the page: the field it is about named as the form names it,
// capitalized, with a period.
func formMessage(e *schema.Error) string {
	msg := e.Message
	if label, ok := fieldLabels[e.Field]; ok {
		if rest, found := strings.CutPrefix(msg, e.Field+" "); found {
			msg = label + " " + rest
		} else {
			msg = label + ": " + msg
		}
	}
	r, n := utf8.DecodeRuneInString(msg)
	if n == 0 {
		return msg
	}
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
