package reads

import (
	"slices"
	"strconv"
	"strings"

	"vitrine/edge/cache"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// The CMS post types (posts, pages, blocks, menu items, navigation) read through one
// implementation: WordPress's posts controller, parameterised by schema.PostType.

func answerPostType(req *Request, args *schema.Args, info *schema.Tenant, t *schema.PostType) Response {
	if strings.HasSuffix(req.Route.Name, ".list") {
		return postsList(req, args, info, t)
	}
	return postItem(req, args, info, t)
}

// canEditType reports whether the viewer may edit records of the type: see drafts, the edit
// context, and the records of types anonymous callers may not read.
func canEditType(v Viewer, t *schema.PostType) bool {
	return v.User != nil && v.User.Role.Can(t.Caps.Edit)
}

// postQuery turns a collection's arguments into a replica query, with WordPress's checks of
// the statuses the viewer may ask for and of orderings that need another argument.
func postQuery(v Viewer, args *schema.Args, st schema.Site, t *schema.PostType) (replica.PostQuery, error) {
	q := replica.PostQuery{Type: t.Name, OrderBy: args.Str("orderby"), Asc: args.Str("order") == "asc",
		Slugs: args.Get("slug").Strs}
	// Anyone may ask for the collection's default status (publish; media inherit), as
	// WordPress's sanitize_post_statuses lets through.
	def := "publish"
	has := func(name string) bool { return declares(args, name) }
	for _, a := range args.Route().Args {
		if a.Name == "status" && a.Default != "" {
			def = a.Default
		}
	}
	for _, s := range args.Get("status").Strs {
		if s == "any" {
			q.Statuses = append(q.Statuses, schema.StatusPublish, schema.StatusFuture, schema.StatusDraft, schema.StatusPending, schema.StatusPrivate)
			continue
		}
		allowed := s == def || canEditType(v, t) || s == "private" && v.User != nil && v.User.Role.Can(t.Caps.ReadPrivate)
		if !allowed {
			return q, schema.InvalidParam("status", "Status is forbidden.")
		}
		q.Statuses = append(q.Statuses, schema.PostStatus(s))
	}
	if slices.Contains(args.Get("status").Strs, "any") && !canEditType(v, t) {
		return q, schema.InvalidParam("status", "Status is forbidden.")
	}
	search := args.Str("search")
	if q.OrderBy == "relevance" && search == "" {
		return q, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_no_search_term_defined", Field: "orderby",
			Message: "You need to define a search term to order by relevance."}
	}
	if q.OrderBy == "include" && len(args.Get("include").Ints) == 0 {
		return q, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_orderby_include_missing_include", Field: "orderby",
			Message: "You need to define an include parameter to order by include."}
	}
	q.Search, q.SearchColumns, q.SearchExact = search, args.Get("search_columns").Strs, args.Str("search_semantics") == "exact"
	for _, id := range args.Get("include").Ints {
		q.Include = append(q.Include, schema.PostID(id))
	}
	for _, id := range args.Get("exclude").Ints {
		q.Exclude = append(q.Exclude, schema.PostID(id))
	}
	q.After, q.Before = args.Get("after").TimeIn(st.Loc), args.Get("before").TimeIn(st.Loc)
	q.ModifiedAfter, q.ModifiedBefore = args.Get("modified_after").TimeIn(st.Loc), args.Get("modified_before").TimeIn(st.Loc)
	if has("media_type") {
		q.MediaTypes = args.Get("media_type").Strs
		q.MimeTypes = schema.MediaMimeFilter(args.Get("mime_type").Strs)
	}
	if has("author") {
		for _, id := range args.Get("author").Ints {
			q.Authors = append(q.Authors, schema.UserID(id))
		}
		for _, id := range args.Get("author_exclude").Ints {
			q.AuthorsExclude = append(q.AuthorsExclude, schema.UserID(id))
		}
	}
	if has("parent") {
		for _, id := range args.Get("parent").Ints {
			q.Parents = append(q.Parents, schema.PostID(id))
		}
		for _, id := range args.Get("parent_exclude").Ints {
			q.ParentsExclude = append(q.ParentsExclude, schema.PostID(id))
		}
	}
	if has("menu_order") {
		if mo := args.Get("menu_order"); mo.Given {
			n := int(mo.Int)
			q.MenuOrder = &n
		}
	}
	if has("sticky") {
		if st := args.Get("sticky"); st.Given {
			q.Sticky = &st.Bool
		} else {
			q.StickyFirst = !args.Bool("ignore_sticky")
		}
		q.Formats = args.Get("format").Strs
	}
	if len(t.Taxonomies) > 0 {
		q.TaxOr = args.Str("tax_relation") == "OR"
		for _, tax := range t.Taxonomies {
			for _, exclude := range []bool{false, true} {
				name := tax
				if exclude {
					name += "_exclude"
				}
				f := args.Get(name)
				c := replica.TermClause{Taxonomy: tax, All: !exclude && f.Str == "AND", Exclude: exclude, IncludeChildren: f.Bool}
				for _, id := range f.Ints {
					c.Terms = append(c.Terms, schema.TermID(id))
				}
				q.Terms = append(q.Terms, c)
			}
		}
	}
	if canEditType(v, t) {
		q.Scope = replica.Full
	}
	return q, nil
}

