package store

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// MaxVariantsPerProduct bounds a product's variants, so that moving a product between the public
// and private read models (which moves its variants too) fits one transaction.
const MaxVariantsPerProduct = 100

// productVis is where a product's state lives: the public read model when active, else only the
// origin's.
func productVis(p *schema.Product) []schema.Visibility {
	if p == nil {
		return nil
	}
	if p.Public() {
		return []schema.Visibility{schema.Pub}
	}
	return []schema.Visibility{schema.Priv}
}

var pubOnly = []schema.Visibility{schema.Pub}

const productColumns = `id, slug, title, description, status, featured, prices, images, category_ids, created_at, updated_at, version`

func scanProduct(row pgx.Row) (*schema.Product, error) {
	var p schema.Product
	var status string
	var prices, images []byte
	var cats []int64
	if err := row.Scan(&p.ID, &p.Slug, &p.Title, &p.Description, &status, &p.Featured, &prices, &images, &cats,
		&p.CreatedAt, &p.UpdatedAt, &p.Version); err != nil {
		return nil, err
	}
	p.Status = schema.ProductStatus(status)
	if err := json.Unmarshal(prices, &p.Prices); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(images, &p.Images); err != nil {
		return nil, err
	}
	p.CategoryIDs = make([]schema.CategoryID, len(cats))
	for i, c := range cats {
		p.CategoryIDs[i] = schema.CategoryID(c)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return &p, nil
}

func notFound(what string) *schema.Error {
	return &schema.Error{Code: schema.CodeNotFound, Message: what + " not found"}
}

// Product returns one product of the tenant.
func (tx *Tx) Product(ctx context.Context, t *schema.Tenant, id schema.ProductID) (*schema.Product, error) {
	p, err := scanProduct(tx.pg.QueryRow(ctx, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("product")
	}
	return p, err
}

func (tx *Tx) checkCategories(ctx context.Context, t *schema.Tenant, ids []schema.CategoryID) error {
	if len(ids) == 0 {
		return nil
	}
	raw := make([]int64, len(ids))
	for i, id := range ids {
		raw[i] = int64(id)
	}
	var n int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM categories WHERE tenant_id = $1 AND id = ANY($2)`, t.ID, raw).Scan(&n); err != nil {
		return err
	}
	if n != len(ids) {
		return schema.Invalid("category_ids", "category_ids names a category that does not exist")
	}
	return nil
}

func categoryInts(ids []schema.CategoryID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}

// CreateProduct inserts a product, allocating its id. p is validated here.
func (tx *Tx) CreateProduct(ctx context.Context, t *schema.Tenant, p *schema.Product) error {
	if err := schema.ValidateProduct(p, tx.db.reservedSlugs); err != nil {
		return err
	}
	if err := tx.checkCategories(ctx, t, p.CategoryIDs); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "catalog", 1)
	if err != nil {
		return err
	}
	p.ID = schema.ProductID(id)
	p.CreatedAt, p.UpdatedAt = tx.Now(), tx.Now()
	if err := tx.saveProduct(ctx, t, nil, p); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO products (tenant_id, `+productColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		t.ID, int64(p.ID), p.Slug, p.Title, p.Description, string(p.Status), p.Featured, jsonb(p.Prices), jsonb(p.Images),
		categoryInts(p.CategoryIDs), p.CreatedAt, p.UpdatedAt, p.Version)
	if err != nil {
		return err
	}
	tx.emit(t, "product.created", map[string]any{"id": p.ID, "slug": p.Slug, "status": p.Status})
	return nil
}

// ProductForUpdate reads a product of the tenant and its variants (ordered as Variants orders
// them) and takes the tenant's log, in one round trip: the reads an update of the product makes
// before it writes (UpdateProductVariants), with the lock its write takes anyway. The write
// queue of the log is entered first, as any write's is (Tx.logFor).
func (tx *Tx) ProductForUpdate(ctx context.Context, t *schema.Tenant, id schema.ProductID) (*schema.Product, []*StockedVariant, error) {
	take := tx.takenLog(t.ID) == nil
	if take {
		if err := tx.claimLog(t.ID); err != nil {
			return nil, nil, err
		}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	b.Queue(`SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND product_id = $2 ORDER BY position, id`, t.ID, int64(id))
	if take {
		b.Queue(lockLogSQL, t.ID)
	}
	br := tx.pg.SendBatch(ctx, b)
	defer br.Close()
	p, err := scanProduct(br.QueryRow())
	if err == pgx.ErrNoRows {
		return nil, nil, notFound("product")
	}
	if err != nil {
		return nil, nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, nil, err
	}
	vs, err := pgx.AppendRows([]*StockedVariant(nil), rows, func(row pgx.CollectableRow) (*StockedVariant, error) { return scanVariant(row) })
	if err != nil {
		return nil, nil, err
	}
	if take {
		var version int64
		err := br.QueryRow().Scan(&version)
		if _, err := tx.addLog(t.ID, t.Slug, version, err); err != nil {
			return nil, nil, err
		}
	}
	return p, vs, br.Close()
}

// UpdateProduct writes p over old (the same product as read in this transaction). When the
// product moves between the public and private read models, its variants move with it.
func (tx *Tx) UpdateProduct(ctx context.Context, t *schema.Tenant, old, p *schema.Product) error {
	return tx.updateProduct(ctx, t, old, p, nil, false)
}

// UpdateProductVariants is UpdateProduct given the product's variants as read in this
// transaction (ProductForUpdate): when they move with the product, their versions are updated
// in place, so that vs stays what the database holds. The product's row is written in the
// transaction's last round trip, with the outboxes, just before COMMIT (its errors, a slug
// taken, come back from the transaction): the transaction must not read the row back.
func (tx *Tx) UpdateProductVariants(ctx context.Context, t *schema.Tenant, old, p *schema.Product, vs []*StockedVariant) error {
	return tx.updateProduct(ctx, t, old, p, vs, true)
}

func (tx *Tx) updateProduct(ctx context.Context, t *schema.Tenant, old, p *schema.Product, vs []*StockedVariant, read bool) error {
	p.ID, p.CreatedAt = old.ID, old.CreatedAt
	if err := schema.ValidateProduct(p, tx.db.reservedSlugs); err != nil {
		return err
	}
	// Only the categories this update adds must exist: an id whose category was deleted since
	// stays harmlessly (readers skip it), and must not make every later update fail.
	var added []schema.CategoryID
	for _, c := range p.CategoryIDs {
		if !slices.Contains(old.CategoryIDs, c) {
			added = append(added, c)
		}
	}
	if err := tx.checkCategories(ctx, t, added); err != nil {
		return err
	}
	p.UpdatedAt = tx.Now()
	if err := tx.saveProduct(ctx, t, old, p); err != nil {
		return err
	}
	const update = `UPDATE products SET slug=$3, title=$4, description=$5, status=$6, featured=$7, prices=$8, images=$9,
		category_ids=$10, updated_at=$11, version=$12 WHERE tenant_id = $1 AND id = $2`
	args := []any{t.ID, int64(p.ID), p.Slug, p.Title, p.Description, string(p.Status), p.Featured, jsonb(p.Prices), jsonb(p.Images),
		categoryInts(p.CategoryIDs), p.UpdatedAt, p.Version}
	var err error
	if read {
		tx.execLater(update, args...)
	} else if _, err = tx.pg.Exec(ctx, update, args...); err != nil {
		return err
	}
	if old.Public() != p.Public() {
		if !read {
			if vs, err = tx.Variants(ctx, t, p.ID); err != nil {
				return err
			}
		}
		for _, v := range vs {
			if err := tx.moveVariant(ctx, t, old, p, &v.Variant); err != nil {
				return err
			}
		}
	}
	tx.emit(t, "product.updated", map[string]any{"id": p.ID, "slug": p.Slug, "status": p.Status})
	return nil
}

func (tx *Tx) saveProduct(ctx context.Context, t *schema.Tenant, old, p *schema.Product) error {
	p.Normalize()
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	return tx.writeEntity(l, schema.KindProduct, schema.IDString(p.ID), productVis(old), productVis(p),
		func(v int64) { p.Version = v }, func(schema.Visibility) any { return p })
}

// DeleteProduct deletes a product and its variants.
func (tx *Tx) DeleteProduct(ctx context.Context, t *schema.Tenant, id schema.ProductID) (*schema.Product, error) {
	p, err := tx.Product(ctx, t, id)
	if err != nil {
		return nil, err
	}
	vs, err := tx.Variants(ctx, t, id)
	if err != nil {
		return nil, err
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if err := tx.writeEntity(l, schema.KindVariant, schema.IDString(v.ID), productVis(p), nil, nil, nil); err != nil {
			return nil, err
		}
	}
	if err := tx.writeEntity(l, schema.KindProduct, schema.IDString(p.ID), productVis(p), nil, nil, nil); err != nil {
		return nil, err
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM variants WHERE tenant_id = $1 AND product_id = $2`, t.ID, int64(id)); err != nil {
		return nil, err
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM products WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)); err != nil {
		return nil, err
	}
	tx.emit(t, "product.deleted", map[string]any{"id": p.ID, "slug": p.Slug})
	return p, nil
}

// ListProducts returns a page of the tenant's products, any status unless status is set, ordered
// by id, with the total count.
func (tx *Tx) ListProducts(ctx context.Context, t *schema.Tenant, status string, offset, limit int) ([]*schema.Product, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM products WHERE tenant_id = $1 AND ($2 = '' OR status = $2)`, t.ID, status).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, nil, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND ($2 = '' OR status = $2)
		ORDER BY id LIMIT $3 OFFSET $4`, scanProduct, t.ID, status, limit, offset)
	return out, total, err
}

// StockedVariant is a variant with the stock count that only the origin knows.
type StockedVariant struct {
	schema.Variant
	Stock int64 `json:"stock"`
}

const variantColumns = `id, product_id, sku, title, options, prices, stock, availability, position, created_at, updated_at, version`

func scanVariant(row pgx.Row) (*StockedVariant, error) {
	var v StockedVariant
	var opts, prices []byte
	var avail string
	if err := row.Scan(&v.ID, &v.ProductID, &v.SKU, &v.Title, &opts, &prices, &v.Stock, &avail, &v.Position,
		&v.CreatedAt, &v.UpdatedAt, &v.Version); err != nil {
		return nil, err
	}
	v.Availability = schema.Availability(avail)
	if err := json.Unmarshal(opts, &v.Options); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(prices, &v.Prices); err != nil {
		return nil, err
	}
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.UTC(), v.UpdatedAt.UTC()
	return &v, nil
}

// Variants returns a product's variants ordered by position then id.
func (tx *Tx) Variants(ctx context.Context, t *schema.Tenant, productID schema.ProductID) ([]*StockedVariant, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND product_id = $2 ORDER BY position, id`,
		scanVariant, t.ID, int64(productID))
}

// Variant returns one variant of the tenant.
func (tx *Tx) Variant(ctx context.Context, t *schema.Tenant, id schema.VariantID) (*StockedVariant, error) {
	v, err := scanVariant(tx.pg.QueryRow(ctx, `SELECT `+variantColumns+` FROM variants WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("variant")
	}
	return v, err
}

// CreateVariant inserts a variant of an existing product with its stock.
func (tx *Tx) CreateVariant(ctx context.Context, t *schema.Tenant, v *StockedVariant) error {
	p, err := tx.Product(ctx, t, v.ProductID)
	if err != nil {
		return err
	}
	var n int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM variants WHERE tenant_id = $1 AND product_id = $2`, t.ID, int64(p.ID)).Scan(&n); err != nil {
		return err
	}
	if n >= MaxVariantsPerProduct {
		return &schema.Error{Code: schema.CodeConflict, Message: "a product has at most " + strconv.Itoa(MaxVariantsPerProduct) + " variants"}
	}
	if err := checkStock(v.Stock); err != nil {
		return err
	}
	if err := schema.ValidateVariant(&v.Variant); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "catalog", 1)
	if err != nil {
		return err
	}
	v.ID = schema.VariantID(id)
	v.CreatedAt, v.UpdatedAt = tx.Now(), tx.Now()
	if err := tx.setAvailability(ctx, t, v); err != nil {
		return err
	}
	if err := tx.saveVariant(ctx, t, p, nil, v); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO variants (tenant_id, `+variantColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		t.ID, int64(v.ID), int64(v.ProductID), v.SKU, v.Title, jsonb(v.Options), jsonb(v.Prices), v.Stock,
		string(v.Availability), v.Position, v.CreatedAt, v.UpdatedAt, v.Version)
	return err
}

// UpdateVariant writes v over old. The product cannot change.
func (tx *Tx) UpdateVariant(ctx context.Context, t *schema.Tenant, old, v *StockedVariant) error {
	v.ID, v.ProductID, v.CreatedAt = old.ID, old.ProductID, old.CreatedAt
	if err := checkStock(v.Stock); err != nil {
		return err
	}
	if err := schema.ValidateVariant(&v.Variant); err != nil {
		return err
	}
	p, err := tx.Product(ctx, t, v.ProductID)
	if err != nil {
		return err
	}
	v.UpdatedAt = tx.Now()
	if err := tx.setAvailability(ctx, t, v); err != nil {
		return err
	}
	tx.emitStockCrossing(t, v, old.Availability)
	if err := tx.saveVariant(ctx, t, p, p, v); err != nil {
		return err
	}
	if _, err = tx.pg.Exec(ctx, `UPDATE variants SET sku=$3, title=$4, options=$5, prices=$6, stock=$7, availability=$8, position=$9,
		updated_at=$10, version=$11 WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(v.ID), v.SKU, v.Title, jsonb(v.Options), jsonb(v.Prices), v.Stock,
		string(v.Availability), v.Position, v.UpdatedAt, v.Version); err != nil {
		return err
	}
	if v.Stock != old.Stock {
		return tx.refreshBundlesOf(ctx, t, v.ID)
	}
	return nil
}

// moveVariant re-records a variant after its product moved between read models.
func (tx *Tx) moveVariant(ctx context.Context, t *schema.Tenant, oldProduct, newProduct *schema.Product, v *schema.Variant) error {
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	if err := tx.writeEntity(l, schema.KindVariant, schema.IDString(v.ID), productVis(oldProduct), productVis(newProduct),
		func(ver int64) { v.Version = ver }, func(schema.Visibility) any { return v }); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `UPDATE variants SET version = $3 WHERE tenant_id = $1 AND id = $2`, t.ID, int64(v.ID), v.Version)
	return err
}

