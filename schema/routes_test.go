package schema_test

import (
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

// params is a query: the get function ParseArgs reads.
type params map[string]string

func (p params) get(name string) (string, bool) { v, ok := p[name]; return v, ok }

func route(t testing.TB, name string) *schema.Route {
	t.Helper()
	r := schema.RouteByName(name)
	if r == nil {
		t.Fatalf("RouteByName(%q) = nil, want the route", name)
	}
	return r
}

func parse(t *testing.T, routeName string, p params) *schema.Args {
	t.Helper()
	a, err := schema.ParseArgs(route(t, routeName), p.get)
	if err != nil {
		t.Fatalf("ParseArgs(%s, %v) error %v, want nil", routeName, p, err)
	}
	return a
}

func TestRouteByName(t *testing.T) {
	for _, name := range []string{"products.list", "products.featured", "products.item", "cms.posts.list", "cms.posts.get", "cms.posts.delete", "cms.posts.update"} {
		r := schema.RouteByName(name)
		if r == nil || r.Name != name {
			t.Errorf("RouteByName(%q) = %+v, want the route of that name", name, r)
		}
	}
	if r := schema.RouteByName("cms.posts.update"); r == nil || r.Method != "POST" {
		t.Errorf("RouteByName(cms.posts.update) = %+v, want the first (POST) route of that name", r)
	}
	if r := schema.RouteByName("nope"); r != nil {
		t.Errorf("RouteByName(nope) = %+v, want nil", r)
	}
}

// Every route's defaults must satisfy its own declarations (required arguments aside: they
// are sent).
func TestRouteDefaultsParse(t *testing.T) {
	for _, r := range schema.Routes {
		t.Run(r.Method+" "+r.Name, func(t *testing.T) {
			q := params{}
			for _, d := range r.Args {
				if d.Required {
					q[d.Name] = "x"
				}
			}
			a, err := schema.ParseArgs(&r, q.get)
			if err != nil {
				t.Fatalf("ParseArgs with no query = %v, want nil", err)
			}
			for _, d := range r.Args {
				if a.Get(d.Name).Given && !d.Required {
					t.Errorf("%s: Given = true for an absent argument", d.Name)
				}
			}
		})
	}
}

func TestReservedProductSlugs(t *testing.T) {
	got := schema.ReservedProductSlugs()
	if !slices.Contains(got, "featured") {
		t.Errorf("ReservedProductSlugs() = %q, want it to contain \"featured\"", got)
	}
	if !slices.IsSorted(got) {
		t.Errorf("ReservedProductSlugs() = %q, want sorted", got)
	}
	for _, s := range got {
		if strings.ContainsAny(s, "{}/") || s == "" {
			t.Errorf("ReservedProductSlugs() has %q, want static segments only", s)
		}
	}
}

func TestParseArgsDefaults(t *testing.T) {
	t.Run("products.list", func(t *testing.T) {
		a := parse(t, "products.list", params{})
		if got, want := a.Int("page"), int64(1); got != want {
			t.Errorf("page = %d, want %d", got, want)
		}
		if got, want := a.Int("per_page"), int64(schema.DefaultPerPage); got != want {
			t.Errorf("per_page = %d, want %d", got, want)
		}
		if got := a.Str("currency"); got != "" {
			t.Errorf("currency = %q, want empty", got)
		}
	})
	t.Run("cms.posts.list", func(t *testing.T) {
		a := parse(t, "cms.posts.list", params{})
		want := map[string]schema.ArgValue{
			"context":  {Str: "view"},
			"page":     {Int: 1},
			"per_page": {Int: schema.CMSDefaultPerPage},
			"order":    {Str: "desc"},
			"orderby":  {Str: "date"},
			"slug":     {},
			"include":  {},
			"exclude":  {},
			"status":   {Strs: []string{"publish"}},
		}
		for name, w := range want {
			if got := a.Get(name); !reflect.DeepEqual(got, w) {
				t.Errorf("%s = %+v, want %+v", name, got, w)
			}
		}
	})
	t.Run("cms.posts.get", func(t *testing.T) {
		a := parse(t, "cms.posts.get", params{})
		if got := a.Str("context"); got != "view" {
			t.Errorf("context = %q, want view", got)
		}
		if got := a.Get("password"); got.Str != "" || got.Given {
			t.Errorf("password = %+v, want empty and not given", got)
		}
	})
	t.Run("cms.posts.delete", func(t *testing.T) {
		a := parse(t, "cms.posts.delete", params{})
		if got := a.Get("force"); got.Bool || got.Given {
			t.Errorf("force = %+v, want false and not given", got)
		}
	})
}

func TestParseArgsValues(t *testing.T) {
	cases := []struct {
		name  string
		route string
		query params
		arg   string
		want  schema.ArgValue
	}{
		{"page given", "products.list", params{"page": "3"}, "page", schema.ArgValue{Int: 3, Given: true}},
		{"page with spaces", "products.list", params{"page": " 3 "}, "page", schema.ArgValue{Int: 3, Given: true}},
		{"page at max", "products.list", params{"page": "100000"}, "page", schema.ArgValue{Int: schema.MaxPage, Given: true}},
		{"cms page past the commerce max", "cms.posts.list", params{"page": "9223372036854775807"}, "page", schema.ArgValue{Int: 9223372036854775807, Given: true}},
		{"per_page at min", "products.list", params{"per_page": "1"}, "per_page", schema.ArgValue{Int: 1, Given: true}},
		{"per_page at max", "products.list", params{"per_page": "100"}, "per_page", schema.ArgValue{Int: 100, Given: true}},
		{"per_page default given", "products.list", params{"per_page": "24"}, "per_page", schema.ArgValue{Int: 24, Given: true}},
		{"currency", "products.list", params{"currency": "EUR"}, "currency", schema.ArgValue{Str: "EUR", Given: true}},
		{"featured limit", "products.featured", params{"limit": "50"}, "limit", schema.ArgValue{Int: 50, Given: true}},
		{"context edit", "cms.posts.get", params{"context": "edit"}, "context", schema.ArgValue{Str: "edit", Given: true}},
		{"password kept verbatim", "cms.posts.get", params{"password": " p&ss w0rd "}, "password", schema.ArgValue{Str: " p&ss w0rd ", Given: true}},
		{"order asc", "cms.posts.list", params{"order": "asc"}, "order", schema.ArgValue{Str: "asc", Given: true}},
		{"int list comma and space", "cms.posts.list", params{"include": "1,2 3"}, "include", schema.ArgValue{Ints: []int64{1, 2, 3}, Given: true}},
		{"int list empty parts dropped", "cms.posts.list", params{"exclude": ",4,, 5 ,"}, "exclude", schema.ArgValue{Ints: []int64{4, 5}, Given: true}},
		{"int list empty", "cms.posts.list", params{"include": ""}, "include", schema.ArgValue{Given: true}},
		{"int list 100 items", "cms.posts.list", params{"include": strings.Repeat("7,", 100)}, "include", schema.ArgValue{Ints: slices.Repeat([]int64{7}, 100), Given: true}},
		{"string list", "cms.posts.list", params{"slug": "hello-world,second post"}, "slug", schema.ArgValue{Strs: []string{"hello-world", "second", "post"}, Given: true}},
		{"status list", "cms.posts.list", params{"status": "draft,publish"}, "status", schema.ArgValue{Strs: []string{"draft", "publish"}, Given: true}},
		{"status any", "cms.posts.list", params{"status": "any"}, "status", schema.ArgValue{Strs: []string{"any"}, Given: true}},
		{"force true", "cms.posts.delete", params{"force": "true"}, "force", schema.ArgValue{Bool: true, Given: true}},
		{"force 1", "cms.posts.delete", params{"force": "1"}, "force", schema.ArgValue{Bool: true, Given: true}},
		{"force TRUE", "cms.posts.delete", params{"force": "TRUE"}, "force", schema.ArgValue{Bool: true, Given: true}},
		{"force spaced", "cms.posts.delete", params{"force": " true "}, "force", schema.ArgValue{Bool: true, Given: true}},
		{"force false", "cms.posts.delete", params{"force": "false"}, "force", schema.ArgValue{Given: true}},
		{"force 0", "cms.posts.delete", params{"force": "0"}, "force", schema.ArgValue{Given: true}},
		{"force empty", "cms.posts.delete", params{"force": ""}, "force", schema.ArgValue{Given: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := parse(t, tc.route, tc.query)
			if got := a.Get(tc.arg); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %+v, want %+v", tc.arg, got, tc.want)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		name  string
		route string
		query params
		field string
		msg   string
	}{
		{"per_page 0", "products.list", params{"per_page": "0"}, "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{"per_page 101", "products.list", params{"per_page": "101"}, "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{"cms per_page 101", "cms.posts.list", params{"per_page": "101"}, "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{"cms per_page negative", "cms.posts.list", params{"per_page": "-1"}, "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		// page has both bounds, so it gets the between message, not "greater than or equal to".
		{"page 0", "products.list", params{"page": "0"}, "page", "page must be between 1 (inclusive) and 100000 (inclusive)"},
		{"cms page 0", "cms.posts.list", params{"page": "0"}, "page", "page must be greater than or equal to 1"},
		{"cms term page 0", "cms.categories.list", params{"page": "0"}, "page", "page must be greater than or equal to 1"},
		{"commerce page past max", "products.list", params{"page": "100001"}, "page", "page must be between 1 (inclusive) and 100000 (inclusive)"},
		{"featured limit 51", "products.featured", params{"limit": "51"}, "limit", "limit must be between 1 (inclusive) and 50 (inclusive)"},
		{"page not a number", "products.list", params{"page": "two"}, "page", "page is not of type integer."},
		{"page empty", "products.list", params{"page": ""}, "page", "page is not of type integer."},
		{"page decimal", "products.list", params{"page": "1.5"}, "page", "page is not of type integer."},
		{"page overflows int64", "products.list", params{"page": "99999999999999999999"}, "page", "page is not of type integer."},
		{"context unknown", "cms.posts.list", params{"context": "full"}, "context", "context is not one of view, embed, and edit."},
		{"context empty", "cms.posts.get", params{"context": ""}, "context", "context is not one of view, embed, and edit."},
		{"context case matters", "cms.posts.get", params{"context": "VIEW"}, "context", "context is not one of view, embed, and edit."},
		{"order unknown", "cms.posts.list", params{"order": "up"}, "order", "order is not one of asc and desc."},
		{"orderby unknown", "cms.posts.list", params{"orderby": "menu_order"}, "orderby", "orderby is not one of author, date, id, include, modified, parent, relevance, slug, include_slugs, and title."},
		{"status item unknown", "cms.posts.list", params{"status": "publish,bogus"}, "status", "status[1] is not one of publish, future, draft, pending, private, trash, auto-draft, inherit, request-pending, request-confirmed, request-failed, request-completed, and any."},
		{"after not a date", "cms.posts.list", params{"after": "yesterday"}, "after", "Invalid date."},
		{"modified_before bad month", "cms.posts.list", params{"modified_before": "2026-13-01T00:00:00"}, "modified_before", "Invalid date."},
		{"before date only", "cms.posts.list", params{"before": "2026-03-01"}, "before", "Invalid date."},
		{"author not int", "cms.posts.list", params{"author": "me"}, "author", "author[0] is not of type integer."},
		{"offset not int", "cms.posts.list", params{"offset": "ten"}, "offset", "offset is not of type integer."},
		{"search_columns unknown", "cms.posts.list", params{"search_columns": "post_title,post_name"}, "search_columns", "search_columns[1] is not one of post_title, post_content, and post_excerpt."},
		{"search_semantics unknown", "cms.posts.list", params{"search_semantics": "fuzzy"}, "search_semantics", "search_semantics is not one of exact."},
		{"tax_relation lower case", "cms.posts.list", params{"tax_relation": "and"}, "tax_relation", "tax_relation is not one of AND and OR."},
		{"categories item not int", "cms.posts.list", params{"categories": "3,x"}, "categories", "categories[1] is not of type integer."},
		{"categories terms not int", "cms.posts.list", params{"categories[terms]": "x"}, "categories", "categories[terms][0] is not of type integer."},
		{"categories operator", "cms.posts.list", params{"categories[terms]": "3", "categories[operator]": "NOT IN"}, "categories", "categories[operator] is not one of OR and AND."},
		{"tags include_children", "cms.posts.list", params{"tags[terms]": "3", "tags[include_children]": "1"}, "tags", "tags is not a valid Term ID Taxonomy Query. Reason: include_children is not a valid property of Object."},
		{"exclude form has no operator", "cms.posts.list", params{"categories_exclude[operator]": "AND"}, "categories_exclude", "categories_exclude is not a valid Term ID Taxonomy Query. Reason: operator is not a valid property of Object."},
		{"include_children not bool", "cms.posts.list", params{"categories[include_children]": "maybe"}, "categories", "categories[include_children] is not of type boolean."},
		{"sticky not bool", "cms.posts.list", params{"sticky": "yes"}, "sticky", "sticky is not of type boolean."},
		{"format unknown", "cms.posts.list", params{"format": "poem"}, "format", "format[0] is not one of standard, aside, chat, gallery, link, image, quote, status, video, and audio."},
		{"format duplicate", "cms.posts.list", params{"format": "aside,aside"}, "format", "format has duplicate items."},
		{"pages menu_order not int", "cms.pages.list", params{"menu_order": "first"}, "menu_order", "menu_order is not of type integer."},
		{"pages parent not int", "cms.pages.list", params{"parent": "x"}, "parent", "parent[0] is not of type integer."},
		{"menu items per_page 101", "cms.menu-items.list", params{"per_page": "101"}, "per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{"menu items menus not int", "cms.menu-items.list", params{"menus": "main"}, "menus", "menus[0] is not of type integer."},
		{"include item not int", "cms.posts.list", params{"include": "1,x"}, "include", "include[1] is not of type integer."},
		{"exclude first item not int", "cms.posts.list", params{"exclude": "a"}, "exclude", "exclude[0] is not of type integer."},
		{"include 101 items", "cms.posts.list", params{"include": strings.Repeat("1,", 101)}, "include", "include must contain at most 100 items."},
		{"slug 101 items", "cms.posts.list", params{"slug": strings.Repeat("a ", 101)}, "slug", "slug must contain at most 100 items."},
		{"password too long", "cms.posts.get", params{"password": strings.Repeat("p", 1001)}, "password", "password must be at most 1000 characters long."},
		{"currency too long", "products.list", params{"currency": strings.Repeat("E", 1001)}, "currency", "currency must be at most 1000 characters long."},
		{"force yes", "cms.posts.delete", params{"force": "yes"}, "force", "force is not of type boolean."},
		{"force 2", "cms.posts.delete", params{"force": "2"}, "force", "force is not of type boolean."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := schema.ParseArgs(route(t, tc.route), tc.query.get)
			if err == nil {
				t.Fatalf("ParseArgs(%v) = %+v, want an error", tc.query, a)
			}
			if a != nil {
				t.Errorf("ParseArgs(%v) returned args %+v with its error, want nil", tc.query, a)
			}
			var e *schema.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *schema.Error", err, err)
			}
			if e.Code != schema.CodeInvalid || e.CMSCode != "rest_invalid_param" {
				t.Errorf("Code, CMSCode = %q, %q, want %q, rest_invalid_param", e.Code, e.CMSCode, schema.CodeInvalid)
			}
			if e.Field != tc.field {
				t.Errorf("Field = %q, want %q", e.Field, tc.field)
			}
			if e.Message != tc.msg {
				t.Errorf("Message = %q, want %q", e.Message, tc.msg)
			}
			if want := map[string]string{tc.field: tc.msg}; !reflect.DeepEqual(e.Params, want) {
				t.Errorf("Params = %v, want %v", e.Params, want)
			}
		})
	}
}

func TestParseArgsCollectsEveryBadArg(t *testing.T) {
	q := params{"page": "0", "order": "up", "context": "full", "per_page": "5", "include": "x"}
	_, err := schema.ParseArgs(route(t, "cms.posts.list"), q.get)
	var e *schema.Error
	if !errors.As(err, &e) {
		t.Fatalf("ParseArgs error %v, want *schema.Error", err)
	}
	want := map[string]string{
		"context": "context is not one of view, embed, and edit.",
		"include": "include[0] is not of type integer.",
		"order":   "order is not one of asc and desc.",
		"page":    "page must be greater than or equal to 1",
	}
	if !reflect.DeepEqual(e.Params, want) {
		t.Errorf("Params = %v, want %v", e.Params, want)
	}
	if e.Field != "context" {
		t.Errorf("Field = %q, want the first bad argument alphabetically, context", e.Field)
	}
	if e.Message != want["context"] {
		t.Errorf("Message = %q, want %q", e.Message, want["context"])
	}
	if e.Code != schema.CodeInvalid || e.CMSCode != "rest_invalid_param" {
		t.Errorf("Code, CMSCode = %q, %q, want invalid, rest_invalid_param", e.Code, e.CMSCode)
	}
}

func TestParseArgsRequired(t *testing.T) {
	r := &schema.Route{Name: "test.required", Args: []schema.Arg{
		{Name: "b", Type: schema.ArgInt, Required: true},
		{Name: "a", Type: schema.ArgString, Required: true},
		{Name: "c", Type: schema.ArgInt, HasMin: true, Min: 1},
	}}
	_, err := schema.ParseArgs(r, params{"c": "0"}.get)
	var e *schema.Error
	if !errors.As(err, &e) {
		t.Fatalf("ParseArgs error %v, want *schema.Error", err)
	}
	if e.CMSCode != "rest_missing_callback_param" || e.Field != "b" || e.Message != "Missing parameter(s): b, a" {
		t.Errorf("error = %+v, want rest_missing_callback_param on b with \"Missing parameter(s): b, a\"", e)
	}

	// One-sided bounds take WordPress's one-sided messages.
	_, err = schema.ParseArgs(r, params{"a": "x", "b": "1", "c": "0"}.get)
	if !errors.As(err, &e) || e.Message != "c must be greater than or equal to 1" {
		t.Errorf("ParseArgs(c=0) error %v, want \"c must be greater than or equal to 1\"", err)
	}
	r.Args[2] = schema.Arg{Name: "c", Type: schema.ArgInt, HasMax: true, Max: 9}
	_, err = schema.ParseArgs(r, params{"a": "x", "b": "1", "c": "10"}.get)
	if !errors.As(err, &e) || e.Message != "c must be less than or equal to 9" {
		t.Errorf("ParseArgs(c=10) error %v, want \"c must be less than or equal to 9\"", err)
	}
	// An optional int without default may be absent or empty.
	a, err := schema.ParseArgs(r, params{"a": "x", "b": "1", "c": ""}.get)
	if err != nil || a.Int("c") != 0 {
		t.Errorf("ParseArgs(c=\"\") = %v, %v, want c = 0 and no error", a, err)
	}
}

func TestArgsGetUndeclaredPanics(t *testing.T) {
	a := parse(t, "cms.posts.get", params{})
	defer func() {
		if recover() == nil {
			t.Errorf("Get(\"page\") on cms.posts.get did not panic, want a panic for an undeclared argument")
		}
	}()
	a.Get("page")
}

func TestAppendKeyDefaults(t *testing.T) {
	a := parse(t, "cms.posts.list", params{})
	const want = "context=view&page=1&per_page=10&search=&after=&modified_after=&before=&modified_before=&author=&author_exclude=&exclude=&include=&offset=&order=desc&orderby=date&search_columns=&search_semantics=&slug=&status=publish&tax_relation=&categories=&categories_exclude=&tags=&tags_exclude=&ignore_sticky=true&format=&"
	if got := string(a.AppendKey(nil)); got != want {
		t.Errorf("AppendKey(nil) = %q, want %q", got, want)
	}
	if got := string(a.AppendKey([]byte("shop|GET|"))); got != "shop|GET|"+want {
		t.Errorf("AppendKey(prefix) = %q, want the prefix kept and the key appended", got)
	}
	d := parse(t, "cms.posts.delete", params{"force": "1"})
	if got, want := string(d.AppendKey(nil)), "force=true&"; got != want {
		t.Errorf("cms.posts.delete AppendKey = %q, want %q", got, want)
	}
}

func TestAppendKeyEquivalent(t *testing.T) {
	cases := []struct {
		name  string
		route string
		a, b  params
	}{
		{"defaults omitted or explicit", "cms.posts.list", params{},
			params{"context": "view", "page": "1", "per_page": "10", "order": "desc", "orderby": "date", "status": "publish"}},
		{"undeclared params ignored", "cms.posts.list", params{},
			params{"_embed": "1", "_fields": "id,title", "foo": "bar", "rest_route": "/cms/v2/posts"}},
		{"list separators", "cms.posts.list", params{"include": "1,2 3"}, params{"include": " 1 2,,3, "}},
		{"string list separators", "cms.posts.list", params{"slug": "a,b"}, params{"slug": "a b"}},
		{"int spelling", "cms.posts.list", params{"page": "2"}, params{"page": " +02 "}},
		{"bool spelling", "cms.posts.delete", params{"force": "true"}, params{"force": "1"}},
		{"false bool and default", "cms.posts.delete", params{}, params{"force": "0"}},
		{"empty bool and default", "cms.posts.delete", params{}, params{"force": ""}},
		{"commerce defaults", "products.list", params{}, params{"page": "1", "per_page": "24", "currency": ""}},
		{"commerce undeclared", "products.list", params{"per_page": "5"}, params{"per_page": "5", "utm_source": "x"}},
		{"get context default", "cms.posts.get", params{}, params{"context": "view"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka := string(parse(t, tc.route, tc.a).AppendKey(nil))
			kb := string(parse(t, tc.route, tc.b).AppendKey(nil))
			if ka != kb {
				t.Errorf("AppendKey(%v) = %q and AppendKey(%v) = %q, want equal", tc.a, ka, tc.b, kb)
			}
		})
	}
}

func TestAppendKeyDistinct(t *testing.T) {
	cases := []struct {
		name  string
		route string
		a, b  params
	}{
		{"page", "cms.posts.list", params{"page": "1"}, params{"page": "2"}},
		{"per_page", "cms.posts.list", params{}, params{"per_page": "11"}},
		{"order", "cms.posts.list", params{}, params{"order": "asc"}},
		{"orderby", "cms.posts.list", params{}, params{"orderby": "title"}},
		{"context", "cms.posts.list", params{}, params{"context": "embed"}},
		{"slug", "cms.posts.list", params{"slug": "a"}, params{"slug": "b"}},
		{"include", "cms.posts.list", params{"include": "1"}, params{"include": "1,2"}},
		{"include versus exclude", "cms.posts.list", params{"include": "1"}, params{"exclude": "1"}},
		// sticky=false excludes sticky posts; no sticky puts them first: different answers.
		{"sticky absent versus false", "cms.posts.list", params{}, params{"sticky": "false"}},
		{"sticky false versus true", "cms.posts.list", params{"sticky": "0"}, params{"sticky": "1"}},
		{"status", "cms.posts.list", params{}, params{"status": "draft"}},
		{"empty status list versus default", "cms.posts.list", params{}, params{"status": ""}},
		{"force", "cms.posts.delete", params{}, params{"force": "true"}},
		{"currency", "products.list", params{}, params{"currency": "EUR"}},
		{"currency case", "products.list", params{"currency": "eur"}, params{"currency": "EUR"}},
		{"password", "cms.posts.get", params{"password": "a"}, params{"password": "b"}},
		{"password given versus absent", "cms.posts.get", params{}, params{"password": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka := string(parse(t, tc.route, tc.a).AppendKey(nil))
			kb := string(parse(t, tc.route, tc.b).AppendKey(nil))
			if ka == kb {
				t.Errorf("AppendKey(%v) = AppendKey(%v) = %q, want different", tc.a, tc.b, ka)
			}
		})
	}
}

// queryParams splits a raw query string the way a transport does: first value wins, keys and
// values percent-decoded when they decode.
func queryParams(raw string) params {
	p := params{}
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		if _, dup := p[k]; !dup {
			p[k] = v
		}
	}
	return p
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"",
		"page=2&per_page=50&order=asc&orderby=title",
		"include=1,2%203&exclude=4&status=draft,publish&slug=a,b",
		"context=edit&_embed=1&foo=bar",
		"page=0&order=up&context=full",
		"per_page=101&include=x",
		"status=any&status=draft",
		"slug=a%26include%3D1",
		"page=+01&include=-1",
		"page=%zz",
		"search=lamp&search_columns=post_title&search_semantics=exact&orderby=relevance",
		"after=2026-03-01T12:00:00&before=2026-03-02 00:00:00Z&modified_after=2026-03-01T00:00:00.5%2B02:00",
		"categories[terms]=1,2&categories[operator]=AND&categories[include_children]=1&tags=3&tax_relation=OR",
		"categories=4&categories[operator]=AND&tags_exclude[terms]=x",
		"sticky=1&ignore_sticky=0&format=aside,link&offset=3&author=1&author_exclude=2",
		"format=aside,aside&after=2026-02-30T00:00:00",
		"per_page=&offset=-2&orderby=include_slugs&order=asc", // a revisions list without per_page
	} {
		f.Add(s)
	}
	// Every post type's collection and revisions: the raw query's first byte picks the route.
	var lists []*schema.Route
	for _, pt := range schema.PostTypes {
		if designType(pt) {
			continue // templates, parts, global styles: routes_design.go, tested in design_test.go
		}
		lists = append(lists, route(f, "cms."+pt.RestBase+".list"))
		if pt.Revisions {
			lists = append(lists, route(f, "cms."+pt.RestBase+".revisions.list"))
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := lists[0]
		if raw != "" {
			r = lists[int(raw[0])%len(lists)]
		}
		a, err := schema.ParseArgs(r, queryParams(raw).get)
		if err != nil {
			var e *schema.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *schema.Error", err, err)
			}
			if e.Code != schema.CodeInvalid {
				t.Fatalf("error code %q, want %q", e.Code, schema.CodeInvalid)
			}
			if e.Field == "" || e.Params[e.Field] != e.Message {
				t.Fatalf("error %+v: want Field naming a Params entry whose message is Message", e)
			}
			if a != nil {
				t.Fatalf("args %+v returned with an error", a)
			}
			return
		}
		if p := a.Int("page"); p < 1 { // CMS pages have no maximum (WordPress's)
			t.Fatalf("page = %d, outside its bounds", p)
		}
		// Revisions have no default per_page: 0 when not sent.
		if v := a.Get("per_page"); (v.Given || v.Int != 0) && (v.Int < 1 || v.Int > schema.CMSMaxPerPage) {
			t.Fatalf("per_page = %d, outside its bounds", v.Int)
		}
		for _, name := range []string{"context", "order", "orderby"} {
			d := r.Args[slices.IndexFunc(r.Args, func(d schema.Arg) bool { return d.Name == name })]
			if !slices.Contains(d.Enum, a.Str(name)) {
				t.Fatalf("%s = %q, not one of %q", name, a.Str(name), d.Enum)
			}
		}
		for _, d := range r.Args {
			v := a.Get(d.Name)
			switch d.Type {
			case schema.ArgTermFilter:
				if v.Str != "OR" && v.Str != "AND" || v.Str == "AND" && !d.TermOperator || v.Bool && !d.TermChildren {
					t.Fatalf("%s = %+v, not a filter %s accepts", d.Name, v, d.Name)
				}
			case schema.ArgDateTime:
				if v.Given && v.Str != "" && v.Time.IsZero() {
					t.Fatalf("%s = %q parsed to the zero time", d.Name, v.Str)
				}
			}
		}
		key := a.AppendKey(nil)

		// The key is itself a query that parses to the same key, unless a value holds '&' or '='
		// (a term filter's non-default object keys are parts of their own).
		for _, d := range r.Args {
			v := a.Get(d.Name)
			if strings.ContainsAny(v.Str+strings.Join(v.Strs, ""), "&=") {
				return
			}
		}
		parts := strings.Split(strings.TrimSuffix(string(key), "&"), "&")
		again := params{}
		for _, kv := range parts {
			k, v, _ := strings.Cut(kv, "=")
			again[k] = v
		}
		b, err := schema.ParseArgs(r, again.get)
		if err != nil {
			t.Fatalf("key %q does not parse back: %v", key, err)
		}
		if key2 := b.AppendKey(nil); string(key2) != string(key) {
			t.Fatalf("key %q parses back to key %q", key, key2)
		}
	})
}

func TestPageURL(t *testing.T) {
	cases := []struct {
		name  string
		query string
		n     int
		want  string
	}{
		{"no other arguments", "", 2, "https://shop.example.com/api/products?page=2"},
		{"other arguments", "per_page=5&currency=EUR", 3, "https://shop.example.com/api/products?per_page=5&currency=EUR&page=3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.PageURL("https://shop.example.com", "/api/products", tc.query, tc.n); got != tc.want {
				t.Errorf("PageURL = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInterfaceString(t *testing.T) {
	if got := schema.CMS.String(); got != "cms" {
		t.Errorf("CMS.String() = %q, want cms", got)
	}
	if got := schema.Commerce.String(); got != "commerce" {
		t.Errorf("Commerce.String() = %q, want commerce", got)
	}
}

// TestCMSPagesHaveNoMaximum checks every CMS route of the table: WordPress's page argument has a
// minimum and no maximum, so neither validation nor the discovery index may invent one.
func TestCMSPagesHaveNoMaximum(t *testing.T) {
	for _, r := range schema.Routes {
		for _, a := range r.Args {
			if r.Interface == schema.CMS && a.Name == "page" && (a.HasMax || !a.HasMin || a.Min != 1) {
				t.Errorf("%s %s: page %+v, want minimum 1 and no maximum", r.Method, r.Path, a)
			}
		}
	}
}
