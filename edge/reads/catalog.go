package reads

import (
	"cmp"
	"math"
	"math/bits"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"vitrine/edge/cache"
	"vitrine/edge/replica"
	"vitrine/edge/search"
	"vitrine/schema"
)

// Product lists: /api/products and /api/search share one query (catalogQuery) and one way to
// answer it (findProducts), so that the same filters and sort give the same products in the same
// order on both routes.

// catalogQuery is a product list request: optional text, filters, order and page.
type catalogQuery struct {
	text          string
	categories    []schema.CategoryID // a category and its descendants; nil: any
	minP, maxP    int64               // shown price bounds, inclusive, in the requested currency
	priced        bool                // a price bound narrows the range
	avail         []schema.Availability
	sort          search.Sort
	offset, limit int
}

var sorts = map[string]search.Sort{
	schema.SortRelevance: search.Relevance,
	schema.SortNewest:    search.Newest,
	schema.SortPriceAsc:  search.PriceAsc,
	schema.SortPriceDesc: search.PriceDesc,
	schema.SortTitle:     search.TitleAsc,
}

// plain reports whether the query is the plain listing: no text, no filter, newest first (which
// relevance is without text).
func (q *catalogQuery) plain() bool {
	return q.text == "" && q.categories == nil && !q.priced && q.avail == nil && (q.sort == search.Newest || q.sort == search.Relevance)
}

func (q *catalogQuery) priceSort() bool {
	return q.sort == search.PriceAsc || q.sort == search.PriceDesc
}

// catalogQueryOf reads the shared list arguments of a products.list or search route.
func catalogQueryOf(s *replica.Snapshot, args *schema.Args, text string) (catalogQuery, error) {
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	q := catalogQuery{text: text, minP: args.Int("min_price"), maxP: args.Int("max_price"),
		sort: sorts[args.Str("sort")], offset: (page - 1) * perPage, limit: perPage}
	if q.minP > q.maxP {
		return q, &schema.Error{Code: schema.CodeInvalid, Field: "min_price", CMSCode: "rest_invalid_param",
			Message: "min_price must not be above max_price", Params: map[string]string{"min_price": "min_price must not be above max_price."}}
	}
	q.priced = q.minP > 0 || q.maxP < schema.MaxMinorAmount
	for _, a := range args.Get("availability").Strs {
		if !slices.Contains(q.avail, schema.Availability(a)) {
			q.avail = append(q.avail, schema.Availability(a))
		}
	}
	if len(q.avail) == 3 {
		q.avail = nil // every class: no filter
	}
	var err error
	q.categories, err = categorySubtree(s, args.Str("category"))
	return q, err
}

// categorySubtree resolves a category argument (an id, or else a slug) to the category and its
// descendants. An empty argument is no filter; an unknown category is a 400.
func categorySubtree(s *replica.Snapshot, ref string) ([]schema.CategoryID, error) {
	if ref == "" {
		return nil, nil
	}
	all := s.Categories()
	id, err := strconv.ParseInt(ref, 10, 64)
	i := slices.IndexFunc(all, func(c *schema.Category) bool {
		return err == nil && int64(c.ID) == id || err != nil && c.Slug == ref
	})
	if i < 0 {
		msg := "category " + strconv.Quote(ref) + " does not exist"
		return nil, &schema.Error{Code: schema.CodeInvalid, Field: "category", CMSCode: "rest_invalid_param",
			Message: msg, Params: map[string]string{"category": msg + "."}}
	}
	children := make(map[schema.CategoryID][]schema.CategoryID, len(all))
	for _, c := range all {
		if c.ParentID != 0 && c.ParentID != c.ID {
			children[c.ParentID] = append(children[c.ParentID], c.ID)
		}
	}
	out := []schema.CategoryID{all[i].ID}
	for k := 0; k < len(out); k++ { // breadth first; a cycle's ids are taken once
		for _, ch := range children[out[k]] {
			if !slices.Contains(out, ch) {
				out = append(out, ch)
			}
		}
	}
	return out, nil
}

