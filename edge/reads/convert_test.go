package reads

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"vitrine/schema"
)

// The converter's integer fast path gives exactly the amounts Pricing.Price shows.
func FuzzConverter(f *testing.F) {
	for _, s := range []struct {
		amount         int64
		rate           string
		fromExp, toExp int
	}{
		{4900, "0.92", 2, 2}, {2999, "0.92", 2, 2}, {4900, "151.3", 2, 0}, {1, "0.5", 2, 2}, {3, "0.5", 2, 2},
		{1999, "0.307", 2, 3}, {schema.MaxMinorAmount, "151.3", 2, 4}, {0, "1", 2, 2}, {12345, "0.000000000001", 0, 4},
		{987654321, "123456789012.123456", 2, 2}, {5, "1", 4, 0}, {-5, "2", 2, 2},
	} {
		f.Add(s.amount, s.rate, s.fromExp, s.toExp)
	}
	f.Fuzz(func(t *testing.T, amount int64, rate string, fromExp, toExp int) {
		if _, err := schema.ParseRate(rate); err != nil || fromExp < 0 || fromExp > 4 || toExp < 0 || toExp > 4 ||
			amount < 0 || amount > schema.MaxMinorAmount {
			return // not a currency or a price a writer accepts
		}
		pr := schema.Pricing{Currency: &schema.Currency{Code: "EUR", Exponent: toExp, Rate: rate}, Default: &schema.Currency{Code: "USD", Exponent: fromExp, Rate: "1"}}
		c := newConverter(pr)
		prices := schema.Prices{"USD": amount}
		if got, want := c.price(prices), pr.Price(prices).Amount; got != want {
			t.Fatalf("%d at %s (exponents %d to %d): converter %d, Pricing.Price %d", amount, rate, fromExp, toExp, got, want)
		}
	})
}

func TestConverterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		rate := strconv.FormatFloat(rng.Float64()*float64(rng.IntN(1000)+1), 'f', rng.IntN(13), 64)
		if _, err := schema.ParseRate(rate); err != nil {
			continue
		}
		pr := schema.Pricing{Currency: &schema.Currency{Code: "EUR", Exponent: rng.IntN(5), Rate: rate}, Default: &schema.Currency{Code: "USD", Exponent: rng.IntN(5), Rate: "1"}}
		prices := schema.Prices{"USD": rng.Int64N(schema.MaxMinorAmount + 1)}
		if rng.IntN(2) == 0 {
			prices["USD"] = rng.Int64N(100_000)
		}
		if got, want := newConverter(pr).price(prices), pr.Price(prices).Amount; got != want {
			t.Fatalf("%v at %s (exponents %d to %d): converter %d, Pricing.Price %d", prices, rate, pr.Default.Exponent, pr.Currency.Exponent, got, want)
		}
	}
	// Own prices and missing default prices are Pricing.Price's too.
	pr := schema.Pricing{Currency: &schema.Currency{Code: "EUR", Exponent: 2, Rate: "0.92"}, Default: &schema.Currency{Code: "USD", Exponent: 2, Rate: "1"}}
	for _, p := range []schema.Prices{{"EUR": 7}, {"JPY": 100}, {}} {
		if got, want := newConverter(pr).price(p), pr.Price(p).Amount; got != want {
			t.Errorf("%v: converter %d, Pricing.Price %d", p, got, want)
		}
	}
}
