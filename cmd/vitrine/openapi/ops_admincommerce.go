package openapi

import (
	"vitrine/origin"
	"vitrine/origin/store"
	"vitrine/schema"
)

// adminCommerceOperations are the staff routes of what checkout applies: coupons, gift cards,
// shipping methods and the tax and lifetime settings. They are answered by the origin and apply
// to the next cart read.
func adminCommerceOperations() map[string]Operation {
	coupon := []Answer{
		{Status: 200, Body: store.Coupon{}, Description: "The coupon was replaced."},
		{Status: 201, Body: store.Coupon{}, Description: "The coupon was created."},
	}
	shipping := []Answer{
		{Status: 200, Body: store.ShippingMethodRow{}, Description: "The shipping method was replaced."},
		{Status: 201, Body: store.ShippingMethodRow{}, Description: "The shipping method was created."},
	}
	return map[string]Operation{
		"admin.coupons.list": {Summary: "List the store's coupons by code",
			Answers: []Answer{ok(schema.List[*store.Coupon]{})}},
		"admin.coupons.get": {Summary: "Get a coupon by code",
			Description: "The code is matched in any case.",
			Answers:     []Answer{ok(store.Coupon{})}},
		"admin.coupons.put": {Summary: "Create or replace a coupon",
			Description: "The body is the whole coupon: fields left out take their defaults (active, no limits, no dates, " +
				"every product); its usage count is kept. The code is stored in upper case: 1 to 64 letters, digits, '-' or '_'.",
			Request: origin.CouponInput{}, Answers: coupon},
		"admin.coupons.delete": {Summary: "Delete a coupon",
			Description: "Past redemptions stay on their orders.",
			Answers:     []Answer{noContent()}},
		"admin.giftcards.list": {Summary: "List gift cards, newest first, optionally by the last four characters of their code",
			Answers: []Answer{ok(schema.Page[*store.IssuedGiftCard]{})}},
		"admin.giftcards.create": {Summary: "Issue a gift card",
			Description: "amount is required. The answer is the only time the card's code is shown; afterwards the card is " +
				"addressed by its id.",
			Request: origin.GiftCardInput{}, Answers: []Answer{created(origin.GiftCardWithCode{})}},
		"admin.giftcards.get": {Summary: "Get a gift card by id",
			Answers: []Answer{ok(store.IssuedGiftCard{})}},
		"admin.giftcards.update": {Summary: "Enable or disable a gift card, or change its note",
			Description: "Fields left out are kept. Balances are not edited: they move only with orders.",
			Request:     origin.GiftCardUpdate{}, Answers: []Answer{ok(store.IssuedGiftCard{})}},
		"admin.shipping.list": {Summary: "List the shipping methods by position",
			Answers: []Answer{ok(schema.List[store.ShippingMethodRow]{})}},
		"admin.shipping.put": {Summary: "Create or replace a shipping method",
			Description: "name and prices are required; free_over defaults to never, position to 0, active to true.",
			Request:     origin.ShippingMethodInput{}, Answers: shipping},
		"admin.shipping.delete": {Summary: "Delete a shipping method",
			Description: "Carts that chose it report an issue and fall back to another method; orders keep the method they were placed with.",
			Answers:     []Answer{noContent()}},
		"admin.settings.get": {Summary: "Get the store's tax and lifetime settings",
			Answers: []Answer{ok(origin.CommerceSettings{})}},
		"admin.settings.put": {Summary: "Change the store's tax and lifetime settings",
			Description: "Fields left out are kept.",
			Request:     origin.CommerceSettingsInput{}, Answers: []Answer{ok(origin.CommerceSettings{})}},
	}
}
