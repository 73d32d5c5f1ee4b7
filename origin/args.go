package origin

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/schema"
)

// requestArgs parses a CMS route's declared arguments the way WordPress merges a request's
// parameters: a JSON body's top-level members first (when the body is sent as application/json),
// then a form body (methods other than GET), then the query string. So DELETE /posts/7 with the
// body {"force":true}, as the wpapi client sends it, forces the deletion like ?force=true does.
// A JSON body that does not parse is WordPress's 400 rest_invalid_json.
func requestArgs(ctx *fasthttp.RequestCtx, r *schema.Route) (*schema.Args, error) {
	var fromJSON map[string]string
	if body := bytes.TrimSpace(ctx.Request.Body()); len(body) > 0 && isJSONContent(ctx.Request.Header.ContentType()) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			if !json.Valid(body) {
				return nil, handler.SyntaxError(body)
			}
			// A JSON value that is not an object carries no parameters (WordPress ignores it).
		}
		fromJSON = make(map[string]string, len(obj))
		for k, v := range obj {
			if s, ok := jsonParam(v); ok {
				fromJSON[k] = s
			}
		}
	}
	form := !ctx.IsGet() && !ctx.IsHead() && bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("application/x-www-form-urlencoded"))
	return schema.ParseArgs(r, func(n string) (string, bool) {
		if v, ok := fromJSON[n]; ok {
			return v, true
		}
		if form && ctx.PostArgs().Has(n) {
			return string(ctx.PostArgs().Peek(n)), true
		}
		return string(ctx.QueryArgs().Peek(n)), ctx.QueryArgs().Has(n)
	})
}

// isJSONContent reports whether a Content-Type names JSON (application/json, or a +json type),
// as WordPress's is_json_content_type does.
func isJSONContent(ct []byte) bool {
	mt, _, _ := strings.Cut(strings.ToLower(string(ct)), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// jsonParam renders one top-level JSON member as the string a query parameter would carry:
// strings as they are, booleans and numbers as their literals, arrays of scalars as a comma
// list. A null is absent; an object is passed as its JSON text, which no scalar argument accepts.
func jsonParam(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return "", false
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return string(v), true
		}
		parts := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := jsonParam(it)
			if !ok || (len(bytes.TrimSpace(it)) > 0 && bytes.TrimSpace(it)[0] == '{') {
				return string(v), true
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), true
	case 't', 'f':
		return strconv.FormatBool(v[0] == 't'), true
	}
	return string(v), true
}
