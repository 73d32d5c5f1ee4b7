package origin

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Cart field limits.
const (
	maxNotesLen       = 1000
	maxGiftMessageLen = 500
)

// Throttles kept at the origin, per client IP, so that they hold across every edge.
var (
	couponThrottle   = handler.Throttle{Name: "coupon", Limit: 20, Window: time.Minute}
	giftCardThrottle = handler.Throttle{Name: "gift-card", Limit: 10, Window: time.Minute}
)

// pricedLine is a cart line that is priced (in the totals).
type pricedLine struct {
	item    store.CartItem
	src     store.LineSource
	unit    int64        // what the line is charged per unit
	regular schema.Money // the regular price, shown as compare_at during a sale
	onSale  bool
}

// pricedCart is a cart priced at the origin from the database: its view, and what a checkout
// needs to reserve it.
type pricedCart struct {
	view      schema.CartView
	totals    schema.Totals
	lines     []pricedLine
	coupons   []*store.Coupon
	giftCards []*store.GiftCard
	cur, def  *schema.Currency
	settings  store.Settings
	// shippingRequired is true when the store has shipping methods, so an order needs one.
	shippingRequired bool
	// shipping is the chosen method with its price in the cart's currency (nil: none).
	shipping *schema.ShippingMethod
}

func money(amount int64, cur *schema.Currency) schema.Money {
	return schema.Money{Amount: amount, Currency: cur.Code, Formatted: schema.FormatMinor(amount, cur.Exponent)}
}

// fromDefault converts an amount of the store's default currency into the cart's currency.
func (pc *pricedCart) fromDefault(amount int64) int64 {
	if pc.cur.Code == pc.def.Code {
		return amount
	}
	return schema.ConvertMinor(amount, pc.def.Exponent, pc.cur.Exponent, pc.cur.Rate)
}

