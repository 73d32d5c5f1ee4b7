package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"unsafe"
)

func mapPtr(p Prices) unsafe.Pointer { return reflect.ValueOf(p).UnsafePointer() }

// TestInternerShares decodes variants whose prices and options repeat: equal values come back as
// one shared map or list, unequal ones apart, every result equal to encoding/json's, and nothing
// shared aliases the documents it was first decoded from.
func TestInternerShares(t *testing.T) {
	in := NewInterner(100)
	docs := []string{
		`{"id":1,"sku":"a","options":[{"name":"size","value":"M"}],"prices":{"USD":1999,"EUR":1899}}`,
		`{"id":2,"sku":"b","options":[{"name":"size","value":"M"}],"prices":{"EUR":1899,"USD":1999}}`,
		`{"id":3,"sku":"c","options":[{"name":"size","value":"L"}],"prices":{"USD":1999}}`,
		`{"id":4,"sku":"d","options":[{"name":"siz","value":"eM"}],"prices":{"USD":1999,"USD":2999}}`,
		`{"id":5,"sku":"e","options":[],"prices":{}}`,
		`{"id":6,"sku":"f","options":null,"prices":null}`,
		`{"id":7,"sku":"g","options":[{"name":"size","value":"M"}],"prices":{}}`,
		`{"id":8,"sku":"h","options":[{"name":"size","value":"M"},{"name":"colour","value":"Red"}],"prices":{"USD":2999}}`,
	}
	got := make([]*Variant, len(docs))
	for i, d := range docs {
		data := []byte(d)
		want := new(Variant)
		if err := json.Unmarshal(data, want); err != nil {
			t.Fatal(err)
		}
		got[i] = new(Variant)
		if err := DecodeEntityInterned(data, got[i], in); err != nil {
			t.Fatal(err)
		}
		for k := range data {
			data[k] = 'X' // nothing decoded may alias the document
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("doc %d:\n got %#v\nwant %#v", i, got[i], want)
		}
	}
	samePrices := func(a, b int) bool { return mapPtr(got[a].Prices) == mapPtr(got[b].Prices) }
	sameOptions := func(a, b int) bool {
		return unsafe.SliceData(got[a].Options) == unsafe.SliceData(got[b].Options)
	}
	for _, c := range []struct {
		name string
		same bool
		want bool
	}{
		{"prices in another key order", samePrices(0, 1), true},
		{"other prices", samePrices(0, 2), false},
		{"repeated code takes the later amount", got[3].Prices["USD"] == 2999 && samePrices(3, 7), true},
		{"empty prices", samePrices(4, 6) && got[4].Prices != nil, true},
		{"null prices", got[5].Prices == nil, true},
		{"equal options", sameOptions(0, 1) && sameOptions(0, 6), true},
		{"other options", sameOptions(0, 2), false},
		{"options whose concatenation is equal", sameOptions(0, 3), false},
		{"null options", got[5].Options == nil, true},
		{"empty options", got[4].Options != nil && len(got[4].Options) == 0, true},
	} {
		if c.same != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.same, c.want)
		}
	}
	if p, o := in.Len(); p != 3 || o != 4 { // the empty map is kept apart
		t.Errorf("interner holds %d price maps and %d option lists, want 3 and 4", p, o)
	}
}

// TestInternerKeys decodes pairs of documents whose values a careless key would confuse, each pair
// with one interner: the second must still decode exactly as encoding/json does.
func TestInternerKeys(t *testing.T) {
	for _, c := range [][2]string{
		{`{"prices":{"A:1;B":2}}`, `{"prices":{"A":1,"B":2}}`},
		{`{"prices":{"A":1,"B":2}}`, `{"prices":{"A:1;B":2}}`},
		{`{"prices":{"1A":2}}`, `{"prices":{"":12}}`},
		{`{"prices":{"A":-1}}`, `{"prices":{"A-":1}}`},
		{`{"options":[{"name":"ab","value":"c"}]}`, `{"options":[{"name":"a","value":"bc"}]}`},
		{`{"options":[{"name":"a","value":"1:b"}]}`, `{"options":[{"name":"a1:","value":"b"}]}`},
		{`{"options":[{"name":"a","value":""},{"name":"","value":"b"}]}`, `{"options":[{"name":"a","value":"b"}]}`},
	} {
		interned(t, c[0], c[1])
	}
}