// findProducts answers a catalog query from a snapshot: a page of public products and how many
// match in all.
//
// The plain listing (no text, no filter, newest first) walks the snapshot's newest-first order.
// Anything else asks the snapshot's search index. The index holds prices in the store's default
// currency; in another currency, price bounds and price sorts apply to the shown price (the
// merchant's price in that currency, else the conversion), computed here for every match.
func findProducts(s *replica.Snapshot, pr schema.Pricing, q catalogQuery) ([]*schema.Product, int) {
	if q.plain() {
		return s.Products(q.offset, q.limit)
	}
	ix, indexCur := s.SearchIndex()
	sq := search.Query{Text: q.text, Categories: q.categories, Availability: q.avail, Sort: q.sort, Offset: q.offset, Limit: q.limit}
	if indexCur != "" && pr.Currency.Code == indexCur && pr.Default.Code == indexCur || !q.priced && !q.priceSort() {
		if q.priced {
			sq.MinPrice, sq.MaxPrice = &q.minP, &q.maxP
		}
		res := ix.Search(sq)
		out := make([]*schema.Product, 0, len(res.Hits))
		for _, h := range res.Hits {
			if p := s.Product(h.ID, replica.Public); p != nil {
				out = append(out, p)
			}
		}
		return out, res.Total
	}
	// Another currency: every match, in the order ties take (relevance, then newest, then id),
	// filtered and sorted by shown price.
	if q.priceSort() {
		sq.Sort = search.Relevance
	}
	sq.Offset, sq.Limit = 0, ix.Len()
	res := ix.Search(sq)
	type priced struct {
		p     *schema.Product
		price int64
		rank  int // in the index's order, which breaks price ties
	}
	conv := newConverter(pr)
	all := make([]priced, 0, len(res.Hits))
	for _, h := range res.Hits {
		p := s.Product(h.ID, replica.Public)
		if p == nil {
			continue
		}
		price := conv.price(p.Prices)
		if price < q.minP || price > q.maxP {
			continue
		}
		all = append(all, priced{p, price, len(all)})
	}
	switch q.sort {
	case search.PriceAsc:
		slices.SortFunc(all, func(a, b priced) int { return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.rank, b.rank)) })
	case search.PriceDesc:
		slices.SortFunc(all, func(a, b priced) int { return cmp.Or(cmp.Compare(b.price, a.price), cmp.Compare(a.rank, b.rank)) })
	}
	total := len(all)
	all = all[min(q.offset, total):min(q.offset+q.limit, total)]
	out := make([]*schema.Product, len(all))
	for i, x := range all {
		out[i] = x.p
	}
	return out, total
}

// converter computes pr.Price(prices).Amount for many products: the merchant's own price when
// set, else the conversion from the default currency, exact, in 128-bit integer arithmetic when
// the rate and exponents allow it (every realistic rate), else through pr.Price, memoised by the
// default-currency amount (the conversion depends on nothing else).
type converter struct {
	pr       schema.Pricing
	num, den uint64 // the rate as a fraction, exponent shift folded in; den 0: no fast path
	memo     map[int64]int64
}

func newConverter(pr schema.Pricing) *converter {
	c := &converter{pr: pr, memo: map[int64]int64{}}
	intPart, frac, _ := strings.Cut(pr.Currency.Rate, ".")
	num, err := strconv.ParseUint(intPart+frac, 10, 64)
	if err != nil || len(intPart)+len(frac) > 18 || num == 0 {
		return c
	}
	den := uint64(1)
	for range len(frac) {
		den *= 10
	}
	for shift := pr.Currency.Exponent - pr.Default.Exponent; shift != 0; {
		if shift > 0 {
			if num > math.MaxUint64/10 {
				return c
			}
			num, shift = num*10, shift-1
		} else {
			if den > math.MaxUint64/10 {
				return c
			}
			den, shift = den*10, shift+1
		}
	}
	c.num, c.den = num, den
	return c
}

func (c *converter) price(prices schema.Prices) int64 {
	if a, ok := prices[c.pr.Currency.Code]; ok {
		return a
	}
	base, ok := prices[c.pr.Default.Code]
	if !ok {
		return c.pr.Price(prices).Amount
	}
	if c.den != 0 && base >= 0 {
		// base*num/den rounded half away from zero, when the quotient fits 64 bits.
		hi, lo := bits.Mul64(uint64(base), c.num)
		if hi < c.den {
			q, r := bits.Div64(hi, lo, c.den)
			if r >= c.den-r {
				q++
			}
			return int64(min(q, schema.MaxMinorAmount))
		}
	}
	if a, ok := c.memo[base]; ok {
		return a
	}
	a := c.pr.Price(prices).Amount
	c.memo[base] = a
	return a
}

func productsList(req *Request, args *schema.Args, info *schema.Tenant) Response {
	return productPage(req, args, info, "")
}

// searchProducts answers /api/search: relevance-ranked text search with the filters of
// /api/products. An empty or missing q lists the filtered catalog, like /api/products with the
// same arguments (relevance is then newest first).
func searchProducts(req *Request, args *schema.Args, info *schema.Tenant) Response {
	return productPage(req, args, info, args.Str("q"))
}

