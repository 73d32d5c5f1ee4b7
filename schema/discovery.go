package schema

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Discovery of the CMS interface: the index (GET /), the namespace indexes (GET /cms/v2…) and
// the route descriptions OPTIONS answers, all derived from Routes, the one route table. They
// change only when the table does, that is with a deploy; the only per-tenant parts are the
// tenant's name, timezone and canonical base URL.
//
// Route keys are WordPress's patterns as WordPress prints them: {id} becomes (?P<id>[\d]+). Every
// capture is a simple one (no nested group, no escaped parenthesis), so the npm wpapi client's
// discovery (1.2.2) can parse the whole tree.

// CMSHelpURL is the index's "help" link, WordPress's.
const CMSHelpURL = "https://developer.wordpress.org/rest-api/"

// CMSAdminPath is where the tenant's administration pages would live: WordPress's /wp-admin with
// cms in place of wp. The index names its application-password authorization page under it.
const CMSAdminPath = "/cms-admin"

// capturePatterns are the regular expressions of path captures in route keys (WordPress's).
// Other captures match one path segment.
var capturePatterns = map[string]string{"id": `[\d]+`, "parent": `[\d]+`, "location": `[\w-]+`}

// CMSRouteKey returns the index key of a CMS route path: "/cms/v2/posts/{id}" becomes
// "/cms/v2/posts/(?P<id>[\d]+)".
func CMSRouteKey(path string) string {
	if !strings.Contains(path, "{") {
		return path
	}
	var b strings.Builder
	for len(path) > 0 {
		i := strings.IndexByte(path, '{')
		j := strings.IndexByte(path, '}')
		if i < 0 || j < i {
			b.WriteString(path)
			break
		}
		name := path[i+1 : j]
		pat, ok := capturePatterns[name]
		if !ok {
			pat = `[^/]+`
		}
		if jc, ok := JoinedCaptureOf(path[i : j+1]); ok {
			name, pat = jc.Name, jc.Pattern
		}
		b.WriteString(path[:i])
		b.WriteString("(?P<" + name + ">" + pat + ")")
		path = path[j+1:]
	}
	return b.String()
}

// CMSNamespaceOf returns the namespace of a CMS route path: its first two segments ("cms/v2"),
// or "" for the built-in routes (the index "/" and "/batch/v1").
func CMSNamespaceOf(path string) string {
	if path == "/" || path == "/batch/v1" {
		return ""
	}
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 2 {
		return parts[0]
	}
	return parts[0] + "/" + parts[1]
}

// routeDesc is one route pattern of the index: every method of every route at one path.
type routeDesc struct {
	path      string
	key       string
	namespace string
	methods   []string
	endpoints []endpointDesc
	// segments is path split on "/", for matching OPTIONS requests.
	segments []string
}

type endpointDesc struct {
	name           string
	methods        []string
	batch, noBatch bool
	args           []Arg
}

type discovery struct {
	namespaces []string
	routes     []*routeDesc
	byNS       map[string][]*routeDesc
}

// cmsDiscovery is derived once from the route table, which is immutable.
var cmsDiscovery = sync.OnceValue(func() *discovery { return buildDiscovery(Routes) })

func buildDiscovery(routes []Route) *discovery {
	d := &discovery{byNS: map[string][]*routeDesc{}}
	byPath := map[string]*routeDesc{}
	var order []*routeDesc
	for i := range routes {
		r := &routes[i]
		if r.Interface != CMS {
			continue
		}
		if r.Name == cmsNamespaceRoute {
			d.namespaces = append(d.namespaces, CMSNamespaceOf(r.Path))
		}
		rd := byPath[r.Path]
		if rd == nil {
			rd = &routeDesc{path: r.Path, key: CMSRouteKey(r.Path), namespace: CMSNamespaceOf(r.Path),
				segments: expandJoined(strings.Split(strings.TrimPrefix(r.Path, "/"), "/"))}
			byPath[r.Path] = rd
			order = append(order, rd)
		}
		rd.methods = append(rd.methods, r.Method)
		var ep *endpointDesc
		for j := range rd.endpoints {
			if rd.endpoints[j].name == r.Name {
				ep = &rd.endpoints[j]
			}
		}
		if ep == nil {
			rd.endpoints = append(rd.endpoints, endpointDesc{name: r.Name, batch: r.Batch, noBatch: r.NoBatch, args: endpointArgs(r)})
			ep = &rd.endpoints[len(rd.endpoints)-1]
		}
		ep.methods = append(ep.methods, r.Method)
	}
	// Built-in routes first ("/" leading), then each namespace's routes, its root first.
	for _, rd := range order {
		if rd.namespace == "" && rd.path == "/" {
			d.routes = append(d.routes, rd)
		}
	}
	for _, rd := range order {
		if rd.namespace == "" && rd.path != "/" {
			d.routes = append(d.routes, rd)
		}
	}
	for _, ns := range d.namespaces {
		root := "/" + ns
		for _, rd := range order {
			if rd.namespace == ns && rd.path == root {
				d.routes = append(d.routes, rd)
				d.byNS[ns] = append(d.byNS[ns], rd)
			}
		}
		for _, rd := range order {
			if rd.namespace == ns && rd.path != root {
				d.routes = append(d.routes, rd)
				d.byNS[ns] = append(d.byNS[ns], rd)
			}
		}
	}
	return d
}

