// Package kses filters the HTML that staff users without the unfiltered_html capability write
// (authors and contributors), as WordPress's kses filters do at write time: post content and
// excerpts keep the elements and attributes of WordPress's $allowedposttags (with its global
// attributes: aria-*, class, data-*, dir, hidden, id, lang, style, title, role, xml:lang),
// titles those of $allowedtags, and URLs only WordPress's allowed protocols
// (wp_allowed_protocols) or relative references. The sanitiser is bluemonday; this package is
// the WordPress policy on top of it.
//
// # Invariants
//
//   - The output never holds a script or style element, an event handler attribute (on*), an
//     element outside the allow-lists (iframe, svg, object, embed, form, input…), nor a URL
//     attribute whose scheme is not an allowed protocol (javascript:, data:, vbscript:…).
//   - style attributes keep only the CSS properties WordPress's safecss_filter_attr allows, and
//     only values with no backslash, comment, "&", "}", "=", "<", ">", quotes, and no function
//     but calc, var, min, max, clamp, rgb(a), hsl(a) and url() with an allowed protocol.
//   - HTML comments, and so block delimiters (<!-- wp:paragraph -->), are kept, as WordPress
//     keeps them.
//   - Text keeps its characters: only &, < and > are escaped in it (quotes and apostrophes stay
//     as typed, as WordPress leaves them).
//   - Filtering is idempotent: filtering a filtered string changes nothing.
//   - A Filter is immutable after New and safe for concurrent use.
package kses

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
)

// Protocols are the URL schemes WordPress allows in links and sources (wp_allowed_protocols).
var Protocols = []string{"http", "https", "ftp", "ftps", "mailto", "news", "irc", "irc6", "ircs", "gopher",
	"nntp", "feed", "telnet", "mms", "rtsp", "sms", "svn", "tel", "fax", "xmpp", "webcal", "urn"}

// Filter sanitises HTML with WordPress's kses policies.
type Filter struct {
	post  *bluemonday.Policy // wp_filter_post_kses: $allowedposttags
	title *bluemonday.Policy // wp_filter_kses: $allowedtags
}

// New returns a Filter with WordPress's post and title policies.
func New() *Filter {
	return &Filter{post: postPolicy(), title: titlePolicy()}
}

// Post filters post content, excerpts and other post-like HTML (WordPress's
// wp_filter_post_kses, what content_save_pre and excerpt_save_pre apply).
func (f *Filter) Post(s string) string { return f.run(f.post, s) }

// Title filters a title (WordPress's wp_filter_kses, what title_save_pre applies): only a few
// inline elements remain.
func (f *Filter) Title(s string) string { return f.run(f.title, s) }

