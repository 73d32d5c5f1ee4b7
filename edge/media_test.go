package edge_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
)

// feedMedia adds attachments to tenant demo beside the fixture's posts 100 and 101, as the
// origin replicates them: public ones (no parent, or a published parent) at pub; the others only
// as existence markers (an edge never holds their states). Post 101 gets featured image 300,
// post 110 (published) featured image 303 (attached to a draft: not public), post 111 featured
// image 399 (no such attachment).
//
//	id   parent  type              public
//	300  -       image/jpeg        yes (two sizes)
//	301  101     image/png         yes
//	302  101     application/pdf   yes
//	303  150     image/jpeg        no: its parent 150 is a draft
//	304  -       video/mp4         no: private
func feedMedia(f *fixture) {
	day := epochTime.Add(48 * time.Hour)
	img := func(id, parent int64, mime, stem string, w, h int) *schema.Post {
		ext := map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "application/pdf": ".pdf", "video/mp4": ".mp4"}[mime]
		p := &schema.Post{ID: schema.PostID(id), Type: schema.TypeAttachment, Slug: stem, Status: schema.StatusInherit, Title: strings.ToUpper(stem[:1]) + stem[1:],
			Content: "About " + stem + ".", Author: 1, CommentStatus: "open", PingStatus: "closed", Format: "standard", Parent: schema.PostID(parent),
			DateGMT: day.Add(time.Duration(id-300) * time.Hour), ModifiedGMT: day.Add(time.Duration(id-300) * time.Hour),
			Attachment: &schema.Attachment{MimeType: mime, File: "2026/03/" + stem + "-0123456789ab" + ext, Width: w, Height: h,
				FileSize: 4000 + id, SHA256: strings.Repeat("0f", 32)}}
		if w > 300 {
			p.Attachment.AltText = "The " + stem
			p.Attachment.Sizes = map[string]schema.AttachmentSize{
				"medium":    {File: "2026/03/" + stem + "-0123456789ab-300x200" + ext, Width: 300, Height: 200, MimeType: mime, FileSize: 900, SHA256: strings.Repeat("1f", 32)},
				"thumbnail": {File: "2026/03/" + stem + "-0123456789ab-150x150" + ext, Width: 150, Height: 150, MimeType: mime, FileSize: 400, SHA256: strings.Repeat("2f", 32)},
			}
		}
		p.Normalize()
		return p
	}
	for _, p := range []*schema.Post{
		img(300, 0, "image/jpeg", "harbour", 600, 400),
		img(301, 101, "image/png", "boat", 120, 80),
		img(302, 101, "application/pdf", "timetable", 0, 0),
	} {
		f.feed.put("demo", schema.KindPost, schema.IDString(p.ID), schema.Pub, p)
	}
	for _, m := range []*schema.PostMarker{
		{ID: 303, Type: schema.TypeAttachment, Status: schema.StatusInherit},
		{ID: 304, Type: schema.TypeAttachment, Status: schema.StatusPrivate},
		{ID: 150, Type: "post", Status: schema.StatusDraft},
	} {
		f.feed.put("demo", schema.KindPostMarker, schema.IDString(m.ID), schema.Pub, m)
	}
	for _, fp := range []struct{ id, media int64 }{{101, 300}, {110, 303}, {111, 399}} {
		p := &schema.Post{ID: schema.PostID(fp.id), Type: "post", Slug: "post-" + schema.IDString(fp.id), Status: schema.StatusPublish,
			Title: "Post " + schema.IDString(fp.id), Content: "Text.", Author: 1, FeaturedMedia: schema.PostID(fp.media),
			CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: epochTime.Add(time.Duration(fp.id-100) * time.Hour),
			ModifiedGMT: epochTime.Add(time.Duration(fp.id-100) * time.Hour)}
		if fp.id == 101 {
			p.Slug, p.Title, p.Content = "summer-sale", "Summer sale", "First line.\n\nSecond paragraph of Summer sale."
		}
		p.Normalize()
		f.feed.put("demo", schema.KindPost, schema.IDString(p.ID), schema.Pub, p)
	}
	f.feed.head("demo")
	f.rep.Checkpoint()
}

const mediaRoute = "/index.php?rest_route=/cms/v2/media"

