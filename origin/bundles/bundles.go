// Package bundles is a store's bundles at the origin: products sold as a set of other variants
// (defined in the admin API), stocked and sold through their components (store.TakeLineStock,
// store.ReturnLineStock), and their analytics, computed from paid orders for a server key with
// read_analytics.
//
// # Invariants
//
//   - A bundle's variants hold the number of whole bundles its components make; selling one
//     takes the components' stock, never the bundle's own.
//   - Analytics read orders, never a cache: units, revenue per currency (gross, before refunds),
//     the attach rate (orders with a bundle among all paid orders), top bundles and components.
package bundles

import (
	"sort"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Service answers the bundle routes. Its fields are set once, before Bind.
type Service struct {
	*handler.Responder
	DB *store.DB
}

// Bind attaches the bundle routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("admin.bundles.list", s.list)
	t.Bind("admin.bundles.put", s.put)
	t.Bind("admin.bundles.delete", s.delete)
	t.Bind("bundles.analytics", s.analytics)
}

func (s *Service) list(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]*store.Bundle, error) { return tx.Bundles(ctx, rq.Info) })
	s.Respond(ctx, rq, 200, err, out)
}

// BundleInput is the body of PUT /api/admin/bundles/{id} ({id} is the bundle's product id).
type BundleInput struct {
	Components *[]store.BundleComponent `json:"components" doc:"The variants the bundle is made of (1 to 20, of other products, none a bundle's), each taken 1 to 100 times; replaces the earlier ones."`
}

func (s *Service) put(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "product")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var in BundleInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Components == nil {
		s.Fail(ctx, rq, schema.Invalid("components", "components lists the variants the bundle is made of"))
		return
	}
	var b *store.Bundle
	commits, err := s.DB.WriteTx(ctx, func(tx *store.Tx) error {
		var err error
		b, err = tx.PutBundle(ctx, rq.Info, schema.ProductID(id), *in.Components)
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, b)
}

func (s *Service) delete(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	id, err := handler.PathID(ctx, "bundle")
	if err == nil {
		err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteBundle(ctx, rq.Info, schema.ProductID(id)) })
	}
	s.NoContentOr(ctx, rq, err)
}

// CurrencyAmount is an amount in one currency's minor units.
type CurrencyAmount struct {
	Currency string `json:"currency"`
	Amount   int64  `json:"amount"`
}

// BundleAnalytics is the answer of GET /api/bundles/analytics.
type BundleAnalytics struct {
	From          time.Time        `json:"from"`
	To            time.Time        `json:"to"`
	Orders        int              `json:"orders" doc:"Paid orders placed in the range."`
	BundleOrders  int              `json:"bundle_orders" doc:"Of those, the orders with a bundle."`
	AttachRate    float64          `json:"attach_rate" doc:"bundle_orders / orders (0 without orders)."`
	Units         int64            `json:"units" doc:"Bundles sold."`
	Revenue       []CurrencyAmount `json:"revenue" doc:"Bundle revenue per currency, gross (before refunds)."`
	TopBundles    []BundleSales    `json:"top_bundles"`
	TopComponents []ComponentSale  `json:"top_components"`
}

// BundleSales is one bundle's sales.
type BundleSales struct {
	ProductID schema.ProductID `json:"product_id"`
	Title     string           `json:"title"`
	Units     int64            `json:"units"`
	Orders    int              `json:"orders"`
	Revenue   []CurrencyAmount `json:"revenue"`
}

// ComponentSale is how many units of a variant bundles sold.
type ComponentSale struct {
	VariantID schema.VariantID `json:"variant_id"`
	SKU       string           `json:"sku"`
	Units     int64            `json:"units"`
}

