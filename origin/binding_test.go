package origin

import (
	"log/slog"
	"testing"

	"vitrine/origin/handler"
	"vitrine/origin/payment"
	"vitrine/schema"
)

// Every route the origin must answer has a handler. (A second binding, or a binding to a name
// the table lacks, panics in handler.Table.Bind, so New itself would fail here.) Routes
// answered at edges are the read engine's: the origin answers them with its full replica
// through one handler, read.
func TestEveryRouteHasOneHandler(t *testing.T) {
	// A secret and a payment provider are required; any will do to build the table.
	s := New(Config{Secret: make([]byte, 32), Payments: &payment.Test{}, Logger: slog.New(slog.DiscardHandler)}, nil, nil)
	for _, n := range unbound(s.handlers, schema.Routes) {
		t.Errorf("route %s is answered by the origin and has no handler", n)
	}

	// The check itself: a route nobody bound is caught.
	extra := append(append([]schema.Route(nil), schema.Routes...),
		schema.Route{Name: "cms.unbound.test", Method: "GET", Interface: schema.CMS, Path: "/cms/v2/unbound", Server: schema.AtOrigin})
	if got := unbound(s.handlers, extra); len(got) != 1 || got[0] != "cms.unbound.test" {
		t.Fatalf("a deliberately unbound route was not reported: %v", got)
	}
}

// unbound lists the origin routes of routes without a handler in tbl.
func unbound(tbl *handler.Table, routes []schema.Route) []string {
	var out []string
	for i := range routes {
		if r := &routes[i]; r.Server == schema.AtOrigin && tbl.Func(r) == nil {
			out = append(out, r.Name)
		}
	}
	return out
}
