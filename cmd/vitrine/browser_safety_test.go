package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// browserSite is a CMS site (newCMSSite) with a contributor too.
func browserSite(t *testing.T) *cmsSite {
	t.Helper()
	c := newCMSSite(t)
	c.addContributor(t)
	return c
}

// TestBrowserNoBasicChallenge checks that no 401 asks for HTTP Basic (WordPress sends no
// challenge for application passwords; a Basic challenge makes browsers prompt for and cache
// staff credentials): CMS and commerce staff routes, missing and wrong credentials, at the edge
// and at the origin, and the settings pages' sign-in.
func TestBrowserNoBasicChallenge(t *testing.T) {
	t.Parallel()
	c := browserSite(t)
	wrong := basic("admin", "wrong password wrong pass")
	for _, tc := range []struct {
		name, method, uri, body, auth string
		form                          bool
	}{
		{"CMS read, wrong password", "GET", "/index.php?rest_route=/cms/v2/posts", "", wrong, false},
		{"CMS read, unknown user", "GET", "/index.php?rest_route=/cms/v2/posts", "", basic("nobody", "x"), false},
		{"CMS read, not Basic", "GET", "/index.php?rest_route=/cms/v2/posts", "", "Bearer abc", false},
		{"CMS write, no credentials", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x"}`, "", false},
		{"CMS write, wrong password", "POST", "/index.php?rest_route=/cms/v2/posts", `{"title":"x"}`, wrong, false},
		{"CMS edit context, no credentials", "GET", "/index.php?rest_route=/cms/v2/users/me", "", "", false},
		{"commerce staff read, no credentials", "GET", "/api/admin/settings", "", "", false},
		{"commerce staff read, wrong password", "GET", "/api/admin/settings", "", wrong, false},
		{"commerce staff write, no credentials", "POST", "/api/admin/gift-cards", `{"amount":100}`, "", false},
		{"commerce staff write, wrong password", "POST", "/api/admin/gift-cards", `{"amount":100}`, wrong, false},
		{"settings page, wrong password header", "GET", schema.APIKeysPagePath, "", wrong, false},
		{"settings page, wrong sign-in form", "POST", schema.APIKeysPagePath, "action=signin&csrf=x&login=admin&password=wrong", "", true},
		{"authorize page, wrong sign-in form", "POST", schema.AuthorizeAppPath + "?app_name=x&success_url=https%3A%2F%2Fapp.example%2Fcb",
			"action=signin&csrf=x&login=admin&password=wrong", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []struct{ name, addr string }{{"edge", c.edge}, {"origin", c.s.originAddr}} {
				var h []string
				if tc.auth != "" {
					h = append(h, "Authorization", tc.auth)
				}
				if tc.form {
					h = append(h, "Content-Type", "application/x-www-form-urlencoded")
				} else if tc.body != "" {
					h = append(h, "Content-Type", "application/json")
				}
				r := rawCall(t, tc.method, at.addr, c.host, tc.uri, tc.body, h...)
				if r.status != 401 {
					t.Fatalf("%s: status %d, want 401: %s", at.name, r.status, r.body)
				}
				for _, v := range r.header.Values("WWW-Authenticate") {
					if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "basic") {
						t.Errorf("%s: a Basic challenge: %q", at.name, v)
					}
				}
			}
		})
	}
}

