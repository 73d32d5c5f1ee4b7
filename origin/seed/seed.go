package seed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"vitrine/origin/store"
	"vitrine/schema"
)

// Defaults of Options.
const (
	DefaultProducts      = 2000
	DefaultPosts         = 50
	DefaultSeed          = 1
	DefaultBatchProducts = 100
)

// postsPerTxn is how many posts one transaction creates (one change each).
const postsPerTxn = 100

// Random streams: products and posts draw from separate PCG streams of the same seed, so that
// the catalog does not change when only the number of posts does.
const (
	streamCatalog = 1
	streamPosts   = 2
)

// Options controls a seed. Zero values mean the defaults.
type Options struct {
	// Products is the number of products (default DefaultProducts).
	Products int
	// Posts is the number of published posts (default DefaultPosts); about 10% more are
	// created as drafts and not counted.
	Posts int
	// Seed makes the seed deterministic: the same Seed and Options give the same catalog (ids,
	// slugs, prices, texts) on an empty tenant (default DefaultSeed, so 0 and 1 are the same).
	Seed int64
	// Author is the author of the posts. It is required, since Posts is never zero once the
	// default applies.
	Author schema.UserID
	// Progress, when set, is called after each transaction with the work done so far in a stage
	// ("currencies", "categories", "products", "posts").
	Progress func(done, total int, stage string)
	// BatchProducts is the number of products (with their variants) per transaction (default
	// DefaultBatchProducts). It is capped so that a transaction stays within
	// schema.MaxChangesPerTxn changes.
	BatchProducts int
}

// withDefaults checks o and fills its zero values.
func (o Options) withDefaults() (Options, error) {
	if o.Products < 0 || o.Posts < 0 || o.BatchProducts < 0 {
		return o, fmt.Errorf("seed: Products, Posts and BatchProducts must not be negative")
	}
	if o.Products == 0 {
		o.Products = DefaultProducts
	}
	if o.Posts == 0 {
		o.Posts = DefaultPosts
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.BatchProducts == 0 {
		o.BatchProducts = DefaultBatchProducts
	}
	o.BatchProducts = min(o.BatchProducts, maxBatchProducts)
	if o.Posts > 0 && o.Author <= 0 {
		return o, fmt.Errorf("seed: Options.Author is required to write posts")
	}
	return o, nil
}

// progress reports to o.Progress when it is set.
func (o *Options) progress(done, total int, stage string) {
	if o.Progress != nil {
		o.Progress(done, total, stage)
	}
}

// ErrNotEmpty is returned when the tenant already has products: seeding only fills an empty
// store.
var ErrNotEmpty = errors.New("seed: the tenant already has products")

// Summary counts what a seed created.
type Summary struct {
	// Currencies counts the currencies created (one that already existed is kept as is).
	Currencies int
	Categories int
	Products   int
	Variants   int
	// Posts counts the published posts; drafts are not counted.
	Posts int
}

// Demo fills an empty tenant with a demo catalog: 3 currencies, a category tree, Products
// products with variants, and Posts published CMS posts (plus a few drafts).
//
// The tenant's default currency must be USD (prices are generated in USD). Demo returns
// ErrNotEmpty, having written nothing, when the tenant already has products. It writes in
// several bounded transactions: if it fails midway, what was committed stays, and the tenant
// must be emptied (or replaced) before seeding again. The currencies it enables are added to the
// tenant's registry entry, not to t: reload the tenant to see them.
func Demo(ctx context.Context, db *store.DB, t *schema.Tenant, opt Options) (Summary, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	if t.DefaultCurrency() != "USD" {
		return Summary{}, fmt.Errorf("seed: tenant %s has default currency %q; the demo catalog needs USD", t.Slug, t.DefaultCurrency())
	}
	var sum Summary
	if sum.Currencies, err = createCurrencies(ctx, db, t); err != nil {
		return sum, err
	}
	opt.progress(len(demoCurrencies), len(demoCurrencies), "currencies")

	nodes := categoryTree()
	if err := createCategories(ctx, db, t, nodes); err != nil {
		return sum, err
	}
	sum.Categories = len(nodes)
	opt.progress(len(nodes), len(nodes), "categories")

	cat := newCatalog(rand.New(rand.NewPCG(uint64(opt.Seed), streamCatalog)), nodes)
	for sum.Products < opt.Products {
		batch := make([]productPlan, min(opt.BatchProducts, opt.Products-sum.Products))
		for i := range batch {
			batch[i] = cat.product(sum.Products + i + 1)
		}
		if err := createProducts(ctx, db, t, batch); err != nil {
			return sum, fmt.Errorf("seed: products %d to %d: %w", sum.Products+1, sum.Products+len(batch), err)
		}
		for i := range batch {
			sum.Variants += len(batch[i].variants)
		}
		sum.Products += len(batch)
		opt.progress(sum.Products, opt.Products, "products")
	}

	posts := planPosts(rand.New(rand.NewPCG(uint64(opt.Seed), streamPosts)), opt.Posts, draftsFor(opt.Posts))
	for done := 0; done < len(posts); {
		batch := posts[done:min(done+postsPerTxn, len(posts))]
		if err := createPosts(ctx, db, t, opt.Author, batch); err != nil {
			return sum, fmt.Errorf("seed: posts %d to %d: %w", done+1, done+len(batch), err)
		}
		done += len(batch)
		sum.Posts = min(done, opt.Posts)
		opt.progress(done, len(posts), "posts")
	}
	return sum, nil
}

// createCurrencies checks that the tenant has no products and creates the demo currencies it
// lacks, in one transaction. It returns how many it created.
func createCurrencies(ctx context.Context, db *store.DB, t *schema.Tenant) (int, error) {
	var created int
	_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		created = 0
		_, total, err := tx.ListProducts(ctx, t, "", 0, 1)
		if err != nil {
			return err
		}
		if total > 0 {
			return ErrNotEmpty
		}
		for _, c := range demoCurrencies {
			if _, err := tx.Currency(ctx, t, c.Code); err == nil {
				continue
			} else if schema.ErrorCode(err) != schema.CodeNotFound {
				return err
			}
			if err := tx.CreateCurrency(ctx, t, &c); err != nil {
				return err
			}
			created++
		}
		return nil
	})
	if errors.Is(err, ErrNotEmpty) {
		return 0, ErrNotEmpty
	}
	if err != nil {
		return 0, fmt.Errorf("seed: currencies: %w", err)
	}
	return created, nil
}

