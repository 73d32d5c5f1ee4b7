package schema_test

import (
	"errors"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"

	"vitrine/schema"
)

var (
	totalsUSD = schema.Currency{Code: "USD", Exponent: 2}
	totalsJPY = schema.Currency{Code: "JPY", Exponent: 0}
	totalsKWD = schema.Currency{Code: "KWD", Exponent: 3}
	totalsEUR = schema.Currency{Code: "EUR", Exponent: 2}
)

// line is shorthand for a taxable line.
func line(key string, unit, qty int64) schema.TotalsLine {
	return schema.TotalsLine{Key: key, UnitPrice: unit, Quantity: qty, Taxable: true}
}

func TestComputeTotals(t *testing.T) {
	cases := []struct {
		name string
		in   schema.TotalsInput
		want schema.Totals
		// text, when set, is FormatMinor(Total) / FormatMinor(Due) at the currency's exponent.
		totalText, dueText string
	}{
		{
			name: "24.99 at 10.75% exclusive",
			in:   schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 2499, 1)}, Tax: schema.TaxRate{BasisPoints: 1075}},
			// 2499 × 1075 / 10000 = 268.6425 → 269.
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2499, Tax: 269, Total: 2768}},
				Subtotal: 2499, DiscountByCode: map[string]int64{}, Tax: 269, Total: 2768, GiftCards: []schema.GiftCardUse{}, Due: 2768},
			totalText: "27.68",
		},
		{
			name: "tax is the sum of rounded lines, not a rounded sum",
			// Each line: 10 × 15% = 1.5 → 2; the unrounded sum 3.0 would give 3.
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 10, 1), line("b", 10, 1)}, Tax: schema.TaxRate{BasisPoints: 1500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 10, Tax: 2, Total: 12}, {Key: "b", Subtotal: 10, Tax: 2, Total: 12}},
				Subtotal: 20, DiscountByCode: map[string]int64{}, Tax: 4, Total: 24, GiftCards: []schema.GiftCardUse{}, Due: 24},
		},
		{
			name: "half rounds away from zero, under half rounds down",
			// 5 × 10% = 0.5 → 1; 4 × 10% = 0.4 → 0; 25 × 10% = 2.5 → 3 (not to even).
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 5, 1), line("b", 4, 1), line("c", 25, 1)}, Tax: schema.TaxRate{BasisPoints: 1000}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 5, Tax: 1, Total: 6}, {Key: "b", Subtotal: 4, Tax: 0, Total: 4}, {Key: "c", Subtotal: 25, Tax: 3, Total: 28}},
				Subtotal: 34, DiscountByCode: map[string]int64{}, Tax: 4, Total: 38, GiftCards: []schema.GiftCardUse{}, Due: 38},
		},
		{
			name: "mixed taxable lines",
			// 39.98 × 8.25% = 3.29835 → 3.30; 37.50 × 8.25% = 3.09375 → 3.09; the 5.00 line is exempt.
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 825}, Lines: []schema.TotalsLine{
				line("shirt", 1999, 2), {Key: "book", UnitPrice: 500, Quantity: 1, Taxable: false}, line("mug", 1250, 3)}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "shirt", Subtotal: 3998, Tax: 330, Total: 4328},
				{Key: "book", Subtotal: 500, Tax: 0, Total: 500},
				{Key: "mug", Subtotal: 3750, Tax: 309, Total: 4059}},
				Subtotal: 8248, DiscountByCode: map[string]int64{}, Tax: 639, Total: 8887, GiftCards: []schema.GiftCardUse{}, Due: 8887},
		},
		{
			name: "percent then fixed, allocated line by line",
			// 10% of 9.99 = 0.999 → 1.00, split 33.33 each: floors 33, the one unit left goes to
			// the first line (equal remainders, line order). Then 5.00 over the remaining
			// 2.99/3.00/3.00: 166.30, 166.85, 166.85 → 166, 167, 167.
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines: []schema.TotalsLine{line("a", 333, 1), line("b", 333, 1), line("c", 333, 1)},
				Discounts: []schema.Discount{
					{Code: "TENOFF", Kind: schema.DiscountPercent, Value: 1000},
					{Code: "FIVE", Kind: schema.DiscountFixed, Value: 500}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "a", Subtotal: 333, Discount: 34 + 166, Total: 133},
				{Key: "b", Subtotal: 333, Discount: 33 + 167, Total: 133},
				{Key: "c", Subtotal: 333, Discount: 33 + 167, Total: 133}},
				Subtotal: 999, Discount: 600, DiscountByCode: map[string]int64{"TENOFF": 100, "FIVE": 500},
				Total: 399, GiftCards: []schema.GiftCardUse{}, Due: 399},
		},
		{
			name: "allocation ties go to earlier lines",
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines:     []schema.TotalsLine{line("a", 100, 1), line("b", 100, 1), line("c", 100, 1)},
				Discounts: []schema.Discount{{Code: "TWO", Kind: schema.DiscountFixed, Value: 2}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "a", Subtotal: 100, Discount: 1, Total: 99},
				{Key: "b", Subtotal: 100, Discount: 1, Total: 99},
				{Key: "c", Subtotal: 100, Discount: 0, Total: 100}},
				Subtotal: 300, Discount: 2, DiscountByCode: map[string]int64{"TWO": 2}, Total: 298, GiftCards: []schema.GiftCardUse{}, Due: 298},
		},
		{
			name: "allocation by largest remainder, not by line order",
			// 10.00 over 10.00/20.00/40.00: exact shares 142.857, 285.714, 571.428 → floors 142,
			// 285, 571 (998); the 2 units left go to the largest remainders, .857 (a) and .714 (b).
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines:     []schema.TotalsLine{line("a", 1, 1000), line("b", 2, 1000), line("c", 4, 1000)},
				Discounts: []schema.Discount{{Code: "TEN", Kind: schema.DiscountFixed, Value: 1000}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "a", Subtotal: 1000, Discount: 143, Total: 857},
				{Key: "b", Subtotal: 2000, Discount: 286, Total: 1714},
				{Key: "c", Subtotal: 4000, Discount: 571, Total: 3429}},
				Subtotal: 7000, Discount: 1000, DiscountByCode: map[string]int64{"TEN": 1000}, Total: 6000, GiftCards: []schema.GiftCardUse{}, Due: 6000},
		},
		{
			name: "percent discounts compound",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 10000, 1)},
				Discounts: []schema.Discount{{Code: "A", Kind: schema.DiscountPercent, Value: 1000}, {Code: "B", Kind: schema.DiscountPercent, Value: 1000}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 10000, Discount: 1900, Total: 8100}},
				Subtotal: 10000, Discount: 1900, DiscountByCode: map[string]int64{"A": 1000, "B": 900}, Total: 8100, GiftCards: []schema.GiftCardUse{}, Due: 8100},
		},
		{
			name: "fixed discount larger than the subtotal is capped",
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000},
				Lines:     []schema.TotalsLine{line("a", 1000, 1), line("b", 250, 2)},
				Discounts: []schema.Discount{{Code: "BIG", Kind: schema.DiscountFixed, Value: 5000}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 700}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "a", Subtotal: 1000, Discount: 1000}, {Key: "b", Subtotal: 500, Discount: 500}},
				Subtotal: 1500, Discount: 1500, DiscountByCode: map[string]int64{"BIG": 1500}, Shipping: 700,
				Total: 700, GiftCards: []schema.GiftCardUse{}, Due: 700},
		},
		{
			name: "a discount after a full one gets nothing",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 1000, 1)},
				Discounts: []schema.Discount{{Code: "ALL", Kind: schema.DiscountPercent, Value: 10000}, {Code: "MORE", Kind: schema.DiscountFixed, Value: 100}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Discount: 1000}},
				Subtotal: 1000, Discount: 1000, DiscountByCode: map[string]int64{"ALL": 1000, "MORE": 0}, GiftCards: []schema.GiftCardUse{}},
		},
		{
			name: "line-restricted discounts",
			// SHOES: 20% of b only (6.00); unknown keys are ignored. THREE: 3.00 over a and c
			// in proportion 2000:1000. Tax 10% per line on what is left.
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000},
				Lines: []schema.TotalsLine{line("a", 2000, 1), line("b", 1500, 2), line("c", 1000, 1)},
				Discounts: []schema.Discount{
					{Code: "SHOES", Kind: schema.DiscountPercent, Value: 2000, Lines: []string{"b", "zzz"}},
					{Code: "THREE", Kind: schema.DiscountFixed, Value: 300, Lines: []string{"a", "c"}}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{
				{Key: "a", Subtotal: 2000, Discount: 200, Tax: 180, Total: 1980},
				{Key: "b", Subtotal: 3000, Discount: 600, Tax: 240, Total: 2640},
				{Key: "c", Subtotal: 1000, Discount: 100, Tax: 90, Total: 990}},
				Subtotal: 6000, Discount: 900, DiscountByCode: map[string]int64{"SHOES": 600, "THREE": 300},
				Tax: 510, Total: 5610, GiftCards: []schema.GiftCardUse{}, Due: 5610},
		},
		{
			name: "restricted discount matching no line",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 1000, 1)},
				Discounts: []schema.Discount{{Code: "X", Kind: schema.DiscountPercent, Value: 5000, Lines: []string{"nope"}}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Total: 1000}},
				Subtotal: 1000, DiscountByCode: map[string]int64{"X": 0}, Total: 1000, GiftCards: []schema.GiftCardUse{}, Due: 1000},
		},
		{
			name: "inclusive VAT: 12.00 including 20%",
			in:   schema.TotalsInput{Currency: totalsEUR, Lines: []schema.TotalsLine{line("a", 1200, 1)}, Tax: schema.TaxRate{BasisPoints: 2000, Inclusive: true}},
			want: schema.Totals{Currency: "EUR", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1200, Tax: 200, Total: 1200}},
				Subtotal: 1200, DiscountByCode: map[string]int64{}, Tax: 200, Total: 1200, GiftCards: []schema.GiftCardUse{}, Due: 1200},
		},
		{
			name: "inclusive VAT with a discount and taxed shipping",
			// Net 21.60 incl. 20%: 21.60 − 18.00 = 3.60. Shipping 4.99 incl.: 4.99 − 4.1583 (→ 4.16) = 0.83.
			in: schema.TotalsInput{Currency: totalsEUR, Tax: schema.TaxRate{BasisPoints: 2000, Inclusive: true, OnShipping: true},
				Lines:     []schema.TotalsLine{line("a", 1200, 2)},
				Discounts: []schema.Discount{{Code: "TEN", Kind: schema.DiscountPercent, Value: 1000}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 499}},
			want: schema.Totals{Currency: "EUR", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2400, Discount: 240, Tax: 360, Total: 2160}},
				Subtotal: 2400, Discount: 240, DiscountByCode: map[string]int64{"TEN": 240}, Shipping: 499, ShippingTax: 83,
				Tax: 443, Total: 2659, GiftCards: []schema.GiftCardUse{}, Due: 2659},
		},
		{
			name: "exclusive shipping tax",
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000, OnShipping: true},
				Lines: []schema.TotalsLine{line("a", 1000, 1)}, Shipping: &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Tax: 100, Total: 1100}},
				Subtotal: 1000, DiscountByCode: map[string]int64{}, Shipping: 500, ShippingTax: 50, Tax: 150, Total: 1650,
				GiftCards: []schema.GiftCardUse{}, Due: 1650},
		},
		{
			name: "shipping untaxed without OnShipping",
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000},
				Lines: []schema.TotalsLine{line("a", 1000, 1)}, Shipping: &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Tax: 100, Total: 1100}},
				Subtotal: 1000, DiscountByCode: map[string]int64{}, Shipping: 500, Tax: 100, Total: 1600,
				GiftCards: []schema.GiftCardUse{}, Due: 1600},
		},
		{
			name: "free shipping at the threshold",
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000, OnShipping: true},
				Lines: []schema.TotalsLine{line("a", 2500, 2)}, Shipping: &schema.ShippingMethod{Code: "std", Price: 500, FreeOver: 5000}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 5000, Tax: 500, Total: 5500}},
				Subtotal: 5000, DiscountByCode: map[string]int64{}, Tax: 500, Total: 5500, GiftCards: []schema.GiftCardUse{}, Due: 5500},
		},
		{
			name: "shipping charged one unit under the threshold",
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines: []schema.TotalsLine{line("a", 4999, 1)}, Shipping: &schema.ShippingMethod{Code: "std", Price: 500, FreeOver: 5000}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 4999, Total: 4999}},
				Subtotal: 4999, DiscountByCode: map[string]int64{}, Shipping: 500, Total: 5499, GiftCards: []schema.GiftCardUse{}, Due: 5499},
		},
		{
			name: "threshold compares the discounted subtotal before tax",
			// 52.00 − 10% = 46.80 < 50.00 even though 46.80 + tax is over it.
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000},
				Lines:     []schema.TotalsLine{line("a", 5200, 1)},
				Discounts: []schema.Discount{{Code: "TEN", Kind: schema.DiscountPercent, Value: 1000}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 500, FreeOver: 5000}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 5200, Discount: 520, Tax: 468, Total: 5148}},
				Subtotal: 5200, Discount: 520, DiscountByCode: map[string]int64{"TEN": 520}, Shipping: 500, Tax: 468, Total: 5648,
				GiftCards: []schema.GiftCardUse{}, Due: 5648},
		},
		{
			name: "free shipping by discount, no kind needed",
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1000, OnShipping: true},
				Lines:     []schema.TotalsLine{line("a", 1000, 1)},
				Discounts: []schema.Discount{{Code: "SHIPFREE", FreeShipping: true}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Tax: 100, Total: 1100}},
				Subtotal: 1000, DiscountByCode: map[string]int64{"SHIPFREE": 0}, Tax: 100, Total: 1100, GiftCards: []schema.GiftCardUse{}, Due: 1100},
		},
		{
			name: "free shipping with a percent discount",
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines:     []schema.TotalsLine{line("a", 1000, 1)},
				Discounts: []schema.Discount{{Code: "WELCOME", Kind: schema.DiscountPercent, Value: 1500, FreeShipping: true}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Discount: 150, Total: 850}},
				Subtotal: 1000, Discount: 150, DiscountByCode: map[string]int64{"WELCOME": 150}, Total: 850, GiftCards: []schema.GiftCardUse{}, Due: 850},
		},
		{
			name: "restricted free shipping needs one of its lines",
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines:     []schema.TotalsLine{line("a", 1000, 1)},
				Discounts: []schema.Discount{{Code: "BULKY", FreeShipping: true, Lines: []string{"sofa"}}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Total: 1000}},
				Subtotal: 1000, DiscountByCode: map[string]int64{"BULKY": 0}, Shipping: 500, Total: 1500, GiftCards: []schema.GiftCardUse{}, Due: 1500},
		},
		{
			name: "restricted free shipping with its line present",
			in: schema.TotalsInput{Currency: totalsUSD,
				Lines:     []schema.TotalsLine{line("a", 1000, 1), line("sofa", 0, 1)},
				Discounts: []schema.Discount{{Code: "BULKY", FreeShipping: true, Lines: []string{"sofa"}}},
				Shipping:  &schema.ShippingMethod{Code: "std", Price: 500}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 1000, Total: 1000}, {Key: "sofa"}},
				Subtotal: 1000, DiscountByCode: map[string]int64{"BULKY": 0}, Total: 1000, GiftCards: []schema.GiftCardUse{}, Due: 1000},
		},
		{
			name: "empty cart: nothing to ship",
			in:   schema.TotalsInput{Currency: totalsUSD, Shipping: &schema.ShippingMethod{Code: "std", Price: 500}, GiftCards: []schema.GiftCardBalance{{Code: "G", Balance: 100}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{}, DiscountByCode: map[string]int64{},
				GiftCards: []schema.GiftCardUse{{Code: "G", Amount: 0}}},
		},
		{
			name: "gift card covers part",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 2499, 1)}, Tax: schema.TaxRate{BasisPoints: 1075},
				GiftCards: []schema.GiftCardBalance{{Code: "G1", Balance: 1000}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2499, Tax: 269, Total: 2768}},
				Subtotal: 2499, DiscountByCode: map[string]int64{}, Tax: 269, Total: 2768, GiftCards: []schema.GiftCardUse{{Code: "G1", Amount: 1000}}, Due: 1768},
			dueText: "17.68",
		},
		{
			name: "gift card covers all",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 2499, 1)}, Tax: schema.TaxRate{BasisPoints: 1075},
				GiftCards: []schema.GiftCardBalance{{Code: "G1", Balance: 5000}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2499, Tax: 269, Total: 2768}},
				Subtotal: 2499, DiscountByCode: map[string]int64{}, Tax: 269, Total: 2768, GiftCards: []schema.GiftCardUse{{Code: "G1", Amount: 2768}}},
			dueText: "0.00",
		},
		{
			name: "two gift cards, a third unused",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 2499, 1)}, Tax: schema.TaxRate{BasisPoints: 1075},
				GiftCards: []schema.GiftCardBalance{{Code: "G1", Balance: 1000}, {Code: "G2", Balance: 5000}, {Code: "G3", Balance: 300}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2499, Tax: 269, Total: 2768}},
				Subtotal: 2499, DiscountByCode: map[string]int64{}, Tax: 269, Total: 2768,
				GiftCards: []schema.GiftCardUse{{Code: "G1", Amount: 1000}, {Code: "G2", Amount: 1768}, {Code: "G3", Amount: 0}}},
		},
		{
			name: "two gift cards, both partial",
			in: schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 2499, 1)}, Tax: schema.TaxRate{BasisPoints: 1075},
				GiftCards: []schema.GiftCardBalance{{Code: "G1", Balance: 0}, {Code: "G2", Balance: 1000}, {Code: "G3", Balance: 768}}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 2499, Tax: 269, Total: 2768}},
				Subtotal: 2499, DiscountByCode: map[string]int64{}, Tax: 269, Total: 2768,
				GiftCards: []schema.GiftCardUse{{Code: "G1", Amount: 0}, {Code: "G2", Amount: 1000}, {Code: "G3", Amount: 768}}, Due: 1000},
			dueText: "10.00",
		},
		{
			name: "JPY: ¥1,980 × 3 at 10%, shipping free over ¥5,000, gift card",
			in: schema.TotalsInput{Currency: totalsJPY, Tax: schema.TaxRate{BasisPoints: 1000, OnShipping: true},
				Lines:     []schema.TotalsLine{line("tea", 1980, 3)},
				Shipping:  &schema.ShippingMethod{Code: "yamato", Price: 800, FreeOver: 5000},
				GiftCards: []schema.GiftCardBalance{{Code: "G", Balance: 1000}}},
			want: schema.Totals{Currency: "JPY", Lines: []schema.LineTotals{{Key: "tea", Subtotal: 5940, Tax: 594, Total: 6534}},
				Subtotal: 5940, DiscountByCode: map[string]int64{}, Tax: 594, Total: 6534, GiftCards: []schema.GiftCardUse{{Code: "G", Amount: 1000}}, Due: 5534},
			totalText: "6534", dueText: "5534",
		},
		{
			name: "JPY inclusive 10% with a ¥100 coupon and shipping",
			// 5840 incl. 10%: 5840 × 10000 / 11000 = 5309.09 → 5309, tax 531. Shipping 800: 727.27 → 727, tax 73.
			in: schema.TotalsInput{Currency: totalsJPY, Tax: schema.TaxRate{BasisPoints: 1000, Inclusive: true, OnShipping: true},
				Lines:     []schema.TotalsLine{line("tea", 1980, 3)},
				Discounts: []schema.Discount{{Code: "HYAKU", Kind: schema.DiscountFixed, Value: 100}},
				Shipping:  &schema.ShippingMethod{Code: "yamato", Price: 800, FreeOver: 6000}},
			want: schema.Totals{Currency: "JPY", Lines: []schema.LineTotals{{Key: "tea", Subtotal: 5940, Discount: 100, Tax: 531, Total: 5840}},
				Subtotal: 5940, Discount: 100, DiscountByCode: map[string]int64{"HYAKU": 100}, Shipping: 800, ShippingTax: 73, Tax: 604, Total: 6640,
				GiftCards: []schema.GiftCardUse{}, Due: 6640},
			totalText: "6640",
		},
		{
			name: "KWD 12.345 at 5%",
			// 12345 × 500 / 10000 = 617.25 → 617.
			in: schema.TotalsInput{Currency: totalsKWD, Tax: schema.TaxRate{BasisPoints: 500}, Lines: []schema.TotalsLine{line("oud", 12345, 1)}},
			want: schema.Totals{Currency: "KWD", Lines: []schema.LineTotals{{Key: "oud", Subtotal: 12345, Tax: 617, Total: 12962}},
				Subtotal: 12345, DiscountByCode: map[string]int64{}, Tax: 617, Total: 12962, GiftCards: []schema.GiftCardUse{}, Due: 12962},
			totalText: "12.962",
		},
		{
			name: "KWD with taxed shipping and a discount",
			// 24.690 − 1.000 = 23.690; tax 1.1845 → 1.185. Shipping 1.500, tax 0.075.
			in: schema.TotalsInput{Currency: totalsKWD, Tax: schema.TaxRate{BasisPoints: 500, OnShipping: true},
				Lines:     []schema.TotalsLine{line("oud", 12345, 2)},
				Discounts: []schema.Discount{{Code: "ONE", Kind: schema.DiscountFixed, Value: 1000}},
				Shipping:  &schema.ShippingMethod{Code: "aramex", Price: 1500}},
			want: schema.Totals{Currency: "KWD", Lines: []schema.LineTotals{{Key: "oud", Subtotal: 24690, Discount: 1000, Tax: 1185, Total: 24875}},
				Subtotal: 24690, Discount: 1000, DiscountByCode: map[string]int64{"ONE": 1000}, Shipping: 1500, ShippingTax: 75, Tax: 1260, Total: 26450,
				GiftCards: []schema.GiftCardUse{}, Due: 26450},
			totalText: "26.450",
		},
		{
			name: "large amounts are exact",
			// 876543210987654 × 10.75% = 94228395181172.805 → …173; a float64 product is off here.
			in: schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1075}, Lines: []schema.TotalsLine{line("a", 876543210987654, 1)}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: 876543210987654, Tax: 94228395181173, Total: 970771606168827}},
				Subtotal: 876543210987654, DiscountByCode: map[string]int64{}, Tax: 94228395181173, Total: 970771606168827, GiftCards: []schema.GiftCardUse{}, Due: 970771606168827},
		},
		{
			name: "bounds: 10000 × 10^11 at 0%, total exactly MaxMinorAmount",
			in:   schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", schema.MaxMinorAmount/schema.MaxLineQuantity, schema.MaxLineQuantity)}},
			want: schema.Totals{Currency: "USD", Lines: []schema.LineTotals{{Key: "a", Subtotal: schema.MaxMinorAmount, Total: schema.MaxMinorAmount}},
				Subtotal: schema.MaxMinorAmount, DiscountByCode: map[string]int64{}, Total: schema.MaxMinorAmount, GiftCards: []schema.GiftCardUse{}, Due: schema.MaxMinorAmount},
		},
		{
			name: "bounds: 1000% tax and 4-digit exponent",
			in:   schema.TotalsInput{Currency: schema.Currency{Code: "CLF", Exponent: 4}, Tax: schema.TaxRate{BasisPoints: schema.MaxTaxBasisPoints}, Lines: []schema.TotalsLine{line("a", 3, 1)}},
			want: schema.Totals{Currency: "CLF", Lines: []schema.LineTotals{{Key: "a", Subtotal: 3, Tax: 30, Total: 33}},
				Subtotal: 3, DiscountByCode: map[string]int64{}, Tax: 30, Total: 33, GiftCards: []schema.GiftCardUse{}, Due: 33},
			totalText: "0.0033",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schema.ComputeTotals(tc.in)
			if err != nil {
				t.Fatalf("ComputeTotals: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ComputeTotals =\n%+v\nwant\n%+v", got, tc.want)
			}
			checkTotalsInvariants(t, tc.in, got)
			if ref, ok := referenceTotals(tc.in); !ok || !reflect.DeepEqual(got, ref) {
				t.Errorf("reference = %+v (valid %v), differs", ref, ok)
			}
			if tc.totalText != "" {
				if s := schema.FormatMinor(got.Total, tc.in.Currency.Exponent); s != tc.totalText {
					t.Errorf("total formats as %q, want %q", s, tc.totalText)
				}
			}
			if tc.dueText != "" {
				if s := schema.FormatMinor(got.Due, tc.in.Currency.Exponent); s != tc.dueText {
					t.Errorf("due formats as %q, want %q", s, tc.dueText)
				}
			}
		})
	}
}

