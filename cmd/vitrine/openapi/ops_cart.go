package openapi

import (
	"vitrine/origin"
	"vitrine/schema"
)

// cartOperations are the shopper's cart and checkout, keyed by X-Cart-Session and answered by
// the origin. Every cart answer is the whole cart, recomputed.
func cartOperations() map[string]Operation {
	cart := []Answer{ok(schema.CartView{})}
	return map[string]Operation{
		"cart.get":    {Summary: "Get the cart, priced now (an empty cart when the session has none)", Session: true, Answers: cart},
		"cart.delete": {Summary: "Empty the cart", Session: true, Answers: cart},
		"cart.items.add": {Summary: "Add a variant to the cart, or raise its line's quantity", Session: true,
			Request: origin.CartItemInput{}, Answers: cart},
		"cart.items.update": {Summary: "Set a line's quantity (0 removes it)", Session: true,
			Description: "The {item} of a line is its variant id.", Request: origin.CartQuantityInput{}, Answers: cart},
		"cart.items.delete": {Summary: "Remove a line", Session: true, Description: "The {item} of a line is its variant id.", Answers: cart},
		"cart.options": {Summary: "Set the cart's currency, shipping method, notes and gift options", Session: true,
			Request: origin.CartOptionsInput{}, Answers: cart},
		"cart.coupon.add":      {Summary: "Apply a coupon", Session: true, Request: origin.CodeInput{}, Answers: cart},
		"cart.coupon.remove":   {Summary: "Remove an applied coupon", Session: true, Answers: cart},
		"cart.giftcard.add":    {Summary: "Apply a gift card (attempts are rate limited per cart and address)", Session: true, Request: origin.CodeInput{}, Answers: cart},
		"cart.giftcard.remove": {Summary: "Remove a gift card by the last four characters of its code", Session: true, Answers: cart},
		"checkout": {Summary: "Place the order: reserve stock, authorize the payment, and empty the cart",
			Description: "Repeating a checkout with the same Idempotency-Key answers the first order without charging twice. " +
				"expected_total, when sent, must equal the recomputed total (409 otherwise). A signed-in customer may send their token " +
				"instead of an email. A cart holding a variant sold as a subscription needs a signed-in customer (401 otherwise) and a card " +
				"(409 when gift cards pay the whole order): the paid order starts one subscription per such line, renewed on the saved card.",
			Session: true, CustomerOptional: true, Idempotent: true, Request: origin.CheckoutInput{},
			Answers: []Answer{created(schema.OrderView{})}},
	}
}