// TestBrowserJSONP checks that JSONP is never given to a credentialed request, at the edge
// and at the origin (credentialed requests are forwarded there), and stays for anonymous ones.
func TestBrowserJSONP(t *testing.T) {
	c := browserSite(t)
	post := &schema.Post{Type: "post", Status: schema.StatusPublish, Title: "Public", Content: "x", Author: c.users[schema.RoleAdministrator].ID,
		CommentStatus: "open", PingStatus: "open", Format: "standard"}
	c.post(post)
	item := fmt.Sprintf("/index.php?rest_route=/cms/v2/posts/%d&_fields=id&_jsonp=cb", post.ID)
	refused := `{"code":"rest_callback_disabled","message":"JSONP is not available to authenticated requests."}`
	for _, tc := range []struct {
		name, uri, auth string
		status          int
		body            string
	}{
		{"anonymous", item, "", 200, fmt.Sprintf(`/**/cb({"id":%d})`, post.ID)},
		{"application password", item, c.auth[schema.RoleEditor], 400, refused},
		{"application password, edit context", item + "&context=edit", c.auth[schema.RoleAdministrator], 400, refused},
		{"wrong password", item, basic("admin", "wrong"), 400, refused},
		{"any Authorization", item, "Bearer x", 400, refused},
		{"credentialed, invalid callback first", item + "x(", c.auth[schema.RoleEditor], 400, `{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
		{"credentialed, empty _jsonp is no JSONP", fmt.Sprintf("/index.php?rest_route=/cms/v2/posts/%d&_fields=id&_jsonp=", post.ID), c.auth[schema.RoleEditor], 200, fmt.Sprintf(`{"id":%d}`, post.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []struct{ name, addr string }{{"edge", c.edge}, {"origin", c.s.originAddr}} {
				var h []string
				if tc.auth != "" {
					h = append(h, "Authorization", tc.auth)
				}
				r := call(t, "GET", at.addr, c.host, tc.uri, "", h...)
				if r.status != tc.status || string(r.body) != tc.body {
					t.Errorf("%s: %d %s, want %d %s", at.name, r.status, r.body, tc.status, tc.body)
				}
				if tc.status == 400 && strings.Contains(string(r.body), "cb(") {
					t.Errorf("%s: a refusal wrapped as script: %s", at.name, r.body)
				}
			}
		})
	}
}

// TestBrowserCrossSiteWrites checks the refusal of credentialed writes another site could make
// a browser send without a CORS preflight (form, text or untyped bodies, _method), and that
// every other client — no Origin and no Sec-Fetch-Site, the store's own origin, a preflighted
// JSON request — keeps working.
func TestBrowserCrossSiteWrites(t *testing.T) {
	t.Parallel()
	c := browserSite(t)
	editor := c.auth[schema.RoleEditor]
	const evil = "https://evil.example"
	form := "application/x-www-form-urlencoded"
	type row struct {
		name        string
		method      string
		query       string // after the post's route
		contentType string
		body        string
		headers     []string
		auth        string
		refused     bool
		status      int // when not refused
	}
	rows := []row{
		{"non-browser client, form body and _method", "POST", "&_method=DELETE", form, "force=true", nil, editor, false, 200},
		{"non-browser client, untyped POST with _method", "POST", "&_method=DELETE", "", "", nil, editor, false, 200},
		{"cross-site Origin, form body", "POST", "&_method=DELETE", form, "force=true", []string{"Origin", evil}, editor, true, 0},
		{"Sec-Fetch-Site cross-site", "POST", "&_method=DELETE", form, "force=true", []string{"Sec-Fetch-Site", "cross-site"}, editor, true, 0},
		{"Sec-Fetch-Site same-site (a sibling store)", "POST", "&_method=DELETE", form, "force=true",
			[]string{"Sec-Fetch-Site", "same-site", "Origin", "https://other.shop.example"}, editor, true, 0},
		{"Origin null", "POST", "&_method=DELETE", form, "force=true", []string{"Origin", "null"}, editor, true, 0},
		{"cross-site text/plain body", "POST", "&_method=DELETE", "text/plain", `{"force":true}`, []string{"Origin", evil}, editor, true, 0},
		{"cross-site multipart body", "POST", "&_method=DELETE", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"force\"\r\n\r\ntrue\r\n--b--\r\n",
			[]string{"Origin", evil}, editor, true, 0},
		{"cross-site untyped POST", "POST", "&_method=DELETE", "", "", []string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, editor, true, 0},
		{"cross-site GET with _method", "GET", "&_method=DELETE", "", "", []string{"Sec-Fetch-Site", "cross-site"}, editor, true, 0},
		{"cross-site untyped POST without _method", "POST", "", "", "", []string{"Origin", evil}, editor, true, 0},
		{"cross-site untyped POST with a body", "POST", "&_method=DELETE&force=true", "", "x", []string{"Origin", evil}, editor, true, 0},
		{"same origin by Sec-Fetch-Site", "POST", "&_method=DELETE", form, "force=true", []string{"Sec-Fetch-Site", "same-origin", "Origin", "http://cms.example.test"}, editor, false, 200},
		{"same origin by Origin (the request's host)", "POST", "&_method=DELETE", form, "force=true", []string{"Origin", "http://cms.example.test"}, editor, false, 200},
		{"same origin by Origin (the store's base URL)", "POST", "&_method=DELETE", form, "force=true", []string{"Origin", "https://cms.shop.example"}, editor, false, 200},
		{"Sec-Fetch-Site none (typed by the user)", "POST", "&_method=DELETE", form, "force=true", []string{"Sec-Fetch-Site", "none"}, editor, false, 200},
		{"cross-site JSON with the override header (preflighted)", "POST", "", "application/json", `{"force":false}`,
			[]string{"Origin", evil, "Sec-Fetch-Site", "cross-site", "X-HTTP-Method-Override", "DELETE"}, editor, false, 200},
		{"cross-site JSON with _method (preflighted)", "POST", "&_method=DELETE", "application/json", `{"force":false}`,
			[]string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, editor, false, 200},
		{"cross-site DELETE (preflighted)", "DELETE", "", "", "", []string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, editor, false, 200},
		{"cross-site read", "GET", "&context=edit", "", "", []string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, editor, false, 200},
		{"cross-site anonymous form write (no credential to forge)", "POST", "&_method=DELETE", form, "force=true",
			[]string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, "", false, 401},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []struct{ name, addr string }{{"edge", c.edge}, {"origin", c.s.originAddr}} {
				p := &schema.Post{Type: "post", Status: schema.StatusDraft, Title: "Target", Content: "x", Author: c.users[schema.RoleEditor].ID,
					CommentStatus: "open", PingStatus: "open", Format: "standard"}
				c.post(p)
				uri := fmt.Sprintf("/index.php?rest_route=/cms/v2/posts/%d%s", p.ID, tc.query)
				h := append([]string{}, tc.headers...)
				if tc.auth != "" {
					h = append(h, "Authorization", tc.auth)
				}
				if tc.contentType != "" {
					h = append(h, "Content-Type", tc.contentType)
				}
				r := rawCall(t, tc.method, at.addr, c.host, uri, tc.body, h...)
				if tc.refused {
					if r.status != 403 || !strings.Contains(string(r.body), `"code":"rest_cross_site_forbidden"`) || !strings.Contains(string(r.body), `"status":403`) {
						t.Fatalf("%s: %d %s, want 403 rest_cross_site_forbidden", at.name, r.status, r.body)
					}
					// Nothing was written.
					if got := c.rest(schema.RoleEditor, "GET", fmt.Sprintf("/cms/v2/posts/%d?context=edit&_fields=status", p.ID), ""); got.status != 200 ||
						!strings.Contains(string(got.body), `"draft"`) {
						t.Fatalf("%s: the post after a refused write: %d %s", at.name, got.status, got.body)
					}
					continue
				}
				if r.status != tc.status {
					t.Fatalf("%s: %d %s, want %d", at.name, r.status, r.body, tc.status)
				}
			}
		})
	}

	// Commerce staff writes: the same rule, in the commerce error shape.
	admin := c.auth[schema.RoleAdministrator]
	for _, tc := range []struct {
		name        string
		contentType string
		headers     []string
		refused     bool
	}{
		{"untyped JSON body from another site", "", []string{"Origin", evil}, true},
		{"text/plain JSON body from another site", "text/plain", []string{"Sec-Fetch-Site", "cross-site"}, true},
		{"JSON from another site (preflighted)", "application/json", []string{"Origin", evil, "Sec-Fetch-Site", "cross-site"}, false},
		{"untyped JSON body, no browser", "", nil, false},
	} {
		t.Run("commerce "+tc.name, func(t *testing.T) {
			h := append([]string{"Authorization", admin}, tc.headers...)
			if tc.contentType != "" {
				h = append(h, "Content-Type", tc.contentType)
			}
			r := rawCall(t, "POST", c.edge, c.host, "/api/admin/gift-cards", `{"amount":100}`, h...)
			if tc.refused {
				if r.status != 403 || !strings.Contains(string(r.body), `"error":"`) || strings.Contains(string(r.body), "rest_") {
					t.Fatalf("%d %s, want a commerce 403", r.status, r.body)
				}
				return
			}
			if r.status == 403 {
				t.Fatalf("refused: %s", r.body)
			}
		})
	}
}