// endpointArgs are the arguments an endpoint shows: its path captures (WordPress's route-level
// arguments, merged into every endpoint) and then its declared query arguments.
func endpointArgs(r *Route) []Arg {
	var out []Arg
	for _, seg := range strings.Split(r.Path, "/") {
		if !strings.HasPrefix(seg, "{") || !strings.HasSuffix(seg, "}") {
			continue
		}
		if jc, ok := JoinedCaptureOf(seg); ok {
			out = append(out, Arg{Name: jc.Name, Type: ArgString, Description: jc.Description})
			continue
		}
		name := seg[1 : len(seg)-1]
		a := Arg{Name: name, Type: ArgString}
		switch name {
		case "id":
			a.Type, a.Description = ArgInt, "Unique identifier for the object."
		case "parent":
			a.Type, a.Description = ArgInt, "The ID for the parent of the object."
		}
		out = append(out, a)
	}
	return append(out, r.Args...)
}

// cmsNamespaceRoute is the route name of every namespace root.
const cmsNamespaceRoute = "cms.namespace"

// CMSNamespaces returns the namespaces the index lists, in the table's order.
func CMSNamespaces() []string { return cmsDiscovery().namespaces }

// jsonObject is a JSON object that keeps its members' order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := MarshalJSON(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := MarshalJSON(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type linkList []map[string]string

func selfLink(href string) jsonObject {
	return jsonObject{{"self", linkList{{"href": href}}}}
}

// argSchema renders an argument as the JSON-schema subset WordPress shows, with "required"
// always present.
func argSchema(a *Arg) jsonObject {
	var o jsonObject
	if a.Description != "" {
		o = append(o, jsonMember{"description", a.Description})
	}
	list := a.Type == ArgIntList || a.Type == ArgStringList
	itemType := "string"
	switch a.Type {
	case ArgInt:
		o = append(o, jsonMember{"type", "integer"})
	case ArgBool:
		o = append(o, jsonMember{"type", "boolean"})
	case ArgString:
		o = append(o, jsonMember{"type", "string"})
	case ArgIntList:
		o = append(o, jsonMember{"type", "array"})
		itemType = "integer"
	case ArgStringList:
		o = append(o, jsonMember{"type", "array"})
	case ArgDateTime: // the CMS argument shapes of args_cms.go
		o = append(o, jsonMember{"type", "string"}, jsonMember{"format", "date-time"})
	case ArgTermFilter:
		o = append(o, jsonMember{"type", []string{"object", "array"}}, jsonMember{"oneOf", termFilterSchema(a)})
	}
	if a.Default != "" {
		o = append(o, jsonMember{"default", typedDefault(a)})
	}
	if len(a.Enum) > 0 && !list {
		o = append(o, jsonMember{"enum", a.Enum})
	}
	if a.HasMin {
		o = append(o, jsonMember{"minimum", a.Min})
	}
	if a.HasMax {
		o = append(o, jsonMember{"maximum", a.Max})
	}
	if list {
		items := jsonObject{{"type", itemType}}
		if len(a.Enum) > 0 {
			items = append(items, jsonMember{"enum", a.Enum})
		}
		o = append(o, jsonMember{"items", items})
		if a.MaxItems > 0 {
			o = append(o, jsonMember{"maxItems", a.MaxItems})
		}
		if a.Unique {
			o = append(o, jsonMember{"uniqueItems", true})
		}
	}
	return append(o, jsonMember{"required", a.Required})
}

