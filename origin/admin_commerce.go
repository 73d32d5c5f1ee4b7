package origin

import (
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// adminCommerceHandlers registers the staff routes of what checkout applies: coupons, gift
// cards, shipping methods, and tax and lifetime settings. None of it is replicated: carts and
// checkouts read it at the origin, so a change applies to the next cart read.
func (s *Server) adminCommerceHandlers() {
	s.bind("admin.coupons.list", s.listCoupons)
	s.bind("admin.coupons.get", s.getCoupon)
	s.bind("admin.coupons.put", s.putCoupon)
	s.bind("admin.coupons.delete", s.deleteCoupon)
	s.bind("admin.giftcards.list", s.listGiftCards)
	s.bind("admin.giftcards.create", s.issueGiftCard)
	s.bind("admin.giftcards.get", s.getGiftCard)
	s.bind("admin.giftcards.update", s.updateGiftCard)
	s.bind("admin.shipping.list", s.listShippingMethods)
	s.bind("admin.shipping.put", s.putShippingMethod)
	s.bind("admin.shipping.delete", s.deleteShippingMethod)
	s.bind("admin.settings.get", s.getSettings)
	s.bind("admin.settings.put", s.putSettings)
}

// CouponInput is the body of PUT /api/admin/coupons/{code}: the whole coupon; absent fields take
// their defaults (active true, no limits, no dates, every product).
type CouponInput struct {
	Kind             *string    `json:"kind" doc:"percent or fixed; empty or absent for a free-shipping coupon with value 0"`
	Value            *int64     `json:"value" doc:"percent: basis points (1000 = 10%); fixed: minor units of the default currency"`
	FreeShipping     *bool      `json:"free_shipping"`
	MinSubtotal      *int64     `json:"min_subtotal" doc:"minor units of the default currency"`
	ProductIDs       *[]int64   `json:"product_ids" doc:"at most 1000; empty or absent: every product"`
	StartsAt         *time.Time `json:"starts_at"`
	EndsAt           *time.Time `json:"ends_at"`
	UsageLimit       *int64     `json:"usage_limit" doc:"at least 1; absent: unlimited"`
	PerCustomerLimit *int64     `json:"per_customer_limit" doc:"at least 1; absent: unlimited"`
	Active           *bool      `json:"active"`
}

func (s *Server) listCoupons(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]*store.Coupon, error) { return tx.Coupons(ctx, rq.Info) })
	s.answer(ctx, rq, err, schema.List[*store.Coupon]{Data: nonNil(out)})
}

var errCouponNotFound = &schema.Error{Code: schema.CodeNotFound, Message: "coupon not found"}

func (s *Server) getCoupon(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var out *store.Coupon
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Coupon(ctx, rq.Info, pipeline.Param(ctx, "code"))
		if err == nil && out == nil {
			err = errCouponNotFound
		}
		return err
	})
	s.answer(ctx, rq, err, out)
}

func (s *Server) putCoupon(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	code, err := store.NormalizeCouponCode(pipeline.Param(ctx, "code"))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in CouponInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	c := &store.Coupon{Code: code, Active: true}
	if in.Kind != nil {
		c.Kind = schema.DiscountKind(*in.Kind)
	}
	set(&c.Value, in.Value)
	set(&c.FreeShipping, in.FreeShipping)
	set(&c.MinSubtotal, in.MinSubtotal)
	set(&c.ProductIDs, in.ProductIDs)
	c.StartsAt, c.EndsAt, c.UsageLimit, c.PerCustomerLimit = in.StartsAt, in.EndsAt, in.UsageLimit, in.PerCustomerLimit
	set(&c.Active, in.Active)
	status := 200
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		had, err := tx.Coupon(ctx, rq.Info, code)
		if err != nil {
			return err
		}
		status = 200
		if had == nil {
			status = 201
		}
		return tx.PutCoupon(ctx, rq.Info, c)
	})
	s.Respond(ctx, rq, status, err, c)
}

func (s *Server) deleteCoupon(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	err := s.db.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteCoupon(ctx, rq.Info, pipeline.Param(ctx, "code")) })
	s.NoContentOr(ctx, rq, err)
}

