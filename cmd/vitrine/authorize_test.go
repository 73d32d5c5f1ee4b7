package main

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"vitrine/schema"
)

// TestAuthorizePageRefusals drives the authorization page through an edge without a browser:
// bad application requests, forged or missing CSRF tokens and forged sessions create nothing.
func TestAuthorizePageRefusals(t *testing.T) {
	c := newCMSSite(t)
	page := func(q url.Values) string { return schema.AuthorizeAppPath + "?" + q.Encode() }
	good := url.Values{"app_name": {"App"}, "success_url": {"https://client.example/cb"}}
	for _, tc := range []struct {
		name string
		q    url.Values
		text string
	}{
		{"http success URL", url.Values{"success_url": {"http://client.example/cb"}}, "secure connection"},
		{"script success URL", url.Values{"success_url": {"javascript:alert(1)"}}, "forbidden scheme"},
		{"relative reject URL", url.Values{"reject_url": {"/elsewhere"}}, "not a valid URL"},
		{"bad app id", url.Values{"app_id": {"nope"}}, "must be a UUID"},
	} {
		r := call(t, "GET", c.edge, c.host, page(tc.q), "")
		if r.status != 400 || !strings.Contains(string(r.body), tc.text) || strings.Contains(string(r.body), `name="password"`) {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
	}

	r := call(t, "GET", c.edge, c.host, page(good), "")
	if r.status != 200 || r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("sign-in page: %d %v", r.status, r.header)
	}
	nonce := cookie(t, r, "vitrine_admin_nonce")
	if !nonce.HttpOnly || !nonce.Secure || nonce.SameSite != http.SameSiteStrictMode || nonce.Path != schema.CMSAdminPath {
		t.Errorf("nonce cookie %+v", nonce)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(r.body))[1]
	form := func(v url.Values, cookies ...*http.Cookie) *response {
		var h []string
		var parts []string
		for _, ck := range cookies {
			parts = append(parts, ck.Name+"="+ck.Value)
		}
		h = append(h, "Content-Type", "application/x-www-form-urlencoded", "Cookie", strings.Join(parts, "; "))
		req, _ := http.NewRequest("POST", "http://"+c.edge+page(good), strings.NewReader(v.Encode()))
		req.Host = c.host
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		// A redirect is the answer under test, not something to follow.
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return &response{status: resp.StatusCode, header: resp.Header, body: b}
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(c.auth[schema.RoleAdministrator], "Basic "))
	login, adminPW, _ := strings.Cut(string(raw), ":")
	signin := url.Values{"action": {"signin"}, "login": {login}, "password": {adminPW}, "csrf": {csrf}}
	// Without the nonce cookie (a cross-site form), the sign-in is refused.
	if r := form(signin); r.status != 401 || r.header.Get("Set-Cookie") != "" && strings.Contains(r.header.Get("Set-Cookie"), "vitrine_admin_session") {
		t.Errorf("sign-in without the nonce cookie: %d %v", r.status, r.header)
	}
	// A wrong password is refused.
	bad := url.Values{"action": {"signin"}, "login": {login}, "password": {"wrongwrongwrongwrongwron"}, "csrf": {csrf}}
	if r := form(bad, nonce); r.status != 401 || !strings.Contains(string(r.body), "incorrect application password") {
		t.Errorf("wrong password: %d", r.status)
	}
	// A forged session cookie is not a session: the page asks to sign in.
	forged := &http.Cookie{Name: "vitrine_admin_session", Value: "AAAAAAAAAAEAAAAAf____w"}
	if r := form(url.Values{"action": {"approve"}, "csrf": {"x"}}, forged); r.status != 200 || !strings.Contains(string(r.body), `id="signin"`) {
		t.Errorf("forged session: %d %s", r.status, r.body)
	}
	// The real sign-in redirects back to the page itself with a session.
	r = form(signin, nonce)
	if r.status != 303 || r.header.Get("Location") != page(good) {
		t.Fatalf("sign-in: %d %v %s", r.status, r.header, r.body)
	}
	session := cookie(t, r, "vitrine_admin_session")
	// Approving needs the session's CSRF token.
	if r := form(url.Values{"action": {"approve"}, "csrf": {csrf}}, session); r.status != 403 {
		t.Errorf("approve with the sign-in token: %d", r.status)
	}
	list := c.rest(schema.RoleAdministrator, "GET", "/cms/v2/users/me/application-passwords", "")
	if n := strings.Count(string(list.body), `"uuid"`); n != 1 {
		t.Errorf("%d application passwords after refused approvals, want 1", n)
	}
	// With the session's token, approving redirects to the success URL with a working password.
	r = call(t, "GET", c.edge, c.host, page(good), "", "Cookie", "vitrine_admin_session="+session.Value)
	approveCSRF := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(r.body))[1]
	r = form(url.Values{"action": {"approve"}, "csrf": {approveCSRF}}, session)
	to, err := url.Parse(r.header.Get("Location"))
	if r.status != 303 || err != nil || to.Host != "client.example" || to.Query().Get("user_login") != "admin" {
		t.Fatalf("approve: %d %v", r.status, r.header)
	}
	c.auth["app"] = basic("admin", to.Query().Get("password"))
	c.want(c.rest("app", "GET", "/cms/v2/users/me", ""), 200, "")
}

func cookie(t *testing.T, r *response, name string) *http.Cookie {
	t.Helper()
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	t.Fatalf("no %s cookie in %v", name, r.header)
	return nil
}