// priceCart prices cart c (nil: an empty cart in currency, or the store's default currency)
// from the database, inside tx. Every amount is recomputed from current prices, stock, coupons,
// gift cards, tax and shipping settings; problems that block a checkout become issues.
func priceCart(ctx context.Context, tx *store.Tx, t *schema.Tenant, c *store.Cart, currency string) (*pricedCart, error) {
	def, err := tx.Currency(ctx, t, t.DefaultCurrency())
	if err != nil {
		return nil, err
	}
	pc := &pricedCart{def: def, cur: def}
	v := &pc.view
	v.Items, v.Coupons, v.GiftCards, v.ShippingMethods, v.Issues =
		[]schema.CartLineView{}, []schema.AppliedCoupon{}, []schema.AppliedGiftCard{}, []schema.ShippingOption{}, []schema.CartIssue{}
	if c != nil {
		currency = c.Currency
		v.Notes, v.GiftWrap, v.GiftMessage, v.Revision = c.Notes, c.GiftWrap, c.GiftMessage, c.Revision
		exp := c.ExpiresAt
		v.ExpiresAt = &exp
	} else {
		c = &store.Cart{}
	}
	if currency != "" && currency != def.Code {
		cur, err := tx.Currency(ctx, t, currency)
		switch {
		case schema.ErrorCode(err) == schema.CodeNotFound:
			v.Issues = append(v.Issues, schema.CartIssue{Code: "unpriced",
				Message: "the store no longer sells in " + currency + "; prices are shown in " + def.Code})
		case err != nil:
			return nil, err
		default:
			pc.cur = cur
		}
	}
	cur := pc.cur
	v.Currency = cur.Code
	if pc.settings, err = tx.Settings(ctx, t); err != nil {
		return nil, err
	}

	// Lines.
	ids := make([]schema.VariantID, len(c.Items))
	for i, it := range c.Items {
		ids[i] = it.VariantID
	}
	srcs, err := tx.LineSources(ctx, t, ids)
	if err != nil {
		return nil, err
	}
	pr := schema.Pricing{Currency: cur, Default: def}
	now := tx.Now()
	sales, err := tx.FlashSales(ctx, t, true)
	if err != nil {
		return nil, err
	}
	var in schema.TotalsInput
	in.Currency = *cur
	var subtotal int64
	for _, it := range c.Items {
		key := strconv.FormatInt(int64(it.VariantID), 10)
		src, ok := srcs[it.VariantID]
		if !ok || src.Product == nil || !src.Product.Public() {
			v.Issues = append(v.Issues, schema.CartIssue{Item: key, Code: "unavailable", Message: "this item is no longer available; remove it"})
			continue
		}
		m := pr.VariantPrice(&src.Variant.Variant, src.Product)
		if m.Converted && m.Amount == 0 {
			v.Issues = append(v.Issues, schema.CartIssue{Item: key, Code: "unpriced", Message: "this item has no price in " + cur.Code})
			continue
		}
		switch stock := src.Variant.Stock; {
		case stock <= 0:
			v.Issues = append(v.Issues, schema.CartIssue{Item: key, Code: "out_of_stock", Message: lineName(src) + " is out of stock"})
		case stock < it.Quantity:
			v.Issues = append(v.Issues, schema.CartIssue{Item: key, Code: "insufficient_stock", Available: &stock,
				Message: "only " + strconv.FormatInt(stock, 10) + " of " + lineName(src) + " left in stock"})
		}
		// A flash sale running now prices the line; the checkout reprices at its own instant.
		line := pricedLine{item: it, src: src, unit: m.Amount, regular: m}
		if bp, _ := schema.BestSale(sales, src.Product.ID, now); bp > 0 {
			line.unit, line.onSale = schema.SalePrice(m.Amount, bp), true
		}
		pc.lines = append(pc.lines, line)
		in.Lines = append(in.Lines, schema.TotalsLine{Key: key, UnitPrice: line.unit, Quantity: it.Quantity, Taxable: true})
		if line.unit > (schema.MaxMinorAmount-subtotal)/it.Quantity {
			return nil, schema.Invalid("quantity", "the cart's subtotal exceeds %d minor units", int64(schema.MaxMinorAmount))
		}
		subtotal += line.unit * it.Quantity
	}

	// Coupons, in the order they were added.
	freeShipping := false
	for _, code := range c.Coupons {
		cp, err := tx.Coupon(ctx, t, code)
		if err != nil {
			return nil, err
		}
		reason := "is no longer valid"
		if cp != nil {
			reason = cp.Usable(now)
		}
		if reason == "" && subtotal < pc.fromDefault(cp.MinSubtotal) {
			reason = "needs a subtotal of at least " + schema.FormatMinor(pc.fromDefault(cp.MinSubtotal), cur.Exponent) + " " + cur.Code
		}
		if reason != "" {
			v.Issues = append(v.Issues, schema.CartIssue{Code: "coupon_invalid", Message: "coupon " + code + " " + reason + "; remove it"})
			continue
		}
		d := schema.Discount{Code: cp.Code, Kind: cp.Kind, Value: cp.Value, FreeShipping: cp.FreeShipping}
		if cp.Kind == schema.DiscountFixed {
			d.Value = pc.fromDefault(cp.Value)
		}
		if len(cp.ProductIDs) > 0 {
			d.Lines = []string{}
			for _, l := range pc.lines {
				for _, id := range cp.ProductIDs {
					if int64(l.src.Product.ID) == id {
						d.Lines = append(d.Lines, strconv.FormatInt(int64(l.item.VariantID), 10))
					}
				}
			}
		}
		freeShipping = freeShipping || (cp.FreeShipping && (len(cp.ProductIDs) == 0 || len(d.Lines) > 0))
		pc.coupons = append(pc.coupons, cp)
		in.Discounts = append(in.Discounts, d)
	}

	// Tax.
	in.Tax = schema.TaxRate{BasisPoints: pc.settings.TaxBasisPoints, Inclusive: pc.settings.TaxInclusive, OnShipping: pc.settings.TaxOnShipping}

	// Shipping: the chosen method, or the first active one.
	methods, err := tx.ShippingMethods(ctx, t)
	if err != nil {
		return nil, err
	}
	var chosen *schema.ShippingMethod
	for _, m := range methods {
		if !m.Active {
			continue
		}
		pc.shippingRequired = true
		price, ok := priceIn(m.Prices, pc)
		if !ok {
			continue
		}
		freeOver, _ := priceIn(m.FreeOver, pc)
		opt := schema.ShippingOption{Code: m.Code, Name: m.Name, Price: money(price, cur)}
		v.ShippingMethods = append(v.ShippingMethods, opt)
		// An empty cart ships nothing: it offers methods but has none chosen.
		if chosen == nil && len(pc.lines) > 0 && (c.ShippingMethod == "" || c.ShippingMethod == m.Code) {
			chosen = &schema.ShippingMethod{Code: m.Code, Name: m.Name, Price: price, FreeOver: freeOver}
		}
	}
	if c.ShippingMethod != "" && len(pc.lines) > 0 && (chosen == nil || chosen.Code != c.ShippingMethod) {
		v.Issues = append(v.Issues, schema.CartIssue{Code: "shipping_method_invalid",
			Message: "shipping method " + c.ShippingMethod + " is no longer offered; choose another"})
		chosen = nil
	}
	in.Shipping, pc.shipping = chosen, chosen

	// Gift cards.
	for _, key := range c.GiftCards {
		g, err := tx.GiftCard(ctx, t, key)
		if err != nil {
			return nil, err
		}
		reason := "is no longer valid"
		if g != nil {
			reason = g.Usable(now, cur.Code)
		}
		if reason != "" {
			last4 := "????"
			if g != nil {
				last4 = g.Last4
			}
			v.Issues = append(v.Issues, schema.CartIssue{Code: "gift_card_invalid", Message: "gift card ending " + last4 + " " + reason + "; remove it"})
			continue
		}
		pc.giftCards = append(pc.giftCards, g)
		in.GiftCards = append(in.GiftCards, schema.GiftCardBalance{Code: g.Key, Balance: g.Balance})
	}

	totals, err := schema.ComputeTotals(in)
	if err != nil {
		return nil, err
	}
	pc.totals = totals

	// The view.
	for i, l := range pc.lines {
		lt := totals.Lines[i]
		var img *schema.Image
		if len(l.src.Product.Images) > 0 {
			img = &l.src.Product.Images[0]
		}
		sv := l.src.Variant
		v.Items = append(v.Items, schema.CartLineView{
			ID: lt.Key, VariantID: sv.ID, ProductID: sv.ProductID, Slug: l.src.Product.Slug, Title: l.src.Product.Title,
			VariantTitle: sv.Title, SKU: sv.SKU, Options: nonNil(sv.Options), Image: img, UnitPrice: money(l.unit, cur),
			Quantity: l.item.Quantity, Subtotal: money(lt.Subtotal, cur), Discount: money(lt.Discount, cur), Tax: money(lt.Tax, cur),
			Total: money(lt.Total, cur), Availability: sv.Availability, OnSale: l.onSale,
		})
		if l.onSale {
			regular := l.regular
			v.Items[len(v.Items)-1].CompareAt = &regular
		}
		v.ItemCount += l.item.Quantity
	}
	for _, cp := range pc.coupons {
		v.Coupons = append(v.Coupons, schema.AppliedCoupon{Code: cp.Code, Discount: money(totals.DiscountByCode[cp.Code], cur), FreeShipping: cp.FreeShipping})
	}
	for i, g := range pc.giftCards {
		bal := money(g.Balance, cur)
		var applied int64
		if i < len(totals.GiftCards) {
			applied = totals.GiftCards[i].Amount
		}
		v.GiftCards = append(v.GiftCards, schema.AppliedGiftCard{Last4: g.Last4, Balance: &bal, Applied: money(applied, cur)})
	}
	merch := totals.Subtotal - totals.Discount
	for i := range v.ShippingMethods {
		o := &v.ShippingMethods[i]
		for _, m := range methods {
			if m.Code == o.Code {
				freeOver, ok := priceIn(m.FreeOver, pc)
				o.Free = freeShipping || (ok && freeOver > 0 && merch >= freeOver)
			}
		}
		if chosen != nil && o.Code == chosen.Code {
			sel := *o
			sel.Price = money(totals.Shipping, cur)
			v.ShippingMethod = &sel
		}
	}
	v.Totals = totalsView(totals, cur, pc.settings.TaxInclusive)
	return pc, nil
}

