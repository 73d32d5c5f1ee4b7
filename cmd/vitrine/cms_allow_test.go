package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestCMSAllowHeader: every CMS answer carries WordPress's Allow header, the methods of the
// matched route whose permission check the caller passes, and each self link's targetHints
// lists the same for a GET of the link: through an edge for anonymous readers (cached, and never
// carrying a credentialed caller's list) and through the origin for credentialed ones.
func TestCMSAllowHeader(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{CacheBytes: 16 << 20})
	tn, _ := s.tenant("news")
	host := "news.example.test"
	editor := basic("edith", cmsUser(t, s, tn, "edith", schema.RoleEditor))
	author := basic("arthur", cmsUser(t, s, tn, "arthur", schema.RoleAuthor))
	rest := func(route string) string { return "/index.php?rest_route=" + route }
	const all = "GET, POST, PUT, PATCH, DELETE"
	hints := func(r *response) string {
		var p struct {
			Links struct {
				Self []struct {
					TargetHints *struct {
						Allow []string `json:"allow"`
					} `json:"targetHints"`
				} `json:"self"`
			} `json:"_links"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil || len(p.Links.Self) != 1 {
			t.Fatalf("no self link: %d %s", r.status, r.body)
		}
		if p.Links.Self[0].TargetHints == nil {
			return "(none)"
		}
		return fmt.Sprint(p.Links.Self[0].TargetHints.Allow)
	}
	check := func(what string, r *response, status int, allow string) {
		t.Helper()
		if r.status != status || r.header.Get("Allow") != allow || len(r.header.Values("Allow")) > 1 {
			t.Fatalf("%s: %d Allow %q, want %d Allow %q: %s", what, r.status, r.header.Values("Allow"), status, allow, r.body)
		}
	}

	// The editor's post, and one of the author's own.
	r := call(t, "POST", e.addr, host, rest("/cms/v2/posts"), `{"title":"Editor's","status":"publish"}`, "Authorization", editor)
	check("editor's create", r, 201, "GET, POST")
	if got := hints(r); got != "[GET POST PUT PATCH DELETE]" {
		t.Fatalf("editor's create: targetHints %s", got)
	}
	item := rest(fmt.Sprintf("/cms/v2/posts/%d", int64(r.json(t)["id"].(float64))))
	r = call(t, "POST", e.addr, host, rest("/cms/v2/posts"), `{"title":"Author's","status":"publish"}`, "Authorization", author)
	check("author's create", r, 201, "GET, POST")
	own := rest(fmt.Sprintf("/cms/v2/posts/%d", int64(r.json(t)["id"].(float64))))
	waitFor(t, 5*time.Second, "the posts at the edge", func() bool {
		a, _ := tryCall("GET", e.addr, host, item)
		b, _ := tryCall("GET", e.addr, host, own)
		return a != nil && a.status == 200 && b != nil && b.status == 200
	})

	anonymous := func(round string) {
		t.Helper()
		r := call(t, "GET", e.addr, host, item, "")
		check(round+": anonymous GET", r, 200, "GET")
		if got := hints(r); got != "[GET]" {
			t.Fatalf("%s: anonymous targetHints %s", round, got)
		}
		check(round+": anonymous HEAD", call(t, "HEAD", e.addr, host, item, ""), 200, "GET")
		check(round+": anonymous collection", call(t, "GET", e.addr, host, rest("/cms/v2/posts"), ""), 200, "GET")
	}
	anonymous("first")
	anonymous("cached") // a cache hit: the Allow is the entry's, an anonymous caller's

	r = call(t, "GET", e.addr, host, item+"&context=edit", "", "Authorization", editor)
	check("editor's edit context", r, 200, all)
	if got := hints(r); got != "[GET POST PUT PATCH DELETE]" {
		t.Fatalf("editor: targetHints %s", got)
	}
	check("editor's HEAD", call(t, "HEAD", e.addr, host, item+"&context=edit", "", "Authorization", editor), 200, all)
	check("editor's collection", call(t, "GET", e.addr, host, rest("/cms/v2/posts"), "", "Authorization", editor), 200, "GET, POST")

	// An author may read another's published post but neither edit nor delete it
	// (edit_others_posts, delete_others_posts); their own published post they may.
	r = call(t, "GET", e.addr, host, item, "", "Authorization", author)
	check("author, another's post", r, 200, "GET")
	if got := hints(r); got != "[GET]" {
		t.Fatalf("author, another's post: targetHints %s", got)
	}
	r = call(t, "GET", e.addr, host, own, "", "Authorization", author)
	check("author, own post", r, 200, all)
	if got := hints(r); got != "[GET POST PUT PATCH DELETE]" {
		t.Fatalf("author, own post: targetHints %s", got)
	}
	// In a list, each item's targetHints are its own.
	r = call(t, "GET", e.addr, host, rest("/cms/v2/posts"), "", "Authorization", author)
	var list []struct {
		ID    int64 `json:"id"`
		Links struct {
			Self []struct {
				TargetHints struct {
					Allow []string `json:"allow"`
				} `json:"targetHints"`
			} `json:"self"`
		} `json:"_links"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 2 {
		t.Fatalf("author's list: %s", r.body)
	}
	for _, p := range list {
		want := []string{"GET"}
		if rest(fmt.Sprintf("/cms/v2/posts/%d", p.ID)) == own {
			want = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
		}
		if got := p.Links.Self[0].TargetHints.Allow; !slices.Equal(got, want) {
			t.Fatalf("author's list: post %d targetHints %v, want %v", p.ID, got, want)
		}
	}

	// After credentialed reads, the anonymous answer is still the anonymous one.
	anonymous("after the credentialed reads")

	// A missing post: no check passes, no Allow. A bad argument is not a permission check.
	check("anonymous, missing post", call(t, "GET", e.addr, host, rest("/cms/v2/posts/999999"), ""), 404, "")
	check("anonymous, edit context", call(t, "GET", e.addr, host, item+"&context=edit", ""), 401, "")
	check("anonymous, bad per_page", call(t, "GET", e.addr, host, rest("/cms/v2/posts")+"&per_page=0", ""), 400, "GET")

	// Terms, users, OPTIONS and writes.
	r = call(t, "POST", e.addr, host, rest("/cms/v2/categories"), `{"name":"Allowed"}`, "Authorization", editor)
	check("category create", r, 201, "GET, POST")
	cat := rest(fmt.Sprintf("/cms/v2/categories/%d", int64(r.json(t)["id"].(float64))))
	waitFor(t, 5*time.Second, "the category at the edge", func() bool {
		r, _ := tryCall("GET", e.addr, host, cat)
		return r != nil && r.status == 200
	})
	r = call(t, "GET", e.addr, host, cat, "")
	check("anonymous category", r, 200, "GET")
	if got := hints(r); got != "[GET]" {
		t.Fatalf("anonymous category: targetHints %s", got)
	}
	r = call(t, "GET", e.addr, host, cat, "", "Authorization", editor)
	check("editor's category", r, 200, all)
	if got := hints(r); got != "[GET POST PUT PATCH DELETE]" {
		t.Fatalf("editor's category: targetHints %s", got)
	}
	check("author's category", call(t, "GET", e.addr, host, cat, "", "Authorization", author), 200, "GET")
	check("anonymous users/me", call(t, "GET", e.addr, host, rest("/cms/v2/users/me"), ""), 401, "GET")
	check("editor's users/me", call(t, "GET", e.addr, host, rest("/cms/v2/users/me"), "", "Authorization", editor), 200, "GET, POST, PUT, PATCH")
	check("anonymous OPTIONS", call(t, "OPTIONS", e.addr, host, item, ""), 200, "GET")
	check("editor's OPTIONS", call(t, "OPTIONS", e.addr, host, item, "", "Authorization", editor), 200, all)
	check("editor's update", call(t, "PATCH", e.addr, host, item, `{"title":"Renamed"}`, "Authorization", editor), 200, all)
	check("editor's revisions", call(t, "GET", e.addr, host, rest(fmt.Sprintf("/cms/v2/posts/%s/revisions", item[len(rest("/cms/v2/posts/")):])), "", "Authorization", editor), 200, "GET")
	check("author's update of another's post", call(t, "PATCH", e.addr, host, item, `{"title":"Mine"}`, "Authorization", author), 403, "GET")
	check("editor's delete for good", call(t, "DELETE", e.addr, host, item+"&force=true", "", "Authorization", editor), 200, "")
}
