package origin

import (
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// adminOrderHandlers binds staff's list of orders.
func (s *Server) adminOrderHandlers() {
	s.bind("admin.orders.list", s.listOrders)
}

// listOrders answers GET /api/admin/orders: a page of the store's orders as their shoppers were
// shown them (with the current status and fulfilment status), filtered by status and fulfilment
// status, newest first (order=asc: oldest first, as a warehouse works through them).
func (s *Server) listOrders(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[schema.OrderView]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		orders, total, err := tx.Orders(ctx, rq.Info, args.Get("status").Strs, args.Get("fulfillment_status").Strs,
			args.Str("order") == "asc", (page-1)*perPage, perPage)
		out = schema.Page[schema.OrderView]{Data: make([]schema.OrderView, 0, len(orders)), Page: page, PerPage: perPage,
			Total: total, TotalPages: (total + perPage - 1) / perPage}
		for _, o := range orders {
			out.Data = append(out.Data, o.View)
		}
		return err
	})
	s.answer(ctx, rq, err, out)
}
