package shopify

import (
	"math/big"
	"strings"
	"testing"

	"vitrine/origin/store"
	"vitrine/schema"
)

// FuzzDecode feeds arbitrary files to the decoder: it never panics, and every product it accepts
// is one the store would accept, with distinct slugs and SKUs, categories whose parents come
// first, and rows in line order.
func FuzzDecode(f *testing.F) {
	f.Add(readFixture(f), uint8(2))
	head := "Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price,Variant Inventory Qty,Image Src,Image Position,Status,Published,Type,Product Category\n"
	for _, rows := range []string{
		"a,A,Size,S,A1,1.00,3,https://x.test/a.jpg,1,active,TRUE,Hats,A > B > C\na,,,M,A2,2.50,-1,,,,,,\n",
		"a,A,Title,Default Title,,1500.00,,,,draft,,,\n",
		"\"a\",\"A\nB\",,,,\"1\",,,,,,,\n",
		"a,A,,,A1,1.005,,,,,,,\nb,B,,,A1,1,,,,,,,\n",
		",x,,,,,,,,,,,\nfeatured,F,,,,1,,,,,,,\n",
		"a,A,,,,1,,,,,,,>>>\n",
	} {
		f.Add([]byte(head+rows), uint8(2))
	}
	f.Add([]byte("\xEF\xBB\xBFHandle,Title,Variant Price\r\na,A,1\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, exp uint8) {
		exponent := int(exp % 5)
		got, err := decodeAll(t, data, "USD", exponent)
		if err != nil {
			return // a bad header, or a read error: nothing to check
		}
		slugs := map[string]bool{}
		skus := map[string]bool{}
		for _, p := range got.plans {
			if err := schema.ValidateProduct(&p.product, schema.ReservedProductSlugs()); err != nil {
				t.Fatalf("accepted product fails validation: %v: %+v", err, p.product)
			}
			if slugs[p.product.Slug] {
				t.Fatalf("slug %q accepted twice", p.product.Slug)
			}
			slugs[p.product.Slug] = true
			if n := len(p.variants); n < 1 || n > store.MaxVariantsPerProduct {
				t.Fatalf("%d variants", n)
			}
			if p.product.Prices["USD"] != p.variants[0].price {
				t.Fatalf("product price %v, first variant %d", p.product.Prices, p.variants[0].price)
			}
			for i, r := range p.rows {
				if r.line < 2 || i > 0 && r.line <= p.rows[i-1].line {
					t.Fatalf("row lines %v out of order", p.rows)
				}
			}
			for j, v := range p.variants {
				sv := schema.Variant{SKU: v.sku, Title: v.title, Options: v.options, Position: j}
				if sv.SKU == "" {
					sv.SKU = madeSKU(p.product.Slug, v, j)
				}
				if err := schema.ValidateVariant(&sv); err != nil {
					t.Fatalf("accepted variant fails validation: %v: %+v", err, sv)
				}
				if v.price < 0 || v.price > schema.MaxMinorAmount || v.stock < 0 || v.stock > 1_000_000_000 {
					t.Fatalf("variant out of range: %+v", v)
				}
				if v.sku != "" {
					if skus[v.sku] {
						t.Fatalf("SKU %q accepted twice", v.sku)
					}
					skus[v.sku] = true
				}
			}
			seen := map[string]bool{}
			for _, c := range p.categories {
				if c.parent != "" && !seen[c.parent] {
					t.Fatalf("category %q comes before its parent %q", c.slug, c.parent)
				}
				if err := schema.ValidateCategory(&schema.Category{Slug: c.slug, Name: c.name}); err != nil {
					t.Fatalf("category %+v: %v", c, err)
				}
				seen[c.slug] = true
			}
			for _, s := range p.leafSlugs {
				if !seen[s] {
					t.Fatalf("leaf %q is not among the categories", s)
				}
			}
		}
	})
}

// FuzzParseMinor checks the price parser against math/big: an accepted amount is exactly the
// decimal times 10^exponent.
func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{"19.99", "1500.00", "0.005", "12.345", "-1", "1e3", "", "007.10", "99999999999999999999"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, exp uint8) {
		exponent := int(exp % 5)
		got, reason := parseMinor(s, "USD", exponent)
		if reason != "" {
			return
		}
		if strings.ContainsAny(s, "+-eE_ ") {
			t.Fatalf("parseMinor(%q) accepted a sign, exponent or separator", s)
		}
		want, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("parseMinor(%q) = %d, but it is not a number", s, got)
		}
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exponent)), nil))
		minor := new(big.Rat).Mul(want, scale)
		if !minor.IsInt() || minor.Num().Int64() != got || got > schema.MaxMinorAmount {
			t.Fatalf("parseMinor(%q, %d) = %d, want %s", s, exponent, got, minor.RatString())
		}
		// Formatting back gives the same value (canonically written).
		back, _ := new(big.Rat).SetString(schema.FormatMinor(got, exponent))
		if back == nil || back.Cmp(want) != 0 {
			t.Fatalf("FormatMinor(%d, %d) = %q, not the value of %q", got, exponent, schema.FormatMinor(got, exponent), s)
		}
	})
}
