package openapi

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"vitrine/schema"
)

var update = flag.Bool("update", false, "rewrite schema/openapi.json")

const committed = "../../../schema/openapi.json"

// TestDocumentIsCurrent regenerates the document and compares it with the committed copy that
// edges serve: a route, argument or type changed without `make openapi` fails here.
func TestDocumentIsCurrent(t *testing.T) {
	doc, err := Document(CommerceInfo, schema.Routes, Operations())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(committed, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(doc, schema.OpenAPIDocument()) && !*update {
		t.Fatalf("schema/openapi.json is stale: run make openapi")
	}
}

// TestDocumentIsValid loads the document with a maintained OpenAPI 3.1 implementation.
func TestDocumentIsValid(t *testing.T) {
	doc, err := Document(CommerceInfo, schema.Routes, Operations())
	if err != nil {
		t.Fatal(err)
	}
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetSpecInfo().VersionNumeric != 3.1 {
		t.Fatalf("version %v, want 3.1", d.GetSpecInfo().VersionNumeric)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Error(e)
		}
	}
	var ops int
	for p := m.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
		ops += p.Value().GetOperations().Len()
	}
	var routes int
	for i := range schema.Routes {
		if Documented(&schema.Routes[i]) {
			routes++
		}
	}
	if ops != routes {
		t.Fatalf("%d operations in the document, %d commerce routes", ops, routes)
	}
}

// TestDocumentRefusesGaps: a route without an operation, or an operation without a route, is an
// error rather than a silently thinner document.
func TestDocumentRefusesGaps(t *testing.T) {
	routes := []schema.Route{{Name: "a", Method: "GET", Interface: schema.Commerce, Path: "/api/a"}}
	if _, err := Document(CommerceInfo, routes, map[string]Operation{}); err == nil || !strings.Contains(err.Error(), "has no Operation") {
		t.Fatalf("missing operation: %v", err)
	}
	ops := map[string]Operation{"a": {Answers: []Answer{ok(struct{}{})}}, "b": {Answers: []Answer{ok(struct{}{})}}}
	if _, err := Document(CommerceInfo, routes, ops); err == nil || !strings.Contains(err.Error(), "names no commerce route") {
		t.Fatalf("extra operation: %v", err)
	}
	if _, err := Document(CommerceInfo, routes, map[string]Operation{"a": {}}); err == nil {
		t.Fatal("an operation without answers was accepted")
	}
}

type tree struct {
	Name     string  `json:"name"`
	Children []*tree `json:"children"`
}

type generic[T any] struct {
	Items []T `json:"items"`
}

type shapes struct {
	Plain    string           `json:"plain"`
	Omitted  int64            `json:"omitted,omitempty"`
	Nullable *string          `json:"nullable"`
	Optional *time.Time       `json:"optional,omitempty"`
	Hidden   string           `json:"-"`
	Map      map[string]int64 `json:"map"`
	Bytes    []byte           `json:"bytes"`
	Tree     tree             `json:"tree"`
	Generic  generic[tree]    `json:"generic"`
	Any      any              `json:"any"`
	Docs     bool             `json:"docs" doc:"A described field."`
	private  int
	Embedded
}

type Embedded struct {
	Promoted string `json:"promoted"`
}

// TestSchemaOfGoTypes pins the reflection rules against what encoding/json writes.
func TestSchemaOfGoTypes(t *testing.T) {
	c := newComponents()
	s := c.object(reflect.TypeFor[shapes]())
	props := s["properties"].(schemaObject)
	cases := []struct {
		field string
		want  schemaObject
	}{
		{"plain", schemaObject{"type": "string"}},
		{"omitted", schemaObject{"type": "integer", "format": "int64"}},
		{"nullable", schemaObject{"type": []string{"string", "null"}}},
		{"optional", schemaObject{"type": "string", "format": "date-time"}},
		{"map", schemaObject{"type": "object", "additionalProperties": schemaObject{"type": "integer", "format": "int64"}}},
		{"bytes", schemaObject{"type": "string", "contentEncoding": "base64"}},
		{"tree", schemaObject{"$ref": "#/components/schemas/tree"}},
		{"generic", schemaObject{"$ref": "#/components/schemas/genericTree"}},
		{"any", schemaObject{}},
		{"docs", schemaObject{"type": "boolean", "description": "A described field."}},
		{"promoted", schemaObject{"type": "string"}},
	}
	for _, tc := range cases {
		if got := props[tc.field]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.field, got, tc.want)
		}
	}
	for _, gone := range []string{"Hidden", "-", "private"} {
		if _, ok := props[gone]; ok {
			t.Errorf("%s is in the schema", gone)
		}
	}
	req := s["required"].([]string)
	if strings.Join(req, ",") != "plain,nullable,map,bytes,tree,generic,any,docs,promoted" {
		t.Errorf("required: %v", req)
	}
	// The recursive type refers to itself.
	kids := c.schemas["tree"]["properties"].(schemaObject)["children"]
	if !reflect.DeepEqual(kids, schemaObject{"type": "array", "items": schemaObject{"oneOf": []schemaObject{{"$ref": "#/components/schemas/tree"}, {"type": "null"}}}}) {
		t.Errorf("children: %#v", kids)
	}
}
