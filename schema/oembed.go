package schema

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// oEmbed (WordPress's class-wp-oembed-controller.php and embed.php): a store's public posts and
// pages are embeddable anywhere. GET /oembed/1.0/embed?url=<permalink> answers an oEmbed
// response of type "rich" whose html is a link in a blockquote plus a sandboxed iframe of the
// post's embed page ({permalink}&embed=true under plain permalinks), which edges serve
// (embedpage.go). This file holds the response type, its JSON and XML forms, WordPress's size
// rule, the embed HTML and the permalink parser; the read engine (edge/reads) answers the
// route from a replica and the origin's proxy (origin/oembed) reuses all of it.

// Sizes of a post's embed (WordPress's oembed_min_max_width and get_oembed_response_data).
const (
	OEmbedDefaultWidth = 600
	OEmbedMinWidth     = 200
	OEmbedMaxWidth     = 600
	OEmbedMinHeight    = 200
	// OEmbedSecretLen is the length of an embed's secret (letters and digits), which pairs an
	// iframe with the messages it sends its host page.
	OEmbedSecretLen = 10
)

// OEmbedSize is WordPress's size rule for a post's embed: the width is maxwidth clamped to
// [200, 600], the height ceil(width·9/16) but at least 200 (600→600×338, 400→400×225,
// 200→200×200, 1000→600×338, 50→200×200; 0, which "abc" reads as, →200×200: the routes' default
// is 600). A maxheight above 0 caps the height (an addition: WordPress's embed route ignores it,
// the oEmbed specification asks a provider to honour it).
func OEmbedSize(maxwidth, maxheight int64) (width, height int) {
	w := min(max(maxwidth, OEmbedMinWidth), OEmbedMaxWidth)
	h := max((w*9+15)/16, OEmbedMinHeight)
	if maxheight > 0 && h > maxheight {
		h = maxheight
	}
	return int(w), int(h)
}

