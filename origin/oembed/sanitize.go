package oembed

import (
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"vitrine/schema"
)

// Sanitising a provider's html (WordPress's data2html and wp_filter_oembed_result, stricter):
// the html of other sites ends up in the store's pages, so it is cut down to an allowlist
// before anything keeps it. Both kinds of provider lose scripts, styles, event handlers,
// forms and every URL that is not http(s); an iframe keeps only an https src, and is always
// sandboxed, so that framed content can never navigate or script the page that embeds it.
//
//   - A provider of the registry (trusted, as WordPress trusts it) keeps links, paragraphs,
//     blockquotes (Twitter's fallback), images over https, figures, simple inline markup and its
//     iframes, with their size, title, allow and allowfullscreen, sandboxed to scripts, its own
//     origin, popups and presentation.
//   - A discovered provider keeps what WordPress keeps of it: the first blockquote (links
//     inside) and the first iframe, which must exist; the iframe is sandboxed to scripts alone,
//     hidden until it reports in when the blockquote can stand for it, and paired with the
//     blockquote by a secret, so that a WordPress-style embed of another site resizes itself
//     through the host script (schema.EmbedHostScript), which is appended.

var (
	httpsURL   = regexp.MustCompile(`^https://[^\s]+$`)
	dimension  = regexp.MustCompile(`^[0-9]{1,5}(%|px)?$`)
	smallToken = regexp.MustCompile(`^[a-zA-Z0-9 _-]{0,40}$`)
	allowList  = regexp.MustCompile(`^[a-z0-9 ;=*'()-]{0,300}$`)
	className  = regexp.MustCompile(`^[a-zA-Z0-9 _-]{0,200}$`)
)

// Sandboxes of provider iframes.
const (
	trustedSandbox   = "allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-presentation"
	untrustedSandbox = "allow-scripts"
)

func newPolicy(trusted bool) *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowURLSchemes("http", "https")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.AllowAttrs("href").OnElements("a")
	p.AllowElements("blockquote")
	p.AllowAttrs("src").Matching(httpsURL).OnElements("iframe")
	p.AllowAttrs("width", "height").Matching(dimension).OnElements("iframe")
	p.AllowAttrs("frameborder", "marginwidth", "marginheight", "scrolling").Matching(smallToken).OnElements("iframe")
	p.AllowAttrs("title").OnElements("iframe")
	if trusted {
		p.AllowElements("p", "br", "em", "strong", "b", "i", "span", "cite", "figure", "figcaption", "div", "time")
		p.AllowAttrs("title").OnElements("a", "blockquote")
		p.AllowAttrs("cite").OnElements("blockquote")
		p.AllowAttrs("class").Matching(className).OnElements("blockquote", "p", "div", "span", "figure", "a")
		p.AllowAttrs("lang", "dir").Matching(smallToken).OnElements("blockquote", "p", "div", "span")
		p.AllowAttrs("datetime").Matching(smallToken).OnElements("time")
		p.AllowAttrs("src").Matching(httpsURL).OnElements("img")
		p.AllowAttrs("width", "height").Matching(dimension).OnElements("img")
		p.AllowAttrs("alt").OnElements("img")
		p.AllowAttrs("allow").Matching(allowList).OnElements("iframe")
		p.AllowAttrs("allowfullscreen").OnElements("iframe")
		p.AllowAttrs("referrerpolicy").Matching(smallToken).OnElements("iframe")
	}
	return p
}

// sanitizer holds the two policies; bluemonday policies are safe for concurrent use once built.
type sanitizer struct {
	trusted, untrusted *bluemonday.Policy
}

func newSanitizer() *sanitizer {
	return &sanitizer{trusted: newPolicy(true), untrusted: newPolicy(false)}
}

