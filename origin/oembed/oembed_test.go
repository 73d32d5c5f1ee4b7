package oembed

import (
	"context"
	"errors"
	"fmt"

	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// fakeProvider is a fake oEmbed provider on the loopback interface that counts what it answers.
type fakeProvider struct {
	*httptest.Server
	hits    atomic.Int64 // every request
	oembeds atomic.Int64 // requests of /oembed
	written atomic.Int64 // bytes /huge managed to write
	hugeEnd chan struct{}
	port    string
}

// richHTML is a provider's hostile rich html: scripts, handlers, a javascript: link, an http
// iframe and an https one.
const richHTML = `<blockquote class="quote" onclick="steal()"><p>Said <a href="javascript:alert(1)">x</a> and <a href="https://p.example/a">y</a></p></blockquote>` +
	`<script src="https://evil.example/x.js"></script><style>body{display:none}</style>` +
	`<iframe src="http://insecure.example/frame"></iframe>` +
	"<iframe src=\"https://player.example/v/1\" width=\"480\" height=\"270\" onload=\"steal()\" allow=\"autoplay; encrypted-media\" allowfullscreen sandbox=\"allow-top-navigation\" style=\"position:fixed\">\n</iframe>" +
	`<img src="x" onerror="steal()"><form action="https://evil.example"><input name="pw"></form>`

func newProvider(t *testing.T) *fakeProvider {
	t.Helper()
	p := &fakeProvider{hugeEnd: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><title>A page</title>
<link rel="alternate" type="text/xml+oembed" href="%[1]s/oembed?format=xml">
<link rel="alternate" type="application/json+oembed" href="/oembed?from=page&amp;x=1" />
</head><body><link type="application/json+oembed" href="/not-in-head"></body></html>`, p.URL)
	})
	mux.HandleFunc("/bigpage", func(w http.ResponseWriter, r *http.Request) {
		// Discovery reads 150 KB: the head is within it, the rest is never read.
		fmt.Fprint(w, `<html><head><link rel="alternate" type="application/json+oembed" href="/oembed"></head><body>`)
		w.Write([]byte(strings.Repeat("x", 4<<20)))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><head></head><body>no oEmbed</body></html>")
	})
	mux.HandleFunc("/oembed", func(w http.ResponseWriter, r *http.Request) {
		p.oembeds.Add(1)
		q := r.URL.Query()
		if q.Get("dnt") != "1" || q.Get("url") == "" || q.Get("maxwidth") == "" || q.Get("maxheight") == "" {
			http.Error(w, "bad request "+r.URL.RawQuery, 400)
			return
		}
		if q.Get("format") != "json" {
			http.Error(w, "json only", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":"1.0","type":"rich","title":"A <b>video</b>","provider_name":"Fake","width":%s,"height":270,"html":%q}`,
			q.Get("maxwidth"), richHTML)
	})
	mux.HandleFunc("/xmlonly", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" {
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		fmt.Fprint(w, `<?xml version="1.0"?><oembed><version>1.0</version><type>photo</type><title>A "photo"</title>`+
			`<url>https://img.example/p.jpg</url><width>640</width><height>480</height></oembed>`)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		defer close(p.hugeEnd)
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(`{"type":"rich","html":"` + strings.Repeat("a", 64<<10))
		for p.written.Load() < 50<<20 {
			n, err := w.Write(chunk)
			p.written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		to := map[string]string{
			"/redirect/loopback":  "http://127.0.0.2:" + p.port + "/page",
			"/redirect/ipv6":      "http://[::1]:" + p.port + "/page",
			"/redirect/metadata":  "http://169.254.169.254/latest/meta-data/",
			"/redirect/private":   "http://10.0.0.1/",
			"/redirect/localhost": "http://localhost:" + p.port + "/page",
			"/redirect/fine":      "/page",
			"/redirect/loop":      "/redirect/loop",
			"/redirect/file":      "file:///etc/passwd",
		}[r.URL.Path]
		http.Redirect(w, r, to, http.StatusFound)
	})
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	_, p.port, _ = net.SplitHostPort(p.Listener.Addr().String())
	return p
}

