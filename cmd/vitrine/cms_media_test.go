package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/edge/outbound"
	"vitrine/origin/media"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// mediaSite is a cmsSite whose origin stores media files in a directory the test reads.
type mediaSite struct {
	*cmsSite
	blobs *blob.FS
}

// testMaxUpload is the media sites' upload bound: small, so that the bound is cheap to test.
const testMaxUpload = 512 << 10

func newMediaSite(t *testing.T, cfg media.Config) *mediaSite {
	s := newSystem(t, systemOptions{})
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Blobs = fs
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = testMaxUpload
	}
	// Uploads by URL fetch through the outbound client; the test's image server is on the
	// loopback, which only an allowlist opens.
	cfg.Client = outbound.New(outbound.Config{Timeout: 5 * time.Second})
	cfg.SideloadAllowlist = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	s.originConfig.Media = cfg
	// The edge reads the files the origin writes, from the same directory.
	c := cmsSiteOn(t, s, edge.Config{Blobs: fs}, schema.RoleAuthor, schema.RoleEditor)
	c.addContributor(t)
	return &mediaSite{cmsSite: c, blobs: fs}
}

// ok checks an answer's status and returns its JSON object.
func (m *mediaSite) ok(t *testing.T, r *response, status int) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r.json(t)
}

// expect checks an answer's status and WordPress error code, failing t (a subtest's).
func expect(t *testing.T, r *response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != "" {
		if got := r.json(t)["code"]; got != code {
			t.Fatalf("code %v, want %s: %s", got, code, r.body)
		}
	}
}

// upload sends a raw upload through the edge as role; route may carry query arguments.
func (m *mediaSite) upload(role schema.Role, route string, body []byte, headers ...string) *response {
	m.t.Helper()
	path, args, _ := strings.Cut(route, "?")
	uri := "/index.php?rest_route=" + path
	if args != "" {
		uri += "&" + args
	}
	if a := m.auth[role]; a != "" {
		headers = append(headers, "Authorization", a)
	}
	return rawCall(m.t, "POST", m.edge, m.host, uri, string(body), headers...)
}

// uploadFile uploads a named file with its declared type.
func (m *mediaSite) uploadFile(role schema.Role, name, ctype string, body []byte, args string) *response {
	m.t.Helper()
	route := "/cms/v2/media"
	if args != "" {
		route += "?" + args
	}
	return m.upload(role, route, body, "Content-Type", ctype, "Content-Disposition", `attachment; filename="`+name+`"`)
}

