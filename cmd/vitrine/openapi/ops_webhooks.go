package openapi

import (
	"vitrine/origin/webhooks"
	"vitrine/schema"
)

// webhookOperations are the webhook endpoints of store settings and their delivery log.
func webhookOperations() map[string]Operation {
	endpoint := []Answer{ok(webhooks.Endpoint{})}
	return map[string]Operation{
		"admin.webhooks.list": {Summary: "List the store's webhook endpoints, with notices (an endpoint disabled for failing)",
			Answers: []Answer{ok(webhooks.EndpointList{})}},
		"admin.webhooks.create": {Summary: "Register a webhook endpoint",
			Description: "The answer holds the signing secret (whsec_…), shown this once. Deliveries are POSTs of a JSON envelope " +
				"{id, kind, created_at, store, data} signed with X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body>; " +
				"X-Webhook-Timestamp and X-Webhook-Timestamp-Signature (the HMAC of \"<timestamp>.<body>\") let a receiver refuse " +
				"replays, X-Webhook-Event-Id duplicates (delivery is at least once, and not ordered).",
			Request: webhooks.EndpointInput{}, Answers: []Answer{created(webhooks.Endpoint{})}},
		"admin.webhooks.get": {Summary: "Get a webhook endpoint", Answers: endpoint},
		"admin.webhooks.update": {Summary: "Change an endpoint's URL, kinds, allowlist, description, or enable or disable it",
			Description: "Disabling cancels its pending deliveries; enabling clears its failure record.",
			Request:     webhooks.EndpointInput{}, Answers: endpoint},
		"admin.webhooks.delete": {Summary: "Delete a webhook endpoint (its pending deliveries are cancelled)", Answers: []Answer{noContent()}},
		"admin.webhooks.rotate": {Summary: "Rotate an endpoint's signing secret",
			Description: "The new secret is in the answer, shown this once. During the overlap the previous secret signs too, in " +
				"X-Webhook-Signature-Previous and X-Webhook-Timestamp-Signature-Previous.",
			Request: webhooks.RotateInput{}, RequestOptional: true, Answers: endpoint},
		"admin.webhooks.test": {Summary: "Send a test event (kind webhook.test) to the endpoint, once",
			Answers: []Answer{{Status: 202, Body: webhooks.Queued{}, Description: "Queued; its attempt appears in the delivery log."}}},
		"admin.webhooks.deliveries": {Summary: "List an endpoint's deliveries, newest first, each with every attempt's request and answer",
			Answers: []Answer{ok(schema.Page[*webhooks.Delivery]{})}},
		"admin.webhooks.redeliver": {Summary: "Deliver an event to the endpoint again (a new delivery with the same event id)",
			Answers: []Answer{{Status: 202, Body: webhooks.Queued{}, Description: "Queued."}}},
	}
}