func TestComputeTotalsDeterministic(t *testing.T) {
	in := schema.TotalsInput{Currency: totalsUSD, Tax: schema.TaxRate{BasisPoints: 1075, OnShipping: true},
		Lines: []schema.TotalsLine{line("a", 333, 7), line("b", 1999, 1), {Key: "c", UnitPrice: 12, Quantity: 13}, line("d", 1, 1)},
		Discounts: []schema.Discount{
			{Code: "P", Kind: schema.DiscountPercent, Value: 1337},
			{Code: "F", Kind: schema.DiscountFixed, Value: 777, Lines: []string{"a", "c", "d"}},
			{Code: "S", FreeShipping: true, Lines: []string{"x"}}},
		Shipping:  &schema.ShippingMethod{Code: "std", Price: 999, FreeOver: 100000},
		GiftCards: []schema.GiftCardBalance{{Code: "G1", Balance: 1234}, {Code: "G2", Balance: 99999}},
	}
	snapshot := cloneTotalsInput(in)
	first, err := schema.ComputeTotals(in)
	if err != nil {
		t.Fatal(err)
	}
	checkTotalsInvariants(t, in, first)
	for range 20 {
		again, err := schema.ComputeTotals(in)
		if err != nil || !reflect.DeepEqual(first, again) {
			t.Fatalf("recomputation differs: %+v, %v; first %+v", again, err, first)
		}
	}
	if !reflect.DeepEqual(in, snapshot) {
		t.Errorf("ComputeTotals modified its input")
	}
}

