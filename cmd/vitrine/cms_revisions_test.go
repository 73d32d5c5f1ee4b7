package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/schema"
)

// revisionSite is a CMS site (newCMSSite) with a contributor as well, whose requests carry the
// highest write version seen as their floor, so that a read at the edge sees the writes before
// it.
type revisionSite struct {
	*cmsSite
	last atomic.Int64
}

func newRevisionSite(t *testing.T) *revisionSite {
	c := &revisionSite{cmsSite: newCMSSite(t)}
	c.addContributor(t)
	return c
}

// addContributor adds the user contributor1 (role contributor) with an application password.
func (c *cmsSite) addContributor(t *testing.T) {
	t.Helper()
	u := &schema.User{Login: "contributor1", Email: "contributor1@cms.example", DisplayName: "The contributor", Role: schema.RoleContributor}
	if err := c.s.db.CreateUser(context.Background(), c.tn, u); err != nil {
		t.Fatal(err)
	}
	pw := schema.NewAppPassword()
	if _, err := c.s.db.CreateAppPassword(context.Background(), c.tn, u.ID, "tests", schema.HashAppPassword(c.s.key, pw)); err != nil {
		t.Fatal(err)
	}
	c.auth[schema.RoleContributor], c.users[schema.RoleContributor] = basic(u.Login, pw), u
}

