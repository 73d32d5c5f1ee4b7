package reads_test

import (
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// embedStore is an edge's replica of a store with: post 10 (author 3, featured image 20), page 11,
// image 20, and the existence markers of a draft (12) and a private post (13); 14 is a
// navigation menu (public, but without an embed).
func embedStore(t testing.TB) *replica.Tenant {
	t.Helper()
	r := replica.New(replica.Config{Logger: slog.New(slog.DiscardHandler)})
	r.Reset("e")
	versions := map[string]int64{}
	put := func(log string, kind schema.Kind, id string, v any) {
		versions[log]++
		c := schema.NewChange(log, kind, id, schema.Pub, v)
		c.Version, c.TxnFirst, c.TxnLast = versions[log], versions[log], versions[log]
		r.Change(&c)
	}
	put(schema.PlatformLog, schema.KindTenant, "blog", &schema.Tenant{ID: "t", Slug: "blog", Name: "Tea & Co", BaseURL: "https://blog.example",
		Domains: []string{"tea.example"}, Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD"}})
	r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: schema.PlatformLog, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: versions[schema.PlatformLog]})
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	post := func(p *schema.Post) {
		p.CommentStatus, p.PingStatus, p.DateGMT, p.ModifiedGMT = "open", "open", t0, t0
		if p.Format == "" {
			p.Format = "standard"
		}
		p.Normalize()
		put("blog", schema.KindPost, schema.IDString(p.ID), p)
	}
	put("blog", schema.KindAuthor, "3", &schema.Author{ID: 3, Name: "Ann Author", Slug: "ann"})
	post(&schema.Post{ID: 10, Type: "post", Slug: "tea", Status: schema.StatusPublish, Title: `Tea <script>x()</script>& "biscuits"`,
		Content: "All about tea.", Author: 3, FeaturedMedia: 20})
	post(&schema.Post{ID: 11, Type: "page", Slug: "about", Status: schema.StatusPublish, Title: "About", Content: "About us."})
	post(&schema.Post{ID: 20, Type: schema.TypeAttachment, Slug: "tea-cup", Status: schema.StatusInherit, Title: "Tea cup",
		Attachment: &schema.Attachment{MimeType: "image/jpeg", File: "2026/03/cup-9f86d081884c.jpg", Width: 1600, Height: 1200, AltText: "A cup",
			Sizes: map[string]schema.AttachmentSize{"medium": {File: "2026/03/cup-9f86d081884c-300x225.jpg", Width: 300, Height: 225, MimeType: "image/jpeg"}}}})
	post(&schema.Post{ID: 14, Type: "cms_navigation", Slug: "nav", Status: schema.StatusPublish, Title: "Nav"})
	for _, m := range []*schema.PostMarker{{ID: 12, Type: "post", Status: schema.StatusDraft}, {ID: 13, Type: "post", Status: schema.StatusPrivate}} {
		put("blog", schema.KindPostMarker, schema.IDString(m.ID), m)
	}
	r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: "blog", Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: versions["blog"]})
	r.Checkpoint()
	return r.TenantBySlug("blog")
}

func oembed(tn *replica.Tenant, route string, q url.Values) reads.Response {
	return answer(tn, route, q)
}

var secretRE = regexp.MustCompile(`(secret=|data-secret=\\")[A-Za-z0-9]{10}`)

