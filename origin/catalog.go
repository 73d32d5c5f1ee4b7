package origin

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// ProductInput is the body of product create and update: every field optional, so that PATCH
// takes any subset. Create requires title and prices.
type ProductInput struct {
	Slug        *string               `json:"slug"`
	Title       *string               `json:"title"`
	Description *string               `json:"description"`
	Status      *schema.ProductStatus `json:"status"`
	Featured    *bool                 `json:"featured"`
	Prices      *schema.Prices        `json:"prices"`
	Images      *[]schema.Image       `json:"images"`
	CategoryIDs *[]schema.CategoryID  `json:"category_ids"`
	// Variants is accepted on create only: the product's variants, created with it.
	Variants *[]VariantInput `json:"variants"`
}

func (in *ProductInput) apply(p *schema.Product) {
	set(&p.Slug, in.Slug)
	set(&p.Title, in.Title)
	set(&p.Description, in.Description)
	set(&p.Status, in.Status)
	set(&p.Featured, in.Featured)
	set(&p.Prices, in.Prices)
	set(&p.Images, in.Images)
	set(&p.CategoryIDs, in.CategoryIDs)
}

// VariantInput is the body of variant create and update (and an element of a product create's
// variants): every field optional; create requires sku.
type VariantInput struct {
	SKU      *string          `json:"sku"`
	Title    *string          `json:"title"`
	Options  *[]schema.Option `json:"options"`
	Prices   *schema.Prices   `json:"prices"`
	Stock    *int64           `json:"stock"`
	Position *int             `json:"position"`
}

func (in *VariantInput) apply(v *store.StockedVariant) {
	set(&v.SKU, in.SKU)
	set(&v.Title, in.Title)
	set(&v.Options, in.Options)
	set(&v.Prices, in.Prices)
	set(&v.Stock, in.Stock)
	set(&v.Position, in.Position)
}

// CategoryInput is the body of category create and update: every field optional, so that PATCH
// takes any subset. Create requires name; the slug is derived from it when absent.
type CategoryInput struct {
	Slug        *string            `json:"slug"`
	Name        *string            `json:"name"`
	Description *string            `json:"description"`
	ParentID    *schema.CategoryID `json:"parent_id"`
	Position    *int               `json:"position"`
}

// CurrencyInput is the body of currency create and update: create requires code, name, exponent
// and rate; an update may not change the code.
type CurrencyInput struct {
	Code     *string `json:"code"`
	Name     *string `json:"name"`
	Symbol   *string `json:"symbol"`
	Exponent *int    `json:"exponent"`
	Rate     *string `json:"rate"`
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// AdminProduct is a product as the admin API shows it: with its variants and their stock.
type AdminProduct struct {
	*schema.Product
	Variants []*store.StockedVariant `json:"variants"`
}

func (s *Server) catalogHandlers() {
	s.bind("admin.products.list", s.listProducts)
	s.bind("admin.products.create", s.createProduct)
	s.bind("admin.products.get", s.getProduct)
	s.bind("admin.products.update", s.updateProduct)
	s.bind("admin.products.delete", s.deleteProduct)
	s.bind("admin.variants.list", s.listVariants)
	s.bind("admin.variants.create", s.createVariant)
	s.bind("admin.variants.get", s.getVariant)
	s.bind("admin.variants.update", s.updateVariant)
	s.bind("admin.variants.delete", s.deleteVariant)
	s.bind("admin.categories.create", s.createCategory)
	s.bind("admin.categories.update", s.updateCategory)
	s.bind("admin.categories.delete", s.deleteCategory)
	s.bind("admin.currencies.create", s.createCurrency)
	s.bind("admin.currencies.update", s.updateCurrency)
	s.bind("admin.currencies.delete", s.deleteCurrency)
}

func (s *Server) listProducts(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[AdminProduct]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		ps, total, err := tx.ListProducts(ctx, rq.Info, args.Str("status"), (page-1)*perPage, perPage)
		if err != nil {
			return err
		}
		out = schema.Page[AdminProduct]{Data: make([]AdminProduct, 0, len(ps)), Page: page, PerPage: perPage, Total: total,
			TotalPages: (total + perPage - 1) / perPage}
		for _, p := range ps {
			vs, err := tx.Variants(ctx, rq.Info, p.ID)
			if err != nil {
				return err
			}
			out.Data = append(out.Data, AdminProduct{p, nonNil(vs)})
		}
		return nil
	})
	s.answer(ctx, rq, err, out)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// answer writes a read-only admin answer or its error.
