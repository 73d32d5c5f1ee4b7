package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	serverkeys "vitrine/origin/keys"
	"vitrine/origin/store"
	"vitrine/schema"
)

// runKey is `vitrine key create|list|revoke|roll`: a store's server keys, as the admin API
// (/api/admin/api-keys) manages them. The plaintext of a new key is printed once.
func runKey(ctx context.Context, args []string) error {
	verbs := map[string]bool{"create": true, "list": true, "revoke": true, "roll": true}
	if len(args) == 0 || !verbs[args[0]] {
		return fmt.Errorf("usage: vitrine key create|list|revoke|roll -tenant SLUG [-name NAME -scopes read_orders,write_orders,read_analytics] [-expires RFC3339] [-id UUID] [-overlap DURATION]")
	}
	verb := args[0]
	f := newFlags("key " + verb)
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	name := f.FlagSet.String("name", "", "create: what the key is for (required)")
	scopes := f.FlagSet.String("scopes", "", "create: comma-separated scopes (read_orders, write_orders, read_analytics); none calls nothing")
	expires := f.FlagSet.String("expires", "", "create, roll: expiry (RFC 3339; default one year)")
	id := f.FlagSet.String("id", "", "revoke, roll: the key's id (from list)")
	overlap := f.FlagSet.Duration("overlap", serverkeys.DefaultOverlap, "roll: how long the old key keeps working")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret (the origin's; create and roll)")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	var key []byte
	if verb == "create" || verb == "roll" {
		k, err := parseSecret(*secret)
		if err != nil {
			return err
		}
		key = k
	}
	var expiry time.Time
	if *expires != "" {
		t, err := time.Parse(time.RFC3339, *expires)
		if err != nil {
			return fmt.Errorf("-expires: %w", err)
		}
		expiry = t
	}
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.TenantBySlug(ctx, *tenant)
	if err != nil {
		return err
	}
	now := time.Now()
	switch verb {
	case "create":
		var list []schema.Scope
		for _, s := range strings.Split(*scopes, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, schema.Scope(s))
			}
		}
		plain, k, err := serverkeys.New(key, *name, list, expiry, now)
		if err != nil {
			return err
		}
		if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateServerKey(ctx, t, k) }); err != nil {
			return err
		}
		fmt.Printf("server key %s (%s), scopes [%s], expires %s (shown once):\n%s\n", k.ID, k.Name, *scopes, k.ExpiresAt.Format(time.RFC3339), plain)
	case "roll":
		plain, next, err := serverkeys.New(key, "rolled", nil, expiry, now)
		if err != nil {
			return err
		}
		next, err = store.TxValue(ctx, db, func(tx *store.Tx) (*store.ServerKey, error) {
			return tx.RollServerKey(ctx, t, *id, next, now.Add(*overlap))
		})
		if err != nil {
			return err
		}
		fmt.Printf("server key %s replaces %s (which works until %s); shown once:\n%s\n", next.ID, *id, now.Add(*overlap).Format(time.RFC3339), plain)
	case "revoke":
		if _, err := store.TxValue(ctx, db, func(tx *store.Tx) (*store.ServerKey, error) { return tx.RevokeServerKey(ctx, t, *id) }); err != nil {
			return err
		}
		fmt.Printf("server key %s revoked\n", *id)
	case "list":
		list, err := store.TxValue(ctx, db, func(tx *store.Tx) ([]*store.ServerKey, error) { return tx.ServerKeys(ctx, t) })
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tNAME\tKEY\tSCOPES\tSTATUS\tEXPIRES\tLAST USED")
		for _, k := range list {
			v := serverkeys.ViewOf(k, now)
			used := "never"
			if v.LastUsedAt != nil {
				used = v.LastUsedAt.Format(time.RFC3339)
			}
			sc := make([]string, len(v.Scopes))
			for i, s := range v.Scopes {
				sc[i] = string(s)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Name, v.Redacted, strings.Join(sc, ","), v.Status, v.ExpiresAt.Format(time.RFC3339), used)
		}
		return w.Flush()
	}
	return nil
}
