package store_test

import (
	"context"
	"testing"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// The one free-slug rule (products, posts, terms): the slug, else its first free numbered form.
func TestFreeSlugs(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	for _, slug := range []string{"lamp", "lamp-2", "lamp-4", "desk-x-2", "deskx", "chair-2", "chairs"} {
		if err := db.Tx(ctx, func(tx *store.Tx) error {
			return tx.CreateProduct(ctx, tn, &schema.Product{Slug: slug, Title: slug, Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ base, want string }{
		{"lamp", "lamp-3"},
		{"desk-x", "desk-x"}, // only a numbered form is taken
		{"deskx", "deskx-2"},
		{"chair", "chair"}, // "chairs" is not one of its numbered forms
		{"sofa", "sofa"},
	}
	for _, c := range cases {
		var got string
		if err := db.Tx(ctx, func(tx *store.Tx) (err error) {
			got, err = tx.FreeProductSlug(ctx, tn, c.base)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("FreeProductSlug(%q) = %q, want %q", c.base, got, c.want)
		}
	}
}