func (s *Server) answer(ctx *fasthttp.RequestCtx, rq *handler.Request, err error, v any) {
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	pipeline.SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
	pipeline.WriteJSON(ctx, rq.Iface, 200, v)
	s.http.Observe(ctx, pipeline.RouteIndex(rq.Route), 200)
}

// write runs fn as one replicated write of the request's store and answers with status and the
// value fn left in out. The transaction waits for the store's write queue before it begins
// (store.DB.TenantWriteTx): under a burst of writes to one store, none is begun only to be rolled
// back when it finds the queue held.
func (s *Server) write(ctx *fasthttp.RequestCtx, rq *handler.Request, status int, fn func(tx *store.Tx) (any, error)) {
	var out any
	commits, err := s.db.TenantWriteTx(ctx, rq.Info, func(tx *store.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, status, out)
}

func (s *Server) createProduct(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ProductInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Title == nil {
		s.Fail(ctx, rq, schema.Invalid("title", "title is required"))
		return
	}
	if in.Prices == nil {
		s.Fail(ctx, rq, schema.Invalid("prices", "prices is required"))
		return
	}
	s.write(ctx, rq, fasthttp.StatusCreated, func(tx *store.Tx) (any, error) {
		p := &schema.Product{Status: schema.ProductDraft}
		in.apply(p)
		if in.Slug == nil {
			slug, err := s.freeSlug(ctx, tx, rq.Info, schema.Slugify(p.Title))
			if err != nil {
				return nil, err
			}
			p.Slug = slug
		}
		if err := tx.CreateProduct(ctx, rq.Info, p); err != nil {
			return nil, err
		}
		variants := []VariantInput{{}}
		if in.Variants != nil {
			variants = *in.Variants
		}
		if len(variants) > store.MaxVariantsPerProduct {
			return nil, schema.Invalid("variants", "a product has at most %d variants", store.MaxVariantsPerProduct)
		}
		out := AdminProduct{Product: p, Variants: []*store.StockedVariant{}}
		for i, vin := range variants {
			v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, Position: i}}
			vin.apply(v)
			if v.SKU == "" && vin.SKU == nil {
				v.SKU = defaultSKU(p.Slug, i, len(variants))
			}
			if err := tx.CreateVariant(ctx, rq.Info, v); err != nil {
				return nil, prefixField(err, "variants["+strconv.Itoa(i)+"]")
			}
			out.Variants = append(out.Variants, v)
		}
		return out, nil
	})
}

// freeSlug returns base, or base-2, base-3… when taken: a slug derived from a title never
// conflicts (an explicit slug that conflicts is a 409). A reserved slug (a static segment of the
// product routes) is never derived.
func (s *Server) freeSlug(ctx *fasthttp.RequestCtx, tx *store.Tx, t *schema.Tenant, base string) (string, error) {
	if base == "" {
		base = "product"
	}
	for _, r := range schema.ReservedProductSlugs() {
		if base == r {
			base += "-product"
		}
	}
	return tx.FreeProductSlug(ctx, t, base)
}

func defaultSKU(slug string, i, n int) string {
	sku := strings.ToUpper(slug)
	if len(sku) > 90 {
		sku = sku[:90]
	}
	if n > 1 {
		sku += "-" + strconv.Itoa(i+1)
	}
	return sku
}

// prefixField names the element of a list a validation error came from.
func prefixField(err error, prefix string) error {
	if e, ok := err.(*schema.Error); ok && e.Field != "" {
		c := *e
		c.Field = prefix + "." + e.Field
		c.Message = prefix + ": " + e.Message
		return &c
	}
	return err
}

