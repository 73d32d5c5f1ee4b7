// Package openapi builds the OpenAPI 3.1 document of the commerce interface from the route table
// (schema.Routes) and the Go types its handlers decode and answer with (Operations).
//
// Invariants: every commerce route of the table has exactly one Operation, and no Operation
// names a route the table lacks (Document fails otherwise); paths, methods, query arguments,
// security and scopes come from the route table alone, bodies from the Go types alone, so
// neither can be written twice. The document is generated into schema/openapi.json (make
// openapi), which edges serve at /api/openapi.json; a test regenerates it and fails when the
// committed copy differs, and the system tests check every commerce answer they receive against
// it.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"vitrine/schema"
)

// Operation is what the route table does not say about a commerce route: its summary and the
// types of its request and answer bodies.
type Operation struct {
	Summary     string
	Description string
	// Request is a value of the JSON request body's type; nil when the route takes no body.
	Request any
	// RequestOptional marks a body that may be left out.
	RequestOptional bool
	// Answers are the route's successful answers (2xx).
	Answers []Answer
	// Session marks routes keyed by the X-Cart-Session header; Customer those that take a
	// customer session token; OrderEmail those that prove ownership of an order by its email.
	Session, Customer, OrderEmail bool
	// CustomerOptional marks routes where a customer token is accepted but not needed.
	CustomerOptional bool
	// Idempotent marks POST routes that honour Idempotency-Key; IdempotencyRequired those that
	// refuse a request without one.
	Idempotent, IdempotencyRequired bool
}

// Answer is one successful answer of an operation.
type Answer struct {
	Status int
	// Body is a value of the JSON answer's type; nil for an answer without a body (204) or for
	// a non-JSON ContentType.
	Body any
	// AnyOf, instead of Body, lists values of the types an answer may take, told apart by its
	// content (tracking's masked and verified views).
	AnyOf       []any
	ContentType string
	// Alternatives are further content types of the same answer, chosen by Accept (a PDF
	// beside the JSON).
	Alternatives []string
	Description  string
}

// JSON answers: shorthands for the table.
func ok(body any) Answer      { return Answer{Status: 200, Body: body} }
func created(body any) Answer { return Answer{Status: 201, Body: body} }
func noContent() Answer       { return Answer{Status: 204, Description: "Done; no body."} }

// Info describes the document.
type Info struct {
	Title, Version, Description string
}

var capture = regexp.MustCompile(`\{([^}]+)\}`)

// Document renders the OpenAPI 3.1 document of the commerce routes of routes.
func Document(info Info, routes []schema.Route, ops map[string]Operation) ([]byte, error) {
	c := newComponents()
	paths := map[string]map[string]any{}
	seen := map[string]bool{}
	for i := range routes {
		r := &routes[i]
		if !Documented(r) {
			continue
		}
		op, found := ops[r.Name]
		if !found {
			return nil, fmt.Errorf("openapi: route %s (%s %s) has no Operation", r.Name, r.Method, r.Path)
		}
		if len(op.Answers) == 0 {
			return nil, fmt.Errorf("openapi: route %s has no answers", r.Name)
		}
		seen[r.Name] = true
		item := paths[r.Path]
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = c.operation(r, &op)
	}
	for name := range ops {
		if !seen[name] {
			return nil, fmt.Errorf("openapi: Operation %s names no commerce route", name)
		}
	}
	c.schemas["Error"] = c.object(reflect.TypeFor[schema.CommerceError]())
	doc := map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": info.Title, "version": info.Version, "description": info.Description},
		"servers": []map[string]any{{"url": "/", "description": "The store's own host (or an edge with X-Tenant-Slug)."}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": c.schemas,
			"securitySchemes": map[string]any{
				"serverKey": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "esk_ server key",
					"description": "A server key made in store settings; each key route needs one scope (x-vitrine-scope)."},
				"customerToken": map[string]any{"type": "http", "scheme": "bearer",
					"description": "A customer session token from POST /api/customer/login."},
				"staffPassword": map[string]any{"type": "http", "scheme": "basic",
					"description": "A staff user's login and application password; the route's capability (x-vitrine-capability) is required."},
			},
			"responses": map[string]any{
				"Error": map[string]any{
					"description": "The request failed: the status says how, error says why in words, code in a stable token.",
					"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
					"headers": map[string]any{"Retry-After": map[string]any{
						"description": "On 429 and 503: seconds to wait before retrying.",
						"schema":      map[string]any{"type": "integer"}}},
				},
			},
		},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Documented reports whether a route is in the document: every commerce route under /api/. The
// HTML pages of store settings (/cms-admin/…) are for people, not clients.
func Documented(r *schema.Route) bool {
	return r.Interface == schema.Commerce && strings.HasPrefix(r.Path, "/api/")
}

