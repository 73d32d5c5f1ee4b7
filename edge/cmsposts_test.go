package edge_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge"
	"vitrine/schema"
)

// feedPosts adds published records of several types to tenant demo (ids 200+), beside the
// fixture's posts 100 and 101. Dates are an hour apart from epochTime+1d, newest last.
func feedPosts(f *fixture) {
	day := epochTime.Add(24 * time.Hour)
	posts := []*schema.Post{
		{ID: 200, Slug: "brass-lamp-guide", Title: "Brass lamp guide", Content: "How to polish a brass lamp.", Author: 1,
			Format: "standard", Categories: []schema.TermID{3}, Tags: []schema.TermID{7}},
		{ID: 201, Slug: "oak-table", Title: "Oak table", Content: "Solid oak, with a lamp.", Excerpt: "Oak.", Author: 2,
			Format: "aside", Categories: []schema.TermID{3, 4}, Sticky: true},
		{ID: 202, Slug: "tea-time", Title: "Tea time", Content: "Kettles and cups.", Author: 2,
			Format: "link", Categories: []schema.TermID{4}, Tags: []schema.TermID{7, 8}},
		{ID: 203, Slug: "lamp", Title: "Lamp", Content: "A short one.", Author: 3, Format: "standard", Tags: []schema.TermID{8}},
	}
	for i, p := range posts {
		p.Type, p.Status, p.CommentStatus, p.PingStatus = "post", schema.StatusPublish, "open", "open"
		p.DateGMT = day.Add(time.Duration(i) * time.Hour)
		p.ModifiedGMT = day.Add(time.Duration(10-i) * time.Hour)
	}
	pages := []*schema.Post{
		{ID: 210, Type: "page", Slug: "about", Title: "About", Content: "Us.", MenuOrder: 2},
		{ID: 211, Type: "page", Slug: "team", Title: "Team", Content: "People.", Parent: 210, MenuOrder: 1},
		{ID: 212, Type: "page", Slug: "contact", Title: "Contact", Content: "Write.", MenuOrder: 3},
		{ID: 220, Type: "cms_navigation", Slug: "header", Title: "Header", Content: "<!-- wp:navigation-link /-->"},
	}
	for i, p := range pages {
		p.Status, p.CommentStatus, p.PingStatus, p.Format, p.Author = schema.StatusPublish, "closed", "closed", "standard", 1
		p.DateGMT, p.ModifiedGMT = day.Add(time.Duration(i)*time.Minute), day
	}
	for _, p := range append(posts, pages...) {
		p.Normalize()
		f.feed.put("demo", schema.KindPost, schema.IDString(p.ID), schema.Pub, p)
	}
	f.feed.head("demo")
	f.rep.Checkpoint()
}

type listAnswer struct {
	status int
	ids    []int64
	total  string
	pages  string
	link   string
	body   map[string]any
}

func getList(t *testing.T, f *fixture, r req) listAnswer {
	t.Helper()
	resp := f.do(r)
	a := listAnswer{status: resp.StatusCode(), total: string(resp.Header.Peek("X-WP-Total")),
		pages: string(resp.Header.Peek("X-WP-TotalPages")), link: string(resp.Header.Peek("Link"))}
	if a.status != 200 {
		a.body = decodeJSON(t, resp.Body())
		return a
	}
	var items []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(resp.Body(), &items); err != nil {
		t.Fatalf("%s: %v\n%s", r.uri, err, resp.Body())
	}
	for _, it := range items {
		a.ids = append(a.ids, it.ID)
	}
	return a
}

