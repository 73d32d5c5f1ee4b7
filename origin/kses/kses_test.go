package kses

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestPost checks the post policy on stored-XSS payloads and on markup WordPress keeps.
func TestPost(t *testing.T) {
	f := New()
	for _, c := range []struct{ name, in, want string }{
		{"script element", `<p>a</p><script>alert(1)</script>`, `<p>a</p>`},
		{"event handler", `<p onclick="x()" onmouseover=y>hi</p>`, `<p>hi</p>`},
		{"img onerror", `<img src=x onerror=alert(1)>`, `<img src="x">`},
		{"javascript href", `<a href="javascript:alert(1)">j</a>`, `j`},
		{"javascript href, mixed case and entities", `<a href="JaVa&#115;cript:alert(1)">j</a>`, `j`},
		{"javascript href after a newline", "<a href=\"\njavascript:alert(1)\">j</a>", `j`},
		{"data href", `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">d</a>`, `d`},
		{"data img", `<img src="data:image/svg+xml,<svg onload=alert(1)>">ok`, `ok`},
		{"svg onload", `<svg onload=alert(1)><circle r="1"/></svg>ok`, `ok`},
		{"iframe", `<iframe src="https://evil.example/"></iframe>ok`, `ok`},
		{"object", `<object data="/x.pdf" type="application/pdf"></object>ok`, `ok`},
		{"style expression", `<p style="width:expression(alert(1));color:red">s</p>`, `<p style="color: red">s</p>`},
		{"style url javascript", `<p style="background:url(javascript:alert(1))">s</p>`, `<p>s</p>`},
		{"style element", `<style>body{display:none}</style>ok`, `ok`},
		{"form and input", `<form action="/x"><input name="a"></form>ok`, `ok`},
		{"poster javascript", `<video src="/v.mp4" poster="javascript:x"></video>`, `<video src="/v.mp4"></video>`},
		{"longdesc javascript", `<img src="/a.png" longdesc="javascript:x">`, `<img src="/a.png">`},
		{"block comments kept", `<!-- wp:paragraph --><p>Don't "quote" &amp; <b>bold</b></p><!-- /wp:paragraph -->`,
			`<!-- wp:paragraph --><p>Don't "quote" &amp; <b>bold</b></p><!-- /wp:paragraph -->`},
		{"allowed protocols and relative links", `<a href="https://a.example/?a=1&amp;b=2">h</a><a href="mailto:x@y.example">m</a><a href="tel:+1">t</a><a href="/r">r</a><a href="#f">f</a>`,
			`<a href="https://a.example/?a=1&amp;b=2">h</a><a href="mailto:x@y.example">m</a><a href="tel:+1">t</a><a href="/r">r</a><a href="#f">f</a>`},
		{"global attributes", `<p data-x="1" aria-label="l" class="c" id="i" lang="en" title="t" role="note">g</p>`,
			`<p data-x="1" aria-label="l" class="c" id="i" lang="en" title="t" role="note">g</p>`},
		{"safe styles", `<p style="color: blue; margin: calc(1px + 2px)">ok</p>`, `<p style="color: blue; margin: calc(1px + 2px)">ok</p>`},
		{"image block", `<!-- wp:image {"id":3} --><figure class="wp-block-image"><img src="https://a.example/x.png" alt=""/></figure><!-- /wp:image -->`,
			`<!-- wp:image {"id":3} --><figure class="wp-block-image"><img src="https://a.example/x.png" alt=""/></figure><!-- /wp:image -->`},
		{"text escaping", `5 < 6 > 4 & "q"`, `5 &lt; 6 &gt; 4 &amp; "q"`},
		{"nul", "a\x00b", "ab"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := f.Post(c.in)
			if got != c.want {
				t.Fatalf("Post(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if again := f.Post(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

// TestTitle checks the title policy ($allowedtags).
func TestTitle(t *testing.T) {
	f := New()
	for _, c := range []struct{ in, want string }{
		{`Hello <b>world</b>`, `Hello <b>world</b>`},
		{`<p class="x">Para</p>`, `Para`},
		{`<img src=x onerror=alert(1)>Title`, `Title`},
		{`<a href="javascript:alert(1)" title="t">x</a>`, `<a title="t">x</a>`},
		{`<a href="https://a.example/" title="t" class="c">x</a>`, `<a href="https://a.example/" title="t">x</a>`},
		{`Tom & Jerry's "show"`, `Tom &amp; Jerry's "show"`},
		{`<script>alert(1)</script>T`, `T`},
	} {
		if got := f.Title(c.in); got != c.want {
			t.Errorf("Title(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFootnotes checks that the footnotes meta is filtered inside its JSON.
func TestFootnotes(t *testing.T) {
	f := New()
	for _, c := range []struct{ in, want string }{
		{`[{"content":"<a href=\"javascript:x\">n</a> <img src=x onerror=y> <b>ok</b>","id":"1"}]`,
			`[{"content":"n <img src=\"x\"> <b>ok</b>","id":"1"}]`},
		{`not json <script>x</script>`, `not json `},
		{``, ``},
	} {
		if got := f.Footnotes(c.in); got != c.want {
			t.Errorf("Footnotes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// checkSafe parses sanitised output as a browser would and reports what makes it unsafe (""
// when nothing does): a script or embedding element, an event handler attribute, a URL
// attribute or CSS url() with a scheme that runs or embeds code.
func checkSafe(out string) string {
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return ""
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script", "style", "iframe", "svg", "math", "object", "embed", "form", "input", "frame", "base", "link", "meta":
			return "element " + tok.Data
		}
		for _, a := range tok.Attr {
			key, val := strings.ToLower(a.Key), strings.ToLower(strings.Map(dropSpace, a.Val))
			if strings.HasPrefix(key, "on") {
				return "event handler attribute " + a.Key
			}
			switch key {
			case "href", "src", "poster", "longdesc", "cite", "usemap", "action", "formaction", "background":
				for _, bad := range []string{"javascript:", "vbscript:", "data:"} {
					if strings.HasPrefix(val, bad) {
						return bad + " URL in " + a.Key
					}
				}
			case "style":
				if strings.Contains(val, "javascript:") || strings.Contains(val, "expression(") {
					return "script in style"
				}
			}
		}
	}
}

// dropSpace removes what browsers ignore in a URL scheme (white space and control characters).
func dropSpace(r rune) rune {
	if r <= ' ' {
		return -1
	}
	return r
}

// FuzzPost checks that no input panics the filter or leaves script, event handlers or
// javascript: URLs in its output, and that filtering is idempotent.
func FuzzPost(f *testing.F) {
	for _, s := range []string{
		`<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`, `<a href="javascript:alert(1)">x</a>`,
		`<svg onload=alert(1)>`, `<p style="x:expression(alert(1))">`, `<iframe src=//evil>`,
		`<a href="data:text/html,<script>">`, `<!-- wp:paragraph --><p>x</p><!-- /wp:paragraph -->`,
		`<<script>script>alert(1)<</script>/script>`, `<a href="jav&#x09;ascript:alert(1)">`, `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
		`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`, "<a href=\"java\x00script:x\">",
	} {
		f.Add(s)
	}
	k := New()
	f.Fuzz(func(t *testing.T, in string) {
		for name, fn := range map[string]func(string) string{"post": k.Post, "title": k.Title} {
			out := fn(in)
			if why := checkSafe(out); why != "" {
				t.Fatalf("%s(%q) = %q: %s", name, in, out, why)
			}
			if again := fn(out); again != out && checkSafe(again) != "" {
				t.Fatalf("%s: refiltering %q made it unsafe: %q", name, out, again)
			}
		}
	})
}

// BenchmarkPost measures filtering a block post of about 6 KB (what an author's save costs).
func BenchmarkPost(b *testing.B) {
	para := `<!-- wp:paragraph --><p>Lorem <a href="https://example.com/a?b=1">ipsum</a> dolor <strong>sit</strong> amet, it's "quoted" &amp; more.</p><!-- /wp:paragraph -->` + "\n"
	in := strings.Repeat(para, 40)
	f := New()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		f.Post(in)
	}
}
