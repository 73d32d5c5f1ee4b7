package main

import (
	"context"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// Two origins on one database, wired as runOrigin wires them: a revocation on one reaches the
// other's credential cache over NATS, long before the cache's TTL (an hour here) would.
func TestCredentialChangesReachOtherOrigins(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Run(t)
	fc := feed.Config{}.WithDefaults()
	dsn := storetest.NewMigratedDatabase(t)
	open := func() *store.DB {
		nc := ns.Connect(t)
		db, err := store.Open(ctx, dsn, store.Config{CredentialTTL: time.Hour, OnCredentialsChange: tellCredentialChanges(nc, fc)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		sub, err := hearCredentialChanges(nc, fc, db)
		if err != nil {
			t.Fatal(err)
		}
		if err := sub.SetPendingLimits(-1, -1); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil { // the subscription is in place before any change
			t.Fatal(err)
		}
		return db
	}
	a := open()
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := open()
	tn := storetest.Tenant(t, a, "shop")
	u := &schema.User{Login: "ada", Email: "ada@example.test", Role: schema.RoleAdministrator}
	if err := a.CreateUser(ctx, tn, u); err != nil {
		t.Fatal(err)
	}
	hash := schema.HashAppPassword([]byte("0123456789abcdef0123456789abcdef"), "the password")
	ap, err := a.NewAppPassword(ctx, tn, u.ID, "phone", "", hash)
	if err != nil {
		t.Fatal(err)
	}
	auth := func(db *store.DB) error {
		_, err := db.AuthenticateUse(ctx, tn, "ada", hash, "192.0.2.1", time.Now())
		return err
	}
	if err := auth(b); err != nil {
		t.Fatal(err)
	}
	if err := auth(b); err != nil || b.CredentialStats().Hits != 1 {
		t.Fatalf("b did not keep the verification: %v, %+v", err, b.CredentialStats())
	}
	if err := a.RevokeAppPassword(ctx, tn, u.ID, ap.UUID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the other origin to refuse the revoked password", func() bool {
		return schema.ErrorCode(auth(b)) == schema.CodeUnauthorized
	})
	if st := b.CredentialStats(); st.Forgets == 0 {
		t.Fatalf("b refused without being told: %+v", st)
	}
}
