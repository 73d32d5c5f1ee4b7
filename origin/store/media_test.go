package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// Media file names are claimed before their blobs are written: a taken candidate moves on to the
// next (-2, -3), parallel claimers never share a name, and claims go through their states.
func TestMediaFileClaims(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	cands := func(stem string) func(n int) []string {
		return func(n int) []string {
			base := "2026/11/" + stem
			if n > 1 {
				base += fmt.Sprintf("-%d", n)
			}
			return []string{base + ".jpg", base + "-150x150.jpg"}
		}
	}
	n, got, err := db.ClaimMediaFiles(ctx, tn, 0, cands("a"))
	if err != nil || n != 1 || !slices.Equal(got, []string{"2026/11/a.jpg", "2026/11/a-150x150.jpg"}) {
		t.Fatalf("first claim = %d %v %v", n, got, err)
	}
	if n, _, err = db.ClaimMediaFiles(ctx, tn, 0, cands("a")); err != nil || n != 2 {
		t.Fatalf("second claim of the same names = %d, %v; want the -2 candidate", n, err)
	}
	if _, _, err = db.ClaimMediaFiles(ctx, tn, 1, cands("a")); schema.ErrorCode(err) != schema.CodeConflict {
		t.Fatalf("a claim limited to the taken first candidate = %v, want a conflict", err)
	}
	// Other tenants have their own names.
	other := storetest.Tenant(t, db, "other")
	if n, _, err = db.ClaimMediaFiles(ctx, other, 0, cands("a")); err != nil || n != 1 {
		t.Fatalf("other tenant's claim = %d, %v", n, err)
	}

	// Parallel claimers of one name all get distinct candidates.
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, _, err := db.ClaimMediaFiles(ctx, tn, 0, cands("p"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[n] {
				t.Errorf("candidate %d claimed twice", n)
			}
			seen[n] = true
		}()
	}
	wg.Wait()

	// Bind, drop, forget; release; a lost claim fails the binding transaction.
	files := []string{"2026/11/a.jpg", "2026/11/a-150x150.jpg"}
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error { return tx.BindMediaFiles(ctx, tn, 7, files) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error { return tx.BindMediaFiles(ctx, tn, 8, files) }); err == nil {
		t.Fatal("bound claims were bound again")
	}
	var dropped []string
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) (err error) { dropped, err = tx.DropMediaFiles(ctx, tn, 7); return err }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(dropped)
	if !slices.Equal(dropped, []string{"2026/11/a-150x150.jpg", "2026/11/a.jpg"}) {
		t.Fatalf("dropped %v", dropped)
	}
	if n, _, _ := db.ClaimMediaFiles(ctx, tn, 0, cands("a")); n != 3 {
		t.Fatalf("a dropped name was reused before it was forgotten (candidate %d)", n)
	}
	if err := db.ForgetMediaFiles(ctx, tn.ID, dropped); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := db.ClaimMediaFiles(ctx, tn, 0, cands("a")); n != 1 {
		t.Fatalf("a forgotten name is not free (candidate %d)", n)
	}
	if err := db.ReleaseMediaFiles(ctx, tn, files); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := db.ClaimMediaFiles(ctx, tn, 0, cands("a")); n != 1 {
		t.Fatalf("a released name is not free (candidate %d)", n)
	}

	// Expiry: pending claims older than the bound come back (as deleted), live ones never.
	stale, err := db.ExpireMediaFiles(ctx, time.Now().Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) == 0 {
		t.Fatal("no stale claims")
	}
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error { return tx.BindMediaFiles(ctx, tn, 9, files) }); err == nil {
		t.Fatal("an expired claim was bound")
	}
	if none, _ := db.ExpireMediaFiles(ctx, time.Now().Add(-time.Hour), 1000); len(none) != 0 {
		t.Fatalf("recent claims expired: %v", none)
	}
	// Adoption: only names without a claim.
	adopted, err := db.AdoptMediaFiles(ctx, tn.ID, []string{"2026/11/a.jpg", "2026/11/orphan.jpg"})
	if err != nil || !slices.Equal(adopted, []string{"2026/11/orphan.jpg"}) {
		t.Fatalf("adopted %v, %v", adopted, err)
	}
}

