package reads

import (
	"strconv"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// FlashSaleView is a flash sale as GET /api/flash-sales lists it.
type FlashSaleView struct {
	ID         schema.FlashSaleID `json:"id"`
	Slug       string             `json:"slug"`
	Title      string             `json:"title"`
	PercentOff int64              `json:"percent_off"`
	// Percent is PercentOff as a decimal string ("25.00").
	Percent    string             `json:"percent"`
	ProductIDs []schema.ProductID `json:"product_ids"`
	StartsAt   time.Time          `json:"starts_at"`
	EndsAt     time.Time          `json:"ends_at"`
	// Status is "active" or "upcoming" at the time of the answer.
	Status string `json:"status"`
}

// flashSales answers GET /api/flash-sales: the sales running now and those to come, by start.
// The body expires at the next start or end.
func flashSales(req *Request, info *schema.Tenant) Response {
	d := deps(req.Tenant, []replica.Class{replica.Sales})
	s := req.Tenant.Snapshot()
	now := time.Now()
	sales := s.FlashSales()
	out := schema.List[FlashSaleView]{Data: []FlashSaleView{}}
	for _, f := range sales {
		if !f.EndsAt.After(now) {
			continue
		}
		status := "upcoming"
		if f.ActiveAt(now) {
			status = "active"
		}
		out.Data = append(out.Data, FlashSaleView{ID: f.ID, Slug: f.Slug, Title: f.Title, PercentOff: f.PercentOff,
			Percent: schema.FormatMinor(f.PercentOff, 2), ProductIDs: f.ProductIDs, StartsAt: f.StartsAt, EndsAt: f.EndsAt, Status: status})
	}
	r := ok(out, d)
	r.Expires = schema.NextSaleTransition(sales, now)
	return r
}

// sections answers GET /api/storefront/sections: the active sections by position.
func sections(req *Request) Response {
	d := deps(req.Tenant, []replica.Class{replica.Sections})
	s := req.Tenant.Snapshot()
	out := schema.List[*schema.Section]{Data: s.Sections()}
	if out.Data == nil {
		out.Data = []*schema.Section{}
	}
	return ok(out, d)
}

// ReviewsPage is GET /api/products/{slug}/reviews: a page of approved reviews with the product's
// rating summary.
type ReviewsPage struct {
	schema.Page[*schema.Review]
	AverageRating *string `json:"average_rating"`
}

// productReviews answers a product's approved reviews, newest first. The body depends on the
// product's own review counter, and nothing else changes it.
func productReviews(req *Request, args *schema.Args) Response {
	first := req.Tenant.Snapshot().ProductBySlug(req.Param("slug"))
	if first == nil {
		return Response{Err: productNotFound}
	}
	d := deps(req.Tenant, nil, &cacheItem{schema.KindReview, int64(first.ID)}, &cacheItem{schema.KindStats, int64(first.ID)})
	s := req.Tenant.Snapshot()
	p := s.ProductBySlug(req.Param("slug"))
	if p == nil {
		return Response{Err: productNotFound}
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	items, total := s.Reviews(p.ID, (page-1)*perPage, perPage)
	out := ReviewsPage{Page: schema.Page[*schema.Review]{Data: items, Page: page, PerPage: perPage, Total: total,
		TotalPages: (total + perPage - 1) / perPage}}
	if out.Data == nil {
		out.Data = []*schema.Review{}
	}
	out.AverageRating = schema.RenderSocialProof(p.ID, s.Stats(p.ID)).AverageRating
	return ok(out, d)
}

// socialProof answers GET /api/products/{id}/social-proof (a slug is accepted too). The body
// depends only on the product's statistics counter: a stats batch invalidates nothing else.
func socialProof(req *Request) Response {
	key := req.Param("slug")
	find := func(s *replica.Snapshot) *schema.Product {
		if id, err := strconv.ParseInt(key, 10, 64); err == nil {
			return s.Product(schema.ProductID(id), replica.Public)
		}
		return s.ProductBySlug(key)
	}
	first := find(req.Tenant.Snapshot())
	if first == nil {
		return Response{Err: productNotFound}
	}
	d := deps(req.Tenant, nil, &cacheItem{schema.KindProduct, int64(first.ID)}, &cacheItem{schema.KindStats, int64(first.ID)})
	s := req.Tenant.Snapshot()
	p := find(s)
	if p == nil {
		return Response{Err: productNotFound}
	}
	return ok(schema.RenderSocialProof(p.ID, s.Stats(p.ID)), d)
}
