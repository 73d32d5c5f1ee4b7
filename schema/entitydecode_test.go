package schema

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func sampleEntities() []any {
	t1 := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	t2 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", 2*3600))
	return []any{
		&Product{ID: 12, Slug: "brass-lamp", Title: "Brass lamp «été» 🌞", Description: "<p>Made by hand & \"built\" to last</p>\n\ttabs\u2028",
			Status: ProductActive, Featured: true, Prices: Prices{"USD": 1999, "EUR": -5, "XTS": 0},
			Images:      []Image{{URL: "https://cdn.example/a.jpg", Alt: "a"}, {URL: "https://cdn.example/b.jpg", Width: 640, Height: 480}},
			CategoryIDs: []CategoryID{3, 9, 1 << 40}, CreatedAt: t1, UpdatedAt: t2, Version: 77},
		&Product{ID: 1, Slug: "x", Status: ProductDraft, CategoryIDs: []CategoryID{}, Images: []Image{}, Prices: Prices{}},
		&Variant{ID: 5, ProductID: 12, SKU: "SKU-1", Title: "Size M", Options: []Option{{Name: "size", Value: "M"}, {Name: "colour", Value: "brün"}},
			Prices: Prices{"USD": 2500}, Availability: LowStock, Position: -3, CreatedAt: t1, UpdatedAt: t1, Version: 1<<62 + 5},
		&Variant{ID: 6, ProductID: 12, Availability: "backorder"},
		&Category{ID: 3, ParentID: 1, Slug: "lamps", Name: "Lamps", Description: "All the lamps", Position: 2, CreatedAt: t1, UpdatedAt: t2, Version: 4},
		&Currency{Code: "JPY", Name: "Yen", Symbol: "¥", Exponent: 0, Rate: "151.5", CreatedAt: t1, UpdatedAt: t1, Version: 2},
		&Post{ID: 44, Type: "post", Slug: "hello", Status: StatusPublish, Title: "Hello", Content: "<!-- wp:paragraph --><p>Hi</p>", Excerpt: "Hi",
			Author: 7, FeaturedMedia: 9, CommentStatus: "open", PingStatus: "closed", Format: "standard", Meta: map[string]string{"k": "v", "é": "\x01"},
			Sticky: true, Categories: []TermID{1, 2}, Tags: []TermID{}, Parent: 3, MenuOrder: 4, PatternCategories: []TermID{5},
			Embeds: map[string]string{"https://youtu.be/x": "<iframe></iframe>"}, DateGMT: t1, DateFloating: true, ModifiedGMT: t2,
			Protected: true, RevisionCount: 3, LatestRevision: 45, Version: 9},
		&Post{ID: 45, Type: TypeAttachment, Status: StatusInherit, Attachment: &Attachment{File: "2026/11/a.jpg", MimeType: "image/jpeg", FileSize: 10,
			Sizes: map[string]AttachmentSize{"thumbnail": {File: "2026/11/a-150x150.jpg", Width: 150, Height: 150}}}},
		&Post{ID: 46, Type: "nav_menu_item", MenuItem: &MenuItem{Type: "custom", URL: "https://example.com", Classes: []string{"a"}, Menus: 3}},
		&Post{ID: 47, Type: "wp_template", Design: &Design{Theme: "twentytwentyfive"}},
	}
}

// differential decodes data with encoding/json, with DecodeEntity and twice with
// DecodeEntityInterned (a fresh interner, then the same one holding what the first decode put in
// it) into every fast kind, and fails on any difference, of value or of error.
func differential(t *testing.T, data []byte) {
	t.Helper()
	in := NewInterner(16)
	for _, zero := range []func() any{
		func() any { return new(Product) }, func() any { return new(Variant) }, func() any { return new(Category) },
		func() any { return new(Currency) }, func() any { return new(Post) },
	} {
		want := zero()
		werr := json.Unmarshal(data, want)
		for i, decode := range []func(any) error{
			func(v any) error { return DecodeEntity(data, v) },
			func(v any) error { return DecodeEntityInterned(data, v, in) },
			func(v any) error { return DecodeEntityInterned(data, v, in) },
		} {
			got := zero()
			gerr := decode(got)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("%T %q (decoder %d): error %v, encoding/json %v", want, data, i, gerr, werr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%T %q (decoder %d):\n got %#v\nwant %#v", want, data, i, got, want)
			}
		}
	}
}