// termFilterSchema is the oneOf of a taxonomy filter: a list of term ids, or WordPress's
// taxonomy query object (operator on include filters, include_children on hierarchical ones).
func termFilterSchema(a *Arg) []jsonObject {
	ids := jsonObject{{"type", "array"}, {"items", jsonObject{{"type", "integer"}}}, {"default", []int64{}}}
	props := jsonObject{{"terms", jsonObject{
		{"description", "Term IDs."}, {"type", "array"}, {"items", jsonObject{{"type", "integer"}}}, {"default", []int64{}}}}}
	if a.TermChildren {
		props = append(props, jsonMember{"include_children", jsonObject{
			{"description", "Whether to include child terms in the terms limiting the result set."}, {"type", "boolean"}, {"default", false}}})
	}
	if a.TermOperator {
		props = append(props, jsonMember{"operator", jsonObject{
			{"description", "Whether items must be assigned all or any of the specified terms."}, {"type", "string"},
			{"enum", []string{"AND", "OR"}}, {"default", "OR"}}})
	}
	return []jsonObject{
		append(jsonObject{{"title", "Term ID List"}, {"description", "Match terms with the listed IDs."}}, ids...),
		{{"title", "Term ID Taxonomy Query"}, {"description", "Perform an advanced term query."}, {"type", "object"},
			{"properties", props}, {"additionalProperties", false}},
	}
}

// typedDefault is an argument's default in its JSON type.
func typedDefault(a *Arg) any {
	switch a.Type {
	case ArgInt:
		if n, err := strconv.ParseInt(a.Default, 10, 64); err == nil {
			return n
		}
	case ArgBool:
		if b, err := strconv.ParseBool(a.Default); err == nil {
			return b
		}
	case ArgIntList:
		out := []int64{}
		for _, p := range splitList(a.Default) {
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				out = append(out, n)
			}
		}
		return out
	case ArgStringList:
		return append([]string{}, splitList(a.Default)...)
	}
	return a.Default
}

// entry renders one route of the index, of a namespace index or of an OPTIONS answer.
func (rd *routeDesc) entry(site Site) jsonObject {
	endpoints := make([]jsonObject, 0, len(rd.endpoints))
	for i := range rd.endpoints {
		ep := &rd.endpoints[i]
		e := jsonObject{{"methods", ep.methods}}
		switch {
		case ep.batch:
			e = append(e, jsonMember{"allow_batch", map[string]bool{"v1": true}})
		case ep.noBatch:
			e = append(e, jsonMember{"allow_batch", map[string]bool{"v1": false}})
		}
		args := make(jsonObject, 0, len(ep.args))
		for j := range ep.args {
			args = append(args, jsonMember{ep.args[j].Name, argSchema(&ep.args[j])})
		}
		if len(args) == 0 {
			// WordPress's args are a PHP array: an empty one is printed [].
			e = append(e, jsonMember{"args", []any{}})
		} else {
			e = append(e, jsonMember{"args", args})
		}
		endpoints = append(endpoints, e)
	}
	o := jsonObject{{"namespace", rd.namespace}, {"methods", rd.methods}, {"endpoints", endpoints}}
	if !strings.Contains(rd.path, "{") {
		o = append(o, jsonMember{"_links", selfLink(site.RestURL(rd.path))})
	}
	return o
}

func routesObject(rds []*routeDesc, site Site) jsonObject {
	o := make(jsonObject, 0, len(rds))
	for _, rd := range rds {
		o = append(o, jsonMember{rd.key, rd.entry(site)})
	}
	return o
}

// GMTOffset returns a timezone's offset from UTC at an instant, in hours (5.5 for India), and the
// instant the offset next changes (zero when it never does). WordPress computes gmt_offset from
// timezone_string the same way, at the time of the request.
func GMTOffset(loc *time.Location, at time.Time) (float64, time.Time) {
	t := at.In(loc)
	_, off := t.Zone()
	_, end := t.ZoneBounds()
	return float64(off) / 3600, end
}

