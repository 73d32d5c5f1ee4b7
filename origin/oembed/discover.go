package oembed

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// MaxDiscoveryBody is how much of a page discovery reads (WordPress's limit_response_size):
// a longer page is cut there, and its head is parsed from what was read.
const MaxDiscoveryBody = 150 << 10

// discoverLink finds a page's oEmbed endpoint as WordPress's WP_oEmbed::discover does: the href
// of a <link> in the head whose type is application/json+oembed (preferred, and the first one
// ends the search) or text/xml+oembed (application/xml+oembed too, which some providers send).
// Relative hrefs are resolved against the page's URL. It returns "" when there is none.
func discoverLink(page []byte, base *url.URL) string {
	if end := bytes.Index(bytes.ToLower(page), []byte("</head>")); end >= 0 {
		page = page[:end]
	}
	z := html.NewTokenizer(bytes.NewReader(page))
	var jsonHref, xmlHref string
scan:
	for {
		switch z.Next() {
		case html.ErrorToken:
			break scan
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) == "body" {
				break scan
			}
			if string(name) != "link" || !hasAttr {
				continue
			}
			var typ, href string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "type":
					typ = strings.ToLower(strings.TrimSpace(string(v)))
				case "href":
					href = strings.TrimSpace(string(v))
				}
			}
			if href == "" {
				continue
			}
			switch typ {
			case "application/json+oembed":
				jsonHref = href
				break scan
			case "text/xml+oembed", "application/xml+oembed":
				if xmlHref == "" {
					xmlHref = href
				}
			}
		}
	}
	href := jsonHref
	if href == "" {
		href = xmlHref
	}
	if href == "" {
		return ""
	}
	u, err := base.Parse(href)
	if err != nil {
		return ""
	}
	return u.String()
}
