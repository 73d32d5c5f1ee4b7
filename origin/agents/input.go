package agents

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// maxQueryParams bounds how many input[…] query parameters a run takes (PHP's max_input_vars
// is 1000).
const maxQueryParams = 1000

// QueryInput is the input of a run sent in the query string (GET and DELETE), as WordPress
// reads it: PHP's nested parameters (input[search]=tea, input[ids][]=1) or one input parameter,
// which may also hold a JSON object or array. Query values are strings; each is coerced to the
// type the ability's input schema declares for it (integer, number, boolean; a comma list for
// an array), as WordPress does since 7.1, so that validation judges the value meant. It returns
// nil when the query carries no input.
func (a *Ability) QueryInput(params func(visit func(key, value string))) json.RawMessage {
	var root any
	var whole *string
	n := 0
	params(func(key, value string) {
		if n >= maxQueryParams {
			return
		}
		if key == "input" {
			v := value
			whole = &v
			n++
			return
		}
		if !strings.HasPrefix(key, "input[") {
			return
		}
		path, ok := bracketPath(key[len("input"):])
		if !ok {
			return
		}
		n++
		root = setPath(root, path, value)
	})
	if root == nil && whole != nil {
		if t := strings.TrimSpace(*whole); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
			return json.RawMessage(t)
		}
		root = *whole
	}
	if root == nil {
		return nil
	}
	b, err := json.Marshal(coerce(a.inputSchema, root))
	if err != nil {
		return nil
	}
	return b
}

// bracketPath splits "[a][b][]" into ["a", "b", ""]; ok is false for anything else.
func bracketPath(s string) ([]string, bool) {
	var out []string
	for len(s) > 0 {
		if s[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return nil, false
		}
		out = append(out, s[1:end])
		s = s[end+1:]
	}
	return out, len(out) > 0 && len(out) <= 8
}

// setPath sets value at path under node (a map, a slice for "[]" segments, or nil), PHP-style:
// a later scalar replaces an earlier one, a segment "" appends.
func setPath(node any, path []string, value string) any {
	if len(path) == 0 {
		return value
	}
	seg := path[0]
	if seg == "" {
		list, _ := node.([]any)
		return append(list, setPath(nil, path[1:], value))
	}
	m, ok := node.(map[string]any)
	if !ok {
		m = map[string]any{}
		if list, isList := node.([]any); isList { // input[ids][]=1&input[ids][x]=2: PHP keys the list
			for i, v := range list {
				m[strconv.Itoa(i)] = v
			}
		}
	}
	m[seg] = setPath(m[seg], path[1:], value)
	return m
}

// coerce converts the strings of v to the types sch declares for them, where they convert;
// anything else is left for validation to judge.
func coerce(sch, v any) any {
	s, ok := sch.(map[string]any)
	if !ok {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			if ps, ok := props[k]; ok {
				x[k] = coerce(ps, val)
			}
		}
		return x
	case []any:
		for i, val := range x {
			x[i] = coerce(s["items"], val)
		}
		return x
	case string:
		for _, t := range types(s) {
			switch t {
			case "integer":
				if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
					return n
				}
			case "number":
				if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
					return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
				}
			case "boolean":
				switch strings.ToLower(strings.TrimSpace(x)) {
				case "true", "1":
					return true
				case "false", "0":
					return false
				}
			case "array":
				parts := strings.Split(x, ",")
				out := make([]any, 0, len(parts))
				for _, p := range parts {
					if p = strings.TrimSpace(p); p != "" {
						out = append(out, coerce(s["items"], p))
					}
				}
				return out
			case "string":
				return x
			}
		}
	}
	return v
}

// types returns the types a schema declares, in order.
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// canonical returns v's canonical JSON (object keys sorted, numbers as written), the form an
// input's digest is taken of; raw that is not JSON is returned as it is.
func canonical(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}
