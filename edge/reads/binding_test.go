package reads_test

import (
	"strings"
	"testing"

	"vitrine/edge/reads"
	"vitrine/schema"
)

// Every route the edge answers reaches a read handler: a route added to the table without one
// would answer every request with an error. Arguments and path captures are empty, so handlers
// may refuse them; what must never come back is "no read handler".
func TestEveryEdgeRouteHasAReadHandler(t *testing.T) {
	tn := shop(t)
	none := func(string) (string, bool) { return "", false }
	for i := range schema.Routes {
		r := &schema.Routes[i]
		if r.Server != schema.AtEdge {
			continue
		}
		resp := reads.Answer(&reads.Request{Route: r, Tenant: tn, Query: none, Param: func(string) string { return "1" }})
		if resp.Err != nil && strings.Contains(resp.Err.Error(), "no read handler") {
			t.Errorf("route %s (%s %s) has no read handler", r.Name, r.Method, r.Path)
		}
	}
	unbound := &schema.Route{Name: "cms.unbound.test", Method: "GET", Interface: schema.CMS, Path: "/cms/v2/unbound", Server: schema.AtEdge}
	if resp := reads.Answer(&reads.Request{Route: unbound, Tenant: tn, Query: none, Param: func(string) string { return "" }}); resp.Err == nil ||
		!strings.Contains(resp.Err.Error(), "no read handler") {
		t.Fatalf("a deliberately unbound route was answered: %+v", resp)
	}
}
