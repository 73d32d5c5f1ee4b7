package reads

import (
	"strconv"
	"strings"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// Permitted reports whether req.Viewer passes the permission check of the read route
// req.Route for this request, without answering it: WordPress's get_items_permissions_check
// and get_item_permissions_check, which decide whether GET appears in the Allow header and in a
// self link's targetHints. Argument validation is not part of it (a 400 for a bad argument
// still allows GET, as in WordPress); a missing record, the edit context without the
// capability and a wrong post password are. Routes without a permission check (discovery, the
// commerce reads) always pass.
func Permitted(req *Request) bool {
	context, _ := req.Query("context")
	if t := schema.PostTypeOfRoute(req.Route); t != nil && req.Route.Method == "GET" {
		switch {
		case strings.HasSuffix(req.Route.Name, ".list"):
			if t.Name == "nav_menu_item" && !canEditType(req.Viewer, t) {
				return false
			}
			return context != "edit" || canEditType(req.Viewer, t)
		case strings.HasSuffix(req.Route.Name, ".get"):
			password, _ := req.Query("password")
			_, _, _, err := readablePost(req, t, context, password)
			return err == nil
		}
	}
	switch req.Route.Name {
	case "cms.categories.list", "cms.tags.list":
		return context != "edit" || canManageTerms(req.Viewer)
	case "cms.categories.get", "cms.tags.get":
		tax := schema.TaxCategory
		if req.Route.Name == "cms.tags.get" {
			tax = schema.TaxTag
		}
		_, err := readableTerm(req, tax, context)
		return err == nil
	}
	return true
}

// readablePost finds the record of the id path parameter that the viewer may read in context,
// with WordPress's checks in its order: a record of the type (404 rest_post_invalid_id; an edge
// holds public records only), the type's read capability, the edit context, the post password.
// unlocked says whether the content may be shown; s is the snapshot p was read from.
func readablePost(req *Request, t *schema.PostType, context, password string) (s *replica.Snapshot, p *schema.Post, unlocked bool, err error) {
	v := req.Viewer
	id, perr := strconv.ParseInt(req.Param("id"), 10, 64)
	if perr != nil || id <= 0 {
		return nil, nil, false, postNotFound
	}
	scope := replica.Public
	if canEditType(v, t) {
		scope = replica.Full
	}
	s = req.Tenant.Snapshot()
	p = s.Post(schema.PostID(id), scope)
	if !t.PublicRead && p == nil && scope == replica.Public {
		// Records of types anonymous callers may not read are private: look in the full
		// replica (the origin's) to tell a forbidden record from a missing one.
		p = s.Post(schema.PostID(id), replica.Full)
	}
	if p != nil && p.Type != t.Name {
		return nil, nil, false, postNotFound
	}
	if p == nil || (t.PublicRead && scope == replica.Public && !p.Public()) {
		// A record the caller may not read is not a missing one (WordPress: get_post finds it,
		// check_read_permission refuses it). The origin's full replica holds it; an edge holds
		// its existence marker only.
		if !recordExists(s, schema.PostID(id), t) {
			return nil, nil, false, postNotFound
		}
		if context == "edit" {
			return nil, nil, false, forbidden(v, "rest_forbidden_context", "Sorry, you are not allowed to edit this post.")
		}
		return nil, nil, false, forbidden(v, "rest_forbidden", "Sorry, you are not allowed to do that.")
	}
	if !t.PublicRead && !canEditType(v, t) {
		if t.Name == "nav_menu_item" {
			return nil, nil, false, forbidden(v, "rest_cannot_view", "Sorry, you are not allowed to view menu items.")
		}
		return nil, nil, false, forbidden(v, "rest_forbidden", "Sorry, you are not allowed to do that.")
	}
	if context == "edit" && !canEditType(v, t) {
		return nil, nil, false, forbidden(v, "rest_forbidden_context", "Sorry, you are not allowed to edit this post.")
	}
	unlocked = canEditType(v, t)
	if (p.Protected || p.Password != "") && password != "" && !unlocked {
		// Only the origin's full replica holds the password; an edge never sees one (it
		// forwards requests that carry a password).
		full := s.Post(schema.PostID(id), replica.Full)
		if full == nil || full.Password == "" || full.Password != password {
			return nil, nil, false, &schema.Error{Code: schema.CodeForbidden, CMSCode: "rest_post_incorrect_password",
				Message: "Incorrect post password.", Status: 403}
		}
		p, unlocked = full, true
	}
	return s, p, unlocked, nil
}

// recordExists reports whether a record of type t exists under id, public or not.
func recordExists(s *replica.Snapshot, id schema.PostID, t *schema.PostType) bool {
	if p := s.Post(id, replica.Full); p != nil {
		return p.Type == t.Name
	}
	m := s.PostMarker(id)
	return m != nil && m.Type == t.Name
}

// readableTerm finds the term of the id path parameter in a taxonomy, readable in context.
func readableTerm(req *Request, tax, context string) (*schema.Term, error) {
	id, err := strconv.ParseInt(req.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, termNotFound
	}
	t := req.Tenant.Snapshot().Term(schema.TermID(id))
	if t == nil || t.Taxonomy != tax {
		return nil, termNotFound
	}
	if context == "edit" && !canManageTerms(req.Viewer) {
		return nil, forbidden(req.Viewer, "rest_forbidden_context", "Sorry, you are not allowed to edit this term.")
	}
	return t, nil
}

// allow lists the methods the viewer may use at a record's route (rest path), for its self
// link's targetHints: Request.Allow, or nil (GET alone) when the request has none.
func (req *Request) allow(path string) []string {
	if req.Allow == nil {
		return nil
	}
	return req.Allow(path)
}