// TestBrowserStoredXSS writes stored-XSS payloads through the real API as each role and reads
// what was stored (raw) and rendered: contributors' and authors' HTML is filtered at write time
// with WordPress's kses policies, editors' and administrators' (unfiltered_html) is kept as
// written.
func TestBrowserStoredXSS(t *testing.T) {
	c := browserSite(t)
	const block = `<!-- wp:paragraph --><p>Hello <strong>world</strong>, it's "fine"</p><!-- /wp:paragraph -->`
	payload := block + `<script>alert(1)</script><img src="/a.png" onerror="alert(2)"><a href="javascript:alert(3)">j</a>` +
		`<svg onload="alert(4)"><circle r="1"></circle></svg><p style="width:expression(alert(5));color:red">s</p>` +
		`<iframe src="https://evil.example/"></iframe><a href="data:text/html;base64,PHNjcmlwdD5hbGVydCg2KTwvc2NyaXB0Pg==">d</a>` +
		`<a href="https://ok.example/" title="t">ok</a>`
	const filtered = block + `<img src="/a.png">j<p style="color: red">s</p>d<a href="https://ok.example/" title="t">ok</a>`
	const title = `<img src=x onerror=alert(7)>Title <b>bold</b> <p>para</p>`
	const filteredTitle = `Title <b>bold</b> para`
	const excerpt = `<p onmouseover="alert(8)">Ex</p><script>alert(9)</script>`
	const filteredExcerpt = `<p>Ex</p>`
	footnotes := `[{"content":"<a href=\"javascript:alert(10)\">n</a><b>ok</b>","id":"f1"}]`
	const filteredFootnotes = `[{"content":"n<b>ok</b>","id":"f1"}]`
	bad := []string{"<script", "onerror", "onload", "onmouseover", "javascript:", "<svg", "<iframe", "expression(", "data:text"}

	type stored struct{ title, content, excerpt, footnotes string }
	read := func(t *testing.T, id int64) (raw stored, rendered stored) {
		t.Helper()
		r := c.rest(schema.RoleAdministrator, "GET", fmt.Sprintf("/cms/v2/posts/%d?context=edit", id), "")
		if r.status != 200 {
			t.Fatalf("read %d: %d %s", id, r.status, r.body)
		}
		m := r.json(t)
		field := func(name, part string) string {
			v, _ := m[name].(map[string]any)
			s, _ := v[part].(string)
			return s
		}
		meta, _ := m["meta"].(map[string]any)
		fn, _ := meta["footnotes"].(string)
		return stored{field("title", "raw"), field("content", "raw"), field("excerpt", "raw"), fn},
			stored{field("title", "rendered"), field("content", "rendered"), field("excerpt", "rendered"), ""}
	}
	body := func(status string) string {
		return fmt.Sprintf(`{"title":%q,"content":%q,"excerpt":%q,"status":%q,"meta":{"footnotes":%q}}`, title, payload, excerpt, status, footnotes)
	}
	for _, tc := range []struct {
		role     schema.Role
		status   string
		filtered bool
	}{
		{schema.RoleContributor, "pending", true},
		{schema.RoleAuthor, "publish", true},
		{schema.RoleEditor, "publish", false},
		{schema.RoleAdministrator, "publish", false},
	} {
		t.Run(string(tc.role), func(t *testing.T) {
			r := c.rest(tc.role, "POST", "/cms/v2/posts", body(tc.status))
			if r.status != 201 {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			id := int64(r.json(t)["id"].(float64))
			want := stored{title, payload, excerpt, footnotes}
			if tc.filtered {
				want = stored{filteredTitle, filtered, filteredExcerpt, filteredFootnotes}
			}
			check := func(step string) {
				t.Helper()
				raw, rendered := read(t, id)
				if raw != want {
					t.Fatalf("%s: raw\n got %+v\nwant %+v", step, raw, want)
				}
				if tc.filtered {
					for _, s := range []string{raw.title, raw.content, raw.excerpt, raw.footnotes, rendered.title, rendered.content, rendered.excerpt} {
						for _, b := range bad {
							if strings.Contains(strings.ToLower(s), b) {
								t.Fatalf("%s: %q kept in %q", step, b, s)
							}
						}
					}
					if !strings.Contains(rendered.content, "<p>Hello <strong>world</strong>") {
						t.Fatalf("%s: rendered content %q", step, rendered.content)
					}
				}
			}
			check("create")

			// An update, and an autosave (the author's own draft is updated in place; any
			// other post gets an autosave revision, filtered the same).
			if r := c.rest(tc.role, "POST", fmt.Sprintf("/cms/v2/posts/%d", id), body(tc.status)); r.status != 200 {
				t.Fatalf("update: %d %s", r.status, r.body)
			}
			check("update")
			r = c.rest(tc.role, "POST", fmt.Sprintf("/cms/v2/posts/%d/autosaves", id), fmt.Sprintf(`{"title":%q,"content":%q}`, title+" 2", payload+" 2"))
			if r.status != 200 {
				t.Fatalf("autosave: %d %s", r.status, r.body)
			}
			as := r.json(t)
			content, _ := as["content"].(map[string]any)
			raw, _ := content["raw"].(string)
			wantRaw := payload + " 2"
			if tc.filtered {
				wantRaw = filtered + " 2"
			}
			if raw != wantRaw {
				t.Fatalf("autosave raw content %q, want %q", raw, wantRaw)
			}
			// What the public sees, from the edge's replica.
			if tc.status == "publish" {
				var pub *response
				waitFor(t, 5*time.Second, "the post at the edge", func() bool {
					pub = c.rest("", "GET", fmt.Sprintf("/cms/v2/posts/%d?_fields=content,title", id), "")
					return pub.status == 200
				})
				if tc.filtered {
					for _, b := range bad {
						if strings.Contains(strings.ToLower(string(pub.body)), strings.ToLower(b)) {
							t.Fatalf("public answer keeps %q: %s", b, pub.body)
						}
					}
				} else if !strings.Contains(string(pub.body), `onerror=\"alert(2)\"`) {
					t.Fatalf("an editor's markup was changed: %s", pub.body)
				}
			}
		})
	}
}
