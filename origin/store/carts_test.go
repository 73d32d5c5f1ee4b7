package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// Concurrent mutations of one cart lose nothing: parallel first adds of different variants to a
// cart that does not exist yet all land in one cart.
func TestParallelAddsToOneCart(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{MaxRetries: 50, RetryBudget: 30 * time.Second})
	tn := storetest.Tenant(t, db, "shop")
	const n = 20
	var variants []schema.VariantID
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		p := &schema.Product{Slug: "tee", Title: "Tee", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1000}}
		if err := tx.CreateProduct(ctx, tn, p); err != nil {
			return err
		}
		variants = variants[:0]
		for i := 0; i < n; i++ {
			v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("TEE-%d", i)}, Stock: 5}
			if err := tx.CreateVariant(ctx, tn, v); err != nil {
				return err
			}
			variants = append(variants, v.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	session := store.CartSessionHash("Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- db.Tx(ctx, func(tx *store.Tx) error {
				c, err := tx.OpenCart(ctx, tn, session, "USD", time.Hour)
				if err != nil {
					return err
				}
				if err := tx.SetCartItem(ctx, tn, c, v, 1); err != nil {
					return err
				}
				return tx.SaveCart(ctx, tn, c, time.Hour)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c := readCart(t, db, tn, session, (*store.Tx).Cart)
	if c == nil {
		t.Fatal("no cart after the parallel adds")
	}
	if len(c.Items) != n || c.Revision != n {
		t.Fatalf("cart has %d items at revision %d, want %d and %d", len(c.Items), c.Revision, n, n)
	}
}

func TestCartExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	db, _ := storetest.Open(t, store.Config{Now: func() time.Time { return clock() }})
	tn := storetest.Tenant(t, db, "shop")
	session := store.CartSessionHash("c2Vzc2lvbmZvcmV4cGlyeXRlc3Q")
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		c, err := tx.OpenCart(ctx, tn, session, "USD", time.Hour)
		if err != nil {
			return err
		}
		return tx.SaveCart(ctx, tn, c, time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if c := readCart(t, db, tn, session, (*store.Tx).LockCart); c != nil {
		t.Fatal("an expired cart was returned")
	}
	// LockCart deleted the expired cart: it stays gone even for a clock before its expiry.
	now = now.Add(-2 * time.Hour)
	if c := readCart(t, db, tn, session, (*store.Tx).Cart); c != nil {
		t.Fatal("the expired cart was not deleted")
	}
}

// readCart reads a session's cart in a transaction of its own with read (Tx.Cart or Tx.LockCart).
func readCart(t *testing.T, db *store.DB, tn *schema.Tenant, session []byte,
	read func(*store.Tx, context.Context, *schema.Tenant, []byte) (*store.Cart, error)) *store.Cart {
	t.Helper()
	var c *store.Cart
	if err := db.Tx(context.Background(), func(tx *store.Tx) error {
		var err error
		c, err = read(tx, context.Background(), tn, session)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return c
}
