package schema

import (
	"math"
	"math/bits"
	"slices"
)

// Bounds of ComputeTotals input.
const (
	MaxLineQuantity     = 10_000
	MaxTaxBasisPoints   = 100_000 // 1000%
	MaxCurrencyExponent = 4
	// basisPointsWhole is 100% in basis points of a percent.
	basisPointsWhole = 10_000
)

// TaxRate is a tax rate in basis points of a percent: 1075 = 10.75%.
type TaxRate struct {
	BasisPoints int64 // 0..100000 (0..1000%)
	// Inclusive means prices already include the tax (VAT style): tax is extracted, not added.
	Inclusive bool
	// OnShipping applies the rate to shipping too.
	OnShipping bool
}

// DiscountKind says how a Discount's Value is read.
type DiscountKind string

// The discount kinds.
const (
	DiscountPercent DiscountKind = "percent" // Value in basis points of a percent, 1000 = 10%
	DiscountFixed   DiscountKind = "fixed"   // Value in minor units
)

// Discount is one discount applied to a cart (a coupon, an automatic promotion).
type Discount struct {
	Code  string
	Kind  DiscountKind
	Value int64
	// Lines restricts the discount to lines whose Key is listed; empty applies to all lines.
	Lines []string
	// FreeShipping makes shipping free (Value may then be 0, and Kind empty).
	FreeShipping bool
}

// ShippingMethod is the shipping method chosen for a cart.
type ShippingMethod struct {
	Code  string
	Name  string
	Price int64 // minor units
	// FreeOver makes shipping free when the discounted merchandise subtotal is at least this (0: never).
	FreeOver int64
}

// TotalsLine is one cart line as the totals engine sees it.
type TotalsLine struct {
	Key       string // caller's line id
	UnitPrice int64  // minor units, after any sale price
	Quantity  int64  // 1..10000
	Taxable   bool
}

// GiftCardBalance is a gift card offered for payment, with its current balance.
type GiftCardBalance struct {
	Code    string
	Balance int64
}

// TotalsInput is everything ComputeTotals needs.
type TotalsInput struct {
	Currency  Currency // only Exponent and Code are used
	Lines     []TotalsLine
	Discounts []Discount // applied in order; the total discount never exceeds the subtotal
	Tax       TaxRate
	Shipping  *ShippingMethod   // nil: no shipping yet
	GiftCards []GiftCardBalance // applied in order after tax, each up to what remains due
}

// LineTotals is the money of one line.
type LineTotals struct {
	Key      string
	Subtotal int64 // UnitPrice × Quantity
	Discount int64 // this line's share of all discounts
	Tax      int64 // rounded per line
	Total    int64 // Subtotal − Discount (+ Tax when exclusive)
}

// GiftCardUse is the amount taken from one gift card.
type GiftCardUse struct {
	Code   string
	Amount int64
}

// Totals is the money of a cart or an order.
type Totals struct {
	Currency       string
	Lines          []LineTotals
	Subtotal       int64
	Discount       int64
	DiscountByCode map[string]int64
	Shipping       int64 // after free-shipping rules
	ShippingTax    int64
	Tax            int64 // lines' tax + shipping tax
	Total          int64 // what the order costs
	GiftCards      []GiftCardUse
	Due            int64 // Total − gift cards: what the payment provider charges
}

