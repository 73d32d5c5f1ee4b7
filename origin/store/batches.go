package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Label batch item states.
const (
	BatchQueued = "queued"
	BatchDone   = "done"
	BatchFailed = "failed"
)

// LabelBatch is a batch of label purchases, one per order.
type LabelBatch struct {
	ID          string
	Key         string
	RequestHash string
	Service     string
	CreatedAt   time.Time
	FinishedAt  *time.Time
	Items       []*BatchItem
}

// BatchItem is one order of a batch.
type BatchItem struct {
	Position  int             `json:"-"`
	Reference string          `json:"reference"`
	Status    string          `json:"status"`
	Error     string          `json:"error,omitempty"`
	Shipments json.RawMessage `json:"shipments"`
	QueuedAt  time.Time       `json:"-"`
}

// CreateLabelBatch records a batch and its items (queued), or returns the batch made before
// under the same key (created false).
func (tx *Tx) CreateLabelBatch(ctx context.Context, t *schema.Tenant, b *LabelBatch, refs []string) (created bool, err error) {
	var id string
	err = tx.pg.QueryRow(ctx, `INSERT INTO label_batches (tenant_id, idempotency_key, request_hash, service, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, idempotency_key) DO NOTHING RETURNING id::text`,
		t.ID, b.Key, b.RequestHash, b.Service, tx.Now()).Scan(&id)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	b.ID, b.CreatedAt = id, tx.Now()
	for i, ref := range refs {
		if _, err := tx.pg.Exec(ctx, `INSERT INTO label_batch_items (tenant_id, batch_id, position, reference, status, queued_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6)`, t.ID, id, i, ref, BatchQueued, tx.Now()); err != nil {
			return false, err
		}
		b.Items = append(b.Items, &BatchItem{Position: i, Reference: ref, Status: BatchQueued, Shipments: json.RawMessage("[]"), QueuedAt: tx.Now()})
	}
	return true, nil
}

// LabelBatchByKey returns the batch made under key, with its items, or nil.
func (tx *Tx) LabelBatchByKey(ctx context.Context, t *schema.Tenant, key string) (*LabelBatch, error) {
	var id string
	err := tx.pg.QueryRow(ctx, `SELECT id::text FROM label_batches WHERE tenant_id = $1 AND idempotency_key = $2`, t.ID, key).Scan(&id)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return tx.LabelBatch(ctx, t, id)
}

// LabelBatch returns a batch with its items, or a 404 error.
func (tx *Tx) LabelBatch(ctx context.Context, t *schema.Tenant, id string) (*LabelBatch, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("label batch")
	}
	b := &LabelBatch{}
	err := tx.pg.QueryRow(ctx, `SELECT id::text, idempotency_key, request_hash, service, created_at, finished_at FROM label_batches
		WHERE tenant_id = $1 AND id = $2`, t.ID, id).Scan(&b.ID, &b.Key, &b.RequestHash, &b.Service, &b.CreatedAt, &b.FinishedAt)
	if err == pgx.ErrNoRows {
		return nil, notFound("label batch")
	}
	if err != nil {
		return nil, err
	}
	b.Items, err = appendRows(ctx, tx.pg, nil, `SELECT position, reference, status, error, shipments, queued_at FROM label_batch_items
		WHERE tenant_id = $1 AND batch_id = $2 ORDER BY position`, func(row pgx.Row) (*BatchItem, error) {
		it := &BatchItem{}
		var sh []byte
		err := row.Scan(&it.Position, &it.Reference, &it.Status, &it.Error, &sh, &it.QueuedAt)
		it.Shipments = sh
		return it, err
	}, t.ID, id)
	return b, err
}

// FinishBatchItem records an item's outcome (done with its shipments, or failed), unless it is
// finished already, and closes the batch when it was its last open item.
func (tx *Tx) FinishBatchItem(ctx context.Context, t *schema.Tenant, batchID string, position int, status, errMsg string, shipments json.RawMessage) error {
	if shipments == nil {
		shipments = json.RawMessage("[]")
	}
	if _, err := tx.pg.Exec(ctx, `UPDATE label_batch_items SET status = $4, error = $5, shipments = $6, updated_at = $7
		WHERE tenant_id = $1 AND batch_id = $2 AND position = $3 AND status = $8`,
		t.ID, batchID, position, status, errMsg, []byte(shipments), tx.Now(), BatchQueued); err != nil {
		return err
	}
	_, err := tx.pg.Exec(ctx, `UPDATE label_batches SET finished_at = $3 WHERE tenant_id = $1 AND id = $2 AND finished_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM label_batch_items WHERE tenant_id = $1 AND batch_id = $2 AND status = $4)`,
		t.ID, batchID, tx.Now(), BatchQueued)
	return err
}

// QueuedBatchItems returns, across tenants, items queued before cutoff (their message may have
// been lost before it reached the queue): tenant slug, batch id, position.
func (db *DB) QueuedBatchItems(ctx context.Context, cutoff time.Time, limit int) ([][3]string, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT tn.slug, i.batch_id::text, i.position::text FROM label_batch_items i
		JOIN tenants tn ON tn.id = i.tenant_id WHERE i.status = $1 AND i.queued_at < $2 ORDER BY i.queued_at LIMIT $3`,
		func(row pgx.Row) ([3]string, error) {
			var r [3]string
			err := row.Scan(&r[0], &r[1], &r[2])
			return r, err
		}, BatchQueued, cutoff, limit)
	return out, mapError(err)
}
