package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// Pages, blocks, menu items and navigation through an edge: writes and credentialed reads at the
// origin with each type's capabilities, anonymous reads of pages and navigation at the edge, and
// blocks and menu items never readable anonymously.
func TestCMSPostTypes(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{CacheBytes: 16 << 20})
	tn, pw := s.tenant("shop")
	host, admin := "shop.example.test", basic("admin", pw)
	author := &schema.User{Login: "writer", Email: "writer@shop.example", Role: schema.RoleAuthor}
	if err := s.db.CreateUser(context.Background(), tn, author); err != nil {
		t.Fatal(err)
	}
	authorPW := schema.NewAppPassword()
	if _, err := s.db.CreateAppPassword(context.Background(), tn, author.ID, "tests", schema.HashAppPassword(s.key, authorPW)); err != nil {
		t.Fatal(err)
	}
	writer := basic("writer", authorPW)
	rest := func(route string) string { return "/index.php?rest_route=" + route }
	var last int64
	do := func(method, route, body, auth string, want int) map[string]any {
		t.Helper()
		var h []string
		if auth != "" {
			h = []string{"Authorization", auth}
		}
		if body != "" {
			h = append(h, "Content-Type", "application/json")
		}
		if last > 0 {
			h = append(h, "Vitrine-Min-Version", fmt.Sprint(last))
		}
		r := call(t, method, e.addr, host, rest(route), body, h...)
		if r.status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, route, r.status, r.body, want)
		}
		if v := r.header.Get("Vitrine-Write-Version"); v != "" {
			fmt.Sscan(v, &last)
		}
		var m map[string]any
		json.Unmarshal(r.body, &m)
		return m
	}
	id := func(m map[string]any) string { return fmt.Sprint(int64(m["id"].(float64))) }

	about := do("POST", "/cms/v2/pages", `{"title":"About","content":"Us.","status":"publish","menu_order":2}`, admin, 201)
	team := do("POST", "/cms/v2/pages", `{"title":"Team","status":"publish","parent":`+id(about)+`}`, admin, 201)
	if team["parent"] != about["id"] || team["type"] != "page" || team["sticky"] != nil {
		t.Errorf("child page: %v", team)
	}
	post := do("POST", "/cms/v2/posts", `{"title":"News","status":"publish"}`, admin, 201)
	do("POST", "/cms/v2/pages", `{"title":"Orphan","parent":`+id(post)+`}`, admin, 400)
	do("POST", "/cms/v2/pages", `{"title":"By an author"}`, writer, 403)
	do("POST", "/cms/v2/posts", `{"title":"Author draft"}`, writer, 201)
	block := do("POST", "/cms/v2/blocks", `{"title":"Hero","content":"<!-- wp:heading --><h2>Hi</h2><!-- /wp:heading -->","status":"publish","meta":{"cms_pattern_sync_status":"unsynced"}}`, admin, 201)
	if title, _ := block["title"].(map[string]any); title["raw"] != "Hero" || title["rendered"] != nil {
		t.Errorf("block title: %v", block["title"])
	}
	do("POST", "/cms/v2/menu-items", `{"title":"Shop"}`, admin, 400) // a custom link needs a url
	menu := do("POST", "/cms/v2/menus", `{"name":"Main"}`, admin, 201)
	item := do("POST", "/cms/v2/menu-items", `{"title":"Shop","url":"https://shop.example/","menus":`+id(menu)+`}`, admin, 201)
	if item["status"] != "publish" || item["menu_order"] != float64(1) || item["type"] != "custom" {
		t.Errorf("menu item: %v", item)
	}
	nav := do("POST", "/cms/v2/navigation", `{"title":"Header","content":"<!-- wp:navigation-link /-->","status":"publish"}`, admin, 201)
	do("POST", "/cms/v2/navigation", `{"title":"x"}`, writer, 403) // edit_theme_options

	// Anonymous: pages and navigation from the edge; blocks and menu items refused.
	if got := do("GET", "/cms/v2/pages/"+id(team), "", "", 200); got["parent"] != about["id"] {
		t.Errorf("anonymous page: %v", got)
	}
	do("GET", "/cms/v2/navigation/"+id(nav), "", "", 200)
	if got := do("GET", "/cms/v2/blocks/"+id(block), "", "", 401); got["code"] != "rest_forbidden" {
		t.Errorf("anonymous block: %v", got)
	}
	if got := do("GET", "/cms/v2/menu-items", "", "", 401); got["code"] != "rest_cannot_view" {
		t.Errorf("anonymous menu items: %v", got)
	}
	if got := do("GET", "/cms/v2/menu-items", "", writer, 403); got["code"] != "rest_cannot_view" {
		t.Errorf("author's menu items: %v", got)
	}
	// The editor's views, forwarded.
	do("GET", "/cms/v2/blocks/"+id(block)+"&context=edit", "", admin, 200)
	r := call(t, "GET", e.addr, host, rest("/cms/v2/menu-items"), "", "Authorization", admin)
	var items []map[string]any
	if json.Unmarshal(r.body, &items); r.status != 200 || len(items) != 1 || r.header.Get("X-WP-Total") != "1" {
		t.Errorf("admin menu items: %d %s", r.status, r.body)
	}
	// Statuses beyond publish: anonymous is refused, an editor sees the draft.
	do("GET", "/cms/v2/posts&status=draft", "", "", 400)
	r = call(t, "GET", e.addr, host, rest("/cms/v2/posts&status=draft"), "", "Authorization", admin)
	if json.Unmarshal(r.body, &items); r.status != 200 || len(items) != 1 || items[0]["title"].(map[string]any)["rendered"] != "Author draft" {
		t.Errorf("admin drafts: %d %s", r.status, r.body)
	}
	// Deletion: menu items cannot be trashed; pages can, once.
	do("DELETE", "/cms/v2/menu-items/"+id(item), "", admin, 501)
	do("DELETE", "/cms/v2/menu-items/"+id(item)+"&force=true", "", admin, 200)
	if got := do("DELETE", "/cms/v2/pages/"+id(team), "", admin, 200); got["status"] != "trash" {
		t.Errorf("trashed page: %v", got)
	}
	do("DELETE", "/cms/v2/pages/"+id(team), "", admin, 410)
	// A trashed page exists: anonymous callers may not read it (WordPress: 401 rest_forbidden).
	do("GET", "/cms/v2/pages/"+id(team), "", "", 401)
	// One id space: a page's id is not a post.
	do("GET", "/cms/v2/posts/"+id(about), "", "", 404)
}