// ComputeTotals computes the money of a cart or an order at the origin, in integer minor units.
// It is a pure function of its input: the checkout revalidates a cart by recomputing it and
// comparing, so the same input always gives the same output, bit for bit. No float is
// involved anywhere; products such as amount × basis points are computed in 128 bits
// (math/bits), so every intermediate result is exact.
//
// # Rules
//
//  1. Lines. A line's subtotal is UnitPrice × Quantity. UnitPrice is in [0, MaxMinorAmount],
//     Quantity in [1, MaxLineQuantity], and each line subtotal and the cart subtotal must not
//     exceed MaxMinorAmount. Output lines are positional: Totals.Lines[i] belongs to
//     TotalsInput.Lines[i] (keys are copied, not required to be unique).
//
//  2. Discounts, applied in input order, each to what the earlier ones left. A discount's
//     eligible lines are all lines when Discount.Lines is empty, else the lines whose Key is
//     listed (keys not in the cart are ignored). With R the eligible lines' remaining subtotal
//     (subtotal minus earlier discounts):
//     - percent: amount = round_half_away_from_zero(R × Value / 10000), Value in [0, 10000];
//     - fixed: amount = min(Value, R), Value in [0, MaxMinorAmount].
//     So no discount ever exceeds what remains, and the total discount never exceeds the
//     subtotal. The amount is allocated across the eligible lines in proportion to their
//     remaining subtotals by the largest-remainder method: each line gets
//     floor(amount × remaining / R), and the units left over go one each to the lines with the
//     largest remainders of that division, ties to the earlier line. The allocations sum exactly
//     to the amount and no line's remaining subtotal goes below zero. Percent discounts
//     therefore compound: 10% then 10% is 19% off.
//     DiscountByCode holds one entry per discount (codes must be unique; an entry may be 0).
//     A discount with FreeShipping makes shipping free: when it is unrestricted, or when at
//     least one of its listed lines is in the cart. A free-shipping-only discount may leave Kind
//     empty; Value must then be 0.
//
//  3. Tax, per line, rounded per line; totals are sums of rounded lines, never a rounding of a
//     sum. With net = Subtotal − Discount and bp = Tax.BasisPoints (1075 = 10.75%):
//     - exclusive: tax = round_half_away_from_zero(net × bp / 10000), added to the line total;
//     - inclusive (VAT): tax = net − round_half_away_from_zero(net × 10000 / (10000 + bp)), the
//     tax contained in the price; the line total is net.
//     Lines with Taxable false carry no tax. Shipping is taxed the same way when
//     Tax.OnShipping is set (ShippingTax); Tax = sum of line taxes + ShippingTax.
//
//  4. Shipping is ShippingMethod.Price, or 0 when a free-shipping discount applies, when the
//     discounted merchandise subtotal (Subtotal − Discount, before exclusive tax; as shown, tax
//     included, for inclusive prices) is at least FreeOver > 0, or when the cart has no lines
//     (nothing to ship). A nil ShippingMethod is 0.
//
//  5. Total = Subtotal − Discount + Shipping, + Tax when exclusive. It must not exceed
//     MaxMinorAmount.
//
//  6. Gift cards, after tax, in input order: each is used for min(Balance, what remains due).
//     Totals.GiftCards has one entry per input card, in order (Amount may be 0). Due = Total −
//     sum of uses, never negative. Card codes must be unique: a card listed twice would be
//     spent twice.
//
// The currency's exponent does not enter the arithmetic (amounts are already minor units); it is
// validated (0..MaxCurrencyExponent) because the totals are displayed with it (FormatMinor).
// Every amount in Totals is ≥ 0.
//
// It returns a CodeInvalid *Error for impossible input (negative prices, quantity out of range,
// unknown discount kind, percent over 100%, currency exponent out of 0..4, a currency code that is
// not three uppercase letters, duplicate discount or gift card codes, overflow beyond
// MaxMinorAmount), and then the zero Totals. Error.Field names the offending input field
// ("lines.quantity", "discounts.kind", "total"…); Message gives the index. On success Lines,
// DiscountByCode and GiftCards are never nil.
func ComputeTotals(in TotalsInput) (Totals, error) {
	subtotals, err := validateTotalsInput(in)
	if err != nil {
		return Totals{}, err
	}
	t := Totals{
		Currency:       in.Currency.Code,
		Lines:          make([]LineTotals, len(in.Lines)),
		DiscountByCode: make(map[string]int64, len(in.Discounts)),
		GiftCards:      make([]GiftCardUse, 0, len(in.GiftCards)),
	}
	remaining := slices.Clone(subtotals)
	for i, l := range in.Lines {
		t.Lines[i] = LineTotals{Key: l.Key, Subtotal: subtotals[i]}
		t.Subtotal += subtotals[i] // bounded by validation
	}

	// Discounts.
	freeShipping := false
	eligible := make([]int, 0, len(in.Lines))
	weights := make([]int64, 0, len(in.Lines))
	for _, d := range in.Discounts {
		eligible, weights = eligible[:0], weights[:0]
		var keys map[string]bool
		if len(d.Lines) > 0 {
			keys = make(map[string]bool, len(d.Lines))
			for _, k := range d.Lines {
				keys[k] = true
			}
		}
		var base int64
		for i, l := range in.Lines {
			if keys == nil || keys[l.Key] {
				eligible = append(eligible, i)
				weights = append(weights, remaining[i])
				base += remaining[i]
			}
		}
		if d.FreeShipping && (keys == nil || len(eligible) > 0) {
			freeShipping = true
		}
		var amount int64
		switch d.Kind {
		case DiscountPercent:
			amount = mulDivRound(base, d.Value, basisPointsWhole)
		case DiscountFixed:
			amount = min(d.Value, base)
		}
		for j, a := range allocate(amount, weights) {
			i := eligible[j]
			remaining[i] -= a
			t.Lines[i].Discount += a
		}
		t.DiscountByCode[d.Code] = amount
		t.Discount += amount
	}

	// Line tax and totals.
	for i, l := range in.Lines {
		lt := &t.Lines[i]
		net := lt.Subtotal - lt.Discount
		if l.Taxable {
			lt.Tax = taxOf(net, in.Tax)
		}
		lt.Total = net
		if !in.Tax.Inclusive {
			lt.Total += lt.Tax
		}
		t.Tax += lt.Tax
	}

	// Shipping.
	merchandise := t.Subtotal - t.Discount
	if s := in.Shipping; s != nil && len(in.Lines) > 0 && !freeShipping && !(s.FreeOver > 0 && merchandise >= s.FreeOver) {
		t.Shipping = s.Price
	}
	if in.Tax.OnShipping {
		t.ShippingTax = taxOf(t.Shipping, in.Tax)
	}
	t.Tax += t.ShippingTax

	// Total. Each term is at most 11 × MaxMinorAmount (a 1000% tax), so the sum cannot overflow
	// int64 before the check.
	t.Total = merchandise + t.Shipping
	if !in.Tax.Inclusive {
		t.Total += t.Tax
	}
	if t.Total > MaxMinorAmount {
		return Totals{}, Invalid("total", "the order total exceeds %d minor units", int64(MaxMinorAmount))
	}

	// Gift cards.
	t.Due = t.Total
	for _, g := range in.GiftCards {
		use := min(g.Balance, t.Due)
		t.GiftCards = append(t.GiftCards, GiftCardUse{Code: g.Code, Amount: use})
		t.Due -= use
	}
	return t, nil
}

