package origin

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

func (s *Server) merchHandlers() {
	s.bind("products.reviews.create", s.customers.WithCustomer(s.createReview))
	s.bind("admin.flashsales.list", s.listFlashSales)
	s.bind("admin.flashsales.create", s.putFlashSale)
	s.bind("admin.flashsales.get", s.getFlashSale)
	s.bind("admin.flashsales.update", s.putFlashSale)
	s.bind("admin.flashsales.delete", s.deleteFlashSale)
	s.bind("admin.sections.list", s.listSections)
	s.bind("admin.sections.create", s.putSection)
	s.bind("admin.sections.update", s.putSection)
	s.bind("admin.sections.delete", s.deleteSection)
	s.bind("admin.reviews.list", s.listReviews)
	s.bind("admin.reviews.moderate", s.moderateReview)
}

// FlashSaleInput is the body of flash sale create and replace: every field but product_ids is
// required; no product_ids (or an empty list) puts the whole catalog on sale.
type FlashSaleInput struct {
	Slug       *string             `json:"slug"`
	Title      *string             `json:"title"`
	PercentOff *int64              `json:"percent_off"`
	ProductIDs *[]schema.ProductID `json:"product_ids"`
	StartsAt   *time.Time          `json:"starts_at"`
	EndsAt     *time.Time          `json:"ends_at"`
}

func (s *Server) listFlashSales(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]*schema.FlashSale, error) {
		return tx.FlashSales(ctx, rq.Info, false)
	})
	s.answer(ctx, rq, err, schema.List[*schema.FlashSale]{Data: nonNil(out)})
}

func (s *Server) getFlashSale(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "flash sale")
	var out *schema.FlashSale
	if err == nil {
		err = s.db.Tx(ctx, func(tx *store.Tx) error {
			out, err = tx.FlashSale(ctx, rq.Info, schema.FlashSaleID(id))
			return err
		})
	}
	s.answer(ctx, rq, err, out)
}

// putFlashSale creates (POST) or replaces (PUT /{id}) a flash sale: every field is required.
func (s *Server) putFlashSale(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var id int64
	status := 201
	if rq.Route.Method == "PUT" {
		var err error
		if id, err = handler.PathID(ctx, "flash sale"); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		status = 200
	}
	var in FlashSaleInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Slug == nil || in.Title == nil || in.PercentOff == nil || in.StartsAt == nil || in.EndsAt == nil {
		s.Fail(ctx, rq, schema.Invalid("body", "slug, title, percent_off, starts_at and ends_at are required"))
		return
	}
	f := &schema.FlashSale{ID: schema.FlashSaleID(id), Slug: *in.Slug, Title: *in.Title, PercentOff: *in.PercentOff,
		StartsAt: *in.StartsAt, EndsAt: *in.EndsAt}
	if in.ProductIDs != nil {
		f.ProductIDs = *in.ProductIDs
	}
	s.write(ctx, rq, status, func(tx *store.Tx) (any, error) {
		return f, tx.PutFlashSale(ctx, rq.Info, f)
	})
}

func (s *Server) deleteFlashSale(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "flash sale")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		return DeletedID{Deleted: true, ID: id}, tx.DeleteFlashSale(ctx, rq.Info, schema.FlashSaleID(id))
	})
}

// SectionInput is the body of section create and replace: kind is required (hero, collection,
// banner, products or text); active defaults to true.
type SectionInput struct {
	Kind     *string          `json:"kind"`
	Title    *string          `json:"title"`
	Position *int             `json:"position"`
	Content  *json.RawMessage `json:"content"`
	Active   *bool            `json:"active"`
}

func (s *Server) listSections(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]*schema.Section, error) { return tx.Sections(ctx, rq.Info) })
	s.answer(ctx, rq, err, schema.List[*schema.Section]{Data: nonNil(out)})
}