func cloneTotalsInput(in schema.TotalsInput) schema.TotalsInput {
	out := in
	out.Lines = slices.Clone(in.Lines)
	out.Discounts = slices.Clone(in.Discounts)
	for i := range out.Discounts {
		out.Discounts[i].Lines = slices.Clone(in.Discounts[i].Lines)
	}
	if in.Shipping != nil {
		s := *in.Shipping
		out.Shipping = &s
	}
	out.GiftCards = slices.Clone(in.GiftCards)
	return out
}

func TestComputeTotalsErrors(t *testing.T) {
	const max = schema.MaxMinorAmount
	ok := func(edit func(*schema.TotalsInput)) schema.TotalsInput {
		in := schema.TotalsInput{Currency: totalsUSD, Lines: []schema.TotalsLine{line("a", 1000, 1)},
			Tax: schema.TaxRate{BasisPoints: 1000}, Shipping: &schema.ShippingMethod{Code: "std", Price: 500}}
		edit(&in)
		return in
	}
	cases := []struct {
		name  string
		in    schema.TotalsInput
		field string
	}{
		{"exponent negative", ok(func(in *schema.TotalsInput) { in.Currency.Exponent = -1 }), "currency.exponent"},
		{"exponent 5", ok(func(in *schema.TotalsInput) { in.Currency.Exponent = 5 }), "currency.exponent"},
		{"currency code missing", ok(func(in *schema.TotalsInput) { in.Currency.Code = "" }), "currency.code"},
		{"currency code lowercase", ok(func(in *schema.TotalsInput) { in.Currency.Code = "usd" }), "currency.code"},
		{"negative unit price", ok(func(in *schema.TotalsInput) { in.Lines[0].UnitPrice = -1 }), "lines.unit_price"},
		{"unit price over max", ok(func(in *schema.TotalsInput) { in.Lines[0].UnitPrice = max + 1 }), "lines.unit_price"},
		{"quantity 0", ok(func(in *schema.TotalsInput) { in.Lines[0].Quantity = 0 }), "lines.quantity"},
		{"quantity negative", ok(func(in *schema.TotalsInput) { in.Lines[0].Quantity = -3 }), "lines.quantity"},
		{"quantity 10001", ok(func(in *schema.TotalsInput) { in.Lines[0].Quantity = 10001 }), "lines.quantity"},
		{"line subtotal overflow", ok(func(in *schema.TotalsInput) { in.Lines[0] = line("a", max, 2) }), "lines"},
		{"line subtotal one over", ok(func(in *schema.TotalsInput) { in.Lines[0] = line("a", max/10000+1, 10000) }), "lines"},
		{"cart subtotal overflow", ok(func(in *schema.TotalsInput) { in.Lines = []schema.TotalsLine{line("a", max, 1), line("b", 1, 1)} }), "lines"},
		{"unknown discount kind", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: "bogus", Value: 1}}
		}), "discounts.kind"},
		{"discount kind is case-sensitive", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: "Percent", Value: 1}}
		}), "discounts.kind"},
		{"empty kind without free shipping", ok(func(in *schema.TotalsInput) { in.Discounts = []schema.Discount{{Code: "X"}} }), "discounts.kind"},
		{"empty kind with a value", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", FreeShipping: true, Value: 5}}
		}), "discounts.kind"},
		{"percent over 100%", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountPercent, Value: 10001}}
		}), "discounts.value"},
		{"percent negative", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountPercent, Value: -1}}
		}), "discounts.value"},
		{"fixed negative", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountFixed, Value: -100}}
		}), "discounts.value"},
		{"fixed over max", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountFixed, Value: max + 1}}
		}), "discounts.value"},
		{"second discount invalid", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountFixed, Value: 1}, {Code: "Y", Kind: "free", Value: 1}}
		}), "discounts.kind"},
		{"duplicate discount code", ok(func(in *schema.TotalsInput) {
			in.Discounts = []schema.Discount{{Code: "X", Kind: schema.DiscountFixed, Value: 1}, {Code: "X", Kind: schema.DiscountFixed, Value: 1}}
		}), "discounts.code"},
		{"tax negative", ok(func(in *schema.TotalsInput) { in.Tax.BasisPoints = -1 }), "tax.basis_points"},
		{"tax over 1000%", ok(func(in *schema.TotalsInput) { in.Tax.BasisPoints = 100001 }), "tax.basis_points"},
		{"shipping negative", ok(func(in *schema.TotalsInput) { in.Shipping.Price = -1 }), "shipping.price"},
		{"shipping over max", ok(func(in *schema.TotalsInput) { in.Shipping.Price = max + 1 }), "shipping.price"},
		{"free-over negative", ok(func(in *schema.TotalsInput) { in.Shipping.FreeOver = -1 }), "shipping.free_over"},
		{"gift card negative", ok(func(in *schema.TotalsInput) {
			in.GiftCards = []schema.GiftCardBalance{{Code: "G", Balance: -1}}
		}), "gift_cards.balance"},
		{"gift card over max", ok(func(in *schema.TotalsInput) {
			in.GiftCards = []schema.GiftCardBalance{{Code: "G", Balance: max + 1}}
		}), "gift_cards.balance"},
		{"gift card twice", ok(func(in *schema.TotalsInput) {
			in.GiftCards = []schema.GiftCardBalance{{Code: "G", Balance: 1}, {Code: "G", Balance: 1}}
		}), "gift_cards.code"},
		{"total over max by tax", ok(func(in *schema.TotalsInput) { in.Lines[0] = line("a", max, 1); in.Shipping = nil }), "total"},
		{"total over max by shipping", ok(func(in *schema.TotalsInput) { in.Lines[0] = line("a", max, 1); in.Tax.BasisPoints = 0 }), "total"},
		{"total over max at 1000% tax", ok(func(in *schema.TotalsInput) {
			in.Lines[0] = line("a", max/11+1, 1)
			in.Tax.BasisPoints = schema.MaxTaxBasisPoints
			in.Shipping = nil
		}), "total"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schema.ComputeTotals(tc.in)
			var e *schema.Error
			if !errors.As(err, &e) || e.Code != schema.CodeInvalid {
				t.Fatalf("ComputeTotals error = %v, want a %s *Error", err, schema.CodeInvalid)
			}
			if e.Field != tc.field {
				t.Errorf("error field = %q, want %q (%v)", e.Field, tc.field, err)
			}
			if !reflect.DeepEqual(got, schema.Totals{}) {
				t.Errorf("ComputeTotals returned %+v with its error, want the zero Totals", got)
			}
			if _, ok := referenceTotals(tc.in); ok {
				t.Errorf("the reference accepts this input")
			}
		})
	}
}

