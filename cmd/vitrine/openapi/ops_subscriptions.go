package openapi

import (
	"vitrine/origin/store"
	"vitrine/origin/subscriptions"
	"vitrine/schema"
)

// subscriptionOperations are subscriptions: the plans staff sell variants with, and the
// subscriptions customers and staff list and cancel. Checkout starts them; the origins'
// maintenance renews them (origin/subscriptions).
func subscriptionOperations() map[string]Operation {
	const cancelRules = "It renews no more; subscription.cancelled is emitted once. Cancelling a cancelled subscription " +
		"answers 200 with it unchanged and emits nothing; a completed one is a 409."
	return map[string]Operation{
		"admin.variants.subscription.get": {Summary: "Get how a variant is sold as a subscription",
			Description: "A variant not sold as a subscription answers 404.",
			Answers:     []Answer{ok(store.SubscriptionPlan{})}},
		"admin.variants.subscription.put": {Summary: "Sell a variant as a subscription, or change its plan",
			Description: "A signed-in customer's checkout of the variant then starts a subscription, renewed every " +
				"interval_count intervals, count times or until cancelled. Subscriptions already started keep their plan.",
			Request: subscriptions.PlanInput{}, Answers: []Answer{ok(store.SubscriptionPlan{})}},
		"admin.variants.subscription.delete": {Summary: "Stop selling a variant as a subscription",
			Description: "Subscriptions already started go on. A variant not sold as a subscription answers 404.",
			Answers:     []Answer{noContent()}},
		"customer.subscriptions": {Summary: "List the customer's subscriptions, newest first", Customer: true,
			Answers: []Answer{ok(schema.List[*store.Subscription]{})}},
		"customer.subscriptions.cancel": {Summary: "Cancel one of the customer's subscriptions", Customer: true,
			Description: cancelRules + " Another customer's subscription answers 404, as an unknown one does.",
			Request:     subscriptions.CancelInput{}, RequestOptional: true,
			Answers: []Answer{ok(store.Subscription{})}},
		"admin.subscriptions.list": {Summary: "List the store's subscriptions, newest first",
			Answers: []Answer{ok(schema.Page[*store.Subscription]{})}},
		"admin.subscriptions.cancel": {Summary: "Cancel a subscription",
			Description: cancelRules,
			Request:     subscriptions.CancelInput{}, RequestOptional: true,
			Answers: []Answer{ok(store.Subscription{})}},
	}
}
