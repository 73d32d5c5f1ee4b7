package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"vitrine/edge"
	"vitrine/origin/oembed"
	"vitrine/schema"
)

// embedSite is a store reached through an edge whose origin may reach one fake oEmbed provider
// on the loopback interface (the proxy's test hooks; production reaches public addresses only).
type embedSite struct {
	*cmsSite
	provider *httptest.Server
	hits     atomic.Int64
	video    string // a URL of the provider (in the registry through Config.Providers)
}

func newEmbedSite(t *testing.T) *embedSite {
	t.Helper()
	es := &embedSite{}
	es.provider = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		es.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":"1.0","type":"video","title":"A video","provider_name":"Fake","width":%q,"height":270,`+
			`"html":"<iframe src=\"https://player.example/v/1\" width=\"480\" height=\"270\" onload=\"x()\"></iframe><script>steal()</script>"}`,
			r.URL.Query().Get("maxwidth"))
	}))
	t.Cleanup(es.provider.Close)
	_, port, _ := net.SplitHostPort(es.provider.Listener.Addr().String())
	es.video = "http://127.0.0.1:" + port + "/video/1"

	s := newSystem(t, systemOptions{})
	s.originConfig.OEmbed = oembed.Config{AllowAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, AnyPort: true,
		Providers: []oembed.Provider{{Name: "Fake", Pattern: regexp.MustCompile(`^http://127\.0\.0\.1:` + port + `/video/.*`), Endpoint: es.provider.URL + "/oembed"}}}
	c := cmsSiteOn(t, s, edge.Config{}, schema.RoleSubscriber, schema.RoleEditor)
	c.addContributor(t)
	es.cmsSite = c
	return es
}

// get sends an anonymous GET of a URL path with its query to addr (the edge or the origin).
func (es *embedSite) get(addr, uri string) *response {
	es.t.Helper()
	return call(es.t, "GET", addr, es.host, uri, "")
}

var embedSecret = regexp.MustCompile(`(secret=|data-secret=\\?")[A-Za-z0-9]{10}`)