func postsList(req *Request, args *schema.Args, info *schema.Tenant, t *schema.PostType) Response {
	v := req.Viewer
	context := args.Str("context")
	if t.Name == "nav_menu_item" && !canEditType(v, t) {
		return Response{Err: forbidden(v, "rest_cannot_view", "Sorry, you are not allowed to view menu items.")}
	}
	if context == "edit" && !canEditType(v, t) {
		return Response{Err: forbidden(v, "rest_forbidden_context", "Sorry, you are not allowed to edit posts in this post type.")}
	}
	st := site(info)
	q, err := postQuery(v, args, st, t)
	if err != nil {
		return Response{Err: err}
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	q.Offset, q.Limit = schema.PageOffset(args.Int("page"), args.Int("per_page")), perPage
	if off := int(args.Int("offset")); off != 0 {
		q.Offset = off // WordPress: a non-zero offset replaces the page's
	}
	var d []cache.Dep
	if v.User == nil && v.PostPassword == "" {
		d = deps(req.Tenant, []replica.Class{replica.Posts})
	}
	s := req.Tenant.Snapshot()
	q.ChildTerms = s.ChildTerms() // include_children expands over the same snapshot's categories
	posts, total := s.Posts(q)
	totalPages := (total + perPage - 1) / perPage
	if total > 0 && page > totalPages {
		return Response{Err: &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_invalid_page_number",
			Message: "The page number requested is larger than the number of pages available."}}
	}
	out := make([]any, 0, len(posts))
	rels, embed := embedRels(req)
	for _, p := range posts {
		// Items the caller may not read are skipped; the totals still count them (WordPress).
		if !t.PublicRead && !canEditType(v, t) {
			continue
		}
		view := schema.RenderRecord(p, schema.PostRender{Context: context, Unlocked: canEditType(v, t), Allow: req.allow(t.Item(p.ID)),
			Record: knownRecord(s)}, st)
		if pv, isPost := view.(*schema.PostView); isPost && embed {
			embedPost(s, p, pv, rels, st, v)
		}
		out = append(out, view)
	}
	return ok(out, d, collectionHeaders(st, req, page, total, totalPages)...)
}

var postNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_post_invalid_id", Message: "Invalid post ID."}

func postItem(req *Request, args *schema.Args, info *schema.Tenant, t *schema.PostType) Response {
	v := req.Viewer
	id, err := strconv.ParseInt(req.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return Response{Err: postNotFound}
	}
	context := args.Str("context")
	var d []cache.Dep
	if v.User == nil && v.PostPassword == "" {
		d = deps(req.Tenant, nil, &cacheItem{schema.KindPost, id})
	}
	password := ""
	if declares(args, "password") { // media have no password argument
		password = args.Str("password")
	}
	s, p, unlocked, err := readablePost(req, t, context, password) // permitted.go
	if err != nil {
		return Response{Err: err}
	}
	st := site(info)
	r := schema.PostRender{Context: context, Unlocked: unlocked, Allow: req.allow(t.Item(p.ID)), Record: knownRecord(s)}
	if declares(args, "excerpt_length") {
		r.ExcerptWords = int(args.Int("excerpt_length"))
	}
	view := schema.RenderRecord(p, r, st)
	if pv, isPost := view.(*schema.PostView); isPost {
		if rels, embed := embedRels(req); embed {
			if d != nil {
				// The embedded parent, author and terms change with the Posts class (author
				// and term changes bump it), not with this post.
				d = deps(req.Tenant, []replica.Class{replica.Posts}, &cacheItem{schema.KindPost, id})
			}
			embedPost(s, p, pv, rels, st, v)
		}
	}
	if !t.PublicRead {
		return ok(view, d)
	}
	return ok(view, d, [2][]byte{[]byte("Link"), []byte("<" + st.RecordLink(p) + ">; rel=\"alternate\"; type=text/html")})
}

// declares reports whether the arguments' route declares the argument name.
func declares(args *schema.Args, name string) bool {
	return slices.ContainsFunc(args.Route().Args, func(a schema.Arg) bool { return a.Name == name })
}