// priceIn returns a per-currency price in the cart's currency: the merchant's own, else converted
// from the default currency's.
func priceIn(p schema.Prices, pc *pricedCart) (int64, bool) {
	if a, ok := p[pc.cur.Code]; ok {
		return a, true
	}
	if a, ok := p[pc.def.Code]; ok {
		return pc.fromDefault(a), true
	}
	return 0, false
}

func totalsView(t schema.Totals, cur *schema.Currency, inclusive bool) schema.TotalsView {
	var gift int64
	for _, g := range t.GiftCards {
		gift += g.Amount
	}
	return schema.TotalsView{Subtotal: money(t.Subtotal, cur), Discount: money(t.Discount, cur), Shipping: money(t.Shipping, cur),
		Tax: money(t.Tax, cur), TaxInclusive: inclusive, Total: money(t.Total, cur), GiftCards: money(gift, cur), Due: money(t.Due, cur)}
}

func lineName(src store.LineSource) string {
	name := src.Product.Title
	if src.Variant.Title != "" {
		name += " / " + src.Variant.Title
	}
	if src.Variant.SKU != "" {
		name += " (SKU " + src.Variant.SKU + ")"
	}
	return name
}

func (s *Server) cartHandlers() {
	s.bind("cart.get", s.getCart)
	s.bind("cart.delete", s.deleteCart)
	s.bind("cart.items.add", s.addCartItem)
	s.bind("cart.items.update", s.updateCartItem)
	s.bind("cart.items.delete", s.deleteCartItem)
	s.bind("cart.options", s.setCartOptions)
	s.bind("cart.coupon.add", s.addCoupon)
	s.bind("cart.coupon.remove", s.removeCoupon)
	s.bind("cart.giftcard.add", s.addGiftCard)
	s.bind("cart.giftcard.remove", s.removeGiftCard)
	s.bind("checkout", s.checkout)
}

