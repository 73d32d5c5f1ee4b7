package openapi

import (
	"vitrine/origin/customers"
	"vitrine/origin/store"
	"vitrine/schema"
)

// customerOperations are the storefront's customer accounts, answered by the origin: sign-up and
// sign-in give a session token that every other route takes as Authorization: Bearer.
func customerOperations() map[string]Operation {
	wishlist := []Answer{ok(schema.List[store.WishlistItem]{})}
	return map[string]Operation{
		"customer.register": {Summary: "Create a customer account and sign in",
			Description: "The password is 8 to 256 characters; an email already registered is a 409. Limited to 10 requests a " +
				"minute per client.",
			Request: customers.CredentialsInput{}, Answers: []Answer{created(customers.SessionToken{})}},
		"customer.login": {Summary: "Sign in with email and password",
			Description: "The body is email and password (name is refused). An unknown email and a wrong password answer the " +
				"same 401. Limited to 20 attempts a minute per client and 10 per account in 15 minutes.",
			Request: customers.CredentialsInput{}, Answers: []Answer{ok(customers.SessionToken{})}},
		"customer.logout": {Summary: "Sign out: revoke the session token", Customer: true,
			Description: "Any Bearer token is revoked without being checked first: an unknown or expired one also answers 204.",
			Answers:     []Answer{noContent()}},
		"customer.get": {Summary: "Get the signed-in customer", Customer: true,
			Answers: []Answer{ok(store.Customer{})}},
		"customer.orders": {Summary: "List the customer's orders, newest first", Customer: true,
			Answers: []Answer{ok(schema.Page[customers.OrderSummary]{})}},
		"customer.order": {Summary: "Get one of the customer's orders", Customer: true,
			Description: "Another customer's order answers 404, as an unknown reference does.",
			Answers:     []Answer{ok(schema.OrderView{})}},
		"customer.addresses": {Summary: "List the customer's saved addresses, the default first", Customer: true,
			Answers: []Answer{ok(schema.List[store.SavedAddress]{})}},
		"customer.addresses.add": {Summary: "Save an address", Customer: true,
			Description: "A customer saves at most 20 addresses (409 beyond). The first address, or one sent with default: " +
				"true, becomes the default.",
			Request: customers.AddressInput{}, Answers: []Answer{created(store.SavedAddress{})}},
		"customer.addresses.delete": {Summary: "Delete a saved address", Customer: true,
			Answers: []Answer{noContent()}},
		"customer.wishlist": {Summary: "List the customer's wishlist, newest first", Customer: true,
			Answers: wishlist},
		"customer.wishlist.add": {Summary: "Add a product to the wishlist", Customer: true,
			Description: "Adding a product already there changes nothing; a wishlist holds at most 500 products (409 beyond). " +
				"Answers the whole wishlist.",
			Request: customers.WishlistInput{}, Answers: wishlist},
		"customer.wishlist.delete": {Summary: "Remove a product from the wishlist", Customer: true,
			Description: "{product} is the product's id.",
			Answers:     []Answer{noContent()}},
	}
}