// checkTotalsInvariants checks the properties every successful ComputeTotals result has.
func checkTotalsInvariants(t *testing.T, in schema.TotalsInput, got schema.Totals) {
	t.Helper()
	nonNeg := map[string]int64{"Subtotal": got.Subtotal, "Discount": got.Discount, "Shipping": got.Shipping,
		"ShippingTax": got.ShippingTax, "Tax": got.Tax, "Total": got.Total, "Due": got.Due}
	for name, v := range nonNeg {
		if v < 0 {
			t.Errorf("%s = %d < 0", name, v)
		}
	}
	if got.Total > schema.MaxMinorAmount {
		t.Errorf("Total = %d > MaxMinorAmount", got.Total)
	}
	if got.Currency != in.Currency.Code {
		t.Errorf("Currency = %q, want %q", got.Currency, in.Currency.Code)
	}
	if len(got.Lines) != len(in.Lines) {
		t.Fatalf("%d lines, want %d", len(got.Lines), len(in.Lines))
	}
	var subtotal, discount, tax int64
	for i, l := range got.Lines {
		src := in.Lines[i]
		if l.Key != src.Key || l.Subtotal != src.UnitPrice*src.Quantity {
			t.Errorf("line %d = %+v, for input %+v", i, l, src)
		}
		if l.Discount < 0 || l.Discount > l.Subtotal || l.Tax < 0 || l.Total < 0 {
			t.Errorf("line %d = %+v: an amount out of range", i, l)
		}
		if !src.Taxable && l.Tax != 0 {
			t.Errorf("line %d is not taxable but has tax %d", i, l.Tax)
		}
		want := l.Subtotal - l.Discount
		if !in.Tax.Inclusive {
			want += l.Tax
		} else if l.Tax > want {
			t.Errorf("line %d: included tax %d exceeds its price %d", i, l.Tax, want)
		}
		if l.Total != want {
			t.Errorf("line %d: Total = %d, want %d", i, l.Total, want)
		}
		subtotal += l.Subtotal
		discount += l.Discount
		tax += l.Tax
	}
	if got.Subtotal != subtotal {
		t.Errorf("Subtotal = %d, sum of lines %d", got.Subtotal, subtotal)
	}
	if got.Discount != discount {
		t.Errorf("Discount = %d, sum of lines %d", got.Discount, discount)
	}
	if got.Discount > got.Subtotal {
		t.Errorf("Discount %d exceeds Subtotal %d", got.Discount, got.Subtotal)
	}
	var byCode int64
	for _, v := range got.DiscountByCode {
		if v < 0 {
			t.Errorf("DiscountByCode has a negative amount: %v", got.DiscountByCode)
		}
		byCode += v
	}
	if byCode != got.Discount || len(got.DiscountByCode) != len(in.Discounts) {
		t.Errorf("DiscountByCode = %v (sum %d), Discount %d, %d discounts", got.DiscountByCode, byCode, got.Discount, len(in.Discounts))
	}
	for _, d := range in.Discounts {
		if _, ok := got.DiscountByCode[d.Code]; !ok {
			t.Errorf("DiscountByCode lacks %q", d.Code)
		}
	}
	if got.Tax != tax+got.ShippingTax {
		t.Errorf("Tax = %d, lines %d + shipping %d", got.Tax, tax, got.ShippingTax)
	}
	if in.Shipping == nil && got.Shipping != 0 || in.Shipping != nil && got.Shipping != 0 && got.Shipping != in.Shipping.Price {
		t.Errorf("Shipping = %d for method %+v", got.Shipping, in.Shipping)
	}
	if !in.Tax.OnShipping && got.ShippingTax != 0 || got.Shipping == 0 && got.ShippingTax != 0 {
		t.Errorf("ShippingTax = %d on shipping %d (OnShipping %v)", got.ShippingTax, got.Shipping, in.Tax.OnShipping)
	}
	total := got.Subtotal - got.Discount + got.Shipping
	if !in.Tax.Inclusive {
		total += got.Tax
	}
	if got.Total != total {
		t.Errorf("Total = %d, want %d", got.Total, total)
	}
	if len(got.GiftCards) != len(in.GiftCards) {
		t.Fatalf("%d gift card uses, want %d", len(got.GiftCards), len(in.GiftCards))
	}
	var used int64
	for i, u := range got.GiftCards {
		g := in.GiftCards[i]
		if u.Code != g.Code || u.Amount < 0 || u.Amount > g.Balance {
			t.Errorf("gift card use %d = %+v for card %+v", i, u, g)
		}
		used += u.Amount
	}
	if got.Due != got.Total-used || got.Due < 0 {
		t.Errorf("Due = %d, Total %d − gift cards %d", got.Due, got.Total, used)
	}
	if got.Due > 0 {
		for i, u := range got.GiftCards {
			if u.Amount != in.GiftCards[i].Balance {
				t.Errorf("Due %d > 0 but gift card %d is not exhausted: %+v", got.Due, i, u)
			}
		}
	}
}

