package origin

import (
	"context"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// contentEmbeds resolves the bare URLs of the content a post or page write sends into their
// embeds (origin/oembed, schema.AutoEmbed), before the write's transaction: fetching other sites
// never happens inside one, and only a caller who may write the type's records makes the origin
// fetch anything. set reports whether the write sends content, whose Embeds then replace the
// record's (a URL that yields nothing renders as a link; a later write resolves it again).
func (s *Server) contentEmbeds(ctx context.Context, rq *handler.Request, in *postInput) (embeds map[string]string, set bool) {
	if in.Content == nil {
		return nil, false
	}
	t := postType(rq)
	if t.Name != "post" && t.Name != "page" {
		return nil, true
	}
	if rq.User == nil || !can(rq, t.Caps.Edit) {
		return nil, true // the write is refused later, in WordPress's order
	}
	return s.oembed.ResolveEmbeds(ctx, rq.Tenant, in.Content.Raw), true
}

// setEmbeds stores what contentEmbeds resolved on the record being written.
func setEmbeds(p *schema.Post, embeds map[string]string, set bool) {
	if set {
		p.Embeds = embeds
	}
}
