package schema

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"slices"
	"strconv"
	"strings"
)

// The embed page: what the iframe of a record's oEmbed html shows ({permalink}&embed=true,
// WordPress's embed template). Edges serve it from the replica like any public read. It is a
// small self-contained HTML document: the featured image (from the store's media files), the
// title linking the permalink, the excerpt and the store's name. It is made to be framed by any
// site (Content-Security-Policy frame-ancestors *, no X-Frame-Options), and nothing in it runs
// but its own script, whose hash the policy names: every text is escaped, and the excerpt's
// HTML (the CMS's rendered excerpt) cannot run scripts even if an editor wrote one.

// EmbedPageScript is the embed page's script, a small version of WordPress's
// wp-embed-template.js: it reads the secret from the page's fragment (#?secret=…) and posts
// {message, value, secret} to the embedding page (EmbedHostScript answers them): "height" after
// loading, resizing, the image loading and the host's "ready"; "link" instead of following a
// link the reader clicked (a sandboxed frame cannot navigate the top page itself).
const EmbedPageScript = `(function(w,d){"use strict";var s=(/[#?&]secret=([A-Za-z0-9]{10})/.exec(w.location.hash)||[])[1]||"",t;` +
	`function send(m,v){if(w.parent!==w){w.parent.postMessage({message:m,value:v,secret:s},"*")}}` +
	`function height(){send("height",Math.ceil(d.body.getBoundingClientRect().height))}` +
	`w.addEventListener("load",height);w.addEventListener("resize",function(){clearTimeout(t);t=setTimeout(height,100)});` +
	`w.addEventListener("message",function(e){var m=e.data;if(e.source===w.parent&&m&&m.secret===s&&m.message==="ready"){height()}});` +
	`d.addEventListener("click",function(e){var a=e.target&&e.target.closest?e.target.closest("[href]"):null;` +
	`if(!a||w.parent===w||e.altKey||e.ctrlKey||e.metaKey||e.shiftKey){return}send("link",a.href);e.preventDefault()});` +
	`d.addEventListener("DOMContentLoaded",function(){height();var i=d.querySelector(".wp-embed-featured-image img");if(i){i.addEventListener("load",height)}})` +
	`})(window,document);`

// EmbedPageCSP is the Content-Security-Policy of the embed page: any site may frame it, images
// come from anywhere (the store's media files, or an image URL in an excerpt), styles are
// inline, and the only script allowed is EmbedPageScript.
var EmbedPageCSP = "default-src 'none'; img-src * data:; style-src 'unsafe-inline'; script-src 'sha256-" +
	scriptHash(EmbedPageScript) + "'; base-uri 'none'; form-action 'none'; frame-ancestors *"

func scriptHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// EmbedPageHeaders are the headers of an embed page answer (besides its content type).
func EmbedPageHeaders() [][2]string {
	return [][2]string{
		{"Content-Security-Policy", EmbedPageCSP},
		{"X-Content-Type-Options", "nosniff"},
		{"X-Robots-Tag", "noindex, follow"},
		{"Referrer-Policy", "strict-origin-when-cross-origin"},
	}
}

// ContentTypeHTML is the content type of the embed page.
const ContentTypeHTML = "text/html; charset=UTF-8"

// EmbedPage is what a record's embed page shows besides the record: the store's name and the
// featured image (a public image attachment, or nil).
type EmbedPage struct {
	Post     *Post
	SiteName string
	Image    *Post
}

const embedPageStyle = `body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#50575e;background:transparent}` +
	`.wp-embed{padding:25px;font-size:14px;line-height:1.5;background:#fff;border:1px solid #dcdcde;box-shadow:0 1px 1px rgba(0,0,0,.05);overflow:auto;zoom:1}` +
	`.wp-embed a{color:#8c8f94;text-decoration:none}.wp-embed a:hover{text-decoration:underline}` +
	`.wp-embed-featured-image{margin:0 0 20px}.wp-embed-featured-image img{width:100%;height:auto;border:none}` +
	`.wp-embed-featured-image.square{float:left;max-width:160px;margin-right:20px}` +
	`.wp-embed-heading{margin:0 0 15px;font-weight:600;font-size:22px;line-height:1.3}.wp-embed-heading a{color:#2c3338}` +
	`.wp-embed-excerpt p{margin:0 0 1em}.wp-embed-more{color:#c3c4c7}` +
	`.wp-embed-footer{display:table;width:100%;margin-top:30px}.wp-embed-site-title{font-weight:600;line-height:1.78571428}` +
	`.wp-embed-site-title a{position:relative;display:inline-block}.screen-reader-text{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(1px,1px,1px,1px)}`