// PHPAbsint reads a query value as PHP's absint does: the leading integer of the string (after
// white space and a sign), made positive; anything else is 0. WordPress sanitises the embed
// route's maxwidth so ("abc" is 0, "-400" is 400, "300px" is 300).
func PHPAbsint(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (math.MaxInt64-9)/10 {
			return math.MaxInt64
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n
}

// OEmbedField is one member of an oEmbed response. Value is a string, an int, a float64, a
// bool, nil, or (from a provider) a json.RawMessage holding a nested value.
type OEmbedField struct {
	Name  string
	Value any
}

// OEmbed is an oEmbed response: its members in order (WordPress's order for a local post, the
// provider's for a proxied one). The zero value is an empty response.
type OEmbed struct {
	Fields []OEmbedField
}

// Get returns the value of a member and whether there is one.
func (o *OEmbed) Get(name string) (any, bool) {
	for _, f := range o.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// Str returns a member that is a string, or "".
func (o *OEmbed) Str(name string) string {
	v, _ := o.Get(name)
	s, _ := v.(string)
	return s
}

// Int returns a member that is a number (or a numeric string, as XML gives them), or 0.
func (o *OEmbed) Int(name string) int64 {
	v, _ := o.Get(name)
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		if n >= 0 && n < 1<<53 {
			return int64(n)
		}
	case string:
		if i, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil && i >= 0 && i < 1<<53 {
			return int64(i)
		}
	}
	return 0
}

// Set replaces a member's value, or appends the member.
func (o *OEmbed) Set(name string, v any) {
	for i := range o.Fields {
		if o.Fields[i].Name == name {
			o.Fields[i].Value = v
			return
		}
	}
	o.Fields = append(o.Fields, OEmbedField{name, v})
}

// MarshalJSON encodes the response as a JSON object, members in order.
func (o *OEmbed) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := MarshalJSON(f.Name)
		if err != nil {
			return nil, err
		}
		v, err := MarshalJSON(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ContentTypeXML is the content type of an oEmbed response in XML (WordPress's).
const ContentTypeXML = "text/xml; charset=UTF-8"

// XML encodes the response as WordPress's _oembed_create_xml does: an <oembed> root with one
// element per member, in order, text escaped; true is "1", false and null are empty, and a
// nested value is an element holding its members (array items are <oembed> elements).
func (o *OEmbed) XML() []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\"?>\n<oembed>")
	for _, f := range o.Fields {
		writeXMLMember(&b, f.Name, f.Value, 0)
	}
	b.WriteString("</oembed>\n")
	return b.Bytes()
}

// xmlName makes a member name a usable element name: WordPress's names are plain words; a
// provider's odd ones lose the characters an XML name cannot hold.
func xmlName(name string) string {
	var b strings.Builder
	for i, r := range name {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r == '-' || r == '.' || r >= '0' && r <= '9')
		if ok {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || strings.HasPrefix(strings.ToLower(b.String()), "xml") {
		return "_" + b.String()
	}
	return b.String()
}

func writeXMLMember(b *bytes.Buffer, name string, v any, depth int) {
	n := xmlName(name)
	b.WriteString("<" + n + ">")
	switch x := v.(type) {
	case nil:
	case bool:
		if x {
			b.WriteString("1")
		}
	case string:
		xml.EscapeText(b, []byte(x))
	case json.RawMessage:
		writeXMLRaw(b, x, depth)
	default:
		s, _ := MarshalJSON(x)
		xml.EscapeText(b, s)
	}
	b.WriteString("</" + n + ">")
}

// writeXMLRaw writes a nested JSON value as elements (bounded depth; deeper values as text).
func writeXMLRaw(b *bytes.Buffer, raw json.RawMessage, depth int) {
	if depth >= 8 {
		xml.EscapeText(b, raw)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		o, err := ParseOEmbedJSON(raw)
		if err != nil {
			return
		}
		for _, f := range o.Fields {
			writeXMLMember(b, f.Name, f.Value, depth+1)
		}
	case []any:
		for _, item := range x {
			enc, _ := json.Marshal(item)
			writeXMLMember(b, "oembed", json.RawMessage(enc), depth+1)
		}
	case json.Number:
		b.WriteString(x.String())
	case string:
		xml.EscapeText(b, []byte(x))
	case bool:
		if x {
			b.WriteString("1")
		}
	}
}

// OEmbedMaxFields bounds the members of a provider's response.
const OEmbedMaxFields = 64

var errOEmbedShape = errors.New("schema: an oEmbed response is a JSON object")

// ParseOEmbedJSON decodes a provider's JSON response: a top-level object whose members are
// kept in order (at most OEmbedMaxFields; a name seen twice keeps its last value). Numbers that
// are integers become int, others float64; nested objects and arrays stay raw JSON.
func ParseOEmbedJSON(b []byte) (*OEmbed, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errOEmbedShape
	}
	o := &OEmbed{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errOEmbedShape
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		v, err := oembedValue(raw)
		if err != nil {
			return nil, err
		}
		if _, seen := o.Get(name); !seen && len(o.Fields) >= OEmbedMaxFields {
			return nil, fmt.Errorf("schema: an oEmbed response has more than %d members", OEmbedMaxFields)
		}
		o.Set(name, v)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("schema: data after an oEmbed response")
	}
	return o, nil
}

func oembedValue(raw json.RawMessage) (any, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, errOEmbedShape
	}
	switch t[0] {
	case '{', '[':
		return json.RawMessage(bytes.Clone(t)), nil
	case '"':
		var s string
		err := json.Unmarshal(t, &s)
		return s, err
	case 't', 'f':
		var v bool
		err := json.Unmarshal(t, &v)
		return v, err
	case 'n':
		return nil, nil
	}
	var n json.Number
	if err := json.Unmarshal(t, &n); err != nil {
		return nil, err
	}
	if i, err := n.Int64(); err == nil && i > -1<<53 && i < 1<<53 {
		return int(i), nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, errOEmbedShape
	}
	return f, nil
}

// ParseOEmbedXML decodes a provider's XML response as WordPress's _parse_xml_body does: a
// document with no DOCTYPE (entities are never expanded), whose root's child elements are the
// members, each read as its text.
func ParseOEmbedXML(b []byte) (*OEmbed, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	dec.Entity = nil // only the five predefined entities
	o := &OEmbed{}
	depth := 0
	var name string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, errors.New("schema: an oEmbed XML response may not carry a DOCTYPE")
		case xml.StartElement:
			depth++
			if depth == 2 {
				name = t.Name.Local
				text.Reset()
			}
			if depth > 16 {
				return nil, errors.New("schema: an oEmbed XML response nests too deep")
			}
		case xml.CharData:
			if depth >= 2 {
				if text.Len()+len(t) > len(b) {
					return nil, errOEmbedShape
				}
				text.Write(t)
			}
		case xml.EndElement:
			if depth == 2 {
				if _, seen := o.Get(name); !seen && len(o.Fields) >= OEmbedMaxFields {
					return nil, fmt.Errorf("schema: an oEmbed response has more than %d members", OEmbedMaxFields)
				}
				o.Set(name, text.String())
			}
			depth--
		}
	}
	if len(o.Fields) == 0 {
		return nil, errOEmbedShape
	}
	return o, nil
}

