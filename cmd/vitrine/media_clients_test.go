package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/jpeg"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/blob"
	"vitrine/sync/relay"
)

// TestMediaClientsAndEmbeds runs what issue 16 promises editors and front ends, with real clients:
//
//   - the npm wpapi client uploads a JPEG (.media().file(…)) through an edge and sets it as a
//     new post's featured media; @wordpress/api-fetch reads the post back with
//     _embed=wp:featuredmedia (testdata/e2e/media-clients.mjs);
//   - the uploaded file and every sub-size are fetched from two edges: byte-identical, and each
//     decodes to the dimensions its record states (WordPress's sizes of a 1600×1200 original);
//   - headless Chromium opens a page of another origin embedding the post as a WordPress site
//     does (the edge's oEmbed html: a sandboxed iframe of the post's embed page) next to the
//     featured image, both served by an edge (testdata/e2e/embed-page.mjs).
//
// The edges and the origin share one blob.FS directory, as processes of one machine do.
func TestMediaClientsAndEmbeds(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, chromium := e2eTools(t, "playwright-core", true)
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", "wpapi")); err != nil {
		t.Fatal("testdata/e2e/node_modules/wpapi is missing: make test installs it")
	}
	files, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newSystem(t, systemOptions{})
	s.originConfig.Media.Blobs = files
	s.startRelay(relay.Config{})
	s.startOrigin()
	e1 := s.startEdge(edge.Config{Blobs: files})
	e2 := s.startEdge(edge.Config{Blobs: files})
	_, port, _ := net.SplitHostPort(e1.addr)
	base := "http://localhost:" + port
	pw := s.localhostSite(t, "harbour", "Harbour Journal", base)
	ctx := context.Background()

	// A 1600×1200 photograph-like JPEG: gradients, so that a resize that went wrong shows.
	img := image.NewRGBA(image.Rect(0, 0, 1600, 1200))
	for y := range 1200 {
		for x := range 1600 {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / 1600), uint8(y * 255 / 1200), uint8((x + y) % 256), 255})
		}
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	imagePath := filepath.Join(t.TempDir(), "harbour.jpg")
	if err := os.WriteFile(imagePath, jb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, "--dns-result-order=ipv4first", filepath.Join(e2e, "media-clients.mjs"))
	cmd.Env = append(os.Environ(), "SITE_URL="+base+"/", "CMS_USER=editor", "CMS_PASSWORD="+pw, "IMAGE="+imagePath)
	cmd.Dir = e2e
	out, err := cmd.Output()
	type size struct {
		URL           string
		Width, Height int
		Mime          string
	}
	var got struct {
		MediaID, PostID, FeaturedMedia, EmbeddedID int
		MediaTitle, EmbeddedAlt, SourceURL         string
		Sizes                                      map[string]size
		Error, ErrorBody                           string
	}
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); jerr != nil || err != nil || got.Error != "" {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("clients: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	t.Logf("clients: media %d %q, post %d, %d sizes", got.MediaID, got.MediaTitle, got.PostID, len(got.Sizes))
	if got.MediaID == 0 || got.FeaturedMedia != got.MediaID || got.EmbeddedID != got.MediaID || got.EmbeddedAlt != "The harbour at dusk" {
		t.Fatalf("the post read back with _embed: %+v", got)
	}
	if got.MediaTitle != "harbour at dusk" {
		t.Errorf("title %q: WordPress titles an upload with its file name, without the extension", got.MediaTitle)
	}
	// WordPress's sub-sizes of a 1600×1200 original, never upscaled (no 2048x2048), and "full".
	want := map[string][2]int{"thumbnail": {150, 150}, "medium": {300, 225}, "medium_large": {768, 576},
		"large": {1024, 768}, "1536x1536": {1536, 1152}, "full": {1600, 1200}}
	if len(got.Sizes) != len(want) {
		t.Errorf("sizes %v, want %v", got.Sizes, want)
	}
	for name, wh := range want {
		sz, ok := got.Sizes[name]
		if !ok || sz.Width != wh[0] || sz.Height != wh[1] || sz.Mime != "image/jpeg" {
			t.Errorf("size %s: %+v, want %v image/jpeg", name, sz, wh)
			continue
		}
		// The same bytes from both edges, decoding to the stated dimensions.
		path := strings.TrimPrefix(sz.URL, base)
		a := call(t, "GET", e1.addr, "localhost", path, "")
		b := call(t, "GET", e2.addr, "localhost", path, "")
		if a.status != 200 || b.status != 200 || !bytes.Equal(a.body, b.body) {
			t.Errorf("%s from two edges: %d and %d, %d and %d bytes, identical %v", path, a.status, b.status, len(a.body), len(b.body), bytes.Equal(a.body, b.body))
			continue
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(a.body))
		if err != nil || format != "jpeg" || cfg.Width != wh[0] || cfg.Height != wh[1] {
			t.Errorf("%s decodes to %s %dx%d (%v), want jpeg %v", path, format, cfg.Width, cfg.Height, err, wh)
		}
		if cc := a.header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || a.header.Get("ETag") == "" {
			t.Errorf("%s: Cache-Control %q, ETag %q", path, cc, a.header.Get("ETag"))
		}
	}

	// The embedding page, on another origin: the oEmbed html of the post, and its featured image.
	permalink := base + "/?p=" + fmt.Sprint(got.PostID)
	r := call(t, "GET", e1.addr, "localhost", "/index.php?rest_route=/oembed/1.0/embed&url="+url.QueryEscape(permalink), "")
	var oeFields struct {
		HTML         string `json:"html"`
		ThumbnailURL string `json:"thumbnail_url"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &oeFields) != nil || !strings.Contains(oeFields.HTML, "wp-embedded-content") {
		t.Fatalf("oEmbed: %d %s", r.status, r.body)
	}
	if !strings.HasPrefix(oeFields.ThumbnailURL, base+schema.UploadsPath) {
		t.Errorf("oEmbed thumbnail_url %q: want the featured image at an edge", oeFields.ThumbnailURL)
	}
	pageTmpl := template.Must(template.New("page").Parse(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>A site embedding a post</title></head>
<body><h1>Elsewhere on the web</h1><img id="featured" src="{{.Image}}" alt="" width="300"><div id="embed">{{.Embed}}</div></body></html>`))
	var page bytes.Buffer
	if err := pageTmpl.Execute(&page, map[string]any{"Image": got.Sizes["medium"].URL, "Embed": template.HTML(oeFields.HTML)}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page.Bytes())
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	shot := filepath.Join(t.TempDir(), "embed.png")
	if dir := os.Getenv("VITRINE_SCREENSHOTS"); dir != "" {
		shot = filepath.Join(dir, "embed.png")
	}
	bcmd := exec.CommandContext(cctx, node, filepath.Join(e2e, "embed-page.mjs"))
	bcmd.Env = append(os.Environ(), "PAGE_URL=http://"+ln.Addr().String()+"/", "SHOT="+shot, "CHROMIUM="+chromium)
	bcmd.Dir = e2e
	bout, err := bcmd.Output()
	var seen struct {
		ImageWidth, ImageHeight, FrameImages int
		FrameURL, FrameTitle, Error          string
		IframeVisible                        bool
		ConsoleErrors                        []string
	}
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(bout))), &seen); jerr != nil || err != nil || seen.Error != "" {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("browser: %v\nstdout: %s\nstderr: %s", err, bout, stderr)
	}
	t.Logf("browser: %+v", seen)
	if seen.ImageWidth != 300 || seen.ImageHeight != 225 || seen.FrameTitle != "Harbour notes" || seen.FrameImages < 1 ||
		!strings.HasPrefix(seen.FrameURL, permalink) || !seen.IframeVisible || len(seen.ConsoleErrors) > 0 {
		t.Fatalf("the embedding page showed %+v", seen)
	}
}
