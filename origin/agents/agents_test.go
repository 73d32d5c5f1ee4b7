package agents

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/schema"
)

func registry(t testing.TB) *Registry {
	t.Helper()
	reg, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// The built-in registry compiles, and refuses what WordPress's registry refuses.
func TestRegistry(t *testing.T) {
	reg := registry(t)
	if len(reg.Abilities()) != 9 || len(reg.Categories()) != 2 {
		t.Fatalf("%d abilities, %d categories", len(reg.Abilities()), len(reg.Categories()))
	}
	methods := map[string]string{
		"vitrine/search-content": "GET", "vitrine/get-post": "GET", "vitrine/create-draft-post": "POST",
		"vitrine/update-draft-post": "POST", "vitrine/trash-draft-post": "DELETE", "vitrine/search-products": "GET",
		"vitrine/update-product-price": "POST", "vitrine/update-product-stock": "POST",
		"vitrine/list-orders-awaiting-fulfilment": "GET",
	}
	for name, m := range methods {
		a := reg.Ability(name)
		if a == nil {
			t.Fatalf("no ability %s", name)
		}
		if got := a.Annotations.Method(); got != m {
			t.Errorf("%s runs with %s, want %s", name, got, m)
		}
	}
	good := func() *Ability {
		return &Ability{Name: "x/y", Label: "L", Description: "D", Category: "content", Cap: schema.CapRead,
			Input: `{"type":"object"}`, Output: `{"type":"object"}`, Run: func(*Run, json.RawMessage) (any, error) { return nil, nil }}
	}
	for _, tc := range []struct {
		name string
		edit func(a *Ability)
	}{
		{"upper-case name", func(a *Ability) { a.Name = "X/y" }},
		{"no namespace", func(a *Ability) { a.Name = "y" }},
		{"three segments", func(a *Ability) { a.Name = "x/y/z" }},
		{"unknown category", func(a *Ability) { a.Category = "nope" }},
		{"no label", func(a *Ability) { a.Label = "" }},
		{"no run", func(a *Ability) { a.Run = nil }},
		{"bad input schema", func(a *Ability) { a.Input = `{"type": 12}` }},
		{"input not JSON", func(a *Ability) { a.Input = `{` }},
		{"bad output schema", func(a *Ability) { a.Output = `{"minimum": "a"}` }},
	} {
		a := good()
		tc.edit(a)
		if _, err := NewRegistry(builtinCategories, []*Ability{a}); err == nil {
			t.Errorf("%s: registered", tc.name)
		}
	}
	if _, err := NewRegistry(builtinCategories, []*Ability{good(), good()}); err == nil {
		t.Error("a name registered twice")
	}
}

// Inputs are validated against the schema with WordPress's code and a message naming the
// failing field.
func TestCheckInput(t *testing.T) {
	reg := registry(t)
	for _, tc := range []struct {
		ability, input string
		reason         string // "" when valid
	}{
		{"vitrine/create-draft-post", `{"title":"Hello"}`, ""},
		{"vitrine/create-draft-post", `{"title":7}`, "input[title] is not of type string."},
		{"vitrine/create-draft-post", `{}`, "title is a required property of input."},
		{"vitrine/create-draft-post", `{"title":""}`, "input[title] must be at least 1 character long."},
		{"vitrine/create-draft-post", `{"title":"x","status":"publish"}`, "input[status] is not a valid property of Object."},
		{"vitrine/create-draft-post", ``, "input is not of type object."},
		{"vitrine/create-draft-post", `[1]`, "input is not of type object."},
		{"vitrine/search-content", `{"search":"tea","type":"book"}`, "input[type] is not one of post, page, and any."},
		{"vitrine/search-content", `{"search":"tea","per_page":51}`, "input[per_page] must be less than or equal to 50"},
		{"vitrine/search-content", `{"search":"tea","per_page":1.5}`, "input[per_page] is not of type integer."},
		{"vitrine/update-product-price", `{"variant_id":1,"currency":"usd","amount":100}`, "input[currency] does not match pattern ^[A-Z]{3}$."},
		{"vitrine/update-product-price", `{"variant_id":0,"currency":"USD","amount":100}`, "input[variant_id] must be greater than or equal to 1"},
		{"vitrine/update-product-price", `{"variant_id":1,"currency":"USD","amount":-1}`, "input[amount] must be greater than or equal to 0"},
		{"vitrine/update-draft-post", `{"id":3}`, "title is a required property of input."},
		{"vitrine/update-draft-post", `{"id":3,"excerpt":"e"}`, ""},
		{"vitrine/list-orders-awaiting-fulfilment", ``, ""}, // the schema's default: {}
		{"vitrine/list-orders-awaiting-fulfilment", `{"per_page":0}`, "input[per_page] must be greater than or equal to 1"},
	} {
		a := reg.Ability(tc.ability)
		_, err := a.CheckInput(json.RawMessage(tc.input))
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tc.ability, tc.input, err)
			}
			continue
		}
		e := schema.AsError(err)
		want := "Ability \"" + tc.ability + "\" has invalid input. Reason: " + tc.reason
		if err == nil || e.CMSCode != "ability_invalid_input" || e.Message != want {
			t.Errorf("%s %s: %v, want %q", tc.ability, tc.input, err, want)
		}
	}
}

