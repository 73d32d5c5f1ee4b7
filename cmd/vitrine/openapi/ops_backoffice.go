package openapi

import (
	"vitrine/origin/bundles"
	"vitrine/origin/fulfil"
	"vitrine/origin/keys"
	"vitrine/origin/refund"
	"vitrine/origin/store"
)

// backOfficeOperations are the bundle, shipment and server-key administration of the store, and
// the server-key routes of back-office systems (warehouses, ERPs, reporting).
func backOfficeOperations() map[string]Operation {
	labels := []Answer{
		{Status: 201, Body: fulfil.LabelsAnswer{}, Description: "The labels were bought: one shipment per parcel, and the order's fulfilment status."},
		{Status: 200, Body: fulfil.LabelsAnswer{}, Description: "A replay (Idempotent-Replayed: true): the purchase made before under this Idempotency-Key."},
	}
	const labelRules = "Idempotency-Key is required: a retry with the same key and body answers (or finishes) the first purchase " +
		"and never buys twice; the same key with another body is refused (422). Only paid or partially refunded orders ship, " +
		"never more units than were ordered less refunded and already shipped or being bought (409). When the carrier does not " +
		"answer, the purchase stays pending (503, Retry-After): retry with the same key."
	return map[string]Operation{
		"admin.bundles.list": {Summary: "List the store's bundles",
			Answers: []Answer{ok([]*store.Bundle{})}},
		"admin.bundles.put": {Summary: "Make a product a bundle, or replace its components",
			Description: "{id} is the product's id. The bundle's own variants then hold the number of whole bundles its " +
				"components make, and selling one takes the components' stock.",
			Request: bundles.BundleInput{}, Answers: []Answer{ok(store.Bundle{})}},
		"admin.bundles.delete": {Summary: "Make a bundle an ordinary product again",
			Description: "{id} is the product's id; its variants keep their last stock.",
			Answers:     []Answer{noContent()}},
		"admin.shipments.advance": {Summary: "Move a shipment's simulated tracking forward",
			Description: "To the next status, or to the one named, adding a tracking event for each step passed; tracking " +
				"only moves forward (409). The order's fulfilment status follows its outbound shipments.",
			Request: fulfil.AdvanceInput{}, RequestOptional: true, Answers: []Answer{ok(fulfil.ShipmentView{})}},
		"admin.apikeys.list": {Summary: "List the store's server keys, redacted",
			Answers: []Answer{ok([]*keys.View{})}},
		"admin.apikeys.create": {Summary: "Create a server key",
			Description: "The answer holds the key's plaintext (key): it is shown once and never again.",
			Request:     keys.CreateKeyInput{},
			Answers:     []Answer{{Status: 201, Body: keys.View{}, Description: "The new key, with its plaintext; Location names it."}}},
		"admin.apikeys.delete": {Summary: "Revoke a server key at once",
			Description: "Revoking a key again keeps the first revocation's time.",
			Answers:     []Answer{noContent()}},
		"admin.apikeys.roll": {Summary: "Roll a server key: make its successor, the old one working for a while",
			Description: "The new key has the old key's name and scopes; the old key works until overlap_until (or its own " +
				"expiry, if sooner) and names its successor in rolled_to. A revoked, expired or already rolled key cannot be rolled (409).",
			Request: keys.RollKeyInput{}, RequestOptional: true,
			Answers: []Answer{{Status: 201, Body: keys.View{}, Description: "The new key, with its plaintext; Location names it."}}},

		"orders.packingslip": {Summary: "Get an order's packing slip",
			Description: "A PDF (A4, with Code 128 barcodes of the reference and SKUs) unless the Accept header asks for JSON " +
				"(application/json, or +json, not preceded by application/pdf).",
			Answers: []Answer{{Status: 200, Body: fulfil.PackingSlip{}, Alternatives: []string{"application/pdf"},
				Description: "The packing slip: as JSON when Accept asks for it, else as application/pdf (inline)."}}},
		"orders.picklist": {Summary: "Get a pick list of orders to ship",
			Description: "Every unit the chosen orders still need (ordered less refunded), one line per SKU sorted by SKU, " +
				"with the orders it goes to. A PDF unless the Accept header asks for JSON.",
			Answers: []Answer{{Status: 200, Body: fulfil.PickList{}, Alternatives: []string{"application/pdf"},
				Description: "The pick list: as JSON when Accept asks for it, else as application/pdf (inline)."}}},
		"orders.label": {Summary: "Buy a shipping label for one parcel of an order",
			Description: "With no lines (or no body), the parcel holds every unit not shipped yet. " + labelRules,
			Request:     fulfil.LabelInput{}, RequestOptional: true, IdempotencyRequired: true, Answers: labels},
		"orders.labels.multi": {Summary: "Buy shipping labels for several parcels of an order",
			Description: labelRules,
			Request:     fulfil.MultiLabelInput{}, IdempotencyRequired: true, Answers: labels},
		"orders.returnlabel": {Summary: "Buy the return label of an approved return",
			Description: "One label per return, addressed back to the store. Idempotency-Key is required: a retry with the same " +
				"key and body answers (or finishes) the first purchase; the same key with another body is refused (422). When the " +
				"carrier does not answer, the purchase stays pending (503, Retry-After): retry with the same key.",
			Request: fulfil.ReturnLabelInput{}, IdempotencyRequired: true,
			Answers: []Answer{
				{Status: 201, Body: fulfil.LabelsAnswer{}, Description: "The label was bought: its shipment (kind return)."},
				{Status: 200, Body: fulfil.LabelsAnswer{}, Description: "A replay (Idempotent-Replayed: true): the purchase made before under this Idempotency-Key."},
			}},
		"orders.shipment.label": {Summary: "Get a shipment's label",
			Answers: []Answer{{Status: 200, ContentType: "application/pdf", Description: "The label, inline."}}},
		"orders.batchlabels": {Summary: "Queue label purchases for many orders",
			Description: "One parcel per order, every unit not shipped yet, bought in the background; follow status_url. " +
				"Idempotency-Key is required: the same key and body answer the batch made before (Idempotent-Replayed: true), " +
				"the same key with another body is refused (422).",
			Request: fulfil.BatchLabelsInput{}, IdempotencyRequired: true,
			Answers: []Answer{{Status: 202, Body: fulfil.BatchAccepted{}, Description: "The batch is queued (or was, under this key); Location is its status."}}},
		"orders.batchlabels.status": {Summary: "Get a label batch's progress",
			Answers: []Answer{ok(fulfil.BatchStatus{})}},
		"orders.batchlabels.labels": {Summary: "Get every label of a finished batch as one PDF",
			Description: "One 4×6 in page per label, in the batch's order; a batch not done, or done without a label, is refused (409).",
			Answers:     []Answer{{Status: 200, ContentType: "application/pdf", Description: "The labels, inline."}}},
		"bundles.analytics": {Summary: "Get bundle sales: units, revenue, attach rate, top bundles and components",
			Description: "Computed from the paid orders placed in the range, never from a cache; revenue is gross (before refunds).",
			Answers:     []Answer{ok(bundles.BundleAnalytics{})}},
		"orders.refund": {Summary: "Refund an order, wholly, by amount or by lines",
			Description: "With neither amount nor lines (or no body), refunds all that is left. Never beyond what was paid less " +
				"what was refunded (409); the card first, the rest back to the gift cards that paid. Idempotency-Key is required: " +
				"a retry with the same key and body answers (or finishes) the first refund and never refunds twice; the same key with " +
				"another body is refused (422). When the payment provider does not answer, the refund stays pending (503, " +
				"Retry-After): retry with the same key.",
			Request: refund.RefundInput{}, RequestOptional: true, IdempotencyRequired: true,
			Answers: []Answer{
				{Status: 201, Body: refund.RefundAnswer{}, Description: "The refund succeeded, and the order's state after it."},
				{Status: 200, Body: refund.RefundAnswer{}, Description: "A replay (Idempotent-Replayed: true): the refund made before under this Idempotency-Key."},
				{Status: 402, Body: refund.RefundAnswer{}, Description: "The payment provider refused the refund (status failed, failure says why): its amount is free again."},
			}},
	}
}
