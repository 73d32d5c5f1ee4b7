package handler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"vitrine/schema"
)

// typeNames renders Go types the way an API client thinks of them.
var typeNames = map[string]string{
	"string": "string", "bool": "boolean", "int": "integer", "int64": "integer", "int32": "integer",
	"schema.ProductID": "integer", "schema.CategoryID": "integer", "schema.VariantID": "integer",
	"schema.PostID": "integer", "schema.UserID": "integer", "schema.TermID": "integer",
	"float64": "number", "schema.Prices": "object", "map[string]string": "object",
	"schema.ProductStatus": "string", "schema.PostStatus": "string",
}

func typeName(t string) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	switch {
	case strings.HasPrefix(t, "[]"):
		return "array"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "schema."), strings.HasPrefix(t, "origin."), strings.HasPrefix(t, "handler."), strings.HasPrefix(t, "*"):
		return "object"
	}
	return t
}

// DecodeJSON decodes a request body into v (a struct of pointer fields for a patch). It refuses an
// empty body, malformed JSON, trailing data, unknown fields, values of the wrong type and explicit
// nulls, each with a message naming the problem. The returned *schema.Error has CMSCode
// rest_invalid_json for syntax errors.
func DecodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: "request body must be a JSON object"}
	}
	if body[0] != '{' {
		if !json.Valid(body) {
			return SyntaxError(body)
		}
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: "request body must be a JSON object"}
	}
	// Explicit nulls would silently mean "absent" in a struct of pointers: refuse them.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || !json.Valid(body) {
			return SyntaxError(body)
		}
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: "request body must be a JSON object"}
	}
	for k, val := range raw {
		if string(bytes.TrimSpace(val)) == "null" {
			return &schema.Error{Code: schema.CodeInvalid, Field: k, CMSCode: "rest_invalid_param", Message: k + " must not be null",
				Params: map[string]string{k: k + " must not be null."}}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "body"
			}
			msg := field + " is not of type " + typeName(te.Type.String()) + "."
			return &schema.Error{Code: schema.CodeInvalid, Field: field, CMSCode: "rest_invalid_param", Message: msg,
				Params: map[string]string{topField(field): msg}}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return &schema.Error{Code: schema.CodeInvalid, Field: name, CMSCode: "rest_invalid_param",
				Message: "unknown field " + name, Params: map[string]string{name: name + " is not a valid property."}}
		default:
			var fe *FieldError
			if errors.As(err, &fe) {
				return fe.Err
			}
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Message: "invalid request body: " + cleanJSONError(err)}
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: "request body has data after the JSON object"}
	}
	return nil
}

func topField(f string) string {
	name, _, _ := strings.Cut(f, ".")
	return name
}

// SyntaxError is the rest_invalid_json refusal of a body that is not JSON, naming where it breaks.
func SyntaxError(body []byte) error {
	var v any
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	msg := "malformed JSON body"
	if errors.As(err, &se) {
		msg = fmt.Sprintf("malformed JSON body at byte %d: %s", se.Offset, se.Error())
	} else if err != nil {
		msg = "malformed JSON body: " + cleanJSONError(err)
	}
	return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: msg}
}

func cleanJSONError(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// FieldError lets a custom unmarshaler report a precise error through DecodeJSON.
type FieldError struct{ Err *schema.Error }

func (e *FieldError) Error() string { return e.Err.Error() }

// Text is a CMS text field: a string, or an object {"raw": string}.
type Text struct {
	Raw string
}

// UnmarshalJSON accepts "text" and {"raw": "text"}.
func (t *Text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &t.Raw)
	}
	var obj struct {
		Raw *string `json:"raw"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil || obj.Raw == nil {
		return &FieldError{&schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param",
			Message: "a text field must be a string or an object with a raw string"}}
	}
	t.Raw = *obj.Raw
	return nil
}

// Int is a JSON integer also accepted as a numeric string, as WordPress does.
type Int int64

// UnmarshalJSON accepts 12 and "12".
func (n *Int) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	var v int64
	if _, err := fmt.Sscan(s, &v); err != nil || fmt.Sprint(v) != s {
		return &FieldError{&schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_param", Message: "expected an integer, got " + string(b)}}
	}
	*n = Int(v)
	return nil
}
