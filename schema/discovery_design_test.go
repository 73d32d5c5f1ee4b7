package schema_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// The index's batch flags and route keys of the site design, abilities and agent routes: the
// global-styles item, theme and variations routes say allow_batch {"v1": false}, templates say
// nothing, posts say true; string ids and ability names are one simple capture each, so every
// key is a regular expression the wpapi client's route tree can parse (no nested group).
func TestDiscoveryDesignRoutes(t *testing.T) {
	body, _, err := schema.CMSIndex(&schema.Tenant{Name: "Shop", BaseURL: "https://shop.example", Timezone: "UTC"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Routes map[string]struct {
			Namespace string
			Methods   []string
			Endpoints []struct {
				Methods    []string
				AllowBatch map[string]bool `json:"allow_batch"`
				Args       json.RawMessage // an object, or [] when there are none
			}
		}
	}
	if err := json.Unmarshal(body, &idx); err != nil {
		t.Fatal(err)
	}
	const tid, tparent = `(?P<id>[^/]+//[\w%-]+)`, `(?P<parent>[^/]+//[\w%-]+)`
	for _, tc := range []struct {
		key   string
		batch string // "true", "false" or "" for no flag
		arg   string // a path argument the endpoints declare, with its type
		typ   string
	}{
		{"/cms/v2/posts", "true", "", ""},
		{"/cms/v2/templates", "", "cms_id", "integer"},
		{"/cms/v2/templates/lookup", "", "slug", "string"},
		{"/cms/v2/templates/" + tid, "", "id", "string"},
		{"/cms/v2/templates/" + tparent + "/revisions", "", "parent", "string"},
		{"/cms/v2/templates/" + tparent + `/revisions/(?P<id>[\d]+)`, "", "parent", "string"},
		{"/cms/v2/templates/" + tid + "/autosaves", "", "id", "string"},
		{"/cms/v2/template-parts/" + tid, "", "id", "string"},
		{"/cms/v2/template-parts/" + tparent + `/autosaves/(?P<id>[\d]+)`, "", "id", "integer"},
		{`/cms/v2/global-styles/(?P<id>[\d]+)`, "false", "id", "integer"},
		{`/cms/v2/global-styles/themes/(?P<stylesheet>[^/]+)`, "false", "stylesheet", "string"},
		{`/cms/v2/global-styles/themes/(?P<stylesheet>[^/]+)/variations`, "false", "stylesheet", "string"},
		{`/cms/v2/global-styles/(?P<parent>[\d]+)/revisions`, "", "parent", "integer"},
		{`/cms-abilities/v1/abilities/(?P<name>[a-z0-9-]+/[a-z0-9-]+)`, "", "name", "string"},
		{`/cms-abilities/v1/abilities/(?P<name>[a-z0-9-]+/[a-z0-9-]+)/run`, "", "name", "string"},
		{"/agent/v1/connect", "", "", ""},
		{"/agent/v1/execute", "", "", ""},
		{"/agent/v1/status", "", "", ""},
		{"/cms-site-health/v1/tests/database", "", "", ""},
	} {
		r, ok := idx.Routes[tc.key]
		if !ok {
			t.Errorf("index lacks %s", tc.key)
			continue
		}
		for i, ep := range r.Endpoints {
			got := ""
			if v, ok := ep.AllowBatch["v1"]; ok {
				got = map[bool]string{true: "true", false: "false"}[v]
			}
			if got != tc.batch {
				t.Errorf("%s %v: allow_batch %q, want %q", tc.key, ep.Methods, got, tc.batch)
			}
			var args map[string]map[string]any
			json.Unmarshal(ep.Args, &args)
			if i == 0 && tc.arg != "" && args[tc.arg]["type"] != tc.typ { // the first endpoint (GET, or the one there is)
				t.Errorf("%s %v: argument %s %v, want type %s", tc.key, ep.Methods, tc.arg, args[tc.arg], tc.typ)
			}
		}
	}
	nested := regexp.MustCompile(`\(\?P<\w+>[^)]*\(`)
	for key := range idx.Routes {
		if nested.MatchString(key) || strings.Contains(key, `\(`) {
			t.Errorf("route key %s has a nested group or an escaped parenthesis", key)
		}
		if _, err := regexp.Compile("^" + key + "$"); err != nil {
			t.Errorf("route key %s: %v", key, err)
		}
	}
	// The template key matches both spellings of an id, and only template ids.
	re := regexp.MustCompile("^/cms/v2/templates/" + tid + "$")
	for path, want := range map[string]bool{
		"/cms/v2/templates/vitrine-blocks//home": true, "/cms/v2/templates/vitrine-blocks//single-post": true,
		"/cms/v2/templates/home": false, "/cms/v2/templates/a//b/c": false,
	} {
		if re.MatchString(path) != want {
			t.Errorf("%s matches the template key: %v", path, !want)
		}
	}
}

// OPTIONS describes a template route whichever way its id is written.
func TestOptionsTemplateRoute(t *testing.T) {
	for _, path := range []string{"/cms/v2/templates/vitrine-blocks//home", "/cms/v2/templates/vitrine-blocks/home", "/cms/v2/template-parts/x//header/autosaves"} {
		var d struct {
			Namespace string
			Methods   []string
		}
		if err := json.Unmarshal(schema.CMSRouteDescription("https://shop.example", path), &d); err != nil || d.Namespace != "cms/v2" {
			t.Errorf("OPTIONS %s: %+v %v", path, d, err)
		}
	}
	if got := string(schema.CMSRouteDescription("https://shop.example", "/cms/v2/templates/a//b/c/d")); got != "[]" {
		t.Errorf("OPTIONS of no route: %s", got)
	}
}