// cartSession returns the hash of the request's X-Cart-Session, validated.
func cartSession(ctx *fasthttp.RequestCtx) ([]byte, error) {
	v := string(ctx.Request.Header.Peek("X-Cart-Session"))
	if v == "" {
		return nil, &schema.Error{Code: schema.CodeInvalid, Field: "X-Cart-Session",
			Message: "X-Cart-Session header is required: 22 to 128 base64url characters from a cryptographic random source"}
	}
	if err := schema.ValidateCartSession(v); err != nil {
		return nil, err
	}
	return store.CartSessionHash(v), nil
}

// cartView prices a cart (see priceCart) and returns its view.
func cartView(ctx context.Context, tx *store.Tx, t *schema.Tenant, c *store.Cart, currency string) (schema.CartView, error) {
	pc, err := priceCart(ctx, tx, t, c, currency)
	if err != nil {
		return schema.CartView{}, err
	}
	return pc.view, nil
}

func (s *Server) getCart(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	hash, err := cartSession(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var view schema.CartView
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		c, err := tx.Cart(ctx, rq.Info, hash)
		if err != nil {
			return err
		}
		view, err = cartView(ctx, tx, rq.Info, c, string(ctx.QueryArgs().Peek("currency")))
		return err
	})
	s.Respond(ctx, rq, 200, err, view)
}