func (s *Service) analytics(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	now := time.Now().UTC()
	from, to := now.Add(-30*24*time.Hour), now
	if a := args.Get("from"); a.Given {
		from = a.Time
	}
	if a := args.Get("to"); a.Given {
		to = a.Time
	}
	if !from.Before(to) {
		s.Fail(ctx, rq, schema.Invalid("to", "to must be after from"))
		return
	}
	limit := int(args.Int("limit"))
	out := &BundleAnalytics{From: from, To: to, Revenue: []CurrencyAmount{}, TopBundles: []BundleSales{}, TopComponents: []ComponentSale{}}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		bundles, err := tx.Bundles(ctx, rq.Info)
		if err != nil {
			return err
		}
		lines, err := tx.SaleLines(ctx, rq.Info, from, to)
		if err != nil {
			return err
		}
		*out = *summarize(lines, bundles, from, to, limit)
		for i := range out.TopComponents {
			if v, err := tx.Variant(ctx, rq.Info, out.TopComponents[i].VariantID); err == nil {
				out.TopComponents[i].SKU = v.SKU
			}
		}
		return nil
	})
	s.Respond(ctx, rq, 200, err, out)
}

// summarize computes the analytics of sale lines given the store's bundles.
func summarize(lines []store.SaleLine, bundles []*store.Bundle, from, to time.Time, limit int) *BundleAnalytics {
	out := &BundleAnalytics{From: from, To: to, Revenue: []CurrencyAmount{}, TopBundles: []BundleSales{}, TopComponents: []ComponentSale{}}
	byProduct := map[schema.ProductID]*store.Bundle{}
	for _, b := range bundles {
		byProduct[b.ProductID] = b
	}
	orders, withBundle := map[string]bool{}, map[string]bool{}
	revenue := map[string]int64{}
	type agg struct {
		sales   BundleSales
		orders  map[string]bool
		revenue map[string]int64
	}
	perBundle := map[schema.ProductID]*agg{}
	components := map[schema.VariantID]int64{}
	for _, l := range lines {
		orders[l.OrderID] = true
		b := byProduct[l.ProductID]
		if b == nil {
			continue
		}
		withBundle[l.OrderID] = true
		out.Units += l.Quantity
		revenue[l.Currency] += l.Total
		a := perBundle[l.ProductID]
		if a == nil {
			a = &agg{sales: BundleSales{ProductID: l.ProductID, Title: l.Title}, orders: map[string]bool{}, revenue: map[string]int64{}}
			perBundle[l.ProductID] = a
		}
		a.sales.Units += l.Quantity
		a.orders[l.OrderID] = true
		a.revenue[l.Currency] += l.Total
		for _, c := range b.Components {
			components[c.VariantID] += c.Quantity * l.Quantity
		}
	}
	out.Orders, out.BundleOrders = len(orders), len(withBundle)
	if out.Orders > 0 {
		out.AttachRate = float64(out.BundleOrders) / float64(out.Orders)
	}
	out.Revenue = moneyOf(revenue)
	for _, a := range perBundle {
		a.sales.Orders, a.sales.Revenue = len(a.orders), moneyOf(a.revenue)
		out.TopBundles = append(out.TopBundles, a.sales)
	}
	sort.Slice(out.TopBundles, func(i, j int) bool {
		x, y := out.TopBundles[i], out.TopBundles[j]
		if x.Units != y.Units {
			return x.Units > y.Units
		}
		return x.ProductID < y.ProductID
	})
	out.TopBundles = out.TopBundles[:min(limit, len(out.TopBundles))]
	for id, n := range components {
		out.TopComponents = append(out.TopComponents, ComponentSale{VariantID: id, Units: n})
	}
	sort.Slice(out.TopComponents, func(i, j int) bool {
		x, y := out.TopComponents[i], out.TopComponents[j]
		if x.Units != y.Units {
			return x.Units > y.Units
		}
		return x.VariantID < y.VariantID
	})
	out.TopComponents = out.TopComponents[:min(limit, len(out.TopComponents))]
	return out
}

func moneyOf(m map[string]int64) []CurrencyAmount {
	out := make([]CurrencyAmount, 0, len(m))
	for c, n := range m {
		out = append(out, CurrencyAmount{Currency: c, Amount: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}
