package origin

import (
	"log/slog"
	"testing"

	"vitrine/schema"
)

// Every route the origin must answer has exactly one handler, and every handler is bound to a
// route of the table: a misspelt name would otherwise be a silent 404 (an unbound route) or dead
// code (a handler no route reaches). Routes answered at edges are the read engine's: the origin
// answers them with its full replica through one handler, read.
func TestEveryRouteHasOneHandler(t *testing.T) {
	s := New(Config{Logger: slog.New(slog.DiscardHandler)}, nil, nil)
	unbound, twice, stray := checkBinding(s, schema.Routes)
	for _, n := range unbound {
		t.Errorf("route %s is answered by the origin and has no handler", n)
	}
	for _, n := range twice {
		t.Errorf("route %s has more than one handler", n)
	}
	for _, n := range stray {
		t.Errorf("a handler is bound to %q, which no route of the table has", n)
	}

	// The check itself: a route nobody bound is caught.
	extra := append(append([]schema.Route(nil), schema.Routes...),
		schema.Route{Name: "cms.unbound.test", Method: "GET", Interface: schema.CMS, Path: "/cms/v2/unbound", Server: schema.AtOrigin})
	if unbound, _, _ := checkBinding(s, extra); len(unbound) != 1 || unbound[0] != "cms.unbound.test" {
		t.Fatalf("a deliberately unbound route was not reported: %v", unbound)
	}
}

// checkBinding lists the origin routes of routes without a handler, the names bound more than
// once, and the names bound that no route has.
func checkBinding(s *Server, routes []schema.Route) (unbound, twice, stray []string) {
	names := map[string]bool{}
	for _, r := range routes {
		names[r.Name] = true
		if r.Server == schema.AtOrigin && s.handlers[r.Name] == nil {
			unbound = append(unbound, r.Name)
		}
	}
	for n, count := range s.bound {
		if count > 1 {
			twice = append(twice, n)
		}
		if !names[n] {
			stray = append(stray, n)
		}
	}
	return unbound, twice, stray
}