func (c *components) operation(r *schema.Route, op *Operation) map[string]any {
	out := map[string]any{"operationId": r.Name, "summary": op.Summary, "tags": []string{tagOf(r)}}
	if op.Description != "" {
		out["description"] = op.Description
	}
	var params []map[string]any
	for _, m := range capture.FindAllStringSubmatch(r.Path, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	for _, a := range r.Args {
		params = append(params, queryParam(a))
	}
	if op.Session {
		params = append(params, map[string]any{"name": schemaHeaderCartSession, "in": "header", "required": true,
			"description": "The cart's session key: 16 or more random bytes, base64url.", "schema": map[string]any{"type": "string"}})
	}
	if op.OrderEmail {
		params = append(params, map[string]any{"name": "X-Order-Email", "in": "header",
			"description": "The order's email, proving ownership (or a customer token, or email in the query).", "schema": map[string]any{"type": "string", "format": "email"}})
	}
	if op.Idempotent || op.IdempotencyRequired {
		params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": op.IdempotencyRequired,
			"description": "Repeating a request with the same key and body returns the first answer without acting twice.", "schema": map[string]any{"type": "string", "maxLength": 255}})
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if op.Request != nil {
		out["requestBody"] = map[string]any{"required": !op.RequestOptional, "content": map[string]any{
			"application/json": map[string]any{"schema": c.requestBody(reflect.TypeOf(op.Request))}}}
	}
	responses := map[string]any{"default": map[string]any{"$ref": "#/components/responses/Error"}}
	for _, a := range op.Answers {
		resp := map[string]any{"description": a.Description}
		if a.Description == "" {
			resp["description"] = "OK"
		}
		content := map[string]any{}
		switch {
		case a.Body != nil:
			content["application/json"] = map[string]any{"schema": c.of(reflect.TypeOf(a.Body))}
		case len(a.AnyOf) > 0:
			var alts []schemaObject
			for _, v := range a.AnyOf {
				alts = append(alts, c.of(reflect.TypeOf(v)))
			}
			content["application/json"] = map[string]any{"schema": schemaObject{"anyOf": alts}}
		case a.ContentType != "":
			content[a.ContentType] = map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": a.ContentType}}
		}
		for _, ct := range a.Alternatives {
			content[ct] = map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": ct}}
		}
		if len(content) > 0 {
			resp["content"] = content
		}
		responses[strconv.Itoa(a.Status)] = resp
	}
	out["responses"] = responses
	switch r.Auth {
	case schema.AuthKey:
		out["security"] = []map[string][]string{{"serverKey": {}}}
		out["x-vitrine-scope"] = string(r.Scope)
	case schema.AuthStaff:
		out["security"] = []map[string][]string{{"staffPassword": {}}}
		out["x-vitrine-capability"] = string(r.Cap)
	default:
		switch {
		case op.Customer:
			out["security"] = []map[string][]string{{"customerToken": {}}}
		case op.CustomerOptional:
			out["security"] = []map[string][]string{{}, {"customerToken": {}}}
		default:
			out["security"] = []map[string][]string{}
		}
	}
	out["x-vitrine-server"] = map[schema.Server]string{schema.AtEdge: "edge", schema.AtOrigin: "origin"}[r.Server]
	return out
}

// schemaHeaderCartSession is the cart header's name as the spec spells it.
const schemaHeaderCartSession = "X-Cart-Session"

// tagOf groups operations by the first path segment after /api/ (admin routes by the second).
func tagOf(r *schema.Route) string {
	segs := strings.Split(strings.TrimPrefix(r.Path, "/api/"), "/")
	if segs[0] == "admin" && len(segs) > 1 {
		return "admin/" + segs[1]
	}
	return segs[0]
}

func queryParam(a schema.Arg) map[string]any {
	s := map[string]any{}
	switch a.Type {
	case schema.ArgInt:
		s["type"] = "integer"
	case schema.ArgBool:
		s["type"] = "boolean"
	case schema.ArgDateTime:
		s["type"], s["format"] = "string", "date-time"
	case schema.ArgIntList:
		s["type"], s["items"] = "array", map[string]any{"type": "integer"}
	case schema.ArgStringList:
		s["type"], s["items"] = "array", map[string]any{"type": "string"}
	default:
		s["type"] = "string"
	}
	if a.HasMin {
		s["minimum"] = a.Min
	}
	if a.HasMax {
		s["maximum"] = a.Max
	}
	if len(a.Enum) > 0 {
		s["enum"] = slices.Clone(a.Enum)
	}
	if a.MaxItems > 0 {
		s["maxItems"] = a.MaxItems
	}
	if a.Unique {
		s["uniqueItems"] = true
	}
	if a.Default != "" {
		switch s["type"] {
		case "integer":
			n, _ := strconv.ParseInt(a.Default, 10, 64)
			s["default"] = n
		case "boolean":
			s["default"] = a.Default == "true"
		default:
			s["default"] = a.Default
		}
	}
	p := map[string]any{"name": a.Name, "in": "query", "required": a.Required, "schema": s}
	if a.Type == schema.ArgIntList || a.Type == schema.ArgStringList {
		p["style"], p["explode"] = "form", false // comma-separated
	}
	if a.Description != "" {
		p["description"] = a.Description
	}
	return p
}