func (s *Server) listGiftCards(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	last4 := strings.ToUpper(strings.TrimSpace(args.Str("last4")))
	if last4 != "" && len(last4) != 4 {
		s.Fail(ctx, rq, schema.Invalid("last4", "last4 is the last four characters of a gift card code"))
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[*store.IssuedGiftCard]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		gs, total, err := tx.GiftCards(ctx, rq.Info, last4, (page-1)*perPage, perPage)
		out = schema.Page[*store.IssuedGiftCard]{Data: gs, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.answer(ctx, rq, err, out)
}

// GiftCardInput is the body of POST /api/admin/gift-cards.
type GiftCardInput struct {
	// Amount is the initial balance in minor units of Currency (required).
	Amount *int64 `json:"amount"`
	// Currency defaults to the store's default currency.
	Currency  *string    `json:"currency"`
	ExpiresAt *time.Time `json:"expires_at"`
	// Code is the merchant's own code (8 to 64 characters); a random one is made when absent.
	Code *string `json:"code"`
	Note *string `json:"note"`
}

// GiftCardWithCode is the answer to issuing a gift card: the only time its code is shown.
type GiftCardWithCode struct {
	Code     string                `json:"code"`
	GiftCard *store.IssuedGiftCard `json:"gift_card"`
}

func (s *Server) issueGiftCard(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in GiftCardInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Amount == nil {
		s.Fail(ctx, rq, schema.Invalid("amount", "amount is required: the balance in minor units"))
		return
	}
	currency, code, note := rq.Info.DefaultCurrency(), "", ""
	if in.Currency != nil {
		currency = strings.ToUpper(*in.Currency)
	}
	set(&code, in.Code)
	set(&note, in.Note)
	var out GiftCardWithCode
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out.Code, out.GiftCard, err = tx.IssueGiftCard(ctx, rq.Info, code, currency, *in.Amount, in.ExpiresAt, note)
		return err
	})
	s.Respond(ctx, rq, 201, err, out)
}

func (s *Server) getGiftCard(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) (*store.IssuedGiftCard, error) {
		return tx.GiftCardByID(ctx, rq.Info, pipeline.Param(ctx, "id"))
	})
	s.answer(ctx, rq, err, out)
}

// GiftCardUpdate is the body of PATCH /api/admin/gift-cards/{id}; absent fields keep their
// values. Balances are not edited: they move only with orders.
type GiftCardUpdate struct {
	Active *bool   `json:"active"`
	Note   *string `json:"note" doc:"at most 1000 characters"`
}

// updateGiftCard handles PATCH /api/admin/gift-cards/{id}.
func (s *Server) updateGiftCard(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in GiftCardUpdate
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) (*store.IssuedGiftCard, error) {
		return tx.UpdateGiftCard(ctx, rq.Info, pipeline.Param(ctx, "id"), in.Active, in.Note)
	})
	s.Respond(ctx, rq, 200, err, out)
}

func (s *Server) listShippingMethods(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]store.ShippingMethodRow, error) {
		return tx.ShippingMethods(ctx, rq.Info)
	})
	s.answer(ctx, rq, err, schema.List[store.ShippingMethodRow]{Data: nonNil(out)})
}

// ShippingMethodInput is the body of PUT /api/admin/shipping-methods/{code}: name and prices are
// required; free_over defaults to never, position to 0, active to true.
type ShippingMethodInput struct {
	Name     *string        `json:"name" doc:"required; at most 200 characters"`
	Prices   *schema.Prices `json:"prices" doc:"required: price in minor units by currency code, at least one"`
	FreeOver *schema.Prices `json:"free_over" doc:"free at or above this subtotal, by currency; absent: never"`
	Position *int           `json:"position" doc:"sort order, 0 to 10000"`
	Active   *bool          `json:"active"`
}

func (s *Server) putShippingMethod(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ShippingMethodInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Name == nil || in.Prices == nil {
		s.Fail(ctx, rq, schema.Invalid("name", "name and prices are required"))
		return
	}
	m := store.ShippingMethodRow{Code: pipeline.Param(ctx, "code"), Name: *in.Name, Prices: *in.Prices, Active: true}
	set(&m.FreeOver, in.FreeOver)
	set(&m.Position, in.Position)
	set(&m.Active, in.Active)
	if m.Position < 0 || m.Position > 10_000 {
		s.Fail(ctx, rq, schema.Invalid("position", "position must be between 0 and 10000"))
		return
	}
	status := 200
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		ms, err := tx.ShippingMethods(ctx, rq.Info)
		if err != nil {
			return err
		}
		status = 201
		for _, have := range ms {
			if have.Code == m.Code {
				status = 200
			}
		}
		return tx.PutShippingMethod(ctx, rq.Info, m)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if m.FreeOver == nil {
		m.FreeOver = schema.Prices{}
	}
	s.Reply(ctx, rq, status, m)
}