// productPage renders a page of a catalog query in the commerce Page envelope.
//
// A page of the plain listing depends on the listing's counter and on the item counters of the
// products it shows, not on the whole catalog's counter: a write to one product refreshes the
// pages that show it, and every page only when the listing itself changes (a product added,
// removed, unpublished). Which products a page shows is only known from a snapshot, so one is
// read to find them, their counters are loaded, and the page is rendered from a snapshot read
// after that (as productBySlug does). Any other query depends on the whole catalog.
func productPage(req *Request, args *schema.Args, info *schema.Tenant, text string) Response {
	d := deps(req.Tenant, listingClasses)
	catalog := req.Tenant.Counter(replica.Catalog)
	catalogAt := catalog.Load()
	s := req.Tenant.Snapshot()
	pr, err := pricing(s, info, args.Str("currency"))
	if err != nil {
		return Response{Err: err}
	}
	q, err := catalogQueryOf(s, args, text)
	if err != nil {
		return Response{Err: err}
	}
	var items []*schema.Product
	var total int
	if q.plain() {
		first := s
		items, total = s.Products(q.offset, q.limit)
		for _, p := range items {
			ctr := req.Tenant.ItemCounter(schema.KindProduct, int64(p.ID))
			d = append(d, cache.Dep{Ctr: ctr, Val: ctr.Load()})
		}
		// Unchanged since (the usual case), the page found is the page to render.
		if s = req.Tenant.Snapshot(); s != first {
			if pr, err = pricing(s, info, args.Str("currency")); err != nil {
				return Response{Err: err}
			}
			items, total = findProducts(s, pr, q)
		}
	} else {
		d = append(d, cache.Dep{Ctr: catalog, Val: catalogAt})
		items, total = findProducts(s, pr, q)
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	out := schema.Page[schema.ProductView]{Data: make([]schema.ProductView, 0, len(items)), Page: page, PerPage: perPage, Total: total}
	out.TotalPages = (total + perPage - 1) / perPage
	for _, p := range items {
		out.Data = append(out.Data, schema.RenderProduct(p, s.Variants(p.ID), s.Category, pr, info.BaseURL, false))
	}
	setPageLinks(&out.Next, &out.Prev, req, args, info, page, out.TotalPages, total)
	return priced(ok(out, d), pr)
}

// setPageLinks sets a Page's next and prev URLs: the route's path with the arguments the caller
// gave and the other page number.
func setPageLinks(next, prev **string, req *Request, args *schema.Args, info *schema.Tenant, page, totalPages, total int) {
	query := givenQuery(req.Route, args)
	if page < totalPages {
		u := schema.PageURL(info.BaseURL, req.Route.Path, query, page+1)
		*next = &u
	}
	if page > 1 && total > 0 {
		u := schema.PageURL(info.BaseURL, req.Route.Path, query, min(page-1, max(totalPages, 1)))
		*prev = &u
	}
}

// givenQuery renders the arguments the caller gave, but page, in declaration order and in their
// normalised form, as an encoded query string for pagination links.
func givenQuery(r *schema.Route, args *schema.Args) string {
	var parts []string
	for _, d := range r.Args {
		v := args.Get(d.Name)
		if !v.Given || d.Name == "page" {
			continue
		}
		var val string
		switch d.Type {
		case schema.ArgInt:
			val = strconv.FormatInt(v.Int, 10)
		case schema.ArgBool:
			val = strconv.FormatBool(v.Bool)
		case schema.ArgString:
			val = url.QueryEscape(v.Str)
		case schema.ArgIntList:
			items := make([]string, len(v.Ints))
			for i, n := range v.Ints {
				items[i] = strconv.FormatInt(n, 10)
			}
			val = strings.Join(items, ",")
		case schema.ArgStringList:
			items := make([]string, len(v.Strs))
			for i, s := range v.Strs {
				items[i] = url.QueryEscape(s)
			}
			val = strings.Join(items, ",")
		}
		parts = append(parts, d.Name+"="+val)
	}
	return strings.Join(parts, "&")
}

// autocomplete answers /api/search/autocomplete: products whose title has words starting with
// q's (see search.Index.Suggest). A blank q suggests nothing.
func autocomplete(req *Request, args *schema.Args, info *schema.Tenant) Response {
	d := deps(req.Tenant, []replica.Class{replica.Catalog})
	ix, _ := req.Tenant.Snapshot().SearchIndex()
	sugs := ix.Suggest(args.Str("q"), int(args.Int("limit")))
	out := schema.List[schema.SuggestionView]{Data: make([]schema.SuggestionView, 0, len(sugs))}
	for _, sg := range sugs {
		out.Data = append(out.Data, schema.SuggestionView{ID: sg.ID, Slug: sg.Slug, Title: sg.Title, URL: info.BaseURL + "/api/products/" + sg.Slug})
	}
	return ok(out, d)
}

// blogPosts answers /api/posts: the published posts, newest first, in the commerce shape.
// Password-protected posts are listed without their content, as the CMS lists them.
func blogPosts(req *Request, args *schema.Args, info *schema.Tenant) Response {
	d := deps(req.Tenant, []replica.Class{replica.Posts})
	s := req.Tenant.Snapshot()
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	posts, total := s.Posts(replica.PostQuery{Offset: (page - 1) * perPage, Limit: perPage})
	st := site(info)
	out := schema.Page[schema.BlogPostView]{Data: make([]schema.BlogPostView, 0, len(posts)), Page: page, PerPage: perPage, Total: total}
	out.TotalPages = (total + perPage - 1) / perPage
	for _, p := range posts {
		var featured *schema.Post
		if p.FeaturedMedia != 0 {
			if att := s.Post(p.FeaturedMedia, replica.Public); att != nil && att.Public() {
				featured = att
			}
		}
		v := schema.RenderBlogPost(p, featured, st)
		if a := s.Author(p.Author); a != nil {
			v.Author.Name = &a.Name
		}
		out.Data = append(out.Data, v)
	}
	setPageLinks(&out.Next, &out.Prev, req, args, info, page, out.TotalPages, total)
	return ok(out, d)
}
