package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	serverkeys "vitrine/origin/keys"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestBrowserAPIKeysPage runs the store settings API Keys page in headless Chromium through an
// edge (testdata/e2e/apikeys.mjs): an administrator signs in, creates a key (shown once, copied),
// rolls it and revokes the new one; the keys the page showed work, and stop working, through the
// API. An editor is refused the page.
func TestBrowserAPIKeysPage(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, chromium := e2eTools(t, "playwright-core", true)
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	ctx := context.Background()
	_, passwords := settingsStore(t, s, "keys", "Keys Store")
	_, port, _ := strings.Cut(e.addr, ":")
	page := "http://keys.localhost:" + port + schema.APIKeysPagePath
	shot := filepath.Join(t.TempDir(), "apikeys.png")
	if dir := os.Getenv("VITRINE_SCREENSHOTS"); dir != "" {
		shot = filepath.Join(dir, "apikeys.png")
	}
	run := func(login string) (out struct {
		Created, Rolled, Copied, Error, Body string
		AfterReload                          int
		Statuses                             []string
	}, err error) {
		rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(rctx, node, filepath.Join(e2e, "apikeys.mjs"))
		cmd.Env = append(os.Environ(), "PAGE_URL="+page, "CHROMIUM="+chromium, "LOGIN="+login, "PASSWORD="+schema.ChunkAppPassword(passwords[login]), "SCREENSHOT="+shot)
		cmd.Dir = e2e
		b, err := cmd.Output()
		if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &out); jerr != nil {
			t.Fatalf("browser output: %v\n%s", jerr, b)
		}
		return out, err
	}
	got, err := run("owner")
	if err != nil || got.Error != "" {
		t.Fatalf("browser run failed: %v %s\n%s", err, got.Error, got.Body)
	}
	if !serverkeys.WellFormed(got.Created) || !serverkeys.WellFormed(got.Rolled) || got.Created == got.Rolled || got.AfterReload != 0 {
		t.Fatalf("page run %+v", got)
	}
	if strings.Join(got.Statuses, ",") != "revoked,active" || got.Copied == "" {
		t.Fatalf("statuses %v, copy %q", got.Statuses, got.Copied)
	}
	pick := func(key string) int {
		return call(t, "GET", e.addr, "keys.localhost", "/api/orders/batch/pick-list", "", "Authorization", "Bearer "+key, "Accept", "application/json").status
	}
	if a, b := pick(got.Created), pick(got.Rolled); a != 200 || b != 401 {
		t.Fatalf("the created key (rolled, in its overlap) answers %d, the rolled-to key (revoked) %d", a, b)
	}

	// An editor signs in and is refused the page.
	if got, _ := run("editor"); !strings.Contains(got.Error, "Only administrators manage API keys.") {
		t.Fatalf("an editor reached the page: %+v", got.Error)
	}
}

// settingsStore makes a store (slug, served at <slug>.localhost) with an administrator "owner"
// and an editor "editor", each with an application password, and waits until every replica of
// the system serves it. The passwords are by login.
func settingsStore(t *testing.T, s *system, slug, name string) (*schema.Tenant, map[string]string) {
	t.Helper()
	ctx := context.Background()
	tn := &schema.Tenant{Slug: slug, Name: name, BaseURL: "https://" + slug + ".shop.example", Timezone: "UTC",
		Currencies: []string{"USD"}, Domains: []string{slug + ".localhost"}}
	if err := s.db.CreateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	passwords := map[string]string{}
	for _, u := range []*schema.User{{Login: "owner", Email: "owner@" + slug + ".example", Role: schema.RoleAdministrator},
		{Login: "editor", Email: "editor@" + slug + ".example", Role: schema.RoleEditor}} {
		if err := s.db.CreateUser(ctx, tn, u); err != nil {
			t.Fatal(err)
		}
		pw := schema.NewAppPassword()
		if _, err := s.db.CreateAppPassword(ctx, tn, u.ID, "setup", schema.HashAppPassword(s.key, pw)); err != nil {
			t.Fatal(err)
		}
		passwords[u.Login] = pw
	}
	for _, c := range s.replicas {
		waitFor(t, 10*time.Second, c.name+" to serve "+slug, func() bool {
			r := c.rep.TenantBySlug(slug)
			return r != nil && r.Ready()
		})
	}
	return tn, passwords
}
