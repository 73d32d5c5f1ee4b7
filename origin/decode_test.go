package origin

import (
	"encoding/json"
	"testing"

	"vitrine/origin/handler"
	"vitrine/schema"
)

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		field string // the field the error names, "" for success
		cms   string // the CMS code of the error
	}{
		{"ok", `{"title":"Lamp","prices":{"USD":100}}`, "", ""},
		{"ok text object", `{"title":"Lamp"}`, "", ""},
		{"empty", ``, "", "rest_invalid_json"},
		{"whitespace", "  \n ", "", "rest_invalid_json"},
		{"array", `[1,2]`, "", "rest_invalid_json"},
		{"string", `"x"`, "", "rest_invalid_json"},
		{"truncated", `{"title":"x"`, "", "rest_invalid_json"},
		{"trailing", `{"title":"x"}x`, "", "rest_invalid_json"},
		{"second object", `{"title":"x"}{"title":"y"}`, "", "rest_invalid_json"},
		{"unknown", `{"titel":"x"}`, "titel", "rest_invalid_param"},
		{"wrong type", `{"title":1}`, "title", "rest_invalid_param"},
		{"nested wrong type", `{"prices":{"USD":"1"}}`, "prices", "rest_invalid_param"},
		{"null", `{"title":null}`, "title", "rest_invalid_param"},
		{"float price", `{"prices":{"USD":1.5}}`, "prices", "rest_invalid_param"},
		{"huge number", `{"prices":{"USD":1e400}}`, "", "rest_invalid_param"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in ProductInput
			err := handler.DecodeJSON([]byte(tt.body), &in)
			if tt.cms == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			e, ok := err.(*schema.Error)
			if !ok || e.Code != schema.CodeInvalid || e.CMSCode != tt.cms || (tt.field != "" && e.Field != tt.field) {
				t.Fatalf("error %#v, want code invalid, CMS code %s, field %q", err, tt.cms, tt.field)
			}
		})
	}
}

// FuzzDecodeBodies: bodies of product and post writes never panic the decoder, and every refusal
// is a CodeInvalid *schema.Error with a message (a 400 in the interface's shape).
func FuzzDecodeBodies(f *testing.F) {
	for _, seed := range []string{
		`{"title":"Lamp","slug":"lamp","status":"active","prices":{"USD":100},"images":[{"url":"https://x/y.jpg","alt":"a"}],"category_ids":[1,2],"variants":[{"sku":"A","stock":3,"options":[{"name":"size","value":"M"}]}]}`,
		`{"title":{"raw":"Hello"},"content":"<p>x</p>","status":"publish","date":"2026-01-02T03:04:05","categories":[1,"2"],"meta":{"footnotes":""}}`,
		`{"title":null}`, `[]`, `{"a":`, `{"prices":{"USD":1e999}}`, `{"author":"12"}`, `{"title":{"raw":1}}`,
		`{"name":"News","slug":"news","parent":"3","description":"x"}`, `{"username":"a","email":"a@b.example","roles":["editor"]}`,
		`{"name":"Phone","app_id":"3f2504e0-4f89-41d3-9a0c-0305e82c3301"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&ProductInput{}, &postInput{}, &VariantInput{}, &CategoryInput{}, &CurrencyInput{},
			&termInput{}, &userInput{}, &appPasswordInput{}} {
			err := handler.DecodeJSON(body, v)
			if err == nil {
				if _, merr := json.Marshal(v); merr != nil {
					t.Fatalf("accepted a body that does not re-encode: %v", merr)
				}
				continue
			}
			e, ok := err.(*schema.Error)
			if !ok || e.Code != schema.CodeInvalid || e.Message == "" {
				t.Fatalf("decode error %#v is not a CodeInvalid *schema.Error", err)
			}
		}
	})
}