// referenceTotals is an independent model of ComputeTotals in math/big, written for clarity over
// speed: it validates with unbounded integers and computes each rule directly. ok is false when
// the input is invalid.
func referenceTotals(in schema.TotalsInput) (schema.Totals, bool) {
	const max = schema.MaxMinorAmount
	inRange := func(v, lo, hi int64) bool { return v >= lo && v <= hi }
	if !inRange(int64(in.Currency.Exponent), 0, 4) || len(in.Currency.Code) != 3 {
		return schema.Totals{}, false
	}
	for _, c := range in.Currency.Code {
		if c < 'A' || c > 'Z' {
			return schema.Totals{}, false
		}
	}
	sum := new(big.Int)
	for _, l := range in.Lines {
		if !inRange(l.UnitPrice, 0, max) || !inRange(l.Quantity, 1, 10000) {
			return schema.Totals{}, false
		}
		s := new(big.Int).Mul(big.NewInt(l.UnitPrice), big.NewInt(l.Quantity))
		if s.Cmp(big.NewInt(max)) > 0 {
			return schema.Totals{}, false
		}
		sum.Add(sum, s)
	}
	if sum.Cmp(big.NewInt(max)) > 0 {
		return schema.Totals{}, false
	}
	seen := map[string]bool{}
	for _, d := range in.Discounts {
		switch {
		case d.Kind == "percent" && inRange(d.Value, 0, 10000):
		case d.Kind == "fixed" && inRange(d.Value, 0, max):
		case d.Kind == "" && d.FreeShipping && d.Value == 0:
		default:
			return schema.Totals{}, false
		}
		if seen[d.Code] {
			return schema.Totals{}, false
		}
		seen[d.Code] = true
	}
	if !inRange(in.Tax.BasisPoints, 0, 100000) {
		return schema.Totals{}, false
	}
	if s := in.Shipping; s != nil && (!inRange(s.Price, 0, max) || !inRange(s.FreeOver, 0, max)) {
		return schema.Totals{}, false
	}
	seen = map[string]bool{}
	for _, g := range in.GiftCards {
		if !inRange(g.Balance, 0, max) || seen[g.Code] {
			return schema.Totals{}, false
		}
		seen[g.Code] = true
	}

	// roundDiv is round_half_away_from_zero(n / d) for n ≥ 0, d > 0: floor((2n + d) / 2d).
	roundDiv := func(n, d *big.Int) *big.Int {
		num := new(big.Int).Add(new(big.Int).Lsh(n, 1), d)
		return num.Div(num, new(big.Int).Lsh(d, 1))
	}
	bp := big.NewInt(in.Tax.BasisPoints)
	taxOf := func(amount int64) int64 {
		a := big.NewInt(amount)
		if in.Tax.Inclusive {
			net := roundDiv(new(big.Int).Mul(a, big.NewInt(10000)), new(big.Int).Add(big.NewInt(10000), bp))
			return amount - net.Int64()
		}
		return roundDiv(new(big.Int).Mul(a, bp), big.NewInt(10000)).Int64()
	}

	t := schema.Totals{Currency: in.Currency.Code, Lines: []schema.LineTotals{}, DiscountByCode: map[string]int64{}, GiftCards: []schema.GiftCardUse{}}
	for _, l := range in.Lines {
		t.Lines = append(t.Lines, schema.LineTotals{Key: l.Key, Subtotal: l.UnitPrice * l.Quantity})
		t.Subtotal += l.UnitPrice * l.Quantity
	}
	free := false
	for _, d := range in.Discounts {
		var idx []int
		for i, l := range in.Lines {
			if len(d.Lines) == 0 || slices.Contains(d.Lines, l.Key) {
				idx = append(idx, i)
			}
		}
		if d.FreeShipping && (len(d.Lines) == 0 || len(idx) > 0) {
			free = true
		}
		base := new(big.Int)
		for _, i := range idx {
			base.Add(base, big.NewInt(t.Lines[i].Subtotal-t.Lines[i].Discount))
		}
		amount := new(big.Int)
		switch d.Kind {
		case "percent":
			amount = roundDiv(new(big.Int).Mul(base, big.NewInt(d.Value)), big.NewInt(10000))
		case "fixed":
			amount.SetInt64(d.Value)
			if amount.Cmp(base) > 0 {
				amount.Set(base)
			}
		}
		// Largest remainder: exact share amount × r / base as quotient and remainder.
		type part struct {
			i         int
			q, r      *big.Int
			remaining int64
		}
		var parts []part
		given := new(big.Int)
		for _, i := range idx {
			if base.Sign() == 0 {
				break
			}
			r := t.Lines[i].Subtotal - t.Lines[i].Discount
			q, m := new(big.Int).QuoRem(new(big.Int).Mul(amount, big.NewInt(r)), base, new(big.Int))
			parts = append(parts, part{i: i, q: q, r: m, remaining: r})
			given.Add(given, q)
		}
		sort.SliceStable(parts, func(a, b int) bool { return parts[a].r.Cmp(parts[b].r) > 0 })
		left := new(big.Int).Sub(amount, given).Int64()
		for k := range parts {
			share := parts[k].q.Int64()
			if int64(k) < left {
				share++
			}
			t.Lines[parts[k].i].Discount += share
		}
		t.DiscountByCode[d.Code] = amount.Int64()
		t.Discount += amount.Int64()
	}
	for i, l := range in.Lines {
		lt := &t.Lines[i]
		if l.Taxable {
			lt.Tax = taxOf(lt.Subtotal - lt.Discount)
		}
		lt.Total = lt.Subtotal - lt.Discount
		if !in.Tax.Inclusive {
			lt.Total += lt.Tax
		}
		t.Tax += lt.Tax
	}
	if s := in.Shipping; s != nil && len(in.Lines) > 0 && !free && (s.FreeOver == 0 || t.Subtotal-t.Discount < s.FreeOver) {
		t.Shipping = s.Price
	}
	if in.Tax.OnShipping {
		t.ShippingTax = taxOf(t.Shipping)
	}
	t.Tax += t.ShippingTax
	total := new(big.Int).SetInt64(t.Subtotal - t.Discount + t.Shipping)
	if !in.Tax.Inclusive {
		total.Add(total, big.NewInt(t.Tax))
	}
	if total.Cmp(big.NewInt(max)) > 0 {
		return schema.Totals{}, false
	}
	t.Total = total.Int64()
	t.Due = t.Total
	for _, g := range in.GiftCards {
		use := min(g.Balance, t.Due)
		t.Due -= use
		t.GiftCards = append(t.GiftCards, schema.GiftCardUse{Code: g.Code, Amount: use})
	}
	return t, true
}