// A query string's input is read as WordPress reads it, and coerced to the schema's types.
func TestQueryInput(t *testing.T) {
	reg := registry(t)
	search := reg.Ability("vitrine/search-content")
	for _, tc := range []struct{ query, want string }{
		{"input[search]=tea&input[per_page]=5", `{"per_page":5,"search":"tea"}`},
		{"input=%7B%22search%22%3A%22tea%22%7D", `{"search":"tea"}`},
		{"input[search]=tea&input[per_page]=many", `{"per_page":"many","search":"tea"}`}, // left for validation to refuse
		{"rest_route=/x&other=1", ``},
		{"input=plain", `"plain"`},
	} {
		q, _ := url.ParseQuery(tc.query)
		got := search.QueryInput(func(visit func(k, v string)) {
			for k, vs := range q {
				for _, v := range vs {
					visit(k, v)
				}
			}
		})
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	if _, err := search.CheckInput(json.RawMessage(`{"per_page":"many","search":"tea"}`)); err == nil ||
		!strings.Contains(err.Error(), "input[per_page] is not of type integer.") {
		t.Errorf("uncoercible value: %v", err)
	}
}

// stubRoutes answers the routes the built-in abilities call, as the origin does, for the tests
// that run abilities without an origin (the system test in cmd/vitrine runs them through one).
func stubRoutes(_ *fasthttp.RequestCtx, _ *schema.User, c handler.Call) handler.CallResult {
	route, _, _ := strings.Cut(c.Target, "?")
	ok := func(body string, h ...string) handler.CallResult {
		r := handler.CallResult{Status: 200, Body: []byte(body), Header: map[string]string{}}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header[h[i]] = h[i+1]
		}
		return r
	}
	post := func(status string) string {
		return `{"id":7,"type":"post","status":"` + status + `","link":"https://s.example/?p=7","date":"2026-01-02T03:04:05",
			"modified":"2026-01-02T03:04:05","author":2,"title":{"raw":"T","rendered":"T &amp; U"},
			"content":{"raw":"<p>c</p>","rendered":"<p>c</p>"},"excerpt":{"raw":"e","rendered":"<p>e</p>"}}`
	}
	money := `{"amount":1999,"currency":"USD","formatted":"19.99"}`
	switch {
	case c.Method == "GET" && (route == "/cms/v2/posts" || route == "/cms/v2/pages"):
		return ok(`[`+post("publish")+`]`, "X-WP-Total", "1")
	case c.Method == "GET" && strings.HasPrefix(route, "/cms/v2/"):
		return ok(post("draft"))
	case c.Method == "POST" && strings.HasPrefix(route, "/cms/v2/posts"):
		return ok(post("draft"), "Vitrine-Write-Version", "12")
	case c.Method == "DELETE":
		return ok(post("trash"), "Vitrine-Write-Version", "13")
	case route == "/api/search":
		return ok(`{"data":[{"id":3,"slug":"kettle","title":"Kettle","featured":false,"price":` + money + `,"images":[],"categories":[],
			"availability":"in_stock","variants_count":1,"url":"https://s.example/products/kettle","created_at":"2026-01-01T00:00:00Z",
			"updated_at":"2026-01-01T00:00:00Z","version":3}],"page":1,"per_page":10,"total":1,"total_pages":1,"next":null,"prev":null}`)
	case strings.HasPrefix(route, "/api/admin/variants/"):
		return ok(`{"id":4,"product_id":3,"sku":"K-1","title":"","options":[],"prices":{"USD":1999},"availability":"in_stock",
			"position":0,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","version":4,"stock":12}`)
	case route == "/api/admin/orders":
		return ok(`{"data":[{"reference":"7KQF-3M9X-A2BD-HX4P","status":"paid","fulfillment_status":"unfulfilled","email":"a@b.example",
			"currency":"USD","items":[{"sku":"K-1","title":"Kettle","variant_title":"","quantity":2}],"totals":{"total":` + money + `},
			"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}],"page":1,"per_page":20,"total":1,"total_pages":1}`)
	}
	return handler.CallResult{Status: 404, Body: []byte(`{"code":"rest_no_route","message":"No route","data":{"status":404}}`)}
}