// fixture is a store (database and replica) with a public post 5 and the proxy.
type fixture struct {
	s    *Service
	tn   *replica.Tenant
	info *schema.Tenant
}

// loopbackOnly is the test hook that lets the proxy reach a provider on the loopback interface.
var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// TestProxy runs the proxy's tests on one database (a store each): making a database is most
// of a test's time.
func TestProxy(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *store.DB)
	}{
		{"DiscoveryAndCache", testDiscoveryAndCache},
		{"DiscoveryCases", testDiscoveryCases},
		{"RegistryProviders", testRegistryProviders},
		{"SSRFRefusals", testSSRFRefusals},
		{"RefusalReasons", testRefusalReasons},
		{"HugeResponseIsCutOff", testHugeResponseIsCutOff},
		{"LocalURLs", testLocalURLs},
		{"ResolveEmbeds", testResolveEmbeds},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, db) })
	}
}

var stores atomic.Int64

func newFixture(t *testing.T, db *store.DB, cfg Config) *fixture {
	t.Helper()
	info := storetest.Tenant(t, db, fmt.Sprintf("shop-%d", stores.Add(1)))
	r := replica.New(replica.Config{Logger: slog.New(slog.DiscardHandler), Private: true})
	r.Reset("e")
	var v int64
	put := func(log string, kind schema.Kind, id string, x any) {
		v++
		c := schema.NewChange(log, kind, id, schema.Pub, x)
		c.Version, c.TxnFirst, c.TxnLast = v, v, v
		r.Change(&c)
		r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: v})
	}
	put(schema.PlatformLog, schema.KindTenant, info.Slug, info)
	p := &schema.Post{ID: 5, Type: "post", Slug: "tea", Status: schema.StatusPublish, Title: "Tea", Content: "x", Format: "standard",
		CommentStatus: "open", PingStatus: "open", DateGMT: time.Now().UTC()}
	p.Normalize()
	put(info.Slug, schema.KindPost, "5", p)
	r.Checkpoint()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &fixture{s: New(cfg, nil, db), tn: r.TenantBySlug(info.Slug), info: info}
}

func (f *fixture) resolve(t *testing.T, u string, discover bool) (*schema.OEmbed, error) {
	t.Helper()
	return f.s.resolve(context.Background(), f.tn, lookup{url: u, maxWidth: 600, discover: discover, key: cacheKey("proxy", u+fmt.Sprint(discover))})
}

// Discovery finds the page's JSON link (relative, HTML-escaped) in its head; the answer is
// sanitised and cached: a second lookup sends nothing out.
func testDiscoveryAndCache(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true})
	o, err := f.resolve(t, p.URL+"/page", true)
	if err != nil {
		t.Fatal(err)
	}
	if o.Str("type") != "rich" || o.Str("title") != "A <b>video</b>" || o.Int("width") != 600 {
		t.Errorf("answer: %+v", o.Fields)
	}
	h := o.Str("html")
	want := `<iframe src="https://player.example/v/1#?secret=`
	if !strings.HasPrefix(h, `<blockquote class="wp-embedded-content" data-secret="`) || !strings.Contains(h, want) ||
		!strings.Contains(h, `sandbox="allow-scripts" security="restricted"`) || !strings.Contains(h, `style="position: absolute; visibility: hidden;"`) ||
		!strings.HasSuffix(h, "<script>"+schema.EmbedHostScript+"</script>") {
		t.Errorf("a discovered provider's html: %s", h)
	}
	hits, oembeds := p.hits.Load(), p.oembeds.Load()
	if hits != 2 || oembeds != 1 {
		t.Errorf("requests: %d (oEmbed %d), want the page and the endpoint", hits, oembeds)
	}
	hitStart := time.Now()
	again, err := f.resolve(t, p.URL+"/page", true)
	t.Logf("a cache hit took %v", time.Since(hitStart))
	if err != nil || again.Str("html") != h {
		t.Fatalf("second lookup: %v %v", err, again)
	}
	if p.hits.Load() != hits || f.s.Stats().CacheHits != 1 {
		t.Errorf("a cache hit sent %d requests (stats %+v)", p.hits.Load()-hits, f.s.Stats())
	}
	// Another process (a new service on the same database) finds it too.
	other := &fixture{s: New(Config{AllowAddrs: loopbackOnly, AnyPort: true, Logger: slog.New(slog.DiscardHandler)}, nil, f.s.DB), tn: f.tn, info: f.info}
	if _, err := other.resolve(t, p.URL+"/page", true); err != nil || p.hits.Load() != hits {
		t.Errorf("shared cache: %v, %d requests", err, p.hits.Load()-hits)
	}
	// Expired: asked again.
	later := New(Config{AllowAddrs: loopbackOnly, AnyPort: true, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return time.Now().Add(25 * time.Hour) }}, nil, f.s.DB)
	if _, err := (&fixture{s: later, tn: f.tn}).resolve(t, p.URL+"/page", true); err != nil || p.hits.Load() != hits+2 {
		t.Errorf("after the TTL: %v, %d requests", err, p.hits.Load()-hits)
	}
}

