package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// cmsSite is a store with one staff user per role, reached through an edge.
type cmsSite struct {
	s    *system
	t    *testing.T
	tn   *schema.Tenant
	edge string
	host string
	// auth maps a role ("" for anonymous) to its Authorization header.
	auth  map[schema.Role]string
	users map[schema.Role]*schema.User
}

var cmsRoles = []schema.Role{"", schema.RoleSubscriber, schema.RoleAuthor, schema.RoleEditor, schema.RoleAdministrator}

func newCMSSite(t *testing.T) *cmsSite {
	return cmsSiteOn(t, newSystem(t, systemOptions{}), edge.Config{}, schema.RoleSubscriber, schema.RoleAuthor, schema.RoleEditor)
}

// cmsSiteOn starts s's relay, origin (with s.originConfig) and one edge (ecfg), creates the store
// "cms" and a user with an application password for each of roles, beside its administrator.
func cmsSiteOn(t *testing.T, s *system, ecfg edge.Config, roles ...schema.Role) *cmsSite {
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(ecfg)
	tn, pw := s.tenant("cms") // cmsSite.sync waits for the log "cms"
	c := &cmsSite{s: s, t: t, tn: tn, edge: e.addr, host: "cms.example.test",
		auth: map[schema.Role]string{"": "", schema.RoleAdministrator: basic("admin", pw)}, users: map[schema.Role]*schema.User{}}
	ctx := context.Background()
	admin, err := s.db.UserByLogin(ctx, tn, "admin")
	if err != nil {
		t.Fatal(err)
	}
	c.users[schema.RoleAdministrator] = admin
	for _, r := range roles {
		u := &schema.User{Login: string(r) + "1", Email: string(r) + "1@cms.example", DisplayName: "The " + string(r), Role: r}
		if err := s.db.CreateUser(ctx, tn, u); err != nil {
			t.Fatal(err)
		}
		pw := schema.NewAppPassword()
		if _, err := s.db.CreateAppPassword(ctx, tn, u.ID, "tests", schema.HashAppPassword(s.key, pw)); err != nil {
			t.Fatal(err)
		}
		c.auth[r], c.users[r] = basic(u.Login, schema.ChunkAppPassword(pw)), u
	}
	return c
}

// rest calls a CMS route through the edge as role; route may carry &args.
func (c *cmsSite) rest(role schema.Role, method, route, body string) *response {
	c.t.Helper()
	route, args, _ := strings.Cut(route, "?")
	uri := "/index.php?rest_route=" + route
	if args != "" {
		uri += "&" + args
	}
	var h []string
	if a := c.auth[role]; a != "" {
		h = append(h, "Authorization", a)
	}
	return call(c.t, method, c.edge, c.host, uri, body, h...)
}

