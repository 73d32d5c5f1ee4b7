package seed

import (
	"context"
	"fmt"

	"vitrine/origin/store"
	"vitrine/schema"
)

// Demo checkout settings. Prices are per demo currency (minor units); a currency the tenant does
// not sell is left out.
var (
	demoShipping = []store.ShippingMethodRow{
		{Code: "standard", Name: "Standard (3-5 days)", Position: 0, Active: true,
			Prices: schema.Prices{"USD": 500, "EUR": 450, "JPY": 750}, FreeOver: schema.Prices{"USD": 5000, "EUR": 4500, "JPY": 7500}},
		{Code: "express", Name: "Express (1-2 days)", Position: 1, Active: true,
			Prices: schema.Prices{"USD": 1500, "EUR": 1400, "JPY": 2200}},
	}
	// demoTax is a US-style sales tax, added to prices and not charged on shipping.
	demoTax = store.Settings{TaxBasisPoints: 825}
	// demoCoupon is WELCOME10: 10% off, unlimited.
	demoCoupon = store.Coupon{Code: "WELCOME10", Kind: schema.DiscountPercent, Value: 1000, Active: true}
)

// DemoGiftCardBalance is the balance of the demo gift card, in minor units of the tenant's
// default currency.
const DemoGiftCardBalance = 5000

// CommerceOptions controls Commerce.
type CommerceOptions struct {
	// GiftCardCode, when set, is the code of a demo gift card issued if no card has it.
	GiftCardCode string
}

// Commerce gives a tenant what a demo checkout needs, adding only what is missing, so that it can
// run at every start and never undoes a merchant's change: two shipping methods, standard (free
// over a threshold) and express, when the tenant has none; an 8.25% tax when its settings were
// never written; the coupon WELCOME10 when absent; and a gift card with opt.GiftCardCode when no
// card has that code. It returns that gift card as it is now (nil without a code): its balance
// goes down as shoppers spend it.
func Commerce(ctx context.Context, db *store.DB, t *schema.Tenant, opt CommerceOptions) (*store.GiftCard, error) {
	var card *store.GiftCard
	err := db.Tx(ctx, func(tx *store.Tx) error {
		card = nil
		methods, err := tx.ShippingMethods(ctx, t)
		if err != nil {
			return err
		}
		if len(methods) == 0 {
			for _, m := range demoShipping {
				if m.Prices, err = sold(ctx, tx, t, m.Prices); err != nil {
					return err
				}
				if m.FreeOver, err = sold(ctx, tx, t, m.FreeOver); err != nil {
					return err
				}
				if len(m.Prices) == 0 {
					continue
				}
				if err := tx.PutShippingMethod(ctx, t, m); err != nil {
					return fmt.Errorf("shipping method %s: %w", m.Code, err)
				}
			}
		}
		has, err := tx.HasSettings(ctx, t)
		if err != nil {
			return err
		}
		if !has {
			st := store.DefaultSettings()
			st.TaxBasisPoints, st.TaxInclusive, st.TaxOnShipping = demoTax.TaxBasisPoints, demoTax.TaxInclusive, demoTax.TaxOnShipping
			if err := tx.PutSettings(ctx, t, st); err != nil {
				return err
			}
		}
		if c, err := tx.Coupon(ctx, t, demoCoupon.Code); err != nil {
			return err
		} else if c == nil {
			c := demoCoupon
			if err := tx.PutCoupon(ctx, t, &c); err != nil {
				return err
			}
		}
		if opt.GiftCardCode == "" {
			return nil
		}
		key, ok := store.GiftCardKey(opt.GiftCardCode)
		if !ok {
			return fmt.Errorf("gift card code %q is not a valid code", opt.GiftCardCode)
		}
		if card, err = tx.GiftCard(ctx, t, key); err != nil || card != nil {
			return err
		}
		_, issued, err := tx.IssueGiftCard(ctx, t, opt.GiftCardCode, t.DefaultCurrency(), DemoGiftCardBalance, nil, "demo gift card")
		if err == nil {
			card = &issued.GiftCard
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("seed: commerce settings: %w", err)
	}
	return card, nil
}

// sold keeps the prices in currencies the tenant sells.
func sold(ctx context.Context, tx *store.Tx, t *schema.Tenant, p schema.Prices) (schema.Prices, error) {
	out := schema.Prices{}
	for code, amount := range p {
		_, err := tx.Currency(ctx, t, code)
		switch {
		case err == nil:
			out[code] = amount
		case schema.ErrorCode(err) != schema.CodeNotFound:
			return nil, err
		}
	}
	return out, nil
}