// Every collection parameter of the posts family, with valid and invalid values, through an
// edge (anonymous: answered from the replica).
func TestCMSCollectionParams(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedPosts(f)
	posts := "/index.php?rest_route=/cms/v2/posts"
	pages := "/index.php?rest_route=/cms/v2/pages"
	nav := "/index.php?rest_route=/cms/v2/navigation"
	ok := []struct {
		name  string
		uri   string
		ids   []int64
		total string
	}{
		{"default newest first", posts, []int64{203, 202, 201, 200, 101, 100}, "6"},
		{"search all words", posts + "&search=brass%20lamp", []int64{200}, "1"},
		{"search in content", posts + "&search=kettles", []int64{202}, "1"},
		{"search excluded word", posts + "&search=lamp%20-oak", []int64{203, 200}, "2"},
		{"search quoted phrase", posts + "&search=%22with%20a%20lamp%22", []int64{201}, "1"},
		{"search_columns title", posts + "&search=lamp&search_columns=post_title", []int64{203, 200}, "2"},
		{"search_semantics exact", posts + "&search=lamp&search_semantics=exact", []int64{203}, "1"},
		{"orderby relevance", posts + "&search=lamp&orderby=relevance", []int64{203, 200, 201}, "3"},
		{"after is exclusive", posts + "&after=2026-03-02T13:00:00Z", []int64{203, 202}, "2"},
		{"before, site time (Paris, UTC+1)", posts + "&before=2026-03-02T14:00:00", []int64{200, 101, 100}, "3"},
		{"modified_after", posts + "&modified_after=2026-03-02T20:30:00Z", []int64{201, 200}, "2"},
		{"modified_before", posts + "&modified_before=2026-03-02T19:30:00%2B00:00", []int64{203, 101, 100}, "3"},
		{"author", posts + "&author=2", []int64{202, 201}, "2"},
		{"author_exclude", posts + "&author_exclude=1,2", []int64{203}, "1"},
		{"include", posts + "&include=200,203,999", []int64{203, 200}, "2"},
		{"exclude", posts + "&exclude=100,101,203", []int64{202, 201, 200}, "3"},
		{"offset", posts + "&offset=4", []int64{101, 100}, "6"},
		{"order asc", posts + "&order=asc&per_page=2", []int64{100, 101}, "6"},
		{"orderby author", posts + "&orderby=author&order=asc&include=200,202,203", []int64{200, 202, 203}, "3"},
		{"orderby id", posts + "&orderby=id&per_page=2", []int64{203, 202}, "6"},
		{"orderby include", posts + "&orderby=include&include=201,203,200", []int64{201, 203, 200}, "3"},
		{"orderby modified", posts + "&orderby=modified&include=200,201,202", []int64{200, 201, 202}, "3"},
		{"orderby parent", posts + "&orderby=parent&include=200,201", []int64{201, 200}, "2"},
		{"orderby slug asc", posts + "&orderby=slug&order=asc&include=200,201,202", []int64{200, 201, 202}, "3"},
		{"orderby include_slugs", posts + "&orderby=include_slugs&slug=tea-time,lamp", []int64{202, 203}, "2"},
		{"orderby title", posts + "&orderby=title&order=asc&include=200,201,202,203", []int64{200, 203, 201, 202}, "4"},
		{"slug", posts + "&slug=oak-table", []int64{201}, "1"},
		{"status publish", posts + "&status=publish&per_page=1", []int64{203}, "6"},
		{"sticky true", posts + "&sticky=true", []int64{201}, "1"},
		{"sticky false", posts + "&sticky=0&include=200,201", []int64{200}, "1"},
		{"ignore_sticky false puts sticky first", posts + "&ignore_sticky=false&per_page=2", []int64{201, 203}, "6"},
		{"format", posts + "&format=aside,link", []int64{202, 201}, "2"},
		{"format standard", posts + "&format=standard&include=200,201", []int64{200}, "1"},
		{"categories list", posts + "&categories=4", []int64{202, 201}, "2"},
		{"categories object AND", posts + "&categories[terms]=3,4&categories[operator]=AND", []int64{201}, "1"},
		{"categories object OR", posts + "&categories[terms]=3,4", []int64{202, 201, 200}, "3"},
		{"categories include_children (no hierarchy replicated yet)", posts + "&categories[terms]=3&categories[include_children]=1", []int64{201, 200}, "2"},
		{"categories_exclude", posts + "&categories_exclude=3&include=200,201,202", []int64{202}, "1"},
		{"tags and tags_exclude", posts + "&tags=7&tags_exclude=8", []int64{200}, "1"},
		{"tax_relation OR", posts + "&categories=3&tags=8&tax_relation=OR", []int64{203, 202, 201, 200}, "4"},
		{"tax_relation AND (default)", posts + "&categories=4&tags=8", []int64{202}, "1"},
		{"empty term list is no clause", posts + "&categories=&per_page=1", []int64{203}, "6"},
		{"pages default", pages, []int64{212, 211, 210}, "3"},
		{"pages parent", pages + "&parent=210", []int64{211}, "1"},
		{"pages parent 0", pages + "&parent=0", []int64{212, 210}, "2"},
		{"pages parent_exclude", pages + "&parent_exclude=210", []int64{212, 210}, "2"},
		{"pages menu_order", pages + "&menu_order=3", []int64{212}, "1"},
		{"pages orderby menu_order", pages + "&orderby=menu_order&order=asc", []int64{211, 210, 212}, "3"},
		{"navigation", nav, []int64{220}, "1"},
		{"no match: empty, totals 0", posts + "&search=zebra&page=3", nil, "0"},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			a := getList(t, f, req{uri: tc.uri})
			if a.status != 200 {
				t.Fatalf("status %d: %v", a.status, a.body)
			}
			if !slices.Equal(a.ids, tc.ids) || a.total != tc.total {
				t.Errorf("ids %v total %s, want %v total %s", a.ids, a.total, tc.ids, tc.total)
			}
		})
	}

	bad := []struct {
		name, uri, code, param, detail string
	}{
		{"after not a date", posts + "&after=last%20week", "rest_invalid_param", "after", "Invalid date."},
		{"before date only", posts + "&before=2026-03-01", "rest_invalid_param", "before", "Invalid date."},
		{"author not int", posts + "&author=bob", "rest_invalid_param", "author", "author[0] is not of type integer."},
		{"offset not int", posts + "&offset=1.5", "rest_invalid_param", "offset", "offset is not of type integer."},
		{"order", posts + "&order=up", "rest_invalid_param", "order", "order is not one of asc and desc."},
		{"orderby menu_order on posts", posts + "&orderby=menu_order", "rest_invalid_param", "orderby", "orderby is not one of author, date, id, include, modified, parent, relevance, slug, include_slugs, and title."},
		{"search_columns", posts + "&search_columns=post_name", "rest_invalid_param", "search_columns", "search_columns[0] is not one of post_title, post_content, and post_excerpt."},
		{"search_semantics", posts + "&search_semantics=loose", "rest_invalid_param", "search_semantics", "search_semantics is not one of exact."},
		{"status unknown", posts + "&status=gone", "rest_invalid_param", "status", "status[0] is not one of publish, future, draft, pending, private, trash, auto-draft, inherit, request-pending, request-confirmed, request-failed, request-completed, and any."},
		{"status draft anonymous", posts + "&status=draft", "rest_invalid_param", "status", "Status is forbidden."},
		{"status private anonymous", posts + "&status=publish,private", "rest_invalid_param", "status", "Status is forbidden."},
		{"status any anonymous", posts + "&status=any", "rest_invalid_param", "status", "Status is forbidden."},
		{"sticky", posts + "&sticky=maybe", "rest_invalid_param", "sticky", "sticky is not of type boolean."},
		{"ignore_sticky", posts + "&ignore_sticky=2", "rest_invalid_param", "ignore_sticky", "ignore_sticky is not of type boolean."},
		{"format unknown", posts + "&format=novel", "rest_invalid_param", "format", "format[0] is not one of standard, aside, chat, gallery, link, image, quote, status, video, and audio."},
		{"format duplicate", posts + "&format=link,link", "rest_invalid_param", "format", "format has duplicate items."},
		{"categories item", posts + "&categories=news", "rest_invalid_param", "categories", "categories[0] is not of type integer."},
		{"categories operator", posts + "&categories[terms]=1&categories[operator]=XOR", "rest_invalid_param", "categories", "categories[operator] is not one of OR and AND."},
		{"tags include_children", posts + "&tags[terms]=1&tags[include_children]=1", "rest_invalid_param", "tags", "tags is not a valid Term ID Taxonomy Query. Reason: include_children is not a valid property of Object."},
		{"tags_exclude operator", posts + "&tags_exclude[operator]=AND", "rest_invalid_param", "tags_exclude", "tags_exclude is not a valid Term ID Taxonomy Query. Reason: operator is not a valid property of Object."},
		{"tax_relation", posts + "&tax_relation=XOR", "rest_invalid_param", "tax_relation", "tax_relation is not one of AND and OR."},
		{"include item", posts + "&include=1,a", "rest_invalid_param", "include", "include[1] is not of type integer."},
		{"per_page 0", posts + "&per_page=0", "rest_invalid_param", "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{"pages parent", pages + "&parent=top", "rest_invalid_param", "parent", "parent[0] is not of type integer."},
		{"pages menu_order", pages + "&menu_order=x", "rest_invalid_param", "menu_order", "menu_order is not of type integer."},
		{"relevance without search", posts + "&orderby=relevance", "rest_no_search_term_defined", "", ""},
		{"orderby include without include", posts + "&orderby=include", "rest_orderby_include_missing_include", "", ""},
		{"page overflow", posts + "&page=2", "rest_post_invalid_page_number", "", ""},
		{"page overflow with filter", posts + "&author=2&per_page=1&page=3", "rest_post_invalid_page_number", "", ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			a := getList(t, f, req{uri: tc.uri})
			if a.status != 400 || a.body["code"] != tc.code {
				t.Fatalf("status %d body %v, want 400 %s", a.status, a.body, tc.code)
			}
			if tc.param == "" {
				return
			}
			data, _ := a.body["data"].(map[string]any)
			params, _ := data["params"].(map[string]any)
			details, _ := data["details"].(map[string]any)
			if params[tc.param] != tc.detail {
				t.Errorf("data.params = %v, want %s: %q", params, tc.param, tc.detail)
			}
			detail, _ := details[tc.param].(map[string]any)
			if detail == nil || detail["message"] != tc.detail {
				t.Errorf("data.details = %v, want an entry for %s", details, tc.param)
			}
			wantCode := map[string]string{"Invalid date.": "rest_invalid_date", "Status is forbidden.": "rest_forbidden_status",
				"format has duplicate items.": "rest_duplicate_items"}[tc.detail]
			if wantCode != "" && detail["code"] != wantCode {
				t.Errorf("details.%s.code = %v, want %s", tc.param, detail["code"], wantCode)
			}
			if a.body["message"] != "Invalid parameter(s): "+tc.param {
				t.Errorf("message %q", a.body["message"])
			}
		})
	}
}