// TestInternerManyCodes: a price map of more than maxSharedPrices codes is decoded as
// encoding/json does, repeated codes included, and kept out of the interner.
func TestInternerManyCodes(t *testing.T) {
	doc := `{"prices":{`
	for i := range maxSharedPrices + 4 {
		doc += fmt.Sprintf(`"C%02d":%d,`, (i*7)%(maxSharedPrices+4), i)
	}
	doc += `"C03":-1}}`
	interned(t, doc, doc)
	in := NewInterner(16)
	var v Variant
	if err := DecodeEntityInterned([]byte(doc), &v, in); err != nil || len(v.Prices) != maxSharedPrices+4 || v.Prices["C03"] != -1 {
		t.Fatalf("decoded %v (%v)", v.Prices, err)
	}
	if p, _ := in.Len(); p != 0 {
		t.Fatalf("interner holds %d price maps, want none", p)
	}
}

// interned decodes every document into a variant and into a product, each kind with one
// interner, and checks each against encoding/json.
func interned(t *testing.T, docs ...string) {
	t.Helper()
	for _, zero := range []func() any{func() any { return new(Variant) }, func() any { return new(Product) }} {
		in := NewInterner(16)
		for _, d := range docs {
			want, got := zero(), zero()
			werr := json.Unmarshal([]byte(d), want)
			gerr := DecodeEntityInterned([]byte(d), got, in)
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(want, got) {
				t.Fatalf("%s after %q:\n got %#v (%v)\nwant %#v (%v)", d, docs, got, gerr, want, werr)
			}
		}
	}
}

// FuzzDecodeEntityInterned decodes two documents with one interner, the second after whatever
// the first left in it, and compares both with encoding/json.
func FuzzDecodeEntityInterned(f *testing.F) {
	f.Add([]byte(`{"prices":{"A:1;B":2}}`), []byte(`{"prices":{"A":1,"B":2}}`))
	f.Add([]byte(`{"options":[{"name":"ab","value":"c"}],"prices":{}}`), []byte(`{"options":[{"name":"a","value":"bc"}],"prices":{"USD":1}}`))
	f.Add([]byte(`{"id":3,"slug":"s","prices":{"USD":5}}`), []byte(`{"id":4,"slug":"t","prices":{"USD":5}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) { interned(t, string(a), string(b)) })
}

// TestInternerLimit: past its limit an interner keeps nothing more, and decoding stays correct.
func TestInternerLimit(t *testing.T) {
	in := NewInterner(2)
	for i := range 10 {
		data := fmt.Appendf(nil, `{"id":%d,"options":[{"name":"n","value":"%d"}],"prices":{"USD":%d}}`, i+1, i, i)
		var v Variant
		if err := DecodeEntityInterned(data, &v, in); err != nil {
			t.Fatal(err)
		}
		if v.Prices["USD"] != int64(i) || len(v.Options) != 1 || v.Options[0].Value != fmt.Sprint(i) {
			t.Fatalf("decoded %+v", v)
		}
	}
	if p, o := in.Len(); p != 2 || o != 2 {
		t.Fatalf("interner holds %d and %d, limit 2", p, o)
	}
}

// TestInternerConcurrent decodes the same few values from several goroutines at once (run with
// -race): every decoder gets equal values, and the shared ones are the same.
func TestInternerConcurrent(t *testing.T) {
	in := NewInterner(1000)
	var wg sync.WaitGroup
	res := make([][]*Product, 4)
	for g := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				data := fmt.Appendf(nil, `{"id":%d,"slug":"p%d","prices":{"USD":%d,"GBP":%d}}`, i+1, i, 100+i%7, 90+i%7)
				p := new(Product)
				if err := DecodeEntityInterned(data, p, in); err != nil {
					t.Error(err)
					return
				}
				res[g] = append(res[g], p)
			}
		}()
	}
	wg.Wait()
	for g := range res {
		for i, p := range res[g] {
			if p.Prices["USD"] != int64(100+i%7) || p.Prices["GBP"] != int64(90+i%7) || len(p.Prices) != 2 {
				t.Fatalf("goroutine %d product %d: prices %v", g, i, p.Prices)
			}
			if mapPtr(p.Prices) != mapPtr(res[0][i%7].Prices) {
				t.Fatalf("goroutine %d product %d: equal prices not shared", g, i)
			}
		}
	}
}
