package openapi

import "maps"

// CommerceInfo describes the commerce document.
var CommerceInfo = Info{
	Title:   "Vitrine commerce API",
	Version: "1.0.0",
	Description: "The commerce interface of a Vitrine store: storefront reads answered by edges, " +
		"carts, checkout and accounts forwarded to the origin, staff administration (HTTP Basic with an " +
		"application password) and server-key routes for back-office systems (Bearer esk_…). Errors share " +
		"one body: {\"error\": message, \"code\": token, \"field\"?: name, \"request_id\": id}.",
}

// Operations is the Operation of every commerce route, by route name. Each area of the
// interface keeps its table in its own file.
func Operations() map[string]Operation {
	out := map[string]Operation{}
	for _, area := range []map[string]Operation{
		storefrontOperations(), cartOperations(), postPurchaseOperations(), customerOperations(),
		merchOperations(), adminCommerceOperations(), adminCatalogOperations(), backOfficeOperations(), webhookOperations(),
		subscriptionOperations(),
	} {
		for name := range area {
			if _, dup := out[name]; dup {
				panic("openapi: two operations for route " + name)
			}
		}
		maps.Copy(out, area)
	}
	return out
}