func testDiscoveryCases(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true})
	if _, err := f.resolve(t, p.URL+"/page?nodiscover", false); err == nil {
		t.Error("discover=false found an unknown provider")
	}
	if p.hits.Load() != 0 {
		t.Errorf("discover=false sent %d requests", p.hits.Load())
	}
	if _, err := f.resolve(t, p.URL+"/plain", true); err == nil {
		t.Error("a page without a link gave an embed")
	}
	if o, err := f.resolve(t, p.URL+"/bigpage", true); err != nil || o.Str("type") != "rich" {
		t.Errorf("a 4 MB page: %v", err)
	}
	if _, err := f.resolve(t, p.URL+"/redirect/fine", true); err != nil {
		t.Errorf("a redirect to the same host: %v", err)
	}
	if _, err := f.resolve(t, p.URL+"/redirect/loop", true); err == nil {
		t.Error("a redirect loop gave an embed")
	}
}

// A provider of the registry (here one added by Config.Providers) is asked directly, trusted,
// and still sanitised; a provider that knows only XML answers it after a 501 to JSON.
func testRegistryProviders(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true, Providers: []Provider{
		{Name: "Fake", Pattern: regexp.MustCompile(`^http://127\.0\.0\.1:` + p.port + `/video/.*`), Endpoint: p.URL + "/oembed"},
		{Name: "XML", Pattern: regexp.MustCompile(`^http://127\.0\.0\.1:` + p.port + `/photo/.*`), Endpoint: p.URL + "/xmlonly"},
	}})
	o, err := f.resolve(t, p.URL+"/video/1", false)
	if err != nil {
		t.Fatal(err)
	}
	wantHTML := `<blockquote class="quote"><p>Said x and <a href="https://p.example/a">y</a></p></blockquote>` +
		`<iframe src="https://player.example/v/1" width="480" height="270" allow="autoplay; encrypted-media" allowfullscreen="" ` +
		`sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-presentation"></iframe>`
	if got := o.Str("html"); got != wantHTML {
		t.Errorf("trusted html:\n got %s\nwant %s", got, wantHTML)
	}
	if p.hits.Load() != 1 {
		t.Errorf("%d requests, want the endpoint only", p.hits.Load())
	}
	o, err = f.resolve(t, p.URL+"/photo/1", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Str("html"), `<a href="`+p.URL+`/photo/1"><img src="https://img.example/p.jpg" alt="A &#34;photo&#34;" width="640" height="480" /></a>`; got != want {
		t.Errorf("photo html:\n got %s\nwant %s", got, want)
	}
}

