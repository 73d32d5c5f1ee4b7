package schema

import "slices"

// EventKinds are the kinds of domain events a store's webhooks can receive: the spec's
// seventeen, in its order, then product.deleted.
var EventKinds = []string{
	"order.created", "order.paid", "order.shipped", "order.delivered", "order.refunded",
	"product.created", "product.updated", "product.low_stock", "product.out_of_stock", "product.back_in_stock",
	"subscription.renewed", "subscription.cancelled", "subscription.past_due",
	"customer.created",
	"return.submitted", "return.approved",
	"review.created",
	"product.deleted",
}

// ValidEventKind reports whether kind is one of EventKinds.
func ValidEventKind(kind string) bool { return slices.Contains(EventKinds, kind) }
