package schema_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"vitrine/schema"
)

func TestParseRate(t *testing.T) {
	valid := []struct {
		name string
		in   string
		want string
	}{
		{"one", "1", "1"},
		{"trailing zeros", "0.9200", "0.92"},
		{"leading zeros", "007.5", "7.5"},
		{"integer with zero fraction", "1.000", "1"},
		{"ten", "10", "10"},
		{"yen", "151.3", "151.3"},
		{"dinar", "0.3071", "0.3071"},
		{"12 decimals", "1.123456789012", "1.123456789012"},
		{"smallest", "0.000000000001", "0.000000000001"},
		{"30 characters", strings.Repeat("0", 29) + "1", "1"},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schema.ParseRate(tc.in)
			if err != nil {
				t.Fatalf("ParseRate(%q) error %v, want %q", tc.in, err, tc.want)
			}
			if got != tc.want {
				t.Errorf("ParseRate(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again, err := schema.ParseRate(got); err != nil || again != got {
				t.Errorf("ParseRate(%q) = %q, %v, want the canonical form unchanged", got, again, err)
			}
		})
	}
	invalid := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"zero", "0"},
		{"zero with fraction", "0.0"},
		{"zeros", "000.000"},
		{"negative", "-1"},
		{"plus sign", "+1"},
		{"exponent", "1e3"},
		{"trailing dot", "1."},
		{"leading dot", ".5"},
		{"13 decimals", "1.1234567890123"},
		{"letters", "abc"},
		{"decimal comma", "1,5"},
		{"two dots", "1.2.3"},
		{"leading space", " 1"},
		{"trailing space", "1 "},
		{"31 characters", strings.Repeat("0", 30) + "1"},
		{"infinity", "Inf"},
		{"hex", "0x10"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schema.ParseRate(tc.in)
			if err == nil {
				t.Fatalf("ParseRate(%q) = %q, want an error", tc.in, got)
			}
			var e *schema.Error
			if !errors.As(err, &e) || e.Code != schema.CodeInvalid || e.Field != "rate" {
				t.Errorf("ParseRate(%q) error %#v, want a CodeInvalid *Error on rate", tc.in, err)
			}
		})
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"1", "0.9200", "007.5", "151.3", "0", ".5", "1.", "1e3", "-1", "1.1234567890123", "0.000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := schema.ParseRate(s)
		if err != nil {
			if schema.ErrorCode(err) != schema.CodeInvalid {
				t.Fatalf("ParseRate(%q) error %v, want CodeInvalid", s, err)
			}
			return
		}
		again, err := schema.ParseRate(got)
		if err != nil || again != got {
			t.Fatalf("ParseRate(%q) = %q, whose own parse is %q, %v", s, got, again, err)
		}
		if strings.HasPrefix(got, "0") && !strings.HasPrefix(got, "0.") || strings.HasSuffix(got, "0") && strings.Contains(got, ".") {
			t.Fatalf("ParseRate(%q) = %q, not canonical", s, got)
		}
		// Canonicalisation keeps the value.
		const amount = 123_456_789
		if a, b := schema.ConvertMinor(amount, 2, 3, s), schema.ConvertMinor(amount, 2, 3, got); a != b {
			t.Fatalf("ConvertMinor at %q = %d, at its canonical form %q = %d", s, a, got, b)
		}
	})
}