// An attachment is public only while its parent is (or it has none); the parent's writes carry
// its attachments along in the same transaction.
func TestAttachmentsFollowTheirParent(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	log, err := db.LogBySlug(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	write := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if _, err := db.WriteTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	draft := &schema.Post{Type: "post", Status: schema.StatusDraft, Title: "Draft", CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: now, ModifiedGMT: now}
	write(func(tx *store.Tx) error { return tx.CreatePost(ctx, tn, draft) })
	media := func(parent schema.PostID) *schema.Post {
		return &schema.Post{Type: schema.TypeAttachment, Status: schema.StatusInherit, Title: "Photo", Slug: "photo", Parent: parent, CommentStatus: "open",
			PingStatus: "closed", Format: "standard", DateGMT: now, ModifiedGMT: now,
			Attachment: &schema.Attachment{MimeType: "image/jpeg", File: "2026/11/photo-9f86d081884c.jpg", Width: 4, Height: 3, FileSize: 10, SHA256: "x"}}
	}
	attached, loose := media(draft.ID), media(0)
	write(func(tx *store.Tx) error {
		if err := tx.CreatePost(ctx, tn, attached); err != nil {
			return err
		}
		return tx.CreatePost(ctx, tn, loose)
	})
	read := func(id schema.PostID) *schema.Post {
		t.Helper()
		p, err := store.TxValue(ctx, db, func(tx *store.Tx) (*schema.Post, error) { return tx.Post(ctx, tn, id) })
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// lastState is the newest change of a record at a visibility: present, deleted, or none.
	lastState := func(id schema.PostID, vis schema.Visibility) string {
		t.Helper()
		state := "none"
		for _, c := range outbox(t, db, log) {
			if c.Kind == schema.KindPost && c.ID == schema.IDString(id) && c.Vis == vis {
				state = map[bool]string{true: "deleted", false: "present"}[c.Deleted]
			}
		}
		return state
	}
	check := func(step string, public bool) {
		t.Helper()
		p := read(attached.ID)
		if p.Public() != public || p.Attachment.ParentHidden == public {
			t.Errorf("%s: attachment public = %v (parent hidden %v), want %v", step, p.Public(), p.Attachment.ParentHidden, public)
		}
		want := map[bool]string{true: "present", false: "deleted"}[public]
		if step == "created" {
			want = "none"
		}
		if got := lastState(attached.ID, schema.Pub); got != want {
			t.Errorf("%s: public change %s, want %s", step, got, want)
		}
	}
	check("created", false)
	if !read(loose.ID).Public() || lastState(loose.ID, schema.Pub) != "present" {
		t.Error("an attachment without a parent is not public")
	}

	update := func(status schema.PostStatus) {
		write(func(tx *store.Tx) error {
			old, err := tx.Post(ctx, tn, draft.ID)
			if err != nil {
				return err
			}
			n := *old
			n.Status = status
			return tx.UpdatePost(ctx, tn, old, &n)
		})
	}
	update(schema.StatusPublish)
	check("published", true)
	update(schema.StatusPrivate)
	check("made private", false)
	update(schema.StatusPublish)
	check("published again", true)
	update(schema.StatusTrash)
	check("trashed", false)

	// Deleting the parent leaves the attachment unattached, hence public (WordPress's
	// wp_delete_post moves attachments up to the deleted post's own parent).
	write(func(tx *store.Tx) error { _, err := tx.DeletePost(ctx, tn, draft.ID); return err })
	p := read(attached.ID)
	if p.Parent != 0 || !p.Public() || lastState(attached.ID, schema.Pub) != "present" {
		t.Errorf("after the parent's deletion: parent %d, public %v", p.Parent, p.Public())
	}

	// A new attachment of a private parent is hidden from the start.
	priv := &schema.Post{Type: "page", Status: schema.StatusPrivate, Title: "Private", CommentStatus: "closed", PingStatus: "closed", Format: "standard", DateGMT: now, ModifiedGMT: now}
	write(func(tx *store.Tx) error { return tx.CreatePost(ctx, tn, priv) })
	hidden := media(priv.ID)
	write(func(tx *store.Tx) error { return tx.CreatePost(ctx, tn, hidden) })
	if read(hidden.ID).Public() || lastState(hidden.ID, schema.Pub) != "none" {
		t.Error("an attachment of a private page is public")
	}
	// Private and trashed attachments are never public, whatever their parent.
	write(func(tx *store.Tx) error {
		old, err := tx.Post(ctx, tn, loose.ID)
		if err != nil {
			return err
		}
		n := *old
		n.Status = schema.StatusPrivate
		return tx.UpdatePost(ctx, tn, old, &n)
	})
	if read(loose.ID).Public() || lastState(loose.ID, schema.Pub) != "deleted" {
		t.Error("a private attachment is public")
	}
}
