package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"vitrine/schema"
)

// TestCMSMenus drives /cms/v2/menus and /cms/v2/menu-locations through an edge (which forwards
// them: menus are not public) with WordPress's statuses, codes and messages.
func TestCMSMenus(t *testing.T) {
	c := newCMSSite(t)
	admin, author, subscriber := schema.RoleAdministrator, schema.RoleAuthor, schema.RoleSubscriber
	msg := func(r *response, want string) {
		t.Helper()
		if m := r.json(t); m["message"] != want {
			t.Errorf("message %q, want %q", m["message"], want)
		}
	}

	// Reading needs the edit capability of some post type (or edit_theme_options).
	r := c.rest("", "GET", "/cms/v2/menus", "")
	c.want(r, 401, "rest_cannot_view")
	msg(r, "Sorry, you are not allowed to view menus.")
	c.want(c.rest(subscriber, "GET", "/cms/v2/menus", ""), 403, "rest_cannot_view")
	c.want(c.rest(author, "GET", "/cms/v2/menus", ""), 200, "")
	c.want(c.rest(author, "GET", "/cms/v2/menus?context=edit", ""), 403, "rest_forbidden_context")
	// A page number far past any collection is an empty page, never an overflowed offset.
	c.want(c.rest(author, "GET", "/cms/v2/menus?page=9223372036854775807", ""), 200, "")
	c.want(c.rest("", "GET", "/cms/v2/menus?per_page=0", ""), 400, "rest_invalid_param") // arguments before permissions

	// Writing needs edit_theme_options (administrators only).
	r = c.rest("", "POST", "/cms/v2/menus", `{"name":"Nope"}`)
	c.want(r, 401, "rest_cannot_create")
	msg(r, "Sorry, you are not allowed to create terms in this taxonomy.")
	c.want(c.rest(author, "POST", "/cms/v2/menus", `{"name":"Nope"}`), 403, "rest_cannot_create")
	c.want(c.rest(schema.RoleEditor, "POST", "/cms/v2/menus", `{"name":"Nope"}`), 403, "rest_cannot_create")
	c.want(c.rest(admin, "POST", "/cms/v2/menus", `{}`), 400, "rest_missing_callback_param")
	c.want(c.rest(admin, "POST", "/cms/v2/menus", `{"name":"X","parent":1}`), 400, "rest_taxonomy_not_hierarchical")
	c.want(c.rest(admin, "POST", "/cms/v2/menus", `{"name":"X","auto_add":"yes"}`), 400, "rest_invalid_param")
	r = c.rest("", "POST", "/cms/v2/menus", `{"name":"X","locations":["primary","attic"]}`)
	m := c.want(r, 400, "rest_invalid_param")
	if got := fmt.Sprint(m["data"]); !strings.Contains(got, "code:rest_invalid_menu_location") || !strings.Contains(got, "location:attic") ||
		!strings.Contains(got, "locations:Invalid menu location.") {
		t.Errorf("bad location: %s", r.body)
	}

	// Create: the slug derives from the name (WordPress ignores a menu's slug).
	r = c.rest(admin, "POST", "/cms/v2/menus", `{"name":"Main & Top","slug":"ignored","description":"The header.","locations":"primary","auto_add":true}`)
	c.want(r, 201, "")
	main := r.json(t)
	if got, want := r.header.Get("Location"), "https://cms.shop.example/index.php?rest_route=/cms/v2/menus/"+fmt.Sprint(id(main)); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if main["slug"] != "main-top" || main["name"] != "Main &amp; Top" || main["auto_add"] != true || fmt.Sprint(main["locations"]) != "[primary]" {
		t.Errorf("created: %s", r.body)
	}
	M := fmt.Sprint(id(main))
	r = c.rest(admin, "POST", "/cms/v2/menus", `{"name":"main & top"}`)
	c.want(r, 400, "menu_exists")
	msg(r, "The menu name <strong>main &amp; top</strong> conflicts with another menu name. Please try another.")
	if m := r.json(t); fmt.Sprint(m["data"]) != fmt.Sprintf("map[status:400 term_id:%s]", M) || fmt.Sprint(m["additional_data"]) != "["+M+"]" {
		t.Errorf("menu_exists data: %s", r.body)
	}
	r = c.rest(admin, "POST", "/cms/v2/menus", `{"name":"Footer links"}`)
	c.want(r, 201, "")
	footer := r.json(t)
	F := fmt.Sprint(id(footer))
	if footer["auto_add"] != false || fmt.Sprint(footer["locations"]) != "[]" || footer["description"] != "" {
		t.Errorf("defaults: %s", r.body)
	}

	// Read and list.
	ref := "\x00"
	r = c.rest(admin, "GET", "/cms/v2/menus/"+M, "")
	c.want(r, 200, "")
	golden(t, "cms_menu_view.golden", r.body, ref)
	r = c.rest(author, "GET", "/cms/v2/menus/"+M+"?context=embed", "")
	c.want(r, 200, "")
	golden(t, "cms_menu_embed.golden", r.body, ref)
	c.want(c.rest(author, "GET", "/cms/v2/menus/"+M+"?context=edit", ""), 403, "rest_forbidden_context")
	c.want(c.rest("", "GET", "/cms/v2/menus/"+M, ""), 401, "rest_cannot_view")
	r = c.rest("", "GET", "/cms/v2/menus/999999", "")
	c.want(r, 404, "rest_term_invalid") // an unknown menu is a 404 first, as WordPress's get_term
	msg(r, "Term does not exist.")
	c.want(c.rest(admin, "GET", "/cms/v2/categories/"+M, ""), 404, "rest_term_invalid") // not a category
	r = c.rest(admin, "GET", "/cms/v2/menus", "")
	c.want(r, 200, "")
	if l := list(t, r); len(l) != 2 || l[0]["id"] != footer["id"] || l[1]["id"] != main["id"] || r.header.Get("X-WP-Total") != "2" {
		t.Errorf("list by name: %s", r.body)
	}
	for q, want := range map[string]string{
		"orderby=id&order=desc": F + "," + M, "search=main": M, "slug=footer-links": F, "include=" + M: M,
		"exclude=" + M: F, "hide_empty=true": "", "per_page=1&page=2": M, "offset=1": M, "post=1": "",
	} {
		r = c.rest(admin, "GET", "/cms/v2/menus?"+q, "")
		c.want(r, 200, "")
		var ids []string
		for _, m := range list(t, r) {
			ids = append(ids, fmt.Sprint(id(m)))
		}
		if got := strings.Join(ids, ","); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}

	// A menu item goes into a real menu only (WordPress's invalid_menu_id), and is listed by it.
	r = c.rest(admin, "POST", "/cms/v2/menu-items", `{"title":"Shop","url":"https://shop.example/","menus":999999}`)
	c.want(r, 400, "invalid_menu_id")
	msg(r, "Invalid menu ID.")
	r = c.rest(admin, "POST", "/cms/v2/menu-items", `{"title":"Shop","url":"https://shop.example/","menus":`+M+`}`)
	c.want(r, 201, "")
	item := r.json(t)
	c.want(c.rest(admin, "POST", "/cms/v2/menu-items", `{"title":"Elsewhere","url":"https://x.example/","menus":`+F+`}`), 201, "")
	r = c.rest(admin, "GET", "/cms/v2/menu-items?menus="+M, "")
	c.want(r, 200, "")
	if l := list(t, r); len(l) != 1 || l[0]["id"] != item["id"] || l[0]["menus"] != main["id"] {
		t.Errorf("items of the menu: %s", r.body)
	}
	for q, want := range map[string]string{"hide_empty=true": F + "," + M, "post=" + fmt.Sprint(id(item)): M} {
		r = c.rest(admin, "GET", "/cms/v2/menus?"+q, "")
		var ids []string
		for _, m := range list(t, r) {
			ids = append(ids, fmt.Sprint(id(m)))
		}
		if got := strings.Join(ids, ","); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}

	// Update: name (the slug follows), description, locations (taken from the menu holding
	// them), auto_add.
	r = c.rest(author, "POST", "/cms/v2/menus/"+M, `{"name":"Top"}`)
	c.want(r, 403, "rest_cannot_update")
	msg(r, "Sorry, you are not allowed to edit this term.")
	c.want(c.rest("", "PUT", "/cms/v2/menus/"+M, `{"name":"Top"}`), 401, "rest_cannot_update")
	c.want(c.rest(admin, "PATCH", "/cms/v2/menus/"+F, `{"name":"MAIN & TOP"}`), 400, "menu_exists")
	c.want(c.rest(admin, "PATCH", "/cms/v2/menus/999999", `{"name":"Top"}`), 404, "rest_term_invalid")
	r = c.rest(admin, "PATCH", "/cms/v2/menus/"+F, `{"name":"Bottom","slug":"nope","description":"Links.","locations":["footer","primary"],"auto_add":true}`)
	c.want(r, 200, "")
	if m := r.json(t); m["slug"] != "bottom" || m["name"] != "Bottom" || m["description"] != "Links." || fmt.Sprint(m["locations"]) != "[primary footer]" || m["auto_add"] != true {
		t.Errorf("updated: %s", r.body)
	}
	r = c.rest(admin, "PUT", "/cms/v2/menus/"+M, `{"auto_add":false}`)
	c.want(r, 200, "")
	if m := r.json(t); fmt.Sprint(m["locations"]) != "[]" || m["auto_add"] != false || m["name"] != "Main &amp; Top" {
		t.Errorf("primary moved to the other menu: %s", r.body)
	}
	r = c.rest(admin, "GET", "/cms/v2/menu-locations", "")
	c.want(r, 200, "")
	if !strings.HasPrefix(string(r.body), `{"primary":{"name":"primary","description":"Primary menu","menu":`+F) {
		t.Errorf("locations: %s", r.body)
	}
	c.want(c.rest(author, "GET", "/cms/v2/menu-locations", ""), 403, "rest_cannot_view")
	c.want(c.rest(admin, "GET", "/cms/v2/menu-locations/attic", ""), 404, "rest_menu_location_invalid")
	r = c.rest(admin, "GET", "/cms/v2/menu-locations/footer", "")
	c.want(r, 200, "")
	golden(t, "cms_menu_location.golden", r.body, ref)

	// Delete: no trash; with force the menu's items go too, and its locations are freed.
	r = c.rest(admin, "DELETE", "/cms/v2/menus/"+M, "")
	c.want(r, 501, "rest_trash_not_supported")
	msg(r, "Menus do not support trashing. Set 'force=true' to delete.")
	c.want(c.rest(author, "DELETE", "/cms/v2/menus/"+M+"?force=true", ""), 403, "rest_cannot_delete")
	r = c.rest(admin, "DELETE", "/cms/v2/menus/"+F+"?force=true", "")
	c.want(r, 200, "")
	if m := r.json(t); m["deleted"] != true || fmt.Sprint(m["previous"].(map[string]any)["locations"]) != "[primary footer]" {
		t.Errorf("deleted: %s", r.body)
	}
	c.want(c.rest(admin, "GET", "/cms/v2/menus/"+F, ""), 404, "rest_term_invalid")
	r = c.rest(admin, "GET", "/cms/v2/menu-items?menus="+F, "")
	if c.want(r, 200, ""); len(list(t, r)) != 0 {
		t.Errorf("items of a deleted menu remain: %s", r.body)
	}
	r = c.rest(admin, "GET", "/cms/v2/menu-locations/primary", "")
	if m := c.want(r, 200, ""); m == nil && !strings.Contains(string(r.body), `"menu":0`) {
		t.Errorf("freed location: %s", r.body)
	}
	c.want(c.rest(admin, "DELETE", "/cms/v2/menus/"+M, `{"force":true}`), 200, "")
	c.want(c.rest(admin, "GET", "/cms/v2/menu-items/"+fmt.Sprint(id(item)), ""), 404, "rest_post_invalid_id")

	// Concurrent creates of one name: exactly one wins, the others are menu_exists.
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.rest(admin, "POST", "/cms/v2/menus", `{"name":"Race"}`).status
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 400:
		default:
			t.Errorf("concurrent create: %d", s)
		}
	}
	r = c.rest(admin, "GET", "/cms/v2/menus?search=race", "")
	if created != 1 || len(list(t, r)) != 1 {
		t.Errorf("concurrent creates: %v, listed %s", statuses, r.body)
	}

	// Menus are batch-capable; menu locations are not.
	r = c.rest(admin, "POST", "/batch/v1", `{"requests":[{"path":"/cms/v2/menus","body":{"name":"Batched"}},{"path":"/cms/v2/menu-locations"}]}`)
	c.want(r, 207, "")
	if b := string(r.body); !strings.Contains(b, `"status":201`) || !strings.Contains(b, "rest_batch_not_allowed") && !strings.Contains(b, "rest_no_route") {
		t.Errorf("batch: %s", r.body)
	}
}

// list decodes a JSON array of objects.
func list(t *testing.T, r *response) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return out
}
