package schema_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// WordPress's width and height rule (get_oembed_response_data), and maxheight on top.
func TestOEmbedSize(t *testing.T) {
	tests := []struct {
		maxwidth, maxheight int64
		w, h                int
	}{
		{600, 0, 600, 338},
		{400, 0, 400, 225},
		{200, 0, 200, 200},
		{1000, 0, 600, 338},
		{50, 0, 200, 200},
		{0, 0, 200, 200}, // "abc" (absent is the routes' default, 600)
		{355, 0, 355, 200},
		{356, 0, 356, 201},
		{600, 300, 600, 300},
		{600, 400, 600, 338},
		{400, 100, 400, 100},
	}
	for _, tc := range tests {
		w, h := schema.OEmbedSize(tc.maxwidth, tc.maxheight)
		if w != tc.w || h != tc.h {
			t.Errorf("OEmbedSize(%d, %d) = %d×%d, want %d×%d", tc.maxwidth, tc.maxheight, w, h, tc.w, tc.h)
		}
	}
}

func TestPHPAbsint(t *testing.T) {
	tests := map[string]int64{"600": 600, "-400": 400, "abc": 0, "": 0, " 12": 12, "300px": 300, "+7": 7, "1e3": 1, "99999999999999999999999": 9223372036854775807}
	for in, want := range tests {
		if got := schema.PHPAbsint(in); got != want {
			t.Errorf("PHPAbsint(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestPermalinkID(t *testing.T) {
	const base = "https://shop.example"
	domains := []string{"custom.example"}
	tests := []struct {
		url  string
		id   schema.PostID
		want bool
	}{
		{"https://shop.example/?p=5", 5, true},
		{"https://shop.example?p=5", 5, true},
		{"https://shop.example/?page_id=7", 7, true},
		{"https://shop.example/?attachment_id=9", 9, true},
		{"https://shop.example/index.php?p=5", 5, true},
		{"https://shop.example/?utm_source=x&p=5&embed=true", 5, true},
		{"https://shop.example/?p=5#comments", 5, true},
		{"http://shop.example/?p=5", 5, true},          // the scheme is not the site's identity
		{"https://SHOP.example:8443/?p=5", 5, true},    // nor the port or letter case
		{"https://www.shop.example/?p=5", 5, true},     // url_to_postid ignores www.
		{"https://custom.example/?page_id=3", 3, true}, // a custom domain of the store
		{"https://shop.example/?p=5abc", 5, true},      // WordPress reads the leading digits
		{"https://other.example/?p=5", 0, false},       // another host
		{"https://shop.example.evil/?p=5", 0, false},   // a longer host
		{"https://shop.example/blog/?p=5", 0, false},   // another path
		{"https://shop.example/?p=0", 0, false},        // not an id
		{"https://shop.example/?p=-3", 0, false},       // no digit after =
		{"https://shop.example/?p=", 0, false},         // nothing
		{"https://shop.example/", 0, false},            // the home page
		{"https://shop.example/?p=99999999999999999999", 0, false},
		{"ftp://shop.example/?p=5", 0, false},           // not http
		{"/?p=5", 0, false},                             // not absolute
		{"https://user:pw@shop.example/?p=5", 0, false}, // credentials
		{"https://shop.example/?pp=5&page_id=8", 8, true},
		{"not a url at all", 0, false},
	}
	for _, tc := range tests {
		id, ok := schema.PermalinkID(tc.url, base, domains)
		if ok != tc.want || id != tc.id {
			t.Errorf("PermalinkID(%q) = %d, %v, want %d, %v", tc.url, id, ok, tc.id, tc.want)
		}
	}
	// A base with a path: the store lives under it.
	if id, ok := schema.PermalinkID("https://host.example/shop/?p=4", "https://host.example/shop", nil); !ok || id != 4 {
		t.Errorf("under a base path: %d %v", id, ok)
	}
	if _, ok := schema.PermalinkID("https://host.example/?p=4", "https://host.example/shop", nil); ok {
		t.Error("outside the base path: accepted")
	}
}

func TestConstrainDimensions(t *testing.T) {
	tests := []struct{ w, h, mw, mh, ww, wh int }{
		{1200, 800, 600, 99999, 600, 400},
		{300, 200, 600, 99999, 300, 200}, // never scaled up
		{1000, 333, 600, 99999, 600, 200},
		{999, 1, 600, 99999, 600, 1},
		{4000, 3000, 200, 99999, 200, 150},
	}
	for _, tc := range tests {
		w, h := schema.ConstrainDimensions(tc.w, tc.h, tc.mw, tc.mh)
		if w != tc.ww || h != tc.wh {
			t.Errorf("ConstrainDimensions(%d, %d, %d, %d) = %d×%d, want %d×%d", tc.w, tc.h, tc.mw, tc.mh, w, h, tc.ww, tc.wh)
		}
	}
}

func oembedPost() *schema.Post {
	return &schema.Post{ID: 42, Type: "post", Status: schema.StatusPublish, Title: `Tea & <b>"Biscuits"</b>`, Author: 3, FeaturedMedia: 77,
		Content: "A post about tea.", DateGMT: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

func oembedImage() *schema.Post {
	return &schema.Post{ID: 77, Type: schema.TypeAttachment, Status: schema.StatusInherit, Attachment: &schema.Attachment{
		MimeType: "image/jpeg", File: "2026/03/tea-9f86d081884c.jpg", Width: 1200, Height: 800, AltText: `A cup "of" tea`,
		Sizes: map[string]schema.AttachmentSize{
			"thumbnail": {File: "2026/03/tea-9f86d081884c-150x150.jpg", Width: 150, Height: 150, MimeType: "image/jpeg"},
			"medium":    {File: "2026/03/tea-9f86d081884c-300x200.jpg", Width: 300, Height: 200, MimeType: "image/jpeg"},
		}}}
}

var oembedSite = schema.Site{Base: "https://shop.example", Loc: time.UTC}

// The response of a post with an author and a featured image, field for field and in
// WordPress's order.
func TestRenderOEmbedGolden(t *testing.T) {
	o := schema.RenderOEmbed(schema.OEmbedPost{Post: oembedPost(), SiteName: "Tea <Shop>", Author: &schema.Author{ID: 3, Name: "Ann Author"},
		Thumbnail: oembedImage(), MaxWidth: 400, Secret: "abcDEF1234"}, oembedSite)
	checkGolden(t, "oembed_post", o)
	// Without an author profile and without an image: the store stands for the author.
	o = schema.RenderOEmbed(schema.OEmbedPost{Post: oembedPost(), SiteName: "Tea Shop", MaxWidth: 600, Secret: "abcDEF1234"}, oembedSite)
	if o.Str("author_name") != "Tea Shop" || o.Str("author_url") != "https://shop.example" {
		t.Errorf("author without a profile: %q %q", o.Str("author_name"), o.Str("author_url"))
	}
	if _, ok := o.Get("thumbnail_url"); ok {
		t.Error("thumbnail without a featured image")
	}
}

func TestPostEmbedHTMLEscapes(t *testing.T) {
	p := oembedPost()
	p.Title = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	h := schema.PostEmbedHTML(p, oembedSite, `Shop"><svg onload=alert(3)>`, 600, 338, "abcDEF1234")
	for _, bad := range []string{"<img", "<svg", "onerror=", "onload=", "alert(1)"} {
		if strings.Contains(h, bad) {
			t.Errorf("embed html carries %q: %s", bad, h)
		}
	}
	if strings.Count(h, "<script>") != 1 || !strings.Contains(h, schema.EmbedHostScript) {
		t.Errorf("embed html: want exactly the host script: %s", h)
	}
	want := `src="https://shop.example/?p=42&amp;embed=true#?secret=abcDEF1234" width="600" height="338"`
	if !strings.Contains(h, want) {
		t.Errorf("embed html lacks %s: %s", want, h)
	}
	if strings.ContainsAny(schema.EmbedHostScript, "&<") {
		t.Errorf("the host script, which travels in content, holds & or <, which filters may mangle: %s", schema.EmbedHostScript)
	}
}

func TestOEmbedXML(t *testing.T) {
	o := &schema.OEmbed{}
	o.Set("version", "1.0")
	o.Set("title", `Tea & "biscuits" <now>`)
	o.Set("width", 600)
	o.Set("flag", true)
	o.Set("none", nil)
	o.Set("nested", json.RawMessage(`{"a":1,"b":["x","y"]}`))
	o.Set("bad name!", "v")
	got := string(o.XML())
	want := "<?xml version=\"1.0\"?>\n<oembed><version>1.0</version><title>Tea &amp; &#34;biscuits&#34; &lt;now&gt;</title><width>600</width>" +
		"<flag>1</flag><none></none><nested><a>1</a><b><oembed>x</oembed><oembed>y</oembed></b></nested><badname>v</badname></oembed>\n"
	if got != want {
		t.Errorf("XML:\n got %s\nwant %s", got, want)
	}
	// JSON keeps the order.
	j, err := json.Marshal(o)
	if err != nil || !strings.HasPrefix(string(j), `{"version":"1.0","title":`) {
		t.Errorf("JSON: %s %v", j, err)
	}
	// Back and forth.
	back, err := schema.ParseOEmbedJSON(j)
	if err != nil || back.Str("title") != o.Str("title") || back.Int("width") != 600 {
		t.Errorf("ParseOEmbedJSON: %+v %v", back, err)
	}
}

func TestParseOEmbed(t *testing.T) {
	bad := []string{``, `[]`, `"x"`, `{"a":1} {"b":2}`, `{"a":`, `{"a":1e999}`}
	for _, b := range bad {
		if _, err := schema.ParseOEmbedJSON([]byte(b)); err == nil {
			t.Errorf("ParseOEmbedJSON(%q) accepted", b)
		}
	}
	many := "{"
	for i := range schema.OEmbedMaxFields + 1 {
		if i > 0 {
			many += ","
		}
		many += `"f` + strings.Repeat("x", i) + `":1`
	}
	if _, err := schema.ParseOEmbedJSON([]byte(many + "}")); err == nil {
		t.Error("ParseOEmbedJSON accepted too many members")
	}
	o, err := schema.ParseOEmbedXML([]byte(`<?xml version="1.0"?><oembed><type>rich</type><html>&lt;iframe src="https://x"&gt;&lt;/iframe&gt;</html><width>400</width></oembed>`))
	if err != nil || o.Str("type") != "rich" || o.Str("html") != `<iframe src="https://x"></iframe>` || o.Int("width") != 400 {
		t.Errorf("ParseOEmbedXML: %+v %v", o, err)
	}
	for _, b := range []string{
		`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><oembed><title>&e;</title></oembed>`,
		`<oembed><title>&unknown;</title></oembed>`,
		`<oembed></oembed>`,
		`not xml`,
	} {
		if _, err := schema.ParseOEmbedXML([]byte(b)); err == nil {
			t.Errorf("ParseOEmbedXML(%q) accepted", b)
		}
	}
}

// The embed page escapes what it shows, names its one script in its policy, and can be framed.
func TestRenderEmbedPage(t *testing.T) {
	p := oembedPost()
	p.Title = `Tea </title><script>alert(1)</script>& "cakes" <img src=x onerror=alert(3)>`
	p.Excerpt = ""
	p.Content = strings.Repeat("word ", 80) + `<script>alert(2)</script>`
	body := string(schema.RenderEmbedPage(schema.EmbedPage{Post: p, SiteName: `<b>Shop</b> & Co`, Image: oembedImage()}, oembedSite))
	if strings.Count(body, "<script>") != 1 || strings.Contains(body, "alert(") || strings.Contains(body, "<img src=x") {
		t.Fatalf("page carries markup of the post: %s", body)
	}
	for _, want := range []string{
		"<title>Tea &amp; &#34;cakes&#34; \u2013 Shop &amp; Co</title>",
		`<a href="https://shop.example/?p=42" target="_top">Tea &amp; &#34;cakes&#34;</a>`,
		`src="https://shop.example/cms-content/uploads/2026/03/tea-9f86d081884c-300x200.jpg" width="300" height="200" alt="A cup &#34;of&#34; tea"`,
		`class="wp-embed-more"`,
		`<script>` + schema.EmbedPageScript + `</script>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s:\n%s", want, body)
		}
	}
	sum := sha256.Sum256([]byte(schema.EmbedPageScript))
	if !strings.Contains(schema.EmbedPageCSP, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") ||
		!strings.Contains(schema.EmbedPageCSP, "frame-ancestors *") {
		t.Errorf("policy %q does not name the script or allow framing", schema.EmbedPageCSP)
	}
	for _, h := range schema.EmbedPageHeaders() {
		if strings.EqualFold(h[0], "X-Frame-Options") {
			t.Errorf("the embed page refuses framing: %v", h)
		}
	}
	// A protected post shows no excerpt; the 404 page is a page too.
	p.Password = "secret"
	if b := string(schema.RenderEmbedPage(schema.EmbedPage{Post: p, SiteName: "Shop"}, oembedSite)); !strings.Contains(b, "protected post") || strings.Contains(b, "word word") {
		t.Errorf("protected: %s", b)
	}
	if b := string(schema.RenderEmbedNotFound("Shop <x>", oembedSite)); !strings.Contains(b, "can&#8217;t be found") || strings.Contains(b, "<x>") {
		t.Errorf("not found: %s", b)
	}
}

var secretRE = regexp.MustCompile(`^[A-Za-z0-9]{10}$`)

func TestNewOEmbedSecret(t *testing.T) {
	a, b := schema.NewOEmbedSecret(), schema.NewOEmbedSecret()
	if !secretRE.MatchString(a) || a == b {
		t.Errorf("secrets %q %q", a, b)
	}
}

func FuzzParseOEmbedJSON(f *testing.F) {
	for _, s := range []string{`{"type":"rich","html":"<b>x</b>","width":600}`, `{"a":{"b":[1,2,{"c":null}]}}`, `{}`, `[`, `{"a":1.5e308}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := schema.ParseOEmbedJSON(b)
		if err != nil {
			return
		}
		if len(o.Fields) > schema.OEmbedMaxFields {
			t.Fatalf("%d members", len(o.Fields))
		}
		j, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", b, err)
		}
		if _, err := schema.ParseOEmbedJSON(j); err != nil {
			t.Fatalf("re-parsing %s: %v", j, err)
		}
		_ = o.XML()
	})
}

func FuzzParseOEmbedXML(f *testing.F) {
	for _, s := range []string{`<oembed><type>rich</type></oembed>`, `<!DOCTYPE x><oembed/>`, `<a><b><c>1</c></b></a>`, `<oembed><x>&amp;&lt;</x>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if o, err := schema.ParseOEmbedXML(b); err == nil {
			_ = o.XML()
			if _, err := json.Marshal(o); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzPermalinkID(f *testing.F) {
	for _, s := range []string{"https://shop.example/?p=5", "https://shop.example/index.php?page_id=3&x", "http://[::1]/?p=1", "https://shop.example/%zz?p=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, ok := schema.PermalinkID(s, "https://shop.example", []string{"c.example"}); ok && (id <= 0 || id > schema.MaxExposedID) {
			t.Fatalf("PermalinkID(%q) = %d", s, id)
		}
	})
}
