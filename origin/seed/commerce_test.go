package seed_test

import (
	"context"
	"testing"

	"vitrine/origin/seed"
	"vitrine/origin/store"
	"vitrine/schema"
)

func TestCommerceFillsOnlyWhatIsMissing(t *testing.T) {
	db, tn, _ := demoStore(t, false)
	ctx := context.Background()
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateCurrency(ctx, tn, &schema.Currency{Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"}); err != nil {
			return err
		}
		return tx.CreateCurrency(ctx, tn, &schema.Currency{Code: "EUR", Name: "Euro", Symbol: "€", Exponent: 2, Rate: "0.92"})
	}); err != nil {
		t.Fatal(err)
	}
	const code = "DEMO-1234-5678-9ABC-DEF0"
	card, err := seed.Commerce(ctx, db, tn, seed.CommerceOptions{GiftCardCode: code})
	if err != nil || card == nil || card.Balance != seed.DemoGiftCardBalance {
		t.Fatalf("Commerce: card %+v, %v", card, err)
	}
	read := func() (methods []store.ShippingMethodRow, st store.Settings, cp *store.Coupon, cards []*store.IssuedGiftCard) {
		t.Helper()
		if err := db.Tx(ctx, func(tx *store.Tx) error {
			var err error
			if methods, err = tx.ShippingMethods(ctx, tn); err != nil {
				return err
			}
			if st, err = tx.Settings(ctx, tn); err != nil {
				return err
			}
			if cp, err = tx.Coupon(ctx, tn, "welcome10"); err != nil {
				return err
			}
			cards, _, err = tx.GiftCards(ctx, tn, "", 0, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return
	}
	methods, st, cp, cards := read()
	if len(methods) != 2 || methods[0].Code != "standard" || methods[1].Code != "express" {
		t.Fatalf("shipping methods %+v, want standard and express", methods)
	}
	// Priced in the currencies the tenant sells (USD, EUR), not in JPY, which it does not.
	if p := methods[0].Prices; len(p) != 2 || p["USD"] != 500 || p["EUR"] != 450 || methods[0].FreeOver["USD"] != 5000 {
		t.Fatalf("standard prices %v free over %v", p, methods[0].FreeOver)
	}
	if st.TaxBasisPoints != 825 || st.TaxInclusive {
		t.Fatalf("settings %+v, want an 8.25%% exclusive tax", st)
	}
	if cp == nil || cp.Kind != schema.DiscountPercent || cp.Value != 1000 || !cp.Active {
		t.Fatalf("coupon %+v, want WELCOME10 at 10%%", cp)
	}
	key, _ := store.GiftCardKey(code)
	if len(cards) != 1 || cards[0].Key != key || cards[0].Balance != seed.DemoGiftCardBalance || cards[0].Last4 != "DEF0" {
		t.Fatalf("gift cards %+v", cards)
	}

	// A merchant's changes survive the next start.
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteShippingMethod(ctx, tn, "express"); err != nil {
			return err
		}
		st.TaxBasisPoints = 0
		if err := tx.PutSettings(ctx, tn, st); err != nil {
			return err
		}
		cp.Value = 1500
		return tx.PutCoupon(ctx, tn, cp)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Commerce(ctx, db, tn, seed.CommerceOptions{GiftCardCode: code}); err != nil {
		t.Fatal(err)
	}
	methods, st, cp, cards = read()
	if len(methods) != 1 || st.TaxBasisPoints != 0 || cp.Value != 1500 || len(cards) != 1 {
		t.Fatalf("second run changed the merchant's settings: %d methods, tax %d, coupon %d, %d cards", len(methods), st.TaxBasisPoints, cp.Value, len(cards))
	}
}