func TestOEmbedEmbedRoute(t *testing.T) {
	tn := embedStore(t)
	tests := []struct {
		name   string
		query  string
		status int
		code   string
		w, h   int
	}{
		{"post", "url=https://blog.example/?p=10", 200, "", 600, 338},
		{"post 400", "url=https://blog.example/?p=10&maxwidth=400", 200, "", 400, 225},
		{"post 200", "url=https://blog.example/?p=10&maxwidth=200", 200, "", 200, 200},
		{"post 1000", "url=https://blog.example/?p=10&maxwidth=1000", 200, "", 600, 338},
		{"post 50", "url=https://blog.example/?p=10&maxwidth=50", 200, "", 200, 200},
		{"maxwidth not a number", "url=https://blog.example/?p=10&maxwidth=abc", 200, "", 200, 200},
		{"maxheight", "url=https://blog.example/?p=10&maxheight=250", 200, "", 600, 250},
		{"trailing slash and other parameters", "url=" + url.QueryEscape("https://blog.example/?utm=x&p=10#top"), 200, "", 600, 338},
		{"without the slash, on a custom domain", "url=" + url.QueryEscape("https://tea.example?p=10"), 200, "", 600, 338},
		{"page", "url=" + url.QueryEscape("https://blog.example/?page_id=11"), 200, "", 600, 338},
		{"missing url", "", 400, "rest_missing_callback_param", 0, 0},
		{"another host", "url=" + url.QueryEscape("https://other.example/?p=10"), 404, "oembed_invalid_url", 0, 0},
		{"draft", "url=https://blog.example/?p=12", 404, "oembed_invalid_url", 0, 0},
		{"private", "url=https://blog.example/?p=13", 404, "oembed_invalid_url", 0, 0},
		{"missing record", "url=https://blog.example/?p=99", 404, "oembed_invalid_url", 0, 0},
		{"no embed for its type", "url=https://blog.example/?p=14", 404, "oembed_invalid_url", 0, 0},
		{"not a permalink", "url=" + url.QueryEscape("https://blog.example/shop/tea"), 404, "oembed_invalid_url", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			resp := oembed(tn, "oembed.embed", q)
			if tc.code != "" {
				e := schema.AsError(resp.Err)
				if resp.Err == nil || e.CMSCode != tc.code {
					t.Fatalf("err = %v, want %s", resp.Err, tc.code)
				}
				if tc.status == 404 && (e.Message != "Not Found" || e.Code != schema.CodeNotFound) {
					t.Errorf("404: %+v", e)
				}
				return
			}
			if resp.Err != nil || resp.Status != 200 || !resp.Cacheable() || resp.ContentType != "" {
				t.Fatalf("resp = %d %v cacheable=%v %q", resp.Status, resp.Err, resp.Cacheable(), resp.ContentType)
			}
			var m map[string]any
			if err := json.Unmarshal(resp.Body, &m); err != nil {
				t.Fatal(err)
			}
			if int(m["width"].(float64)) != tc.w || int(m["height"].(float64)) != tc.h || m["type"] != "rich" || m["version"] != "1.0" {
				t.Errorf("%v×%v %v %v, want %d×%d", m["width"], m["height"], m["type"], m["version"], tc.w, tc.h)
			}
			if !strings.Contains(m["html"].(string), `width="`+itoa(tc.w)+`" height="`+itoa(tc.h)+`"`) {
				t.Errorf("html size: %s", m["html"])
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The whole response of a post, in WordPress's order, with its thumbnail; a page has none.
func TestOEmbedEmbedFields(t *testing.T) {
	tn := embedStore(t)
	resp := oembed(tn, "oembed.embed", url.Values{"url": {"https://blog.example/?p=10"}, "maxwidth": {"400"}})
	body := secretRE.ReplaceAllString(string(resp.Body), "${1}S")
	for _, want := range []string{
		`{"version":"1.0","provider_name":"Tea & Co","provider_url":"https://blog.example","author_name":"Ann Author","author_url":"https://blog.example/?author=3",` +
			`"title":"Tea <script>x()</script>& \"biscuits\"","type":"rich","width":400,"height":225,"html":"<blockquote class=\"wp-embedded-content\" data-secret=\"S\">` +
			`<a href=\"https://blog.example/?p=10\">Tea &amp; &#34;biscuits&#34;</a></blockquote><iframe sandbox=\"allow-scripts\" security=\"restricted\" ` +
			`src=\"https://blog.example/?p=10&amp;embed=true#?secret=S\" width=\"400\" height=\"225\" title=\"“Tea &amp; &#34;biscuits&#34;” — Tea &amp; Co\" data-secret=\"S\"`,
		`"thumbnail_url":"https://blog.example/cms-content/uploads/2026/03/cup-9f86d081884c.jpg","thumbnail_width":400,"thumbnail_height":300}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks\n%s\n in\n%s", want, body)
		}
	}
	page := oembed(tn, "oembed.embed", url.Values{"url": {"https://blog.example/?page_id=11"}})
	var m map[string]any
	json.Unmarshal(page.Body, &m)
	if _, ok := m["thumbnail_url"]; ok || m["author_name"] != "Tea & Co" || m["author_url"] != "https://blog.example" || m["title"] != "About" {
		t.Errorf("page: %s", page.Body)
	}
}

func TestOEmbedEmbedXML(t *testing.T) {
	tn := embedStore(t)
	resp := oembed(tn, "oembed.embed", url.Values{"url": {"https://blog.example/?p=10"}, "format": {"xml"}})
	if resp.Status != 200 || resp.ContentType != "text/xml; charset=UTF-8" || !resp.Cacheable() {
		t.Fatalf("xml: %d %q %v", resp.Status, resp.ContentType, resp.Err)
	}
	var doc struct {
		XMLName xml.Name `xml:"oembed"`
		Version string   `xml:"version"`
		Title   string   `xml:"title"`
		Width   int      `xml:"width"`
		HTML    string   `xml:"html"`
		Thumb   string   `xml:"thumbnail_url"`
	}
	if err := xml.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	if doc.Version != "1.0" || doc.Title != `Tea <script>x()</script>& "biscuits"` || doc.Width != 600 || !strings.HasPrefix(doc.HTML, `<blockquote class="wp-embedded-content"`) || doc.Thumb == "" {
		t.Errorf("xml: %+v", doc)
	}
	// Any other format is json; a 404 in xml is xml.
	if r := oembed(tn, "oembed.embed", url.Values{"url": {"https://blog.example/?p=10"}, "format": {"yaml"}}); r.ContentType != "" || !json.Valid(r.Body) {
		t.Errorf("format=yaml: %q %s", r.ContentType, r.Body)
	}
	r := oembed(tn, "oembed.embed", url.Values{"url": {"https://blog.example/?p=12"}, "format": {"xml"}})
	if r.Status != 404 || r.Cacheable() || !strings.Contains(string(r.Body), "<code>oembed_invalid_url</code><message>Not Found</message><data><status>404</status></data>") {
		t.Errorf("xml 404: %d %s", r.Status, r.Body)
	}
}

func TestEmbedPage(t *testing.T) {
	tn := embedStore(t)
	resp := oembed(tn, "oembed.page", url.Values{"p": {"10"}, "embed": {"true"}})
	body := string(resp.Body)
	if resp.Status != 200 || resp.ContentType != schema.ContentTypeHTML || !resp.Cacheable() {
		t.Fatalf("page: %d %q %v", resp.Status, resp.ContentType, resp.Err)
	}
	for _, want := range []string{
		`<p class="wp-embed-heading"><a href="https://blog.example/?p=10" target="_top">Tea &amp; &#34;biscuits&#34;</a></p>`,
		`<img src="https://blog.example/cms-content/uploads/2026/03/cup-9f86d081884c-300x225.jpg" width="300" height="225" alt="A cup">`,
		`<p>All about tea.</p>`, `<span>Tea &amp; Co</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "x()") {
		t.Errorf("the title's script reached the page")
	}
	headers := map[string]string{}
	for _, kv := range resp.Headers {
		headers[string(kv[0])] = string(kv[1])
	}
	if !strings.Contains(headers["Content-Security-Policy"], "frame-ancestors *") || headers["X-Frame-Options"] != "" {
		t.Errorf("headers: %v", headers)
	}
	for _, q := range []url.Values{{"p": {"12"}, "embed": {"true"}}, {"page_id": {"99"}, "embed": {"true"}}, {"p": {"abc"}, "embed": {"true"}}, {"embed": {"true"}}} {
		r := oembed(tn, "oembed.page", q)
		if r.Status != 404 || r.Cacheable() || r.ContentType != schema.ContentTypeHTML || !strings.Contains(string(r.Body), "can&#8217;t be found") {
			t.Errorf("%v: %d %q", q, r.Status, r.ContentType)
		}
	}
	if r := oembed(tn, "oembed.page", url.Values{"page_id": {"11"}, "embed": {"1"}}); r.Status != 200 || !strings.Contains(string(r.Body), ">About</a>") {
		t.Errorf("page 11: %d", r.Status)
	}
}

// OEmbedFor is what the origin's proxy answers for the store's own URLs.
func TestOEmbedFor(t *testing.T) {
	tn := embedStore(t)
	if o := reads.OEmbedFor(tn, "https://blog.example/?p=10", 300, 0); o == nil || o.Int("width") != 300 {
		t.Fatalf("OEmbedFor: %+v", o)
	}
	for _, u := range []string{"https://blog.example/?p=12", "https://other.example/?p=10", ""} {
		if o := reads.OEmbedFor(tn, u, 0, 0); o != nil {
			t.Errorf("OEmbedFor(%q) = %+v", u, o)
		}
	}
}

func FuzzOEmbedArguments(f *testing.F) {
	for _, s := range []string{"url=https://blog.example/?p=10", "url=https://blog.example/?p=10&format=xml&maxwidth=-5&maxheight=1", "url=%00", "url=https://tea.example?page_id=11&maxwidth=99999999999999999999"} {
		f.Add(s)
	}
	tn := embedStore(f)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		resp := oembed(tn, "oembed.embed", q)
		if resp.Err != nil {
			if s := schema.AsError(resp.Err); s.Code != schema.CodeNotFound && s.Code != schema.CodeInvalid {
				t.Fatalf("%q: %v", raw, resp.Err)
			}
			return
		}
		if resp.Status != 200 && resp.Status != 404 {
			t.Fatalf("%q: status %d", raw, resp.Status)
		}
		page := oembed(tn, "oembed.page", q)
		if page.Status != 200 && page.Status != 404 {
			t.Fatalf("%q: page %d", raw, page.Status)
		}
	})
}

// BenchmarkOEmbed measures an edge's miss of the embed route and of the embed page: rendering
// from the replica (a hit is the rendered cache's, like any read).
func BenchmarkOEmbed(b *testing.B) {
	tn := embedStore(b)
	for _, bc := range []struct {
		route string
		q     url.Values
	}{
		{"oembed.embed", url.Values{"url": {"https://blog.example/?p=10"}}},
		{"oembed.embed", url.Values{"url": {"https://blog.example/?p=10"}, "format": {"xml"}}},
		{"oembed.page", url.Values{"p": {"10"}, "embed": {"true"}}},
	} {
		b.Run(bc.route+"?"+bc.q.Encode(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := oembed(tn, bc.route, bc.q); r.Status != 200 {
					b.Fatal(r.Status)
				}
			}
		})
	}
}