// RenderEmbedPage renders a record's embed page (WordPress's embed-content template).
func RenderEmbedPage(in EmbedPage, site Site) []byte {
	p := in.Post
	title := html.EscapeString(oembedTitle(p))
	link := html.EscapeString(site.RecordLink(p))
	siteName := html.EscapeString(OEmbedText(in.SiteName))
	var b strings.Builder
	b.Grow(4096)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\" class=\"no-js\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(title)
	if siteName != "" {
		b.WriteString(" \u2013 " + siteName)
	}
	b.WriteString("</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"robots\" content=\"noindex, follow\">\n")
	b.WriteString("<link rel=\"canonical\" href=\"" + link + "\">\n<base target=\"_top\">\n<style>" + embedPageStyle + "</style>\n</head>\n<body class=\"wp-embed-responsive\">\n")
	b.WriteString("<div class=\"wp-embed post-" + strconv.FormatInt(int64(p.ID), 10) + " " + html.EscapeString(p.Type) + " type-" + html.EscapeString(p.Type) + "\">\n")
	img := in.Image
	if p.Type == TypeAttachment {
		img = p
	}
	if a := imageOf(img); a != nil {
		file, w, h := embedImageSize(a)
		shape := "square"
		if h > 0 && float64(w)/float64(h) >= 1.75 {
			shape = "rectangular"
		}
		b.WriteString("<p class=\"wp-embed-featured-image " + shape + "\"><a href=\"" + link + "\" target=\"_top\"><img src=\"" +
			html.EscapeString(site.UploadURL(file)) + "\" width=\"" + strconv.Itoa(w) + "\" height=\"" + strconv.Itoa(h) +
			"\" alt=\"" + html.EscapeString(a.AltText) + "\"></a></p>\n")
	}
	b.WriteString("<p class=\"wp-embed-heading\"><a href=\"" + link + "\" target=\"_top\">" + title + "</a></p>\n")
	b.WriteString("<div class=\"wp-embed-excerpt\">")
	b.WriteString(embedExcerpt(p, link, title))
	b.WriteString("</div>\n<div class=\"wp-embed-footer\"><div class=\"wp-embed-site-title\"><a href=\"" +
		html.EscapeString(site.Base+"/") + "\" target=\"_top\"><span>" + siteName + "</span></a></div></div>\n</div>\n")
	b.WriteString("<script>" + EmbedPageScript + "</script>\n</body>\n</html>\n")
	return []byte(b.String())
}

// embedExcerpt is the excerpt of the embed page: the rendered excerpt, whose "[…]" becomes a
// "Continue reading" link (WordPress's wp_embed_excerpt_more), or WordPress's sentence for a
// protected record (an edge never holds its content).
func embedExcerpt(p *Post, link, title string) string {
	if p.Password != "" || p.Protected {
		return "<p>There is no excerpt because this is a protected post.</p>"
	}
	ex := RenderExcerpt(p.Excerpt, p.Content)
	more := " &hellip; <a href=\"" + link + "\" class=\"wp-embed-more\" target=\"_top\">Continue reading <span class=\"screen-reader-text\">" + title + "</span></a>"
	if strings.Contains(ex, " [&hellip;]</p>") {
		return strings.Replace(ex, " [&hellip;]</p>", more+"</p>", 1)
	}
	return ex
}

// embedSizeOrder is the order in which the embed page considers an image's sub-sizes.
var embedSizeOrder = []string{"thumbnail", "medium", "medium_large", "large", "1536x1536", "2048x2048"}

// embedImageSize picks the image the embed page shows, as WordPress's embed template does: the
// sub-size with the widest aspect ratio above 1 (square and portrait images show the original).
func embedImageSize(a *Attachment) (file string, w, h int) {
	file, w, h = a.File, a.Width, a.Height
	names := make([]string, 0, len(a.Sizes))
	for n := range a.Sizes {
		if !slices.Contains(embedSizeOrder, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	best := 1.0
	for _, n := range append(slices.Clone(embedSizeOrder), names...) {
		s, ok := a.Sizes[n]
		if !ok || s.Height <= 0 || s.File == "" {
			continue
		}
		if r := float64(s.Width) / float64(s.Height); r > best {
			best, file, w, h = r, s.File, s.Width, s.Height
		}
	}
	return file, w, h
}

// RenderEmbedNotFound renders the embed page of a URL that names no public record (WordPress's
// embed-404 template), answered with status 404.
func RenderEmbedNotFound(siteName string, site Site) []byte {
	name := html.EscapeString(OEmbedText(siteName))
	return []byte("<!DOCTYPE html>\n<html lang=\"en\" class=\"no-js\">\n<head>\n<meta charset=\"utf-8\">\n<title>Page not found \u2013 " + name +
		"</title>\n<meta name=\"robots\" content=\"noindex, follow\">\n<base target=\"_top\">\n<style>" + embedPageStyle + "</style>\n</head>\n<body>\n" +
		"<div class=\"wp-embed\">\n<p class=\"wp-embed-heading\">Oops! That embed can&#8217;t be found.</p>\n<div class=\"wp-embed-excerpt\"><p>It looks like nothing was found at this location. Maybe try visiting <a href=\"" +
		html.EscapeString(site.Base+"/") + "\" target=\"_top\">" + name + "</a> directly?</p></div>\n" +
		"<div class=\"wp-embed-footer\"><div class=\"wp-embed-site-title\"><a href=\"" + html.EscapeString(site.Base+"/") + "\" target=\"_top\"><span>" + name +
		"</span></a></div></div>\n</div>\n<script>" + EmbedPageScript + "</script>\n</body>\n</html>\n")
}