// The production rules (no test hook): loopback, private, metadata, IPv4-mapped and names that
// resolve to the loopback are refused before anything is sent, and answer 404; so is a
// redirect to any of them, with every hop checked. Refusals are counted.
func testSSRFRefusals(t *testing.T, db *store.DB) {
	p := newProvider(t)
	strict := newFixture(t, db, Config{})
	for _, u := range []string{
		"http://127.0.0.1/",
		"http://127.0.0.1:8080/x",
		"http://10.0.0.1/",
		"http://192.168.1.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::1]/",
		"http://localhost/",
		"http://" + p.Listener.Addr().String() + "/page", // the port alone is refused
		"https://user:pw@example.com/",
		"file:///etc/passwd",
		"gopher://127.0.0.1/",
	} {
		before := strict.s.Stats().Refused
		_, err := strict.resolve(t, u, true)
		if schema.AsError(err).CMSCode != "oembed_invalid_url" || schema.AsError(err).Code != schema.CodeNotFound {
			t.Errorf("%s: %v, want 404 oembed_invalid_url", u, err)
		}
		if strict.s.Stats().Refused != before+1 {
			t.Errorf("%s: not counted as refused (%+v)", u, strict.s.Stats())
		}
	}
	if p.hits.Load() != 0 {
		t.Fatalf("the provider was reached %d times", p.hits.Load())
	}
	// With the provider reachable (the loopback hook), a redirect elsewhere is checked again.
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true})
	for _, path := range []string{"loopback", "ipv6", "metadata", "private", "file"} {
		before := f.s.Stats().Refused
		if _, err := f.resolve(t, p.URL+"/redirect/"+path, true); err == nil {
			t.Errorf("redirect to %s gave an embed", path)
		}
		if f.s.Stats().Refused != before+1 {
			t.Errorf("redirect to %s: not counted as refused", path)
		}
	}
	if got := p.hits.Load(); got != 5 {
		t.Errorf("%d requests reached the provider, want the 5 redirects only", got)
	}
}

// The refusal names the class of the address it refused, for the log.
func testRefusalReasons(t *testing.T, db *store.DB) {
	f := newFixture(t, db, Config{})
	for u, want := range map[string]string{
		"http://127.0.0.1/":            "loopback",
		"http://10.0.0.1/":             "private",
		"http://169.254.169.254/":      "cloud metadata",
		"http://[::ffff:127.0.0.1]/":   "embeds 127.0.0.1",
		"http://localhost/":            "loopback",
		"http://[64:ff9b::a9fe:a9fe]/": "cloud metadata",
	} {
		_, err := f.s.fetch(context.Background(), lookup{url: u, discover: true})
		var r *refusal
		if !errors.As(err, &r) || !strings.Contains(r.reason, want) {
			t.Errorf("%s: %v, want a refusal naming %q", u, err, want)
		}
	}
}

// A 50 MB answer is cut off at the bound: the proxy stops reading, the provider cannot write
// it, and the lookup fails at once.
func testHugeResponseIsCutOff(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true, Providers: []Provider{
		{Name: "Huge", Pattern: regexp.MustCompile(`^http://127\.0\.0\.1:` + p.port + `/big/.*`), Endpoint: p.URL + "/huge"},
	}})
	start := time.Now()
	if _, err := f.resolve(t, p.URL+"/big/1", false); err == nil {
		t.Fatal("a 50 MB answer gave an embed")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	select {
	case <-p.hugeEnd:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider is still writing")
	}
	if w := p.written.Load(); w > 16<<20 {
		t.Errorf("the provider wrote %d bytes", w)
	} else {
		t.Logf("the provider wrote %d bytes of 50 MiB before the proxy hung up, in %v", w, time.Since(start))
	}
	if f.s.Stats().Failures != 1 {
		t.Errorf("stats %+v", f.s.Stats())
	}
}