func TestFormatMinor(t *testing.T) {
	cases := []struct {
		name     string
		amount   int64
		exponent int
		want     string
	}{
		{"dollars and cents", 1999, 2, "19.99"},
		{"cents only", 5, 2, "0.05"},
		{"zero", 0, 2, "0.00"},
		{"whole cents", 100, 2, "1.00"},
		{"exponent 0", 500, 0, "500"},
		{"zero exponent 0", 0, 0, "0"},
		{"exponent 3", 1234, 3, "1.234"},
		{"negative under one", -5, 3, "-0.005"},
		{"negative", -1999, 2, "-19.99"},
		{"exponent 4", 1, 4, "0.0001"},
		{"negative exponent treated as 0", 7, -1, "7"},
		{"max minor amount", schema.MaxMinorAmount, 2, "10000000000000.00"},
		{"max int64", math.MaxInt64, 2, "92233720368547758.07"},
		{"min int64", math.MinInt64, 2, "-92233720368547758.08"},
		{"max int64 exponent 0", math.MaxInt64, 0, "9223372036854775807"},
		{"big exponent", 42, 20, "0.00000000000000000042"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.FormatMinor(tc.amount, tc.exponent); got != tc.want {
				t.Errorf("FormatMinor(%d, %d) = %q, want %q", tc.amount, tc.exponent, got, tc.want)
			}
			if got := string(schema.AppendMinor([]byte("EUR "), tc.amount, tc.exponent)); got != "EUR "+tc.want {
				t.Errorf("AppendMinor(\"EUR \", %d, %d) = %q, want %q", tc.amount, tc.exponent, got, "EUR "+tc.want)
			}
		})
	}
}

func TestConvertMinor(t *testing.T) {
	cases := []struct {
		name           string
		amount         int64
		fromExp, toExp int
		rate           string
		want           int64
	}{
		{name: "identity", amount: 1999, fromExp: 2, toExp: 2, rate: "1", want: 1999},
		{name: "USD to EUR", amount: 1999, fromExp: 2, toExp: 2, rate: "0.92", want: 1839},   // 18.3908
		{name: "USD to JPY", amount: 1999, fromExp: 2, toExp: 0, rate: "151.3", want: 3024},  // 3024.487
		{name: "USD to KWD", amount: 1999, fromExp: 2, toExp: 3, rate: "0.3071", want: 6139}, // 6.138929
		{name: "JPY to USD", amount: 1000, fromExp: 0, toExp: 2, rate: "0.0066", want: 660},
		{name: "zero", amount: 0, fromExp: 2, toExp: 0, rate: "151.3", want: 0},
		{name: "half rounds up", amount: 50, fromExp: 2, toExp: 0, rate: "1", want: 1},              // 0.5
		{name: "one and a half", amount: 150, fromExp: 2, toExp: 0, rate: "1", want: 2},             // 1.5
		{name: "two and a half not to even", amount: 250, fromExp: 2, toExp: 0, rate: "1", want: 3}, // 2.5
		{name: "under half rounds down", amount: 49, fromExp: 2, toExp: 0, rate: "1", want: 0},      // 0.49
		{name: "half by rate", amount: 1, fromExp: 2, toExp: 2, rate: "0.5", want: 1},               // 0.5
		{name: "just under half by rate", amount: 1, fromExp: 2, toExp: 2, rate: "0.499999999999", want: 0},
		{name: "negative half away from zero", amount: -50, fromExp: 2, toExp: 0, rate: "1", want: -1},
		{name: "negative two and a half", amount: -250, fromExp: 2, toExp: 0, rate: "1", want: -3},
		{name: "negative under half", amount: -49, fromExp: 2, toExp: 0, rate: "1", want: 0},
		{name: "tiny rate", amount: 1, fromExp: 2, toExp: 2, rate: "0.000000000001", want: 0},
		// Exact on amounts where a float64 product is off by tens of units.
		{name: "large exact", amount: 90_000_000_000_000, fromExp: 2, toExp: 2, rate: "1.1", want: 99000000000000},
		{name: "large 12 decimal rate", amount: 999_999_999_999_999, fromExp: 2, toExp: 2, rate: "0.999999999999", want: 999999999998999},
		{name: "large to JPY", amount: 6_543_210_987_654, fromExp: 2, toExp: 0, rate: "151.3", want: 9899878224321},
		// Results beyond the amount bound saturate at it, keeping their sign.
		{name: "max minor amount to KWD saturates", amount: schema.MaxMinorAmount, fromExp: 2, toExp: 3, rate: "0.3071", want: schema.MaxMinorAmount},
		{name: "negative saturates negative", amount: -schema.MaxMinorAmount, fromExp: 2, toExp: 2, rate: "10", want: -schema.MaxMinorAmount},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.ConvertMinor(tc.amount, tc.fromExp, tc.toExp, tc.rate); got != tc.want {
				t.Errorf("ConvertMinor(%d, %d, %d, %q) = %d, want %d", tc.amount, tc.fromExp, tc.toExp, tc.rate, got, tc.want)
			}
		})
	}
}