// TestOEmbedSystem: the embed route and the embed page answered by an edge from its replica
// (and by the origin alike), the proxy's permission and cache, and bare URLs in post content
// resolved at write time and rendered by the edge.
func TestOEmbedSystem(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	es := newEmbedSite(t)
	author := es.users[schema.RoleEditor]
	post := &schema.Post{Type: "post", Status: schema.StatusPublish, Title: `Tea <script>alert(1)</script>& "cakes"`, Content: "All about tea.",
		Author: author.ID, CommentStatus: "open", PingStatus: "open", Format: "standard"}
	es.post(post)
	draft := &schema.Post{Type: "post", Status: schema.StatusDraft, Title: "Draft", Content: "x", Author: author.ID,
		CommentStatus: "open", PingStatus: "open", Format: "standard"}
	es.post(draft)
	page := &schema.Post{Type: "page", Status: schema.StatusPublish, Title: "About", Content: "Us.", Author: author.ID,
		CommentStatus: "closed", PingStatus: "closed", Format: "standard"}
	es.post(page)
	base := es.tn.BaseURL
	permalink := fmt.Sprintf("%s/?p=%d", base, post.ID)
	embedURI := func(u string, extra string) string {
		return "/index.php?rest_route=/oembed/1.0/embed&url=" + url.QueryEscape(u) + extra
	}

	t.Run("embed route", func(t *testing.T) {
		first := es.get(es.edge, embedURI(permalink, "&maxwidth=400"))
		if first.status != 200 || first.header.Get("Cache-Status") != "vitrine-edge; fwd=miss; stored" {
			t.Fatalf("edge: %d %q %s", first.status, first.header.Get("Cache-Status"), first.body)
		}
		m := first.json(t)
		if m["width"] != 400.0 || m["height"] != 225.0 || m["type"] != "rich" || m["author_name"] != "The editor" || m["provider_name"] != es.tn.Name ||
			m["author_url"] != fmt.Sprintf("%s/?author=%d", base, author.ID) || m["title"] != post.Title {
			t.Errorf("edge answer: %s", first.body)
		}
		html, _ := m["html"].(string)
		if !strings.Contains(html, `src="`+permalink+`&amp;embed=true#?secret=`) || strings.Contains(html, "alert(1)") {
			t.Errorf("html: %s", html)
		}
		if again := es.get(es.edge, embedURI(permalink, "&maxwidth=400")); again.header.Get("Cache-Status") != "vitrine-edge; hit" || string(again.body) != string(first.body) {
			t.Errorf("repeat: %q", again.header.Get("Cache-Status"))
		}
		origin := es.get(es.s.originAddr, embedURI(permalink, "&maxwidth=400"))
		if origin.status != 200 || embedSecret.ReplaceAllString(string(origin.body), "${1}S") != embedSecret.ReplaceAllString(string(first.body), "${1}S") {
			t.Errorf("origin and edge differ:\n%s\n%s", origin.body, first.body)
		}
		x := es.get(es.edge, embedURI(permalink, "&format=xml"))
		if x.status != 200 || x.header.Get("Content-Type") != "text/xml; charset=UTF-8" || !strings.HasPrefix(string(x.body), "<?xml version=\"1.0\"?>\n<oembed><version>1.0</version>") {
			t.Errorf("xml: %d %q %s", x.status, x.header.Get("Content-Type"), x.body)
		}
		if p := es.get(es.edge, embedURI(fmt.Sprintf("%s/?page_id=%d", base, page.ID), "")); p.status != 200 || p.json(t)["title"] != "About" {
			t.Errorf("page: %d %s", p.status, p.body)
		}
		missing := es.want(es.get(es.edge, "/index.php?rest_route=/oembed/1.0/embed"), 400, "rest_missing_callback_param")
		if params, _ := missing["data"].(map[string]any)["params"].([]any); len(params) != 1 || params[0] != "url" {
			t.Errorf("missing url: %v", missing)
		}
		for _, u := range []string{fmt.Sprintf("https://elsewhere.example/?p=%d", post.ID), fmt.Sprintf("%s/?p=%d", base, draft.ID), base + "/?p=999999"} {
			m := es.want(es.get(es.edge, embedURI(u, "")), 404, "oembed_invalid_url")
			if m["message"] != "Not Found" || m["data"].(map[string]any)["status"] != 404.0 {
				t.Errorf("%s: %v", u, m)
			}
		}
	})

	t.Run("embed page", func(t *testing.T) {
		uri := fmt.Sprintf("/?p=%d&embed=true", post.ID)
		r := es.get(es.edge, uri)
		body := string(r.body)
		if r.status != 200 || r.header.Get("Content-Type") != schema.ContentTypeHTML || r.header.Get("X-Frame-Options") != "" ||
			!strings.Contains(r.header.Get("Content-Security-Policy"), "frame-ancestors *") {
			t.Fatalf("page: %d %v", r.status, r.header)
		}
		if !strings.Contains(body, `>Tea &amp; &#34;cakes&#34;</a></p>`) || strings.Contains(body, "alert(1)") || strings.Count(body, "<script>") != 1 {
			t.Errorf("page body: %s", body)
		}
		if again := es.get(es.edge, uri); again.header.Get("Cache-Status") != "vitrine-edge; hit" {
			t.Errorf("repeat: %q", again.header.Get("Cache-Status"))
		}
		if o := es.get(es.s.originAddr, uri); o.status != 200 || o.header.Get("Content-Type") != schema.ContentTypeHTML {
			t.Errorf("origin: %d %q", o.status, o.header.Get("Content-Type"))
		}
		for _, u := range []string{fmt.Sprintf("/?p=%d&embed=true", draft.ID), "/?embed=true", "/index.php?p=abc&embed=true"} {
			if r := es.get(es.edge, u); r.status != 404 || r.header.Get("Content-Type") != schema.ContentTypeHTML {
				t.Errorf("%s: %d %q", u, r.status, r.header.Get("Content-Type"))
			}
		}
		if home := es.get(es.edge, "/"); home.status != 200 || !strings.Contains(home.header.Get("Link"), "api.w.org") {
			t.Errorf("the home page: %d %v", home.status, home.header)
		}
	})

	t.Run("proxy permission", func(t *testing.T) {
		uri := "/oembed/1.0/proxy?url=" + url.QueryEscape(permalink)
		m := es.want(es.rest("", "GET", uri, ""), 401, "rest_forbidden")
		if m["message"] != "Sorry, you are not allowed to make proxied oEmbed requests." {
			t.Errorf("anonymous: %v", m)
		}
		es.want(es.rest(schema.RoleSubscriber, "GET", uri, ""), 403, "rest_forbidden")
		ok := es.rest(schema.RoleContributor, "GET", uri+"&maxwidth=300", "")
		if ok.status != 200 || ok.json(t)["width"] != 300.0 || ok.header.Get("Allow") != "GET" {
			t.Errorf("contributor: %d %v %s", ok.status, ok.header.Get("Allow"), ok.body)
		}
		// Arguments are checked before the permission, as WordPress does.
		es.want(es.rest("", "GET", "/oembed/1.0/proxy", ""), 400, "rest_missing_callback_param")
		es.want(es.rest(schema.RoleContributor, "GET", uri+"&format=yaml", ""), 400, "rest_invalid_param")
		es.want(es.rest(schema.RoleContributor, "GET", "/oembed/1.0/proxy?url="+url.QueryEscape("http://10.0.0.1/"), ""), 404, "oembed_invalid_url")
	})

	t.Run("proxy cache", func(t *testing.T) {
		uri := "/oembed/1.0/proxy?url=" + url.QueryEscape(es.video)
		r := es.rest(schema.RoleEditor, "GET", uri, "")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.json(t)
		if h := m["html"].(string); !strings.HasPrefix(h, `<iframe src="https://player.example/v/1" width="480" height="270" sandbox=`) || strings.Contains(h, "steal") || strings.Contains(h, "onload") {
			t.Errorf("html: %s", h)
		}
		hits := es.hits.Load()
		if again := es.rest(schema.RoleContributor, "GET", uri+"&_wpnonce=abc", ""); again.status != 200 || es.hits.Load() != hits || hits != 1 {
			t.Errorf("a cached answer reached the provider: %d requests", es.hits.Load())
		}
	})

	t.Run("bare URLs", func(t *testing.T) {
		content := "Intro\n\n" + permalink + "\n\n" + es.video + "\n\nhttps://unknown.example/page\n\nEnd."
		body, _ := json.Marshal(map[string]any{"title": "Embeds", "status": "publish", "content": content})
		w := es.rest(schema.RoleEditor, "POST", "/cms/v2/posts", string(body))
		if w.status != 201 {
			t.Fatalf("create: %d %s", w.status, w.body)
		}
		id := int64(w.json(t)["id"].(float64))
		rendered := func(addr string) string {
			r := call(t, "GET", addr, es.host, fmt.Sprintf("/index.php?rest_route=/cms/v2/posts/%d", id), "")
			if r.status != 200 {
				t.Fatalf("read %s: %d %s", addr, r.status, r.body)
			}
			return r.json(t)["content"].(map[string]any)["rendered"].(string)
		}
		got := rendered(es.edge)
		for _, want := range []string{`<blockquote class="wp-embedded-content" data-secret="`, `<iframe src="https://player.example/v/1"`,
			`<a href="https://unknown.example/page">https://unknown.example/page</a>`} {
			if !strings.Contains(got, want) {
				t.Errorf("the edge renders no %s:\n%s", want, got)
			}
		}
		if origin := rendered(es.s.originAddr); origin != got {
			t.Errorf("origin and edge render differently:\n%s\n%s", origin, got)
		}
		// New content: resolved again; the old embeds go.
		body, _ = json.Marshal(map[string]any{"content": "Only\n\n" + permalink})
		if u := es.rest(schema.RoleEditor, "POST", fmt.Sprintf("/cms/v2/posts/%d", id), string(body)); u.status != 200 {
			t.Fatalf("update: %d %s", u.status, u.body)
		}
		if got := rendered(es.edge); strings.Contains(got, "player.example") || !strings.Contains(got, `class="wp-embedded-content"`) {
			t.Errorf("after the update: %s", got)
		}
	})
}