// send sends a CMS request as role to addr (the edge, or the origin directly). route may carry
// query arguments after a '?'.
func (c *revisionSite) send(addr string, role schema.Role, method, route, body string) (*response, error) {
	route, args, _ := strings.Cut(route, "?")
	uri := "/index.php?rest_route=" + route
	if args != "" {
		uri += "&" + args
	}
	req, err := http.NewRequest(method, "http://"+addr+uri, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Host = c.host
	if a := c.auth[role]; a != "" {
		req.Header.Set("Authorization", a)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if v := c.last.Load(); v > 0 {
		req.Header.Set("Vitrine-Min-Version", strconv.FormatInt(v, 10))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if v, err := strconv.ParseInt(resp.Header.Get("Vitrine-Write-Version"), 10, 64); err == nil {
		for old := c.last.Load(); v > old && !c.last.CompareAndSwap(old, v); old = c.last.Load() {
		}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// expect sends a request to the edge and checks its status and, for errors, its CMS code.
func (c *revisionSite) expect(t testing.TB, role schema.Role, method, route, body string, status int, code string) *response {
	t.Helper()
	r, err := c.send(c.edge, role, method, route, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, route, err)
	}
	if r.status != status {
		t.Fatalf("%s %s as %q: status %d, want %d: %s", method, route, role, r.status, status, r.body)
	}
	if code != "" {
		if got := r.json(t)["code"]; got != code {
			t.Fatalf("%s %s as %q: code %v, want %s: %s", method, route, role, got, code, r.body)
		}
	}
	return r
}

func (c *revisionSite) object(t testing.TB, role schema.Role, method, route, body string, status int) map[string]any {
	t.Helper()
	return c.expect(t, role, method, route, body, status, "").json(t)
}

func (c *revisionSite) list(t testing.TB, role schema.Role, route string) ([]map[string]any, *response) {
	t.Helper()
	r := c.expect(t, role, "GET", route, "", 200, "")
	var out []map[string]any
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("GET %s: %v: %s", route, err, r.body)
	}
	return out, r
}

// links returns a record's link relation, and whether it has it.
func link(m map[string]any, rel string) (map[string]any, bool) {
	links, _ := m["_links"].(map[string]any)
	l, ok := links[rel].([]any)
	if !ok || len(l) == 0 {
		return nil, false
	}
	return l[0].(map[string]any), true
}

func ids(list []map[string]any) []int64 {
	out := make([]int64, len(list))
	for i, m := range list {
		out[i] = id(m)
	}
	return out
}

func raw(m map[string]any, field string) any {
	f, _ := m[field].(map[string]any)
	return f["raw"]
}

func keys(m map[string]any) string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	return strings.Join(k, ",")
}

var cmsTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"`)

// Revisions and autosaves end to end through an edge: WordPress's revision rules on update,
// listing, paging, reading and deleting revisions, the permission matrix, autosaves of drafts
// and of published records, concurrent writers, and revisions never reaching an edge.
func TestCMSRevisions(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newRevisionSite(t)
	admin, editor, author, contrib, sub := schema.RoleAdministrator, schema.RoleEditor, schema.RoleAuthor, schema.RoleContributor, schema.RoleSubscriber
	uid := func(r schema.Role) float64 { return float64(c.users[r].ID) }
	str := func(n int64) string { return strconv.FormatInt(n, 10) }

	post := c.object(t, admin, "POST", "/cms/v2/posts", `{"title":"First","content":"One.","status":"publish"}`, 201)
	pid := id(post)
	P := str(pid)
	if h, ok := link(post, "version-history"); !ok || h["count"] != 0.0 {
		t.Fatalf("a new post's version-history: %v", post["_links"])
	}
	if _, ok := link(post, "predecessor-version"); ok {
		t.Fatalf("a new post has a predecessor-version: %v", post["_links"])
	}
	if list, r := c.list(t, admin, "/cms/v2/posts/"+P+"/revisions"); len(list) != 0 || r.header.Get("X-WP-Total") != "0" || r.header.Get("X-WP-TotalPages") != "0" {
		t.Fatalf("no revision on create: %s %v", r.body, r.header)
	}

	// WordPress's rule: a revision on update when there is none yet, or when the title, content
	// or excerpt differ from the latest one's, whitespace normalised; a copy of the post after
	// the update.
	t.Run("revision on update", func(t *testing.T) {
		for _, step := range []struct {
			name, body string
			want       int
		}{
			{"first update, even unchanged", `{"title":"First"}`, 1},
			{"identical update", `{"title":"First","content":"One."}`, 1},
			{"whitespace-only change", `{"title":"  First ","content":"One.\n\n\n"}`, 1},
			{"content change", `{"content":"Two."}`, 2},
			{"excerpt change", `{"excerpt":"Short."}`, 3},
			{"no revisioned field", `{"slug":"first-post","comment_status":"closed"}`, 3},
		} {
			t.Run(step.name, func(t *testing.T) {
				updated := c.object(t, admin, "POST", "/cms/v2/posts/"+P, step.body, 200)
				list, r := c.list(t, admin, "/cms/v2/posts/"+P+"/revisions?context=edit")
				if len(list) != step.want || r.header.Get("X-WP-Total") != str(int64(step.want)) {
					t.Fatalf("%d revisions (X-WP-Total %s), want %d", len(list), r.header.Get("X-WP-Total"), step.want)
				}
				hist, _ := link(updated, "version-history")
				pred, ok := link(updated, "predecessor-version")
				if hist["count"] != float64(step.want) || !ok || pred["id"] != list[0]["id"] ||
					!strings.HasSuffix(pred["href"].(string), "/cms/v2/posts/"+P+"/revisions/"+str(id(list[0]))) {
					t.Errorf("links %v, want count %d and the latest revision %v", updated["_links"], step.want, list[0]["id"])
				}
				latest := list[0]
				for _, f := range []string{"title", "content", "excerpt"} {
					if schema.NormalizeWhitespace(raw(latest, f).(string)) != schema.NormalizeWhitespace(raw(updated, f).(string)) {
						t.Errorf("latest revision %s = %q, post's %q", f, raw(latest, f), raw(updated, f))
					}
				}
				if latest["parent"] != float64(pid) || latest["slug"] != P+"-revision-v1" || latest["author"] != uid(admin) {
					t.Errorf("latest revision %v", latest)
				}
				// The edge serves the post, anonymously, with the same links.
				anon := c.object(t, "", "GET", "/cms/v2/posts/"+P, "", 200)
				if h, _ := link(anon, "version-history"); h["count"] != float64(step.want) {
					t.Errorf("edge's version-history %v", anon["_links"])
				}
			})
		}
	})
	all, _ := c.list(t, admin, "/cms/v2/posts/"+P+"/revisions")
	r3, r2, r1 := id(all[0]), id(all[1]), id(all[2])

	t.Run("list arguments and paging", func(t *testing.T) {
		for _, tc := range []struct {
			query      string
			want       []int64
			total      string
			totalPages string
			next, prev bool
		}{
			{"", []int64{r3, r2, r1}, "3", "1", false, false},
			{"per_page=2", []int64{r3, r2}, "3", "2", true, false},
			{"per_page=2&page=2", []int64{r1}, "3", "2", false, true},
			{"order=asc", []int64{r1, r2, r3}, "3", "1", false, false},
			{"orderby=id&order=asc", []int64{r1, r2, r3}, "3", "1", false, false},
			{"search=Two", []int64{r3, r2}, "2", "1", false, false},
			{"search=Short&orderby=relevance", []int64{r3}, "1", "1", false, false},
			{"include=" + str(r1) + "," + str(r3) + "&orderby=include", []int64{r1, r3}, "2", "1", false, false},
			{"exclude=" + str(r2), []int64{r3, r1}, "2", "1", false, false},
			{"per_page=1&offset=1", []int64{r2}, "3", "3", true, false},
			{"offset=1", []int64{r3, r2, r1}, "3", "1", false, false}, // without per_page, offset is only checked
		} {
			t.Run(tc.query, func(t *testing.T) {
				list, r := c.list(t, admin, "/cms/v2/posts/"+P+"/revisions?"+tc.query)
				if got := ids(list); !slices.Equal(got, tc.want) {
					t.Errorf("ids %v, want %v", got, tc.want)
				}
				l := r.header.Get("Link")
				if r.header.Get("X-WP-Total") != tc.total || r.header.Get("X-WP-TotalPages") != tc.totalPages ||
					strings.Contains(l, `rel="next"`) != tc.next || strings.Contains(l, `rel="prev"`) != tc.prev {
					t.Errorf("headers Total %s TotalPages %s Link %q", r.header.Get("X-WP-Total"), r.header.Get("X-WP-TotalPages"), l)
				}
				if tc.next && !strings.Contains(l, "/cms/v2/posts/"+P+"/revisions&per_page=") {
					t.Errorf("next link %q", l)
				}
			})
		}
		for _, tc := range []struct {
			query, code string
		}{
			{"page=2", "rest_revision_invalid_page_number"},
			{"per_page=2&page=3", "rest_revision_invalid_page_number"},
			{"offset=3", "rest_revision_invalid_offset_number"},
			{"per_page=1&offset=7", "rest_revision_invalid_offset_number"},
			{"per_page=0", "rest_invalid_param"},
			{"per_page=101", "rest_invalid_param"},
			{"page=0", "rest_invalid_param"},
			{"orderby=modified", "rest_invalid_param"},
			{"context=full", "rest_invalid_param"},
			{"orderby=relevance", "rest_no_search_term_defined"},
			{"orderby=include", "rest_orderby_include_missing_include"},
		} {
			t.Run("refused "+tc.query, func(t *testing.T) {
				c.expect(t, admin, "GET", "/cms/v2/posts/"+P+"/revisions?"+tc.query, "", 400, tc.code)
			})
		}
		// Arguments are validated before permissions, as WordPress does.
		c.expect(t, "", "GET", "/cms/v2/posts/"+P+"/revisions?per_page=500", "", 400, "rest_invalid_param")
	})

	t.Run("revision fields and lookups", func(t *testing.T) {
		for _, tc := range []struct{ context, keys string }{
			{"view", "_links,author,content,date,date_gmt,excerpt,guid,id,meta,modified,modified_gmt,parent,slug,title"},
			{"edit", "_links,author,content,date,date_gmt,excerpt,guid,id,meta,modified,modified_gmt,parent,slug,title"},
			{"embed", "_links,author,date,excerpt,id,parent,slug,title"},
		} {
			m := c.object(t, admin, "GET", "/cms/v2/posts/"+P+"/revisions/"+str(r1)+"?context="+tc.context, "", 200)
			if got := keys(m); got != tc.keys {
				t.Errorf("%s fields %s, want %s", tc.context, got, tc.keys)
			}
			if (raw(m, "title") != nil) != (tc.context == "edit") {
				t.Errorf("%s title %v", tc.context, m["title"])
			}
		}
		// OPTIONS describes the route with the revision's schema.
		opt := c.object(t, "", "OPTIONS", "/cms/v2/posts/"+P+"/revisions", "", 200)
		if sch, _ := opt["schema"].(map[string]any); sch["title"] != "post-revision" {
			t.Errorf("OPTIONS schema %v", opt["schema"])
		}
		other := id(c.object(t, admin, "POST", "/cms/v2/posts", `{"title":"Other","status":"publish"}`, 201))
		for _, tc := range []struct{ route, code string }{
			{"/cms/v2/posts/" + P + "/revisions/" + P, "rest_post_invalid_id"},
			{"/cms/v2/posts/" + P + "/revisions/999999", "rest_post_invalid_id"},
			{"/cms/v2/posts/" + str(other) + "/revisions/" + str(r1), "rest_revision_parent_id_mismatch"},
			{"/cms/v2/posts/999999/revisions/" + str(r1), "rest_post_invalid_parent"},
			{"/cms/v2/posts/999999/revisions", "rest_post_invalid_parent"},
			{"/cms/v2/pages/" + P + "/revisions", "rest_post_invalid_parent"},
			{"/cms/v2/posts/" + P + "/revisions/x", "rest_no_route"},
			{"/cms/v2/menu-items/" + P + "/revisions", "rest_no_route"}, // menu items have autosaves only
		} {
			c.expect(t, admin, "GET", tc.route, "", 404, tc.code)
		}
	})

	// Who may read revisions: edit rights on the post (401 anonymous, 403 otherwise).
	authored := id(c.object(t, author, "POST", "/cms/v2/posts", `{"title":"By the author","status":"publish"}`, 201))
	c.object(t, author, "POST", "/cms/v2/posts/"+str(authored), `{"content":"Edited."}`, 200)
	drafted := id(c.object(t, contrib, "POST", "/cms/v2/posts", `{"title":"Contributor draft"}`, 201))
	c.object(t, contrib, "POST", "/cms/v2/posts/"+str(drafted), `{"content":"More."}`, 200)
	t.Run("permissions", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			post   int64
			status map[schema.Role]int
		}{
			{"the administrator's published post", pid, map[schema.Role]int{"": 401, sub: 403, contrib: 403, author: 403, editor: 200, admin: 200}},
			{"the author's published post", authored, map[schema.Role]int{"": 401, sub: 403, contrib: 403, author: 200, editor: 200, admin: 200}},
			{"the contributor's draft", drafted, map[schema.Role]int{"": 401, sub: 403, contrib: 200, author: 403, editor: 200, admin: 200}},
		} {
			for _, role := range []schema.Role{"", sub, contrib, author, editor, admin} {
				t.Run(tc.name+" as "+string(role), func(t *testing.T) {
					want, code := tc.status[role], "rest_cannot_read"
					if want == 200 {
						code = ""
					}
					c.expect(t, role, "GET", "/cms/v2/posts/"+str(tc.post)+"/revisions", "", want, code)
					c.expect(t, role, "GET", "/cms/v2/posts/"+str(tc.post)+"/autosaves", "", want, code)
				})
			}
		}
		// Deleting needs delete rights on the post, then read rights.
		for _, role := range []schema.Role{"", sub, contrib, author} {
			want := map[bool]int{true: 401, false: 403}[role == ""]
			c.expect(t, role, "DELETE", "/cms/v2/posts/"+P+"/revisions/"+str(r1)+"?force=true", "", want, "rest_cannot_delete")
		}
		// The author deletes a revision of their own post.
		own, _ := c.list(t, author, "/cms/v2/posts/"+str(authored)+"/revisions")
		c.expect(t, author, "DELETE", "/cms/v2/posts/"+str(authored)+"/revisions/"+str(id(own[0]))+"?force=true", "", 200, "")
	})

	// The same answers from the edge (which forwards them) and from the origin, and golden
	// bodies of one revision and, below, one autosave.
	t.Run("through an edge as at the origin", func(t *testing.T) {
		for _, route := range []string{
			"/cms/v2/posts/" + P + "/revisions",
			"/cms/v2/posts/" + P + "/revisions?per_page=1&page=2&context=embed",
			"/cms/v2/posts/" + P + "/revisions/" + str(r2),
			"/cms/v2/posts/" + P + "/revisions/" + str(r2) + "?context=edit",
			"/cms/v2/posts/" + P + "/autosaves",
		} {
			atEdge, err := c.send(c.edge, admin, "GET", route, "")
			if err != nil {
				t.Fatal(err)
			}
			atOrigin, err := c.send(c.s.originAddr, admin, "GET", route, "")
			if err != nil {
				t.Fatal(err)
			}
			if atEdge.status != 200 || atEdge.status != atOrigin.status || string(atEdge.body) != string(atOrigin.body) ||
				atEdge.header.Get("X-WP-Total") != atOrigin.header.Get("X-WP-Total") || atEdge.header.Get("Link") != atOrigin.header.Get("Link") {
				t.Errorf("%s: edge %d %s %v\norigin %d %s %v", route, atEdge.status, atEdge.body, atEdge.header, atOrigin.status, atOrigin.body, atOrigin.header)
			}
			if cc := atEdge.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
				t.Errorf("%s: Cache-Control %q", route, cc)
			}
		}
		r := c.expect(t, admin, "GET", "/cms/v2/posts/"+P+"/revisions/"+str(r2)+"?context=edit", "", 200, "")
		golden(t, "cms_revision.golden", cmsTime.ReplaceAll(r.body, []byte(`"<time>"`)), "\x00")
		// Anonymous: forwarded and refused, never answered from the edge's replica.
		c.expect(t, "", "GET", "/cms/v2/posts/"+P+"/revisions/"+str(r2), "", 401, "rest_cannot_read")
	})

	t.Run("delete", func(t *testing.T) {
		route := "/cms/v2/posts/" + P + "/revisions/" + str(r1)
		c.expect(t, admin, "DELETE", route, "", 501, "rest_trash_not_supported")
		c.expect(t, admin, "DELETE", route+"?force=false", "", 501, "rest_trash_not_supported")
		gone := c.object(t, admin, "DELETE", route+"?force=true", "", 200)
		prev, _ := gone["previous"].(map[string]any)
		if gone["deleted"] != true || prev["id"] != float64(r1) || raw(prev, "title") != nil {
			t.Errorf("deleted: %v", gone)
		}
		c.expect(t, admin, "GET", route, "", 404, "rest_post_invalid_id")
		c.expect(t, admin, "DELETE", route+"?force=true", "", 404, "rest_post_invalid_id")
		// force in a JSON body, as wpapi sends it.
		c.object(t, admin, "DELETE", "/cms/v2/posts/"+P+"/revisions/"+str(r2), `{"force":true}`, 200)
		p := c.object(t, "", "GET", "/cms/v2/posts/"+P, "", 200)
		hist, _ := link(p, "version-history")
		pred, _ := link(p, "predecessor-version")
		if hist["count"] != 1.0 || pred["id"] != float64(r3) {
			t.Errorf("after deleting two revisions: %v", p["_links"])
		}
	})

	t.Run("autosave of a draft by its author updates the draft", func(t *testing.T) {
		d := id(c.object(t, author, "POST", "/cms/v2/posts", `{"title":"Draft","content":"Body."}`, 201))
		D := str(d)
		a := c.object(t, author, "POST", "/cms/v2/posts/"+D+"/autosaves", `{"title":"Draft 2","content":"Body 2."}`, 200)
		if id(a) != d || a["parent"] != 0.0 || a["date"] != nil || raw(a, "title") != "Draft 2" ||
			a["preview_link"] != "https://cms.shop.example/?p="+D+"&preview=true" {
			t.Errorf("in-place autosave: %v", a)
		}
		if got := c.object(t, author, "GET", "/cms/v2/posts/"+D+"?context=edit", "", 200); raw(got, "title") != "Draft 2" || raw(got, "content") != "Body 2." {
			t.Errorf("the draft after its autosave: %v", got)
		}
		if list, _ := c.list(t, author, "/cms/v2/posts/"+D+"/revisions"); len(list) != 0 {
			t.Errorf("an in-place autosave made revisions: %v", list)
		}
		if list, _ := c.list(t, author, "/cms/v2/posts/"+D+"/autosaves"); len(list) != 0 {
			t.Errorf("an in-place autosave made autosaves: %v", list)
		}
		c.expect(t, author, "GET", "/cms/v2/posts/"+D+"/autosaves/1", "", 404, "rest_post_no_autosave")
		// Someone else's autosave of the draft is an autosave revision.
		other := c.object(t, admin, "POST", "/cms/v2/posts/"+D+"/autosaves", `{"title":"Admin's idea"}`, 200)
		if id(other) == d || other["slug"] != D+"-autosave-v1" || other["author"] != uid(admin) || raw(other, "content") != "Body 2." {
			t.Errorf("an editor's autosave of a draft: %v", other)
		}
		if got := c.object(t, author, "GET", "/cms/v2/posts/"+D+"?context=edit", "", 200); raw(got, "title") != "Draft 2" {
			t.Errorf("the draft after another's autosave: %v", got)
		}
		// Status rules still apply: a contributor's autosave cannot publish.
		cd := str(drafted)
		c.expect(t, contrib, "POST", "/cms/v2/posts/"+cd+"/autosaves", `{"status":"publish"}`, 403, "rest_cannot_publish")
	})

	var autosaveID int64
	t.Run("autosave of a published post", func(t *testing.T) {
		a := c.object(t, admin, "POST", "/cms/v2/posts/"+P+"/autosaves", `{"title":"First (autosave)","content":"Three."}`, 200)
		autosaveID = id(a)
		if autosaveID == pid || a["slug"] != P+"-autosave-v1" || a["parent"] != float64(pid) ||
			a["preview_link"] != "https://cms.shop.example/?p="+P+"&preview_id="+P+"&preview=true" {
			t.Errorf("autosave: %v", a)
		}
		if got := c.object(t, admin, "GET", "/cms/v2/posts/"+P+"?context=edit", "", 200); raw(got, "title") != "  First " {
			t.Errorf("the post after its autosave: %v", raw(got, "title"))
		}
		// A second autosave rewrites the caller's autosave.
		again := c.object(t, admin, "POST", "/cms/v2/posts/"+P+"/autosaves", `{"title":"First (autosave 2)"}`, 200)
		if id(again) != autosaveID || raw(again, "title") != "First (autosave 2)" || raw(again, "content") != "Three." {
			t.Errorf("second autosave: %v", again)
		}
		// Fields equal to the post's, with an autosave already there: that autosave, unchanged.
		same := c.object(t, admin, "POST", "/cms/v2/posts/"+P+"/autosaves", `{"title":" First","content":"Two.","excerpt":"Short."}`, 200)
		if id(same) != autosaveID || raw(same, "title") != "First (autosave 2)" {
			t.Errorf("autosave equal to the post: %v", same)
		}
		list, _ := c.list(t, admin, "/cms/v2/posts/"+P+"/autosaves")
		if len(list) != 1 || id(list[0]) != autosaveID || list[0]["preview_link"] != nil {
			t.Errorf("autosaves: %v", list)
		}
		if list, _ := c.list(t, admin, "/cms/v2/posts/"+P+"/autosaves?context=edit"); len(list) != 1 || list[0]["preview_link"] == nil {
			t.Errorf("autosaves in the edit context: %v", list)
		}
		if got := c.object(t, admin, "GET", "/cms/v2/posts/"+P+"/autosaves/12345", "", 200); id(got) != autosaveID {
			t.Errorf("latest autosave: %v", got)
		}
		r := c.expect(t, admin, "GET", "/cms/v2/posts/"+P+"/autosaves/"+str(autosaveID)+"?context=edit", "", 200, "")
		golden(t, "cms_autosave.golden", cmsTime.ReplaceAll(r.body, []byte(`"<time>"`)), "\x00")

		// Another user's autosave: autosaves of every user are listed, the newest answers.
		e := c.object(t, editor, "POST", "/cms/v2/posts/"+P+"/autosaves", `{"content":"The editor's take."}`, 200)
		if id(e) == autosaveID || e["author"] != uid(editor) || strings.TrimSpace(raw(e, "title").(string)) != "First" {
			t.Errorf("the editor's autosave: %v", e)
		}
		if list, _ := c.list(t, admin, "/cms/v2/posts/"+P+"/autosaves"); !slices.Equal(ids(list), []int64{id(e), autosaveID}) {
			t.Errorf("autosaves of both: %v", ids(list))
		}
		if got := c.object(t, admin, "GET", "/cms/v2/posts/"+P+"/autosaves/1", "", 200); id(got) != id(e) {
			t.Errorf("latest autosave: %v", got)
		}
		// Autosaves are revisions to WordPress: listed among them, and counted by the post.
		revs, _ := c.list(t, admin, "/cms/v2/posts/"+P+"/revisions")
		if !slices.Equal(ids(revs), []int64{id(e), autosaveID, r3}) {
			t.Errorf("revisions with autosaves: %v", ids(revs))
		}
		p := c.object(t, "", "GET", "/cms/v2/posts/"+P, "", 200)
		hist, _ := link(p, "version-history")
		pred, _ := link(p, "predecessor-version")
		if hist["count"] != 3.0 || pred["id"] != float64(id(e)) {
			t.Errorf("links with autosaves: %v", p["_links"])
		}
	})

	t.Run("autosave refusals", func(t *testing.T) {
		for _, tc := range []struct {
			role        schema.Role
			route, body string
			status      int
			code        string
		}{
			{"", "/cms/v2/posts/" + P + "/autosaves", `{"title":"x"}`, 401, "rest_cannot_edit"},
			{sub, "/cms/v2/posts/" + P + "/autosaves", `{"title":"x"}`, 403, "rest_cannot_edit"},
			{contrib, "/cms/v2/posts/" + P + "/autosaves", `{"title":"x"}`, 403, "rest_cannot_edit"},
			{author, "/cms/v2/posts/" + P + "/autosaves", `{"title":"x"}`, 403, "rest_cannot_edit"},
			{admin, "/cms/v2/posts/999999/autosaves", `{"title":"x"}`, 404, "rest_post_invalid_id"},
			{admin, "/cms/v2/pages/" + P + "/autosaves", `{"title":"x"}`, 404, "rest_post_invalid_id"},
			{admin, "/cms/v2/posts/" + P + "/autosaves", `{"status":"nope"}`, 400, "rest_invalid_param"},
			{admin, "/cms/v2/posts/" + P + "/autosaves", `{"titel":"x"}`, 400, "rest_invalid_param"},
			{admin, "/cms/v2/posts/" + P + "/autosaves", `{"title":`, 400, "rest_invalid_json"},
			{"", "/cms/v2/posts/" + P + "/autosaves/1", "", 401, "rest_cannot_read"},
			{admin, "/cms/v2/posts/999999/autosaves/1", "", 404, "rest_post_invalid_parent"},
		} {
			method := "POST"
			if tc.body == "" {
				method = "GET"
			}
			t.Run(fmt.Sprintf("%s %s as %q", method, tc.body, tc.role), func(t *testing.T) {
				c.expect(t, tc.role, method, tc.route, tc.body, tc.status, tc.code)
			})
		}
		// Neither route may be called from a batch.
		r := c.expect(t, admin, "POST", "/batch/v1", `{"requests":[
			{"path":"/cms/v2/posts/`+P+`/autosaves","body":{"title":"x"}},
			{"method":"DELETE","path":"/cms/v2/posts/`+P+`/revisions/`+str(r3)+`?force=true"}]}`, 207, "")
		a := decode[batchAnswer](t, r)
		for i, resp := range a.Responses {
			if resp.Status != 400 || !strings.Contains(string(resp.Body), "rest_batch_not_allowed") {
				t.Errorf("batch request %d: %d %s", i, resp.Status, resp.Body)
			}
		}
	})

	t.Run("menu items have autosaves only", func(t *testing.T) {
		menu := c.object(t, admin, "POST", "/cms/v2/menus", `{"name":"Main"}`, 201)
		item := c.object(t, admin, "POST", "/cms/v2/menu-items", `{"title":"Shop","url":"https://shop.example/","menus":`+str(id(menu))+`}`, 201)
		M := str(id(item))
		a := c.object(t, admin, "POST", "/cms/v2/menu-items/"+M+"/autosaves", `{"title":"Shop 2"}`, 200)
		if a["slug"] != M+"-autosave-v1" || raw(a, "title") != "Shop 2" || a["content"] != nil || a["preview_link"] != "" {
			t.Errorf("menu item autosave: %v", a)
		}
		if list, _ := c.list(t, admin, "/cms/v2/menu-items/"+M+"/autosaves"); len(list) != 1 {
			t.Errorf("menu item autosaves: %v", list)
		}
		c.expect(t, admin, "GET", "/cms/v2/menu-items/"+M+"/revisions", "", 404, "rest_no_route")
		if _, ok := link(c.object(t, admin, "GET", "/cms/v2/menu-items/"+M, "", 200), "version-history"); ok {
			t.Errorf("a menu item has a version history")
		}
	})

	t.Run("pages, blocks and navigation keep revisions", func(t *testing.T) {
		for _, tc := range []struct{ base, create string }{
			{"pages", `{"title":"About","status":"publish"}`},
			{"blocks", `{"title":"Hero","content":"<!-- wp:paragraph --><p>Hi</p><!-- /wp:paragraph -->","status":"publish"}`},
			{"navigation", `{"title":"Header","content":"<!-- wp:navigation-link /-->","status":"publish"}`},
		} {
			rec := str(id(c.object(t, admin, "POST", "/cms/v2/"+tc.base, tc.create, 201)))
			upd := c.object(t, admin, "POST", "/cms/v2/"+tc.base+"/"+rec, `{"title":"Renamed"}`, 200)
			list, _ := c.list(t, admin, "/cms/v2/"+tc.base+"/"+rec+"/revisions")
			if hist, _ := link(upd, "version-history"); len(list) != 1 || hist["count"] != 1.0 || list[0]["slug"] != rec+"-revision-v1" {
				t.Errorf("%s: %v %v", tc.base, list, upd["_links"])
			}
			if parent, _ := link(list[0], "parent"); !strings.HasSuffix(parent["href"].(string), "/cms/v2/"+tc.base+"/"+rec) {
				t.Errorf("%s revision's parent link %v", tc.base, list[0]["_links"])
			}
		}
	})

	// Two writers of one post at the same time: each update that changes the title makes one
	// revision, in commit order, and the post's links name the last one.
	t.Run("concurrent updates", func(t *testing.T) {
		q := str(id(c.object(t, admin, "POST", "/cms/v2/posts", `{"title":"Raced","status":"publish"}`, 201)))
		const writers = 6
		retries := c.s.retries.Load()
		var wg sync.WaitGroup
		statuses := make([]int, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				role := []schema.Role{admin, editor}[i%2]
				r, err := c.send(c.edge, role, "POST", "/cms/v2/posts/"+q, fmt.Sprintf(`{"title":"Raced %d"}`, i))
				if err == nil {
					statuses[i] = r.status
				}
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != 200 {
				t.Fatalf("writer %d: status %d", i, st)
			}
		}
		t.Logf("%d concurrent updates of one post: %d transaction retries", writers, c.s.retries.Load()-retries)
		list, r := c.list(t, admin, "/cms/v2/posts/"+q+"/revisions?context=edit")
		if len(list) != writers || r.header.Get("X-WP-Total") != str(writers) {
			t.Fatalf("%d revisions after %d concurrent updates", len(list), writers)
		}
		var titles []string
		for i, rev := range list {
			titles = append(titles, raw(rev, "title").(string))
			if i > 0 && (id(rev) >= id(list[i-1]) || rev["date_gmt"].(string) > list[i-1]["date_gmt"].(string)) {
				t.Errorf("revisions out of order: %v", ids(list))
			}
		}
		slices.Sort(titles)
		if want := []string{"Raced 0", "Raced 1", "Raced 2", "Raced 3", "Raced 4", "Raced 5"}; !slices.Equal(titles, want) {
			t.Errorf("revision titles %v", titles)
		}
		now := c.object(t, admin, "GET", "/cms/v2/posts/"+q+"?context=edit", "", 200)
		hist, _ := link(now, "version-history")
		pred, _ := link(now, "predecessor-version")
		if raw(now, "title") != raw(list[0], "title") || hist["count"] != float64(writers) || pred["id"] != list[0]["id"] {
			t.Errorf("post %v %v, latest revision %v", raw(now, "title"), now["_links"], list[0]["id"])
		}
		// Concurrent autosaves by one user leave that user one autosave.
		statuses = make([]int, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.send(c.edge, admin, "POST", "/cms/v2/posts/"+q+"/autosaves", fmt.Sprintf(`{"content":"Draft %d"}`, i))
				if err == nil {
					statuses[i] = r.status
				}
			}()
		}
		wg.Wait()
		if autosaves, _ := c.list(t, admin, "/cms/v2/posts/"+q+"/autosaves"); len(autosaves) != 1 || slices.ContainsFunc(statuses, func(s int) bool { return s != 200 }) {
			t.Errorf("concurrent autosaves: %d autosaves, statuses %v", len(autosaves), statuses)
		}
	})

	// Revisions are never replicated: the edge's replica and the origin's hold exactly the
	// database's replicated state, which has the posts' counts but no revision.
	t.Run("never at an edge", func(t *testing.T) {
		for _, comp := range c.s.replicas {
			vis := []schema.Visibility{schema.Pub}
			if comp == c.s.origin {
				vis = append(vis, schema.Priv)
			}
			c.s.converged(comp, vis, "cms")
			snap := comp.rep.TenantBySlug("cms").Snapshot()
			for _, rid := range []int64{r3, autosaveID} {
				if p := snap.Post(schema.PostID(rid), replica.Full); p != nil {
					t.Errorf("%s holds revision %d: %+v", comp.name, rid, p)
				}
			}
		}
	})

	t.Run("trashing and deleting a post", func(t *testing.T) {
		// Trashing is an update: a post without revisions gets its first.
		tr := str(id(c.object(t, admin, "POST", "/cms/v2/posts", `{"title":"To trash","status":"publish"}`, 201)))
		c.object(t, admin, "DELETE", "/cms/v2/posts/"+tr, "", 200)
		if list, _ := c.list(t, admin, "/cms/v2/posts/"+tr+"/revisions"); len(list) != 1 {
			t.Errorf("revisions of a trashed post: %d", len(list))
		}
		// Deleting with force deletes its revisions and autosaves.
		c.object(t, admin, "DELETE", "/cms/v2/posts/"+P+"?force=true", "", 200)
		c.expect(t, admin, "GET", "/cms/v2/posts/"+P+"/revisions", "", 404, "rest_post_invalid_parent")
		c.expect(t, admin, "GET", "/cms/v2/posts/"+P+"/autosaves", "", 404, "rest_post_invalid_parent")
		ctx := context.Background()
		err := c.s.db.Tx(ctx, func(tx *store.Tx) error {
			left, err := tx.Revisions(ctx, c.tn, schema.PostID(pid))
			if err == nil && len(left) > 0 {
				t.Errorf("%d revisions outlive their post", len(left))
			}
			if r, err := tx.Revision(ctx, c.tn, schema.PostID(autosaveID)); err == nil {
				t.Errorf("autosave %d outlives its post: %+v", autosaveID, r)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