// attachment reads an attachment from the store.
func (m *mediaSite) attachment(id int64) *schema.Post {
	m.t.Helper()
	p, err := store.TxValue(context.Background(), m.s.db, func(tx *store.Tx) (*schema.Post, error) {
		return tx.Post(context.Background(), m.tn, schema.PostID(id))
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return p
}

// blobNames lists the tenant's media files in the blob store.
func (m *mediaSite) blobNames() []string {
	m.t.Helper()
	var out []string
	prefix := "media/" + m.tn.ID + "/"
	if err := m.blobs.Walk(context.Background(), prefix, func(i blob.Info) error {
		out = append(out, strings.TrimPrefix(i.Name, prefix))
		return nil
	}); err != nil {
		m.t.Fatal(err)
	}
	return out
}

// files lists every file an attachment names.
func mediaFiles(a *schema.Attachment) []string {
	out := []string{a.File}
	if a.Original != nil {
		out = append(out, a.Original.File)
	}
	for _, z := range a.Sizes {
		out = append(out, z.File)
	}
	return out
}

// quadrants is a w×h image with four coloured quadrants (red, green / blue, white).
func quadrants(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{255, 0, 0, 255}
			switch {
			case x >= w/2 && y < h/2:
				c = color.RGBA{0, 255, 0, 255}
			case x < w/2 && y >= h/2:
				c = color.RGBA{0, 0, 255, 255}
			case x >= w/2 && y >= h/2:
				c = color.RGBA{255, 255, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func pngBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, quadrants(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, quadrants(w, h), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartBody builds a form with the file part and fields.
func multipartBody(t testing.TB, filename, ctype string, data []byte, fields map[string]string) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", ctype)
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func TestCMSMedia(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	m := newMediaSite(t, media.Config{})
	admin, editor, author, contributor := schema.RoleAdministrator, schema.RoleEditor, schema.RoleAuthor, schema.RoleContributor
	photo := pngBytes(t, 400, 300)

	var first map[string]any
	t.Run("raw upload", func(t *testing.T) {
		r := m.uploadFile(admin, "Holiday Photo.png", "image/png", photo, "alt_text=A+beach")
		first = m.ok(t, r, 201)
		id := id(first)
		if got := r.header.Get(media.HeaderAttachmentID); got != strconv.FormatInt(id, 10) {
			t.Errorf("X-WP-Upload-Attachment-ID = %q, want %d", got, id)
		}
		if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "rest_route=/cms/v2/media/"+strconv.FormatInt(id, 10)) {
			t.Errorf("Location = %q", loc)
		}
		p := m.attachment(id)
		a := p.Attachment
		if p.Type != schema.TypeAttachment || p.Status != schema.StatusInherit || p.Title != "Holiday Photo" || a.AltText != "A beach" {
			t.Errorf("stored %s %s %q alt %q", p.Type, p.Status, p.Title, a.AltText)
		}
		if a.MimeType != "image/png" || a.Width != 400 || a.Height != 300 || !strings.HasPrefix(a.File, time.Now().UTC().Format("2006/01")+"/Holiday-Photo-") {
			t.Errorf("file facts %+v", a)
		}
		if a.Sizes["thumbnail"].Width != 150 || a.Sizes["thumbnail"].Height != 150 || a.Sizes["medium"].Width != 300 || a.Sizes["medium"].Height != 225 {
			t.Errorf("sizes %+v", a.Sizes)
		}
		have := m.blobNames()
		for _, f := range mediaFiles(a) {
			if !hasString(have, f) {
				t.Errorf("blob %s missing (have %v)", f, have)
			}
		}
		if first["source_url"] != nil && !strings.HasSuffix(first["source_url"].(string), schema.UploadsPath+a.File) {
			t.Errorf("source_url %v, file %s", first["source_url"], a.File)
		}
	})

	t.Run("multipart upload", func(t *testing.T) {
		body, ctype := multipartBody(t, "shot.jpg", "image/jpeg", jpegBytes(t, 200, 100),
			map[string]string{"title": "A shot", "caption": "Seen <b>here</b>", "description": "Long", "alt_text": "alt"})
		r := rawCall(t, "POST", m.edge, m.host, "/index.php?rest_route=/cms/v2/media", string(body), "Content-Type", ctype, "Authorization", m.auth[editor])
		p := m.attachment(id(m.ok(t, r, 201)))
		if p.Title != "A shot" || p.Excerpt != "Seen <b>here</b>" || p.Content != "Long" || p.Attachment.AltText != "alt" || p.Attachment.MimeType != "image/jpeg" {
			t.Errorf("stored %+v %+v", p, p.Attachment)
		}
		if !strings.Contains(p.Attachment.File, "/shot-") || !strings.HasSuffix(p.Attachment.File, ".jpg") {
			t.Errorf("file %s", p.Attachment.File)
		}
	})

	draftID := func() int64 {
		r := m.rest(editor, "POST", "/cms/v2/posts", `{"title":"Draft","status":"draft"}`)
		return id(m.ok(t, r, 201))
	}()

	t.Run("refusals", func(t *testing.T) {
		sum := md5.Sum(photo)
		pe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00PE\x00\x00"), make([]byte, 512)...)
		truncated := photo[:len(photo)/3]
		r := m.uploadFile(admin, "up.png", "image/png", photo, "")
		upID := id(m.ok(t, r, 201))
		for _, tc := range []struct {
			name    string
			role    schema.Role
			route   string
			body    []byte
			headers []string
			status  int
			code    string
		}{
			{"anonymous", "", "/cms/v2/media", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 401, "rest_cannot_create"},
			{"contributor", contributor, "/cms/v2/media", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 403, "rest_cannot_create"},
			{"no data", admin, "/cms/v2/media", nil, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 400, "rest_upload_no_data"},
			{"no content type", admin, "/cms/v2/media", photo, []string{"Content-Disposition", "attachment; filename=a.png"}, 400, "rest_upload_no_content_type"},
			{"no disposition", admin, "/cms/v2/media", photo, []string{"Content-Type", "image/png"}, 400, "rest_upload_no_content_disposition"},
			{"bad disposition", admin, "/cms/v2/media", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment"}, 400, "rest_upload_invalid_disposition"},
			{"hash mismatch", admin, "/cms/v2/media", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png", "Content-MD5", strings.Repeat("0", 32)}, 412, "rest_upload_hash_mismatch"},
			{"too big", admin, "/cms/v2/media", make([]byte, testMaxUpload+1), []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 400, "rest_upload_file_too_big"},
			{"executable named jpg", admin, "/cms/v2/media", pe, []string{"Content-Type", "image/jpeg", "Content-Disposition", "attachment; filename=cat.jpg"}, 400, "rest_upload_sideload_error"},
			{"html named png", admin, "/cms/v2/media", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=x.png"}, 400, "rest_upload_sideload_error"},
			{"truncated png", admin, "/cms/v2/media", truncated, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=t.png"}, 400, "rest_upload_sideload_error"},
			{"parent not editable", author, "/cms/v2/media?post=" + strconv.FormatInt(draftID, 10), photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 403, "rest_cannot_edit"},
			{"parent missing", admin, "/cms/v2/media?post=999999", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 403, "rest_cannot_edit"},
			{"parent is an attachment", admin, "/cms/v2/media?post=" + strconv.FormatInt(upID, 10), photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 400, "rest_invalid_param"},
			{"bad generate_sub_sizes", admin, "/cms/v2/media?generate_sub_sizes=maybe", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 400, "rest_invalid_param"},
			{"existing id", admin, "/cms/v2/media?id=5", photo, []string{"Content-Type", "image/png", "Content-Disposition", "attachment; filename=a.png"}, 400, "rest_post_exists"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.name == "no content type" { // to the origin: an edge gives an untyped body a type
					uri := "/index.php?rest_route=" + tc.route
					r := rawCall(t, "POST", m.s.originAddr, m.host, uri, string(tc.body), append(tc.headers, "Authorization", m.auth[tc.role])...)
					expect(t, r, tc.status, tc.code)
					return
				}
				expect(t, m.upload(tc.role, tc.route, tc.body, tc.headers...), tc.status, tc.code)
			})
		}
		// The right Content-MD5 (hex, as WordPress expects) is accepted.
		r = m.upload(admin, "/cms/v2/media", photo, "Content-Type", "image/png", "Content-Disposition", "attachment; filename*=UTF-8''caf%C3%A9.png",
			"Content-MD5", hex.EncodeToString(sum[:]))
		p := m.attachment(id(m.ok(t, r, 201)))
		if p.Title != "café" || !strings.Contains(p.Attachment.File, "/cafe-") {
			t.Errorf("filename* upload: title %q, file %s", p.Title, p.Attachment.File)
		}
	})

	t.Run("upload by url", func(t *testing.T) {
		img := jpegBytes(t, 320, 240)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/pics/sunset.jpg":
				w.Header().Set("Content-Type", "image/jpeg")
				w.Write(img)
			case "/moved.jpg":
				http.Redirect(w, r, "/pics/sunset.jpg", http.StatusFound)
			case "/away.jpg":
				http.Redirect(w, r, "http://10.0.0.1/x.jpg", http.StatusFound)
			case "/page.jpg":
				w.Write([]byte("<!DOCTYPE html><html><body>not an image</body></html>"))
			case "/huge.jpg":
				w.Write(make([]byte, testMaxUpload+10))
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		r := m.rest(admin, "POST", "/cms/v2/media", fmt.Sprintf(`{"url":%q,"title":{"raw":"Sunset"}}`, srv.URL+"/pics/sunset.jpg"))
		p := m.attachment(id(m.ok(t, r, 201)))
		if p.Title != "Sunset" || p.Attachment.MimeType != "image/jpeg" || !strings.Contains(p.Attachment.File, "/sunset-") || p.Attachment.Width != 320 {
			t.Errorf("sideloaded %q %+v", p.Title, p.Attachment)
		}
		r = m.rest(admin, "POST", "/cms/v2/media?url="+srv.URL+"/moved.jpg", "")
		if p := m.attachment(id(m.ok(t, r, 201))); p.Title != "moved" {
			t.Errorf("redirected sideload titled %q", p.Title)
		}
		for _, tc := range []struct {
			url, code string
		}{
			{"ftp://example.com/a.jpg", "rest_invalid_url"},
			{srv.URL + "/", "rest_invalid_url"},
			{srv.URL + "/script.php", "rest_invalid_url"},
			{"http://10.0.0.1/a.jpg", "rest_invalid_url"},
			{srv.URL + "/away.jpg", "rest_invalid_url"},
			{srv.URL + "/missing.jpg", "rest_invalid_url"},
			{srv.URL + "/page.jpg", "rest_upload_sideload_error"},
			{srv.URL + "/huge.jpg", "rest_upload_file_too_big"},
		} {
			expect(t, m.rest(admin, "POST", "/cms/v2/media", fmt.Sprintf(`{"url":%q}`, tc.url)), 400, tc.code)
		}
		expect(t, m.rest(contributor, "POST", "/cms/v2/media", fmt.Sprintf(`{"url":%q}`, srv.URL+"/pics/sunset.jpg")), 403, "rest_cannot_create")
	})

	t.Run("failed transaction leaves no blob", func(t *testing.T) {
		before := len(m.blobNames())
		r := m.uploadFile(admin, "orphan.png", "image/png", pngBytes(t, 180, 170), "author=999999")
		expect(t, r, 400, "rest_invalid_author")
		if after := m.blobNames(); len(after) != before {
			t.Errorf("blobs %d before, %d after a failed upload: %v", before, len(after), after)
		}
		for _, f := range m.blobNames() {
			if strings.Contains(f, "orphan") {
				t.Errorf("blob of the failed upload left: %s", f)
			}
		}
	})

	t.Run("concurrent uploads of one file", func(t *testing.T) {
		same := pngBytes(t, 160, 160)
		const n = 4
		ids := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := m.uploadFile(admin, "same.png", "image/png", same, "")
				if r.status != 201 {
					t.Errorf("upload %d: %d %s", i, r.status, r.body)
					return
				}
				ids[i] = id(r.json(t))
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		have := m.blobNames()
		for _, i := range ids {
			if i == 0 {
				continue
			}
			a := m.attachment(i).Attachment
			if seen[a.File] {
				t.Errorf("two attachments share %s", a.File)
			}
			seen[a.File] = true
			for _, f := range mediaFiles(a) {
				if !hasString(have, f) {
					t.Errorf("blob %s of attachment %d missing", f, i)
				}
			}
		}
	})

	t.Run("update", func(t *testing.T) {
		mid := id(first)
		r := m.rest(admin, "POST", "/cms/v2/media/"+strconv.FormatInt(mid, 10), `{"title":"Renamed","alt_text":"New <i>alt</i>","caption":{"raw":"Cap"},"status":"publish"}`)
		expect(t, r, 200, "")
		p := m.attachment(mid)
		if p.Title != "Renamed" || p.Attachment.AltText != "New alt" || p.Excerpt != "Cap" || p.Status != schema.StatusInherit {
			t.Errorf("updated %q %q %q %s", p.Title, p.Attachment.AltText, p.Excerpt, p.Status)
		}
		expect(t, m.rest(contributor, "PATCH", "/cms/v2/media/"+strconv.FormatInt(mid, 10), `{"title":"x"}`), 403, "rest_cannot_edit")
		expect(t, m.rest("", "PATCH", "/cms/v2/media/"+strconv.FormatInt(mid, 10), `{"title":"x"}`), 401, "rest_cannot_edit")
		expect(t, m.rest(admin, "PATCH", "/cms/v2/media/999999", `{"title":"x"}`), 404, "rest_post_invalid_id")
		expect(t, m.rest(admin, "PATCH", "/cms/v2/media/"+strconv.FormatInt(draftID, 10), `{"title":"x"}`), 404, "rest_post_invalid_id")
		expect(t, m.rest(admin, "PATCH", "/cms/v2/media/"+strconv.FormatInt(mid, 10), `{"status":"bogus"}`), 400, "rest_invalid_param")
		expect(t, m.rest(admin, "PATCH", "/cms/v2/media/"+strconv.FormatInt(mid, 10), `{"post":`+strconv.FormatInt(mid, 10)+`}`), 400, "rest_invalid_param")
	})

	t.Run("edit", func(t *testing.T) {
		src := m.attachment(id(first))
		url := "http://" + m.host + schema.UploadsPath + src.Attachment.File
		body := fmt.Sprintf(`{"src":%q,"modifiers":[{"type":"flip","args":{"flip":{"horizontal":true,"vertical":false}}},{"type":"rotate","args":{"angle":90}},{"type":"crop","args":{"left":0,"top":0,"width":50,"height":50}}]}`, url)
		route := "/cms/v2/media/" + strconv.FormatInt(int64(src.ID), 10) + "/edit"
		r := m.rest(admin, "POST", route, body)
		e := m.attachment(id(m.ok(t, r, 201)))
		a := e.Attachment
		if e.ID == src.ID || a.Width != 150 || a.Height != 200 || !strings.Contains(a.File, "-edited-") {
			t.Errorf("edited: id %d, %dx%d, %s", e.ID, a.Width, a.Height, a.File)
		}
		if a.ParentImage == nil || a.ParentImage.AttachmentID != src.ID || a.ParentImage.File != src.Attachment.File {
			t.Errorf("parent_image %+v", a.ParentImage)
		}
		if e.Title != src.Title || a.AltText != src.Attachment.AltText {
			t.Errorf("texts not copied: %q %q", e.Title, a.AltText)
		}
		if m.attachment(int64(src.ID)).Attachment.File != src.Attachment.File {
			t.Error("the source changed")
		}
		// The edited pixels: flipped, the quadrants are green, red / white, blue; turned a
		// quarter clockwise, the top-left one is the white one, which the crop keeps.
		obj, err := m.blobs.Open(context.Background(), schema.MediaBlobName(m.tn.ID, a.File), 0)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(obj)
		obj.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r, g, b, _ := img.At(75, 100).RGBA(); r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
			t.Errorf("edited centre pixel = %d,%d,%d, want white", r>>8, g>>8, b>>8)
		}
		expect(t, m.rest(admin, "POST", route, `{"src":"http://elsewhere.example/x.png","rotation":90}`), 404, "rest_unknown_attachment")
		expect(t, m.rest(admin, "POST", route, fmt.Sprintf(`{"src":%q}`, url)), 400, "rest_image_not_edited")
		expect(t, m.rest(admin, "POST", route, `{"rotation":90}`), 400, "rest_missing_callback_param")
		expect(t, m.rest(admin, "POST", route, fmt.Sprintf(`{"src":%q,"modifiers":[]}`, url)), 400, "rest_invalid_param")
		expect(t, m.rest(admin, "POST", route, fmt.Sprintf(`{"src":%q,"modifiers":[{"type":"crop","args":{"left":0}}]}`, url)), 400, "rest_invalid_param")
		expect(t, m.rest(contributor, "POST", route, fmt.Sprintf(`{"src":%q,"rotation":90}`, url)), 403, "rest_cannot_edit_image")
		expect(t, m.rest("", "POST", route, fmt.Sprintf(`{"src":%q,"rotation":90}`, url)), 401, "rest_cannot_edit_image")
		// Legacy arguments: rotate 180 of the whole image.
		r = m.rest(admin, "POST", route, fmt.Sprintf(`{"src":%q,"rotation":180,"title":"Turned"}`, url))
		if e := m.attachment(id(m.ok(t, r, 201))); e.Title != "Turned" || e.Attachment.Width != 400 {
			t.Errorf("legacy edit: %q %d", e.Title, e.Attachment.Width)
		}
		// A file that is not an image cannot be edited.
		r = m.uploadFile(admin, "notes.txt", "text/plain", []byte("plain notes\n"), "")
		txt := m.attachment(id(m.ok(t, r, 201)))
		expect(t, m.rest(admin, "POST", "/cms/v2/media/"+strconv.FormatInt(int64(txt.ID), 10)+"/edit",
			fmt.Sprintf(`{"src":%q,"rotation":90}`, "http://"+m.host+schema.UploadsPath+txt.Attachment.File)), 400, "rest_cannot_edit_file_type")
	})

	t.Run("post-process", func(t *testing.T) {
		r := m.uploadFile(admin, "later.png", "image/png", photo, "generate_sub_sizes=false")
		p := m.attachment(id(m.ok(t, r, 201)))
		if len(p.Attachment.Sizes) != 0 || len(p.Attachment.MissingSizes()) == 0 {
			t.Fatalf("sizes made without generate_sub_sizes: %v", p.Attachment.Sizes)
		}
		route := "/cms/v2/media/" + strconv.FormatInt(int64(p.ID), 10) + "/post-process"
		expect(t, m.rest(admin, "POST", route, `{}`), 400, "rest_missing_callback_param")
		expect(t, m.rest(admin, "POST", route, `{"action":"nope"}`), 400, "rest_invalid_param")
		expect(t, m.rest(contributor, "POST", route, `{"action":"create-image-subsizes"}`), 403, "rest_cannot_edit")
		expect(t, m.rest(admin, "POST", route, `{"action":"create-image-subsizes"}`), 200, "")
		a := m.attachment(int64(p.ID)).Attachment
		if len(a.MissingSizes()) != 0 || a.Sizes["thumbnail"].File == "" {
			t.Errorf("after post-process: sizes %v, missing %v", a.Sizes, a.MissingSizes())
		}
		have := m.blobNames()
		for _, f := range mediaFiles(a) {
			if !hasString(have, f) {
				t.Errorf("blob %s missing", f)
			}
		}
		// Again: nothing to do.
		expect(t, m.rest(admin, "POST", route, `{"action":"create-image-subsizes"}`), 200, "")
	})

	t.Run("visibility follows the parent", func(t *testing.T) {
		r := m.uploadFile(editor, "draft.png", "image/png", pngBytes(t, 120, 90), "post="+strconv.FormatInt(draftID, 10))
		p := m.attachment(id(m.ok(t, r, 201)))
		route := "/cms/v2/media/" + strconv.FormatInt(int64(p.ID), 10)
		atEdge := func() int { return m.rest("", "GET", route, "").status } // anonymous, answered by the edge
		if p.Public() || p.Parent != schema.PostID(draftID) || atEdge() == 200 {
			t.Fatalf("an attachment of a draft is public (parent %d)", p.Parent)
		}
		// The edge that forwarded a write holds its answer until it has applied it.
		expect(t, m.rest(editor, "POST", "/cms/v2/posts/"+strconv.FormatInt(draftID, 10), `{"status":"publish"}`), 200, "")
		if !m.attachment(int64(p.ID)).Public() || atEdge() != 200 {
			t.Error("publishing the parent did not publish its attachment")
		}
		expect(t, m.rest(editor, "POST", "/cms/v2/posts/"+strconv.FormatInt(draftID, 10), `{"status":"draft"}`), 200, "")
		if m.attachment(int64(p.ID)).Public() || atEdge() == 200 {
			t.Error("unpublishing the parent left its attachment public")
		}
		// A private attachment is never public, whatever its parent.
		expect(t, m.rest(editor, "POST", "/cms/v2/posts/"+strconv.FormatInt(draftID, 10), `{"status":"publish"}`), 200, "")
		expect(t, m.rest(editor, "POST", route, `{"status":"private"}`), 200, "")
		if m.attachment(int64(p.ID)).Public() || atEdge() == 200 {
			t.Error("a private attachment is public")
		}
	})

	t.Run("delete", func(t *testing.T) {
		r := m.uploadFile(author, "gone.png", "image/png", photo, "")
		p := m.attachment(id(m.ok(t, r, 201)))
		route := "/cms/v2/media/" + strconv.FormatInt(int64(p.ID), 10)
		expect(t, m.rest(admin, "DELETE", route, ""), 501, "rest_trash_not_supported")
		expect(t, m.rest(contributor, "DELETE", route+"?force=true", ""), 403, "rest_cannot_delete")
		r = m.rest(admin, "DELETE", route+"?force=true", "")
		expect(t, r, 200, "")
		if got := r.json(t); got["deleted"] != true || got["previous"] == nil {
			t.Errorf("delete answer %s", r.body)
		}
		have := m.blobNames()
		for _, f := range mediaFiles(p.Attachment) {
			if hasString(have, f) {
				t.Errorf("blob %s left after the deletion", f)
			}
		}
		expect(t, m.rest(admin, "DELETE", route+"?force=true", ""), 404, "rest_post_invalid_id")
		// The name is free again: the same file under the same name gets the same file name.
		r = m.uploadFile(author, "gone.png", "image/png", photo, "")
		if again := m.attachment(id(m.ok(t, r, 201))); again.Attachment.File != p.Attachment.File {
			t.Errorf("re-upload named %s, want %s", again.Attachment.File, p.Attachment.File)
		}
	})
}

// An upload whose sub-sizes cannot all be made in time is kept with the sizes made and answered
// 500 rest_upload_unknown_error with X-WP-Upload-Attachment-ID; post-process finishes it.
func TestCMSMediaResume(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	m := newMediaSite(t, media.Config{SizeTimeout: time.Nanosecond})
	admin := schema.RoleAdministrator
	r := m.uploadFile(admin, "slow.png", "image/png", pngBytes(t, 400, 300), "")
	expect(t, r, 500, "rest_upload_unknown_error")
	idStr := r.header.Get(media.HeaderAttachmentID)
	mid, err := strconv.ParseInt(idStr, 10, 64)
	if err != nil {
		t.Fatalf("X-WP-Upload-Attachment-ID = %q", idStr)
	}
	a := m.attachment(mid).Attachment
	if len(a.MissingSizes()) == 0 {
		t.Fatalf("no size missing: %v", a.Sizes)
	}
	r = m.rest(admin, "POST", "/cms/v2/media/"+idStr+"/post-process", `{"action":"create-image-subsizes"}`)
	expect(t, r, 200, "")
	if a := m.attachment(mid).Attachment; len(a.MissingSizes()) != 0 {
		t.Errorf("missing after post-process: %v", a.MissingSizes())
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
