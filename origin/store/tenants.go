package store

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

const tenantColumns = `id::TEXT, slug, name, base_url, shard, status, timezone, currencies, rate_limit, theme, created_at, updated_at, version,
	COALESCE((SELECT array_agg(domain ORDER BY domain) FROM tenant_domains d WHERE d.tenant_id = tenants.id), '{}')`

func scanTenant(row pgx.Row) (*schema.Tenant, error) {
	var t schema.Tenant
	var status string
	err := row.Scan(&t.ID, &t.Slug, &t.Name, &t.BaseURL, &t.Shard, &status, &t.Timezone, &t.Currencies, &t.RateLimit,
		&t.Theme, &t.CreatedAt, &t.UpdatedAt, &t.Version, &t.Domains)
	if err != nil {
		return nil, err
	}
	t.Status = schema.TenantStatus(status)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return &t, nil
}

// CreateTenant registers a tenant: its registry row and domains, its log, and the registry change
// on the platform log. It fills t.ID, timestamps and version.
func (db *DB) CreateTenant(ctx context.Context, t *schema.Tenant) error {
	if t.Status == "" {
		t.Status = schema.TenantActive
	}
	if t.Timezone == "" {
		t.Timezone = "UTC"
	}
	t.BaseURL = schema.CanonicalBaseURL(t.BaseURL)
	if err := schema.ValidateTenant(t); err != nil {
		return err
	}
	return db.Tx(ctx, func(tx *Tx) error {
		t.ID = NewUUID()
		t.CreatedAt, t.UpdatedAt = tx.Now(), tx.Now()
		if _, err := tx.pg.Exec(ctx, `INSERT INTO log_versions (log_id, version) VALUES ($1, 0)`, t.ID); err != nil {
			return err
		}
		if err := tx.putTenant(ctx, t, true); err != nil {
			return err
		}
		_, err := tx.pg.Exec(ctx, `INSERT INTO tenants (id, slug, name, base_url, shard, status, timezone, currencies, created_at, updated_at, version, rate_limit, theme)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			t.ID, t.Slug, t.Name, t.BaseURL, t.Shard, string(t.Status), t.Timezone, t.Currencies, t.CreatedAt, t.UpdatedAt, t.Version, t.RateLimit, t.Theme)
		if err != nil {
			return err
		}
		for _, d := range t.Domains {
			if _, err := tx.pg.Exec(ctx, `INSERT INTO tenant_domains (domain, tenant_id) VALUES ($1, $2)`, d, t.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// putTenant records a tenant's registry change on the platform log and sets t.Version.
func (tx *Tx) putTenant(ctx context.Context, t *schema.Tenant, created bool) error {
	l, err := tx.platformLog(ctx)
	if err != nil {
		return err
	}
	old := []schema.Visibility{schema.Pub}
	if created {
		old = nil
	}
	return tx.writeEntity(l, schema.KindTenant, t.Slug, old, []schema.Visibility{schema.Pub},
		func(v int64) { t.Version = v },
		func(schema.Visibility) any { return t })
}

// UpdateTenant rewrites a tenant's registry entry (name, base URL, domains, shard, status,
// timezone, currencies, rate limit, active theme). The slug and id never change.
func (db *DB) UpdateTenant(ctx context.Context, slug string, edit func(t *schema.Tenant) error) (*schema.Tenant, error) {
	var out *schema.Tenant
	err := db.Tx(ctx, func(tx *Tx) error {
		t, err := tx.tenant(ctx, slug)
		if err != nil {
			return err
		}
		id, oldSlug := t.ID, t.Slug
		if err := edit(t); err != nil {
			return err
		}
		t.ID, t.Slug = id, oldSlug
		t.BaseURL = schema.CanonicalBaseURL(t.BaseURL)
		if err := schema.ValidateTenant(t); err != nil {
			return err
		}
		if err := tx.saveTenant(ctx, t); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// saveTenant writes a changed registry entry and its change.
func (tx *Tx) saveTenant(ctx context.Context, t *schema.Tenant) error {
	t.UpdatedAt = tx.Now()
	if err := tx.putTenant(ctx, t, false); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE tenants SET name=$2, base_url=$3, shard=$4, status=$5, timezone=$6, currencies=$7, updated_at=$8, version=$9,
		rate_limit=$10, theme=$11 WHERE id = $1`, t.ID, t.Name, t.BaseURL, t.Shard, string(t.Status), t.Timezone, t.Currencies, t.UpdatedAt, t.Version, t.RateLimit,
		t.Theme)
	if err != nil {
		return err
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM tenant_domains WHERE tenant_id = $1 AND NOT (domain = ANY($2))`, t.ID, t.Domains); err != nil {
		return err
	}
	for _, d := range t.Domains {
		if _, err := tx.pg.Exec(ctx, `INSERT INTO tenant_domains (domain, tenant_id) VALUES ($1, $2) ON CONFLICT (domain) DO NOTHING`, d, t.ID); err != nil {
			return err
		}
		var owner string
		if err := tx.pg.QueryRow(ctx, `SELECT tenant_id::TEXT FROM tenant_domains WHERE domain = $1`, d).Scan(&owner); err != nil {
			return err
		}
		if owner != t.ID {
			return &schema.Error{Code: schema.CodeConflict, Field: "domains", Message: "domain " + d + " already belongs to another tenant"}
		}
	}
	return nil
}

func (tx *Tx) tenant(ctx context.Context, slug string) (*schema.Tenant, error) {
	t, err := scanTenant(tx.pg.QueryRow(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE slug = $1`, slug))
	if err == pgx.ErrNoRows {
		return nil, &schema.Error{Code: schema.CodeNotFound, Message: "unknown tenant " + slug}
	}
	return t, err
}

// enableCurrency adds a currency code to a tenant's registry entry if it is missing.
func (tx *Tx) enableCurrency(ctx context.Context, t *schema.Tenant, code string) error {
	cur, err := tx.tenant(ctx, t.Slug)
	if err != nil {
		return err
	}
	if slices.Contains(cur.Currencies, code) {
		return nil
	}
	cur.Currencies = append(cur.Currencies, code)
	return tx.saveTenant(ctx, cur)
}

// disableCurrency removes a currency code from a tenant's registry entry. The default currency
// (the first) cannot be removed.
func (tx *Tx) disableCurrency(ctx context.Context, t *schema.Tenant, code string) error {
	cur, err := tx.tenant(ctx, t.Slug)
	if err != nil {
		return err
	}
	i := slices.Index(cur.Currencies, code)
	if i < 0 {
		return nil
	}
	if i == 0 {
		return &schema.Error{Code: schema.CodeConflict, Field: "code", Message: "the store's default currency cannot be removed"}
	}
	cur.Currencies = slices.Delete(cur.Currencies, i, i+1)
	return tx.saveTenant(ctx, cur)
}

// TenantBySlug returns a tenant's registry entry.
func (db *DB) TenantBySlug(ctx context.Context, slug string) (*schema.Tenant, error) {
	var t *schema.Tenant
	err := db.Tx(ctx, func(tx *Tx) error {
		var err error
		t, err = tx.tenant(ctx, slug)
		return err
	})
	return t, err
}

// TenantByID returns a tenant's registry entry by its id.
func (db *DB) TenantByID(ctx context.Context, id string) (*schema.Tenant, error) {
	t, err := scanTenant(db.pool.QueryRow(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE id = $1`, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("store")
	}
	return t, mapError(err)
}

// Tenants returns every tenant's registry entry, ordered by slug.
func (db *DB) Tenants(ctx context.Context) ([]*schema.Tenant, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT `+tenantColumns+` FROM tenants ORDER BY slug`, scanTenant)
	return out, mapError(err)
}

// LowStockThreshold returns the stock level at or under which a tenant's variants are low_stock.
func (tx *Tx) lowStockThreshold(ctx context.Context, t *schema.Tenant) (int64, error) {
	var n int64
	err := tx.pg.QueryRow(ctx, `SELECT low_stock_threshold FROM tenants WHERE id = $1`, t.ID).Scan(&n)
	return n, err
}