func stubService(t testing.TB) *Service {
	return &Service{Responder: &handler.Responder{Log: slog.New(slog.DiscardHandler)}, reg: registry(t), dispatch: stubRoutes}
}

// Every ability runs against the routes it calls, and its output passes its output schema.
func TestAbilitiesRun(t *testing.T) {
	s := stubService(t)
	admin := &schema.User{ID: 1, Role: schema.RoleAdministrator}
	inputs := map[string]string{
		"vitrine/search-content":                  `{"search":"tea"}`,
		"vitrine/get-post":                        `{"id":7}`,
		"vitrine/create-draft-post":               `{"title":"T","content":"<p>c</p>"}`,
		"vitrine/update-draft-post":               `{"id":7,"title":"T"}`,
		"vitrine/trash-draft-post":                `{"id":7}`,
		"vitrine/search-products":                 `{"query":"kettle","currency":"USD"}`,
		"vitrine/update-product-price":            `{"variant_id":4,"currency":"USD","amount":1999}`,
		"vitrine/update-product-stock":            `{"variant_id":4,"stock":12}`,
		"vitrine/list-orders-awaiting-fulfilment": `{}`,
	}
	var ctx fasthttp.RequestCtx
	for _, a := range s.reg.Abilities() {
		in, ok := inputs[a.Name]
		if !ok {
			t.Errorf("no test input for %s", a.Name)
			continue
		}
		out, _, err := s.run(&ctx, admin, a, json.RawMessage(in))
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if err := a.CheckOutput(out); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
	// Refusals: the capability first (an editor sets no prices), a route's error as it is.
	editor := &schema.User{ID: 2, Role: schema.RoleEditor}
	_, _, err := s.run(&ctx, editor, s.reg.Ability("vitrine/update-product-price"), json.RawMessage(inputs["vitrine/update-product-price"]))
	if e := schema.AsError(err); e.CMSCode != "rest_ability_cannot_execute" || e.Status != 403 {
		t.Errorf("editor sets a price: %v", err)
	}
	_, _, err = s.run(&ctx, nil, s.reg.Ability("vitrine/search-content"), json.RawMessage(inputs["vitrine/search-content"]))
	if e := schema.AsError(err); e.CMSCode != "rest_ability_cannot_execute" || e.Status != 401 {
		t.Errorf("no user: %v", err)
	}
	// A draft ability refuses what is not a draft.
	published := &Service{Responder: s.Responder, reg: s.reg, dispatch: func(ctx *fasthttp.RequestCtx, u *schema.User, c handler.Call) handler.CallResult {
		if c.Method == "GET" {
			return handler.CallResult{Status: 200, Body: []byte(`{"id":7,"status":"publish"}`)}
		}
		t.Errorf("%s %s called on a published post", c.Method, c.Target)
		return stubRoutes(ctx, u, c)
	}}
	_, _, err = published.run(&ctx, admin, s.reg.Ability("vitrine/update-draft-post"), json.RawMessage(inputs["vitrine/update-draft-post"]))
	if e := schema.AsError(err); e.CMSCode != "ability_post_not_draft" || e.Code != schema.CodeConflict {
		t.Errorf("update of a published post: %v", err)
	}
}

// A route's refusal reaches the run as that route answered it.
func TestCallErrors(t *testing.T) {
	for _, tc := range []struct {
		iface  schema.Interface
		status int
		body   string
		code   string
	}{
		{schema.CMS, 403, `{"code":"rest_cannot_create","message":"no","data":{"status":403}}`, "rest_cannot_create"},
		{schema.Commerce, 403, `{"error":"Missing required capability: manage_catalog","code":"forbidden"}`, "commerce_forbidden"},
		{schema.Commerce, 504, `{"error":"maybe","code":"outcome_unknown"}`, "commerce_outcome_unknown"},
		{schema.CMS, 500, `not json`, ""},
	} {
		e := schema.AsError(callError(tc.iface, handler.CallResult{Status: tc.status, Body: []byte(tc.body)}))
		if e.CMSCode != tc.code || (tc.code != "" && e.Status != tc.status) || (tc.code == "" && e.Code != schema.CodeInternal) {
			t.Errorf("%d %s: %+v", tc.status, tc.body, e)
		}
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || !WellFormed(a) || !strings.HasPrefix(a, "vas_") {
		t.Fatalf("tokens %s %s", a, b)
	}
	for _, bad := range []string{"", "vas_", "vas_" + strings.Repeat("g", 48), "esk_" + a[4:], a + "0", strings.ToUpper(a)} {
		if WellFormed(bad) {
			t.Errorf("%q is well formed", bad)
		}
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	if string(HashToken(secret, a)) == string(HashToken(secret, b)) || string(HashToken(secret, a)) == string(schema.HashAppPassword(secret, a)) {
		t.Error("hashes collide")
	}
}

// FuzzAbilityInput runs random inputs through every ability's validation and, when they pass,
// its run against the routes it calls: never a panic, never a 500.
func FuzzAbilityInput(f *testing.F) {
	s := stubService(f)
	for i := range s.reg.Abilities() {
		for _, seed := range []string{``, `{}`, `null`, `[]`, `"x"`, `{"search":"tea"}`, `{"id":7}`, `{"title":"T"}`,
			`{"variant_id":4,"currency":"USD","amount":1}`, `{"variant_id":4,"stock":1}`, `{"query":"k"}`, `{"id":7,"title":"T"}`,
			`{"search":"\u0000","per_page":1e400}`, `{"id":-9223372036854775808}`, `{"amount":99999999999999999999}`} {
			f.Add(uint8(i), []byte(seed))
		}
	}
	admin := &schema.User{ID: 1, Role: schema.RoleAdministrator}
	f.Fuzz(func(t *testing.T, which uint8, input []byte) {
		abilities := s.reg.Abilities()
		a := abilities[int(which)%len(abilities)]
		var ctx fasthttp.RequestCtx
		_, _, err := s.run(&ctx, admin, a, json.RawMessage(input))
		if err == nil {
			return
		}
		status, body := errorBody(err)
		if status >= 500 {
			t.Fatalf("%s %q: %d %s", a.Name, input, status, body)
		}
		q := url.Values{"input": {string(input)}, "input[search]": {string(input)}}
		a.QueryInput(func(visit func(k, v string)) {
			for k, vs := range q {
				visit(k, vs[0])
			}
		})
	})
}
