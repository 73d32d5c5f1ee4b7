package openapi

import (
	"vitrine/origin"
	"vitrine/origin/store"
	"vitrine/schema"
)

// adminCatalogOperations are the staff administration of products, variants, categories and
// currencies. Products are shown with their variants and stock.
func adminCatalogOperations() map[string]Operation {
	return map[string]Operation{
		"admin.products.list": {Summary: "List products of any status, with their variants",
			Answers: []Answer{ok(schema.Page[origin.AdminProduct]{})}},
		"admin.products.create": {Summary: "Create a product with its variants",
			Description: "title and prices are required; the slug is derived from the title when absent (never conflicting), " +
				"the status is draft unless given. When variants is left out the product gets one variant with a SKU derived from the slug.",
			Request: origin.ProductInput{}, Answers: []Answer{created(origin.AdminProduct{})}},
		"admin.products.get": {Summary: "Get a product with its variants",
			Answers: []Answer{ok(origin.AdminProduct{})}},
		"admin.products.update": {Summary: "Change some of a product's fields",
			Description: "Fields left out are kept; variants are refused here (use the variant routes).",
			Request:     origin.ProductInput{}, Answers: []Answer{ok(origin.AdminProduct{})}},
		"admin.products.delete": {Summary: "Delete a product and its variants",
			Answers: []Answer{ok(origin.DeletedID{})}},

		"admin.variants.list": {Summary: "List a product's variants with their stock",
			Answers: []Answer{ok(schema.List[*store.StockedVariant]{})}},
		"admin.variants.create": {Summary: "Add a variant to a product",
			Description: "sku is required.",
			Request:     origin.VariantInput{}, Answers: []Answer{created(&store.StockedVariant{})}},
		"admin.variants.get": {Summary: "Get a variant with its stock",
			Answers: []Answer{ok(&store.StockedVariant{})}},
		"admin.variants.update": {Summary: "Change some of a variant's fields, its stock included",
			Description: "Fields left out are kept.",
			Request:     origin.VariantInput{}, Answers: []Answer{ok(&store.StockedVariant{})}},
		"admin.variants.delete": {Summary: "Delete a variant",
			Answers: []Answer{ok(origin.DeletedID{})}},

		"admin.categories.create": {Summary: "Create a category",
			Request: origin.CategoryInput{}, Answers: []Answer{created(&schema.Category{})}},
		"admin.categories.update": {Summary: "Change some of a category's fields",
			Description: "Fields left out are kept.",
			Request:     origin.CategoryInput{}, Answers: []Answer{ok(&schema.Category{})}},
		"admin.categories.delete": {Summary: "Delete a category",
			Answers: []Answer{ok(origin.DeletedID{})}},

		"admin.currencies.create": {Summary: "Enable a currency",
			Request: origin.CurrencyInput{}, Answers: []Answer{created(&schema.Currency{})}},
		"admin.currencies.update": {Summary: "Change a currency's name, symbol, exponent or rate",
			Description: "Fields left out are kept; the code cannot change.",
			Request:     origin.CurrencyInput{}, Answers: []Answer{ok(&schema.Currency{})}},
		"admin.currencies.delete": {Summary: "Remove a currency from the store",
			Answers: []Answer{ok(origin.DeletedCurrency{})}},
	}
}