// X-WP-Total, X-WP-TotalPages and Link rel prev/next from the canonical base, with the caller's
// arguments escaped and kept.
func TestCMSCollectionHeaders(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedPosts(f)
	base := "https://api.shop.example/index.php?rest_route=/cms/v2/posts"
	cases := []struct {
		uri, total, pages, link string
	}{
		{"&per_page=2", "6", "3", "<" + base + "&per_page=2&page=2>; rel=\"next\""},
		{"&per_page=2&page=2", "6", "3", "<" + base + "&per_page=2&page=1>; rel=\"prev\", <" + base + "&per_page=2&page=3>; rel=\"next\""},
		{"&per_page=2&page=3", "6", "3", "<" + base + "&per_page=2&page=2>; rel=\"prev\""},
		{"&per_page=1&search=brass%20lamp", "1", "1", ""},
		{"&per_page=1&search=lamp&categories[terms]=3&categories[operator]=OR", "2", "2",
			"<" + base + "&per_page=1&search=lamp&categories%5Bterms%5D=3&categories%5Boperator%5D=OR&page=2>; rel=\"next\""},
		{"&search=zebra", "0", "0", ""},
	}
	for _, tc := range cases {
		resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts" + tc.uri, host: "evil.example", headers: map[string]string{"X-Tenant-Slug": "demo"}})
		if resp.StatusCode() != 200 {
			t.Fatalf("%s: %d %s", tc.uri, resp.StatusCode(), resp.Body())
		}
		got := [3]string{string(resp.Header.Peek("X-WP-Total")), string(resp.Header.Peek("X-WP-TotalPages")), string(resp.Header.Peek("Link"))}
		want := [3]string{tc.total, tc.pages, tc.link}
		if tc.link == "" {
			// Without pages to link, the response carries the API root link instead.
			want[2] = "<https://api.shop.example/index.php?rest_route=/>; rel=\"https://api.w.org/\""
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.uri, got, want)
		}
	}
}

