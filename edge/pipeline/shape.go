package pipeline

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// CMS response shaping: the global parameters WordPress applies to every REST response, in its
// order. _fields filters a success's body (never an error's); _embed (not applied here: the
// post-type reads expand embeddable links before _fields, see AppendEmbedKey); _envelope wraps the
// answer as {body, status, headers} with status 200; _pretty indents the JSON; _jsonp wraps it
// as /**/cb(…) in application/javascript. An invalid _jsonp callback is refused before anything
// else, even before the route is matched (CheckJSONP). Edges and the origin shape the same way:
// the functions here are the one implementation.

// Shape is what a CMS request asks of its answer's form.
type Shape struct {
	// Fields is the _fields tree; nil when the request did not filter.
	Fields *FieldTree
	// Envelope is _envelope (present, whatever its value).
	Envelope bool
	// JSONP is the validated _jsonp callback ("" for none).
	JSONP string
	// Pretty is _pretty: the JSON is indented (four spaces, as PHP's JSON_PRETTY_PRINT).
	Pretty bool
}

// Active reports whether the shape changes anything.
func (sh *Shape) Active() bool {
	return sh.Fields != nil || sh.Envelope || sh.JSONP != "" || sh.Pretty
}

// HasShapeParams reports, without allocating, whether a query names a shaping parameter.
func HasShapeParams(q *fasthttp.Args) bool {
	return q.Has("_fields") || q.Has("_fields[]") || q.Has("_envelope") || q.Has("_jsonp") || q.Has("_pretty")
}

// AppendEmbedKey appends a CMS request's _embed to a cache key: "" when absent, "1" when present
// without a value, else the value. Expanding embeddable links is the reads' job (before _fields,
// which may name _embedded): they read _embed from the query, and the edge keys their bodies by
// it through this.
func AppendEmbedKey(dst []byte, q *fasthttp.Args) []byte {
	if !q.Has("_embed") {
		return dst
	}
	dst = append(dst, 0, 'm', '=')
	if v := q.Peek("_embed"); len(v) > 0 {
		return append(dst, v...)
	}
	return append(dst, '1')
}

// errJSONP is WordPress's answer to an invalid callback: no data member.
var errJSONP = []byte(`{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`)

// ContentTypeJSONP is the content type of JSONP answers.
var ContentTypeJSONP = []byte("application/javascript; charset=UTF-8")