func (s *Server) deleteShippingMethod(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	err := s.db.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteShippingMethod(ctx, rq.Info, pipeline.Param(ctx, "code")) })
	s.NoContentOr(ctx, rq, err)
}

// CommerceSettings is the tenant's commerce settings as the admin API shows and takes them.
type CommerceSettings struct {
	// TaxBasisPoints is the tax rate: 1075 is 10.75%.
	TaxBasisPoints int64 `json:"tax_basis_points" doc:"the tax rate: 1075 is 10.75%"`
	// TaxInclusive says prices include tax (VAT style).
	TaxInclusive  bool `json:"tax_inclusive"`
	TaxOnShipping bool `json:"tax_on_shipping"`
	// CartTTLSeconds is how long an idle cart lives; TokenTTLSeconds an idle customer session.
	CartTTLSeconds  int64 `json:"cart_ttl_seconds"`
	TokenTTLSeconds int64 `json:"token_ttl_seconds"`
}

func viewSettings(st store.Settings) CommerceSettings {
	return CommerceSettings{TaxBasisPoints: st.TaxBasisPoints, TaxInclusive: st.TaxInclusive, TaxOnShipping: st.TaxOnShipping,
		CartTTLSeconds: int64(st.CartTTL / time.Second), TokenTTLSeconds: int64(st.TokenTTL / time.Second)}
}

func (s *Server) getSettings(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var out CommerceSettings
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		st, err := tx.Settings(ctx, rq.Info)
		out = viewSettings(st)
		return err
	})
	s.answer(ctx, rq, err, out)
}

// CommerceSettingsInput is the body of PUT /api/admin/settings; absent fields keep their values.
type CommerceSettingsInput struct {
	TaxBasisPoints  *int64 `json:"tax_basis_points" doc:"0 to 100000 (1075 = 10.75%)"`
	TaxInclusive    *bool  `json:"tax_inclusive"`
	TaxOnShipping   *bool  `json:"tax_on_shipping"`
	CartTTLSeconds  *int64 `json:"cart_ttl_seconds" doc:"3600 (an hour) to 31536000 (a year)"`
	TokenTTLSeconds *int64 `json:"token_ttl_seconds" doc:"3600 (an hour) to 31536000 (a year)"`
}

// Lifetime bounds of carts and customer sessions, in seconds (the store's).
const (
	minTTLSeconds = 3600
	maxTTLSeconds = 365 * 24 * 3600
)

func (s *Server) putSettings(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CommerceSettingsInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"cart_ttl_seconds", in.CartTTLSeconds}, {"token_ttl_seconds", in.TokenTTLSeconds}} {
		if f.v != nil && (*f.v < minTTLSeconds || *f.v > maxTTLSeconds) {
			s.Fail(ctx, rq, schema.Invalid(f.name, "%s must be between %d (an hour) and %d (a year)", f.name, int64(minTTLSeconds), int64(maxTTLSeconds)))
			return
		}
	}
	var out CommerceSettings
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		st, err := tx.Settings(ctx, rq.Info)
		if err != nil {
			return err
		}
		set(&st.TaxBasisPoints, in.TaxBasisPoints)
		set(&st.TaxInclusive, in.TaxInclusive)
		set(&st.TaxOnShipping, in.TaxOnShipping)
		if in.CartTTLSeconds != nil {
			st.CartTTL = time.Duration(*in.CartTTLSeconds) * time.Second
		}
		if in.TokenTTLSeconds != nil {
			st.TokenTTL = time.Duration(*in.TokenTTLSeconds) * time.Second
		}
		out = viewSettings(st)
		return tx.PutSettings(ctx, rq.Info, st)
	})
	s.Respond(ctx, rq, 200, err, out)
}