// Routes of types anonymous callers may not read (blocks, menu items), and every request with
// credentials, go to the origin; anonymous reads of pages and navigation are the edge's.
func TestCMSPostTypesRouting(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedPosts(f)
	for _, tc := range []struct {
		method, uri string
		forwarded   bool
	}{
		{"GET", "/index.php?rest_route=/cms/v2/pages/210", false},
		{"GET", "/index.php?rest_route=/cms/v2/navigation/220", false},
		{"GET", "/index.php?rest_route=/cms/v2/blocks", true},
		{"GET", "/index.php?rest_route=/cms/v2/blocks/5", true},
		{"GET", "/index.php?rest_route=/cms/v2/menu-items", true},
		{"GET", "/index.php?rest_route=/cms/v2/menu-items/5", true},
		{"POST", "/index.php?rest_route=/cms/v2/pages", true},
		{"PATCH", "/index.php?rest_route=/cms/v2/menu-items/5", true},
		{"DELETE", "/index.php?rest_route=/cms/v2/navigation/220&force=true", true},
	} {
		resp := f.do(req{method: tc.method, uri: tc.uri, body: map[bool]string{true: "{}"}[tc.method != "GET"],
			headers: map[string]string{"Content-Type": "application/json"}})
		forwarded := strings.Contains(string(resp.Body()), `"upstream":true`)
		if forwarded != tc.forwarded {
			t.Errorf("%s %s: forwarded %v, want %v (%d %s)", tc.method, tc.uri, forwarded, tc.forwarded, resp.StatusCode(), resp.Body())
		}
	}
	// A page read at the edge: its own type only, with its page permalink.
	resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/pages/211"})
	body := decodeJSON(t, resp.Body())
	if resp.StatusCode() != 200 || body["type"] != "page" || body["parent"] != float64(210) || body["link"] != "https://api.shop.example/?page_id=211" {
		t.Errorf("page 211: %d %v", resp.StatusCode(), body)
	}
	if resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts/211"}); resp.StatusCode() != 404 {
		t.Errorf("a page under /posts: %d, want 404", resp.StatusCode())
	}
	if resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/pages/200"}); resp.StatusCode() != 404 {
		t.Errorf("a post under /pages: %d, want 404", resp.StatusCode())
	}
}