// ValidJSONPCallback reports whether a _jsonp callback is acceptable: WordPress's
// wp_check_jsonp_callback, only word characters and dots ([\w.]+).
func ValidJSONPCallback(cb []byte) bool {
	if len(cb) == 0 || len(cb) > 256 {
		return false
	}
	for _, c := range cb {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// errJSONPCredentials refuses JSONP to a request that carries a credential, in the shape of
// WordPress's other JSONP refusals (rest_callback_disabled, no data member).
var errJSONPCredentials = []byte(`{"code":"rest_callback_disabled","message":"JSONP is not available to authenticated requests."}`)

// CheckJSONP answers 400 and returns false when a CMS request's _jsonp cannot be honoured: an
// invalid callback (rest_callback_invalid, as WordPress, which checks it before authentication
// and routing), or a request carrying a credential (an Authorization header:
// rest_callback_disabled). JSONP is a script any site may include, and a browser sends the
// credentials it holds for the API with it, so a credentialed answer must never be wrapped as
// one: the request is refused rather than answered as anonymous, so that a client mixing the two
// learns why at once instead of getting a silently public answer. An empty _jsonp is no JSONP at
// all. It does not allocate.
func CheckJSONP(ctx *fasthttp.RequestCtx) bool {
	q := ctx.QueryArgs()
	if !q.Has("_jsonp") {
		return true
	}
	cb := q.Peek("_jsonp")
	if len(cb) == 0 {
		return true
	}
	body := errJSONP
	switch {
	case !ValidJSONPCallback(cb):
	case len(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) > 0:
		body = errJSONPCredentials
	default:
		return true
	}
	ctx.SetStatusCode(fasthttp.StatusBadRequest)
	ctx.Response.Header.SetContentTypeBytes(ContentTypeJSONP)
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetBody(body)
	return false
}

// ParseShape reads the shaping parameters of a query. The _jsonp callback must have passed
// CheckJSONP.
func ParseShape(q *fasthttp.Args) Shape {
	var sh Shape
	var fields []string
	if q.Has("_fields") {
		fields = append(fields, string(q.Peek("_fields")))
	}
	for _, v := range q.PeekMulti("_fields[]") {
		fields = append(fields, string(v))
	}
	if len(fields) > 0 {
		sh.Fields = ParseFields(strings.Join(fields, ","))
	}
	sh.Envelope = q.Has("_envelope")
	sh.Pretty = q.Has("_pretty")
	if cb := q.Peek("_jsonp"); ValidJSONPCallback(cb) {
		sh.JSONP = string(cb)
	}
	return sh
}

// Key appends the shape's normalised form to a cache key: two requests with the same key get the
// same shaped body.
func (sh *Shape) Key(dst []byte) []byte {
	dst = append(dst, 0, 's')
	if sh.Fields != nil {
		dst = append(dst, "f="...)
		dst = append(dst, sh.Fields.String()...)
	}
	if sh.Envelope {
		dst = append(dst, "&e"...)
	}
	if sh.Pretty {
		dst = append(dst, "&p"...)
	}
	if sh.JSONP != "" {
		dst = append(dst, "&j="...)
		dst = append(dst, sh.JSONP...)
	}
	return dst
}

// FieldTree is a parsed _fields value: the keys kept at one level, each either whole (a leaf) or
// filtered further by its own tree.
type FieldTree struct {
	keys map[string]*FieldTree // nil value: keep the whole member
}

// ParseFields parses a _fields value as WordPress does: names separated by commas or white
// space, each a dot-separated path; a path under a member already kept whole is ignored, and a
// whole member replaces the paths under it. It returns nil when no name is given.
func ParseFields(raw string) *FieldTree {
	names := strings.FieldsFunc(raw, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
	if len(names) == 0 {
		return nil
	}
	root := &FieldTree{keys: map[string]*FieldTree{}}
next:
	for _, name := range names {
		parts := strings.Split(name, ".")
		node := root
		for _, p := range parts[:len(parts)-1] {
			child, ok := node.keys[p]
			if ok && child == nil {
				continue next // the parent is kept whole
			}
			if !ok {
				child = &FieldTree{keys: map[string]*FieldTree{}}
				node.keys[p] = child
			}
			node = child
		}
		node.keys[parts[len(parts)-1]] = nil
	}
	return root
}

// String is the tree's canonical form: sorted paths joined with commas.
func (ft *FieldTree) String() string {
	var paths []string
	var walk func(prefix string, t *FieldTree)
	walk = func(prefix string, t *FieldTree) {
		for k, c := range t.keys {
			if c == nil {
				paths = append(paths, prefix+k)
			} else {
				walk(prefix+k+".", c)
			}
		}
	}
	walk("", ft)
	sort.Strings(paths)
	return strings.Join(paths, ",")
}

// names reports whether the tree names a top-level member, whole or in part.
func (ft *FieldTree) names(key string) bool {
	_, ok := ft.keys[key]
	return ok
}

// FilterFields keeps only the fields of the tree in a JSON body: a list's items are each
// filtered, an object's members are kept in their order. _links and _embedded are all or
// nothing, and naming either keeps both (WordPress adds links after filtering, when _fields
// names either). A body that is not valid JSON is returned unchanged.
func FilterFields(body []byte, ft *FieldTree) []byte {
	if ft == nil {
		return body
	}
	root := ft
	if ft.names("_links") || ft.names("_embedded") {
		root = &FieldTree{keys: make(map[string]*FieldTree, len(ft.keys)+2)}
		for k, v := range ft.keys {
			root.keys[k] = v
		}
		root.keys["_links"], root.keys["_embedded"] = nil, nil
	}
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		return body
	}
	var out bytes.Buffer
	out.Grow(len(trimmed))
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.Token()
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			var item json.RawMessage
			if dec.Decode(&item) != nil {
				return body
			}
			if i > 0 {
				out.WriteByte(',')
			}
			filterValue(&out, item, root, true)
		}
		out.WriteByte(']')
		return out.Bytes()
	}
	filterValue(&out, trimmed, root, true)
	return out.Bytes()
}