// The store's own URLs are answered from its records: never fetched, never cached.
func testLocalURLs(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true})
	o, err := f.resolve(t, f.info.BaseURL+"/?p=5", true)
	if err != nil || o.Str("title") != "Tea" || o.Str("provider_name") != f.info.Name {
		t.Fatalf("local: %v %+v", err, o)
	}
	if _, err := f.resolve(t, f.info.BaseURL+"/?p=404", true); err == nil {
		t.Error("a missing local record gave an embed")
	}
	if _, err := f.resolve(t, f.info.BaseURL+"/?p=5", true); err != nil || f.s.Stats().CacheHits != 0 {
		t.Errorf("local answers are cached: %+v", f.s.Stats())
	}
	if p.hits.Load() != 0 || f.s.Stats().Fetches != 0 {
		t.Errorf("local URLs were fetched")
	}
}

// The bare URLs of post content: the store's own record, a provider's video, and URLs that give
// nothing (left out, so they render as links).
func testResolveEmbeds(t *testing.T, db *store.DB) {
	p := newProvider(t)
	f := newFixture(t, db, Config{AllowAddrs: loopbackOnly, AnyPort: true, Providers: []Provider{
		{Name: "Fake", Pattern: regexp.MustCompile(`^http://127\.0\.0\.1:` + p.port + `/video/.*`), Endpoint: p.URL + "/oembed"},
	}})
	local, video := f.info.BaseURL+"/?p=5", p.URL+"/video/7"
	content := "Intro\n\n" + local + "\n\n<p>" + video + "</p>\n\nhttp://10.0.0.1/\n\n" + p.URL + "/plain\n\nSee " + video + " inline."
	got := f.s.ResolveEmbeds(context.Background(), f.tn, content)
	if len(got) != 2 || !strings.Contains(got[local], `<a href="`+local+`">Tea</a>`) || !strings.Contains(got[video], `<iframe src="https://player.example/v/1"`) {
		t.Fatalf("embeds: %v", got)
	}
	if strings.Contains(got[video], "\n") {
		t.Errorf("an embed spans lines: %q", got[video])
	}
	rendered := schema.RenderContentEmbeds(content, got)
	for _, want := range []string{`<blockquote class="wp-embedded-content"`, `<iframe src="https://player.example/v/1"`, `<a href="http://10.0.0.1/">http://10.0.0.1/</a>`} {
		if !strings.Contains(rendered, want) {
			t.Errorf("rendered content lacks %s:\n%s", want, rendered)
		}
	}
	if f.s.ResolveEmbeds(context.Background(), f.tn, "no URLs here") != nil {
		t.Error("content without URLs has embeds")
	}
	// The provider's answer is cached: saving the same content again sends nothing.
	hits := p.hits.Load()
	f.s.ResolveEmbeds(context.Background(), f.tn, content)
	if p.hits.Load() != hits+1 { // the /plain page, which has no embed, is asked again
		t.Errorf("a second resolution sent %d requests", p.hits.Load()-hits)
	}
}

