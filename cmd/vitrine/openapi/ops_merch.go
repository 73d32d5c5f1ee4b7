package openapi

import (
	"vitrine/origin"
	"vitrine/origin/store"
	"vitrine/schema"
)

// merchOperations are customer reviews and the staff administration of flash sales, storefront
// sections and review moderation.
func merchOperations() map[string]Operation {
	return map[string]Operation{
		"products.reviews.create": {Summary: "Review a product",
			Description: "The review waits for moderation; a customer reviews a product once (409 otherwise). " +
				"{slug} is the product's slug or id.",
			Customer: true, Request: origin.ReviewInput{}, Answers: []Answer{created(origin.ReviewCreated{})}},

		"admin.flashsales.list": {Summary: "List every flash sale, past, running and upcoming",
			Answers: []Answer{ok(schema.List[*schema.FlashSale]{})}},
		"admin.flashsales.create": {Summary: "Create a flash sale",
			Request: origin.FlashSaleInput{}, Answers: []Answer{created(&schema.FlashSale{})}},
		"admin.flashsales.get": {Summary: "Get a flash sale",
			Answers: []Answer{ok(&schema.FlashSale{})}},
		"admin.flashsales.update": {Summary: "Replace a flash sale",
			Description: "Every field is replaced: the body is that of a create.",
			Request:     origin.FlashSaleInput{}, Answers: []Answer{ok(&schema.FlashSale{})}},
		"admin.flashsales.delete": {Summary: "Delete a flash sale",
			Answers: []Answer{ok(origin.DeletedID{})}},

		"admin.sections.list": {Summary: "List every storefront section, active or not",
			Answers: []Answer{ok(schema.List[*schema.Section]{})}},
		"admin.sections.create": {Summary: "Create a storefront section",
			Request: origin.SectionInput{}, Answers: []Answer{created(&schema.Section{})}},
		"admin.sections.update": {Summary: "Replace a storefront section",
			Description: "Every field is replaced: the body is that of a create, and fields left out take their defaults.",
			Request:     origin.SectionInput{}, Answers: []Answer{ok(&schema.Section{})}},
		"admin.sections.delete": {Summary: "Delete a storefront section",
			Answers: []Answer{ok(origin.DeletedID{})}},

		"admin.reviews.list": {Summary: "List reviews of any status, newest first",
			Answers: []Answer{ok(schema.Page[*store.StoredReview]{})}},
		"admin.reviews.moderate": {Summary: "Approve, reject or reopen a review",
			Description: "Approving publishes the review; rejecting an approved review withdraws it.",
			Request:     origin.ReviewModeration{}, Answers: []Answer{ok(&store.StoredReview{})}},
	}
}
