package schema_test

import (
	"testing"

	"vitrine/schema"
)

func TestPageLinks(t *testing.T) {
	r := schema.RouteByName("cms.posts.list")
	base := "https://shop.example/index.php?rest_route=/cms/v2/posts"
	for _, tc := range []struct {
		name        string
		q           map[string]string
		page, total int
		want        string
	}{
		{"one page", map[string]string{"search": "x"}, 1, 1, ""},
		{"first page", map[string]string{"per_page": "5"}, 1, 3, `<` + base + `&per_page=5&page=2>; rel="next"`},
		{"middle, escaped, page itself left out", map[string]string{"search": "a b&c", "page": "2"}, 2, 3,
			`<` + base + `&search=a+b%26c&page=1>; rel="prev", <` + base + `&search=a+b%26c&page=3>; rel="next"`},
		{"past the end points back to the last", nil, 9, 3, `<` + base + `&page=3>; rel="prev"`},
		{"term filter object keys, undeclared parameters dropped", map[string]string{"categories[terms]": "3", "categories[operator]": "AND", "utm": "x"}, 1, 2,
			`<` + base + `&categories%5Bterms%5D=3&categories%5Boperator%5D=AND&page=2>; rel="next"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(n string) (string, bool) { v, ok := tc.q[n]; return v, ok }
			if got := schema.PageLinks(base, r, get, tc.page, tc.total); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPageOffset(t *testing.T) {
	for _, tc := range []struct {
		page, perPage int64
		want          int
	}{
		{1, 10, 0},
		{3, 10, 20},
		{0, 10, 0},
		{-5, 10, 0},
		{2, 0, 0},
		{schema.MaxOffset/100 + 1, 100, schema.MaxOffset / 100 * 100},
		{schema.MaxOffset/100 + 2, 100, schema.MaxOffset},
		{9223372036854775807, 100, schema.MaxOffset}, // (page-1)*per_page would overflow int64
		{9223372036854775807, 1, schema.MaxOffset},
	} {
		if got := schema.PageOffset(tc.page, tc.perPage); got != tc.want {
			t.Errorf("PageOffset(%d, %d) = %d, want %d", tc.page, tc.perPage, got, tc.want)
		}
	}
}
