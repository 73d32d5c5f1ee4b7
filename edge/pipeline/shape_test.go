package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

const post = `{"id":7,"title":{"raw":"R","rendered":"T"},"meta":{"a":1,"b":2},"tags":[3,4,5],"_links":{"self":[{"href":"x"}]},"_embedded":{"author":[{}]}}`

func TestFilterFields(t *testing.T) {
	tests := []struct {
		name, fields, body, want string
	}{
		{"top-level keys in the body's order", "title,id", post, `{"id":7,"title":{"raw":"R","rendered":"T"}}`},
		{"nested path", "title.rendered", post, `{"title":{"rendered":"T"}}`},
		{"two nested paths under one member", "meta.b,meta.a", post, `{"meta":{"a":1,"b":2}}`},
		{"whole member wins over a later path", "title,title.raw", post, `{"title":{"raw":"R","rendered":"T"}}`},
		{"whole member replaces an earlier path", "title.raw,title", post, `{"title":{"raw":"R","rendered":"T"}}`},
		{"spaces and commas separate", " id ,\ttitle.raw ", post, `{"id":7,"title":{"raw":"R"}}`},
		{"unknown field", "nope", post, `{}`},
		{"links only when named", "id", post, `{"id":7}`},
		{"naming _links keeps both links and embeds", "id,_links", post, `{"id":7,"_links":{"self":[{"href":"x"}]},"_embedded":{"author":[{}]}}`},
		{"links are all or nothing", "_links.self.href", post, `{"_links":{"self":[{"href":"x"}]},"_embedded":{"author":[{}]}}`},
		{"naming _embedded keeps links too", "_embedded", post, `{"_links":{"self":[{"href":"x"}]},"_embedded":{"author":[{}]}}`},
		{"list: each item", "id", `[{"id":1,"x":2},{"id":3,"x":4}]`, `[{"id":1},{"id":3}]`},
		{"list of non-objects kept", "id", `[1,"a",null]`, `[1,"a",null]`},
		{"nested list by index, sequential", "tags.0,tags.1", post, `{"tags":[3,4]}`},
		{"nested list by index, with a gap", "tags.2", post, `{"tags":{"2":5}}`},
		{"scalar under a path is kept", "id.x", post, `{"id":7}`},
		{"nothing named: unchanged", ", ,", post, post},
		{"not JSON: unchanged", "id", `{"id":`, `{"id":`},
		{"escaped keys survive", "a\"b", `{"a\"b":1,"c":2}`, `{"a\"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(pipeline.FilterFields([]byte(tt.body), pipeline.ParseFields(tt.fields)))
			if got != tt.want {
				t.Errorf("FilterFields(%q) = %s, want %s", tt.fields, got, tt.want)
			}
		})
	}
}

func TestParseFieldsCanonical(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"id,title", "title id"},
		{"title.raw,title.rendered", "title.rendered,title.raw"},
		{"title,title.raw", "title.raw,title"},
	} {
		if x, y := pipeline.ParseFields(tt.a).String(), pipeline.ParseFields(tt.b).String(); x != y {
			t.Errorf("%q → %q but %q → %q: equal filters must share a cache key", tt.a, x, tt.b, y)
		}
	}
	if pipeline.ParseFields("id").String() == pipeline.ParseFields("id,slug").String() {
		t.Error("different filters share a key")
	}
}

func TestValidJSONPCallback(t *testing.T) {
	for cb, want := range map[string]bool{
		"cb": true, "jQuery123_456": true, "a.b.c": true, "_": true,
		"": false, "a-b": false, "cb()": false, "a b": false, "alert(1)//": false, "é": false, "a;b": false,
		strings.Repeat("a", 257): false,
	} {
		if got := pipeline.ValidJSONPCallback([]byte(cb)); got != want {
			t.Errorf("ValidJSONPCallback(%q) = %v, want %v", cb, got, want)
		}
	}
}

func TestApplyEnvelopeAndJSONP(t *testing.T) {
	headers := [][2][]byte{
		{[]byte("X-WP-Total"), []byte("12")},
		{[]byte("X-WP-TotalPages"), []byte("2")},
		{[]byte("Link"), []byte(`<https://s.example/index.php?rest_route=/cms/v2/posts&page=2>; rel="next"`)},
	}
	sh := pipeline.Shape{Envelope: true, JSONP: "cb", Fields: pipeline.ParseFields("id")}
	out := sh.Apply(200, headers, []byte(`[{"id":1,"slug":"a"}]`), "https://s.example/index.php?rest_route=/")
	want := `/**/cb({"body":[{"id":1}],"status":200,"headers":{"X-WP-Total":12,"X-WP-TotalPages":2,"Link":"<https://s.example/index.php?rest_route=/cms/v2/posts&page=2>; rel=\"next\""}})`
	if string(out.Body) != want || out.Status != 200 || string(out.ContentType) != "application/javascript; charset=UTF-8" {
		t.Fatalf("Apply = %d %s %s", out.Status, out.ContentType, out.Body)
	}
	if len(out.Headers) != 1 || string(out.Headers[0][1]) != `<https://s.example/index.php?rest_route=/>; rel="https://api.w.org/"` {
		t.Fatalf("headers still sent: %q", out.Headers)
	}
	// An error: _fields does not apply, the envelope answers 200 with the real status, and the
	// answer's empty headers are PHP's empty array.
	sh = pipeline.Shape{Envelope: true, Fields: pipeline.ParseFields("code")}
	out = sh.Apply(404, nil, []byte(`{"code":"rest_no_route","message":"m","data":{"status":404}}`), "")
	if string(out.Body) != `{"body":{"code":"rest_no_route","message":"m","data":{"status":404}},"status":404,"headers":[]}` || out.Status != 200 {
		t.Fatalf("error envelope = %d %s", out.Status, out.Body)
	}
}

func TestMethodOverride(t *testing.T) {
	tests := []struct {
		method, uri, header, want string
	}{
		{"POST", "/index.php?rest_route=/x&_method=DELETE", "", "DELETE"},
		{"POST", "/index.php?rest_route=/x&_method=patch", "", "PATCH"},
		{"POST", "/index.php?rest_route=/x", "PUT", "PUT"},
		{"POST", "/index.php?rest_route=/x&_method=DELETE", "PUT", "DELETE"}, // the query wins
		{"GET", "/index.php?rest_route=/x&_method=DELETE", "", "GET"},        // never from a GET
		{"POST", "/index.php?rest_route=/x&_method=DE LETE", "", "POST"},
		{"POST", "/index.php?rest_route=/x&_method=" + strings.Repeat("A", 17), "", "POST"},
	}
	for _, tt := range tests {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(tt.method)
		ctx.Request.SetRequestURI(tt.uri)
		if tt.header != "" {
			ctx.Request.Header.Set("X-HTTP-Method-Override", tt.header)
		}
		pipeline.MethodOverride(&ctx)
		if got := string(ctx.Method()); got != tt.want {
			t.Errorf("%s %s (%q): method %s, want %s", tt.method, tt.uri, tt.header, got, tt.want)
		}
	}
}

// FuzzFields: whatever _fields a client sends and whatever JSON the body is, filtering never
// panics, keeps valid JSON valid, and equal trees give equal keys.
func FuzzFields(f *testing.F) {
	for _, s := range []string{"id", "title.rendered", "a..b", ".", "_links", "tags.0,tags.2", "x,x.y,x", " , ", "\x00"} {
		f.Add(s, post)
	}
	f.Add("id", `[{"id":1},2,[3],{"id":{"id":4}}]`)
	f.Fuzz(func(t *testing.T, fields, body string) {
		ft := pipeline.ParseFields(fields)
		out := pipeline.FilterFields([]byte(body), ft)
		if json.Valid([]byte(body)) && !json.Valid(out) {
			t.Fatalf("FilterFields(%q, %s) = %s: not JSON", fields, body, out)
		}
		if ft != nil && pipeline.ParseFields(ft.String()).String() != ft.String() {
			t.Fatalf("key of %q not stable: %q", fields, ft.String())
		}
	})
}

// FuzzJSONP: a callback that passes validation can never break out of the call it is wrapped in.
func FuzzJSONP(f *testing.F) {
	for _, s := range []string{"cb", "a.b", "alert(1)//", "</script>", "a\nb", "x=1;y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cb string) {
		if !pipeline.ValidJSONPCallback([]byte(cb)) {
			return
		}
		for _, c := range cb {
			if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				t.Fatalf("callback %q accepted with %q", cb, c)
			}
		}
		sh := pipeline.Shape{JSONP: cb}
		out := sh.Apply(200, nil, []byte(`{"a":1}`), "")
		if string(out.Body) != "/**/"+cb+`({"a":1})` {
			t.Fatalf("JSONP body %s", out.Body)
		}
	})
}