// filterValue writes v filtered by t. Objects keep the members t names; at nested levels a list
// keeps the items whose index t names (PHP arrays are keyed by index); scalars are kept.
func filterValue(out *bytes.Buffer, v []byte, t *FieldTree, top bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || (v[0] != '{' && (v[0] != '[' || top)) {
		out.Write(v)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.Token()
	if v[0] == '{' {
		out.WriteByte('{')
		n := 0
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			key, _ := tok.(string)
			var member json.RawMessage
			if dec.Decode(&member) != nil {
				return
			}
			child, ok := t.keys[key]
			if !ok {
				continue
			}
			if n > 0 {
				out.WriteByte(',')
			}
			n++
			k, _ := schema.MarshalJSON(key)
			out.Write(k)
			out.WriteByte(':')
			if child == nil {
				out.Write(member)
			} else {
				filterValue(out, member, child, false)
			}
		}
		out.WriteByte('}')
		return
	}
	// A nested list filtered by index: a list again when the kept indexes are 0..k-1, else an
	// object keyed by index, as PHP's json_encode renders such an array.
	type kept struct {
		index int
		raw   []byte
		child *FieldTree
	}
	var items []kept
	for i := 0; dec.More(); i++ {
		var item json.RawMessage
		if dec.Decode(&item) != nil {
			return
		}
		if child, ok := t.keys[strconv.Itoa(i)]; ok {
			items = append(items, kept{i, item, child})
		}
	}
	sequential := true
	for j, it := range items {
		sequential = sequential && it.index == j
	}
	open, close := byte('['), byte(']')
	if !sequential {
		open, close = '{', '}'
	}
	out.WriteByte(open)
	for j, it := range items {
		if j > 0 {
			out.WriteByte(',')
		}
		if !sequential {
			out.WriteString(`"` + strconv.Itoa(it.index) + `":`)
		}
		if it.child == nil {
			out.Write(it.raw)
		} else {
			filterValue(out, it.raw, it.child, false)
		}
	}
	out.WriteByte(close)
}

// envelopeHeaders are the response headers that belong to the answer itself (WordPress's
// response headers), carried inside an envelope rather than sent: X-WP-Total and X-WP-TotalPages
// (as numbers, as WordPress's are), the answer's own Link (pagination, alternate; not the API
// root's), Location and Allow (WordPress's envelope carries every header of the answer).
var envelopeHeaders = []string{"X-WP-Total", "X-WP-TotalPages", "Link", "Location", "Allow"}

// IsAPIRootLink reports whether a Link value is the API root's, which every CMS answer carries.
func IsAPIRootLink(v []byte) bool { return bytes.Contains(v, []byte(`rel="https://api.w.org/"`)) }

// Shaped is an answer after shaping.
type Shaped struct {
	Status      int
	ContentType []byte
	Body        []byte
	// Headers are the answer's own headers still to send (an envelope carries them instead).
	Headers [][2][]byte
	// Drop are header names to remove from the transport answer (those an envelope carries).
	Drop []string
}

// Apply shapes an answer: status, its own headers, body (JSON) and whether it is an error. root
// is the API root URL, sent as Link when an envelope took the answer's own Link.
func (sh *Shape) Apply(status int, headers [][2][]byte, body []byte, root string) Shaped {
	out := Shaped{Status: status, ContentType: ContentTypeCMS, Body: body, Headers: headers}
	isError := status >= 400
	if sh.Fields != nil && !isError {
		out.Body = FilterFields(out.Body, sh.Fields)
	}
	if sh.Envelope {
		var hs jsonFields
		var keep [][2][]byte
		for _, kv := range headers {
			name := string(kv[0])
			own := false
			for _, e := range envelopeHeaders {
				if strings.EqualFold(name, e) && !(e == "Link" && IsAPIRootLink(kv[1])) {
					own = true
				}
			}
			if !own {
				keep = append(keep, kv)
				continue
			}
			var v any = string(kv[1])
			if name == "X-WP-Total" || name == "X-WP-TotalPages" {
				if n, err := strconv.ParseInt(string(kv[1]), 10, 64); err == nil {
					v = n
				}
			}
			hs = append(hs, jsonField{name, v})
		}
		var headersJSON []byte = []byte("[]") // PHP's empty array
		if len(hs) > 0 {
			headersJSON = hs.marshal()
		}
		var b bytes.Buffer
		b.WriteString(`{"body":`)
		b.Write(bytes.TrimSpace(out.Body))
		b.WriteString(`,"status":`)
		b.WriteString(strconv.Itoa(status))
		b.WriteString(`,"headers":`)
		b.Write(headersJSON)
		b.WriteByte('}')
		out.Body, out.Status = b.Bytes(), fasthttp.StatusOK
		out.Drop = envelopeHeaders
		hasRoot := false
		for _, kv := range keep {
			hasRoot = hasRoot || string(kv[0]) == "Link"
		}
		if !hasRoot && root != "" {
			keep = append(keep, [2][]byte{[]byte("Link"), []byte(APIRootLink(root))})
		}
		out.Headers = keep
	}
	if sh.Pretty {
		var b bytes.Buffer
		if json.Indent(&b, out.Body, "", "    ") == nil {
			out.Body = b.Bytes()
		}
	}
	if sh.JSONP != "" {
		b := make([]byte, 0, len(out.Body)+len(sh.JSONP)+8)
		b = append(b, "/**/"...)
		b = append(b, sh.JSONP...)
		b = append(b, '(')
		b = append(b, out.Body...)
		b = append(b, ')')
		out.Body, out.ContentType = b, ContentTypeJSONP
	}
	return out
}