func TestMediaGoldenBodies(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedMedia(f)
	for _, tt := range []struct{ name, uri string }{
		{"cms_media", mediaRoute + "/300"},
		{"cms_media_embed", mediaRoute + "/300&context=embed"},
		{"cms_media_attached_embed", mediaRoute + "/301&_embed=wp:attached-to"},
		{"cms_media_list", mediaRoute + "&per_page=1&media_type=application"},
		{"cms_media_forbidden", mediaRoute + "/303"},
		{"cms_media_missing", mediaRoute + "/399"},
		{"cms_media_edit_anonymous", mediaRoute + "/300&context=edit"},
		{"cms_post_featured_embed", "/index.php?rest_route=/cms/v2/posts/101&_embed=wp:featuredmedia"},
		{"posts_featured", "/api/posts?per_page=3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := render(f.do(req{uri: tt.uri}))
			golden(t, tt.name, got)
			if again := render(f.do(req{uri: tt.uri})); string(again) != string(got) {
				t.Errorf("second answer differs:\n%s", again)
			}
		})
	}
}

// The media collection through an edge: every media filter, the posts filters that apply, and
// WordPress's status rules for anonymous callers (who see public attachments only).
func TestMediaCollection(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedMedia(f)
	ok := []struct {
		name  string
		uri   string
		ids   []int64
		total string
	}{
		{"default: public attachments, newest first", mediaRoute, []int64{302, 301, 300}, "3"},
		{"status inherit (the default) anonymously", mediaRoute + "&status=inherit", []int64{302, 301, 300}, "3"},
		{"media_type image", mediaRoute + "&media_type=image", []int64{301, 300}, "2"},
		{"media_type application,video", mediaRoute + "&media_type=application,video", []int64{302}, "1"},
		{"media_type audio", mediaRoute + "&media_type=audio", nil, "0"},
		{"mime_type", mediaRoute + "&mime_type=image/png", []int64{301}, "1"},
		{"mime_type with media_type: either", mediaRoute + "&mime_type=image/png&media_type=application", []int64{302, 301}, "2"},
		{"unknown mime_type filters nothing (WordPress)", mediaRoute + "&mime_type=image/unknown", []int64{302, 301, 300}, "3"},
		{"parent (wp:attachment of post 101)", mediaRoute + "&parent=101", []int64{302, 301}, "2"},
		{"parent 0: unattached", mediaRoute + "&parent=0", []int64{300}, "1"},
		{"parent_exclude", mediaRoute + "&parent_exclude=101", []int64{300}, "1"},
		{"search by title", mediaRoute + "&search=boat", []int64{301}, "1"},
		{"search by file name", mediaRoute + "&search=harbour-0123456789ab", []int64{300}, "1"},
		{"include", mediaRoute + "&include=300,303,304", []int64{300}, "1"},
		{"author", mediaRoute + "&author=1&per_page=1", []int64{302}, "3"},
		{"orderby title", mediaRoute + "&orderby=title&order=asc", []int64{301, 300, 302}, "3"},
		{"slug", mediaRoute + "&slug=timetable", []int64{302}, "1"},
		{"after", mediaRoute + "&after=2026-03-03T12:30:00Z", []int64{302, 301}, "2"},
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
	bad := []struct{ name, uri, param, detail string }{
		{"status private anonymously", mediaRoute + "&status=private", "status", "Status is forbidden."},
		{"status trash anonymously", mediaRoute + "&status=inherit,trash", "status", "Status is forbidden."},
		{"status publish is not a media status", mediaRoute + "&status=publish", "status", "status[0] is not one of inherit, private, and trash."},
		{"media_type unknown", mediaRoute + "&media_type=font", "media_type", "media_type[0] is not one of image, video, text, application, and audio."},
		{"parent not an integer", mediaRoute + "&parent=post", "parent", "parent[0] is not of type integer."},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			a := getList(t, f, req{uri: tc.uri})
			data, _ := a.body["data"].(map[string]any)
			params, _ := data["params"].(map[string]any)
			if a.status != 400 || a.body["code"] != "rest_invalid_param" || params[tc.param] != tc.detail {
				t.Errorf("status %d body %v, want 400 rest_invalid_param %s: %q", a.status, a.body, tc.param, tc.detail)
			}
		})
	}
	// context=edit needs edit rights (401 anonymously), as for posts.
	if a := getList(t, f, req{uri: mediaRoute + "&context=edit"}); a.status != 401 || a.body["code"] != "rest_forbidden_context" {
		t.Errorf("edit context anonymously: %d %v", a.status, a.body)
	}
}