func (tx *Tx) saveVariant(ctx context.Context, t *schema.Tenant, p, oldP *schema.Product, v *StockedVariant) error {
	v.Normalize()
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var oldVis []schema.Visibility
	if oldP != nil {
		oldVis = productVis(oldP)
	}
	return tx.writeEntity(l, schema.KindVariant, schema.IDString(v.ID), oldVis, productVis(p),
		func(ver int64) { v.Version = ver }, func(schema.Visibility) any { return &v.Variant })
}

// DeleteVariant deletes one variant.
func (tx *Tx) DeleteVariant(ctx context.Context, t *schema.Tenant, id schema.VariantID) error {
	v, err := tx.Variant(ctx, t, id)
	if err != nil {
		return err
	}
	p, err := tx.Product(ctx, t, v.ProductID)
	if err != nil {
		return err
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	if err := tx.writeEntity(l, schema.KindVariant, schema.IDString(v.ID), productVis(p), nil, nil, nil); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM variants WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return err
}

func (tx *Tx) setAvailability(ctx context.Context, t *schema.Tenant, v *StockedVariant) error {
	low, err := tx.lowStockThreshold(ctx, t)
	if err != nil {
		return err
	}
	v.Availability = schema.AvailabilityOf(v.Stock, low)
	return nil
}

func checkStock(n int64) error {
	if n < 0 || n > 1_000_000_000 {
		return schema.Invalid("stock", "stock must be between 0 and 1000000000")
	}
	return nil
}

const categoryColumns = `id, parent_id, slug, name, description, position, created_at, updated_at, version`

func scanCategory(row pgx.Row) (*schema.Category, error) {
	var c schema.Category
	if err := row.Scan(&c.ID, &c.ParentID, &c.Slug, &c.Name, &c.Description, &c.Position, &c.CreatedAt, &c.UpdatedAt, &c.Version); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

// Category returns one category of the tenant.
func (tx *Tx) Category(ctx context.Context, t *schema.Tenant, id schema.CategoryID) (*schema.Category, error) {
	c, err := scanCategory(tx.pg.QueryRow(ctx, `SELECT `+categoryColumns+` FROM categories WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("category")
	}
	return c, err
}

// checkParent refuses a parent that does not exist, or that would make a cycle or a tree deeper
// than schema.MaxCategoryDepth.
func (tx *Tx) checkParent(ctx context.Context, t *schema.Tenant, c *schema.Category) error {
	depth := 1
	for parent := c.ParentID; parent != 0; depth++ {
		if parent == c.ID {
			return schema.Invalid("parent_id", "parent_id would make a cycle")
		}
		if depth >= schema.MaxCategoryDepth {
			return schema.Invalid("parent_id", "categories nest at most %d deep", schema.MaxCategoryDepth)
		}
		p, err := tx.Category(ctx, t, parent)
		if err != nil {
			if schema.ErrorCode(err) == schema.CodeNotFound {
				return schema.Invalid("parent_id", "parent_id names a category that does not exist")
			}
			return err
		}
		parent = p.ParentID
	}
	return nil
}

// CreateCategory inserts a category.
func (tx *Tx) CreateCategory(ctx context.Context, t *schema.Tenant, c *schema.Category) error {
	if err := schema.ValidateCategory(c); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "catalog", 1)
	if err != nil {
		return err
	}
	c.ID = schema.CategoryID(id)
	if err := tx.checkParent(ctx, t, c); err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = tx.Now(), tx.Now()
	if err := tx.saveCategory(ctx, t, c, false); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `INSERT INTO categories (tenant_id, `+categoryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.ID, int64(c.ID), int64(c.ParentID), c.Slug, c.Name, c.Description, c.Position, c.CreatedAt, c.UpdatedAt, c.Version)
	return err
}

// UpdateCategory writes c over old.
func (tx *Tx) UpdateCategory(ctx context.Context, t *schema.Tenant, old, c *schema.Category) error {
	c.ID, c.CreatedAt = old.ID, old.CreatedAt
	if err := schema.ValidateCategory(c); err != nil {
		return err
	}
	if err := tx.checkParent(ctx, t, c); err != nil {
		return err
	}
	c.UpdatedAt = tx.Now()
	if err := tx.saveCategory(ctx, t, c, true); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE categories SET parent_id=$3, slug=$4, name=$5, description=$6, position=$7, updated_at=$8, version=$9
		WHERE tenant_id = $1 AND id = $2`, t.ID, int64(c.ID), int64(c.ParentID), c.Slug, c.Name, c.Description, c.Position, c.UpdatedAt, c.Version)
	return err
}

func (tx *Tx) saveCategory(ctx context.Context, t *schema.Tenant, c *schema.Category, existed bool) error {
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var old []schema.Visibility
	if existed {
		old = pubOnly
	}
	return tx.writeEntity(l, schema.KindCategory, schema.IDString(c.ID), old, pubOnly,
		func(v int64) { c.Version = v }, func(schema.Visibility) any { return c })
}

// DeleteCategory deletes a category. Its children move up to its parent, as WordPress does with
// terms. Products keep the id in category_ids; readers skip ids that no longer resolve, so a
// delete never rewrites an unbounded number of products.
func (tx *Tx) DeleteCategory(ctx context.Context, t *schema.Tenant, id schema.CategoryID) error {
	c, err := tx.Category(ctx, t, id)
	if err != nil {
		return err
	}
	children, err := appendRows(ctx, tx.pg, nil, `SELECT `+categoryColumns+` FROM categories WHERE tenant_id = $1 AND parent_id = $2`,
		scanCategory, t.ID, int64(id))
	if err != nil {
		return err
	}
	for _, ch := range children {
		old := *ch
		ch.ParentID = c.ParentID
		if err := tx.UpdateCategory(ctx, t, &old, ch); err != nil {
			return err
		}
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	if err := tx.writeEntity(l, schema.KindCategory, schema.IDString(id), pubOnly, nil, nil, nil); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM categories WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return err
}

const currencyColumns = `code, name, symbol, exponent, rate, created_at, updated_at, version`

func scanCurrency(row pgx.Row) (*schema.Currency, error) {
	var c schema.Currency
	if err := row.Scan(&c.Code, &c.Name, &c.Symbol, &c.Exponent, &c.Rate, &c.CreatedAt, &c.UpdatedAt, &c.Version); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

// Currency returns one currency of the tenant.
func (tx *Tx) Currency(ctx context.Context, t *schema.Tenant, code string) (*schema.Currency, error) {
	c, err := scanCurrency(tx.pg.QueryRow(ctx, `SELECT `+currencyColumns+` FROM currencies WHERE tenant_id = $1 AND code = $2`, t.ID, code))
	if err == pgx.ErrNoRows {
		return nil, notFound("currency")
	}
	return c, err
}

// CreateCurrency inserts a currency and enables it in the tenant's registry entry.
func (tx *Tx) CreateCurrency(ctx context.Context, t *schema.Tenant, c *schema.Currency) error {
	if err := schema.ValidateCurrency(c); err != nil {
		return err
	}
	c.Rate, _ = schema.ParseRate(c.Rate)
	c.CreatedAt, c.UpdatedAt = tx.Now(), tx.Now()
	if err := tx.saveCurrency(ctx, t, c, false); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO currencies (tenant_id, `+currencyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.ID, c.Code, c.Name, c.Symbol, c.Exponent, c.Rate, c.CreatedAt, c.UpdatedAt, c.Version)
	if err != nil {
		return err
	}
	return tx.enableCurrency(ctx, t, c.Code)
}

// UpdateCurrency writes c over old. The code cannot change.
func (tx *Tx) UpdateCurrency(ctx context.Context, t *schema.Tenant, old, c *schema.Currency) error {
	c.Code, c.CreatedAt = old.Code, old.CreatedAt
	if err := schema.ValidateCurrency(c); err != nil {
		return err
	}
	c.Rate, _ = schema.ParseRate(c.Rate)
	c.UpdatedAt = tx.Now()
	if err := tx.saveCurrency(ctx, t, c, true); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE currencies SET name=$3, symbol=$4, exponent=$5, rate=$6, updated_at=$7, version=$8
		WHERE tenant_id = $1 AND code = $2`, t.ID, c.Code, c.Name, c.Symbol, c.Exponent, c.Rate, c.UpdatedAt, c.Version)
	return err
}

func (tx *Tx) saveCurrency(ctx context.Context, t *schema.Tenant, c *schema.Currency, existed bool) error {
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var old []schema.Visibility
	if existed {
		old = pubOnly
	}
	return tx.writeEntity(l, schema.KindCurrency, c.Code, old, pubOnly,
		func(v int64) { c.Version = v }, func(schema.Visibility) any { return c })
}

// DeleteCurrency deletes a currency and disables it in the registry. The default currency cannot
// be deleted.
func (tx *Tx) DeleteCurrency(ctx context.Context, t *schema.Tenant, code string) error {
	if _, err := tx.Currency(ctx, t, code); err != nil {
		return err
	}
	if err := tx.disableCurrency(ctx, t, code); err != nil {
		return err
	}
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	if err := tx.writeEntity(l, schema.KindCurrency, code, pubOnly, nil, nil, nil); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM currencies WHERE tenant_id = $1 AND code = $2`, t.ID, code)
	return err
}

func jsonb(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("store: marshal jsonb: " + err.Error())
	}
	return b
}

// FreeProductSlug returns slug, or slug-2, slug-3… when a product of the tenant holds it.
func (tx *Tx) FreeProductSlug(ctx context.Context, t *schema.Tenant, slug string) (string, error) {
	return tx.freeSlug(ctx, `SELECT slug FROM products WHERE tenant_id = $1 AND (slug = $2 OR slug LIKE $3)`, slug, t.ID)
}