type jsonField struct {
	key   string
	value any
}

type jsonFields []jsonField

func (f jsonFields) marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := schema.MarshalJSON(m.key)
		v, _ := schema.MarshalJSON(m.value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Reshape shapes the answer already written to ctx.Response (an error, an uncached or forwarded
// CMS answer) in place. It does nothing for commerce requests or when the query asks for no
// shaping. root is the API root URL of the tenant ("" when no tenant was resolved).
func Reshape(ctx *fasthttp.RequestCtx, iface schema.Interface, root string) {
	reshape(ctx, iface, root, false)
}

// ReshapeFields is Reshape with _fields only: what a request inside a batch gets.
func ReshapeFields(ctx *fasthttp.RequestCtx, iface schema.Interface) {
	reshape(ctx, iface, "", true)
}

func reshape(ctx *fasthttp.RequestCtx, iface schema.Interface, root string, fieldsOnly bool) {
	if iface != schema.CMS || !HasShapeParams(ctx.QueryArgs()) {
		return
	}
	sh := ParseShape(ctx.QueryArgs())
	if fieldsOnly {
		sh = Shape{Fields: sh.Fields}
	}
	if !sh.Active() {
		return
	}
	resp := &ctx.Response
	var own [][2][]byte
	for _, name := range envelopeHeaders {
		if v := resp.Header.Peek(name); len(v) > 0 {
			own = append(own, [2][]byte{[]byte(name), bytes.Clone(v)})
		}
	}
	body := resp.Body()
	if len(resp.Header.ContentEncoding()) > 0 {
		// Shaping works on the identity body.
		b, err := resp.BodyUncompressed()
		if err != nil {
			return
		}
		body = b
		resp.Header.Del(fasthttp.HeaderContentEncoding)
	}
	out := sh.Apply(resp.StatusCode(), own, bytes.Clone(body), root)
	for _, name := range out.Drop {
		resp.Header.Del(name)
	}
	for _, kv := range out.Headers {
		resp.Header.SetBytesKV(kv[0], kv[1])
	}
	resp.SetStatusCode(out.Status)
	resp.Header.SetContentTypeBytes(out.ContentType)
	resp.SetBody(out.Body)
}

// MethodOverride applies WordPress's method override to a CMS POST: the _method query parameter,
// else the X-HTTP-Method-Override header, names the method the request is routed and handled as
// (api-fetch sends PUT, PATCH and DELETE this way). Only a POST is overridden, unlike WordPress,
// which also turns a GET into a DELETE: a link or an image must never write. Values that are not
// a method token are ignored.
func MethodOverride(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		return
	}
	m := ctx.QueryArgs().Peek("_method")
	if len(m) == 0 {
		m = ctx.Request.Header.Peek("X-HTTP-Method-Override")
	}
	if len(m) == 0 || len(m) > 16 {
		return
	}
	var up [16]byte
	for i, c := range m {
		switch {
		case c >= 'a' && c <= 'z':
			up[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			up[i] = c
		default:
			return
		}
	}
	ctx.Request.Header.SetMethodBytes(up[:len(m)])
}

// Options answers OPTIONS on a CMS path: the index entry of the route it matches (every method),
// or [] when none does, to anyone and without calling a handler, as WordPress does. base is the
// tenant's canonical base URL.
func Options(ctx *fasthttp.RequestCtx, base string, route []byte) {
	h := &ctx.Response.Header
	h.SetContentTypeBytes(ContentTypeCMS)
	h.Set("X-Robots-Tag", "noindex")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Link", APIRootLink(SiteAPIRoot(base)))
	h.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBody(schema.CMSRouteDescription(base, string(route)))
}
