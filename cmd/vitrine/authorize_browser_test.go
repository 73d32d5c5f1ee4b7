package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestBrowserAuthorizeApplication runs the application-password authorization page in headless
// Chromium through an edge (testdata/e2e/authorize.mjs): sign in with an application password, approve an
// application, land on its success_url with site_url, user_login and a new password that then
// authenticates; a second run rejects and lands on reject_url with success=false. The store is
// reached as authz.localhost, a name Chromium resolves to the loopback and treats as a secure
// context, so the page's Secure cookies work over plain HTTP in the test.
func TestBrowserAuthorizeApplication(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, chromium := e2eTools(t, "playwright-core", true)

	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	ctx := context.Background()
	tn := &schema.Tenant{Slug: "authz", Name: "Authz Store", BaseURL: "https://authz.shop.example", Timezone: "UTC",
		Currencies: []string{"USD"}, Domains: []string{"authz.localhost"}}
	if err := s.db.CreateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	u := &schema.User{Login: "editor", Email: "editor@authz.example", Role: schema.RoleEditor}
	if err := s.db.CreateUser(ctx, tn, u); err != nil {
		t.Fatal(err)
	}
	pw := schema.NewAppPassword()
	if _, err := s.db.CreateAppPassword(ctx, tn, u.ID, "setup", schema.HashAppPassword(s.key, pw)); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.replicas {
		waitFor(t, 10*time.Second, c.name+" to serve authz", func() bool {
			r := c.rep.TenantBySlug("authz")
			return r != nil && r.Ready()
		})
	}
	_, port, _ := strings.Cut(e.addr, ":")
	appID := "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	page := "http://authz.localhost:" + port + schema.AuthorizeAppPath + "?" + url.Values{
		"app_name": {"Desktop <Publisher>"}, "app_id": {appID},
		"success_url": {"https://client.example/callback?state=xyz"}, "reject_url": {"https://client.example/rejected"}}.Encode()

	run := func(action string) (landed *url.URL, appName, userLogin string) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(rctx, node, filepath.Join(e2e, "authorize.mjs"))
		cmd.Env = append(os.Environ(), "AUTHORIZE_URL="+page, "CHROMIUM="+chromium, "LOGIN=editor", "PASSWORD="+schema.ChunkAppPassword(pw), "ACTION="+action)
		cmd.Dir = e2e
		out, err := cmd.Output()
		var got struct{ Landed, AppName, UserLogin, Error, Body string }
		if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); jerr != nil || err != nil || got.Error != "" {
			t.Fatalf("browser run failed: %v %s\n%s", err, got.Error, out)
		}
		l, err := url.Parse(got.Landed)
		if err != nil {
			t.Fatal(err)
		}
		return l, got.AppName, got.UserLogin
	}

	landed, appName, userLogin := run("approve")
	q := landed.Query()
	if landed.Host != "client.example" || landed.Path != "/callback" || q.Get("state") != "xyz" || q.Get("site_url") != tn.BaseURL ||
		q.Get("user_login") != "editor" || appName != "Desktop <Publisher>" || userLogin != "editor" {
		t.Fatalf("landed on %s (page showed %q, %q)", landed, appName, userLogin)
	}
	// The new password works through the edge and is named and tied to the application.
	r := call(t, "GET", e.addr, "authz.localhost", "/index.php?rest_route=/cms/v2/users/me/application-passwords/introspect", "",
		"Authorization", basic("editor", q.Get("password")))
	if m := r.json(t); r.status != 200 || m["name"] != "Desktop <Publisher>" || m["app_id"] != appID {
		t.Fatalf("introspect with the new password: %d %s", r.status, r.body)
	}

	landed, _, _ = run("reject")
	if landed.Path != "/rejected" || landed.Query().Get("success") != "false" || landed.Query().Get("password") != "" {
		t.Fatalf("reject landed on %s", landed)
	}
}
