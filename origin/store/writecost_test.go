package store_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// productView is what the admin API answers a product write with.
type productView struct {
	Product  *schema.Product
	Variants []*store.StockedVariant
}

// TestProductPriceWriteCost counts the round trips and statements of the transaction behind
// PATCH /api/admin/products/{id} (a price change, answered with the product and its variants),
// the hot write of the freshness bench, and holds them to their budget.
func TestProductPriceWriteCost(t *testing.T) {
	ctx := context.Background()
	var c storetest.Counter
	db, _ := storetest.Open(t, store.Config{Tracer: &c})
	tn := storetest.Tenant(t, db, "shop")
	var id schema.ProductID
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		p := product("lamp")
		if err := tx.CreateProduct(ctx, tn, p); err != nil {
			return err
		}
		id = p.ID
		return tx.CreateVariant(ctx, tn, &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: "LAMP"}, Stock: 5})
	}); err != nil {
		t.Fatal(err)
	}
	patch := func(price int64) (productView, error) {
		var out productView
		_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
			// What origin's updateProduct does.
			old, vs, err := tx.ProductForUpdate(ctx, tn, id)
			if err != nil {
				return err
			}
			p := *old
			p.Prices = schema.Prices{"USD": price}
			if err := tx.UpdateProductVariants(ctx, tn, old, &p, vs); err != nil {
				return err
			}
			out = productView{&p, vs}
			return nil
		})
		return out, err
	}
	// Warm the connection's statement cache (a batch's first run prepares its statements).
	for i := range 3 {
		if _, err := patch(int64(2000 + i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Reset()
	out, err := patch(2500)
	if err != nil {
		t.Fatal(err)
	}
	trips, stmts := c.Counts()
	t.Logf("PATCH price: %d round trips, %d statements:\n%s", trips, stmts, strings.Join(c.Texts(), "\n"))
	// Before: 10 round trips and 10 statements (BEGIN, SELECT 1, the product, the log's block
	// reserved, the product's row, the variants, the log settled, two outboxes, COMMIT); then 4
	// and 10 (BEGIN and SELECT 1, the reads with the log's lock, the writes, COMMIT). Now the
	// BEGIN rides with the reads and the COMMIT with the writes.
	if trips > 2 || stmts > 9 {
		t.Errorf("PATCH price takes %d round trips and %d statements; the budget is 2 and 9", trips, stmts)
	}
	if out.Product.Prices["USD"] != 2500 || len(out.Variants) != 1 || out.Variants[0].SKU != "LAMP" {
		t.Errorf("answer = %+v, %+v", out.Product, out.Variants)
	}
}

// TestProductForUpdate checks the handler's path (ProductForUpdate, UpdateProductVariants):
// the answer equals what the database then holds, variants moved with the product included, and
// the put-off row write fails the transaction as a direct one would.
func TestProductForUpdate(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	ids := map[string]schema.ProductID{}
	for _, slug := range []string{"lamp", "desk"} {
		if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
			p := product(slug)
			if err := tx.CreateProduct(ctx, tn, p); err != nil {
				return err
			}
			ids[slug] = p.ID
			for i := range 2 {
				v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: slug + string(rune('a'+i)), Position: i}, Stock: 3}
				if err := tx.CreateVariant(ctx, tn, v); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		id       schema.ProductID
		edit     func(p *schema.Product)
		wantCode schema.Code
	}{
		{"price", ids["lamp"], func(p *schema.Product) { p.Prices = schema.Prices{"USD": 123} }, ""},
		{"to draft, variants move", ids["lamp"], func(p *schema.Product) { p.Status = schema.ProductDraft }, ""},
		{"back to active", ids["lamp"], func(p *schema.Product) { p.Status = schema.ProductActive }, ""},
		{"slug taken", ids["lamp"], func(p *schema.Product) { p.Slug = "desk" }, schema.CodeConflict},
		{"missing", 999999, func(p *schema.Product) {}, schema.CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got productView
			commits, err := db.WriteTx(ctx, func(tx *store.Tx) error {
				old, vs, err := tx.ProductForUpdate(ctx, tn, tc.id)
				if err != nil {
					return err
				}
				p := *old
				tc.edit(&p)
				if err := tx.UpdateProductVariants(ctx, tn, old, &p, vs); err != nil {
					return err
				}
				got = productView{&p, vs}
				return nil
			})
			if tc.wantCode != "" {
				if schema.ErrorCode(err) != tc.wantCode {
					t.Fatalf("error = %v, want code %s", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want productView
			if err := db.Tx(ctx, func(tx *store.Tx) error {
				p, err := tx.Product(ctx, tn, tc.id)
				if err != nil {
					return err
				}
				vs, err := tx.Variants(ctx, tn, tc.id)
				want = productView{p, vs}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("answered %+v %+v\nstored   %+v %+v", got.Product, got.Variants, want.Product, want.Variants)
			}
			// The transaction's last version is the product's, or a variant's that moved after it.
			last := want.Product.Version
			for _, v := range want.Variants {
				last = max(last, v.Version)
			}
			if len(commits) != 1 || commits[0].Version != last {
				t.Errorf("commits %+v, last version written %d", commits, last)
			}
		})
	}
}
