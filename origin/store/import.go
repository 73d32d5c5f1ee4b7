package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// This file holds the bulk lookups of catalog imports (origin/shopify): one query per batch of
// products rather than one per row. They read inside the caller's transaction and write nothing.

// ProductsBySlug returns the tenant's products whose slug is in slugs, keyed by slug.
func (tx *Tx) ProductsBySlug(ctx context.Context, t *schema.Tenant, slugs []string) (map[string]*schema.Product, error) {
	out := make(map[string]*schema.Product, len(slugs))
	if len(slugs) == 0 {
		return out, nil
	}
	err := eachRow(ctx, tx.pg, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND slug = ANY($2)`, func(row pgx.Row) error {
		p, err := scanProduct(row)
		if err != nil {
			return err
		}
		out[p.Slug] = p
		return nil
	}, t.ID, slugs)
	return out, err
}

// VariantsOfProducts returns the variants of the tenant's products in ids, keyed by product id,
// each product's ordered by position then id.
func (tx *Tx) VariantsOfProducts(ctx context.Context, t *schema.Tenant, ids []schema.ProductID) (map[schema.ProductID][]*StockedVariant, error) {
	out := make(map[schema.ProductID][]*StockedVariant, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	raw := make([]int64, len(ids))
	for i, id := range ids {
		raw[i] = int64(id)
	}
	err := eachRow(ctx, tx.pg, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND product_id = ANY($2)
		ORDER BY product_id, position, id`, func(row pgx.Row) error {
		v, err := scanVariant(row)
		if err != nil {
			return err
		}
		out[v.ProductID] = append(out[v.ProductID], v)
		return nil
	}, t.ID, raw)
	return out, err
}

// VariantsBySKU returns the tenant's variants whose SKU is in skus, keyed by SKU.
func (tx *Tx) VariantsBySKU(ctx context.Context, t *schema.Tenant, skus []string) (map[string]*StockedVariant, error) {
	out := make(map[string]*StockedVariant, len(skus))
	if len(skus) == 0 {
		return out, nil
	}
	err := eachRow(ctx, tx.pg, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND sku = ANY($2)`, func(row pgx.Row) error {
		v, err := scanVariant(row)
		if err != nil {
			return err
		}
		out[v.SKU] = v
		return nil
	}, t.ID, skus)
	return out, err
}

// CategoriesBySlug returns the tenant's categories whose slug is in slugs, keyed by slug.
func (tx *Tx) CategoriesBySlug(ctx context.Context, t *schema.Tenant, slugs []string) (map[string]*schema.Category, error) {
	out := make(map[string]*schema.Category, len(slugs))
	if len(slugs) == 0 {
		return out, nil
	}
	err := eachRow(ctx, tx.pg, `SELECT `+categoryColumns+` FROM categories WHERE tenant_id = $1 AND slug = ANY($2)`, func(row pgx.Row) error {
		c, err := scanCategory(row)
		if err != nil {
			return err
		}
		out[c.Slug] = c
		return nil
	}, t.ID, slugs)
	return out, err
}
