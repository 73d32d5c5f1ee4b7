package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
)

// Templates and template parts end to end through an edge (which forwards them: none is
// public): the active theme's files, customising one (the same id, now a record), reading it back
// at once through two edges, its revisions, reverting and deleting, custom templates and their
// trash, the lookup of the template hierarchy, template parts and their areas, autosaves, the
// permission matrix and WordPress's refusals.
func TestCMSTemplates(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newRevisionSite(t)
	admin, editor, author, contrib, sub := schema.RoleAdministrator, schema.RoleEditor, schema.RoleAuthor, schema.RoleContributor, schema.RoleSubscriber
	const T, P = "/cms/v2/templates", "/cms/v2/template-parts"
	const theme = "vitrine-blocks"
	expect := func(role schema.Role, method, route, body string, status int, code string) map[string]any {
		t.Helper()
		r := c.expect(t, role, method, route, body, status, code)
		if len(r.body) > 0 && r.body[0] == '{' {
			return r.json(t)
		}
		return nil
	}
	items := func(role schema.Role, route string) []map[string]any {
		t.Helper()
		l, r := c.list(t, role, route)
		if r.header.Get("X-WP-Total") != "" {
			t.Errorf("%s: an unpaginated list has no X-WP-Total: %v", route, r.header)
		}
		return l
	}
	slugs := func(l []map[string]any) string {
		var out []string
		for _, m := range l {
			out = append(out, fmt.Sprintf("%s:%s", m["slug"], m["source"]))
		}
		return strings.Join(out, " ")
	}
	rawOf := func(m map[string]any, field string) string {
		f, _ := m[field].(map[string]any)
		s, _ := f["raw"].(string)
		return s
	}

	// Who may read (the edit capability of some post type) and who may write
	// (edit_theme_options: administrators).
	m := expect("", "GET", T, "", 401, "rest_cannot_manage_templates")
	if m["message"] != "Sorry, you are not allowed to access the templates on this site." {
		t.Errorf("message: %v", m["message"])
	}
	expect(sub, "GET", T, "", 403, "rest_cannot_manage_templates")
	expect(sub, "GET", P+"/"+theme+"//header", "", 403, "rest_cannot_manage_templates")
	expect("", "GET", T+"/lookup?slug=page", "", 401, "rest_cannot_manage_templates")
	for _, r := range []schema.Role{contrib, author, editor, admin} {
		expect(r, "GET", T+"/"+theme+"//single", "", 200, "")
	}
	expect(editor, "POST", T+"/"+theme+"//single", `{"content":"x"}`, 403, "rest_cannot_manage_templates")
	expect(editor, "POST", T, `{"slug":"nope"}`, 403, "rest_cannot_manage_templates")
	expect(editor, "DELETE", T+"/"+theme+"//single", "", 403, "rest_cannot_manage_templates")
	expect("", "PUT", P+"/"+theme+"//header", `{"content":"x"}`, 401, "rest_cannot_manage_templates")
	expect("", "POST", T, `{}`, 400, "rest_missing_callback_param")         // arguments before permissions
	expect("", "GET", T+"/lookup", "", 400, "rest_missing_callback_param")  // slug is required
	expect(editor, "GET", T+"?context=nope", "", 400, "rest_invalid_param") // context's enum
	expect(admin, "POST", T, `{"slug":"!!!"}`, 400, "rest_invalid_param")   // the slug's pattern
	expect(admin, "POST", T, `{"slug":`, 400, "rest_invalid_json")          // bad JSON
	expect(admin, "POST", T+"/"+theme+"//single", `{"title":`, 400, "rest_invalid_json")
	expect(admin, "POST", T+"/"+theme+"//single", `{"content":7}`, 400, "rest_invalid_param")
	expect(admin, "POST", T+"/"+theme+"//single", `{"status":"gone"}`, 400, "rest_invalid_param")
	r := c.expect(t, editor, "GET", T+"/"+theme+"//single", "", 200, "")
	if a := r.header.Get("Allow"); a != "GET" {
		t.Errorf("editor's Allow %q", a)
	}
	r = c.expect(t, admin, "GET", T+"/"+theme+"//single", "", 200, "")
	if a := r.header.Get("Allow"); a != "GET, POST, PUT, PATCH, DELETE" {
		t.Errorf("administrator's Allow %q", a)
	}

	// The active theme's files, as templates of source theme.
	files := "404:theme archive:theme author:theme category:theme date:theme front-page:theme home:theme index:theme page-wide:theme " +
		"page:theme search:theme single:theme singular:theme tag:theme taxonomy:theme"
	if got := slugs(items(editor, T)); got != files {
		t.Errorf("templates:\n%s\nwant\n%s", got, files)
	}
	r = c.expect(t, editor, "GET", T+"/"+theme+"//single", "", 200, "")
	golden(t, "cms_template_file_view.golden", r.body, "\x00")
	single := r.json(t)
	if single["id"] != theme+"//single" || single["theme"] != theme || single["type"] != "cms_template" || single["source"] != "theme" ||
		single["cms_id"] != 0.0 || single["has_theme_file"] != true || single["is_custom"] != false || single["origin"] != nil ||
		single["modified"] != nil || single["original_source"] != "theme" || single["author_text"] != "Vitrine Blocks" ||
		!strings.Contains(rawOf(single, "content"), "wp:post-content") {
		t.Errorf("single: %v", single)
	}
	if one := expect(editor, "GET", T+"/"+theme+"/single", "", 200, ""); one["id"] != single["id"] { // one slash, as WordPress normalises it
		t.Errorf("theme/slug: %v", one)
	}
	m = expect(editor, "GET", T+"/"+theme+"//nothing", "", 404, "rest_template_not_found")
	if m["message"] != "No templates exist with that id." {
		t.Errorf("message %v", m["message"])
	}
	expect(editor, "GET", T+"/other-theme//single", "", 404, "rest_template_not_found") // files are the active theme's
	expect(editor, "GET", T+"/"+theme+"//header", "", 404, "rest_template_not_found")   // a part is not a template
	if got := items(editor, T+"?post_type=page"); slugs(got) != "page-wide:theme" {
		t.Errorf("post_type=page: %s", slugs(got))
	}
	if got := items(editor, T+"?cms_id=0"); len(got) != 0 {
		t.Errorf("cms_id lists records only: %s", slugs(got))
	}

	// A theme file is not removable, and has no revisions until it is customised.
	m = expect(admin, "DELETE", T+"/"+theme+"//single", "", 400, "rest_invalid_template")
	if m["message"] != "Templates based on theme files can't be removed." {
		t.Errorf("message %v", m["message"])
	}
	expect(admin, "GET", T+"/"+theme+"//single/revisions", "", 400, "rest_invalid_template")
	expect(admin, "GET", T+"/"+theme+"//nothing/revisions", "", 404, "rest_post_invalid_parent")

	// Customising: the same id, now a record (source custom, cms_id, origin theme), read back at
	// once at the edge and at a second edge.
	e2 := c.s.startEdge(edge.Config{})
	waitFor(t, 10*time.Second, "the second edge to serve the store", func() bool {
		tn := e2.rep.TenantBySlug("cms")
		return tn != nil && tn.Ready()
	})
	v := func(n int) string { return fmt.Sprintf(`<!-- wp:paragraph --><p>v%d</p><!-- /wp:paragraph -->`, n) }
	r = c.expect(t, admin, "POST", T+"/"+theme+"//single", `{"content":"`+strings.ReplaceAll(v(1), `"`, `\"`)+`"}`, 200, "")
	golden(t, "cms_template_custom_edit.golden", cmsTime.ReplaceAll(r.body, []byte(`"<time>"`)), "\x00")
	custom := r.json(t)
	cmsID := custom["cms_id"].(float64)
	if custom["id"] != theme+"//single" || custom["source"] != "custom" || cmsID <= 0 || custom["origin"] != "theme" ||
		rawOf(custom, "content") != v(1) || rawOf(custom, "title") != "Single Posts" || custom["description"] == "" ||
		custom["modified"] == nil || custom["original_source"] != "theme" || custom["content"].(map[string]any)["block_version"] != 1.0 {
		t.Errorf("customised: %v", custom)
	}
	for _, addr := range []string{c.edge, e2.addr} {
		r, err := c.send(addr, editor, "GET", T+"/"+theme+"//single", "")
		if err != nil || r.status != 200 {
			t.Fatalf("read back at %s: %v %v", addr, err, r)
		}
		if got := r.json(t); got["source"] != "custom" || rawOf(got, "content") != v(1) || got["cms_id"] != cmsID {
			t.Errorf("read back at %s: %s", addr, r.body)
		}
	}
	if l := items(editor, T); l[0]["slug"] != "single" || l[0]["source"] != "custom" || strings.Count(slugs(l), "single:") != 1 {
		t.Errorf("the record comes first and hides its file: %s", slugs(l))
	}
	if l := items(editor, T+fmt.Sprintf("?cms_id=%d", int64(cmsID))); slugs(l) != "single:custom" {
		t.Errorf("cms_id: %s", slugs(l))
	}
	if th := expect(editor, "GET", T+"/"+theme+"//single?source=theme", "", 200, ""); th["source"] != "theme" {
		t.Errorf("source=theme reads the file: %v", th)
	}

	// Revisions by the posts' rules: none on the customisation, then one per changing update.
	for n := 2; n <= 3; n++ {
		expect(admin, "PATCH", T+"/"+theme+"//single", `{"content":"`+strings.ReplaceAll(v(n), `"`, `\"`)+`"}`, 200, "")
	}
	revs, _ := c.list(t, admin, T+"/"+theme+"//single/revisions")
	if len(revs) != 2 || rawOf(revs[0], "content") != v(3) || rawOf(revs[1], "content") != v(2) || revs[1]["parent"] != cmsID ||
		revs[1]["id"] != theme+"//single" || revs[1]["status"] != "inherit" {
		t.Fatalf("revisions: %v", revs)
	}
	earlier := fmt.Sprint(int64(revs[1]["cms_id"].(float64)))
	if got := expect(admin, "GET", T+"/"+theme+"//single/revisions/"+earlier, "", 200, ""); rawOf(got, "content") != v(2) {
		t.Errorf("the earlier revision: %v", got)
	}
	expect(editor, "GET", T+"/"+theme+"//single/revisions", "", 403, "rest_cannot_read")
	item := expect(admin, "GET", T+"/"+theme+"//single", "", 200, "")
	if h, ok := link(item, "version-history"); !ok || h["count"] != 2.0 {
		t.Errorf("version-history: %v", item["_links"])
	}

	// Deleting the customised template puts it in the trash: its id answers with the theme
	// file again; the renamed id is the trashed record, 410 to a second delete.
	trashed := expect(admin, "DELETE", T+"/"+theme+"//single", "", 200, "")
	if trashed["status"] != "trash" || trashed["id"] != theme+"//single" {
		t.Errorf("trashed: %v", trashed)
	}
	if back := expect(editor, "GET", T+"/"+theme+"//single", "", 200, ""); back["source"] != "theme" || back["cms_id"] != 0.0 {
		t.Errorf("after the delete: %v", back)
	}
	expect(editor, "GET", T+"/"+theme+"//single__trashed", "", 200, "")
	m = expect(admin, "DELETE", T+"/"+theme+"//single__trashed", "", 410, "rest_template_already_trashed")
	if m["message"] != "The template has already been deleted." {
		t.Errorf("message %v", m["message"])
	}

	// source "theme" in an update reverts a customised template to its file.
	expect(admin, "PUT", T+"/"+theme+"//home", `{"title":"My home"}`, 200, "")
	reverted := expect(admin, "POST", T+"/"+theme+"//home", `{"source":"theme"}`, 200, "")
	if reverted["source"] != "theme" || rawOf(reverted, "title") != "Blog Home" {
		t.Errorf("reverted: %v", reverted)
	}
	if got := expect(editor, "GET", T+"/"+theme+"//home", "", 200, ""); got["source"] != "theme" {
		t.Errorf("after the revert: %v", got)
	}

	// Customising one file concurrently makes one record.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.send(c.edge, admin, "POST", T+"/"+theme+"//search", fmt.Sprintf(`{"title":"Search %d"}`, i))
			if err != nil || r.status != 200 {
				t.Errorf("concurrent customisation: %v %v", err, r)
			}
		}()
	}
	wg.Wait()
	if l := items(admin, T+"?cms_id=0"); strings.Count(slugs(l), "search") != 1 {
		t.Errorf("records after concurrent customisations: %s", slugs(l))
	}

	// A custom template: 201 with Location, is_custom, the author's.
	r = c.expect(t, admin, "POST", T, `{"slug":"promo","title":"Promo","content":"<!-- wp:paragraph --><p>Sale</p><!-- /wp:paragraph -->","description":"Sales."}`, 201, "")
	promo := r.json(t)
	if got, want := r.header.Get("Location"), "https://cms.shop.example/index.php?rest_route="+T+"/"+theme+"//promo"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if promo["id"] != theme+"//promo" || promo["source"] != "custom" || promo["is_custom"] != true || promo["has_theme_file"] != false ||
		promo["description"] != "Sales." || promo["author"] != float64(c.users[admin].ID) || promo["original_source"] != "user" ||
		promo["origin"] != nil || promo["status"] != "publish" {
		t.Errorf("created: %v", promo)
	}
	if dup := expect(admin, "POST", T, `{"slug":"promo"}`, 201, ""); dup["slug"] != "promo-2" { // unique within the theme
		t.Errorf("a second promo: %v", dup)
	}
	expect(admin, "POST", T, `{"slug":"x","theme":"other-theme"}`, 400, "rest_template_insert_error")
	expect(admin, "POST", T, `{"slug":"x","author":999999}`, 400, "rest_invalid_author")
	if l := items(editor, T+"?post_type=post"); !strings.Contains(slugs(l), "promo:custom") || !strings.Contains(slugs(l), "page-wide:theme") {
		t.Errorf("post_type=post: %s", slugs(l))
	}
	expect(admin, "DELETE", T+"/"+theme+"//promo", "", 200, "")
	expect(editor, "GET", T+"/"+theme+"//promo", "", 404, "rest_template_not_found")
	expect(admin, "DELETE", T+"/"+theme+"//promo__trashed", "", 410, "rest_template_already_trashed")
	gone := expect(admin, "DELETE", T+"/"+theme+"//promo__trashed?force=true", "", 200, "")
	if gone["deleted"] != true || gone["previous"].(map[string]any)["id"] != theme+"//promo__trashed" {
		t.Errorf("force delete: %v", gone)
	}
	expect(editor, "GET", T+"/"+theme+"//promo__trashed", "", 404, "rest_template_not_found")
	expect(admin, "DELETE", T+"/"+theme+"//promo-2?force=true", "", 200, "")

	// The lookup walks the template hierarchy to the first template there is.
	expect(admin, "PUT", T+"/"+theme+"//page", `{"title":"Our pages"}`, 200, "")
	for _, tc := range []struct{ query, slug, source string }{
		{"slug=single-post-hello", "single", "theme"},
		{"slug=page-about", "page", "custom"}, // the customised page wins over its file
		{"slug=category-news", "category", "theme"},
		{"slug=tag-x", "tag", "theme"},
		{"slug=author-admin", "author", "theme"},
		{"slug=taxonomy-category-news", "taxonomy", "theme"},
		{"slug=taxonomy-genre-rock", "archive", "theme"}, // an unknown taxonomy falls back to the archive
		{"slug=taxonomy-genre-rock&template_prefix=taxonomy-genre", "taxonomy", "theme"},
		{"slug=front-page", "front-page", "theme"},
		{"slug=anything&is_custom=true", "page", "custom"},
		{"slug=date", "date", "theme"},
		{"slug=unknown-xyz", "index", "theme"},
		{"slug=home", "home", "theme"},
	} {
		got := expect(editor, "GET", T+"/lookup?"+tc.query, "", 200, "")
		if got["slug"] != tc.slug || got["source"] != tc.source {
			t.Errorf("lookup %s: %v:%v, want %s:%s", tc.query, got["slug"], got["source"], tc.slug, tc.source)
		}
	}
	if r := c.expect(t, editor, "GET", T+"/lookup?slug=", "", 200, ""); string(r.body) != "{}" {
		t.Errorf("lookup of nothing: %s", r.body)
	}

	// Template parts: the theme's, by area; an area written, an unknown one filed as
	// uncategorized.
	if got := slugs(items(editor, P)); got != "footer:theme header:theme sidebar:theme" {
		t.Errorf("parts: %s", got)
	}
	r = c.expect(t, author, "GET", P+"/"+theme+"//header?context=embed", "", 200, "")
	golden(t, "cms_template_part_embed.golden", r.body, "\x00")
	if got := items(editor, P+"?area=header"); slugs(got) != "header:theme" || got[0]["area"] != "header" || got[0]["type"] != "cms_template_part" {
		t.Errorf("area=header: %v", got)
	}
	part := expect(admin, "PATCH", P+"/"+theme+"//sidebar", `{"area":"footer","title":"Aside"}`, 200, "")
	if part["area"] != "footer" || part["source"] != "custom" || rawOf(part, "title") != "Aside" || part["is_custom"] != nil {
		t.Errorf("part update: %v", part)
	}
	if got := slugs(items(editor, P+"?area=footer")); got != "sidebar:custom footer:theme" {
		t.Errorf("area=footer: %s", got)
	}
	if p := expect(admin, "PATCH", P+"/"+theme+"//sidebar", `{"area":"attic"}`, 200, ""); p["area"] != "uncategorized" {
		t.Errorf("unknown area: %v", p)
	}

	// Autosaves of a part: none for a theme file; the caller's autosave of a record, which stays
	// as it was.
	expect(admin, "POST", P+"/"+theme+"//header/autosaves", `{"content":"draft"}`, 400, "rest_invalid_template")
	expect(editor, "POST", P+"/"+theme+"//sidebar/autosaves", `{"content":"draft"}`, 403, "rest_cannot_manage_templates")
	auto := expect(admin, "POST", P+"/"+theme+"//sidebar/autosaves", `{"content":"<p>draft</p>"}`, 200, "")
	sidebarID := expect(admin, "GET", P+"/"+theme+"//sidebar", "", 200, "")["cms_id"]
	if auto["parent"] != sidebarID || auto["cms_id"] == sidebarID || rawOf(auto, "content") != "<p>draft</p>" || rawOf(auto, "title") != "Aside" {
		t.Errorf("autosave: %v", auto)
	}
	if l, _ := c.list(t, admin, P+"/"+theme+"//sidebar/autosaves"); len(l) != 1 || l[0]["cms_id"] != auto["cms_id"] {
		t.Errorf("autosaves: %v", l)
	}
	got := expect(admin, "GET", P+"/"+theme+"//sidebar/autosaves/"+fmt.Sprint(int64(auto["cms_id"].(float64))), "", 200, "")
	if rawOf(got, "content") != "<p>draft</p>" {
		t.Errorf("autosave read: %v", got)
	}
	if p := expect(admin, "GET", P+"/"+theme+"//sidebar", "", 200, ""); rawOf(p, "content") == "<p>draft</p>" {
		t.Errorf("the autosave changed the part: %v", p)
	}

	// OPTIONS describes the route with WordPress's item schema.
	o := c.expect(t, "", "OPTIONS", T+"/"+theme+"//single", "", 200, "").json(t)
	if props := o["schema"].(map[string]any)["properties"].(map[string]any); props["cms_id"] == nil || props["is_custom"] == nil {
		t.Errorf("OPTIONS schema: %v", o["schema"])
	}
}
