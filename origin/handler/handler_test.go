package handler_test

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// Binding is checked where it happens: a misspelt route name, a second handler for a route and
// a nil handler each panic at construction instead of becoming a silent 404 at request time.
func TestBindRefusesWhatTheTableLacks(t *testing.T) {
	routes := []schema.Route{{Name: "things.list", Method: "GET", Interface: schema.Commerce, Path: "/api/things", Server: schema.AtOrigin}}
	h := func(*fasthttp.RequestCtx, *handler.Request) {}
	tests := []struct {
		name  string
		bind  func(*handler.Table)
		panic string // "" when binding succeeds
	}{
		{"bound once", func(tb *handler.Table) { tb.Bind("things.list", h) }, ""},
		{"misspelt", func(tb *handler.Table) { tb.Bind("thing.list", h) }, `no route "thing.list"`},
		{"twice", func(tb *handler.Table) { tb.Bind("things.list", h); tb.Bind("things.list", h) }, "bound twice"},
		{"nil", func(tb *handler.Table) { tb.Bind("things.list", nil) }, "nil handler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := handler.NewTable(routes)
			got := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg, _ = r.(string)
						if msg == "" {
							msg = "panic"
						}
					}
				}()
				tt.bind(tb)
				return ""
			}()
			if tt.panic == "" {
				if got != "" || tb.Func(&routes[0]) == nil {
					t.Fatalf("binding failed: %q", got)
				}
				return
			}
			if !strings.Contains(got, tt.panic) {
				t.Fatalf("panic %q, want one containing %q", got, tt.panic)
			}
		})
	}
}
