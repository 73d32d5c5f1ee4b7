package replica_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// attachment is an image attachment with a thumbnail, or a file of another type.
func attachment(id, parent int64, mime, stem string) *schema.Post {
	p := &schema.Post{ID: schema.PostID(id), Type: schema.TypeAttachment, Slug: stem, Status: schema.StatusInherit,
		Title: stem, Author: 1, CommentStatus: "open", PingStatus: "closed", Format: "standard", Parent: schema.PostID(parent),
		DateGMT: t0.Add(time.Duration(id) * time.Minute), ModifiedGMT: t0.Add(time.Duration(id) * time.Minute)}
	ext := map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "application/pdf": ".pdf", "video/mp4": ".mp4"}[mime]
	a := &schema.Attachment{MimeType: mime, File: "2026/11/" + stem + "-0123456789ab" + ext, FileSize: 1000 + id,
		SHA256: strings.Repeat("a", 64)}
	if strings.HasPrefix(mime, "image/") {
		a.Width, a.Height = 640, 480
		a.Sizes = map[string]schema.AttachmentSize{"thumbnail": {File: "2026/11/" + stem + "-0123456789ab-150x150" + ext,
			Width: 150, Height: 150, MimeType: mime, FileSize: 100 + id, SHA256: strings.Repeat("b", 64)}}
	}
	p.Attachment = a
	p.Normalize()
	return p
}

// putAttachment writes an attachment over old at the visibilities the origin gives it (public
// only while it and its parent are).
func (tx *txn) putAttachment(old, p *schema.Post, oldVis, newVis []schema.Visibility) {
	id := old
	if p != nil {
		id = p
	}
	tx.write(schema.KindPost, schema.IDString(id.ID), oldVis, newVis,
		func(v int64) {
			if p != nil {
				p.Version = v
			}
		}, func(schema.Visibility) any { return p })
}

