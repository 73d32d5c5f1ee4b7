package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"vitrine/origin/seed"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

func runMigrate(ctx context.Context, args []string) error {
	f := newFlags("migrate")
	c := f.common()
	if err := f.Parse(args); err != nil {
		return err
	}
	db, err := c.openDB(ctx, true, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	epoch, _ := db.Epoch(ctx)
	fmt.Printf("database migrated (epoch %s)\n", epoch)
	return nil
}

func runRebuild(ctx context.Context, args []string) error {
	f := newFlags("replica rebuild")
	c := f.common()
	if err := f.Parse(args); err != nil {
		return err
	}
	log := c.logger("rebuild")
	nc, err := c.dialNATS("vitrine-rebuild", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := relay.New(db, nc, relay.Config{Feed: c.feed(), Holder: "rebuild", Logger: log})
	if err != nil {
		return err
	}
	start := time.Now()
	err = r.Rebuild(ctx, func(done, total int, name string) {
		fmt.Fprintf(os.Stderr, "\rrebuilt %d/%d logs (%s)%s", done, total, name, strings.Repeat(" ", 20))
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	st := r.Stats()
	fmt.Printf("state stream rebuilt: %d messages in %d batches, %s\n", st.Published, st.Batches, time.Since(start).Round(time.Millisecond))
	return nil
}

func runTenantCreate(ctx context.Context, args []string) error {
	f := newFlags("tenant create")
	c := f.common()
	slug := f.FlagSet.String("slug", "", "tenant slug (required; immutable)")
	name := f.FlagSet.String("name", "", "store name (default: the slug)")
	base := f.FlagSet.String("base-url", "", "canonical base URL of the store's API (required)")
	domains := f.FlagSet.String("domains", "", "comma-separated custom host names")
	shard := f.FlagSet.Int("shard", 0, "shard")
	tz := f.FlagSet.String("timezone", "UTC", "IANA timezone")
	currencies := f.FlagSet.String("currencies", "USD", "comma-separated currency codes, the default first")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *name == "" {
		*name = *slug
	}
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	t := &schema.Tenant{Slug: *slug, Name: *name, BaseURL: *base, Shard: *shard, Timezone: *tz,
		Currencies: splitList(*currencies), Domains: splitList(*domains)}
	if err := db.CreateTenant(ctx, t); err != nil {
		return err
	}
	fmt.Printf("tenant %s created (id %s, shard %d)\n", t.Slug, t.ID, t.Shard)
	return nil
}

// runTenantUpdate changes a tenant's settings: only the flags given are applied.
func runTenantUpdate(ctx context.Context, args []string) error {
	f := newFlags("tenant update")
	c := f.common()
	slug := f.FlagSet.String("slug", "", "tenant slug (required)")
	name := f.FlagSet.String("name", "", "store name")
	base := f.FlagSet.String("base-url", "", "canonical base URL of the store's API")
	domains := f.FlagSet.String("domains", "", "comma-separated custom host names (replaces the list)")
	currencies := f.FlagSet.String("currencies", "", "comma-separated currency codes, the default first (replaces the list)")
	rateLimit := f.FlagSet.Int("rate-limit", 0, "requests per minute per client address on the store's public routes (0: the edge default)")
	status := f.FlagSet.String("status", "", "active or suspended")
	if err := f.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	f.FlagSet.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.UpdateTenant(ctx, *slug, func(t *schema.Tenant) error {
		if given["name"] {
			t.Name = *name
		}
		if given["base-url"] {
			t.BaseURL = *base
		}
		if given["domains"] {
			t.Domains = splitList(*domains)
		}
		if given["currencies"] {
			t.Currencies = splitList(*currencies)
		}
		if given["rate-limit"] {
			t.RateLimit = *rateLimit
		}
		if given["status"] {
			t.Status = schema.TenantStatus(*status)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("tenant %s updated (version %d, rate limit %d/min)\n", t.Slug, t.Version, t.RateLimit)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runUserCreate(ctx context.Context, args []string) error {
	f := newFlags("user create")
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	login := f.FlagSet.String("login", "", "login (required)")
	email := f.FlagSet.String("email", "", "e-mail address (required)")
	name := f.FlagSet.String("name", "", "display name")
	role := f.FlagSet.String("role", "administrator", "administrator, shop_manager, editor, author, contributor or subscriber")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret (the origin's)")
	if err := f.Parse(args); err != nil {
		return err
	}
	key, db, t, err := userCommand(ctx, c, *secret, *tenant)
	if err != nil {
		return err
	}
	defer db.Close()
	u := &schema.User{Login: *login, Email: *email, DisplayName: *name, Role: schema.Role(*role)}
	if err := db.CreateUser(ctx, t, u); err != nil {
		return err
	}
	pw, err := newPassword(ctx, db, key, t, u.ID, "vitrine-cli")
	if err != nil {
		return err
	}
	fmt.Printf("user %s (id %d, %s) created on %s\napplication password (shown once): %s\n", u.Login, u.ID, u.Role, t.Slug, schema.ChunkAppPassword(pw))
	return nil
}

func runUserPassword(ctx context.Context, args []string) error {
	f := newFlags("user password")
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	login := f.FlagSet.String("login", "", "login or e-mail (required)")
	name := f.FlagSet.String("name", "vitrine-cli", "name of the application")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret (the origin's)")
	if err := f.Parse(args); err != nil {
		return err
	}
	key, db, t, err := userCommand(ctx, c, *secret, *tenant)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := db.UserByLogin(ctx, t, *login)
	if err != nil {
		return err
	}
	pw, err := newPassword(ctx, db, key, t, u.ID, *name)
	if err != nil {
		return err
	}
	fmt.Printf("application password for %s (shown once): %s\n", u.Login, schema.ChunkAppPassword(pw))
	return nil
}

// userCommand prepares the user commands: the server secret, the database and the tenant.
func userCommand(ctx context.Context, c common, secret, tenant string) ([]byte, *store.DB, *schema.Tenant, error) {
	key, err := parseSecret(secret)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := db.TenantBySlug(ctx, tenant)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return key, db, t, nil
}

func newPassword(ctx context.Context, db *store.DB, key []byte, t *schema.Tenant, user schema.UserID, name string) (string, error) {
	pw := schema.NewAppPassword()
	if _, err := db.CreateAppPassword(ctx, t, user, name, schema.HashAppPassword(key, pw)); err != nil {
		return "", err
	}
	return pw, nil
}

func runSeed(ctx context.Context, args []string) error {
	f := newFlags("seed")
	c := f.common()
	tenant := f.FlagSet.String("tenant", "demo", "tenant slug")
	login := f.FlagSet.String("author", "admin", "login of the posts' author")
	products := f.FlagSet.Int("products", seed.DefaultProducts, "products")
	posts := f.FlagSet.Int("posts", seed.DefaultPosts, "published posts")
	seedN := f.FlagSet.Int64("seed", seed.DefaultSeed, "random seed (same seed, same catalog)")
	if err := f.Parse(args); err != nil {
		return err
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
	u, err := db.UserByLogin(ctx, t, *login)
	if err != nil {
		return fmt.Errorf("author %s: %w", *login, err)
	}
	return seedTenant(ctx, db, t, u.ID, seed.Options{Products: *products, Posts: *posts, Seed: *seedN})
}

// seedTenant seeds with a progress line on stderr.
func seedTenant(ctx context.Context, db *store.DB, t *schema.Tenant, author schema.UserID, opt seed.Options) error {
	start := time.Now()
	opt.Author = author
	opt.Progress = func(done, total int, stage string) {
		fmt.Fprintf(os.Stderr, "\rseeding %s: %-10s %5d/%-5d", t.Slug, stage, done, total)
	}
	sum, err := seed.Demo(ctx, db, t, opt)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seeded %s in %s: %d products, %d variants, %d categories, %d currencies, %d posts\n",
		t.Slug, time.Since(start).Round(time.Millisecond), sum.Products, sum.Variants, sum.Categories, sum.Currencies, sum.Posts)
	return nil
}
