package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// EventReviewCreated is emitted when a customer submits a review.
const EventReviewCreated = "review.created"

// Review statuses.
const (
	ReviewPending  = "pending"
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
)

// record writes the replicated public state of one merchandising entity: v at Pub when pub is
// true, a tombstone when it was public before and is not now.
func (tx *Tx) record(ctx context.Context, t *schema.Tenant, kind schema.Kind, id string, wasPub, pub bool, setVersion func(int64), v any) error {
	l, err := tx.tenantLog(ctx, t)
	if err != nil {
		return err
	}
	var oldVis, newVis []schema.Visibility
	if wasPub {
		oldVis = pubOnly
	}
	if pub {
		newVis = pubOnly
	}
	return tx.writeEntity(l, kind, id, oldVis, newVis, setVersion, func(schema.Visibility) any { return v })
}

const flashSaleColumns = `id, slug, title, percent_off, product_ids, starts_at, ends_at, created_at, updated_at, version`

func scanFlashSale(row pgx.Row) (*schema.FlashSale, error) {
	var f schema.FlashSale
	var ids []int64
	if err := row.Scan(&f.ID, &f.Slug, &f.Title, &f.PercentOff, &ids, &f.StartsAt, &f.EndsAt, &f.CreatedAt, &f.UpdatedAt, &f.Version); err != nil {
		return nil, err
	}
	f.ProductIDs = make([]schema.ProductID, len(ids))
	for i, id := range ids {
		f.ProductIDs[i] = schema.ProductID(id)
	}
	f.StartsAt, f.EndsAt, f.CreatedAt, f.UpdatedAt = f.StartsAt.UTC(), f.EndsAt.UTC(), f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return &f, nil
}

func productIDs(ids []schema.ProductID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}

// FlashSales lists the tenant's flash sales by start; with current set, only those not ended at
// the transaction's clock.
func (tx *Tx) FlashSales(ctx context.Context, t *schema.Tenant, current bool) ([]*schema.FlashSale, error) {
	q := `SELECT ` + flashSaleColumns + ` FROM flash_sales WHERE tenant_id = $1 AND ($2::BOOL = false OR ends_at > $3) ORDER BY starts_at, id`
	return appendRows(ctx, tx.pg, nil, q, scanFlashSale, t.ID, current, tx.Now())
}