// fuzzReader turns fuzz bytes into values; past the end it reads zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) uint(n int) uint64 {
	var v uint64
	for range n {
		v = v<<8 | uint64(r.byte())
	}
	return v
}

func (r *fuzzReader) bool() bool { return r.byte()&1 == 1 }

// amount is mostly a plausible minor-unit amount, sometimes a boundary or an invalid one.
func (r *fuzzReader) amount() int64 {
	switch r.byte() % 10 {
	case 0:
		return 0
	case 1, 2, 3:
		return int64(r.uint(1))
	case 4, 5:
		return int64(r.uint(2))
	case 6:
		return int64(r.uint(3))
	case 7:
		return int64(r.uint(6)) // up to 2.8 × 10^14
	case 8:
		return int64(r.uint(7) >> 6) // up to 1.1 × 10^15: around the bound
	default:
		edges := []int64{-1, 1, schema.MaxMinorAmount, schema.MaxMinorAmount + 1, schema.MaxMinorAmount / 10000,
			schema.MaxMinorAmount/10000 + 1, schema.MaxMinorAmount / 11, -schema.MaxMinorAmount, 1 << 62, -1 << 63}
		return edges[int(r.byte())%len(edges)]
	}
}

func totalsInputFromBytes(b []byte) schema.TotalsInput {
	r := &fuzzReader{b: b}
	keys := []string{"a", "b", "c", "d", "e", "f"}
	// Invalid values are rare enough that most inputs get computed.
	codes := []string{"USD", "JPY", "KWD", "EUR", "CLF", "BHD", "GBP", "CHF", "SEK", "NOK", "DKK", "ISK", "usd", ""}
	in := schema.TotalsInput{Currency: schema.Currency{Code: codes[int(r.byte())%len(codes)]}}
	switch e := r.byte(); {
	case e < 240:
		in.Currency.Exponent = int(e % 5)
	case e < 248:
		in.Currency.Exponent = -1
	default:
		in.Currency.Exponent = 5
	}
	for range int(r.byte() % 7) {
		l := schema.TotalsLine{Key: keys[int(r.byte())%len(keys)], UnitPrice: r.amount(), Taxable: r.bool()}
		switch q := r.byte(); {
		case q < 220:
			l.Quantity = int64(q%5) + 1
		case q < 250:
			l.Quantity = int64(r.uint(2)%10000) + 1
		default:
			l.Quantity = []int64{0, -1, 10000, 10001, 9999, 1 << 40}[q%6]
		}
		in.Lines = append(in.Lines, l)
	}
	for i := range int(r.byte() % 5) {
		d := schema.Discount{Code: "D" + strconv.Itoa(i)}
		if r.byte() == 255 {
			d.Code = "D0" // sometimes a duplicate
		}
		switch k := r.byte(); {
		case k < 110:
			d.Kind = schema.DiscountPercent
			if r.byte() < 250 {
				d.Value = int64(r.uint(2) % 10001)
			} else {
				d.Value = r.amount()
			}
		case k < 220:
			d.Kind = schema.DiscountFixed
			d.Value = r.amount()
		case k < 250:
			d.FreeShipping = true
		default:
			d.Kind = "bogus"
		}
		if m := r.byte(); m&0xc0 != 0 {
			for j, k := range keys {
				if m&(1<<j) != 0 {
					d.Lines = append(d.Lines, k)
				}
			}
			if m&0x3f == 0 {
				d.Lines = []string{"zzz"}
			}
		}
		d.FreeShipping = d.FreeShipping || r.byte() > 230
		in.Discounts = append(in.Discounts, d)
	}
	switch b := r.byte(); {
	case b < 200:
		in.Tax.BasisPoints = int64(r.uint(2) % 3001)
	case b < 250:
		in.Tax.BasisPoints = int64(r.uint(3) % 100002)
	default:
		in.Tax.BasisPoints = []int64{-1, 0, 10000, 100000, 100001, 1 << 62}[b%6]
	}
	in.Tax.Inclusive, in.Tax.OnShipping = r.bool(), r.bool()
	if r.byte()%4 != 0 {
		s := &schema.ShippingMethod{Code: "std", Price: r.amount()}
		if r.bool() {
			s.FreeOver = r.amount()
		}
		in.Shipping = s
	}
	for i := range int(r.byte() % 4) {
		g := schema.GiftCardBalance{Code: "G" + strconv.Itoa(i), Balance: r.amount()}
		if r.byte() == 255 {
			g.Code = "G0"
		}
		in.GiftCards = append(in.GiftCards, g)
	}
	return in
}

