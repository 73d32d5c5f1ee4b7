package openapi

import (
	"vitrine/edge/reads"
	"vitrine/schema"
)

// storefrontOperations are the public reads edges answer from their replica.
func storefrontOperations() map[string]Operation {
	return map[string]Operation{
		"products.list": {Summary: "List active products, filtered and sorted, with prices in one currency",
			Answers: []Answer{ok(schema.Page[schema.ProductView]{})}},
		"search": {Summary: "Search products by words, with the filters of the product list",
			Answers: []Answer{ok(schema.Page[schema.ProductView]{})}},
		"search.autocomplete": {Summary: "Suggest product titles for a prefix",
			Answers: []Answer{ok(schema.List[schema.SuggestionView]{})}},
		"posts.list": {Summary: "List the store's published blog posts",
			Answers: []Answer{ok(schema.Page[schema.BlogPostView]{})}},
		"products.featured": {Summary: "List featured products",
			Answers: []Answer{ok(schema.List[schema.ProductView]{})}},
		"products.item": {Summary: "Get one product by slug, with its description",
			Answers: []Answer{ok(schema.ProductView{})}},
		"products.variants": {Summary: "List a product's variants",
			Answers: []Answer{ok(schema.List[schema.VariantView]{})}},
		"categories.list": {Summary: "Get the category tree",
			Answers: []Answer{ok(schema.List[*schema.CategoryNode]{})}},
		"currencies.list": {Summary: "List the store's enabled currencies",
			Answers: []Answer{ok(schema.List[schema.CurrencyView]{})}},
		"openapi": {Summary: "This document",
			Answers: []Answer{{Status: 200, ContentType: "application/json", Description: "The OpenAPI 3.1 document of the commerce interface."}}},
		"flashsales.list": {Summary: "List running and upcoming flash sales",
			Answers: []Answer{ok(schema.List[reads.FlashSaleView]{})}},
		"sections.list": {Summary: "List the storefront's merchandising sections",
			Answers: []Answer{ok(schema.List[*schema.Section]{})}},
		"products.reviews": {Summary: "List a product's approved reviews, newest first, with its average rating",
			Answers: []Answer{ok(reads.ReviewsPage{})}},
		"products.socialproof": {Summary: "Get a product's social proof (recent purchases, views, rating)",
			Answers: []Answer{ok(schema.SocialProofView{})}},
	}
}