// validateTotalsInput checks in and returns the line subtotals.
func validateTotalsInput(in TotalsInput) ([]int64, error) {
	if in.Currency.Exponent < 0 || in.Currency.Exponent > MaxCurrencyExponent {
		return nil, Invalid("currency.exponent", "currency exponent must be between 0 and %d", MaxCurrencyExponent)
	}
	if err := ValidateCurrencyCode(in.Currency.Code); err != nil {
		return nil, Invalid("currency.code", "currency code must be three uppercase letters")
	}
	subtotals := make([]int64, len(in.Lines))
	var sum int64
	for i, l := range in.Lines {
		if l.UnitPrice < 0 || l.UnitPrice > MaxMinorAmount {
			return nil, Invalid("lines.unit_price", "lines[%d].unit_price must be between 0 and %d minor units", i, int64(MaxMinorAmount))
		}
		if l.Quantity < 1 || l.Quantity > MaxLineQuantity {
			return nil, Invalid("lines.quantity", "lines[%d].quantity must be between 1 and %d", i, MaxLineQuantity)
		}
		// Both factors are bounded, so the product cannot overflow before the comparison.
		if l.UnitPrice > MaxMinorAmount/l.Quantity {
			return nil, Invalid("lines", "lines[%d] subtotal exceeds %d minor units", i, int64(MaxMinorAmount))
		}
		subtotals[i] = l.UnitPrice * l.Quantity
		sum += subtotals[i]
		if sum > MaxMinorAmount {
			return nil, Invalid("lines", "the cart subtotal exceeds %d minor units", int64(MaxMinorAmount))
		}
	}
	codes := make(map[string]bool, len(in.Discounts))
	for i, d := range in.Discounts {
		switch d.Kind {
		case DiscountPercent:
			if d.Value < 0 || d.Value > basisPointsWhole {
				return nil, Invalid("discounts.value", "discounts[%d]: a percent discount must be between 0 and %d basis points", i, basisPointsWhole)
			}
		case DiscountFixed:
			if d.Value < 0 || d.Value > MaxMinorAmount {
				return nil, Invalid("discounts.value", "discounts[%d]: a fixed discount must be between 0 and %d minor units", i, int64(MaxMinorAmount))
			}
		case "":
			if !d.FreeShipping || d.Value != 0 {
				return nil, Invalid("discounts.kind", "discounts[%d]: kind is required unless the discount is free shipping only", i)
			}
		default:
			return nil, Invalid("discounts.kind", "discounts[%d]: unknown discount kind %q", i, d.Kind)
		}
		if codes[d.Code] {
			return nil, Invalid("discounts.code", "discounts[%d]: code %q is applied twice", i, d.Code)
		}
		codes[d.Code] = true
	}
	if in.Tax.BasisPoints < 0 || in.Tax.BasisPoints > MaxTaxBasisPoints {
		return nil, Invalid("tax.basis_points", "tax rate must be between 0 and %d basis points", MaxTaxBasisPoints)
	}
	if s := in.Shipping; s != nil {
		if s.Price < 0 || s.Price > MaxMinorAmount {
			return nil, Invalid("shipping.price", "shipping price must be between 0 and %d minor units", int64(MaxMinorAmount))
		}
		if s.FreeOver < 0 || s.FreeOver > MaxMinorAmount {
			return nil, Invalid("shipping.free_over", "shipping free_over must be between 0 and %d minor units", int64(MaxMinorAmount))
		}
	}
	cards := make(map[string]bool, len(in.GiftCards))
	for i, g := range in.GiftCards {
		if g.Balance < 0 || g.Balance > MaxMinorAmount {
			return nil, Invalid("gift_cards.balance", "gift_cards[%d].balance must be between 0 and %d minor units", i, int64(MaxMinorAmount))
		}
		if cards[g.Code] {
			return nil, Invalid("gift_cards.code", "gift_cards[%d]: card %q is applied twice", i, g.Code)
		}
		cards[g.Code] = true
	}
	return subtotals, nil
}