// mutateCart runs fn on the session's cart, locked (created when create is set), then saves
// it, prices it and answers with it. A cart that does not exist and is not created is a 404.
func (s *Server) mutateCart(ctx *fasthttp.RequestCtx, rq *handler.Request, create bool, currency string, fn func(tx *store.Tx, c *store.Cart) error) {
	hash, err := cartSession(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var view schema.CartView
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.Info)
		if err != nil {
			return err
		}
		var c *store.Cart
		if create {
			if currency == "" {
				currency = rq.Info.DefaultCurrency()
			}
			c, err = tx.OpenCart(ctx, rq.Info, hash, currency, settings.CartTTL)
		} else {
			c, err = tx.LockCart(ctx, rq.Info, hash)
			if err == nil && c == nil {
				err = &schema.Error{Code: schema.CodeNotFound, Message: "cart not found: it is empty or has expired"}
			}
		}
		if err != nil {
			return err
		}
		if err := fn(tx, c); err != nil {
			return err
		}
		if err := tx.SaveCart(ctx, rq.Info, c, settings.CartTTL); err != nil {
			return err
		}
		view, err = cartView(ctx, tx, rq.Info, c, "")
		return err
	})
	s.Respond(ctx, rq, 200, err, view)
}

// CartItemInput is the body of POST /api/cart/items: a variant, the quantity to add (1 when
// absent) and, optionally, the currency the cart is shown in.
type CartItemInput struct {
	VariantID *int64  `json:"variant_id"`
	Quantity  *int64  `json:"quantity"`
	Currency  *string `json:"currency"`
}

// checkLine checks that a variant can be bought in quantity: it exists, its product is public
// and enough stock remains.
func checkLine(ctx context.Context, tx *store.Tx, t *schema.Tenant, id schema.VariantID, quantity int64) error {
	srcs, err := tx.LineSources(ctx, t, []schema.VariantID{id})
	if err != nil {
		return err
	}
	src, ok := srcs[id]
	if !ok || src.Product == nil || !src.Product.Public() {
		return &schema.Error{Code: schema.CodeNotFound, Field: "variant_id", Message: "product variant " + strconv.FormatInt(int64(id), 10) + " not found"}
	}
	if src.Variant.Stock < quantity {
		msg := lineName(src) + " is out of stock"
		if src.Variant.Stock > 0 {
			msg = "only " + strconv.FormatInt(src.Variant.Stock, 10) + " of " + lineName(src) + " left in stock"
		}
		return &schema.Error{Code: schema.CodeConflict, Field: "quantity", Message: msg}
	}
	return nil
}

func (s *Server) addCartItem(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CartItemInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.VariantID == nil || *in.VariantID <= 0 {
		s.Fail(ctx, rq, schema.Invalid("variant_id", "variant_id is required: a positive integer"))
		return
	}
	q := int64(1)
	if in.Quantity != nil {
		q = *in.Quantity
	}
	if q < 1 || q > store.MaxCartQuantity {
		s.Fail(ctx, rq, schema.Invalid("quantity", "quantity must be between 1 and %d", int64(store.MaxCartQuantity)))
		return
	}
	currency := ""
	if in.Currency != nil {
		currency = strings.ToUpper(*in.Currency)
		if !rq.Info.HasCurrency(currency) {
			s.Fail(ctx, rq, schema.Invalid("currency", "the store does not sell in %q", *in.Currency))
			return
		}
	}
	id := schema.VariantID(*in.VariantID)
	s.mutateCart(ctx, rq, true, currency, func(tx *store.Tx, c *store.Cart) error {
		total := q
		for _, it := range c.Items {
			if it.VariantID == id {
				total += it.Quantity
			}
		}
		if total > store.MaxCartQuantity {
			return schema.Invalid("quantity", "a line holds at most %d units", int64(store.MaxCartQuantity))
		}
		if err := checkLine(ctx, tx, rq.Info, id, total); err != nil {
			return err
		}
		return tx.SetCartItem(ctx, rq.Info, c, id, total)
	})
}

