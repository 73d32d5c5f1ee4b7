package reads

import (
	"strings"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// _embed for the post types: the embeddable links of a post or page are expanded into
// _embedded, each in embed context, in link order, as WordPress does. What the caller may not
// read embeds WordPress's error object for it, so clients see the shape they expect. Author
// profiles and terms come from the snapshot when it can give them: a snapshot implementing
// AuthorEmbedder or TermEmbedder (the users and terms replication) is used; otherwise authors
// embed rest_user_invalid_id and term links are left out. Featured media and the record an
// attachment is attached to are read like a GET of their own route would read them: public
// records for anonymous callers (an edge holds nothing else), everything for editors at the
// origin; a record that exists but may not be read embeds rest_forbidden (401, or 403 for a
// signed-in caller), a missing one rest_post_invalid_id (404).

// AuthorEmbedder gives an author's embed-context view, or nil when the user is unknown.
type AuthorEmbedder interface {
	EmbedAuthor(id schema.UserID, site schema.Site) any
}

// TermEmbedder gives the embed-context views of a post's terms in one taxonomy ("category",
// "post_tag", as the wp:term links name them).
type TermEmbedder interface {
	EmbedTerms(p *schema.Post, taxonomy string, site schema.Site) []any
}

// embedRels parses _embed: all embeddable rels when present without a list ("", "1", "true"),
// else the listed rels. ok is false when _embed was not sent.
func embedRels(req *Request) (rels []string, ok bool) {
	v, ok := req.Query("_embed")
	if !ok {
		return nil, false
	}
	if v == "" || v == "1" || v == "true" {
		return nil, true
	}
	return splitComma(v), true
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func embedError(code, msg string, status int) map[string]any {
	return map[string]any{"code": code, "message": msg, "data": map[string]any{"status": status}}
}

// embedPost fills v.Embedded for the rels asked (nil: every embeddable rel).
func embedPost(s *replica.Snapshot, p *schema.Post, v *schema.PostView, rels []string, st schema.Site, viewer Viewer) {
	want := func(rel string) bool {
		if rels == nil {
			return true
		}
		for _, r := range rels {
			if r == rel {
				return true
			}
		}
		return false
	}
	emb := map[string][]any{}
	if _, has := v.Links["author"]; has && want("author") {
		var a any
		if ae, ok := any(s).(AuthorEmbedder); ok {
			a = ae.EmbedAuthor(p.Author, st)
		}
		if a == nil {
			a = embedError("rest_user_invalid_id", "Invalid user ID.", 404)
		}
		emb["author"] = []any{a}
	}
	if _, has := v.Links["wp:featuredmedia"]; has && want("wp:featuredmedia") {
		emb["wp:featuredmedia"] = []any{embedRecord(s, p.FeaturedMedia, schema.TypeAttachment, st, viewer)}
	}
	if _, has := v.Links["wp:attached-to"]; has && want("wp:attached-to") {
		emb["wp:attached-to"] = []any{embedRecord(s, p.Parent, "", st, viewer)}
	}
	if up, has := v.Links["up"]; has && len(up) > 0 && want("up") {
		if parent := s.Post(p.Parent, replica.Public); parent != nil && parent.Type == p.Type {
			emb["up"] = []any{schema.RenderPost(parent, schema.PostRender{Context: "embed"}, st)}
		} else {
			emb["up"] = []any{embedError("rest_post_invalid_id", "Invalid post ID.", 404)}
		}
	}
	if links, has := v.Links["wp:term"]; has && want("wp:term") {
		if te, ok := any(s).(TermEmbedder); ok {
			var terms []any
			for _, l := range links {
				ts := te.EmbedTerms(p, l.Taxonomy, st)
				if ts == nil {
					ts = []any{}
				}
				terms = append(terms, ts)
			}
			emb["wp:term"] = terms
		}
	}
	if len(emb) > 0 {
		v.Embedded = emb
	}
}

// embedRecord is the embed-context view of record id (of type typ; "" any type) as the viewer
// may read it, or WordPress's error object for it.
func embedRecord(s *replica.Snapshot, id schema.PostID, typ string, st schema.Site, viewer Viewer) any {
	scope := replica.Public
	t := schema.PostTypeByName(typ)
	if full := s.Post(id, replica.Full); full != nil && t == nil {
		t = schema.PostTypeByName(full.Type)
	}
	if t != nil && canEditType(viewer, t) {
		scope = replica.Full
	}
	p := s.Post(id, scope)
	if p != nil && (typ == "" || p.Type == typ) && (scope == replica.Full || p.Public()) {
		return schema.RenderRecord(p, schema.PostRender{Context: "embed", Record: knownRecord(s)}, st)
	}
	if k := knownRecord(s)(id); k != nil && (typ == "" || k.Type == typ) {
		status := 401
		if viewer.User != nil {
			status = 403
		}
		return embedError("rest_forbidden", "Sorry, you are not allowed to do that.", status)
	}
	return embedError("rest_post_invalid_id", "Invalid post ID.", 404)
}

// knownRecord finds a record the snapshot knows exists, public or not: its full state where the
// snapshot has one (the origin's), else its public state, else its existence marker (type and
// status only). For links that name a record's type, never for showing its fields.
func knownRecord(s *replica.Snapshot) func(id schema.PostID) *schema.Post {
	return func(id schema.PostID) *schema.Post {
		if p := s.Post(id, replica.Full); p != nil {
			return p
		}
		if m := s.PostMarker(id); m != nil {
			return &schema.Post{ID: m.ID, Type: m.Type, Status: m.Status}
		}
		return nil
	}
}
