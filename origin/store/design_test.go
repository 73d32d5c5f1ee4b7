package store_test

import (
	"context"
	"sync"
	"testing"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// A store's active theme is stored and replicated with its registry entry.
func TestTenantTheme(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := &schema.Tenant{Slug: "themed", Name: "Themed", BaseURL: "https://themed.example.test", Currencies: []string{"USD"}, Theme: schema.DefaultTheme}
	if err := db.CreateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	got, err := db.TenantBySlug(ctx, "themed")
	if err != nil || got.Theme != schema.DefaultTheme {
		t.Fatalf("created: %+v, %v", got, err)
	}
	if _, err := db.UpdateTenant(ctx, "themed", func(t *schema.Tenant) error { t.Theme = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.TenantBySlug(ctx, "themed"); got.Theme != "" || schema.ActiveTheme(got).Stylesheet != schema.DefaultTheme {
		t.Errorf("updated: %+v", got)
	}
	// The registry change on the platform log carries the theme.
	tenants, err := db.Tenants(ctx)
	if err != nil || len(tenants) != 1 || tenants[0].Theme != "" {
		t.Errorf("Tenants: %v, %v", tenants, err)
	}
}

// GlobalStyles finds a theme's record; concurrent transactions that make it when missing end
// with exactly one (the losers are retried and find the winner's).
func TestGlobalStylesMadeOnce(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "styles")
	u := &schema.User{Login: "admin", Email: "admin@styles.example", DisplayName: "Admin", Role: schema.RoleAdministrator}
	if err := db.CreateUser(ctx, tn, u); err != nil {
		t.Fatal(err)
	}
	ensure := func() (schema.PostID, error) {
		var id schema.PostID
		_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
			p, err := tx.GlobalStyles(ctx, tn, schema.DefaultTheme)
			if err != nil {
				return err
			}
			if p == nil {
				p = schema.NewGlobalStyles(schema.DefaultTheme, u.ID, tx.Now())
				if err := tx.CreatePost(ctx, tn, p); err != nil {
					return err
				}
			}
			id = p.ID
			return nil
		})
		return id, err
	}
	ids := make([]schema.PostID, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := ensure()
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == 0 || id != ids[0] {
			t.Fatalf("ids %v: want one record", ids)
		}
	}
	err := db.Tx(ctx, func(tx *store.Tx) error {
		p, err := tx.GlobalStyles(ctx, tn, schema.DefaultTheme)
		if err != nil || p == nil || p.ID != ids[0] || p.Design == nil || p.Design.Theme != schema.DefaultTheme || p.Status != schema.StatusPublish {
			t.Errorf("record %+v, %v", p, err)
		}
		other, err := tx.GlobalStyles(ctx, tn, "another-theme")
		if err != nil || other != nil {
			t.Errorf("another theme's record: %+v, %v", other, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
