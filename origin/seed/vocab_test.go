package seed

import (
	"strings"
	"testing"

	"vitrine/origin/store"
	"vitrine/schema"
)

// TestVocabulary checks what the generator relies on in the hand-written vocabularies.
func TestVocabulary(t *testing.T) {
	if maxVariants > store.MaxVariantsPerProduct {
		t.Fatalf("demo products have up to %d variants, the store accepts %d", maxVariants, store.MaxVariantsPerProduct)
	}
	if maxBatchProducts < 1 || maxBatchProducts*maxChangesPerProduct > schema.MaxChangesPerTxn {
		t.Fatalf("maxBatchProducts %d does not fit a transaction", maxBatchProducts)
	}
	if DefaultBatchProducts > maxBatchProducts {
		t.Fatalf("DefaultBatchProducts %d is above the cap %d", DefaultBatchProducts, maxBatchProducts)
	}
	codes := map[string]bool{}
	for _, d := range departments {
		if codes[d.code] || len(d.code) != 3 {
			t.Errorf("department %s: SKU code %q is not 3 letters or not unique", d.name, d.code)
		}
		codes[d.code] = true
		if d.imageW <= 0 || d.imageH <= 0 {
			t.Errorf("department %s lacks image sizes", d.name)
		}
	}
	for _, n := range categoryTree() {
		if !n.leaf {
			continue
		}
		v := n.vocab
		if len(v.nouns) == 0 || len(v.adjectives) == 0 || (v.pattern == brandNounSuffix && len(v.materials) == 0) {
			t.Errorf("leaf %s lacks title words: %+v", n.slug, v)
		}
		if len(v.intros) == 0 || len(v.sentences) < 4 {
			t.Errorf("leaf %s has %d intros and %d sentences, want at least 1 and 4", n.slug, len(v.intros), len(v.sentences))
		}
		for _, intro := range v.intros {
			if !strings.Contains(intro, "{title}") {
				t.Errorf("leaf %s: intro %q does not name the product", n.slug, intro)
			}
		}
		if v.minPrice < 1 || v.maxPrice < v.minPrice || v.maxPrice > 30000 {
			t.Errorf("leaf %s: price range %d..%d", n.slug, v.minPrice, v.maxPrice)
		}
		if len(v.options) > 2 {
			t.Errorf("leaf %s has %d option dimensions", n.slug, len(v.options))
		}
		for _, d := range v.options {
			if d.adjust != nil && len(d.adjust) != len(d.values) {
				t.Errorf("leaf %s: option %s has %d values and %d adjustments", n.slug, d.name, len(d.values), len(d.adjust))
			}
			for _, a := range d.adjust {
				if a <= -100 {
					t.Errorf("leaf %s: option %s adjusts a price by %d%%", n.slug, d.name, a)
				}
			}
			seen := map[string]string{}
			for _, value := range d.values {
				c := valueCode(value)
				if c == "" || seen[c] != "" {
					t.Errorf("leaf %s: option %s: %q and %q share the SKU code %q", n.slug, d.name, seen[c], value, c)
				}
				seen[c] = value
			}
		}
	}
}

func TestValueCode(t *testing.T) {
	tests := []struct{ value, want string }{
		{"M", "M"}, {"XL", "XL"}, {"Navy", "NAV"}, {"Heather Grey", "HG"}, {"0.6 L", "06L"},
		{"US 10", "US10"}, {"Cedar & Sage", "CS"}, {"2-Pack", "2P"}, {"10Y", "10Y"}, {"30 ml", "30ML"},
	}
	for _, tt := range tests {
		if got := valueCode(tt.value); got != tt.want {
			t.Errorf("valueCode(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}