// Footnotes filters the footnotes post meta: a JSON list of {"content", "id"} objects whose
// contents are filtered as post content (WordPress's _wp_filter_post_meta_footnotes). A value
// that is not such a list is filtered as post content as a whole, so no HTML escapes the filter.
func (f *Filter) Footnotes(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	var notes []map[string]any
	if err := json.Unmarshal([]byte(s), &notes); err != nil {
		return f.Post(s)
	}
	for _, n := range notes {
		for k, v := range n {
			if str, ok := v.(string); ok {
				if k == "content" {
					n[k] = f.Post(str)
				} else {
					n[k] = f.Title(str)
				}
			}
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(notes); err != nil {
		return f.Post(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (f *Filter) run(p *bluemonday.Policy, s string) string {
	if s == "" {
		return s
	}
	// NUL bytes are dropped, as wp_kses_no_null does.
	s = strings.ReplaceAll(s, "\x00", "")
	return relaxText(p.Sanitize(s))
}

// relaxText rewrites the text of sanitised HTML with the minimal escaping (&, <, >): bluemonday
// escapes quotes and apostrophes too, which would change what authors typed ("don't" stored
// as "don&#39;t"). Tags and comments are copied as the sanitiser wrote them.
func relaxText(s string) string {
	if !strings.Contains(s, "&#") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.WriteString(textEscaper.Replace(string(z.Text())))
		default:
			b.Write(z.Raw())
		}
	}
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// safeURL matches a URL with an allowed protocol, or a relative reference (no colon before the
// first "/", "?" or "#").
var safeURL = regexp.MustCompile(`^\s*(?:(?i:` + strings.Join(Protocols, "|") + `):|[^:]*$|[^:]*[/?#])`)

// base is what both policies share: allowed protocols, relative URLs, comments kept.
func base() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowURLSchemes(Protocols...)
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.AllowComments()
	return p
}

// titlePolicy is $allowedtags: no global attributes.
func titlePolicy() *bluemonday.Policy {
	p := base()
	p.AllowAttrs("href", "title").OnElements("a")
	p.AllowAttrs("title").OnElements("abbr", "acronym")
	p.AllowAttrs("cite").OnElements("blockquote", "q")
	p.AllowAttrs("datetime").OnElements("del")
	p.AllowElements("a", "abbr", "acronym", "b", "blockquote", "cite", "code", "del", "em", "i", "q", "s", "strike", "strong")
	return p
}

// postTags is $allowedposttags (WordPress 6.x) without object: WordPress lets object through
// only for a PDF on the site itself, which this filter does not attempt; it is dropped.
var postTags = map[string][]string{
	"address": nil, "a": {"href", "rel", "rev", "name", "target", "download"}, "abbr": nil, "acronym": nil,
	"area": {"alt", "coords", "href", "nohref", "shape", "target"}, "article": {"align"}, "aside": {"align"},
	"audio": {"autoplay", "controls", "loop", "muted", "preload", "src"}, "b": nil, "bdo": nil, "big": nil,
	"blockquote": {"cite"}, "br": nil, "button": {"disabled", "name", "type", "value"}, "caption": {"align"},
	"cite": nil, "code": nil, "col": {"align", "char", "charoff", "span", "valign", "width"},
	"colgroup": {"align", "char", "charoff", "span", "valign", "width"}, "del": {"datetime"}, "dd": nil,
	"dfn": nil, "details": {"align", "open"}, "div": {"align"}, "dl": nil, "dt": nil, "em": nil,
	"fieldset": nil, "figure": {"align"}, "figcaption": {"align"}, "font": {"color", "face", "size"},
	"footer": {"align"}, "h1": {"align"}, "h2": {"align"}, "h3": {"align"}, "h4": {"align"}, "h5": {"align"},
	"h6": {"align"}, "header": {"align"}, "hgroup": {"align"}, "hr": {"align", "noshade", "size", "width"},
	"i": nil, "img": {"alt", "align", "border", "height", "hspace", "loading", "longdesc", "vspace", "src", "usemap", "width"},
	"ins": {"datetime", "cite"}, "kbd": nil, "label": {"for"}, "legend": {"align"}, "li": {"align", "value"},
	"main": {"align"}, "map": {"name"}, "mark": nil, "menu": {"type"}, "nav": {"align"}, "p": {"align"},
	"pre": {"width"}, "q": {"cite"}, "rb": nil, "rp": nil, "rt": nil, "rtc": nil, "ruby": nil, "s": nil,
	"samp": nil, "span": {"align"}, "section": {"align"}, "small": nil, "strike": nil, "strong": nil,
	"sub": nil, "summary": {"align"}, "sup": nil,
	"table":    {"align", "bgcolor", "border", "cellpadding", "cellspacing", "rules", "summary", "width"},
	"tbody":    {"align", "char", "charoff", "valign"},
	"td":       {"abbr", "align", "axis", "bgcolor", "char", "charoff", "colspan", "headers", "height", "nowrap", "rowspan", "scope", "valign", "width"},
	"textarea": {"cols", "rows", "disabled", "name", "readonly"}, "tfoot": {"align", "char", "charoff", "valign"},
	"th":    {"abbr", "align", "axis", "bgcolor", "char", "charoff", "colspan", "headers", "height", "nowrap", "rowspan", "scope", "valign", "width"},
	"thead": {"align", "char", "charoff", "valign"}, "title": nil,
	"tr":    {"align", "bgcolor", "char", "charoff", "valign"},
	"track": {"default", "kind", "label", "src", "srclang"}, "tt": nil, "u": nil, "ul": {"type"},
	"ol": {"start", "type", "reversed"}, "var": nil,
	"video": {"autoplay", "controls", "height", "loop", "muted", "playsinline", "poster", "preload", "src", "width"},
}

// globalAttrs are WordPress's _wp_add_global_attributes (data-* is allowed separately).
var globalAttrs = []string{"aria-controls", "aria-current", "aria-describedby", "aria-details", "aria-expanded",
	"aria-hidden", "aria-label", "aria-labelledby", "aria-live", "class", "dir", "hidden", "id", "lang",
	"title", "role", "xml:lang"}

// uriChecked are URL attributes of the post policy that bluemonday does not check itself
// (it checks a/area href, blockquote/del/ins/q cite, audio/img/track/video src).
var uriChecked = map[string][]string{"longdesc": {"img"}, "poster": {"video"}, "usemap": {"img"}}

// cssProperties are the properties WordPress's safecss_filter_attr allows.
var cssProperties = []string{
	"background", "background-color", "background-image", "background-position", "background-size",
	"background-attachment", "background-blend-mode",
	"border", "border-radius", "border-width", "border-color", "border-style",
	"border-right", "border-right-color", "border-right-style", "border-right-width",
	"border-bottom", "border-bottom-color", "border-bottom-left-radius", "border-bottom-right-radius",
	"border-bottom-style", "border-bottom-width", "border-bottom-right-radius", "border-bottom-left-radius",
	"border-left", "border-left-color", "border-left-style", "border-left-width",
	"border-top", "border-top-color", "border-top-left-radius", "border-top-right-radius",
	"border-top-style", "border-top-width", "border-top-left-radius", "border-top-right-radius",
	"border-spacing", "border-collapse", "caption-side",
	"columns", "column-count", "column-fill", "column-gap", "column-rule", "column-span", "column-width",
	"color", "filter", "font", "font-family", "font-size", "font-style", "font-variant", "font-weight",
	"letter-spacing", "line-height", "text-align", "text-decoration", "text-indent", "text-transform",
	"height", "min-height", "max-height", "width", "min-width", "max-width",
	"margin", "margin-right", "margin-bottom", "margin-left", "margin-top",
	"margin-block-start", "margin-block-end", "margin-inline-start", "margin-inline-end",
	"padding", "padding-right", "padding-bottom", "padding-left", "padding-top",
	"padding-block-start", "padding-block-end", "padding-inline-start", "padding-inline-end",
	"flex", "flex-basis", "flex-direction", "flex-flow", "flex-grow", "flex-shrink", "flex-wrap",
	"gap", "column-gap", "row-gap",
	"grid-template-columns", "grid-auto-columns", "grid-column-start", "grid-column-end", "grid-column",
	"grid-column-gap", "grid-template-rows", "grid-auto-rows", "grid-row-start", "grid-row-end", "grid-row",
	"grid-row-gap", "grid-gap",
	"justify-content", "justify-items", "justify-self", "align-content", "align-items", "align-self",
	"clear", "cursor", "direction", "float", "list-style-type", "object-fit", "object-position",
	"overflow", "vertical-align", "writing-mode",
	"position", "top", "right", "bottom", "left", "z-index", "box-shadow", "aspect-ratio",
	"container-type", "text-underline-offset", "text-decoration-thickness", "text-wrap",
}

// cssFunction matches a CSS function call's name and opening parenthesis.
var cssFunction = regexp.MustCompile(`(?i)([a-z-]*)\(`)

// cssURL matches url(…) with an optionally quoted argument.
var cssURL = regexp.MustCompile(`(?i)url\(\s*(['"]?)([^'"()]*)(['"]?)\s*\)`)

var cssAllowedFunctions = map[string]bool{"calc": true, "var": true, "min": true, "max": true, "minmax": true,
	"clamp": true, "repeat": true, "rgb": true, "rgba": true, "hsl": true, "hsla": true}

// safeCSSValue is WordPress's safecss_filter_attr value test: url() only with an allowed
// protocol (or relative), and nothing that could escape the declaration or run code.
func safeCSSValue(v string) bool {
	if strings.ContainsAny(v, "\\&}={<>\"'`") || strings.Contains(v, "/*") {
		// Quotes are refused outright: url("…") must be written unquoted here.
		return false
	}
	rest := v
	for _, m := range cssURL.FindAllStringSubmatch(v, -1) {
		if !safeURL.MatchString(m[2]) {
			return false
		}
		rest = strings.Replace(rest, m[0], "", 1)
	}
	for _, m := range cssFunction.FindAllStringSubmatch(rest, -1) {
		if !cssAllowedFunctions[strings.ToLower(m[1])] {
			return false
		}
	}
	return true
}

// postPolicy is $allowedposttags with the global attributes and WordPress's CSS filter.
func postPolicy() *bluemonday.Policy {
	p := base()
	for el, attrs := range postTags {
		var plain []string
		for _, a := range attrs {
			if on, ok := uriChecked[a]; ok && contains(on, el) {
				p.AllowAttrs(a).Matching(safeURL).OnElements(el)
				continue
			}
			plain = append(plain, a)
		}
		if len(plain) > 0 {
			p.AllowAttrs(plain...).OnElements(el)
		}
		p.AllowElements(el)
	}
	p.AllowAttrs(globalAttrs...).Globally()
	p.AllowDataAttributes()
	p.AllowStyles(cssProperties...).MatchingHandler(safeCSSValue).Globally()
	// title is allowed, but its text is shown (bluemonday skips it when the element is not).
	p.AllowElementsContent("title")
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
