package reads_test

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// blog returns a replica serving tenant "blog" with n published posts of realistic size (a
// 300-word body), spread over authors, formats, categories and tags, and n/10 pages.
func blog(tb testing.TB, n int) *replica.Tenant {
	tb.Helper()
	r := replica.New(replica.Config{Logger: slog.New(slog.DiscardHandler)})
	r.Reset("e")
	var version int64
	put := func(log string, kind schema.Kind, id string, v any) {
		version++
		c := schema.NewChange(log, kind, id, schema.Pub, v)
		c.Version, c.TxnFirst, c.TxnLast = version, version, version
		r.Change(&c)
	}
	put(schema.PlatformLog, schema.KindTenant, "blog", &schema.Tenant{ID: "b", Slug: "blog", Name: "Blog", BaseURL: "https://blog.test",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD"}})
	r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: schema.PlatformLog, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: version})
	version = 0
	words := strings.Fields("lamp brass oak table linen kettle garden chair copper glass wool stool shelf candle basket mirror")
	body := func(i int) string {
		var b strings.Builder
		for j := range 300 {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	for i := range n + n/10 {
		p := &schema.Post{ID: schema.PostID(1000 + i), Type: "post", Slug: fmt.Sprintf("post-%d", i), Status: schema.StatusPublish,
			Title: words[i%len(words)] + " " + words[(i/3)%len(words)] + " notes", Content: body(i), Author: schema.UserID(1 + i%7),
			Format: schema.PostFormats[i%4], CommentStatus: "open", PingStatus: "open", Sticky: i%97 == 0,
			Categories: []schema.TermID{schema.TermID(1 + i%5)}, Tags: []schema.TermID{schema.TermID(10 + i%11), schema.TermID(30 + i%3)},
			DateGMT: t0.Add(time.Duration(i) * time.Minute), ModifiedGMT: t0.Add(time.Duration(i) * time.Minute)}
		if i >= n {
			p.Type, p.Format, p.Categories, p.Tags, p.Sticky, p.MenuOrder = "page", "standard", nil, nil, false, i%5
		}
		p.Normalize()
		put("blog", schema.KindPost, schema.IDString(int64(p.ID)), p)
	}
	r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: "blog", Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: version})
	r.Checkpoint()
	return r.TenantBySlug("blog")
}

// BenchmarkCMSPostsList measures anonymous CMS collection reads over 5,000 posts (and 500
// pages), arguments to rendered body, as an edge answers a cache miss.
func BenchmarkCMSPostsList(b *testing.B) {
	tn := blog(b, 5000)
	for _, bc := range []struct{ name, route, query string }{
		{"default", "cms.posts.list", ""},
		{"author_category_tag", "cms.posts.list", "author=3&categories=2&tags=12"},
		{"search_relevance", "cms.posts.list", "search=brass%20lamp&orderby=relevance"},
		{"search_title", "cms.posts.list", "search=copper&search_columns=post_title"},
		{"dates_format_title_asc", "cms.posts.list", "after=2026-03-02T00:00:00&before=2026-03-04T00:00:00&format=aside,link&orderby=title&order=asc"},
		{"sticky_first_page_3", "cms.posts.list", "ignore_sticky=false&page=3"},
		{"pages_menu_order", "cms.pages.list", "orderby=menu_order&order=asc&parent=0"},
	} {
		q, _ := url.ParseQuery(bc.query)
		b.Run(bc.name, func(b *testing.B) {
			if r := answer(tn, bc.route, q); r.Err != nil || r.Status != 200 {
				b.Fatalf("%v %d", r.Err, r.Status)
			}
			for b.Loop() {
				answer(tn, bc.route, q)
			}
		})
	}
}

// TestCMSPostsListAtScale checks the filters over the benchmark's data: totals agree with a
// count by hand.
func TestCMSPostsListAtScale(t *testing.T) {
	tn := blog(t, 3000)
	q, _ := url.ParseQuery("author=3&categories=2&per_page=100")
	r := answer(tn, "cms.posts.list", q)
	want := 0
	for i := range 3000 {
		if 1+i%7 == 3 && 1+i%5 == 2 {
			want++
		}
	}
	if got := headerValue(r.Headers, "X-WP-Total"); got != fmt.Sprint(want) {
		t.Errorf("X-WP-Total = %s, want %d", got, want)
	}
}

func headerValue(h [][2][]byte, name string) string {
	for _, kv := range h {
		if string(kv[0]) == name {
			return string(kv[1])
		}
	}
	return ""
}
