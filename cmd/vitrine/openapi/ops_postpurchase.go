package openapi

import (
	"vitrine/origin"
	"vitrine/origin/store"
	"vitrine/schema"
)

// postPurchaseOperations are order tracking, returns and the storefront's forms, answered by the
// origin, and the staff routes that handle returns, subscribers and messages.
func postPurchaseOperations() map[string]Operation {
	adminReturn := []Answer{ok(origin.AdminReturn{})}
	return map[string]Operation{
		"tracking": {Summary: "Track an order by its reference",
			Description: "Anyone holding the reference sees a masked view (verified: false): status, lines, shipping country and " +
				"a masked email. The order's email (X-Order-Email or ?email=) or its customer's token proves ownership and " +
				"answers the whole order with its returns and shipments (verified: true). Malformed, unknown and other " +
				"stores' references answer the same 404. Limited to 10 requests a minute per client, and to 20 wrong " +
				"emails an hour per reference.",
			CustomerOptional: true, OrderEmail: true,
			Answers: []Answer{{Status: 200, AnyOf: []any{origin.MaskedTracking{}, origin.VerifiedTracking{}}}}},
		"orders.return": {Summary: "Request a return of lines of a paid order",
			Description: "Ownership is proved by X-Order-Email, email in the query or the body, or the order's customer's token; " +
				"an order that is not the caller's answers 404 like an unknown one. Each line may be returned up to the " +
				"quantity bought less what other returns (not declined) claim: 409 beyond. Limited to 10 requests a minute " +
				"per client.",
			CustomerOptional: true, OrderEmail: true,
			Request: origin.ReturnInput{}, Answers: []Answer{created(origin.ShopperReturn{})}},
		"newsletter.subscribe": {Summary: "Subscribe an email to the newsletter",
			Description: "A new and an already subscribed email get the same answer. Limited to 10 requests a minute per client.",
			Request:     origin.NewsletterInput{}, Answers: []Answer{ok(origin.Subscribed{})}},
		"contact": {Summary: "Send a message to the store",
			Description: "The message is kept, with the client's IP, for staff to read in the admin API. Limited to 5 a minute " +
				"per client.",
			Request: origin.ContactInput{}, Answers: []Answer{created(origin.ContactReceipt{})}},
		"admin.orders.list": {Summary: "List orders, newest first, by status and fulfilment status",
			Description: "status and fulfillment_status each take a comma list (none: any). Paid orders not yet fully shipped: " +
				"status=paid,partially_refunded&fulfillment_status=unfulfilled,partially_fulfilled&order=asc.",
			Answers: []Answer{ok(schema.Page[schema.OrderView]{})}},
		"admin.returns.list": {Summary: "List returns, newest first",
			Answers: []Answer{ok(schema.Page[*store.Return]{})}},
		"admin.returns.get": {Summary: "Get a return, with the most its refund may record",
			Description: "{id} is the return's id or its RMA reference.",
			Answers:     adminReturn},
		"admin.returns.transition": {Summary: "Move a return to its next status",
			Description: "{id} is the return's id or its RMA reference. A return moves submitted → approved or declined, " +
				"approved → received, received → refunded; any other move is a 409. Refunded records refund_amount " +
				"(default: all that is refundable) and moves no money.",
			Request: origin.ReturnTransitionInput{}, Answers: adminReturn},
		"admin.newsletter.list": {Summary: "List newsletter subscribers, newest first",
			Answers: []Answer{ok(schema.Page[store.Subscriber]{})}},
		"admin.contact.list": {Summary: "List contact messages, newest first",
			Answers: []Answer{ok(schema.Page[*store.ContactMessage]{})}},
		"admin.contact.update": {Summary: "Mark a contact message handled or not",
			Request: origin.ContactUpdateInput{}, Answers: []Answer{ok(store.ContactMessage{})}},
	}
}