func TestMediaFileIndex(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e") // post 30 published, 31 a draft
	w := s.log("shop")
	tenantID := tn.Info().ID
	apply := func(write func(tx *txn)) {
		t.Helper()
		tx := w.begin()
		write(tx)
		feed(s.r, tx.commit())
		s.r.Checkpoint()
		if tn.Version() != w.version {
			t.Fatalf("batch not applied: at %d, want %d", tn.Version(), w.version)
		}
	}
	free := attachment(50, 0, "image/jpeg", "lake")
	onPost := attachment(51, 30, "image/png", "cup")
	onDraft := attachment(52, 31, "image/jpeg", "secret")
	private := attachment(53, 0, "application/pdf", "memo")
	private.Status = schema.StatusPrivate
	apply(func(tx *txn) {
		tx.putAttachment(nil, free, nil, pubOnly)
		tx.putAttachment(nil, onPost, nil, pubOnly)
		tx.putAttachment(nil, onDraft, nil, privOnly)
		tx.putAttachment(nil, private, nil, privOnly)
	})
	type look struct {
		path string
		want *schema.MediaFile
	}
	check := func(step string, sn *replica.Snapshot, looks []look) {
		t.Helper()
		for _, l := range looks {
			got, ok := sn.MediaFile(tenantID, l.path)
			if l.want == nil {
				if ok {
					t.Errorf("%s: %s found (%+v), want nothing", step, l.path, got)
				}
				continue
			}
			if !ok || got != *l.want {
				t.Errorf("%s: %s = %+v, %v; want %+v", step, l.path, got, ok, *l.want)
			}
		}
	}
	file := func(p *schema.Post, size string) *schema.MediaFile {
		a := p.Attachment
		f := &schema.MediaFile{BlobName: "media/" + tenantID + "/" + a.File, ContentType: a.MimeType, Size: a.FileSize, SHA256: a.SHA256, Modified: p.DateGMT}
		if size != "" {
			sz := a.Sizes[size]
			f.BlobName, f.ContentType, f.Size, f.SHA256 = "media/"+tenantID+"/"+sz.File, sz.MimeType, sz.FileSize, sz.SHA256
		}
		return f
	}
	lakeThumb := free.Attachment.Sizes["thumbnail"].File
	check("published", tn.Snapshot(), []look{
		{free.Attachment.File, file(free, "")},
		{lakeThumb, file(free, "thumbnail")},
		{onPost.Attachment.File, file(onPost, "")},
		{onDraft.Attachment.File, nil}, // its parent is a draft: never public
		{private.Attachment.File, nil},
		{"2026/11/lake-0123456789ab-300x225.jpg", nil},
		{"", nil},
		{"../2026/11/lake-0123456789ab.jpg", nil},
	})
	if n := tn.Snapshot().MediaFileCount(); n != 4 {
		t.Errorf("%d files indexed, want 4 (two images with a thumbnail each)", n)
	}
	if got, ok := tn.MediaFile(free.Attachment.File); !ok || got != *file(free, "") {
		t.Errorf("Tenant.MediaFile = %+v, %v", got, ok)
	}

	// An update: post-processing adds a size, an edit of the alt text changes nothing served.
	before := tn.Snapshot()
	free2 := attachment(50, 0, "image/jpeg", "lake")
	free2.Attachment.AltText = "A lake"
	free2.Attachment.Sizes["medium"] = schema.AttachmentSize{File: "2026/11/lake-0123456789ab-300x225.jpg", Width: 300, Height: 225,
		MimeType: "image/jpeg", FileSize: 321, SHA256: strings.Repeat("c", 64)}
	apply(func(tx *txn) { tx.putAttachment(free, free2, pubOnly, pubOnly) })
	check("updated", tn.Snapshot(), []look{{"2026/11/lake-0123456789ab-300x225.jpg", file(free2, "medium")}, {lakeThumb, file(free2, "thumbnail")}})
	// Readers of the earlier snapshot keep their view: it never changes under them.
	check("earlier snapshot", before, []look{{"2026/11/lake-0123456789ab-300x225.jpg", nil}, {lakeThumb, file(free, "thumbnail")}})

	// A tombstone (deleted, or made private) takes every file of the attachment out.
	apply(func(tx *txn) { tx.putAttachment(free2, nil, pubOnly, nil) })
	check("deleted", tn.Snapshot(), []look{{free.Attachment.File, nil}, {lakeThumb, nil}, {"2026/11/lake-0123456789ab-300x225.jpg", nil}})

	// The parent is unpublished: the origin tombstones the attachment's public state in the
	// same transaction; its files are gone.
	hello := post(30, "hello", "Hello", schema.StatusPublish, t0)
	draft := post(30, "hello", "Hello", schema.StatusDraft, t0)
	apply(func(tx *txn) {
		tx.putPost(hello, draft)
		tx.putAttachment(onPost, onPost, pubOnly, privOnly)
	})
	check("parent unpublished", tn.Snapshot(), []look{{onPost.Attachment.File, nil}, {onPost.Attachment.Sizes["thumbnail"].File, nil}})
	// Republished with its attachment: the files are back.
	hello = post(30, "hello", "Hello", schema.StatusPublish, t0)
	apply(func(tx *txn) {
		tx.putPost(draft, hello)
		tx.putAttachment(onPost, onPost, privOnly, pubOnly)
	})
	check("parent republished", tn.Snapshot(), []look{{onPost.Attachment.File, file(onPost, "")}})
	// Even a public attachment whose parent lost its public state in a batch that did not
	// touch the attachment is not served: the lookup checks the parent in the same snapshot.
	draft = post(30, "hello", "Hello", schema.StatusDraft, t0)
	apply(func(tx *txn) { tx.putPost(hello, draft) })
	check("parent unpublished alone", tn.Snapshot(), []look{{onPost.Attachment.File, nil}})
}

// A file name taken over by another attachment stays indexed when the first one goes.
func TestMediaFileIndexSharedName(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	a, b := attachment(60, 0, "application/pdf", "doc"), attachment(61, 0, "application/pdf", "doc")
	tx := w.begin()
	tx.putAttachment(nil, a, nil, pubOnly)
	tx.putAttachment(nil, b, nil, pubOnly)
	feed(s.r, tx.commit())
	tx = w.begin()
	tx.putAttachment(a, nil, pubOnly, nil)
	feed(s.r, tx.commit())
	s.r.Checkpoint()
	if got, ok := tn.Snapshot().MediaFile("t", a.Attachment.File); !ok || got.Size != b.Attachment.FileSize {
		t.Errorf("MediaFile = %+v, %v; want the file of attachment 61", got, ok)
	}
}