// FlashSale returns one flash sale.
func (tx *Tx) FlashSale(ctx context.Context, t *schema.Tenant, id schema.FlashSaleID) (*schema.FlashSale, error) {
	f, err := scanFlashSale(tx.pg.QueryRow(ctx, `SELECT `+flashSaleColumns+` FROM flash_sales WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("flash sale")
	}
	return f, err
}

// PutFlashSale creates (ID 0) or replaces a flash sale.
func (tx *Tx) PutFlashSale(ctx context.Context, t *schema.Tenant, f *schema.FlashSale) error {
	if err := schema.ValidateFlashSale(f); err != nil {
		return err
	}
	existed := f.ID != 0
	if existed {
		old, err := tx.FlashSale(ctx, t, f.ID)
		if err != nil {
			return err
		}
		f.CreatedAt = old.CreatedAt
	} else {
		id, err := tx.allocIDs(ctx, t.ID, "merch", 1)
		if err != nil {
			return err
		}
		f.ID, f.CreatedAt = schema.FlashSaleID(id), tx.Now()
	}
	f.UpdatedAt = tx.Now()
	f.StartsAt, f.EndsAt = f.StartsAt.UTC().Truncate(time.Microsecond), f.EndsAt.UTC().Truncate(time.Microsecond)
	if err := tx.record(ctx, t, schema.KindFlashSale, schema.IDString(f.ID), existed, true, func(v int64) { f.Version = v }, f); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO flash_sales (tenant_id, `+flashSaleColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (tenant_id, id) DO UPDATE SET slug = $3, title = $4, percent_off = $5, product_ids = $6, starts_at = $7, ends_at = $8,
			updated_at = $10, version = $11`,
		t.ID, int64(f.ID), f.Slug, f.Title, f.PercentOff, productIDs(f.ProductIDs), f.StartsAt, f.EndsAt, f.CreatedAt, f.UpdatedAt, f.Version)
	return err
}

// DeleteFlashSale deletes a flash sale.
func (tx *Tx) DeleteFlashSale(ctx context.Context, t *schema.Tenant, id schema.FlashSaleID) error {
	if _, err := tx.FlashSale(ctx, t, id); err != nil {
		return err
	}
	if err := tx.record(ctx, t, schema.KindFlashSale, schema.IDString(id), true, false, nil, nil); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `DELETE FROM flash_sales WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return err
}

const sectionColumns = `id, kind, title, position, content, active, created_at, updated_at, version`

func scanSection(row pgx.Row) (*schema.Section, error) {
	var s schema.Section
	var content []byte
	if err := row.Scan(&s.ID, &s.Kind, &s.Title, &s.Position, &content, &s.Active, &s.CreatedAt, &s.UpdatedAt, &s.Version); err != nil {
		return nil, err
	}
	norm, err := schema.NormalizeJSONObject(content)
	if err != nil {
		return nil, err
	}
	s.Content = norm
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return &s, nil
}

// Sections lists the tenant's sections by position.
func (tx *Tx) Sections(ctx context.Context, t *schema.Tenant) ([]*schema.Section, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+sectionColumns+` FROM storefront_sections WHERE tenant_id = $1 ORDER BY position, id`,
		scanSection, t.ID)
}

// Section returns one section.
func (tx *Tx) Section(ctx context.Context, t *schema.Tenant, id schema.SectionID) (*schema.Section, error) {
	s, err := scanSection(tx.pg.QueryRow(ctx, `SELECT `+sectionColumns+` FROM storefront_sections WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("section")
	}
	return s, err
}

// PutSection creates (ID 0) or replaces a section. Only active sections are public.
func (tx *Tx) PutSection(ctx context.Context, t *schema.Tenant, s *schema.Section) error {
	if err := schema.ValidateSection(s); err != nil {
		return err
	}
	wasPub := false
	if s.ID != 0 {
		old, err := tx.Section(ctx, t, s.ID)
		if err != nil {
			return err
		}
		s.CreatedAt, wasPub = old.CreatedAt, old.Active
	} else {
		id, err := tx.allocIDs(ctx, t.ID, "merch", 1)
		if err != nil {
			return err
		}
		s.ID, s.CreatedAt = schema.SectionID(id), tx.Now()
	}
	s.UpdatedAt = tx.Now()
	if err := tx.record(ctx, t, schema.KindSection, schema.IDString(s.ID), wasPub, s.Active, func(v int64) { s.Version = v }, s); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `INSERT INTO storefront_sections (tenant_id, `+sectionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (tenant_id, id) DO UPDATE SET kind = $3, title = $4, position = $5, content = $6, active = $7, updated_at = $9, version = $10`,
		t.ID, int64(s.ID), s.Kind, s.Title, s.Position, []byte(s.Content), s.Active, s.CreatedAt, s.UpdatedAt, s.Version)
	return err
}

// DeleteSection deletes a section.
func (tx *Tx) DeleteSection(ctx context.Context, t *schema.Tenant, id schema.SectionID) error {
	old, err := tx.Section(ctx, t, id)
	if err != nil {
		return err
	}
	if err := tx.record(ctx, t, schema.KindSection, schema.IDString(id), old.Active, false, nil, nil); err != nil {
		return err
	}
	_, err = tx.pg.Exec(ctx, `DELETE FROM storefront_sections WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return err
}

// StoredReview is a review as the origin keeps it.
type StoredReview struct {
	schema.Review
	CustomerID int64  `json:"customer_id"`
	Status     string `json:"status"`
}

const reviewColumns = `id, product_id, customer_id, author, rating, title, body, status, verified, created_at, version`

func scanReview(row pgx.Row) (*StoredReview, error) {
	var r StoredReview
	if err := row.Scan(&r.ID, &r.ProductID, &r.CustomerID, &r.Author, &r.Rating, &r.Title, &r.Body, &r.Status, &r.Verified,
		&r.CreatedAt, &r.Version); err != nil {
		return nil, err
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return &r, nil
}

// CreateReview stores a customer's review of a product, pending moderation. Verified is set when
// the customer has a paid order with the product. A second review of one product by one
// customer is a conflict.
func (tx *Tx) CreateReview(ctx context.Context, t *schema.Tenant, r *StoredReview) error {
	if r.Rating < 1 || r.Rating > 5 {
		return schema.Invalid("rating", "rating must be an integer from 1 to 5")
	}
	if err := schema.ValidateText("title", r.Title, 200, false); err != nil {
		return err
	}
	if err := schema.ValidateText("body", r.Body, 5000, true); err != nil {
		return err
	}
	if err := schema.ValidateText("author", r.Author, 100, true); err != nil {
		return err
	}
	var exists bool
	if err := tx.pg.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM reviews WHERE tenant_id = $1 AND product_id = $2 AND customer_id = $3)`,
		t.ID, int64(r.ProductID), r.CustomerID).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return &schema.Error{Code: schema.CodeConflict, Message: "you have already reviewed this product"}
	}
	if err := tx.pg.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orders o JOIN order_lines l ON l.tenant_id = o.tenant_id AND l.order_id = o.id
		WHERE o.tenant_id = $1 AND o.customer_id = $2 AND o.status = 'paid' AND l.product_id = $3)`,
		t.ID, r.CustomerID, int64(r.ProductID)).Scan(&r.Verified); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "reviews", 1)
	if err != nil {
		return err
	}
	r.ID, r.Status, r.CreatedAt = schema.ReviewID(id), ReviewPending, tx.Now()
	_, err = tx.pg.Exec(ctx, `INSERT INTO reviews (tenant_id, `+reviewColumns+`, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $11)`,
		t.ID, id, int64(r.ProductID), r.CustomerID, r.Author, r.Rating, r.Title, r.Body, r.Status, r.Verified, tx.Now())
	if err != nil {
		return err
	}
	tx.emit(t, EventReviewCreated, r)
	return nil
}

// Reviews lists reviews for moderation, newest first, filtered by status ("" for all).
func (tx *Tx) Reviews(ctx context.Context, t *schema.Tenant, status string, offset, limit int) ([]*StoredReview, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM reviews WHERE tenant_id = $1 AND ($2 = '' OR status = $2)`, t.ID, status).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []*StoredReview{}, `SELECT `+reviewColumns+` FROM reviews WHERE tenant_id = $1 AND ($2 = '' OR status = $2)
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, scanReview, t.ID, status, limit, offset)
	return out, total, err
}

// ModerateReview sets a review's status. Approving publishes it (replicated); rejecting an
// approved review withdraws it.
func (tx *Tx) ModerateReview(ctx context.Context, t *schema.Tenant, id schema.ReviewID, status string) (*StoredReview, error) {
	if status != ReviewApproved && status != ReviewRejected && status != ReviewPending {
		return nil, schema.Invalid("status", "status must be approved, rejected or pending")
	}
	r, err := scanReview(tx.pg.QueryRow(ctx, `SELECT `+reviewColumns+` FROM reviews WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("review")
	}
	if err != nil {
		return nil, err
	}
	was := r.Status == ReviewApproved
	r.Status = status
	if err := tx.record(ctx, t, schema.KindReview, schema.IDString(r.ID), was, status == ReviewApproved,
		func(v int64) { r.Version = v }, &r.Review); err != nil {
		return nil, err
	}
	_, err = tx.pg.Exec(ctx, `UPDATE reviews SET status = $3, version = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(id), status, r.Version, tx.Now())
	return r, err
}

// RefreshProductStats recomputes every product's social proof of a tenant from paid orders and
// approved reviews, and records only the products whose values changed, at most limit per call
// (one transaction: keep limit under schema.MaxChangesPerTxn). It returns how many changed.
func (tx *Tx) RefreshProductStats(ctx context.Context, t *schema.Tenant, limit int) (int, error) {
	type change struct {
		s       schema.ProductStats
		existed bool
	}
	changes, err := appendRows(ctx, tx.pg, nil, `
		WITH sales AS (
			SELECT l.product_id,
				sum(l.quantity) FILTER (WHERE o.created_at > $2::TIMESTAMPTZ - INTERVAL '7 days') AS d7,
				sum(l.quantity) AS d30
			FROM orders o JOIN order_lines l ON l.tenant_id = o.tenant_id AND l.order_id = o.id
			WHERE o.tenant_id = $1 AND o.status = 'paid' AND o.created_at > $2::TIMESTAMPTZ - INTERVAL '30 days'
			GROUP BY l.product_id),
		rated AS (
			SELECT product_id, count(*) AS n, sum(rating) AS total FROM reviews
			WHERE tenant_id = $1 AND status = 'approved' GROUP BY product_id),
		fresh AS (
			SELECT COALESCE(s.product_id, r.product_id) AS product_id, COALESCE(s.d7, 0) AS d7, COALESCE(s.d30, 0) AS d30,
				COALESCE(r.n, 0) AS n, COALESCE(r.total, 0) AS total
			FROM sales s FULL JOIN rated r ON r.product_id = s.product_id)
		SELECT COALESCE(f.product_id, p.product_id), COALESCE(f.d7, 0), COALESCE(f.d30, 0), COALESCE(f.n, 0), COALESCE(f.total, 0),
			p.product_id IS NOT NULL
		FROM fresh f FULL JOIN (SELECT * FROM product_stats WHERE tenant_id = $1) p ON p.product_id = f.product_id
		WHERE p.product_id IS NULL OR p.purchases_7d <> COALESCE(f.d7, 0) OR p.purchases_30d <> COALESCE(f.d30, 0)
			OR p.review_count <> COALESCE(f.n, 0) OR p.rating_sum <> COALESCE(f.total, 0)
		ORDER BY 1 LIMIT $3`, func(row pgx.Row) (change, error) {
		var c change
		err := row.Scan(&c.s.ProductID, &c.s.Purchases7d, &c.s.Purchases30d, &c.s.ReviewCount, &c.s.RatingSum, &c.existed)
		return c, err
	}, t.ID, tx.Now(), limit)
	if err != nil {
		return 0, err
	}
	for i := range changes {
		c := &changes[i]
		c.s.UpdatedAt = tx.Now()
		zero := c.s.Purchases30d == 0 && c.s.ReviewCount == 0
		if err := tx.record(ctx, t, schema.KindStats, schema.IDString(c.s.ProductID), c.existed, !zero,
			func(v int64) { c.s.Version = v }, &c.s); err != nil {
			return 0, err
		}
		var err error
		if zero {
			_, err = tx.pg.Exec(ctx, `DELETE FROM product_stats WHERE tenant_id = $1 AND product_id = $2`, t.ID, int64(c.s.ProductID))
		} else {
			_, err = tx.pg.Exec(ctx, `INSERT INTO product_stats (tenant_id, product_id, purchases_7d, purchases_30d, review_count, rating_sum, updated_at, version)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, product_id) DO UPDATE SET purchases_7d = $3, purchases_30d = $4,
				review_count = $5, rating_sum = $6, updated_at = $7, version = $8`,
				t.ID, int64(c.s.ProductID), c.s.Purchases7d, c.s.Purchases30d, c.s.ReviewCount, c.s.RatingSum, c.s.UpdatedAt, c.s.Version)
		}
		if err != nil {
			return 0, err
		}
	}
	return len(changes), nil
}

// snapshotMerch emits the public merchandising entities of a tenant for a snapshot.
func (tx *Tx) snapshotMerch(ctx context.Context, tenantID string, emit emitFunc) error {
	err := eachRow(ctx, tx.pg, `SELECT `+flashSaleColumns+` FROM flash_sales WHERE tenant_id = $1 ORDER BY id`, func(row pgx.Row) error {
		f, err := scanFlashSale(row)
		if err != nil {
			return err
		}
		return emit(schema.KindFlashSale, schema.IDString(f.ID), schema.Pub, f, f.Version)
	}, tenantID)
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx.pg, `SELECT `+sectionColumns+` FROM storefront_sections WHERE tenant_id = $1 AND active ORDER BY id`, func(row pgx.Row) error {
		s, err := scanSection(row)
		if err != nil {
			return err
		}
		return emit(schema.KindSection, schema.IDString(s.ID), schema.Pub, s, s.Version)
	}, tenantID)
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx.pg, `SELECT `+reviewColumns+` FROM reviews WHERE tenant_id = $1 AND status = 'approved' ORDER BY id`, func(row pgx.Row) error {
		r, err := scanReview(row)
		if err != nil {
			return err
		}
		return emit(schema.KindReview, schema.IDString(r.ID), schema.Pub, &r.Review, r.Version)
	}, tenantID)
	if err != nil {
		return err
	}
	return eachRow(ctx, tx.pg, `SELECT product_id, purchases_7d, purchases_30d, review_count, rating_sum, updated_at, version FROM product_stats
		WHERE tenant_id = $1 ORDER BY product_id`, func(row pgx.Row) error {
		var s schema.ProductStats
		if err := row.Scan(&s.ProductID, &s.Purchases7d, &s.Purchases30d, &s.ReviewCount, &s.RatingSum, &s.UpdatedAt, &s.Version); err != nil {
			return err
		}
		s.UpdatedAt = s.UpdatedAt.UTC()
		return emit(schema.KindStats, schema.IDString(s.ProductID), schema.Pub, &s, s.Version)
	}, tenantID)
}
