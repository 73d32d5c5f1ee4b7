package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
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

// localhostSite creates a store whose canonical base is base (an edge's http://localhost:<port>,
// so that URLs in bodies and Link headers lead back to it) with an editor, "editor", and returns
// the editor's application password once every replica serves the store.
func (s *system) localhostSite(t *testing.T, slug, name, base string) string {
	t.Helper()
	ctx := context.Background()
	tn := &schema.Tenant{Slug: slug, Name: name, BaseURL: base, Timezone: "UTC", Currencies: []string{"USD"}, Domains: []string{"localhost"}}
	if err := s.db.CreateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	u := &schema.User{Login: "editor", Email: "editor@" + slug + ".example", Role: schema.RoleEditor, DisplayName: "Edith"}
	if err := s.db.CreateUser(ctx, tn, u); err != nil {
		t.Fatal(err)
	}
	pw := schema.NewAppPassword()
	if _, err := s.db.CreateAppPassword(ctx, tn, u.ID, "clients", schema.HashAppPassword(s.key, pw)); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.replicas {
		waitFor(t, 10*time.Second, c.name+" to serve "+slug, func() bool {
			r := c.rep.TenantBySlug(slug)
			return r != nil && r.Ready()
		})
	}
	return pw
}

// TestWordPressClients runs real WordPress REST clients (testdata/e2e/cms-clients.mjs) against an edge:
// the npm wpapi client discovers the API from the site URL and lists, creates, updates, trashes
// and deletes posts with an application password; @wordpress/api-fetch fetches every page of
// posts by following rel="next". The store's canonical base is http://localhost:<edge port>, so
// that the URLs in bodies and Link headers lead back to the edge.
func TestWordPressClients(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, _ := e2eTools(t, "wpapi", false)
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	_, port, _ := net.SplitHostPort(e.addr)
	base := "http://localhost:" + port
	pw := s.localhostSite(t, "blog", "The Blog", base)
	ctx := context.Background()
	// 120 published posts, in batches of 25: more than one page of 100.
	auth := basic("editor", pw)
	for b := 0; b < 5; b++ {
		var items []string
		for i := 0; i < 25 && b*25+i < 120; i++ {
			items = append(items, fmt.Sprintf(`{"path":"/cms/v2/posts","body":{"title":"Post %d","content":"Body %d","status":"publish"}}`, b*25+i, b*25+i))
		}
		r := call(t, "POST", e.addr, "localhost", "/index.php?rest_route=/batch/v1", `{"requests":[`+strings.Join(items, ",")+`]}`, "Authorization", auth)
		if r.status != 207 || strings.Contains(string(r.body), `"status":4`) {
			t.Fatalf("seed batch: %d %.300s", r.status, r.body)
		}
		floor := r.header.Get("Vitrine-Write-Version")
		call(t, "GET", e.addr, "localhost", "/index.php?rest_route=/cms/v2/posts&per_page=1", "", "Vitrine-Min-Version", floor)
	}

	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, "--dns-result-order=ipv4first", filepath.Join(e2e, "cms-clients.mjs"))
	cmd.Env = append(os.Environ(), "SITE_URL="+base+"/", "CMS_USER=editor", "CMS_PASSWORD="+pw)
	cmd.Dir = e2e
	out, err := cmd.Output()
	var got struct {
		WpapiListed, WpapiTotal, Created int
		UpdatedTitle, TrashedStatus      string
		Deleted                          bool
		ApiFetchAll, ApiFetchDistinct    int
		TemplateID, TemplateSource       string
		HeaderParts, ApiFetchTemplate    string
		Error, ErrorBody                 string
	}
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); jerr != nil {
		t.Fatalf("clients run: %v %v\n%s", err, jerr, out)
	}
	if err != nil || got.Error != "" {
		t.Fatalf("clients failed: %s (%s)", got.Error, got.ErrorBody)
	}
	t.Logf("clients: %+v", got)
	if got.WpapiListed != 5 || got.WpapiTotal != 120 || got.Created == 0 || got.UpdatedTitle != "From wpapi, renamed" ||
		got.TrashedStatus != "trash" || !got.Deleted || got.ApiFetchAll != 120 || got.ApiFetchDistinct != 120 {
		t.Fatalf("clients saw %+v", got)
	}
	if got.TemplateID != "vitrine-blocks//single" || got.TemplateSource != "theme" || got.HeaderParts != "vitrine-blocks//header" ||
		got.ApiFetchTemplate != "vitrine-blocks//home" {
		t.Fatalf("templates through the clients: %+v", got)
	}
}
