package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// listIDs reads a collection answer's record ids, sorted.
func listIDs(t *testing.T, r *response) []int64 {
	t.Helper()
	var list []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatalf("status %d, not a list: %s", r.status, r.body)
	}
	out := []int64{}
	for _, x := range list {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}

// TestCMSPageArgument checks WordPress's page argument through an edge (anonymous) and the
// origin behind it (credentials): a minimum and no maximum, in validation and in the discovery
// index, and page numbers of any size answered as a page past the last, never a 500.
func TestCMSPageArgument(t *testing.T) {
	c := newCMSSite(t)
	admin := schema.RoleAdministrator
	for i := range 3 {
		c.post(&schema.Post{Type: "post", Status: schema.StatusPublish, Title: fmt.Sprintf("Post %d", i), Content: "Body",
			Author: c.users[admin].ID, CommentStatus: "open", PingStatus: "open", Format: "standard",
			DateGMT: time.Now().UTC().Add(-time.Duration(i+1) * time.Hour)})
	}
	r := c.rest(admin, "POST", "/cms/v2/categories", `{"name":"Only"}`)
	c.want(r, 201, "")
	const huge = "9223372036854775807" // (page-1)*per_page overflows int64
	tooLarge := `{"code":"rest_post_invalid_page_number","message":"The page number requested is larger than the number of pages available.","data":{"status":400}}`
	for _, role := range []schema.Role{"", admin} {
		for _, tc := range []struct {
			name, route string
			status      int
			body        string // exact body, or "" to check the list below
			ids         int    // records listed
		}{
			{"posts page 0", "/cms/v2/posts?page=0", 400, `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}`, 0},
			{"posts page -1", "/cms/v2/posts?page=-1", 400, `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}`, 0},
			{"pages page 0", "/cms/v2/pages?page=0", 400, `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}`, 0},
			{"categories page 0", "/cms/v2/categories?page=0", 400, `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}`, 0},
			{"users page 0", "/cms/v2/users?page=0", 400, `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}`, 0},
			{"posts page past the old maximum", "/cms/v2/posts?page=100001", 400, tooLarge, 0},
			{"posts page at int64's end", "/cms/v2/posts?page=" + huge + "&per_page=100", 400, tooLarge, 0},
			{"posts page at int64's end, offset given", "/cms/v2/posts?page=" + huge + "&offset=1", 400, tooLarge, 0},
			{"posts page at int64's end, nothing matches", "/cms/v2/posts?page=" + huge + "&search=nothing-matches-this", 200, "[]", 0},
			{"posts last page", "/cms/v2/posts?page=3&per_page=1", 200, "", 1},
			{"categories page at int64's end", "/cms/v2/categories?page=" + huge + "&per_page=100", 200, "[]", 0},
		} {
			t.Run(fmt.Sprintf("%s as %q", tc.name, role), func(t *testing.T) {
				r := c.rest(role, "GET", tc.route, "")
				if r.status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
				}
				if tc.body != "" && strings.TrimSpace(string(r.body)) != tc.body {
					t.Fatalf("body %s\nwant %s", r.body, tc.body)
				}
				if tc.body == "" && len(listIDs(t, r)) != tc.ids {
					t.Fatalf("listed %s, want %d records", r.body, tc.ids)
				}
			})
		}
	}
	// Users past the last page (anonymous callers see the authors of published posts).
	r = c.rest("", "GET", "/cms/v2/users?page="+huge, "")
	c.want(r, 400, "rest_user_invalid_page_number")

	// The discovery index and OPTIONS declare the same argument: minimum 1, no maximum.
	for _, route := range []string{"/cms/v2", "/cms/v2/posts"} {
		method := "GET"
		if route != "/cms/v2" {
			method = "OPTIONS"
		}
		r := c.rest("", method, route, "")
		if r.status != 200 {
			t.Fatalf("%s %s: %d %s", method, route, r.status, r.body)
		}
		type endpoint struct{ Args json.RawMessage } // an object, or [] without arguments
		var doc struct {
			Routes    map[string]struct{ Endpoints []endpoint }
			Endpoints []endpoint
		}
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		eps := doc.Endpoints
		for _, rt := range doc.Routes {
			eps = append(eps, rt.Endpoints...)
		}
		seen := 0
		for _, ep := range eps {
			var args map[string]map[string]any
			json.Unmarshal(ep.Args, &args) // [] leaves it empty
			if p, ok := args["page"]; ok {
				seen++
				if _, has := p["maximum"]; has || p["minimum"] != 1.0 {
					t.Errorf("%s %s: page declared %v, want minimum 1 and no maximum", method, route, p)
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s %s declares no page argument: %.300s", method, route, r.body)
		}
	}

	// The commerce interface keeps its own bound (its spec leaves pagination bounds to us).
	r = call(t, "GET", c.edge, c.host, "/api/posts?page=100001", "")
	if m := r.json(t); r.status != 400 || m["field"] != "page" || m["error"] != "page must be between 1 (inclusive) and 100000 (inclusive)" {
		t.Errorf("commerce page 100001: %d %s", r.status, r.body)
	}
}

// TestCMSTaxonomyIncludeChildren checks the object form of taxonomy filters with
// include_children, through an edge (anonymous) and the origin (credentials), against
// WP_Tax_Query: an IN or NOT IN clause counts a category's descendants as the category; an AND
// clause needs the category and every descendant, and a category given with one of its own
// descendants matches nothing. Tags are flat: they take no include_children.
func TestCMSTaxonomyIncludeChildren(t *testing.T) {
	c := newCMSSite(t)
	admin := schema.RoleAdministrator
	cat := func(name string, parent int64) int64 {
		r := c.rest(admin, "POST", "/cms/v2/categories", fmt.Sprintf(`{"name":%q,"parent":%d}`, name, parent))
		c.want(r, 201, "")
		return id(r.json(t))
	}
	a := cat("A", 0)
	a1 := cat("A1", a)
	a11 := cat("A11", a1)
	b := cat("B", 0)
	r := c.rest(admin, "POST", "/cms/v2/tags", `{"name":"T"}`)
	c.want(r, 201, "")
	tag := id(r.json(t))
	post := func(title string, tags []int64, cats ...int64) int64 {
		p := &schema.Post{Type: "post", Status: schema.StatusPublish, Title: title, Content: "Body", Author: c.users[admin].ID,
			CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: time.Now().UTC().Add(-time.Hour)}
		for _, x := range cats {
			p.Categories = append(p.Categories, schema.TermID(x))
		}
		for _, x := range tags {
			p.Tags = append(p.Tags, schema.TermID(x))
		}
		c.post(p)
		return int64(p.ID)
	}
	pA := post("in A", nil, a)
	pA1 := post("in A1", nil, a1)
	pA11 := post("in A11, tagged", []int64{tag}, a11)
	pAA1 := post("in A and A1", nil, a, a1)
	pAll := post("in A, A1 and A11", nil, a, a1, a11)
	pB := post("in B, tagged", []int64{tag}, b)
	ids := func(v ...int64) []int64 { slices.Sort(v); return append([]int64{}, v...) }

	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"a parent alone", fmt.Sprintf("categories[terms]=%d", a), ids(pA, pAA1, pAll)},
		{"a parent with its children", fmt.Sprintf("categories[terms]=%d&categories[include_children]=true", a), ids(pA, pA1, pA11, pAA1, pAll)},
		{"include_children false", fmt.Sprintf("categories[terms]=%d&categories[include_children]=false", a), ids(pA, pAA1, pAll)},
		{"a middle category with its children", fmt.Sprintf("categories[terms]=%d&categories[include_children]=1", a1), ids(pA1, pA11, pAA1, pAll)},
		{"two trees with children", fmt.Sprintf("categories[terms]=%d,%d&categories[include_children]=true", a1, b), ids(pA1, pA11, pAA1, pAll, pB)},
		{"AND without children", fmt.Sprintf("categories[terms]=%d&categories[operator]=AND", a), ids(pA, pAA1, pAll)},
		{"AND with children needs every descendant", fmt.Sprintf("categories[terms]=%d&categories[operator]=AND&categories[include_children]=true", a), ids(pAll)},
		{"AND with children of a middle category", fmt.Sprintf("categories[terms]=%d&categories[operator]=AND&categories[include_children]=true", a1), ids(pAll)},
		{"AND with a category and its descendant matches nothing", fmt.Sprintf("categories[terms]=%d,%d&categories[operator]=AND&categories[include_children]=true", a, a11), ids()},
		{"AND of a category and its descendant without children", fmt.Sprintf("categories[terms]=%d,%d&categories[operator]=AND", a, a1), ids(pAA1, pAll)},
		{"exclude a parent with its children", fmt.Sprintf("categories_exclude[terms]=%d&categories_exclude[include_children]=true", a), ids(pB)},
		{"exclude a middle category with its children", fmt.Sprintf("categories_exclude[terms]=%d&categories_exclude[include_children]=true", a1), ids(pA, pB)},
		{"exclude a parent alone", fmt.Sprintf("categories_exclude[terms]=%d", a), ids(pA1, pA11, pB)},
		{"exclude list form takes no children", fmt.Sprintf("categories_exclude=%d", a1), ids(pA, pA11, pB)},
		{"include and exclude with children", fmt.Sprintf("categories[terms]=%d&categories[include_children]=true&categories_exclude[terms]=%d&categories_exclude[include_children]=true", a, a1), ids(pA)},
		{"tax_relation AND with a tag", fmt.Sprintf("categories[terms]=%d&categories[include_children]=true&tags=%d", a, tag), ids(pA11)},
		{"tax_relation OR with a tag", fmt.Sprintf("categories[terms]=%d&categories[include_children]=true&tags=%d&tax_relation=OR", a1, tag), ids(pA1, pA11, pAA1, pAll, pB)},
		{"tax_relation OR with an AND clause", fmt.Sprintf("categories[terms]=%d&categories[operator]=AND&categories[include_children]=true&tags[terms]=%d&tax_relation=OR", a, tag), ids(pA11, pAll, pB)},
		{"tax_relation OR with an exclusion", fmt.Sprintf("categories_exclude[terms]=%d&categories_exclude[include_children]=true&tags=%d&tax_relation=OR", a, tag), ids(pA11, pB)},
	} {
		for _, role := range []schema.Role{"", admin} {
			t.Run(fmt.Sprintf("%s as %q", tc.name, role), func(t *testing.T) {
				r := c.rest(role, "GET", "/cms/v2/posts?per_page=100&"+tc.query, "")
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if got := listIDs(t, r); !slices.Equal(got, tc.want) {
					t.Fatalf("%s listed %v, want %v", tc.query, got, tc.want)
				}
				if got := r.header.Get("X-WP-Total"); got != fmt.Sprint(len(tc.want)) {
					t.Fatalf("X-WP-Total %s, want %d", got, len(tc.want))
				}
			})
		}
	}

	// Re-parenting a category moves its posts under the new parent at once (the cached list
	// depends on the posts class, which term writes bump).
	filter := fmt.Sprintf("/cms/v2/posts?per_page=100&categories[terms]=%d&categories[include_children]=true", b)
	if got := listIDs(t, c.rest("", "GET", filter, "")); !slices.Equal(got, ids(pB)) {
		t.Fatalf("B with children before the move: %v", got)
	}
	r = c.rest(admin, "POST", fmt.Sprintf("/cms/v2/categories/%d", a11), fmt.Sprintf(`{"parent":%d}`, b))
	c.want(r, 200, "")
	waitFor(t, 5*time.Second, "the edge to list A11's post under B", func() bool {
		return slices.Equal(listIDs(t, c.rest("", "GET", filter, "")), ids(pA11, pAll, pB))
	})

	// Tags are not hierarchical: WordPress's schema for them has no include_children.
	for _, tc := range []struct{ query, param string }{
		{fmt.Sprintf("tags[terms]=%d&tags[include_children]=true", tag), "tags"},
		{fmt.Sprintf("tags_exclude[terms]=%d&tags_exclude[include_children]=true", tag), "tags_exclude"},
	} {
		r := c.rest("", "GET", "/cms/v2/posts?"+tc.query, "")
		msg := tc.param + " is not a valid Term ID Taxonomy Query. Reason: include_children is not a valid property of Object."
		want := fmt.Sprintf(`{"code":"rest_invalid_param","message":"Invalid parameter(s): %s","data":{"status":400,"params":{%q:%q},"details":{%q:{"code":"rest_no_matching_schema","message":%q,"data":null}}}}`,
			tc.param, tc.param, msg, tc.param, msg)
		if r.status != 400 || strings.TrimSpace(string(r.body)) != want {
			t.Errorf("%s: %d %s\nwant 400 %s", tc.query, r.status, r.body, want)
		}
	}
}
