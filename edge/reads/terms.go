package reads

import (
	"slices"
	"strconv"

	"vitrine/edge/cache"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// answerTerms answers the CMS term routes (categories and tags); ok is false for other routes.
// Every term body depends on the Posts class: a term's count is derived from the published
// posts, and a term change bumps that class too (replica/terms.go).
func answerTerms(req *Request, args *schema.Args, info *schema.Tenant) (Response, bool) {
	switch req.Route.Name {
	case "cms.categories.list":
		return termsList(req, args, info, schema.TaxCategory), true
	case "cms.tags.list":
		return termsList(req, args, info, schema.TaxTag), true
	case "cms.categories.get":
		return termItem(req, args, info, schema.TaxCategory), true
	case "cms.tags.get":
		return termItem(req, args, info, schema.TaxTag), true
	}
	return Response{}, false
}

func canManageTerms(v Viewer) bool {
	return v.User != nil && v.User.Role.Can(schema.CapManageCategories)
}

var termNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_term_invalid", Message: "Term does not exist."}

func termsList(req *Request, args *schema.Args, info *schema.Tenant, tax string) Response {
	v := req.Viewer
	context := args.Str("context")
	if context == "edit" && !canManageTerms(v) {
		return Response{Err: forbidden(v, "rest_forbidden_context", "Sorry, you are not allowed to edit terms in this taxonomy.")}
	}
	var d []cache.Dep
	if v.User == nil {
		d = deps(req.Tenant, []replica.Class{replica.Posts})
	}
	s := req.Tenant.Snapshot()
	counts := s.TermCounts(tax)
	filter := schema.TermFilterOf(args)
	var onPost []schema.TermID
	postGiven := args.Get("post").Given
	if postGiven {
		scope := replica.Public
		if canEdit(v) {
			scope = replica.Full
		}
		if p := s.Post(schema.PostID(args.Int("post")), scope); p != nil {
			onPost = p.Categories
			if tax == schema.TaxTag {
				onPost = p.Tags
			}
		}
	}
	// parent is declared for categories only, offset for tags only (as WordPress).
	var parent schema.TermID
	hasParent := tax == schema.TaxCategory && args.Get("parent").Given
	if hasParent {
		parent = schema.TermID(args.Int("parent"))
	}
	key := func(t *schema.Term) schema.TermOrder {
		return schema.TermOrder{ID: t.ID, Name: t.Name, Slug: t.Slug, Description: t.Description, Count: counts[t.ID]}
	}
	var all []*schema.Term
	for _, t := range s.Terms(tax) {
		if filter.Keeps(key(t)) && (!hasParent || t.Parent == parent) && (!postGiven || slices.Contains(onPost, t.ID)) {
			all = append(all, t)
		}
	}
	orderby, desc := args.Str("orderby"), args.Str("order") == "desc"
	slices.SortStableFunc(all, func(a, b *schema.Term) int {
		return schema.CompareTerms(orderby, desc, filter.Include, filter.Slugs, key(a), key(b))
	})
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	offset := schema.PageOffset(args.Int("page"), args.Int("per_page"))
	if tax == schema.TaxTag {
		if o := args.Get("offset"); o.Given {
			offset = int(o.Int)
		}
	}
	total := len(all)
	totalPages := (total + perPage - 1) / perPage
	st := site(info)
	out := make([]*schema.TermView, 0, perPage)
	for i := offset; i < total && i < offset+perPage; i++ {
		out = append(out, schema.RenderTerm(all[i], context, counts[all[i].ID], req.allow(termPath(all[i])), st))
	}
	return ok(out, d, collectionHeaders(st, req, page, total, totalPages)...)
}

func termItem(req *Request, args *schema.Args, info *schema.Tenant, tax string) Response {
	v := req.Viewer
	id, err := strconv.ParseInt(req.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return Response{Err: termNotFound}
	}
	var d []cache.Dep
	if v.User == nil {
		d = deps(req.Tenant, []replica.Class{replica.Posts})
	}
	context := args.Str("context")
	t, err := readableTerm(req, tax, context) // permitted.go
	if err != nil {
		return Response{Err: err}
	}
	s := req.Tenant.Snapshot()
	return ok(schema.RenderTerm(t, context, s.TermCounts(tax)[t.ID], req.allow(termPath(t)), site(info)), d)
}

// termPath is the rest path of a term (its self link).
func termPath(t *schema.Term) string {
	return "/cms/v2/" + schema.TaxonomyBase(t.Taxonomy) + "/" + strconv.FormatInt(int64(t.ID), 10)
}