func TestSanitize(t *testing.T) {
	sz := newSanitizer()
	rich := func(h string) *schema.OEmbed {
		o := &schema.OEmbed{}
		o.Set("type", "rich")
		o.Set("html", h)
		return o
	}
	tests := []struct {
		name    string
		html    string
		trusted bool
		want    string
	}{
		{"an https iframe, sandboxed", `<iframe src="https://v.example/1" width="100%" height="300" frameborder="0"></iframe>`, true,
			`<iframe src="https://v.example/1" width="100%" height="300" frameborder="0" sandbox="` + trustedSandbox + `"></iframe>`},
		{"an http iframe goes", `<iframe src="http://v.example/1"></iframe><p>x</p>`, true, `<p>x</p>`},
		{"a javascript: iframe goes", `<iframe src="javascript:alert(1)"></iframe>`, true, ``},
		{"a data: iframe goes", `<iframe src="data:text/html,<script>alert(1)</script>"></iframe>`, true, ``},
		{"srcdoc goes", `<iframe src="https://v.example/1" srcdoc="<script>alert(1)</script>"></iframe>`, true,
			`<iframe src="https://v.example/1" sandbox="` + trustedSandbox + `"></iframe>`},
		{"scripts and handlers go", `<p onclick="x()">a<script>alert(1)</script></p><svg onload="x()"></svg>`, true, `<p>a</p>`},
		{"a dangerous class value goes", `<blockquote class="a&quot; onclick=&quot;x">q</blockquote>`, true, `<blockquote>q</blockquote>`},
		{"an image over http goes", `<img src="http://i.example/a.jpg"><img src="https://i.example/b.jpg" alt="b">`, true, `<img src="https://i.example/b.jpg" alt="b"/>`},
		{"a discovered provider keeps a quote and an iframe", `<div><p>intro</p><blockquote cite="x"><a href="https://a.example">A</a><img src="https://i.example"></blockquote>` +
			`<iframe src="https://a.example/embed" width="600" height="338" title="T" allow="camera"></iframe><iframe src="https://b.example/2"></iframe></div>`, false,
			`<blockquote class="wp-embedded-content" data-secret="S"><a href="https://a.example">A</a></blockquote>` +
				`<iframe src="https://a.example/embed#?secret=S" width="600" height="338" title="T" data-secret="S" class="wp-embedded-content" sandbox="allow-scripts" security="restricted" style="position: absolute; visibility: hidden;"></iframe>` +
				`<script>` + schema.EmbedHostScript + `</script>`},
		{"a discovered provider without an iframe gives nothing", `<blockquote>only a quote</blockquote>`, false, ``},
	}
	secret := regexp.MustCompile(`(secret=|data-secret=")[A-Za-z0-9]{10}`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := secret.ReplaceAllString(sz.embedHTML(rich(tc.html), "https://a.example/page", tc.trusted), "${1}S")
			if got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	link := &schema.OEmbed{}
	link.Set("type", "link")
	link.Set("title", `<b>"x"</b>`)
	if got := sz.embedHTML(link, `https://a.example/"q`, true); got != `<a href="https://a.example/&#34;q">&lt;b&gt;&#34;x&#34;&lt;/b&gt;</a>` {
		t.Errorf("link: %s", got)
	}
	photo := &schema.OEmbed{}
	photo.Set("type", "photo")
	photo.Set("url", "javascript:alert(1)")
	photo.Set("width", 10)
	photo.Set("height", 10)
	if got := sz.embedHTML(photo, "https://a.example/", true); got != "" {
		t.Errorf("photo with a javascript: URL: %s", got)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{richHTML, `<iframe src="https://x/">`, `<blockquote><iframe src="https://x"></iframe></blockquote>`, `<a href="https://x" onclick="y">z`} {
		f.Add(s, true)
		f.Add(s, false)
	}
	sz := newSanitizer()
	onAttr := regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`)
	jsURL := regexp.MustCompile(`(?i)<[^>]*\s(href|src|cite|action)\s*=\s*["']?\s*(javascript|data|vbscript):`)
	f.Fuzz(func(t *testing.T, h string, trusted bool) {
		o := &schema.OEmbed{}
		o.Set("type", "rich")
		o.Set("html", h)
		out := sz.embedHTML(o, "https://a.example/", trusted)
		clean := strings.ReplaceAll(out, "<script>"+schema.EmbedHostScript+"</script>", "")
		low := strings.ToLower(clean)
		if strings.Contains(low, "<script") || jsURL.MatchString(clean) || onAttr.MatchString(clean) || strings.Contains(low, "<style") {
			t.Fatalf("%q sanitised to %q", h, out)
		}
		if strings.Contains(low, "<iframe") && !strings.Contains(low, "sandbox=") {
			t.Fatalf("an unsandboxed iframe: %q", out)
		}
	})
}

func FuzzDiscoverLink(f *testing.F) {
	f.Add([]byte(`<link type="application/json+oembed" href="/x">`))
	f.Add([]byte(`<head><link type='text/xml+oembed' href='//h/x'></head>`))
	f.Add([]byte("<link type=application/json+oembed href=\x00>"))
	base, _ := parseTarget("https://a.example/page")
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = discoverLink(b, base)
	})
}