// embedHTML is the html of a provider's response, as WordPress's data2html makes it and
// wp_filter_oembed_result filters it: a photo links its image, a link its title, a video or rich
// response keeps its html sanitised. It returns "" when the response yields no html.
func (sz *sanitizer) embedHTML(o *schema.OEmbed, target string, trusted bool) string {
	var out string
	switch o.Str("type") {
	case "photo":
		src, w, h := o.Str("url"), o.Int("width"), o.Int("height")
		if !httpsURL.MatchString(src) || w <= 0 || h <= 0 {
			return ""
		}
		out = `<a href="` + html.EscapeString(target) + `"><img src="` + html.EscapeString(src) + `" alt="` + html.EscapeString(o.Str("title")) +
			`" width="` + strconv.FormatInt(w, 10) + `" height="` + strconv.FormatInt(h, 10) + `" /></a>`
	case "video", "rich":
		raw := o.Str("html")
		if raw == "" || len(raw) > schema.MaxEmbedHTML {
			return ""
		}
		out = sz.filter(raw, trusted)
	case "link":
		title := o.Str("title")
		if title == "" {
			return ""
		}
		out = `<a href="` + html.EscapeString(target) + `">` + html.EscapeString(title) + `</a>`
	}
	// WordPress's _strip_newlines: an embed is one line, so that paragraph formatting around it
	// never breaks it.
	out = strings.NewReplacer("\r\n", "", "\n", "", "\r", "").Replace(out)
	if len(out) > schema.MaxEmbedHTML {
		return ""
	}
	return out
}

// filter sanitises a video or rich html; "" when nothing embeddable is left.
func (sz *sanitizer) filter(raw string, trusted bool) string {
	policy := sz.untrusted
	if trusted {
		policy = sz.trusted
	}
	clean := policy.Sanitize(raw)
	ctx := &nethtml.Node{Type: nethtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := nethtml.ParseFragment(strings.NewReader(clean), ctx)
	if err != nil {
		return ""
	}
	if trusted {
		for _, n := range nodes {
			sandboxIframes(n)
		}
		return render(nodes)
	}
	return untrustedEmbed(nodes)
}

// sandboxIframes drops iframes without a source and sandboxes the others.
func sandboxIframes(n *nethtml.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == nethtml.ElementNode && c.DataAtom == atom.Iframe && attr(c, "src") == "" {
			n.RemoveChild(c)
		} else {
			sandboxIframes(c)
		}
		c = next
	}
	if n.Type == nethtml.ElementNode && n.DataAtom == atom.Iframe {
		setAttr(n, "sandbox", trustedSandbox)
	}
}

// untrustedEmbed keeps the first blockquote and the first iframe (which must be there) of a
// discovered provider's html, paired by a secret, as wp_filter_oembed_result does.
func untrustedEmbed(nodes []*nethtml.Node) string {
	var quote, frame *nethtml.Node
	var find func(n *nethtml.Node)
	find = func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode {
			switch {
			case n.DataAtom == atom.Blockquote && quote == nil && frame == nil:
				quote = n
				return // its links stay inside it; an iframe inside a quote is not the embed
			case n.DataAtom == atom.Iframe && frame == nil && attr(n, "src") != "":
				frame = n
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	for _, n := range nodes {
		find(n)
	}
	if frame == nil {
		return "" // WordPress requires the iframe
	}
	secret := schema.NewOEmbedSecret()
	detach(frame)
	frame.Attr = filterAttrs(frame.Attr, "src", "width", "height", "frameborder", "marginwidth", "marginheight", "scrolling", "title")
	setAttr(frame, "src", attr(frame, "src")+"#?secret="+secret)
	setAttr(frame, "data-secret", secret)
	setAttr(frame, "class", "wp-embedded-content")
	setAttr(frame, "sandbox", untrustedSandbox)
	setAttr(frame, "security", "restricted")
	var out []*nethtml.Node
	if quote != nil {
		detach(quote)
		quote.Attr = nil
		setAttr(quote, "class", "wp-embedded-content")
		setAttr(quote, "data-secret", secret)
		// The quote stands for the iframe until the iframe reports in (schema.EmbedHostScript).
		setAttr(frame, "style", "position: absolute; visibility: hidden;")
		out = append(out, quote)
	}
	out = append(out, frame)
	return render(out) + "<script>" + schema.EmbedHostScript + "</script>"
}

func detach(n *nethtml.Node) {
	if n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}

func attr(n *nethtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

func setAttr(n *nethtml.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, nethtml.Attribute{Key: key, Val: val})
}

func filterAttrs(attrs []nethtml.Attribute, keep ...string) []nethtml.Attribute {
	out := attrs[:0]
	for _, a := range attrs {
		for _, k := range keep {
			if a.Key == k && a.Namespace == "" {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

func render(nodes []*nethtml.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		if err := nethtml.Render(&b, n); err != nil {
			return ""
		}
	}
	return b.String()
}
