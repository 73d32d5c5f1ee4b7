package reads

import (
	"vitrine/edge/cache"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// oEmbed at the edge (WordPress's WP_oEmbed_Controller::get_item and the embed template): the
// embed route answers a public record's oEmbed response for a permalink of this store, and the
// embed page is what its iframe shows. Both are public reads of the replica, cached like any
// other: they depend on the Posts class (any record, author or term change) and on the record's
// own counter. What is not public here (a draft, a private or scheduled record, a record of
// another store, a type without embeds) is WordPress's 404 oembed_invalid_url, and its embed
// page the 404 embed page; neither is cached.

// answerOEmbed answers the oEmbed reads and reports whether the route was one of them.
func answerOEmbed(req *Request, args *schema.Args, info *schema.Tenant) (Response, bool) {
	switch req.Route.Name {
	case "oembed.embed":
		return oembedEmbed(req, args, info), true
	case "oembed.page":
		return embedPage(req, args, info), true
	}
	return Response{}, false
}

func oembedEmbed(req *Request, args *schema.Args, info *schema.Tenant) Response {
	xml := args.Str("format") == "xml" // any other value is json (wp_oembed_ensure_format)
	id, found := schema.PermalinkID(args.Str("url"), info.BaseURL, info.Domains)
	var d []cache.Dep
	if found {
		d = deps(req.Tenant, []replica.Class{replica.Posts}, &cacheItem{schema.KindPost, int64(id)})
	}
	o := OEmbedOf(req.Tenant.Snapshot(), info, id, schema.PHPAbsint(args.Str("maxwidth")), schema.PHPAbsint(args.Str("maxheight")))
	if o == nil {
		if xml {
			// WordPress serves the embed route's errors in the format asked for too.
			return Response{Status: 404, Body: schema.OEmbedErrorXML("oembed_invalid_url", "Not Found", 404), ContentType: schema.ContentTypeXML}
		}
		return Response{Err: schema.OEmbedInvalidURL()}
	}
	if xml {
		return Response{Status: 200, Body: o.XML(), Deps: d, ContentType: schema.ContentTypeXML}
	}
	return ok(o, d)
}

// OEmbedFor returns the oEmbed response of the public record a URL of the store names, from the
// tenant's public view, or nil when it names none (not a permalink of this store, not public,
// not embeddable). The origin's proxy answers local URLs with it, and resolves a post's bare
// URLs of its own store.
func OEmbedFor(t *replica.Tenant, rawURL string, maxwidth, maxheight int64) *schema.OEmbed {
	info := t.Info()
	if info == nil {
		return nil
	}
	id, found := schema.PermalinkID(rawURL, info.BaseURL, info.Domains)
	if !found {
		return nil
	}
	return OEmbedOf(t.Snapshot(), info, id, maxwidth, maxheight)
}

// OEmbedOf returns the oEmbed response of a public record (nil when id names none), with a
// fresh secret.
func OEmbedOf(s *replica.Snapshot, info *schema.Tenant, id schema.PostID, maxwidth, maxheight int64) *schema.OEmbed {
	p, author, thumb := embeddable(s, id)
	if p == nil {
		return nil
	}
	return schema.RenderOEmbed(schema.OEmbedPost{Post: p, SiteName: info.Name, Author: author, Thumbnail: thumb,
		MaxWidth: maxwidth, MaxHeight: maxheight, Secret: schema.NewOEmbedSecret()}, site(info))
}

// embeddable finds the public record of id that has an embed (a post, a page or an
// attachment: WordPress's publicly viewable types), with its author's public profile and its
// public featured image. Everything comes from the public view, also at the origin.
func embeddable(s *replica.Snapshot, id schema.PostID) (p *schema.Post, author *schema.Author, thumb *schema.Post) {
	if id <= 0 {
		return nil, nil, nil
	}
	p = s.Post(id, replica.Public)
	if p == nil {
		return nil, nil, nil
	}
	switch p.Type {
	case "post", "page", schema.TypeAttachment:
	default:
		return nil, nil, nil
	}
	if p.Author != 0 {
		author = s.Author(p.Author)
	}
	if p.FeaturedMedia != 0 {
		// The featured image as the media read side replicates it: an attachment record in the
		// public view (an edge holds public attachments only).
		if a := s.Post(p.FeaturedMedia, replica.Public); a != nil && a.Type == schema.TypeAttachment {
			thumb = a
		}
	}
	return p, author, thumb
}

// embedPage answers a permalink with embed (the embed page): the record's page, or the 404 embed
// page. Which record: the first of p, page_id and attachment_id that names one, as
// url_to_postid reads a permalink.
func embedPage(req *Request, args *schema.Args, info *schema.Tenant) Response {
	headers := make([][2][]byte, 0, 4)
	for _, kv := range schema.EmbedPageHeaders() {
		headers = append(headers, [2][]byte{[]byte(kv[0]), []byte(kv[1])})
	}
	var id schema.PostID
	for _, name := range []string{"p", "page_id", "attachment_id"} {
		if v := args.Get(name); v.Given {
			if n := schema.PHPAbsint(v.Str); n > 0 && n <= schema.MaxExposedID && v.Str != "" && v.Str[0] >= '0' && v.Str[0] <= '9' {
				id = schema.PostID(n)
			}
			break
		}
	}
	st := site(info)
	var d []cache.Dep
	if id > 0 {
		d = deps(req.Tenant, []replica.Class{replica.Posts}, &cacheItem{schema.KindPost, int64(id)})
	}
	p, _, thumb := embeddable(req.Tenant.Snapshot(), id)
	if p == nil {
		return Response{Status: 404, Body: schema.RenderEmbedNotFound(info.Name, st), Headers: headers, ContentType: schema.ContentTypeHTML}
	}
	body := schema.RenderEmbedPage(schema.EmbedPage{Post: p, SiteName: info.Name, Image: thumb}, st)
	return Response{Status: 200, Body: body, Deps: d, Headers: headers, ContentType: schema.ContentTypeHTML}
}
