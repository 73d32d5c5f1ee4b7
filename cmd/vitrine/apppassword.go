package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"vitrine/origin/store"
	"vitrine/schema"
)

// runUserAppPassword is `vitrine user app-password create|list|revoke`: a staff user's
// application passwords, as the CMS routes manage them.
func runUserAppPassword(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "list" && args[0] != "revoke") {
		return fmt.Errorf("usage: vitrine user app-password create|list|revoke -tenant SLUG -login LOGIN [-name NAME] [-app-id UUID] [-uuid UUID | -all]")
	}
	verb := args[0]
	f := newFlags("user app-password " + verb)
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	login := f.FlagSet.String("login", "", "login or e-mail of the user (required)")
	name := f.FlagSet.String("name", "vitrine-cli", "create: name of the application (unique per user)")
	appID := f.FlagSet.String("app-id", "", "create: the application's UUID (optional)")
	uuid := f.FlagSet.String("uuid", "", "revoke: the password's UUID (from list)")
	all := f.FlagSet.Bool("all", false, "revoke: every password of the user")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret (the origin's; create only)")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	var key []byte
	if verb == "create" {
		k, err := parseSecret(*secret)
		if err != nil {
			return err
		}
		key = k
	}
	var cfg store.Config
	if verb == "revoke" {
		// Running origins may trust a password they verified for up to their --credential-ttl:
		// tell them at once, as an origin would.
		nc, err := c.dialNATS("vitrine-cli", c.logger("app-password"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: NATS unreachable (%v): running origins refuse the revoked passwords once their cached verification expires (--credential-ttl, default %v)\n", err, store.DefaultCredentialTTL)
		} else {
			defer nc.Close()
			defer nc.Flush()
			cfg.OnCredentialsChange = tellCredentialChanges(nc, c.feed())
		}
	}
	db, err := c.openDB(ctx, false, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.TenantBySlug(ctx, *tenant)
	if err != nil {
		return err
	}
	u, err := db.UserByLogin(ctx, t, *login)
	if err != nil {
		return err
	}
	switch verb {
	case "create":
		if *appID != "" && !schema.ValidUUID(*appID) {
			return fmt.Errorf("-app-id %q is not a UUID", *appID)
		}
		list, err := db.AppPasswords(ctx, t, u.ID)
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Name == *name {
				return fmt.Errorf("%s already has an application password named %q (names are unique per user)", u.Login, *name)
			}
		}
		pw := schema.NewAppPassword()
		a, err := db.NewAppPassword(ctx, t, u.ID, *name, *appID, schema.HashAppPassword(key, pw))
		if err != nil {
			return err
		}
		fmt.Printf("application password %s (%s) for %s (shown once): %s\n", a.UUID, a.Name, u.Login, schema.ChunkAppPassword(pw))
	case "list":
		list, err := db.AppPasswords(ctx, t, u.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "UUID\tNAME\tAPP ID\tCREATED\tLAST USED")
		for _, a := range list {
			last := "never"
			if a.LastUsed != nil {
				last = a.LastUsed.Format("2006-01-02 15:04:05Z") + " from " + a.LastIP
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", a.UUID, a.Name, a.AppID, a.CreatedAt.Format("2006-01-02 15:04:05Z"), last)
		}
		return w.Flush()
	case "revoke":
		switch {
		case *all:
			n, err := db.RevokeAppPasswords(ctx, t, u.ID)
			if err != nil {
				return err
			}
			fmt.Printf("revoked %d application passwords of %s\n", n, u.Login)
		case *uuid != "":
			if err := db.RevokeAppPassword(ctx, t, u.ID, *uuid); err != nil {
				return err
			}
			fmt.Printf("revoked application password %s of %s\n", *uuid, u.Login)
		default:
			return fmt.Errorf("revoke needs -uuid or -all")
		}
	}
	return nil
}