func (c *cmsSite) want(r *response, status int, code string) map[string]any {
	c.t.Helper()
	if r.status != status {
		c.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code == "" {
		return nil
	}
	m := r.json(c.t)
	if m["code"] != code {
		c.t.Fatalf("code %v, want %s: %s", m["code"], code, r.body)
	}
	return m
}

// post writes a post straight into the store and waits for the edge and the origin to show it.
func (c *cmsSite) post(p *schema.Post) {
	c.t.Helper()
	ctx := context.Background()
	commits, err := c.s.db.WriteTx(ctx, func(tx *store.Tx) error {
		if p.ID == 0 {
			return tx.CreatePost(ctx, c.tn, p)
		}
		old, err := tx.Post(ctx, c.tn, p.ID)
		if err != nil {
			return err
		}
		return tx.UpdatePost(ctx, c.tn, old, p)
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sync(commits)
}

func (c *cmsSite) sync(commits []store.LogCommit) {
	c.t.Helper()
	for _, cm := range commits {
		if cm.Log == "cms" {
			for _, addr := range []string{c.edge, c.s.originAddr} {
				r := call(c.t, "GET", addr, c.host, fmt.Sprintf("/index.php?rest_route=/cms/v2/categories&vitrine_min_version=%d", cm.Version), "")
				if r.status != 200 {
					c.t.Fatalf("%s behind: %d %s", addr, r.status, r.body)
				}
			}
		}
	}
}

func id(m map[string]any) int64 { return int64(m["id"].(float64)) }

func TestCMSTerms(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newCMSSite(t)
	admin, editor := schema.RoleAdministrator, schema.RoleEditor

	// Who may create a category: manage_categories (editors and administrators).
	for _, tc := range []struct {
		role   schema.Role
		status int
		code   string
	}{
		{"", 401, "rest_cannot_create"},
		{schema.RoleSubscriber, 403, "rest_cannot_create"},
		{schema.RoleAuthor, 403, "rest_cannot_create"},
	} {
		c.want(c.rest(tc.role, "POST", "/cms/v2/categories", `{"name":"Nope"}`), tc.status, tc.code)
	}
	r := c.rest(admin, "POST", "/cms/v2/categories", `{"name":"News & Views","description":"What happens."}`)
	c.want(r, 201, "")
	news := r.json(t)
	if got, want := r.header.Get("Location"), "https://cms.shop.example/index.php?rest_route=/cms/v2/categories/"+fmt.Sprint(id(news)); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if news["slug"] != "news-views" || news["name"] != "News &amp; Views" || news["count"] != 0.0 || news["parent"] != 0.0 {
		t.Errorf("created %s", r.body)
	}
	r = c.rest(editor, "POST", "/cms/v2/categories", fmt.Sprintf(`{"name":"Sports","parent":%d}`, id(news)))
	c.want(r, 201, "")
	sports := r.json(t)
	r = c.rest(editor, "POST", "/cms/v2/tags", `{"name":"Go"}`)
	c.want(r, 201, "")
	goTag := r.json(t)
	if _, ok := goTag["parent"]; ok {
		t.Errorf("a tag has no parent: %s", r.body)
	}

	// Validation and uniqueness.
	for _, tc := range []struct {
		name, route, body string
		status            int
		code              string
	}{
		{"missing name", "/cms/v2/categories", `{"slug":"x"}`, 400, "rest_missing_callback_param"},
		{"empty body", "/cms/v2/categories", ``, 400, "rest_missing_callback_param"},
		{"blank name", "/cms/v2/categories", `{"name":"  "}`, 400, "empty_term_name"},
		{"name taken under the same parent", "/cms/v2/categories", `{"name":"news & views"}`, 400, "term_exists"},
		{"slug taken", "/cms/v2/categories", `{"name":"Other","slug":"news-views"}`, 400, "duplicate_term_slug"},
		{"unknown parent", "/cms/v2/categories", `{"name":"Orphan","parent":999}`, 400, "rest_term_invalid"},
		{"tag as parent", "/cms/v2/categories", fmt.Sprintf(`{"name":"Orphan","parent":%d}`, id(goTag)), 400, "rest_term_invalid"},
		{"tags have no parent", "/cms/v2/tags", `{"name":"Child","parent":1}`, 400, "rest_invalid_param"},
		{"wrong type", "/cms/v2/categories", `{"name":5}`, 400, "rest_invalid_param"},
		{"bad json", "/cms/v2/categories", `{"name":`, 400, "rest_invalid_json"},
		{"existing id", "/cms/v2/categories", `{"name":"X","id":3}`, 400, "rest_term_exists"},
		{"unknown meta", "/cms/v2/categories", `{"name":"X","meta":{"a":"b"}}`, 400, "rest_invalid_param"},
		{"self as parent", fmt.Sprintf("/cms/v2/categories/%d", id(news)), fmt.Sprintf(`{"parent":%d}`, id(news)), 400, "rest_term_invalid"},
		{"descendant as parent", fmt.Sprintf("/cms/v2/categories/%d", id(news)), fmt.Sprintf(`{"parent":%d}`, id(sports)), 400, "rest_term_invalid"},
		{"update unknown", "/cms/v2/categories/999", `{"name":"X"}`, 404, "rest_term_invalid"},
		{"update a tag as a category", fmt.Sprintf("/cms/v2/categories/%d", id(goTag)), `{"name":"X"}`, 404, "rest_term_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.want(c.rest(admin, "POST", tc.route, tc.body), tc.status, tc.code)
		})
	}
	// The same name is fine under another parent, and a derived slug is made unique.
	r = c.rest(admin, "POST", "/cms/v2/categories", fmt.Sprintf(`{"name":"News & Views","parent":%d}`, id(sports)))
	c.want(r, 201, "")
	if m := r.json(t); m["slug"] != "news-views-2" {
		t.Errorf("derived slug %v, want news-views-2", m["slug"])
	}
	nested := r.json(t)

	// A published post counts; a draft does not.
	p := &schema.Post{Type: "post", Status: schema.StatusPublish, Title: "Hello", Content: "World", Author: c.users[admin].ID,
		CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: time.Now().UTC().Add(-time.Hour),
		Categories: []schema.TermID{schema.TermID(id(news))}, Tags: []schema.TermID{schema.TermID(id(goTag))}}
	c.post(p)
	c.post(&schema.Post{Type: "post", Status: schema.StatusDraft, Title: "Draft", Author: c.users[admin].ID, CommentStatus: "open", PingStatus: "open",
		Format: "standard", DateGMT: time.Now().UTC(), Categories: []schema.TermID{schema.TermID(id(sports))}})

	// A post's _embed of wp:term shows its terms from the replica (categories, then tags).
	r = c.rest("", "GET", fmt.Sprintf("/cms/v2/posts/%d?_embed=wp:term", p.ID), "")
	c.want(r, 200, "")
	var embedded struct {
		Embedded struct {
			Term [][]map[string]any `json:"wp:term"`
		} `json:"_embedded"`
	}
	if err := json.Unmarshal(r.body, &embedded); err != nil || len(embedded.Embedded.Term) != 2 ||
		len(embedded.Embedded.Term[0]) != 1 || embedded.Embedded.Term[0][0]["slug"] != "news-views" ||
		len(embedded.Embedded.Term[1]) != 1 || embedded.Embedded.Term[1][0]["name"] != "Go" {
		t.Errorf("embedded terms: %v %s", err, r.body)
	}

	// Golden bodies of a term in each context (edit with manage_categories).
	ref := "\x00"
	r = c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(news)), "")
	c.want(r, 200, "")
	golden(t, "cms_category_view.golden", r.body, ref)
	r = c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d?context=embed", id(news)), "")
	c.want(r, 200, "")
	golden(t, "cms_category_embed.golden", r.body, ref)
	r = c.rest(editor, "GET", fmt.Sprintf("/cms/v2/categories/%d?context=edit", id(sports)), "")
	c.want(r, 200, "")
	golden(t, "cms_category_edit.golden", r.body, ref)
	r = c.rest("", "GET", fmt.Sprintf("/cms/v2/tags/%d", id(goTag)), "")
	c.want(r, 200, "")
	golden(t, "cms_tag_view.golden", r.body, ref)

	// Read permissions: anyone views; edit context needs manage_categories.
	for _, role := range cmsRoles {
		want, code := 200, ""
		switch role {
		case "":
			want, code = 401, "rest_forbidden_context"
		case schema.RoleSubscriber, schema.RoleAuthor:
			want, code = 403, "rest_forbidden_context"
		}
		t.Run("edit context as "+string(role), func(t *testing.T) {
			c.want(c.rest(role, "GET", "/cms/v2/categories?context=edit", ""), want, code)
			c.want(c.rest(role, "GET", fmt.Sprintf("/cms/v2/tags/%d?context=edit", id(goTag)), ""), want, code)
			c.want(c.rest(role, "GET", "/cms/v2/categories", ""), 200, "")
		})
	}
	c.want(c.rest("", "GET", "/cms/v2/categories/999", ""), 404, "rest_term_invalid")
	c.want(c.rest("", "GET", fmt.Sprintf("/cms/v2/tags/%d", id(news)), ""), 404, "rest_term_invalid")
	c.want(c.rest("", "GET", "/cms/v2/categories?orderby=title", ""), 400, "rest_invalid_param")
	c.want(c.rest("", "GET", "/cms/v2/categories?per_page=101", ""), 400, "rest_invalid_param")

	// Collection parameters.
	names := func(r *response) string {
		t.Helper()
		var list []map[string]any
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var out []string
		for _, m := range list {
			out = append(out, fmt.Sprint(m["slug"]))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct{ query, want string }{
		{"", "news-views,news-views-2,sports"},
		{"order=desc", "sports,news-views,news-views-2"},
		{"orderby=id", "news-views,sports,news-views-2"},
		{"orderby=count&order=desc", "news-views,sports,news-views-2"},
		{"hide_empty=1", "news-views"},
		{"parent=0", "news-views"},
		{fmt.Sprintf("parent=%d", id(news)), "sports"},
		{"search=SPO", "sports"},
		{"slug=sports,news-views", "news-views,sports"},
		{fmt.Sprintf("include=%d,%d&orderby=include", id(sports), id(news)), "sports,news-views"},
		{fmt.Sprintf("exclude=%d", id(news)), "news-views-2,sports"},
		{fmt.Sprintf("post=%d", p.ID), "news-views"},
		{"per_page=1&page=3", "sports"},
		{"per_page=1&page=4", ""},
	} {
		t.Run("list "+tc.query, func(t *testing.T) {
			if got := names(c.rest("", "GET", "/cms/v2/categories?"+tc.query, "")); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	r = c.rest("", "GET", "/cms/v2/categories?per_page=1&page=2", "")
	if r.header.Get("X-WP-Total") != "3" || r.header.Get("X-WP-TotalPages") != "3" || !strings.Contains(r.header.Get("Link"), `rel="next"`) ||
		!strings.Contains(r.header.Get("Link"), `rel="prev"`) {
		t.Errorf("paging headers %v", r.header)
	}
	if got := names(c.rest("", "GET", "/cms/v2/tags?offset=0&per_page=5", "")); got != "go" {
		t.Errorf("tags %q", got)
	}

	// Counts follow the posts: unpublishing the post empties its terms at the edge.
	p.Status = schema.StatusDraft
	c.post(p)
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(news)), "").json(t); m["count"] != 0.0 {
		t.Errorf("count after unpublishing: %v", m["count"])
	}
	p.Status = schema.StatusPublish
	c.post(p)

	// Updates: who may, and the edge shows them at once (read-your-writes through the edge).
	for _, role := range []schema.Role{"", schema.RoleSubscriber, schema.RoleAuthor} {
		want := 403
		if role == "" {
			want = 401
		}
		c.want(c.rest(role, "PATCH", fmt.Sprintf("/cms/v2/categories/%d", id(news)), `{"name":"X"}`), want, "rest_cannot_update")
		c.want(c.rest(role, "DELETE", fmt.Sprintf("/cms/v2/categories/%d?force=true", id(news)), ""), want, "rest_cannot_delete")
	}
	r = c.rest(editor, "PUT", fmt.Sprintf("/cms/v2/categories/%d", id(news)), `{"name":"News","slug":"the-news"}`)
	c.want(r, 200, "")
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(news)), "").json(t); m["name"] != "News" || m["slug"] != "the-news" || m["count"] != 1.0 {
		t.Errorf("after update: %v", m)
	}
	c.want(c.rest(editor, "PATCH", fmt.Sprintf("/cms/v2/categories/%d", id(sports)), `{"slug":"the-news"}`), 400, "duplicate_term_slug")

	// Deletes need force; children move up; posts lose the term.
	c.want(c.rest(admin, "DELETE", fmt.Sprintf("/cms/v2/categories/%d", id(news)), ""), 501, "rest_trash_not_supported")
	r = c.rest(admin, "DELETE", fmt.Sprintf("/cms/v2/categories/%d?force=true", id(news)), "")
	c.want(r, 200, "")
	if m := r.json(t); m["deleted"] != true || m["previous"].(map[string]any)["name"] != "News" {
		t.Errorf("delete answer %s", r.body)
	}
	c.want(c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(news)), ""), 404, "rest_term_invalid")
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(sports)), "").json(t); m["parent"] != 0.0 {
		t.Errorf("child's parent after delete: %v", m["parent"])
	}
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/categories/%d", id(nested)), "").json(t); m["parent"] != float64(id(sports)) {
		t.Errorf("grandchild's parent after delete: %v", m["parent"])
	}
	var stored *schema.Post
	c.s.db.Tx(context.Background(), func(tx *store.Tx) (err error) { stored, err = tx.Post(context.Background(), c.tn, p.ID); return })
	if len(stored.Categories) != 0 || len(stored.Tags) != 1 {
		t.Errorf("post terms after delete: %v %v", stored.Categories, stored.Tags)
	}
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/posts/%d", p.ID), "").json(t); fmt.Sprint(m["categories"]) != "[]" {
		t.Errorf("edge post categories after delete: %v", m["categories"])
	}

	// The replica equals the database, terms included.
	c.s.converged(c.s.origin, []schema.Visibility{schema.Pub, schema.Priv}, "cms")
}
