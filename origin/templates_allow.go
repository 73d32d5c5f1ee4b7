package origin

import (
	"strings"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// templatePermitted is the permission check of a templates or template parts route (WordPress's
// permission callbacks of its templates, template revisions and template autosaves
// controllers), for the Allow header and the targetHints of self links (allow.go asks it
// first). handled is false for any other route. Reads need the edit capability of some post
// type; writes edit_theme_options; the revisions and autosaves reads need the template's record
// (from the origin's full replica) and the right to edit it.
func (s *Server) templatePermitted(rq *handler.Request, r *schema.Route, param func(string) string) (allowed, handled bool) {
	t := schema.PostTypeOfRoute(r)
	if t == nil || !schema.IsTemplateType(t.Name) {
		return false, false
	}
	rq.Route = r
	switch name := strings.TrimPrefix(r.Name, "cms."+t.RestBase+"."); name {
	case "list", "get", "lookup":
		return canEditSomeType(rq), true
	case "create", "update", "delete", "autosaves.create":
		return can(rq, schema.CapEditThemeOptions), true
	case "revisions.list", "revisions.get", "revisions.delete", "autosaves.get", "autosaves.list":
		capture := "parent"
		if name == "autosaves.list" {
			capture = "id"
		}
		p := findTemplate(rq, rq.Tenant.Snapshot(), t.Name, param(capture), false)
		if p == nil || p.Record == nil || rq.User == nil || !canEditPost(rq, p.Record) {
			return false, true
		}
		return name != "revisions.delete" || canDeletePost(rq, p.Record), true
	}
	return false, true
}