func (s *Server) getProduct(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "product")
	var out AdminProduct
	if err == nil {
		err = s.db.Tx(ctx, func(tx *store.Tx) error {
			p, err := tx.Product(ctx, rq.Info, schema.ProductID(id))
			if err != nil {
				return err
			}
			vs, err := tx.Variants(ctx, rq.Info, p.ID)
			out = AdminProduct{p, nonNil(vs)}
			return err
		})
	}
	s.answer(ctx, rq, err, out)
}

func (s *Server) updateProduct(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "product")
	var in ProductInput
	if err == nil {
		err = handler.JSONBody(ctx, &in)
	}
	if err == nil && in.Variants != nil {
		err = schema.Invalid("variants", "variants are changed through /api/admin/variants/{id}")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		// One round trip reads the product and its variants and takes the store's log.
		old, vs, err := tx.ProductForUpdate(ctx, rq.Info, schema.ProductID(id))
		if err != nil {
			return nil, err
		}
		p := *old
		in.apply(&p)
		if err := tx.UpdateProductVariants(ctx, rq.Info, old, &p, vs); err != nil {
			return nil, err
		}
		return AdminProduct{&p, nonNil(vs)}, nil
	})
}

func (s *Server) deleteProduct(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	s.remove(ctx, rq, "product", func(tx *store.Tx, id int64) error {
		_, err := tx.DeleteProduct(ctx, rq.Info, schema.ProductID(id))
		return err
	})
}

func (s *Server) listVariants(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "product")
	var out schema.List[*store.StockedVariant]
	if err == nil {
		err = s.db.Tx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Product(ctx, rq.Info, schema.ProductID(id)); err != nil {
				return err
			}
			vs, err := tx.Variants(ctx, rq.Info, schema.ProductID(id))
			out.Data = nonNil(vs)
			return err
		})
	}
	s.answer(ctx, rq, err, out)
}

func (s *Server) createVariant(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "product")
	var in VariantInput
	if err == nil {
		err = handler.JSONBody(ctx, &in)
	}
	if err == nil && in.SKU == nil {
		err = schema.Invalid("sku", "sku is required")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, fasthttp.StatusCreated, func(tx *store.Tx) (any, error) {
		v := &store.StockedVariant{Variant: schema.Variant{ProductID: schema.ProductID(id)}}
		in.apply(v)
		return v, tx.CreateVariant(ctx, rq.Info, v)
	})
}

func (s *Server) getVariant(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "variant")
	var out *store.StockedVariant
	if err == nil {
		err = s.db.Tx(ctx, func(tx *store.Tx) error {
			var err error
			out, err = tx.Variant(ctx, rq.Info, schema.VariantID(id))
			return err
		})
	}
	s.answer(ctx, rq, err, out)
}

func (s *Server) createCategory(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CategoryInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Name == nil {
		s.Fail(ctx, rq, schema.Invalid("name", "name is required"))
		return
	}
	s.write(ctx, rq, fasthttp.StatusCreated, func(tx *store.Tx) (any, error) {
		c := &schema.Category{}
		in.apply(c)
		if in.Slug == nil {
			c.Slug = schema.Slugify(c.Name)
		}
		return c, tx.CreateCategory(ctx, rq.Info, c)
	})
}

func (in *CategoryInput) apply(c *schema.Category) {
	set(&c.Slug, in.Slug)
	set(&c.Name, in.Name)
	set(&c.Description, in.Description)
	set(&c.ParentID, in.ParentID)
	set(&c.Position, in.Position)
}

func (in *CurrencyInput) apply(c *schema.Currency) {
	set(&c.Code, in.Code)
	set(&c.Name, in.Name)
	set(&c.Symbol, in.Symbol)
	set(&c.Exponent, in.Exponent)
	set(&c.Rate, in.Rate)
}