// cartItem parses the {item} path parameter.
func cartItem(ctx *fasthttp.RequestCtx) (schema.VariantID, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "item"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &schema.Error{Code: schema.CodeNotFound, Message: "cart item not found"}
	}
	return schema.VariantID(id), nil
}

// CartQuantityInput is the body of PATCH /api/cart/items/{item}: the line's new quantity, 0
// removing it.
type CartQuantityInput struct {
	Quantity *int64 `json:"quantity"`
}

func (s *Server) updateCartItem(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := cartItem(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in CartQuantityInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Quantity == nil || *in.Quantity < 0 || *in.Quantity > store.MaxCartQuantity {
		s.Fail(ctx, rq, schema.Invalid("quantity", "quantity is required: 0 (removes the line) to %d", int64(store.MaxCartQuantity)))
		return
	}
	q := *in.Quantity
	s.mutateCart(ctx, rq, false, "", func(tx *store.Tx, c *store.Cart) error {
		had := int64(-1)
		for _, it := range c.Items {
			if it.VariantID == id {
				had = it.Quantity
			}
		}
		if had < 0 {
			return &schema.Error{Code: schema.CodeNotFound, Message: "cart item not found"}
		}
		if q > had {
			if err := checkLine(ctx, tx, rq.Info, id, q); err != nil {
				return err
			}
		}
		return tx.SetCartItem(ctx, rq.Info, c, id, q)
	})
}

func (s *Server) deleteCartItem(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := cartItem(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.mutateCart(ctx, rq, false, "", func(tx *store.Tx, c *store.Cart) error {
		return tx.SetCartItem(ctx, rq.Info, c, id, 0)
	})
}

func (s *Server) deleteCart(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	hash, err := cartSession(ctx)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var view schema.CartView
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteCart(ctx, rq.Info, hash); err != nil {
			return err
		}
		view, err = cartView(ctx, tx, rq.Info, nil, "")
		return err
	})
	s.Respond(ctx, rq, 200, err, view)
}

// CartOptionsInput is the body of PATCH /api/cart/options: each field sent replaces the cart's.
type CartOptionsInput struct {
	Currency       *string `json:"currency"`
	ShippingMethod *string `json:"shipping_method"`
	Notes          *string `json:"notes"`
	GiftWrap       *bool   `json:"gift_wrap"`
	GiftMessage    *string `json:"gift_message"`
}

