package main

import (
	"context"
	"fmt"
	"testing"

	"vitrine/origin/store"
	"vitrine/schema"
)

// productOf returns the product a variant belongs to.
func (sh *shop) productOf(v schema.VariantID) schema.ProductID {
	sh.t.Helper()
	var p schema.ProductID
	sh.settle(func(tx *store.Tx) error {
		x, err := tx.Variant(context.Background(), sh.tn, v)
		if err == nil {
			p = x.ProductID
		}
		return err
	})
	return p
}

type bundleAnalytics struct {
	Orders       int     `json:"orders"`
	BundleOrders int     `json:"bundle_orders"`
	AttachRate   float64 `json:"attach_rate"`
	Units        int64   `json:"units"`
	Revenue      []struct {
		Currency string `json:"currency"`
		Amount   int64  `json:"amount"`
	} `json:"revenue"`
	TopBundles []struct {
		ProductID int64 `json:"product_id"`
		Units     int64 `json:"units"`
		Orders    int   `json:"orders"`
	} `json:"top_bundles"`
	TopComponents []struct {
		VariantID int64  `json:"variant_id"`
		SKU       string `json:"sku"`
		Units     int64  `json:"units"`
	} `json:"top_components"`
}

// Bundles through an edge: a tea set of one kettle and two mugs is stocked and sold through its
// components (its own stock the number of whole sets they make), restocked into them by a
// refund, and reported by GET /api/bundles/analytics from the orders.
func TestBundles(t *testing.T) {
	sh := newShop(t)
	kettle := sh.product("Kettle", 3000, 10)
	mug := sh.product("Mug", 1250, 7)
	set := sh.product("Tea Set", 5000, 0)
	setProduct := sh.productOf(set)
	put := func(product schema.ProductID, body string) *response {
		return sh.admin("PUT", fmt.Sprintf("/api/admin/bundles/%d", product), body)
	}
	for _, bad := range []string{`{"components":[]}`, fmt.Sprintf(`{"components":[{"variant_id":%d,"quantity":1}]}`, set),
		fmt.Sprintf(`{"components":[{"variant_id":%d,"quantity":0}]}`, kettle), `{"components":[{"variant_id":999999,"quantity":1}]}`,
		fmt.Sprintf(`{"components":[{"variant_id":%d,"quantity":1},{"variant_id":%d,"quantity":2}]}`, kettle, kettle), `{}`} {
		if r := put(setProduct, bad); r.status != 400 {
			t.Fatalf("%s: %d %s", bad, r.status, r.body)
		}
	}
	if r := put(setProduct, fmt.Sprintf(`{"components":[{"variant_id":%d,"quantity":1},{"variant_id":%d,"quantity":2}]}`, kettle, mug)); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	if got := sh.stock(set); got != 3 {
		t.Fatalf("tea sets in stock %d, want 3 (seven mugs make three)", got)
	}
	nested := sh.product("Gift Box", 9000, 0)
	if r := put(sh.productOf(nested), fmt.Sprintf(`{"components":[{"variant_id":%d,"quantity":1}]}`, set)); r.status != 400 {
		t.Fatalf("a bundle of bundles: %d %s", r.status, r.body)
	}

	withSets := sh.orderAt(sh.host, guest, nil, lineQty{set, 2})
	if k, m, s := sh.stock(kettle), sh.stock(mug), sh.stock(set); k != 8 || m != 3 || s != 1 {
		t.Fatalf("after two sets: kettle %d, mug %d, set %d; want 8, 3, 1", k, m, s)
	}
	// Only one whole set is left: the cart says so, from the set's derived stock.
	if r := sh.do("POST", "/api/cart/items", newSession(), fmt.Sprintf(`{"variant_id":%d,"quantity":2}`, set)); r.status != 409 {
		t.Fatalf("two sets of one: %d %s", r.status, r.body)
	}
	sh.orderAt(sh.host, guest, nil, lineQty{kettle, 1})

	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"erp","scopes":["write_orders"]}`)
	if r := sh.do("POST", "/api/orders/"+withSets.Reference+"/refund", "", `{"lines":[{"line":1,"quantity":1}],"restock":true}`,
		"Authorization", "Bearer "+writer, "Idempotency-Key", "set-back"); r.status != 201 {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	if k, m, s := sh.stock(kettle), sh.stock(mug), sh.stock(set); k != 8 || m != 5 || s != 2 {
		t.Fatalf("after a set came back: kettle %d, mug %d, set %d; want 8, 5, 2 (a plain kettle was sold too)", k, m, s)
	}

	analyst, _ := sh.newKey(sh.host, sh.auth, `{"name":"bi","scopes":["read_analytics"]}`)
	r := sh.do("GET", "/api/bundles/analytics", "", "", "Authorization", "Bearer "+analyst)
	if r.status != 200 {
		t.Fatalf("analytics: %d %s", r.status, r.body)
	}
	a := decode[bundleAnalytics](t, r)
	if a.Orders != 2 || a.BundleOrders != 1 || a.AttachRate != 0.5 || a.Units != 2 || len(a.Revenue) != 1 || a.Revenue[0].Amount <= 0 {
		t.Fatalf("analytics %s", r.body)
	}
	if len(a.TopBundles) != 1 || a.TopBundles[0].ProductID != int64(setProduct) || a.TopBundles[0].Units != 2 ||
		len(a.TopComponents) != 2 || a.TopComponents[0].VariantID != int64(mug) || a.TopComponents[0].Units != 4 || a.TopComponents[1].Units != 2 || a.TopComponents[0].SKU == "" {
		t.Fatalf("top bundles and components %s", r.body)
	}
	if r := sh.do("GET", "/api/bundles/analytics?from=2001-01-01T00:00:00&to=2001-02-01T00:00:00", "", "", "Authorization", "Bearer "+analyst); decode[bundleAnalytics](t, r).Orders != 0 {
		t.Fatalf("an empty window: %s", r.body)
	}
	if r := sh.do("GET", "/api/bundles/analytics?from=2030-01-01T00:00:00&to=2029-01-01T00:00:00", "", "", "Authorization", "Bearer "+analyst); r.status != 400 {
		t.Fatalf("a backwards window: %d", r.status)
	}
	if r := sh.admin("DELETE", fmt.Sprintf("/api/admin/bundles/%d", setProduct), ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := sh.admin("GET", "/api/admin/bundles", ""); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("list after delete: %d %s", r.status, r.body)
	}
}