// NewOEmbedSecret returns a fresh embed secret: OEmbedSecretLen letters and digits from a
// cryptographic source (WordPress's wp_generate_password(10, false)).
func NewOEmbedSecret() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [OEmbedSecretLen]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// EmbedURL is the address of a record's embed page under plain permalinks: its permalink with
// embed=true (WordPress's get_post_embed_url).
func (s Site) EmbedURL(p *Post) string { return s.RecordLink(p) + "&embed=true" }

// OEmbedEndpointURL is the address of the embed route for a permalink (WordPress's
// get_oembed_endpoint_url), as discovery links name it.
func (s Site) OEmbedEndpointURL(permalink, format string) string {
	u := s.RestURL("/oembed/1.0/embed") + "&url=" + url.QueryEscape(permalink)
	if format != "" && format != "json" {
		u += "&format=" + url.QueryEscape(format)
	}
	return u
}

var scriptOrStyle = regexp.MustCompile(`(?is)<(?:script|style)\b[^>]*>.*?</(?:script|style)\s*>`)

// OEmbedText is a title as text for HTML: tags removed (script and style with their content),
// entities decoded, white space collapsed. Escape it where it is written.
func OEmbedText(s string) string {
	s = scriptOrStyle.ReplaceAllString(s, "")
	s = tag.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

// oembedTitle is a record's title as the embed HTML and the embed page show it: text
// (OEmbedText), "(no title)" when empty, since an empty link would be invisible.
func oembedTitle(p *Post) string {
	if t := OEmbedText(p.Title); t != "" {
		return t
	}
	return "(no title)"
}

// PostEmbedHTML is the html of a record's oEmbed response (WordPress's get_post_embed_html): a
// blockquote linking the permalink (shown until the iframe reports in), the sandboxed iframe
// of the embed page with the secret in its fragment, and the host script that sizes the iframe
// (EmbedHostScript). Every value is escaped; the title is shown as text.
func PostEmbedHTML(p *Post, site Site, siteName string, width, height int, secret string) string {
	title := oembedTitle(p)
	var b strings.Builder
	b.WriteString(`<blockquote class="wp-embedded-content" data-secret="`)
	b.WriteString(html.EscapeString(secret))
	b.WriteString(`"><a href="`)
	b.WriteString(html.EscapeString(site.RecordLink(p)))
	b.WriteString(`">`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`</a></blockquote><iframe sandbox="allow-scripts" security="restricted" src="`)
	b.WriteString(html.EscapeString(site.EmbedURL(p) + "#?secret=" + secret))
	b.WriteString(`" width="`)
	b.WriteString(strconv.Itoa(width))
	b.WriteString(`" height="`)
	b.WriteString(strconv.Itoa(height))
	b.WriteString(`" title="`)
	b.WriteString(html.EscapeString("\u201c" + title + "\u201d \u2014 " + OEmbedText(siteName)))
	b.WriteString(`" data-secret="`)
	b.WriteString(html.EscapeString(secret))
	b.WriteString(`" frameborder="0" marginwidth="0" marginheight="0" scrolling="no" class="wp-embedded-content"></iframe><script>`)
	b.WriteString(EmbedHostScript)
	b.WriteString(`</script>`)
	return b.String()
}

// EmbedHostScript runs on the page that embeds a post (it travels in the oEmbed html). It is a
// small version of WordPress's wp-embed.js: it answers the messages of embed pages ({message,
// value, secret}, posted by EmbedPageScript) from the iframe whose data-secret and window
// match, resizing it ("height", clamped to 200–1000 pixels) or following a link the reader
// clicked in it ("link", only to the iframe's own host, over http or https, while the iframe
// has the focus); it hides the fallback blockquote once the iframe speaks, and tells each
// iframe it is ready. It has no ampersand and no "<", so that it survives HTML and XML
// escaping-insensitive filters unchanged.
const EmbedHostScript = `(function(w,d){"use strict";if(!d.querySelector||!w.addEventListener||w.vitrineEmbed){return}w.vitrineEmbed=1;` +
	`w.addEventListener("message",function(e){var m=e.data,i,f,h,s,t;if(!m||typeof m!=="object"||typeof m.secret!=="string"||/[^a-zA-Z0-9]/.test(m.secret)){return}` +
	`var q=d.querySelectorAll('blockquote[data-secret="'+m.secret+'"]'),fs=d.querySelectorAll('iframe[data-secret="'+m.secret+'"]');` +
	`for(i=0;i!==fs.length;i++){f=fs[i];if(e.source!==f.contentWindow){continue}for(var j=0;j!==q.length;j++){q[j].style.display="none"}f.removeAttribute("style");` +
	`if(m.message==="height"){h=parseInt(m.value,10)||0;f.height=Math.max(200,Math.min(1000,h))}` +
	`else if(m.message==="link"){try{s=new URL(f.getAttribute("src"));t=new URL(m.value,s)}catch(x){return}` +
	`if(/^https?:$/.test(t.protocol)?(t.host===s.host?d.activeElement===f:false):false){w.top.location.href=t.href}}}},false);` +
	`d.addEventListener("DOMContentLoaded",function(){var fs=d.querySelectorAll("iframe.wp-embedded-content"),i,s;for(i=0;i!==fs.length;i++){s=fs[i].getAttribute("data-secret");` +
	`if(s){fs[i].contentWindow.postMessage({message:"ready",secret:s},"*")}}},false)})(window,document);`

// OEmbedPost is what a record's oEmbed response is made of besides the record: the store's name,
// the author's public profile (nil: the store stands for the author) and the featured image
// (nil when there is none or it is not public).
type OEmbedPost struct {
	Post      *Post
	SiteName  string
	Author    *Author
	Thumbnail *Post
	// MaxWidth and MaxHeight are the request's (0: none); Secret the embed's (NewOEmbedSecret).
	MaxWidth, MaxHeight int64
	Secret              string
}

// RenderOEmbed builds a record's oEmbed response (WordPress's get_oembed_response_data and
// get_oembed_response_data_rich): version, provider_name and provider_url (the store), author_name
// and author_url (the author's display name and archive, else the store), title (raw), type
// "rich", width and height (OEmbedSize), html (PostEmbedHTML), and, when the record has a public
// image, thumbnail_url, thumbnail_width and thumbnail_height: the full image scaled to fit the
// width, as wp_get_attachment_image_src with (width, 99999) gives it.
func RenderOEmbed(in OEmbedPost, site Site) *OEmbed {
	p := in.Post
	w, h := OEmbedSize(in.MaxWidth, in.MaxHeight)
	home := site.Base
	o := &OEmbed{Fields: make([]OEmbedField, 0, 13)}
	o.Set("version", "1.0")
	o.Set("provider_name", in.SiteName)
	o.Set("provider_url", home)
	if in.Author != nil {
		o.Set("author_name", in.Author.Name)
		o.Set("author_url", site.AuthorLink(in.Author.ID))
	} else {
		o.Set("author_name", in.SiteName)
		o.Set("author_url", home)
	}
	o.Set("title", p.Title)
	o.Set("type", "rich")
	o.Set("width", w)
	o.Set("height", h)
	o.Set("html", PostEmbedHTML(p, site, in.SiteName, w, h, in.Secret))
	thumb := in.Thumbnail
	if p.Type == TypeAttachment && p.Attachment != nil {
		thumb = p // an image embeds itself
	}
	if a := imageOf(thumb); a != nil {
		tw, th := ConstrainDimensions(a.Width, a.Height, w, 99999)
		o.Set("thumbnail_url", site.UploadURL(a.File))
		o.Set("thumbnail_width", tw)
		o.Set("thumbnail_height", th)
	}
	return o
}

// imageOf returns the file facts of an image attachment, or nil.
func imageOf(p *Post) *Attachment {
	if p == nil || p.Type != TypeAttachment || p.Attachment == nil {
		return nil
	}
	a := p.Attachment
	if !strings.HasPrefix(a.MimeType, "image/") || a.File == "" || a.Width <= 0 || a.Height <= 0 {
		return nil
	}
	return a
}

// ConstrainDimensions scales width×height down to fit maxWidth×maxHeight (0: no bound), keeping
// the ratio and never scaling up, rounded as WordPress's wp_constrain_dimensions rounds.
func ConstrainDimensions(width, height, maxWidth, maxHeight int) (int, int) {
	if maxWidth == 0 && maxHeight == 0 || width <= 0 || height <= 0 {
		return width, height
	}
	wr, hr := 1.0, 1.0
	didW, didH := false, false
	if maxWidth > 0 && width > maxWidth {
		wr, didW = float64(maxWidth)/float64(width), true
	}
	if maxHeight > 0 && height > maxHeight {
		hr, didH = float64(maxHeight)/float64(height), true
	}
	smaller, larger := min(wr, hr), max(wr, hr)
	ratio := larger
	if roundHalfUp(float64(width)*larger) > maxWidth || roundHalfUp(float64(height)*larger) > maxHeight {
		ratio = smaller
	}
	w := max(1, roundHalfUp(float64(width)*ratio))
	h := max(1, roundHalfUp(float64(height)*ratio))
	if didW && w == maxWidth-1 {
		w = maxWidth
	}
	if didH && h == maxHeight-1 {
		h = maxHeight
	}
	return w, h
}

func roundHalfUp(f float64) int { return int(math.Floor(f + 0.5)) }

// PermalinkID returns the record a URL names when it is a permalink of the store whose canonical
// base URL is base and whose other host names are domains, as WordPress's url_to_postid reads
// plain permalinks: an http or https URL whose host is the store's (letter case, a leading
// "www." and the port aside), whose path is the base's path (with or without a trailing slash,
// or index.php under it), and whose query's first p, page_id or attachment_id parameter starts
// with a positive integer. Anything else reports false.
func PermalinkID(raw, base string, domains []string) (PostID, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return 0, false
	}
	b, err := url.Parse(base)
	if err != nil {
		return 0, false
	}
	if !sameSiteHost(u.Hostname(), b.Hostname(), domains) {
		return 0, false
	}
	root := strings.TrimSuffix(b.Path, "/")
	switch strings.TrimSuffix(u.Path, "/") {
	case root, root + "/index.php":
	default:
		return 0, false
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		if name != "p" && name != "page_id" && name != "attachment_id" {
			continue
		}
		n := int64(0)
		digits := 0
		for ; digits < len(value) && value[digits] >= '0' && value[digits] <= '9'; digits++ {
			if n > MaxExposedID/10 {
				return 0, false
			}
			n = n*10 + int64(value[digits]-'0')
		}
		if digits == 0 {
			continue // WordPress's pattern needs a digit after "="
		}
		if n <= 0 || n > MaxExposedID {
			return 0, false
		}
		return PostID(n), true
	}
	return 0, false
}

