package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// TestCMSGlobalStyles drives the global styles, global styles revisions and themes routes through
// an edge (which forwards them all: nothing of the site design is public) with WordPress's
// statuses, codes and messages: the active theme links its global styles record, made once by
// concurrent first reads; updates keep revisions, paged as WordPress pages them; a second edge
// reads an update back at once.
func TestCMSGlobalStyles(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newCMSSite(t)
	admin, editor, author, subscriber := schema.RoleAdministrator, schema.RoleEditor, schema.RoleAuthor, schema.RoleSubscriber
	const theme = "/cms/v2/global-styles/themes/" + schema.DefaultTheme
	wantMsg := func(r *response, status int, code, msg string) {
		t.Helper()
		if m := c.want(r, status, code); m["message"] != msg {
			t.Errorf("%s: message %q, want %q", code, m["message"], msg)
		}
	}

	// The refusals that come before any record exists, in WordPress's words.
	wantMsg(c.rest("", "GET", "/cms/v2/themes", ""), 401, "rest_cannot_view_themes", "Sorry, you are not allowed to view themes.")
	wantMsg(c.rest("", "GET", "/cms/v2/themes?status=active", ""), 401, "rest_cannot_view_active_theme",
		"Sorry, you are not allowed to view the active theme.")
	c.want(c.rest("", "GET", "/cms/v2/themes/"+schema.DefaultTheme, ""), 401, "rest_cannot_view_active_theme")
	c.want(c.rest("", "GET", "/cms/v2/themes/other-theme", ""), 401, "rest_cannot_view_themes")
	c.want(c.rest(subscriber, "GET", "/cms/v2/themes?status=active", ""), 403, "rest_cannot_view_active_theme")
	c.want(c.rest(author, "GET", "/cms/v2/themes", ""), 403, "rest_cannot_view_themes")
	c.want(c.rest(editor, "GET", "/cms/v2/themes?status=active,inactive", ""), 403, "rest_cannot_view_themes")
	c.want(c.rest(author, "GET", "/cms/v2/themes/other-theme", ""), 403, "rest_cannot_view_themes")
	c.want(c.rest("", "GET", "/cms/v2/themes?status=retired", ""), 400, "rest_invalid_param") // arguments before permissions
	wantMsg(c.rest("", "GET", theme, ""), 401, "rest_cannot_read_global_styles", "Sorry, you are not allowed to access the global styles on this site.")
	c.want(c.rest("", "GET", theme+"/variations", ""), 401, "rest_cannot_read_global_styles")
	c.want(c.rest(subscriber, "GET", theme, ""), 403, "rest_cannot_read_global_styles")
	c.want(c.rest(subscriber, "GET", "/cms/v2/global-styles/themes/other-theme", ""), 403, "rest_cannot_read_global_styles")
	wantMsg(c.rest("", "GET", "/cms/v2/global-styles/999999", ""), 404, "rest_global_styles_not_found", "No global styles config exist with that id.")
	c.want(c.rest("", "PUT", "/cms/v2/global-styles/999999", `{}`), 404, "rest_global_styles_not_found")
	c.want(c.rest("", "GET", "/cms/v2/global-styles/999999/revisions", ""), 404, "rest_post_invalid_parent")

	// Concurrent first reads of the active theme (by users who may read it) make one record,
	// which every answer links.
	var wg sync.WaitGroup
	const readers = 12
	hrefs, versions := make([]string, readers), make([]int64, readers)
	errs := make(chan error, readers)
	for i := range readers {
		role := []schema.Role{admin, author, editor}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.gsSend(c.edge, role, "GET", "/cms/v2/themes?status=active", "", 0)
			if err != nil || r.status != 200 {
				errs <- fmt.Errorf("%s: %v %v", role, r, err)
				return
			}
			var list []map[string]any
			if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 1 {
				errs <- fmt.Errorf("%s: %s", role, r.body)
				return
			}
			hrefs[i] = gsLink(list[0], "wp:user-global-styles")
			versions[i], _ = strconv.ParseInt(r.header.Get("Vitrine-Write-Version"), 10, 64)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if hrefs[0] == "" || slices.ContainsFunc(hrefs, func(h string) bool { return h != hrefs[0] }) {
		t.Fatalf("first reads linked %q", hrefs)
	}
	// One of them made the record (its answer carries the write); every record made is in the
	// origin's replica once it has applied every answer's write.
	if writes := slices.DeleteFunc(slices.Clone(versions), func(v int64) bool { return v == 0 }); len(writes) != 1 {
		t.Errorf("write versions of the first reads %v: want exactly one write", versions)
	}
	c.want(c.gsRest(admin, "GET", "/cms/v2/themes?status=active", "", slices.Max(versions)), 200, "")
	if found, total := c.s.origin.rep.TenantBySlug("cms").Snapshot().Posts(replica.PostQuery{Scope: replica.Full,
		Type: schema.TypeGlobalStyles, Limit: 10}); total != 1 {
		t.Fatalf("%d global styles records: %v", total, found)
	}
	_, rawID, _ := strings.Cut(hrefs[0], "rest_route=/cms/v2/global-styles/")
	gs := "/cms/v2/global-styles/" + rawID
	if _, err := strconv.Atoi(rawID); err != nil {
		t.Fatalf("wp:user-global-styles %q", hrefs[0])
	}

	// Reading the record: read_post (edit_posts), the edit context edit_post (edit_theme_options).
	wantMsg(c.rest("", "GET", gs, ""), 401, "rest_cannot_view", "Sorry, you are not allowed to view this global style.")
	c.want(c.rest(subscriber, "GET", gs, ""), 403, "rest_cannot_view")
	wantMsg(c.rest("", "GET", gs+"?context=edit", ""), 401, "rest_forbidden_context", "Sorry, you are not allowed to edit this global style.")
	c.want(c.rest(author, "GET", gs+"?context=edit", ""), 403, "rest_forbidden_context")
	r := c.rest(author, "GET", gs, "")
	c.want(r, 200, "")
	if got := r.header.Get("Allow"); got != "GET" {
		t.Errorf("author's Allow %q", got)
	}
	r = c.rest(admin, "GET", gs+"?context=edit", "")
	c.want(r, 200, "")
	if got := r.header.Get("Allow"); got != "GET, POST, PUT, PATCH" {
		t.Errorf("administrator's Allow %q", got)
	}
	if !strings.HasPrefix(string(r.body), `{"id":`+rawID+`,"title":{"raw":"Custom Styles","rendered":"Custom Styles"},"settings":{},"styles":{},"_links":{`) {
		t.Errorf("new record: %s", r.body)
	}
	rec := r.json(t)
	if gsLink(rec, "self") != "https://cms.shop.example/index.php?rest_route="+gs || gsLink(rec, "wp:action-edit-css") == "" {
		t.Errorf("links: %s", r.body)
	}
	if got := c.rest(author, "GET", gs+"?context=embed", ""); !strings.HasPrefix(string(got.body), `{"id":`+rawID+`,"title":{"raw":"Custom Styles","rendered":"Custom Styles"},"_links"`) {
		t.Errorf("embed context: %s", got.body)
	}

	// A record of another type is not global styles, here nor under revisions.
	r = c.rest(admin, "POST", "/cms/v2/posts", `{"title":"A post","content":"Hello","status":"publish"}`)
	c.want(r, 201, "")
	post := strconv.FormatInt(id(r.json(t)), 10)
	c.want(c.rest(admin, "POST", "/cms/v2/posts/"+post, `{"title":"A post, edited"}`), 200, "")
	c.want(c.rest(admin, "GET", "/cms/v2/global-styles/"+post, ""), 404, "rest_global_styles_not_found")
	c.want(c.rest(admin, "PATCH", "/cms/v2/global-styles/"+post, `{"title":"x"}`), 404, "rest_global_styles_not_found")
	wantMsg(c.rest(admin, "GET", "/cms/v2/global-styles/"+post+"/revisions", ""), 404, "rest_post_invalid_parent", "Invalid post parent ID.")
	var postRevisions []map[string]any
	if err := json.Unmarshal(c.want2(c.rest(admin, "GET", "/cms/v2/posts/"+post+"/revisions", ""), 200).body, &postRevisions); err != nil || len(postRevisions) == 0 {
		t.Fatalf("post revisions: %v", err)
	}

	// Writing: argument types first (400 even anonymous), then the record and edit_post, then
	// the custom CSS.
	for _, tc := range []struct {
		role       schema.Role
		body       string
		status     int
		code, want string
	}{
		{"", `{"styles":"red"}`, 400, "rest_invalid_param", "Invalid parameter(s): styles"},
		{admin, `{"styles":[1]}`, 400, "rest_invalid_param", "Invalid parameter(s): styles"},
		{admin, `{"settings":true}`, 400, "rest_invalid_param", "Invalid parameter(s): settings"},
		{admin, `{"title":7}`, 400, "rest_invalid_param", "Invalid parameter(s): title"},
		{admin, `{"styles":{`, 400, "rest_invalid_json", "Invalid JSON body passed."},
		{"", `{"styles":{}}`, 401, "rest_cannot_edit", "Sorry, you are not allowed to edit this global style."},
		{"", ``, 401, "rest_cannot_edit", "Sorry, you are not allowed to edit this global style."},
		{author, `{"styles":{"css":"</style>"}}`, 403, "rest_cannot_edit", "Sorry, you are not allowed to edit this global style."},
		{editor, `{"title":"Mine"}`, 403, "rest_cannot_edit", "Sorry, you are not allowed to edit this global style."},
		{admin, `{"styles":{"css":"</style><script>alert(1)</script>"}}`, 400, "rest_custom_css_illegal_markup", "Markup is not allowed in CSS."},
		{admin, `{"styles":{"css":"<b>"}}`, 400, "rest_custom_css_illegal_markup", "Markup is not allowed in CSS."},
	} {
		wantMsg(c.rest(tc.role, "PUT", gs, tc.body), tc.status, tc.code, tc.want)
	}
	r = rawCall(t, "POST", c.edge, c.host, "/index.php?rest_route="+gs, `{"styles":{}}`, "Authorization", c.auth[admin], "Content-Type", "text/plain")
	if r.status != 403 && r.status != 415 {
		t.Errorf("a text/plain body: %d %s", r.status, r.body)
	}

	// Twelve updates, by each method, each a revision; the same content again makes none.
	var last *response
	for i := 1; i <= 12; i++ {
		method := []string{"POST", "PUT", "PATCH"}[i%3]
		body := fmt.Sprintf(`{"id":%s,"styles":{"color":{"background":"#0000%02d"},"css":"body { margin: %dpx }"}}`, rawID, i, i)
		if i == 12 {
			body = fmt.Sprintf(`{"styles":{"color":{"background":"#0000%02d"}},"settings":{"layout":{"contentSize":"640px"}},"title":{"raw":"Night"}}`, i)
		}
		last = c.rest(admin, method, gs, body)
		c.want(last, 200, "")
	}
	want12 := `"title":{"raw":"Night","rendered":"Night"},"settings":{"layout":{"contentSize":"640px"}},"styles":{"color":{"background":"#000012"}}`
	if !strings.Contains(string(last.body), want12) {
		t.Errorf("12th update: %s", last.body)
	}
	c.want(c.rest(admin, "PATCH", gs, `{"styles":{"color":{"background":"#000012"}}}`), 200, "")
	c.want(c.rest(admin, "PATCH", gs, `{"title":{"raw":""}}`), 200, "") // an empty raw title is ignored

	// A second edge reads the update back at once.
	e2 := c.s.startEdge(edge.Config{})
	waitFor(t, 10*time.Second, "the second edge to serve the store", func() bool {
		tn := e2.rep.TenantBySlug("cms")
		return tn != nil && tn.Ready()
	})
	r = call(t, "GET", e2.addr, c.host, "/index.php?rest_route="+gs, "", "Authorization", c.auth[editor],
		"Vitrine-Min-Version", strconv.FormatInt(writeVersion(t, last), 10))
	c.want(r, 200, "")
	if !strings.Contains(string(r.body), want12) || !strings.Contains(string(r.body), `"count":12`) {
		t.Errorf("second edge: %s", r.body)
	}

	// Revisions: edit_post on the record; every revision newest first without per_page.
	revs := gs + "/revisions"
	wantMsg(c.rest("", "GET", revs, ""), 401, "rest_cannot_read", "Sorry, you are not allowed to view revisions of this post.")
	c.want(c.rest(author, "GET", revs, ""), 403, "rest_cannot_read")
	c.want(c.rest(admin, "GET", revs+"?per_page=0", ""), 400, "rest_invalid_param")
	c.want(c.rest(admin, "GET", revs+"?offset=many", ""), 400, "rest_invalid_param")
	all := c.gsList(admin, revs, 12, 12, 1, "")
	newest := all[0]
	if newest["author"] != float64(c.users[admin].ID) || fmt.Sprint(newest["parent"]) != rawID ||
		fmt.Sprint(newest["styles"]) != "map[color:map[background:#000012]]" || fmt.Sprint(newest["settings"]) != "map[layout:map[contentSize:640px]]" {
		t.Errorf("newest revision %v", newest)
	}
	if fmt.Sprint(all[11]["styles"]) != "map[color:map[background:#000001] css:body { margin: 1px }]" || fmt.Sprint(all[11]["settings"]) != "map[]" {
		t.Errorf("oldest revision %v", all[11])
	}
	for _, k := range []string{"author", "date", "date_gmt", "id", "modified", "modified_gmt", "parent", "settings", "styles"} {
		if _, ok := newest[k]; !ok {
			t.Errorf("revision lacks %s: %v", k, newest)
		}
	}
	// Paging as WordPress pages revisions.
	next := func(p int) string {
		return fmt.Sprintf(`<https://cms.shop.example/index.php?rest_route=%s&per_page=5&page=%d>; rel="next"`, revs, p)
	}
	prev := func(p int) string {
		return fmt.Sprintf(`<https://cms.shop.example/index.php?rest_route=%s&per_page=5&page=%d>; rel="prev"`, revs, p)
	}
	page1 := c.gsList(admin, revs+"?per_page=5", 5, 12, 3, next(2))
	c.gsList(admin, revs+"?per_page=5&page=2", 5, 12, 3, prev(1)+", "+next(3))
	page3 := c.gsList(admin, revs+"?per_page=5&page=3", 2, 12, 3, prev(2))
	if page1[0]["id"] != newest["id"] || page3[1]["id"] != all[11]["id"] {
		t.Errorf("pages do not follow the list: %v %v", page1[0]["id"], page3[1]["id"])
	}
	wantMsg(c.rest(admin, "GET", revs+"?per_page=5&page=4", ""), 400, "rest_revision_invalid_page_number",
		"The page number requested is larger than the number of pages available.")
	if got := c.gsList(admin, revs+"?per_page=5&offset=10", 2, 12, 3, ""); got[0]["id"] != all[10]["id"] {
		t.Errorf("offset 10: %v", got[0]["id"])
	}
	c.gsList(admin, revs+"?per_page=5&offset=1&page=9", 5, 12, 3, "") // an offset takes over the page
	c.gsList(admin, revs+"?offset=3", 12, 12, 1, "")                  // no per_page: every revision, offset unused
	wantMsg(c.rest(admin, "GET", revs+"?per_page=5&offset=12", ""), 400, "rest_revision_invalid_offset_number",
		"The offset number requested is larger than or equal to the number of available revisions.")
	for _, item := range c.gsList(admin, revs+"?context=embed&per_page=2", 2, 12, 6, "") {
		if len(item) != 4 || item["date"] == nil || item["parent"] == nil {
			t.Errorf("embed context revision %v", item)
		}
	}

	// One revision by id.
	rid := fmt.Sprint(newest["id"])
	r = c.rest(admin, "GET", revs+"/"+rid, "")
	c.want(r, 200, "")
	if m := r.json(t); fmt.Sprint(m["styles"]) != fmt.Sprint(newest["styles"]) || m["date"] != newest["date"] {
		t.Errorf("revision %s: %s", rid, r.body)
	}
	c.want(c.rest(author, "GET", revs+"/"+rid, ""), 403, "rest_cannot_read")
	wantMsg(c.rest(admin, "GET", revs+"/"+rawID, ""), 404, "rest_post_invalid_id", "Invalid revision ID.")
	wantMsg(c.rest(admin, "GET", revs+"/"+fmt.Sprint(postRevisions[0]["id"]), ""), 404, "rest_revision_parent_id_mismatch",
		`The revision does not belong to the specified parent with id of "`+rawID+`"`)
	c.want(c.rest(admin, "GET", revs+"/"+rid+"?context=nope", ""), 400, "rest_invalid_param")

	// The active theme's own styles and variations; only the active theme is served.
	r = c.rest(author, "GET", theme, "")
	c.want(r, 200, "")
	if m := r.json(t); !strings.Contains(fmt.Sprint(m["settings"]), "appearanceTools:true") || !strings.Contains(fmt.Sprint(m["styles"]), "color:") ||
		gsLink(m, "self") != "https://cms.shop.example/index.php?rest_route="+theme {
		t.Errorf("theme styles: %s", r.body)
	}
	wantMsg(c.rest(author, "GET", "/cms/v2/global-styles/themes/other-theme", ""), 404, "rest_theme_not_found", "Theme not found.")
	c.want(c.rest(admin, "GET", "/cms/v2/global-styles/themes/other-theme/variations", ""), 404, "rest_theme_not_found")
	r = c.rest(admin, "GET", theme+"/variations", "")
	var variations []map[string]any
	if err := json.Unmarshal(c.want2(r, 200).body, &variations); err != nil || len(variations) != 2 ||
		variations[0]["title"] != "Evening" || variations[1]["title"] != "Linen" || variations[0]["version"] != float64(3) || variations[1]["settings"] == nil {
		t.Errorf("variations: %s", r.body)
	}

	// The themes controller: administrators see every theme.
	r = c.rest(admin, "GET", "/cms/v2/themes", "")
	var themes []map[string]any
	if err := json.Unmarshal(c.want2(r, 200).body, &themes); err != nil || len(themes) != 1 || r.header.Get("X-WP-Total") != "1" || r.header.Get("X-WP-TotalPages") != "1" {
		t.Fatalf("themes: %s", r.body)
	}
	th := themes[0]
	if th["stylesheet"] != schema.DefaultTheme || th["template"] != schema.DefaultTheme || th["status"] != "active" || th["is_block_theme"] != true ||
		fmt.Sprint(th["name"]) != "map[raw:Vitrine Blocks rendered:Vitrine Blocks]" || th["version"] != "1.0.0" || th["textdomain"] != schema.DefaultTheme ||
		th["theme_supports"] == nil || gsLink(th, "wp:user-global-styles") != hrefs[0] {
		t.Errorf("theme: %s", r.body)
	}
	r = c.rest(admin, "GET", "/cms/v2/themes?status=inactive", "")
	if c.want2(r, 200); string(r.body) != "[]" || r.header.Get("X-WP-Total") != "0" {
		t.Errorf("inactive themes: %s", r.body)
	}
	r = c.rest(author, "GET", "/cms/v2/themes/"+schema.DefaultTheme, "")
	if m := c.want2(r, 200).json(t); m["stylesheet"] != schema.DefaultTheme || gsLink(m, "wp:user-global-styles") != hrefs[0] {
		t.Errorf("theme by stylesheet: %s", r.body)
	}
	wantMsg(c.rest(admin, "GET", "/cms/v2/themes/other-theme", ""), 404, "rest_theme_not_found", "Theme not found.")

	// The record's schema (OPTIONS), and no batch: the global styles routes say allow_batch false.
	r = call(t, "OPTIONS", c.edge, c.host, "/index.php?rest_route="+gs, "")
	var opts struct {
		Schema struct {
			Title      string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(c.want2(r, 200).body, &opts); err != nil || opts.Schema.Title != schema.TypeGlobalStyles || len(opts.Schema.Properties) != 4 {
		t.Errorf("OPTIONS: %s", r.body)
	}
	r = c.rest(admin, "POST", "/batch/v1", `{"requests":[{"method":"PUT","path":"`+gs+`","body":{"title":"Batched"}}]}`)
	if c.want2(r, 207); !strings.Contains(string(r.body), "rest_batch_not_allowed") {
		t.Errorf("batch: %s", r.body)
	}
}

// gsLink returns the href of a view's first link of a relation ("" when it has none).
func gsLink(m map[string]any, rel string) string {
	links, _ := m["_links"].(map[string]any)
	list, _ := links[rel].([]any)
	if len(list) == 0 {
		return ""
	}
	first, _ := list[0].(map[string]any)
	href, _ := first["href"].(string)
	return href
}

// want2 is want for answers whose body is not an object: it checks the status only.
func (c *cmsSite) want2(r *response, status int) *response {
	c.t.Helper()
	c.want(r, status, "")
	return r
}

// gsList reads a page of global styles revisions as the administrator, checking its length,
// X-WP-Total, X-WP-TotalPages and Link ("" for none).
func (c *cmsSite) gsList(role schema.Role, route string, n, total, pages int, link string) []map[string]any {
	c.t.Helper()
	r := c.rest(role, "GET", route, "")
	c.want(r, 200, "")
	var out []map[string]any
	if err := json.Unmarshal(r.body, &out); err != nil {
		c.t.Fatalf("%s: %s", route, r.body)
	}
	if len(out) != n || r.header.Get("X-WP-Total") != strconv.Itoa(total) || r.header.Get("X-WP-TotalPages") != strconv.Itoa(pages) ||
		link != "" && r.header.Get("Link") != link {
		c.t.Errorf("%s: %d items, total %s, pages %s, Link %q; want %d, %d, %d, %q", route, len(out), r.header.Get("X-WP-Total"),
			r.header.Get("X-WP-TotalPages"), r.header.Get("Link"), n, total, pages, link)
	}
	return out
}

// gsRest is rest with a version floor (Vitrine-Min-Version; 0 for none).
func (c *cmsSite) gsRest(role schema.Role, method, route, body string, floor int64) *response {
	c.t.Helper()
	r, err := c.gsSend(c.edge, role, method, route, body, floor)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// gsSend sends a CMS request as role to addr, without failing the test: for calls made from
// other goroutines.
func (c *cmsSite) gsSend(addr string, role schema.Role, method, route, body string, floor int64) (*response, error) {
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
	if floor > 0 {
		req.Header.Set("Vitrine-Min-Version", strconv.FormatInt(floor, 10))
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
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}