func FuzzComputeTotals(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3, 3, 0, 1, 0xff, 2, 0, 1, 1, 1, 0, 2, 1, 7, 5, 100, 0x13, 0x88, 0xc3, 0, 1, 1, 1, 10, 50, 2, 0, 0})
	f.Add([]byte("vitrine totals: a cart with lines, discounts, tax, shipping and gift cards"))
	f.Add([]byte{1, 1, 6, 0, 9, 2, 1, 0, 1, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 4, 0, 120, 0x27, 0x10, 0, 0, 200, 0x03, 0xe8, 1, 1, 1, 1, 2, 5, 3, 1, 200, 0, 3, 5, 0x0f, 1, 9, 2})
	for i := range 8 {
		seed := make([]byte, 64)
		for j := range seed {
			seed[j] = byte(i*37 + j*101 + j*j)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := totalsInputFromBytes(b)
		snapshot := cloneTotalsInput(in)
		got, err := schema.ComputeTotals(in)
		ref, valid := referenceTotals(in)
		if err != nil {
			var e *schema.Error
			if !errors.As(err, &e) || e.Code != schema.CodeInvalid {
				t.Fatalf("error %v is not a %s *Error", err, schema.CodeInvalid)
			}
			if valid {
				t.Fatalf("ComputeTotals(%+v) = %v, but the reference accepts it: %+v", in, err, ref)
			}
			return
		}
		if !valid {
			t.Fatalf("ComputeTotals(%+v) succeeded, but the reference rejects the input", in)
		}
		checkTotalsInvariants(t, in, got)
		if !reflect.DeepEqual(got, ref) {
			t.Fatalf("ComputeTotals(%+v) =\n%+v\nreference\n%+v", in, got, ref)
		}
		if again, err := schema.ComputeTotals(in); err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("recomputation differs")
		}
		if !reflect.DeepEqual(in, snapshot) {
			t.Fatalf("ComputeTotals modified its input")
		}
	})
}
