package main

import (
	"fmt"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestCMSRecordsAnEdgeMayNotShow: an edge holds an existence marker (id, type, status) for every
// record without a public state, so that an anonymous read of a draft, a pending, private or
// trashed record answers WordPress's 401 rest_forbidden (an edit context: rest_forbidden_context),
// while an id that does not exist, or names a record of another type, is 404
// rest_post_invalid_id. The answers follow the record through publication, unpublication and
// deletion although the edge caches them; a logged-in caller without rights gets 403 from the
// origin. The marker never carries the title or the content.
func TestCMSRecordsAnEdgeMayNotShow(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{CacheBytes: 16 << 20})
	tn, _ := s.tenant("news")
	host := "news.example.test"
	editor := basic("edith", cmsUser(t, s, tn, "edith", schema.RoleEditor))
	subscriber := basic("sam", cmsUser(t, s, tn, "sam", schema.RoleSubscriber))
	rest := func(route string) string { return "/index.php?rest_route=" + route }

	const (
		forbidden401    = `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}`
		forbidden403    = `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}`
		forbiddenEdit   = `{"code":"rest_forbidden_context","message":"Sorry, you are not allowed to edit this post.","data":{"status":401}}`
		invalidID       = `{"code":"rest_post_invalid_id","message":"Invalid post ID.","data":{"status":404}}`
		secretTitle     = "Unannounced merger"
		secretContent   = "The board meets on Friday"
		publishedStatus = "publish"
	)
	r := call(t, "POST", e.addr, host, rest("/cms/v2/posts"), `{"title":"`+secretTitle+`","content":"`+secretContent+`","status":"draft"}`, "Authorization", editor)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := fmt.Sprint(int64(r.json(t)["id"].(float64)))
	version := r.header.Get("Vitrine-Write-Version")
	item := rest("/cms/v2/posts/" + id)

	expect := func(what, path string, status int, body string, headers ...string) {
		t.Helper()
		got := call(t, "GET", e.addr, host, path, "", headers...)
		if got.status != status || string(got.body) != body {
			t.Fatalf("%s: %d %s, want %d %s", what, got.status, got.body, status, body)
		}
	}
	// Twice each: the second answer may come from the edge's cache.
	for range 2 {
		expect("anonymous draft", item, 401, forbidden401, "Vitrine-Min-Version", version)
		expect("anonymous draft, edit context", item+"&context=edit", 401, forbiddenEdit)
		expect("the draft under another type", rest("/cms/v2/pages/"+id), 404, invalidID)
		expect("an id that does not exist", rest("/cms/v2/posts/999999"), 404, invalidID)
	}
	expect("a subscriber (the origin answers)", item, 403, forbidden403, "Authorization", subscriber)
	// The edge knows the draft exists, and nothing else of it.
	snap := e.rep.TenantBySlug("news").Snapshot()
	m := snap.PostMarker(schema.PostID(mustAtoi(t, id)))
	if m == nil || m.Type != "post" || m.Status != schema.StatusDraft {
		t.Fatalf("marker %+v", m)
	}
	if p := snap.Post(schema.PostID(mustAtoi(t, id)), 0); p != nil {
		t.Fatalf("the edge holds the draft itself: %+v", p)
	}

	// Published: the edge serves it, although it cached the 401.
	r = call(t, "PATCH", e.addr, host, item, `{"status":"`+publishedStatus+`"}`, "Authorization", editor)
	if r.status != 200 {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	got := call(t, "GET", e.addr, host, item, "", "Vitrine-Min-Version", r.header.Get("Vitrine-Write-Version"))
	if got.status != 200 || got.json(t)["title"].(map[string]any)["rendered"] != secretTitle {
		t.Fatalf("published: %d %s", got.status, got.body)
	}
	if e.rep.TenantBySlug("news").Snapshot().PostMarker(schema.PostID(mustAtoi(t, id))) != nil {
		t.Fatal("a published post kept its marker")
	}

	// Private, pending, future and trashed records are all "exists, not for you".
	for _, status := range []string{"private", "pending", "future"} {
		body := `{"status":"` + status + `"}`
		if status == "future" {
			body = `{"status":"future","date":"` + time.Now().Add(48*time.Hour).UTC().Format("2006-01-02T15:04:05") + `"}`
		}
		r = call(t, "PATCH", e.addr, host, item, body, "Authorization", editor)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", status, r.status, r.body)
		}
		expect("anonymous "+status, item, 401, forbidden401, "Vitrine-Min-Version", r.header.Get("Vitrine-Write-Version"))
	}
	r = call(t, "DELETE", e.addr, host, item, "", "Authorization", editor)
	if r.status != 200 {
		t.Fatalf("trash: %d %s", r.status, r.body)
	}
	expect("anonymous trashed", item, 401, forbidden401, "Vitrine-Min-Version", r.header.Get("Vitrine-Write-Version"))

	// Deleted for good: it no longer exists.
	r = call(t, "DELETE", e.addr, host, item+"&force=true", "", "Authorization", editor)
	if r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	expect("anonymous deleted", item, 404, invalidID, "Vitrine-Min-Version", r.header.Get("Vitrine-Write-Version"))
	s.converged(e, pubOnly, "news")
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
