package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// schemaObject is one JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a JSON object.
type schemaObject = map[string]any

// components collects the named schemas of a document: every named Go struct type becomes one
// component, referenced by $ref wherever it appears.
//
// Written here rather than with invopop/jsonschema: that library roots references at $defs and
// names generic instances with their package paths ("Page[vitrine/schema.ProductView]"), and
// both would have to be rewritten for components; the reflection needed is about a hundred lines.
type components struct {
	schemas map[string]schemaObject
	names   map[typeMode]string
	taken   map[string]typeMode
	// request is set while a request body is described: its pointer fields are optional
	// (absent keeps the current value) rather than nullable, as the decoders read them.
	request bool
}

// typeMode is a type in one direction: a type read in requests and written in answers may be
// described twice, since the rules differ.
type typeMode struct {
	t       reflect.Type
	request bool
}

func newComponents() *components {
	return &components{schemas: map[string]schemaObject{}, names: map[typeMode]string{}, taken: map[string]typeMode{}}
}

// requestBody is the schema of a request body of type t.
func (c *components) requestBody(t reflect.Type) schemaObject {
	c.request = true
	defer func() { c.request = false }()
	return c.of(t)
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	genericArgs   = regexp.MustCompile(`\[.*\]$`)
)

// of returns the schema of values of type t as encoding/json writes them.
func (c *components) of(t reflect.Type) schemaObject {
	if t.Kind() == reflect.Pointer {
		return nullable(c.of(t.Elem()))
	}
	switch {
	case t == timeType:
		return schemaObject{"type": "string", "format": "date-time"}
	case t == rawType:
		return schemaObject{} // any JSON value
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return schemaObject{} // a custom encoding: any JSON value
	case t.Implements(textType) || reflect.PointerTo(t).Implements(textType):
		return schemaObject{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return schemaObject{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := schemaObject{"type": "integer"}
		if t.Kind() == reflect.Int64 || t.Kind() == reflect.Uint64 || t.Kind() == reflect.Int {
			s["format"] = "int64"
		}
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			s["minimum"] = 0
		}
		return s
	case reflect.Float32, reflect.Float64:
		return schemaObject{"type": "number"}
	case reflect.String:
		return schemaObject{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return schemaObject{"type": "string", "contentEncoding": "base64"}
		}
		// A nil slice encodes as null: the answers of this API never send one (a test checks
		// every answer against this document), so lists are plain arrays.
		return schemaObject{"type": "array", "items": c.of(t.Elem())}
	case reflect.Map:
		return schemaObject{"type": "object", "additionalProperties": c.of(t.Elem())}
	case reflect.Interface:
		return schemaObject{}
	case reflect.Struct:
		if t.Name() == "" {
			return c.object(t)
		}
		return schemaObject{"$ref": "#/components/schemas/" + c.named(t)}
	}
	panic(fmt.Sprintf("openapi: no JSON schema for %s", t))
}

// named registers the component of a named struct type and returns its name.
func (c *components) named(t reflect.Type) string {
	key := typeMode{t, c.request}
	if n, ok := c.names[key]; ok {
		return n
	}
	n := componentName(t)
	if other, ok := c.taken[n]; ok && other != key {
		if other.t == t {
			n += "Input" // the same type, read in a request
		} else {
			n = exportName(pkgName(t)) + n
		}
	}
	c.names[key], c.taken[n] = n, key
	c.schemas[n] = nil // reserved: a recursive type refers to itself while it is built
	c.schemas[n] = c.object(t)
	return n
}

// componentName is a type's name with generic arguments folded in: Page[schema.ProductView]
// becomes PageProductView.
func componentName(t reflect.Type) string {
	name := t.Name()
	args := genericArgs.FindString(name)
	if args == "" {
		return name
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(name, args))
	for _, a := range strings.Split(strings.Trim(args, "[]"), ",") {
		if i := strings.LastIndexAny(a, "./"); i >= 0 {
			a = a[i+1:]
		}
		b.WriteString(exportName(strings.TrimLeft(a, "*")))
	}
	return b.String()
}

func pkgName(t reflect.Type) string {
	p := t.PkgPath()
	return p[strings.LastIndex(p, "/")+1:]
}

func exportName(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// object is the schema of a struct: its JSON fields, required unless omitempty.
func (c *components) object(t reflect.Type) schemaObject {
	props := schemaObject{}
	var required []string
	c.fields(t, props, &required)
	s := schemaObject{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (c *components) fields(t reflect.Type, props schemaObject, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				c.fields(ft, props, required) // embedded: its fields are promoted
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		if c.request && f.Type.Kind() == reflect.Pointer {
			omit = true // a request may leave it out; the decoders refuse null
		}
		var s schemaObject
		if f.Type.Kind() == reflect.Pointer && omit {
			s = c.of(f.Type.Elem()) // nil is left out, never sent as null
		} else {
			s = c.of(f.Type)
		}
		if strings.Contains(opts, "string") {
			s = schemaObject{"type": "string"}
		}
		if d := f.Tag.Get("doc"); d != "" {
			s = described(s, d)
		}
		props[name] = s
		if !omit {
			*required = append(*required, name)
		}
	}
}

// nullable lets a schema also be null.
func nullable(s schemaObject) schemaObject {
	if t, ok := s["type"].(string); ok {
		out := schemaObject{}
		for k, v := range s {
			out[k] = v
		}
		out["type"] = []string{t, "null"}
		return out
	}
	if len(s) == 0 {
		return s
	}
	return schemaObject{"oneOf": []schemaObject{s, {"type": "null"}}}
}

// described adds a description; a $ref is wrapped since its siblings are ignored by some tools.
func described(s schemaObject, d string) schemaObject {
	if _, ok := s["$ref"]; ok {
		return schemaObject{"allOf": []schemaObject{s}, "description": d}
	}
	out := schemaObject{"description": d}
	for k, v := range s {
		out[k] = v
	}
	return out
}