func (s *Server) setCartOptions(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CartOptionsInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Currency != nil {
		*in.Currency = strings.ToUpper(*in.Currency)
		if !rq.Info.HasCurrency(*in.Currency) {
			s.Fail(ctx, rq, schema.Invalid("currency", "the store does not sell in %q", *in.Currency))
			return
		}
	}
	if in.Notes != nil {
		if err := schema.ValidateText("notes", *in.Notes, maxNotesLen, false); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	if in.GiftMessage != nil {
		if err := schema.ValidateText("gift_message", *in.GiftMessage, maxGiftMessageLen, false); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	s.mutateCart(ctx, rq, true, "", func(tx *store.Tx, c *store.Cart) error {
		if in.ShippingMethod != nil && *in.ShippingMethod != "" {
			methods, err := tx.ShippingMethods(ctx, rq.Info)
			if err != nil {
				return err
			}
			found := false
			for _, m := range methods {
				found = found || (m.Active && m.Code == *in.ShippingMethod)
			}
			if !found {
				return schema.Invalid("shipping_method", "the store offers no shipping method %q", *in.ShippingMethod)
			}
		}
		set(&c.Currency, in.Currency)
		set(&c.ShippingMethod, in.ShippingMethod)
		set(&c.Notes, in.Notes)
		set(&c.GiftWrap, in.GiftWrap)
		set(&c.GiftMessage, in.GiftMessage)
		return nil
	})
}

// CodeInput is the body that applies a coupon or a gift card to a cart.
type CodeInput struct {
	Code *string `json:"code"`
}

func (s *Server) addCoupon(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CodeInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Code == nil {
		s.Fail(ctx, rq, schema.Invalid("code", "code is required"))
		return
	}
	code, err := store.NormalizeCouponCode(*in.Code)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := couponThrottle.Spend(ctx, s.db, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.mutateCart(ctx, rq, true, "", func(tx *store.Tx, c *store.Cart) error {
		for _, have := range c.Coupons {
			if have == code {
				return nil // already applied: idempotent
			}
		}
		if len(c.Coupons) >= store.MaxCartCodes {
			return &schema.Error{Code: schema.CodeConflict, Field: "code", Message: "a cart holds at most 5 coupons"}
		}
		cp, err := tx.Coupon(ctx, rq.Info, code)
		if err != nil {
			return err
		}
		if cp == nil {
			return &schema.Error{Code: schema.CodeUnprocessable, Field: "code", Message: "coupon code " + code + " is not valid"}
		}
		if reason := cp.Usable(tx.Now()); reason != "" {
			return &schema.Error{Code: schema.CodeUnprocessable, Field: "code", Message: "coupon " + code + " " + reason}
		}
		c.Coupons = append(c.Coupons, code)
		return nil
	})
}

func (s *Server) removeCoupon(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	code, _ := store.NormalizeCouponCode(pipeline.Param(ctx, "code"))
	s.mutateCart(ctx, rq, false, "", func(tx *store.Tx, c *store.Cart) error {
		for i, have := range c.Coupons {
			if have == code {
				c.Coupons = append(c.Coupons[:i], c.Coupons[i+1:]...)
				return nil
			}
		}
		return &schema.Error{Code: schema.CodeNotFound, Message: "the cart has no coupon " + code}
	})
}

func (s *Server) addGiftCard(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CodeInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Code == nil {
		s.Fail(ctx, rq, schema.Invalid("code", "code is required"))
		return
	}
	if err := giftCardThrottle.Spend(ctx, s.db, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	invalid := &schema.Error{Code: schema.CodeUnprocessable, Field: "code", Message: "gift card code is not valid"}
	key, ok := store.GiftCardKey(*in.Code)
	if !ok {
		s.Fail(ctx, rq, invalid)
		return
	}
	s.mutateCart(ctx, rq, true, "", func(tx *store.Tx, c *store.Cart) error {
		for _, have := range c.GiftCards {
			if have == key {
				return nil
			}
		}
		if len(c.GiftCards) >= store.MaxCartCodes {
			return &schema.Error{Code: schema.CodeConflict, Field: "code", Message: "a cart holds at most 5 gift cards"}
		}
		g, err := tx.GiftCard(ctx, rq.Info, key)
		if err != nil {
			return err
		}
		if g == nil {
			return invalid
		}
		if reason := g.Usable(tx.Now(), c.Currency); reason != "" {
			return &schema.Error{Code: schema.CodeUnprocessable, Field: "code", Message: "gift card ending " + g.Last4 + " " + reason}
		}
		c.GiftCards = append(c.GiftCards, key)
		return nil
	})
}

func (s *Server) removeGiftCard(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	last4 := strings.ToUpper(pipeline.Param(ctx, "last4"))
	s.mutateCart(ctx, rq, false, "", func(tx *store.Tx, c *store.Cart) error {
		for i, key := range c.GiftCards {
			g, err := tx.GiftCard(ctx, rq.Info, key)
			if err != nil {
				return err
			}
			if g != nil && g.Last4 == last4 {
				c.GiftCards = append(c.GiftCards[:i], c.GiftCards[i+1:]...)
				return nil
			}
		}
		return &schema.Error{Code: schema.CodeNotFound, Message: "the cart has no gift card ending " + last4}
	})
}
