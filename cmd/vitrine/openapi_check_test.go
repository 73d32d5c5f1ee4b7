package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/helpers"

	"vitrine/schema"
)

// answerChecker checks commerce answers against the OpenAPI document the edges serve, so that
// the document cannot drift from the code: every test that calls a commerce route through call
// checks its answer. Objects are closed (additionalProperties: false) for the check only, so a
// field the code sends and the document lacks fails here while clients stay free to ignore new
// fields.
type answerChecker struct {
	once sync.Once
	mu   sync.Mutex // the validator caches compiled schemas; one check at a time
	v    validator.Validator
	err  error
}

var commerceAnswers answerChecker

func (c *answerChecker) load() {
	var doc any
	if err := json.Unmarshal(schema.OpenAPIDocument(), &doc); err != nil {
		c.err = err
		return
	}
	closeObjects(doc)
	b, _ := json.Marshal(doc)
	d, err := libopenapi.NewDocument(b)
	if err != nil {
		c.err = err
		return
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		c.err = fmt.Errorf("openapi validator: %v", errs)
		return
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		c.err = fmt.Errorf("openapi document: %v", verrs)
		return
	}
	c.v = v
}

// closeObjects sets additionalProperties: false on every object schema that lists properties
// and says nothing of others.
func closeObjects(n any) {
	switch n := n.(type) {
	case map[string]any:
		if _, ok := n["properties"]; ok && n["type"] == "object" {
			if _, set := n["additionalProperties"]; !set {
				n["additionalProperties"] = false
			}
		}
		for _, v := range n {
			closeObjects(v)
		}
	case []any:
		for _, v := range n {
			closeObjects(v)
		}
	}
}

// warm loads the document now: its first check takes seconds (under -race), which a test that
// times its requests against the clock must not pay inside its window.
func (c *answerChecker) warm() { c.once.Do(c.load) }

// check reports where the answer to req differs from the document. Only /api/ answers with a
// body are checked: 304s, HEAD and preflights have none.
func (c *answerChecker) check(t testing.TB, req *http.Request, r *response) {
	if err := c.problem(req, r); err != "" {
		t.Errorf("%s", err)
	}
}

// problem is check's finding, or "".
func (c *answerChecker) problem(req *http.Request, r *response) string {
	if !strings.HasPrefix(req.URL.Path, "/api/") || req.Method == "HEAD" || req.Method == "OPTIONS" || r.status == 304 {
		return ""
	}
	c.once.Do(c.load)
	if c.err != nil {
		return fmt.Sprintf("the OpenAPI document does not load: %v", c.err)
	}
	resp := &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)), Request: req}
	c.mu.Lock()
	ok, errs := c.v.ValidateHttpResponse(req, resp)
	c.mu.Unlock()
	if ok {
		return ""
	}
	if len(errs) == 1 && errs[0].ValidationType == helpers.PathValidation {
		// No operation has this path and method: the answer is the interface's 404 or 405.
		var e schema.CommerceError
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if (r.status == 404 || r.status == 405) && dec.Decode(&e) == nil && e.Error != "" && e.Code != "" {
			return ""
		}
	}
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  " + e.Error())
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    at %s: %s", f.InstancePath, f.Reason)
		}
	}
	body := r.body
	if len(body) > 600 {
		body = append(body[:600:600], "…"...)
	}
	return fmt.Sprintf("%s %s answered %d unlike the OpenAPI document:%s\n  body: %s", req.Method, req.URL.RequestURI(), r.status, b.String(), body)
}

// TestAnswerCheckerCatchesDrift shows the check is not vacuous: answers that differ from the
// document in each way it can (a missing field, an extra field, a wrong type, an undocumented
// status or content type, a non-error body on an unknown path) are reported, and good ones
// are not.
func TestAnswerCheckerCatchesDrift(t *testing.T) {
	t.Parallel()
	var c answerChecker
	req := func(method, path string) *http.Request {
		r, _ := http.NewRequest(method, "http://shop.vitrine.test"+path, nil)
		return r
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	currency := `{"code":"EUR","name":"Euro","symbol":"€","exponent":2,"rate":"1","default":true}`
	cases := []struct {
		name   string
		req    *http.Request
		status int
		header http.Header
		body   string
		bad    bool
	}{
		{"good", req("GET", "/api/currencies"), 200, jsonHeader, `{"data":[` + currency + `]}`, false},
		{"good error", req("GET", "/api/products/x"), 404, jsonHeader, `{"error":"product not found","code":"not_found","request_id":"r"}`, false},
		{"unknown path, error body", req("GET", "/api/nothing"), 404, jsonHeader, `{"error":"Not found","code":"not_found","request_id":"r"}`, false},
		{"missing field", req("GET", "/api/currencies"), 200, jsonHeader, `{"data":[{"code":"EUR"}]}`, true},
		{"extra field", req("GET", "/api/currencies"), 200, jsonHeader, `{"data":[` + strings.Replace(currency, `"code"`, `"extra":1,"code"`, 1) + `]}`, true},
		{"wrong type", req("GET", "/api/currencies"), 200, jsonHeader, `{"data":[` + strings.Replace(currency, `"exponent":2`, `"exponent":"2"`, 1) + `]}`, true},
		{"null list", req("GET", "/api/currencies"), 200, jsonHeader, `{"data":null}`, true},
		{"undocumented status", req("GET", "/api/currencies"), 201, jsonHeader, `{"data":[]}`, true},
		{"wrong content type", req("GET", "/api/currencies"), 200, http.Header{"Content-Type": {"text/html"}}, `<p>`, true},
		{"bad error body", req("GET", "/api/products/x"), 404, jsonHeader, `{"message":"nope"}`, true},
		{"unknown path, not an error", req("GET", "/api/nothing"), 200, jsonHeader, `{}`, true},
	}
	for _, tc := range cases {
		got := c.problem(tc.req, &response{status: tc.status, header: tc.header, body: []byte(tc.body)})
		if (got != "") != tc.bad {
			t.Errorf("%s: problem %q, want one: %v", tc.name, got, tc.bad)
		}
	}
}