// createCategories creates the category tree, parents first, and sets the nodes' ids. The tree
// is split into transactions of at most schema.MaxChangesPerTxn categories (one, in practice);
// parents always sit in an earlier or the same transaction as their children.
func createCategories(ctx context.Context, db *store.DB, t *schema.Tenant, nodes []node) error {
	for start := 0; start < len(nodes); start += schema.MaxChangesPerTxn {
		chunk := nodes[start:min(start+schema.MaxChangesPerTxn, len(nodes))]
		_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
			for i := range chunk {
				n := &chunk[i]
				c := &schema.Category{Slug: n.slug, Name: n.name, Description: n.description, Position: n.position}
				if n.parent >= 0 {
					c.ParentID = nodes[n.parent].id
				}
				if err := tx.CreateCategory(ctx, t, c); err != nil {
					return fmt.Errorf("category %s: %w", n.slug, err)
				}
				n.id = c.ID
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: categories: %w", err)
		}
	}
	return nil
}

// createProducts writes one batch of products and their variants in one transaction.
func createProducts(ctx context.Context, db *store.DB, t *schema.Tenant, batch []productPlan) error {
	changes := 0
	for i := range batch {
		changes += batch[i].changes()
	}
	if changes > schema.MaxChangesPerTxn {
		return fmt.Errorf("batch records %d changes, more than %d", changes, schema.MaxChangesPerTxn)
	}
	_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		for i := range batch {
			p := &batch[i]
			if err := tx.CreateProduct(ctx, t, &p.product); err != nil {
				return fmt.Errorf("product %s: %w", p.product.Slug, err)
			}
			for j := range p.variants {
				v := &p.variants[j]
				v.ProductID = p.product.ID
				if err := tx.CreateVariant(ctx, t, v); err != nil {
					return fmt.Errorf("variant %s: %w", v.SKU, err)
				}
			}
		}
		return nil
	})
	return err
}

// createPosts writes one batch of posts in one transaction, dated relative to its clock.
func createPosts(ctx context.Context, db *store.DB, t *schema.Tenant, author schema.UserID, batch []postPlan) error {
	_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		for i := range batch {
			p := batch[i].post(tx.Now(), author)
			slug, err := tx.UniquePostSlug(ctx, t, p.Type, schema.Slugify(p.Title), 0)
			if err != nil {
				return err
			}
			p.Slug = slug
			if err := tx.CreatePost(ctx, t, p); err != nil {
				return fmt.Errorf("post %s: %w", p.Slug, err)
			}
		}
		return nil
	})
	return err
}