// _embed of featured media: the attachment's embed view when it is public, WordPress's error
// object otherwise (401 rest_forbidden when the edge knows it exists, 404 when it does not).
func TestMediaFeaturedEmbed(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedMedia(f)
	embedded := func(id string) map[string]any {
		t.Helper()
		resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts/" + id + "&_embed"})
		if resp.StatusCode() != 200 {
			t.Fatalf("post %s: %d %s", id, resp.StatusCode(), resp.Body())
		}
		var body struct {
			Embedded struct {
				Media []map[string]any `json:"wp:featuredmedia"`
			} `json:"_embedded"`
		}
		if err := json.Unmarshal(resp.Body(), &body); err != nil || len(body.Embedded.Media) != 1 {
			t.Fatalf("post %s: %v %s", id, err, resp.Body())
		}
		return body.Embedded.Media[0]
	}
	if m := embedded("101"); m["id"] != float64(300) || m["source_url"] != "https://api.shop.example/cms-content/uploads/2026/03/harbour-0123456789ab.jpg" ||
		m["description"] != nil {
		t.Errorf("public featured media embedded as %v", m)
	}
	if m := embedded("110"); m["code"] != "rest_forbidden" || m["data"].(map[string]any)["status"] != float64(401) {
		t.Errorf("non-public featured media embedded as %v", m)
	}
	if m := embedded("111"); m["code"] != "rest_post_invalid_id" || m["data"].(map[string]any)["status"] != float64(404) {
		t.Errorf("missing featured media embedded as %v", m)
	}
	// The list embeds the same way.
	resp := f.do(req{uri: "/index.php?rest_route=/cms/v2/posts&include=101&_embed=wp:featuredmedia"})
	if !strings.Contains(string(resp.Body()), `"wp:featuredmedia":[{"id":300,`) {
		t.Errorf("list embed: %s", resp.Body())
	}
}

// Items: a public attachment reads like WordPress's; one the edge knows only by its marker is
// 401 rest_forbidden; an unknown id 404; an id of another type 404.
func TestMediaItem(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedMedia(f)
	cases := []struct {
		uri    string
		status int
		code   string
	}{
		{mediaRoute + "/300", 200, ""},
		{mediaRoute + "/302", 200, ""},
		{mediaRoute + "/303", 401, "rest_forbidden"},
		{mediaRoute + "/304", 401, "rest_forbidden"},
		{mediaRoute + "/399", 404, "rest_post_invalid_id"},
		{mediaRoute + "/101", 404, "rest_post_invalid_id"}, // a post, not an attachment
		{"/index.php?rest_route=/cms/v2/posts/300", 404, "rest_post_invalid_id"},
		{mediaRoute + "/0", 404, "rest_post_invalid_id"},
	}
	for _, tc := range cases {
		resp := f.do(req{uri: tc.uri})
		if resp.StatusCode() != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.uri, resp.StatusCode(), resp.Body(), tc.status)
			continue
		}
		if tc.code != "" {
			if b := decodeJSON(t, resp.Body()); b["code"] != tc.code {
				t.Errorf("%s: %v, want %s", tc.uri, b, tc.code)
			}
		}
	}
	resp := f.do(req{uri: mediaRoute + "/300"})
	if l := string(resp.Header.Peek("Link")); l != `<https://api.shop.example/?attachment_id=300>; rel="alternate"; type=text/html` {
		t.Errorf("Link %q", l)
	}
}

// An attachment written after its list was cached is listed at once: media changes invalidate
// the post-list class, and an attachment leaving the public model leaves the list.
func TestMediaCacheInvalidation(t *testing.T) {
	f := newFixture(t, edge.Config{})
	feedMedia(f)
	f.cached(mediaRoute)
	f.feed.del("demo", schema.KindPost, "301", schema.Pub)
	f.feed.head("demo")
	f.rep.Checkpoint()
	if a := getList(t, f, req{uri: mediaRoute}); !slices.Equal(a.ids, []int64{302, 300}) {
		t.Errorf("after a tombstone: %v", a.ids)
	}
	f.cached("/api/posts")
	f.feed.del("demo", schema.KindPost, "300", schema.Pub)
	f.feed.head("demo")
	f.rep.Checkpoint()
	if b := f.do(req{uri: "/api/posts"}).Body(); strings.Contains(string(b), "harbour") {
		t.Errorf("/api/posts still shows a featured image that left the public model: %s", b)
	}
}
