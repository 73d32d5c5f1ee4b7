package store_test

import (
	"context"
	"testing"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// How statements are planned: the pool's default plans each execution with its arguments; a
// catalog write's transaction (TenantWriteTx) and a pool made with GenericPlans keep a generic
// plan per statement and rule sequential scans out; the setting of a write's transaction ends
// with it.
func TestPlanCacheModes(t *testing.T) {
	ctx := context.Background()
	custom, _ := storetest.Open(t, store.Config{MaxConns: 1}) // one connection: every transaction shares its session
	generic, _ := storetest.Open(t, store.Config{MaxConns: 1, GenericPlans: true})
	tn := storetest.Tenant(t, custom, "plans")
	type want struct{ mode, seqscan string }
	tests := []struct {
		name string
		run  func(fn func(tx *store.Tx) error) error
		want want
	}{
		{"Tx", func(fn func(tx *store.Tx) error) error { return custom.Tx(ctx, fn) }, want{"force_custom_plan", "on"}},
		{"TenantWriteTx", func(fn func(tx *store.Tx) error) error { _, err := custom.TenantWriteTx(ctx, tn, fn); return err },
			want{"force_generic_plan", "off"}},
		{"Tx after a TenantWriteTx", func(fn func(tx *store.Tx) error) error { return custom.Tx(ctx, fn) }, want{"force_custom_plan", "on"}},
		{"WriteTx", func(fn func(tx *store.Tx) error) error { _, err := custom.WriteTx(ctx, fn); return err }, want{"force_custom_plan", "on"}},
		{"Tx of a GenericPlans pool", func(fn func(tx *store.Tx) error) error { return generic.Tx(ctx, fn) }, want{"force_generic_plan", "off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got want
			err := tt.run(func(tx *store.Tx) error {
				var err error
				if got.mode, err = tx.Setting(ctx, "plan_cache_mode"); err != nil {
					return err
				}
				got.seqscan, err = tx.Setting(ctx, "enable_seqscan")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("plan_cache_mode %s, enable_seqscan %s; want %s, %s", got.mode, got.seqscan, tt.want.mode, tt.want.seqscan)
			}
		})
	}
}

// A catalog write finds a free slug with its pattern written into the query (the simple
// protocol): numbered forms are found, other suffixes ignored, and quotes, LIKE's wildcards and
// backslashes in a slug are taken literally.
func TestFreeSlugInAWriteTransaction(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "slugs")
	for _, s := range []string{"lamp", "lamp-2", "lamp-4", "lamp-x", "lampshade", "desk-2"} {
		p := &schema.Product{Slug: s, Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 100}}
		if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, p) }); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	tests := []struct {
		name, slug, want string
		free             func(tx *store.Tx, slug string) (string, error)
	}{
		{"taken with numbered forms", "lamp", "lamp-3", nil},
		{"only a numbered form taken", "desk", "desk", nil},
		{"free", "chair", "chair", nil},
		{"quotes and wildcards", `it's_50%\ off`, `it's_50%\ off`, func(tx *store.Tx, slug string) (string, error) {
			return tx.UniquePostSlug(ctx, tn, "post", slug, 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			_, err := db.TenantWriteTx(ctx, tn, func(tx *store.Tx) error {
				var err error
				if tt.free != nil {
					got, err = tt.free(tx, tt.slug)
				} else {
					got, err = tx.FreeProductSlug(ctx, tn, tt.slug)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("free slug for %q = %q, want %q", tt.slug, got, tt.want)
			}
		})
	}
}