// taxOf returns the tax on amount (≥ 0, ≤ MaxMinorAmount) at rate, rounded half away from zero.
func taxOf(amount int64, rate TaxRate) int64 {
	if rate.Inclusive {
		return amount - mulDivRound(amount, basisPointsWhole, basisPointsWhole+rate.BasisPoints)
	}
	return mulDivRound(amount, rate.BasisPoints, basisPointsWhole)
}

// mulDivRound returns a × b / c rounded half away from zero (half up: the operands are
// non-negative), exactly, for 0 ≤ a, b and 0 < c. Callers keep the quotient within int64: here
// a ≤ MaxMinorAmount and b / c ≤ 10.
func mulDivRound(a, b, c int64) int64 {
	q, r := mulDiv(a, b, c)
	// r < c, so 2r ≥ c ⇔ r ≥ c − r, without overflow.
	if uint64(r) >= uint64(c)-uint64(r) {
		q++
	}
	return q
}

// mulDiv returns the quotient and remainder of a × b / c, computed in 128 bits, for 0 ≤ a, b and
// 0 < c. It panics when the quotient does not fit an int64; callers bound their operands.
func mulDiv(a, b, c int64) (q, r int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		panic("schema: mulDiv quotient overflows")
	}
	uq, ur := bits.Div64(hi, lo, uint64(c))
	if uq > math.MaxInt64-1 {
		panic("schema: mulDiv quotient overflows")
	}
	return int64(uq), int64(ur)
}

// allocate splits amount across weights in proportion by the largest-remainder method: each
// share is floor(amount × w / W) (W the sum of weights), and the units left over go one each to
// the largest remainders, ties to the lower index. It requires 0 ≤ amount ≤ W and weights ≥ 0;
// then the shares sum to amount and each share is at most its weight.
func allocate(amount int64, weights []int64) []int64 {
	shares := make([]int64, len(weights))
	if amount == 0 {
		return shares
	}
	var total int64
	for _, w := range weights {
		total += w
	}
	rems := make([]int64, len(weights))
	left := amount
	for i, w := range weights {
		shares[i], rems[i] = mulDiv(amount, w, total)
		left -= shares[i]
	}
	if left == 0 {
		return shares
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	// Stable sort by remainder, descending: equal remainders keep line order.
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case rems[x] > rems[y]:
			return -1
		case rems[x] < rems[y]:
			return 1
		}
		return 0
	})
	// left equals the sum of the fractional parts, each < 1, so it is smaller than the number of
	// non-zero remainders: every line served here had a fractional share and stays within its
	// weight.
	for _, i := range order[:left] {
		shares[i]++
	}
	return shares
}