// TestDecodeEntityFast checks that what json.Marshal writes takes the fast path, decodes as
// encoding/json does, and keeps nothing of the input.
func TestDecodeEntityFast(t *testing.T) {
	for _, e := range sampleEntities() {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		differential(t, data)
		var ok bool
		got := reflect.New(reflect.TypeOf(e).Elem()).Interface()
		switch v := got.(type) {
		case *Product:
			ok = decodeFast(data, nil, v, decodeProduct)
		case *Variant:
			ok = decodeFast(data, nil, v, decodeVariant)
		case *Category:
			ok = decodeFast(data, nil, v, decodeCategory)
		case *Currency:
			ok = decodeFast(data, nil, v, decodeCurrency)
		case *Post:
			ok = decodeFast(data, nil, v, decodePost)
		}
		if !ok {
			t.Fatalf("%T %s: not decoded by the fast path", e, data)
		}
		want := reflect.New(reflect.TypeOf(e).Elem()).Interface()
		if err := json.Unmarshal(data, want); err != nil {
			t.Fatal(err)
		}
		for i := range data {
			data[i] = 'X' // the decoded strings must not alias the input
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T: changed with its input:\n got %#v\nwant %#v", e, got, want)
		}
	}
}

// TestDecodeEntityEdges covers input the fast path must hand to encoding/json, or decode
// exactly as it does.
func TestDecodeEntityEdges(t *testing.T) {
	cases := []struct {
		name string
		data string
	}{
		{"empty object", `{}`},
		{"white space", " \t\n{ \"id\" : 3 , \"slug\" :\"a\" }\r\n"},
		{"other case key", `{"ID":3,"Slug":"a"}`},
		{"unknown key", `{"id":3,"colour":"red"}`},
		{"repeated key", `{"id":3,"id":4}`},
		{"repeated map", `{"prices":{"USD":1},"prices":{"EUR":2}}`},
		{"repeated key in map", `{"prices":{"USD":1,"USD":2}}`},
		{"escaped key", `{"i\u0064":3}`},
		{"nulls", `{"id":null,"slug":null,"prices":null,"images":null,"category_ids":null,"created_at":null,"featured":null,"options":null,"meta":null,"attachment":null}`},
		{"null elements", `{"category_ids":[1,null],"prices":{"USD":null},"images":[null],"meta":{"a":null}}`},
		{"empty containers", `{"category_ids":[],"prices":{},"images":[],"options":[],"meta":{},"tags":[]}`},
		{"fraction", `{"id":1.0}`},
		{"exponent", `{"id":1e2}`},
		{"negative zero", `{"id":-0,"position":-0}`},
		{"leading zero", `{"id":01}`},
		{"max int", `{"version":9223372036854775807,"id":-9223372036854775808}`},
		{"overflow", `{"version":9223372036854775808}`},
		{"long digits", `{"version":00000000000000000001}`},
		{"string for int", `{"id":"3"}`},
		{"int for string", `{"slug":3}`},
		{"bool for int", `{"id":true}`},
		{"escapes", `{"title":"a\"b\\c\/d\b\f\n\r\t\u00e9\u003c\u2028\ud83c\udf1e","slug":"\u0000"}`},
		{"lone high surrogate", `{"title":"a\ud83cb"}`},
		{"lone low surrogate", `{"title":"a\udf1eb"}`},
		{"reversed pair", `{"title":"\udf1e\ud83c"}`},
		{"bad escape", `{"title":"\x"}`},
		{"short unicode escape", `{"title":"\u12"}`},
		{"control character", "{\"title\":\"a\x01b\"}"},
		{"invalid utf-8", "{\"title\":\"a\xffb\"}"},
		{"invalid utf-8 escaped", "{\"title\":\"\\n\xc3\"}"},
		{"time", `{"created_at":"2026-01-02T03:04:05.123456789+05:30"}`},
		{"bad time", `{"created_at":"2026-13-02T03:04:05Z"}`},
		{"escaped time", `{"created_at":"2026-01-02T03:04:05\u005a"}`},
		{"number time", `{"created_at":12}`},
		{"trailing data", `{"id":3} x`},
		{"two documents", `{"id":3}{"id":4}`},
		{"truncated", `{"id":3,"slug":"a`},
		{"missing colon", `{"id" 3}`},
		{"trailing comma", `{"id":3,}`},
		{"array", `[1,2]`},
		{"null document", `null`},
		{"string document", `"x"`},
		{"empty", ``},
		{"nested attachment", `{"type":"attachment","attachment":{"file":"a.jpg","sizes":{"t":{"file":"b\"}.jpg"}}}}`},
		{"bad nested", `{"attachment":{"file":3}}`},
		{"broken nested", `{"attachment":{"file":"a"]}`},
		{"unterminated nested", `{"attachment":{"file":"a\"}`},
		{"image fields", `{"images":[{"url":"u","alt":"a","width":1,"height":2},{"URL":"v"}]}`},
		{"many options", `{"options":[{"name":"a","value":"1"},{"name":"b","value":"2"},{"name":"c","value":"3"},{"name":"d","value":"4"},{"name":"e","value":"5"},{"name":"f","value":"6"},{"name":"g","value":"7"},{"name":"h","value":"8"},{"name":"i","value":"9"}]}`},
		{"enum values", `{"status":"archived","availability":"out_of_stock","comment_status":"closed","format":"gallery","type":"page"}`},
		{"literal typo", `{"featured":tru}`},
		{"literal tail", `{"featured":truex}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { differential(t, []byte(c.data)) })
	}
}

// TestDecodeEntityOtherTypes checks that other types go to encoding/json.
func TestDecodeEntityOtherTypes(t *testing.T) {
	var got, want Term
	data := []byte(`{"id":3,"name":"News","Taxonomy":"category"}`)
	if err := DecodeEntity(data, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// FuzzDecodeEntity is the differential test: DecodeEntity and encoding/json agree on every input.
func FuzzDecodeEntity(f *testing.F) {
	for _, e := range sampleEntities() {
		data, _ := json.Marshal(e)
		f.Add(data)
		f.Add([]byte(strings.ReplaceAll(string(data), ",", " , ")))
	}
	f.Add([]byte(`{"title":"\ud83c\udf1e\u00e9","id":-0,"prices":{"USD":1,"USD":2}}`))
	f.Add([]byte(`{"attachment":{"file":"a"},"meta":{"a":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) { differential(t, data) })
}

func BenchmarkDecodeEntity(b *testing.B) {
	for _, e := range sampleEntities()[:3] {
		data, _ := json.Marshal(e)
		typ := reflect.TypeOf(e).Elem()
		b.Run(typ.Name()+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := DecodeEntity(data, reflect.New(typ).Interface()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(typ.Name()+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := json.Unmarshal(data, reflect.New(typ).Interface()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// decodeChangeReference is DecodeChange as encoding/json alone does it, a newer schema's
// envelope answered as DecodeChange answers it.
func decodeChangeReference(b []byte) (*Change, error) {
	c, err := decodeChangeJSON(b)
	if err != nil {
		if u := newerSchema(b); u != nil {
			return nil, u
		}
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

func differentialChange(t *testing.T, data []byte) {
	t.Helper()
	want, werr := decodeChangeReference(data)
	got, gerr := DecodeChange(data)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, encoding/json %v", data, gerr, werr)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
}

func sampleChanges() [][]byte {
	var out [][]byte
	for i, e := range sampleEntities() {
		c := NewChange("shop", KindProduct, "12", Pub, e)
		c.Version, c.TxnFirst, c.TxnLast = int64(10+i), 10, int64(10+i)
		out = append(out, c.Encode())
	}
	tomb := NewChange("shop-2", KindVariant, "7", Priv, nil)
	tomb.Version, tomb.TxnFirst, tomb.TxnLast = 3, 3, 4
	head := Change{Schema: ChangeSchemaVersion, Log: "shop", Kind: KindHead, ID: HeadID, Vis: Pub, Version: 9}
	digest := head
	digest.Digest = &LogDigest{PubCount: 2, PubSum: 1<<63 + 12345, PrivCount: 1, PrivSum: 77}
	reg := NewChange(PlatformLog, KindTenant, "shop", Pub, map[string]any{"slug": "shop"})
	reg.Version, reg.TxnFirst, reg.TxnLast = 1, 1, 1
	other := NewChange("shop", "flashsale", "3", Pub, map[string]int{"id": 3})
	other.Version, other.TxnFirst, other.TxnLast = 5, 5, 5
	return append(out, tomb.Encode(), head.Encode(), digest.Encode(), reg.Encode(), other.Encode())
}

// TestDecodeChangeFast checks that the relay's form takes the fast path and decodes as
// encoding/json does, keeping nothing of the input.
func TestDecodeChangeFast(t *testing.T) {
	for _, w := range sampleChanges() {
		differentialChange(t, w)
		got, ok := decodeChangeFast(w)
		if !ok {
			t.Fatalf("%s: not decoded by the fast path", w)
		}
		want, err := decodeChangeJSON(w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			w[i] = 'X'
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("changed with its input:\n got %#v\nwant %#v", got, want)
		}
	}
}

// TestDecodeChangeEdges covers envelopes the fast path must refuse or decode exactly as
// encoding/json does.
func TestDecodeChangeEdges(t *testing.T) {
	for _, data := range []string{
		``, ` `, `null`, `{}`, `[]`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1}}`,
		` {"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{ "id" : 1 }} ` + "\n",
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1}} {}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1}}x`,
		`{"Schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1}}`,
		`{"schema":1,"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1},"extra":1}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":1,}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"id":"\xff"}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":null}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":"x"}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"deleted":true}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"deleted":true,"data":{}}`,
		`{"schema":2,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"Shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"shop","kind":"pro duct","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"public","version":1,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1.5,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":null,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"sh\u006fp","kind":"pr\u006fduct","id":"1","vis":"p\u0075b","version":1,"txn_first":1,"txn_last":1,"data":{}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":1,"bogus":2}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":null}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":[]}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":1},"digest":{"pub_count":2}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":3,"pub_sum":18446744073709551615,"priv_count":0,"priv_sum":0}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":3,"pub_sum":18446744073709551616}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":3,"pub_sum":99999999999999999999}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":-1}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":-0}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":1.0}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":1e3}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":01}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":null,"priv_sum":0}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_sum":"1"}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"Pub_Count":1}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":1,"pub_count":2}}`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":1} }`,
		`{"schema":1,"log":"shop","kind":"log","id":"head","vis":"pub","version":4,"digest":{"pub_count":1}`,
		`{"schema":1,"log":"shop","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":{"a":[1,{"b":"}"}]}`,
	} {
		differentialChange(t, []byte(data))
	}
}

// FuzzDecodeChangeDifferential: DecodeChange and encoding/json agree on every envelope.
func FuzzDecodeChangeDifferential(f *testing.F) {
	for _, w := range sampleChanges() {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, data []byte) { differentialChange(t, data) })
}

// FuzzValidJSON: validJSON never accepts what json.Valid refuses, and accepts everything valid
// that nests less than 512 deep.
func FuzzValidJSON(f *testing.F) {
	for _, w := range sampleChanges() {
		f.Add(w)
	}
	for _, s := range []string{``, ` `, `0`, `-0.5e+7`, `01`, `1.`, `.5`, `-`, `1e`, `"\u00zz"`, `"a` + "\x01" + `"`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `[[[]]]`, "\"\xff\"", `tru`, `nul`, `{}x`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := validJSON(data), json.Valid(data)
		deep := strings.Count(string(data), "[")+strings.Count(string(data), "{") > 512
		if got != want && !(want && deep) {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", data, got, want)
		}
	})
}

// BenchmarkDecodeChange decodes a product's change and a head with its digest (one follows
// every publish), by the fast path and by encoding/json.
func BenchmarkDecodeChange(b *testing.B) {
	samples := sampleChanges()
	head := slices.IndexFunc(samples, func(w []byte) bool { return strings.Contains(string(w), `"digest"`) })
	for _, c := range []struct {
		name string
		w    []byte
	}{{"product", samples[0]}, {"head", samples[head]}} {
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := DecodeChange(c.w); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := decodeChangeReference(c.w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