// The same URL asked anonymously and by an editor, in both orders: the editor's request goes to
// the origin and its answer is never cached, so the anonymous caller never gets it.
func TestCMSAnonymousNeverGetsEditorsView(t *testing.T) {
	uris := []string{
		"/index.php?rest_route=/cms/v2/posts&status=publish",
		"/index.php?rest_route=/cms/v2/posts/101",
		"/index.php?rest_route=/cms/v2/pages&per_page=5",
	}
	editor := map[string]string{"Authorization": "Basic ZWRpdG9yOmFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eA=="}
	for _, editorFirst := range []bool{false, true} {
		f := newFixture(t, edge.Config{CacheBytes: 16 << 20})
		feedPosts(f)
		for _, uri := range uris {
			name := fmt.Sprintf("editor first %v %s", editorFirst, uri)
			var ed *fasthttp.Response
			if editorFirst {
				ed = f.do(req{uri: uri, headers: editor})
			}
			anon := f.do(req{uri: uri})
			// The cache admits entries asynchronously (ristretto): wait until the anonymous
			// answer is served from it, so that what follows runs against a cached entry.
			var anonAgain *fasthttp.Response
			for i := 0; i < 400; i++ {
				before := f.metric("vitrine_edge_cache_hits_total")
				if anonAgain = f.do(req{uri: uri}); f.metric("vitrine_edge_cache_hits_total") > before {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if !editorFirst {
				ed = f.do(req{uri: uri, headers: editor})
			}
			anonLast := f.do(req{uri: uri})
			if !strings.Contains(string(ed.Body()), `"upstream":true`) {
				t.Errorf("%s: the editor's read was not forwarded: %s", name, ed.Body())
			}
			if auth := f.up.lastRequest().Header.Peek("Authorization"); string(auth) != editor["Authorization"] {
				t.Errorf("%s: origin got Authorization %q", name, auth)
			}
			for i, r := range []*fasthttp.Response{anon, anonAgain, anonLast} {
				if r.StatusCode() != 200 || strings.Contains(string(r.Body()), "upstream") {
					t.Errorf("%s: anonymous answer %d = %d %s", name, i, r.StatusCode(), r.Body())
				}
				if string(r.Body()) != string(anon.Body()) {
					t.Errorf("%s: anonymous answers differ", name)
				}
			}
		}
		if f.metric("vitrine_edge_cache_hits_total") == 0 {
			t.Errorf("no cache hit: the test did not exercise the cache")
		}
	}
}

// A query string with a password goes to the origin too (edges never hold post passwords).
func TestCMSPasswordForwarded(t *testing.T) {
	f := newFixture(t, edge.Config{})
	resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/pages/1&password=" + url.QueryEscape("s e")})
	if !strings.Contains(string(resp.Body()), "upstream") {
		t.Errorf("a read with a password was answered at the edge: %d %s", resp.StatusCode(), resp.Body())
	}
}

// _embed on posts and pages: the author (no replicated profile: WordPress's error object), the
// featured image (media not replicated: the same), the parent page in embed context; _embed
// with a list keeps only the rels named; the cache keys bodies by _embed.
func TestCMSEmbed(t *testing.T) {
	f := newFixture(t, edge.Config{CacheBytes: 16 << 20})
	feedPosts(f)
	get := func(uri string) map[string]any {
		resp := f.do(req{uri: uri})
		if resp.StatusCode() != 200 {
			t.Fatalf("%s: %d %s", uri, resp.StatusCode(), resp.Body())
		}
		return decodeJSON(t, resp.Body())
	}
	page := get("/index.php?rest_route=/cms/v2/pages/211&_embed")
	emb, _ := page["_embedded"].(map[string]any)
	up, _ := emb["up"].([]any)
	if len(up) != 1 || up[0].(map[string]any)["id"] != float64(210) || up[0].(map[string]any)["content"] != nil {
		t.Errorf("up: %v", emb["up"])
	}
	author, _ := emb["author"].([]any)
	if len(author) != 1 || author[0].(map[string]any)["code"] != "rest_user_invalid_id" {
		t.Errorf("author: %v", emb["author"])
	}
	only := get("/index.php?rest_route=/cms/v2/pages/211&_embed=up")
	if e := only["_embedded"].(map[string]any); e["author"] != nil || e["up"] == nil {
		t.Errorf("_embed=up embedded %v", e)
	}
	if plain := get("/index.php?rest_route=/cms/v2/pages/211"); plain["_embedded"] != nil {
		t.Errorf("no _embed, but _embedded: %v", plain["_embedded"])
	}
	list := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts&_embed=author&per_page=2"})
	var items []map[string]any
	if err := json.Unmarshal(list.Body(), &items); err != nil || len(items) != 2 || items[0]["_embedded"] == nil {
		t.Errorf("list _embed: %v %s", err, list.Body())
	}
}

// excerpt_length cuts an excerpt made from the content (never a written one), is part of the
// cache key, and is validated as an integer.
func TestCMSExcerptLength(t *testing.T) {
	f := newFixture(t, edge.Config{CacheBytes: 16 << 20})
	feedPosts(f)
	excerpt := func(uri string) string {
		t.Helper()
		r := f.do(req{uri: uri})
		var p struct {
			Excerpt struct{ Rendered string }
		}
		if err := json.Unmarshal(r.Body(), &p); err != nil || r.StatusCode() != 200 {
			t.Fatalf("%s: %d %s", uri, r.StatusCode(), r.Body())
		}
		return p.Excerpt.Rendered
	}
	base := "/index.php?rest_route=/cms/v2/posts/200"
	for _, tc := range []struct{ uri, want string }{
		{base + "&excerpt_length=3", "<p>How to polish [&hellip;]</p>\n"},
		{base, "<p>How to polish a brass lamp.</p>\n"},
		{base + "&excerpt_length=0", "<p>How to polish a brass lamp.</p>\n"},
		{base + "&excerpt_length=1", "<p>How [&hellip;]</p>\n"},
		{"/index.php?rest_route=/cms/v2/posts/201&excerpt_length=1", "<p>Oak.</p>\n"}, // written: never cut
	} {
		if got := excerpt(tc.uri); got != tc.want {
			t.Errorf("%s: excerpt %q, want %q", tc.uri, got, tc.want)
		}
	}
	if r := f.do(req{uri: base + "&excerpt_length=many"}); r.StatusCode() != 400 || !strings.Contains(string(r.Body()), "excerpt_length") {
		t.Errorf("excerpt_length=many: %d %s", r.StatusCode(), r.Body())
	}
}
