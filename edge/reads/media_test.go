package reads_test

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"testing"
	"time"

	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// originShop is a tenant as the origin's full replica holds it: public states and private ones.
// Attachment 500 is public; 501 is attached to draft 510, so it has a private state only; post
// 511 (published) features 501, post 512 features 500.
func originShop(t *testing.T) *replica.Tenant {
	t.Helper()
	r := replica.New(replica.Config{Logger: slog.New(slog.DiscardHandler)})
	r.Reset("e")
	ver := map[string]int64{}
	put := func(log string, kind schema.Kind, id string, vis schema.Visibility, v any) {
		ver[log]++
		c := schema.NewChange(log, kind, id, vis, v)
		c.Version, c.TxnFirst, c.TxnLast = ver[log], ver[log], ver[log]
		r.Change(&c)
	}
	head := func(log string) {
		r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: ver[log]})
	}
	put(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, &schema.Tenant{ID: "t", Slug: "shop", Name: "Shop", BaseURL: "https://api.shop.test",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD"}})
	head(schema.PlatformLog)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	media := func(id, parent int64) *schema.Post {
		p := &schema.Post{ID: schema.PostID(id), Type: schema.TypeAttachment, Slug: "m" + schema.IDString(id), Status: schema.StatusInherit,
			Title: "Media " + schema.IDString(id), Author: 1, CommentStatus: "open", PingStatus: "closed", Format: "standard",
			Parent: schema.PostID(parent), DateGMT: at.Add(time.Duration(id) * time.Minute), ModifiedGMT: at,
			Attachment: &schema.Attachment{MimeType: "image/png", File: "2026/11/m" + schema.IDString(id) + "-0123456789ab.png", Width: 64, Height: 64, FileSize: 99}}
		p.Normalize()
		return p
	}
	post := func(id int64, status schema.PostStatus, featured int64) *schema.Post {
		p := &schema.Post{ID: schema.PostID(id), Type: "post", Slug: "p" + schema.IDString(id), Status: status, Title: "Post", Content: "x",
			Author: 1, FeaturedMedia: schema.PostID(featured), CommentStatus: "open", PingStatus: "open", Format: "standard",
			DateGMT: at.Add(time.Duration(id) * time.Minute), ModifiedGMT: at}
		p.Normalize()
		return p
	}
	put("shop", schema.KindPost, "500", schema.Pub, media(500, 0))
	hidden := media(501, 510)
	hidden.Attachment.ParentHidden = true // its parent is a draft
	put("shop", schema.KindPost, "501", schema.Priv, hidden)
	put("shop", schema.KindPostMarker, "501", schema.Pub, &schema.PostMarker{ID: 501, Type: schema.TypeAttachment, Status: schema.StatusInherit})
	put("shop", schema.KindPost, "510", schema.Priv, post(510, schema.StatusDraft, 0))
	put("shop", schema.KindPostMarker, "510", schema.Pub, &schema.PostMarker{ID: 510, Type: "post", Status: schema.StatusDraft})
	put("shop", schema.KindPost, "511", schema.Pub, post(511, schema.StatusPublish, 501))
	put("shop", schema.KindPost, "512", schema.Pub, post(512, schema.StatusPublish, 500))
	head("shop")
	r.Checkpoint()
	return r.TenantBySlug("shop")
}

func mediaAnswer(t *testing.T, tn *replica.Tenant, route, id, query string, user *schema.User) reads.Response {
	t.Helper()
	r := schema.RouteByName(route)
	if r == nil {
		t.Fatalf("no route %s", route)
	}
	q, _ := url.ParseQuery(query)
	return reads.Answer(&reads.Request{Route: r, Tenant: tn, Viewer: reads.Viewer{User: user},
		Param: func(string) string { return id },
		Query: func(name string) (string, bool) { v, ok := q[name]; return v0(v), ok }})
}

func v0(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// The origin answers credentialed media reads with the same engine on its full replica: editors
// see attachments of drafts, in every context, and embed them; others get WordPress's errors.
func TestMediaReadsAtTheOrigin(t *testing.T) {
	tn := originShop(t)
	editor := &schema.User{ID: 1, Role: schema.RoleEditor}
	subscriber := &schema.User{ID: 2, Role: schema.RoleSubscriber}
	ids := func(resp reads.Response) []int64 {
		t.Helper()
		if resp.Err != nil {
			t.Fatalf("error %v", resp.Err)
		}
		var items []struct{ ID int64 }
		json.Unmarshal(resp.Body, &items)
		var out []int64
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	if got := ids(mediaAnswer(t, tn, "cms.media.list", "", "", nil)); !slices.Equal(got, []int64{500}) {
		t.Errorf("anonymous list %v, want the public attachment only", got)
	}
	if got := ids(mediaAnswer(t, tn, "cms.media.list", "", "context=edit", editor)); !slices.Equal(got, []int64{501, 500}) {
		t.Errorf("editor list %v, want both", got)
	}
	if resp := mediaAnswer(t, tn, "cms.media.list", "", "status=private", subscriber); resp.Err == nil {
		t.Errorf("a subscriber listed private media")
	}
	for _, tc := range []struct {
		id     string
		user   *schema.User
		status int // 0: 200
	}{
		{"501", editor, 0}, {"501", nil, 401}, {"501", subscriber, 403}, {"500", subscriber, 0}, {"502", editor, 404},
	} {
		resp := mediaAnswer(t, tn, "cms.media.get", tc.id, "", tc.user)
		status := 0
		if e, ok := resp.Err.(*schema.Error); ok {
			status = e.Status
			if e.Code == schema.CodeNotFound {
				status = 404
			}
		} else if resp.Err != nil {
			status = -1
		}
		if status != tc.status {
			t.Errorf("GET media %s as %v: %v (%d), want %d", tc.id, tc.user, resp.Err, status, tc.status)
		}
	}
	embedded := func(user *schema.User) map[string]any {
		t.Helper()
		resp := mediaAnswer(t, tn, "cms.posts.get", "511", "_embed=wp:featuredmedia", user)
		if resp.Err != nil {
			t.Fatal(resp.Err)
		}
		var body struct {
			Embedded struct {
				Media []map[string]any `json:"wp:featuredmedia"`
			} `json:"_embedded"`
		}
		json.Unmarshal(resp.Body, &body)
		if len(body.Embedded.Media) != 1 {
			t.Fatalf("no embedded media: %s", resp.Body)
		}
		return body.Embedded.Media[0]
	}
	if m := embedded(editor); m["id"] != float64(501) || m["media_type"] != "image" {
		t.Errorf("editor's embed %v", m)
	}
	if m := embedded(nil); m["code"] != "rest_forbidden" || m["data"].(map[string]any)["status"] != float64(401) {
		t.Errorf("anonymous embed %v", m)
	}
	if m := embedded(subscriber); m["code"] != "rest_forbidden" || m["data"].(map[string]any)["status"] != float64(403) {
		t.Errorf("subscriber's embed %v", m)
	}
	// The commerce view shows public featured images only.
	resp := mediaAnswer(t, tn, "posts.list", "", "", nil)
	var page struct {
		Data []struct {
			ID            int64
			FeaturedImage *schema.PostMedia `json:"featured_image"`
		}
	}
	json.Unmarshal(resp.Body, &page)
	for _, p := range page.Data {
		if (p.ID == 512) != (p.FeaturedImage != nil) || p.ID == 512 && p.FeaturedImage.SourceURL != "https://api.shop.test/cms-content/uploads/2026/11/m500-0123456789ab.png" {
			t.Errorf("post %d featured image %+v", p.ID, p.FeaturedImage)
		}
	}
}