// TestConvertMinorOverflow documents a bug; see the skip message.
func TestConvertMinorOverflow(t *testing.T) {
	const e18 = 1_000_000_000_000_000_000
	if got := schema.ConvertMinor(-e18, 2, 2, "10"); got > 0 {
		t.Errorf("ConvertMinor(-10^18, 2, 2, \"10\") = %d, want a negative amount", got)
	}
	lo, hi := schema.ConvertMinor(e18, 2, 2, "9"), schema.ConvertMinor(e18, 2, 2, "10")
	if hi < lo {
		t.Errorf("ConvertMinor(10^18) at rate 10 = %d, below its value at rate 9 = %d", hi, lo)
	}
}

var (
	usd = &schema.Currency{Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"}
	eur = &schema.Currency{Code: "EUR", Name: "Euro", Symbol: "€", Exponent: 2, Rate: "0.92"}
	jpy = &schema.Currency{Code: "JPY", Name: "Yen", Symbol: "¥", Exponent: 0, Rate: "151.3"}
	kwd = &schema.Currency{Code: "KWD", Name: "Kuwaiti Dinar", Symbol: "KD", Exponent: 3, Rate: "0.3071"}
)

func TestPricingPrice(t *testing.T) {
	cases := []struct {
		name   string
		pr     schema.Pricing
		prices schema.Prices
		want   schema.Money
	}{
		{"default currency", schema.Pricing{Currency: usd, Default: usd}, schema.Prices{"USD": 1999, "EUR": 1850},
			schema.Money{Amount: 1999, Currency: "USD", Formatted: "19.99"}},
		{"merchant price in currency", schema.Pricing{Currency: eur, Default: usd}, schema.Prices{"USD": 1999, "EUR": 1850},
			schema.Money{Amount: 1850, Currency: "EUR", Formatted: "18.50"}},
		{"merchant zero price is a price", schema.Pricing{Currency: eur, Default: usd}, schema.Prices{"USD": 1999, "EUR": 0},
			schema.Money{Amount: 0, Currency: "EUR", Formatted: "0.00"}},
		{"converted to EUR", schema.Pricing{Currency: eur, Default: usd}, schema.Prices{"USD": 1999},
			schema.Money{Amount: 1839, Currency: "EUR", Formatted: "18.39", Converted: true}},
		{"converted to JPY", schema.Pricing{Currency: jpy, Default: usd}, schema.Prices{"USD": 1999},
			schema.Money{Amount: 3024, Currency: "JPY", Formatted: "3024", Converted: true}},
		{"converted to KWD", schema.Pricing{Currency: kwd, Default: usd}, schema.Prices{"USD": 1999},
			schema.Money{Amount: 6139, Currency: "KWD", Formatted: "6.139", Converted: true}},
		{"no default price", schema.Pricing{Currency: jpy, Default: usd}, schema.Prices{"EUR": 1850},
			schema.Money{Amount: 0, Currency: "JPY", Formatted: "0", Converted: true}},
		{"no prices", schema.Pricing{Currency: kwd, Default: usd}, nil,
			schema.Money{Amount: 0, Currency: "KWD", Formatted: "0.000", Converted: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pr.Price(tc.prices); got != tc.want {
				t.Errorf("Price(%v) = %+v, want %+v", tc.prices, got, tc.want)
			}
		})
	}
}

func TestPricingVariantPrice(t *testing.T) {
	p := &schema.Product{Prices: schema.Prices{"USD": 1999, "EUR": 1850}}
	cases := []struct {
		name string
		pr   schema.Pricing
		v    *schema.Variant
		want schema.Money
	}{
		{"override in currency", schema.Pricing{Currency: eur, Default: usd}, &schema.Variant{Prices: schema.Prices{"EUR": 2100}},
			schema.Money{Amount: 2100, Currency: "EUR", Formatted: "21.00"}},
		{"no override: product price", schema.Pricing{Currency: eur, Default: usd}, &schema.Variant{},
			schema.Money{Amount: 1850, Currency: "EUR", Formatted: "18.50"}},
		{"no override: product price converted", schema.Pricing{Currency: jpy, Default: usd}, &schema.Variant{Prices: schema.Prices{"EUR": 2100}},
			schema.Money{Amount: 3024, Currency: "JPY", Formatted: "3024", Converted: true}},
		{"override in JPY", schema.Pricing{Currency: jpy, Default: usd}, &schema.Variant{Prices: schema.Prices{"JPY": 3500}},
			schema.Money{Amount: 3500, Currency: "JPY", Formatted: "3500"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pr.VariantPrice(tc.v, p); got != tc.want {
				t.Errorf("VariantPrice(%v) = %+v, want %+v", tc.v.Prices, got, tc.want)
			}
		})
	}
}

// TestVariantPriceConvertsVariantOverride documents a probable bug; see the skip message.
func TestVariantPriceConvertsVariantOverride(t *testing.T) {
	p := &schema.Product{Prices: schema.Prices{"USD": 1999}}
	v := &schema.Variant{Prices: schema.Prices{"USD": 2499}}
	got := schema.Pricing{Currency: jpy, Default: usd}.VariantPrice(v, p)
	if want := (schema.Money{Amount: 3781, Currency: "JPY", Formatted: "3781", Converted: true}); got != want {
		t.Errorf("VariantPrice = %+v, want %+v", got, want)
	}
}

func TestAvailability(t *testing.T) {
	cases := []struct {
		name  string
		stock int64
		want  schema.Availability
	}{
		{"negative", -1, schema.OutOfStock},
		{"zero", 0, schema.OutOfStock},
		{"one", 1, schema.LowStock},
		{"at threshold", schema.DefaultLowStockThreshold, schema.LowStock},
		{"above threshold", schema.DefaultLowStockThreshold + 1, schema.InStock},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.AvailabilityOf(tc.stock, schema.DefaultLowStockThreshold); got != tc.want {
				t.Errorf("AvailabilityOf(%d) = %q, want %q", tc.stock, got, tc.want)
			}
		})
	}
	best := []struct {
		name string
		vs   []schema.Availability
		want schema.Availability
	}{
		{"no variants", nil, schema.OutOfStock},
		{"all out", []schema.Availability{schema.OutOfStock, schema.OutOfStock}, schema.OutOfStock},
		{"low beats out", []schema.Availability{schema.OutOfStock, schema.LowStock}, schema.LowStock},
		{"in beats low", []schema.Availability{schema.LowStock, schema.InStock, schema.OutOfStock}, schema.InStock},
	}
	for _, tc := range best {
		t.Run("best "+tc.name, func(t *testing.T) {
			var vs []*schema.Variant
			for _, a := range tc.vs {
				vs = append(vs, &schema.Variant{Availability: a})
			}
			if got := schema.BestAvailability(vs); got != tc.want {
				t.Errorf("BestAvailability(%q) = %q, want %q", tc.vs, got, tc.want)
			}
		})
	}
}

func TestSortedCurrencyCodes(t *testing.T) {
	got := schema.SortedCurrencyCodes(schema.Prices{"USD": 1, "EUR": 2, "JPY": 3, "AUD": 4})
	want := []string{"AUD", "EUR", "JPY", "USD"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("SortedCurrencyCodes = %q, want %q", got, want)
	}
	if got := schema.SortedCurrencyCodes(nil); len(got) != 0 {
		t.Errorf("SortedCurrencyCodes(nil) = %q, want empty", got)
	}
}