// sameSiteHost compares host names as url_to_postid does (without "www."), against the base's
// host and the store's custom domains.
func sameSiteHost(host, baseHost string, domains []string) bool {
	norm := func(h string) string { return strings.TrimPrefix(strings.ToLower(strings.TrimSuffix(h, ".")), "www.") }
	h := norm(host)
	if h == "" {
		return false
	}
	if h == norm(baseHost) {
		return true
	}
	for _, d := range domains {
		if h == norm(d) {
			return true
		}
	}
	return false
}

// IsLocalURL reports whether a URL's host is the store's (PermalinkID's host rule): such a URL is
// answered from the store's own records, never fetched.
func IsLocalURL(raw, base string, domains []string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	b, err := url.Parse(base)
	if err != nil {
		return false
	}
	return sameSiteHost(u.Hostname(), b.Hostname(), domains)
}

// OEmbedInvalidURL is WordPress's answer to a URL that names nothing embeddable.
func OEmbedInvalidURL() *Error {
	return &Error{Code: CodeNotFound, CMSCode: "oembed_invalid_url", Message: "Not Found"}
}

// OEmbedErrorXML is the XML form of an error of the embed route: WordPress serves its errors in
// the format asked for too (<oembed><code>…</code><message>…</message><data><status>…).
func OEmbedErrorXML(code, message string, status int) []byte {
	o := &OEmbed{Fields: []OEmbedField{{"code", code}, {"message", message},
		{"data", json.RawMessage(`{"status":` + strconv.Itoa(status) + `}`)}}}
	return o.XML()
}