// putSection creates (POST) or replaces (PUT /{id}) a section; kind is required, active
// defaults to true.
func (s *Server) putSection(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var id int64
	status := 201
	if rq.Route.Method == "PUT" {
		var err error
		if id, err = handler.PathID(ctx, "section"); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		status = 200
	}
	var in SectionInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Kind == nil {
		s.Fail(ctx, rq, schema.Invalid("kind", "kind is required: hero, collection, banner, products or text"))
		return
	}
	sec := &schema.Section{ID: schema.SectionID(id), Kind: *in.Kind, Active: true}
	set(&sec.Title, in.Title)
	set(&sec.Position, in.Position)
	set(&sec.Content, in.Content)
	set(&sec.Active, in.Active)
	s.write(ctx, rq, status, func(tx *store.Tx) (any, error) {
		return sec, tx.PutSection(ctx, rq.Info, sec)
	})
}

func (s *Server) deleteSection(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "section")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		return DeletedID{Deleted: true, ID: id}, tx.DeleteSection(ctx, rq.Info, schema.SectionID(id))
	})
}

// ReviewInput is the body of POST /api/products/{slug}/reviews: rating (1 to 5) and body are
// required; author defaults to the customer's name.
type ReviewInput struct {
	Rating *int    `json:"rating"`
	Title  *string `json:"title"`
	Body   *string `json:"body"`
	Author *string `json:"author"`
}

// ReviewCreated answers a review: it waits for moderation.
type ReviewCreated struct {
	ID               schema.ReviewID `json:"id"`
	Message          string          `json:"message"`
	Status           string          `json:"status" doc:"pending: the review appears once a moderator approves it."`
	VerifiedPurchase bool            `json:"verified_purchase" doc:"True when the customer bought the product in this store."`
}

// createReview handles POST /api/products/{slug}/reviews for a signed-in customer: the review
// waits for moderation; review.created is emitted.
func (s *Server) createReview(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	var in ReviewInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Rating == nil || in.Body == nil {
		s.Fail(ctx, rq, schema.Invalid("rating", "rating (1 to 5) and body are required"))
		return
	}
	r := &store.StoredReview{CustomerID: c.ID}
	r.Rating, r.Body, r.Author = *in.Rating, *in.Body, c.Name
	set(&r.Title, in.Title)
	set(&r.Author, in.Author)
	if r.Author == "" {
		r.Author = "Customer"
	}
	slug := pipeline.Param(ctx, "slug")
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var p *schema.Product
		if id, err := strconv.ParseInt(slug, 10, 64); err == nil {
			p, _ = tx.Product(ctx, rq.Info, schema.ProductID(id))
		}
		if p == nil {
			ps, err := tx.ProductsBySlug(ctx, rq.Info, []string{slug})
			if err != nil {
				return err
			}
			p = ps[slug]
		}
		if p == nil || !p.Public() {
			return &schema.Error{Code: schema.CodeNotFound, Message: "product not found"}
		}
		r.ProductID = p.ID
		return tx.CreateReview(ctx, rq.Info, r)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Reply(ctx, rq, 201, ReviewCreated{ID: r.ID, Status: r.Status, VerifiedPurchase: r.Verified,
		Message: "thank you: your review will appear once a moderator approves it"})
}

func (s *Server) listReviews(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[*store.StoredReview]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		rs, total, err := tx.Reviews(ctx, rq.Info, args.Str("status"), (page-1)*perPage, perPage)
		out = schema.Page[*store.StoredReview]{Data: rs, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.answer(ctx, rq, err, out)
}

// ReviewModeration is the body of POST /api/admin/reviews/{id}/moderate: the review's new
// status, approved, rejected or pending.
type ReviewModeration struct {
	Status *string `json:"status"`
}

func (s *Server) moderateReview(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "review")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in ReviewModeration
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Status == nil {
		s.Fail(ctx, rq, schema.Invalid("status", "status is required: approved, rejected or pending"))
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		return tx.ModerateReview(ctx, rq.Info, schema.ReviewID(id), *in.Status)
	})
}

// RefreshStats recomputes the social proof of every tenant's products and replicates the
// changed values, in transactions of at most 500 products.
func (s *Server) RefreshStats(ctx context.Context) (int, error) {
	total := 0
	for _, rt := range s.rep.Tenants() {
		info := rt.Info()
		if info == nil {
			continue
		}
		for {
			var n int
			_, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
				var err error
				n, err = tx.RefreshProductStats(ctx, info, 500)
				return err
			})
			if err != nil {
				return total, err
			}
			total += n
			if n < 500 {
				break
			}
		}
	}
	return total, nil
}