func (s *Server) createCurrency(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CurrencyInput
	err := handler.JSONBody(ctx, &in)
	if err == nil && (in.Code == nil || in.Name == nil || in.Exponent == nil || in.Rate == nil) {
		err = schema.Invalid("code", "code, name, exponent and rate are required")
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, fasthttp.StatusCreated, func(tx *store.Tx) (any, error) {
		c := &schema.Currency{}
		in.apply(c)
		return c, tx.CreateCurrency(ctx, rq.Info, c)
	})
}

// patchBody decodes the body of a partial update: any subset of the entity's writable fields.
type patchBody[T any] interface {
	apply(*T)
}

// update answers a partial update: the body is decoded first, then, in one write transaction,
// the entity is loaded, the body applied to a copy, and the copy saved over the original.
func update[T any, In patchBody[T]](s *Server, ctx *fasthttp.RequestCtx, rq *handler.Request, in In, check func() error,
	load func(tx *store.Tx) (*T, error), save func(tx *store.Tx, old, next *T) error) {
	err := handler.JSONBody(ctx, in)
	if err == nil && check != nil {
		err = check()
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		old, err := load(tx)
		if err != nil {
			return nil, err
		}
		next := *old
		in.apply(&next)
		return &next, save(tx, old, &next)
	})
}

// DeletedID answers a delete by integer id.
type DeletedID struct {
	Deleted bool  `json:"deleted" doc:"Always true."`
	ID      int64 `json:"id"`
}

// DeletedCurrency answers a currency delete.
type DeletedCurrency struct {
	Code    string `json:"code"`
	Deleted bool   `json:"deleted" doc:"Always true."`
}

// remove answers a delete by integer id.
func (s *Server) remove(ctx *fasthttp.RequestCtx, rq *handler.Request, what string, del func(tx *store.Tx, id int64) error) {
	id, err := handler.PathID(ctx, what)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		return DeletedID{Deleted: true, ID: id}, del(tx, id)
	})
}

func (s *Server) updateVariant(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "variant")
	update(s, ctx, rq, &VariantInput{}, func() error { return err },
		func(tx *store.Tx) (*store.StockedVariant, error) {
			return tx.Variant(ctx, rq.Info, schema.VariantID(id))
		},
		func(tx *store.Tx, old, next *store.StockedVariant) error {
			return tx.UpdateVariant(ctx, rq.Info, old, next)
		})
}

func (s *Server) deleteVariant(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	s.remove(ctx, rq, "variant", func(tx *store.Tx, id int64) error { return tx.DeleteVariant(ctx, rq.Info, schema.VariantID(id)) })
}

func (s *Server) updateCategory(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "category")
	update(s, ctx, rq, &CategoryInput{}, func() error { return err },
		func(tx *store.Tx) (*schema.Category, error) { return tx.Category(ctx, rq.Info, schema.CategoryID(id)) },
		func(tx *store.Tx, old, next *schema.Category) error {
			return tx.UpdateCategory(ctx, rq.Info, old, next)
		})
}

func (s *Server) deleteCategory(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	s.remove(ctx, rq, "category", func(tx *store.Tx, id int64) error { return tx.DeleteCategory(ctx, rq.Info, schema.CategoryID(id)) })
}

func (s *Server) updateCurrency(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	code := pipeline.Param(ctx, "code")
	in := &CurrencyInput{}
	update(s, ctx, rq, in, func() error {
		if in.Code != nil && *in.Code != code {
			return schema.Invalid("code", "a currency's code cannot change")
		}
		return nil
	},
		func(tx *store.Tx) (*schema.Currency, error) { return tx.Currency(ctx, rq.Info, code) },
		func(tx *store.Tx, old, next *schema.Currency) error {
			return tx.UpdateCurrency(ctx, rq.Info, old, next)
		})
}

func (s *Server) deleteCurrency(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	code := pipeline.Param(ctx, "code")
	s.write(ctx, rq, 200, func(tx *store.Tx) (any, error) {
		return DeletedCurrency{Code: code, Deleted: true}, tx.DeleteCurrency(ctx, rq.Info, code)
	})
}