func TestMediaQueries(t *testing.T) {
	s := newSite(t, replica.Config{})
	tn := s.bootstrap("e")
	w := s.log("shop")
	tx := w.begin()
	for _, p := range []*schema.Post{
		attachment(70, 0, "image/jpeg", "harbour"), attachment(71, 30, "image/png", "boat"),
		attachment(72, 30, "application/pdf", "timetable"), attachment(73, 0, "video/mp4", "waves"),
	} {
		tx.putAttachment(nil, p, nil, pubOnly)
	}
	feed(s.r, tx.commit())
	s.r.Checkpoint()
	sn := tn.Snapshot()
	inherit := []schema.PostStatus{schema.StatusInherit}
	cases := []struct {
		name string
		q    replica.PostQuery
		want []schema.PostID
	}{
		{"all, newest first", replica.PostQuery{}, []schema.PostID{73, 72, 71, 70}},
		{"media_type image", replica.PostQuery{MediaTypes: []string{"image"}}, []schema.PostID{71, 70}},
		{"media_type video and application", replica.PostQuery{MediaTypes: []string{"video", "application"}}, []schema.PostID{73, 72}},
		{"mime_type", replica.PostQuery{MimeTypes: []string{"image/png"}}, []schema.PostID{71}},
		{"media_type or mime_type", replica.PostQuery{MediaTypes: []string{"video"}, MimeTypes: []string{"image/jpeg"}}, []schema.PostID{73, 70}},
		{"media_type audio", replica.PostQuery{MediaTypes: []string{"audio"}}, nil},
		{"parent", replica.PostQuery{Parents: []schema.PostID{30}}, []schema.PostID{72, 71}},
		{"unattached", replica.PostQuery{Parents: []schema.PostID{0}}, []schema.PostID{73, 70}},
		{"parent_exclude", replica.PostQuery{ParentsExclude: []schema.PostID{30}}, []schema.PostID{73, 70}},
		{"search by file name", replica.PostQuery{Search: "0123456789AB.mp4"}, []schema.PostID{73}},
		{"search by title", replica.PostQuery{Search: "boat"}, []schema.PostID{71}},
		{"title order", replica.PostQuery{OrderBy: "title", Asc: true}, []schema.PostID{71, 70, 72, 73}},
	}
	for _, tc := range cases {
		tc.q.Type, tc.q.Statuses, tc.q.Limit = schema.TypeAttachment, inherit, 10
		got, total := sn.Posts(tc.q)
		if !slices.Equal(postIDs(got), tc.want) || total != len(tc.want) {
			t.Errorf("%s: %v (total %d), want %v", tc.name, postIDs(got), total, tc.want)
		}
	}
	// Posts never match a media filter, and attachments never list as posts.
	if got, _ := sn.Posts(replica.PostQuery{Limit: 10, MediaTypes: []string{"image"}}); len(got) != 0 {
		t.Errorf("posts matched a media filter: %v", postIDs(got))
	}
	if got, _ := sn.Posts(replica.PostQuery{Limit: 10, Statuses: inherit}); len(got) != 0 {
		t.Errorf("attachments listed as posts: %v", postIDs(got))
	}
}

// FuzzMediaFile: the file index answers any request path without panicking, and only the
// exact paths of public files.
func FuzzMediaFile(f *testing.F) {
	s := newSite(f, replica.Config{})
	tn := s.bootstrap("e")
	a := attachment(80, 0, "image/jpeg", "pier")
	tx := s.log("shop").begin()
	tx.putAttachment(nil, a, nil, pubOnly)
	feed(s.r, tx.commit())
	s.r.Checkpoint()
	files := map[string]bool{a.Attachment.File: true, a.Attachment.Sizes["thumbnail"].File: true}
	for _, seed := range []string{a.Attachment.File, "", "/", "../../etc/passwd", "2026/11/pier-0123456789ab.jpg\x00", "2026//11/pier-0123456789ab.jpg",
		"2026/11/PIER-0123456789AB.JPG", "2026/11/pier-0123456789ab-150x150.jpg", strings.Repeat("a/", 500)} {
		f.Add(seed)
	}
	sn := tn.Snapshot()
	f.Fuzz(func(t *testing.T, path string) {
		got, ok := sn.MediaFile("t", path)
		if ok != files[path] || ok && got.BlobName != "media/t/"+path {
			t.Fatalf("MediaFile(%q) = %+v, %v", path, got, ok)
		}
	})
}