// CMSIndex renders the discovery index of a tenant at an instant, and the instant it stops being
// valid (the next change of the tenant's UTC offset; zero for never). Its URLs come from the
// tenant's canonical base URL.
func CMSIndex(t *Tenant, at time.Time) ([]byte, time.Time, error) {
	d := cmsDiscovery()
	site := Site{Base: CanonicalBaseURL(t.BaseURL)}
	loc, err := time.LoadLocation(t.Timezone)
	if err != nil {
		loc = time.UTC
	}
	offset, until := GMTOffset(loc, at)
	o := jsonObject{
		{"name", t.Name},
		{"description", ""},
		{"url", site.Base},
		{"home", site.Base},
		{"gmt_offset", jsonNumber(offset)},
		{"timezone_string", t.Timezone},
		{"page_for_posts", 0},
		{"page_on_front", 0},
		{"show_on_front", "posts"},
		{"namespaces", d.namespaces},
		{"authentication", jsonObject{{"application-passwords", jsonObject{{"endpoints", jsonObject{
			{"authorization", site.Base + CMSAdminPath + "/authorize-application.php"}}}}}}},
		{"routes", routesObject(d.routes, site)},
		{"site_logo", 0},
		{"site_icon", 0},
		{"site_icon_url", ""},
		{"_links", jsonObject{{"help", linkList{{"href": CMSHelpURL}}}}},
	}
	b, err := MarshalJSON(o)
	return b, until, err
}

// jsonNumber renders a float the way PHP's json_encode renders gmt_offset: 2, 5.5, -3.5.
type jsonNumber float64

func (n jsonNumber) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(n), 'f', -1, 64), nil
}

// ErrNoNamespace is the 404 of a namespace index asked for a namespace that does not exist.
var ErrNoNamespace = &Error{Code: CodeNotFound, CMSCode: "rest_invalid_namespace", Message: "The specified namespace could not be found."}

// CMSNamespaceIndex renders the index of one namespace: {namespace, routes, _links.up}.
func CMSNamespaceIndex(t *Tenant, ns string) ([]byte, error) {
	d := cmsDiscovery()
	rds, ok := d.byNS[ns]
	if !ok {
		return nil, ErrNoNamespace
	}
	site := Site{Base: CanonicalBaseURL(t.BaseURL)}
	return MarshalJSON(jsonObject{
		{"namespace", ns},
		{"routes", routesObject(rds, site)},
		{"_links", jsonObject{{"up", linkList{{"href": site.APIRoot()}}}}},
	})
}

// CMSRouteDescription renders what OPTIONS answers for a rest_route path: the index entry of the
// route matching it (any method) with the item schema of its resource (itemschema.go), or []
// when none does, as WordPress does.
func CMSRouteDescription(base, path string) []byte {
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	path = CollapseTemplateID(path)
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, rd := range cmsDiscovery().routes {
		if rd.matches(path, segs) {
			e := rd.entry(Site{Base: CanonicalBaseURL(base)})
			if sch := routeItemSchema(rd.path); sch != nil {
				e = append(e, jsonMember{"schema", sch})
			}
			b, err := MarshalJSON(e)
			if err == nil {
				return b
			}
		}
	}
	return []byte("[]")
}

// expandJoined replaces each joined capture segment ("{id*}") by two capture segments, as the
// router matches them.
func expandJoined(segs []string) []string {
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		if _, ok := JoinedCaptureOf(s); ok {
			out = append(out, "{*}", "{*}") // any non-empty segment
			continue
		}
		out = append(out, s)
	}
	return out
}

func (rd *routeDesc) matches(path string, segs []string) bool {
	if rd.path == "/" || path == "/" {
		return rd.path == path
	}
	if len(segs) != len(rd.segments) {
		return false
	}
	for i, s := range rd.segments {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if segs[i] == "" {
				return false
			}
			if capturePatterns[s[1:len(s)-1]] == `[\d]+` && strings.Trim(segs[i], "0123456789") != "" {
				return false
			}
			continue
		}
		if !strings.EqualFold(s, segs[i]) {
			return false
		}
	}
	return true
}

// argIndexContext is the context argument of the index and namespace roots: WordPress declares
// it with a default and no enum.
var argIndexContext = Arg{Name: "context", Type: ArgString, Default: "view", Description: "Scope under which the request is made; determines fields present in response."}

// namespaceArgs are the arguments of a namespace root.
func namespaceArgs(ns string) []Arg {
	return []Arg{{Name: "namespace", Type: ArgString, Default: ns}, argIndexContext}
}
