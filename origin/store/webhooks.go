package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"vitrine/schema"
)

// WebhookEndpoint is a store's webhook endpoint as stored. Its secrets are sealed by the caller
// (package webhooks) before they reach the database and opened after.
type WebhookEndpoint struct {
	ID             string
	URL            string
	Events         []string
	IPAllowlist    []string
	Description    string
	Secret         []byte
	PreviousSecret []byte
	PreviousUntil  *time.Time
	Enabled        bool
	DisabledReason string
	DisabledAt     *time.Time
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Subscribes reports whether the endpoint wants events of kind.
func (e *WebhookEndpoint) Subscribes(kind string) bool {
	if len(e.Events) == 0 {
		return true
	}
	for _, k := range e.Events {
		if k == kind {
			return true
		}
	}
	return false
}

const webhookEndpointColumns = `id::text, url, events, ip_allowlist, description, secret, previous_secret, previous_until,
	enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at`

func scanWebhookEndpoint(row pgx.Row) (*WebhookEndpoint, error) {
	e := &WebhookEndpoint{}
	err := row.Scan(&e.ID, &e.URL, &e.Events, &e.IPAllowlist, &e.Description, &e.Secret, &e.PreviousSecret, &e.PreviousUntil,
		&e.Enabled, &e.DisabledReason, &e.DisabledAt, &e.FailingSince, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

// CreateWebhookEndpoint stores a new endpoint (every field but the id and times set by the
// caller) and fills in its id and times.
func (tx *Tx) CreateWebhookEndpoint(ctx context.Context, t *schema.Tenant, e *WebhookEndpoint) error {
	e.CreatedAt, e.UpdatedAt = tx.Now(), tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO webhook_endpoints (tenant_id, url, events, ip_allowlist, description, secret,
		enabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id::text`,
		t.ID, e.URL, nonNilStrings(e.Events), nonNilStrings(e.IPAllowlist), e.Description, e.Secret, e.Enabled, tx.Now()).Scan(&e.ID)
}

// WebhookEndpoints lists a store's endpoints, oldest first.
func (tx *Tx) WebhookEndpoints(ctx context.Context, t *schema.Tenant) ([]*WebhookEndpoint, error) {
	return appendRows(ctx, tx.pg, []*WebhookEndpoint{}, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE tenant_id = $1 ORDER BY created_at, id`, scanWebhookEndpoint, t.ID)
}

// WebhookEndpointByID returns one of a store's endpoints.
func (tx *Tx) WebhookEndpointByID(ctx context.Context, t *schema.Tenant, id string, forUpdate bool) (*WebhookEndpoint, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("webhook endpoint")
	}
	q := `SELECT ` + webhookEndpointColumns + ` FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	e, err := scanWebhookEndpoint(tx.pg.QueryRow(ctx, q, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("webhook endpoint")
	}
	return e, err
}

// UpdateWebhookEndpoint writes an endpoint's settings and secrets as the caller changed them. A
// disabled endpoint's pending deliveries are cancelled; enabling it clears the failure record.
func (tx *Tx) UpdateWebhookEndpoint(ctx context.Context, t *schema.Tenant, e *WebhookEndpoint) error {
	e.UpdatedAt = tx.Now()
	if e.Enabled {
		e.DisabledReason, e.DisabledAt, e.FailingSince = "", nil, nil
	} else if e.DisabledAt == nil {
		now := tx.Now()
		e.DisabledAt = &now
	}
	if _, err := tx.pg.Exec(ctx, `UPDATE webhook_endpoints SET url = $3, events = $4, ip_allowlist = $5, description = $6,
		secret = $7, previous_secret = $8, previous_until = $9, enabled = $10, disabled_reason = $11, disabled_at = $12,
		failing_since = $13, updated_at = $14 WHERE tenant_id = $1 AND id = $2`,
		t.ID, e.ID, e.URL, nonNilStrings(e.Events), nonNilStrings(e.IPAllowlist), e.Description, e.Secret, e.PreviousSecret, e.PreviousUntil,
		e.Enabled, e.DisabledReason, e.DisabledAt, e.FailingSince, tx.Now()); err != nil {
		return err
	}
	if !e.Enabled {
		return tx.cancelDeliveries(ctx, t.ID, e.ID)
	}
	return nil
}

// DeleteWebhookEndpoint deletes an endpoint; its pending deliveries are cancelled and its log
// stays until the retention horizon.
func (tx *Tx) DeleteWebhookEndpoint(ctx context.Context, t *schema.Tenant, id string) error {
	if !schema.ValidUUID(id) {
		return notFound("webhook endpoint")
	}
	tag, err := tx.pg.Exec(ctx, `DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`, t.ID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("webhook endpoint")
	}
	return tx.cancelDeliveries(ctx, t.ID, id)
}

func (tx *Tx) cancelDeliveries(ctx context.Context, tenantID, endpointID string) error {
	_, err := tx.pg.Exec(ctx, `UPDATE webhook_deliveries SET state = 'cancelled', lease_until = NULL, lease_token = NULL, updated_at = $3
		WHERE tenant_id = $1 AND endpoint_id = $2 AND state = 'pending'`, tenantID, endpointID, tx.Now())
	return err
}

// WebhookDelivery is one delivery owed to an endpoint: one event (or a redelivery, or a test).
type WebhookDelivery struct {
	ID string
	// TenantID is the store's id (set for AddDeliveries).
	TenantID      string
	EndpointID    string
	EventID       string
	Kind          string
	Source        string
	Payload       []byte
	State         string
	Attempts      int
	NextAttemptAt time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryCancelled = "cancelled"
)

// Delivery sources.
const (
	SourceEvent     = "event"
	SourceRedeliver = "redeliver"
	SourceTest      = "test"
)

const webhookDeliveryColumns = `id::text, endpoint_id::text, event_id::text, kind, source, payload, state, attempts,
	next_attempt_at, created_at, updated_at`

func scanWebhookDelivery(row pgx.Row) (*WebhookDelivery, error) {
	d := &WebhookDelivery{}
	err := row.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.Kind, &d.Source, &d.Payload, &d.State, &d.Attempts,
		&d.NextAttemptAt, &d.CreatedAt, &d.UpdatedAt)
	return d, err
}

// SubscribedEndpoints returns the store's enabled endpoints that want events of kind.
func (db *DB) SubscribedEndpoints(ctx context.Context, tenantID, kind string) ([]*WebhookEndpoint, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE tenant_id = $1 AND enabled AND (cardinality(events) = 0 OR $2 = ANY(events)) ORDER BY id`, scanWebhookEndpoint, tenantID, kind)
	return out, mapError(err)
}

// AddDeliveries queues deliveries (TenantID, EndpointID, EventID, Kind, Source and Payload set
// by the caller), due now, in one statement. An event already queued for an endpoint is not
// queued again: a stream message delivered twice adds nothing. It returns how many were added.
//
// Only endpoints still enabled get one: the caller chose them from an earlier read, and an
// endpoint disabled or deleted since had its pending deliveries cancelled, so one queued after
// would stay pending at it. The statement reads the endpoints it inserts for, in a serializable
// transaction: against a concurrent disabling (which writes the endpoint and cancels the
// endpoint's pending rows) one of the two fails its serialization check and is retried.
func (db *DB) AddDeliveries(ctx context.Context, ds []*WebhookDelivery, now time.Time) (int, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	cols := make([][]string, 5)
	payloads := make([][]byte, len(ds))
	for i, d := range ds {
		cols[0] = append(cols[0], d.TenantID)
		cols[1] = append(cols[1], d.EndpointID)
		cols[2] = append(cols[2], d.EventID)
		cols[3] = append(cols[3], d.Kind)
		cols[4] = append(cols[4], d.Source)
		payloads[i] = d.Payload
	}
	var ids [3][]pgtype.UUID
	for i := range ids {
		var err error
		if ids[i], err = uuidArray(cols[i]); err != nil {
			return 0, err
		}
	}
	return TxValue(ctx, db, func(tx *Tx) (int, error) {
		tag, err := tx.pg.Exec(ctx, `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, kind, source, payload,
			state, next_attempt_at, created_at, updated_at)
			SELECT r.t, r.e, r.v, r.k, r.s, r.p, 'pending', $7, $7, $7
			FROM unnest($1::UUID[], $2::UUID[], $3::UUID[], $4::TEXT[], $5::TEXT[], $6::BYTEA[]) AS r(t, e, v, k, s, p)
			JOIN webhook_endpoints w ON w.tenant_id = r.t AND w.id = r.e AND w.enabled
			ON CONFLICT (endpoint_id, event_id) WHERE source = 'event' DO NOTHING`,
			ids[0], ids[1], ids[2], cols[3], cols[4], payloads, now)
		return int(tag.RowsAffected()), err
	})
}

// ClaimedDelivery is a delivery claimed by one worker, with its endpoint as it was when claimed.
type ClaimedDelivery struct {
	WebhookDelivery
	TenantID string
	Token    string
	Endpoint WebhookEndpoint
}

// ClaimDeliveries leases up to limit due deliveries until now+lease, never more than
// perEndpoint in flight for one endpoint (counting those other workers hold), oldest due first.
// A delivery whose lease ran out (its worker died mid-attempt) is due again; the lost attempt,
// which may have reached the endpoint, is logged as such before the delivery is tried again.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, perEndpoint, limit int) ([]*ClaimedDelivery, error) {
	token := NewUUID()
	type claim struct {
		tenant, id string
		lost       *time.Time
	}
	ids, err := appendRows(ctx, db.pool, nil, `
		WITH inflight AS (
			SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
			WHERE state = 'pending' AND lease_until > $1 GROUP BY endpoint_id),
		endpoints AS (
			SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1),
		pick AS (
			SELECT c.tenant_id, c.id, c.lease_until FROM endpoints e
			LEFT JOIN inflight i ON i.endpoint_id = e.endpoint_id
			CROSS JOIN LATERAL (
				SELECT d.tenant_id, d.id, d.lease_until, d.next_attempt_at FROM webhook_deliveries d
				WHERE d.endpoint_id = e.endpoint_id AND d.state = 'pending' AND d.next_attempt_at <= $1
					AND (d.lease_until IS NULL OR d.lease_until <= $1)
				ORDER BY d.next_attempt_at, d.id LIMIT GREATEST($3 - COALESCE(i.n, 0), 0)) c
			ORDER BY c.next_attempt_at, c.id LIMIT $4)
		UPDATE webhook_deliveries w SET lease_until = $2, lease_token = $5
		FROM pick WHERE w.tenant_id = pick.tenant_id AND w.id = pick.id
			AND w.state = 'pending' AND (w.lease_until IS NULL OR w.lease_until <= $1)
		RETURNING w.tenant_id::text, w.id::text, pick.lease_until`, func(row pgx.Row) (claim, error) {
		var c claim
		err := row.Scan(&c.tenant, &c.id, &c.lost)
		return c, err
	}, now, now.Add(lease), perEndpoint, limit, token)
	if err != nil || len(ids) == 0 {
		return nil, mapError(err)
	}
	for _, c := range ids {
		if c.lost == nil {
			continue
		}
		if _, err := db.pool.Exec(ctx, `WITH d AS (
				UPDATE webhook_deliveries SET attempts = attempts + 1, updated_at = $3
				WHERE tenant_id = $1 AND id = $2 RETURNING attempts)
			INSERT INTO webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms, request_headers, error)
			SELECT $1, $2, d.attempts, $4, 0, '{}', $5 FROM d`,
			c.tenant, c.id, now, c.lost.Add(-lease),
			"the origin making this attempt stopped before recording its answer (its lease ran out); the endpoint may have received it"); err != nil {
			return nil, mapError(err)
		}
	}
	tenants, deliveries := make([]string, len(ids)), make([]string, len(ids))
	for i, c := range ids {
		tenants[i], deliveries[i] = c.tenant, c.id
	}
	tenantArg, err := uuidArray(tenants)
	if err != nil {
		return nil, err
	}
	deliveryArg, err := uuidArray(deliveries)
	if err != nil {
		return nil, err
	}
	out, err := appendRows(ctx, db.pool, nil, `SELECT d.tenant_id::text, `+prefixed("d.", webhookDeliveryColumns)+`, `+
		prefixed("e.", webhookEndpointColumns)+`
		FROM unnest($1::UUID[], $2::UUID[]) AS k (tenant_id, id)
		JOIN webhook_deliveries d ON d.tenant_id = k.tenant_id AND d.id = k.id
		JOIN webhook_endpoints e ON e.tenant_id = d.tenant_id AND e.id = d.endpoint_id`, func(row pgx.Row) (*ClaimedDelivery, error) {
		c := &ClaimedDelivery{Token: token}
		d, e := &c.WebhookDelivery, &c.Endpoint
		err := row.Scan(&c.TenantID, &d.ID, &d.EndpointID, &d.EventID, &d.Kind, &d.Source, &d.Payload, &d.State, &d.Attempts,
			&d.NextAttemptAt, &d.CreatedAt, &d.UpdatedAt,
			&e.ID, &e.URL, &e.Events, &e.IPAllowlist, &e.Description, &e.Secret, &e.PreviousSecret, &e.PreviousUntil,
			&e.Enabled, &e.DisabledReason, &e.DisabledAt, &e.FailingSince, &e.CreatedAt, &e.UpdatedAt)
		return c, err
	}, tenantArg, deliveryArg)
	return out, mapError(err)
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, columns string) string {
	var out []byte
	start := true
	for i := 0; i < len(columns); i++ {
		c := columns[i]
		if start && c != ' ' && c != '\n' && c != '\t' {
			out = append(out, alias...)
			start = false
		}
		out = append(out, c)
		if c == ',' {
			start = true
		}
	}
	return string(out)
}

// WebhookAttempt is one attempt to deliver, as recorded in the delivery log.
type WebhookAttempt struct {
	DeliveryID      string            `json:"-"`
	Attempt         int               `json:"attempt"`
	StartedAt       time.Time         `json:"started_at"`
	DurationMS      int               `json:"duration_ms"`
	RequestHeaders  map[string]string `json:"request_headers"`
	RemoteAddr      string            `json:"remote_addr"`
	ResponseStatus  int               `json:"response_status"`
	ResponseHeaders map[string]string `json:"response_headers"`
	ResponseBody    string            `json:"response_body"`
	Error           string            `json:"error"`
}

// AttemptOutcome is what an attempt leaves the delivery and its endpoint in.
type AttemptOutcome struct {
	// State is the delivery's next state: pending (retry at RetryAt), delivered or failed.
	State   string
	RetryAt time.Time
	// Succeeded says the endpoint answered 2xx: its failure record is cleared.
	Succeeded bool
	// Disable, when set, disables the endpoint with this reason (a 410, or failing too long).
	Disable string
	// DisableAfter disables the endpoint when it has been failing since before this time.
	DisableAfter time.Time
}

// RecordAttempt writes an attempt and its outcome, if the worker's lease still holds (token): a
// worker that lost its lease to another writes nothing and learns so (false). It returns the
// endpoint's disabled reason when this attempt disabled it.
func (db *DB) RecordAttempt(ctx context.Context, c *ClaimedDelivery, a *WebhookAttempt, o AttemptOutcome, now time.Time) (held bool, disabled string, err error) {
	err = db.Tx(ctx, func(tx *Tx) error {
		held, disabled = false, ""
		reqh, _ := json.Marshal(a.RequestHeaders)
		resh, _ := json.Marshal(a.ResponseHeaders)
		var next *time.Time
		if o.State == DeliveryPending {
			next = &o.RetryAt
		}
		tag, err := tx.pg.Exec(ctx, `UPDATE webhook_deliveries SET state = $4, attempts = attempts + 1,
			next_attempt_at = COALESCE($5, next_attempt_at), lease_until = NULL, lease_token = NULL, updated_at = $6
			WHERE tenant_id = $1 AND id = $2 AND lease_token = $3 AND state = 'pending'`,
			c.TenantID, c.ID, c.Token, o.State, next, now)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		held = true
		if _, err := tx.pg.Exec(ctx, `INSERT INTO webhook_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms,
			request_headers, remote_addr, response_status, response_headers, response_body, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			c.TenantID, c.ID, a.Attempt, a.StartedAt, a.DurationMS, reqh, a.RemoteAddr, a.ResponseStatus, resh, a.ResponseBody, a.Error); err != nil {
			return err
		}
		if o.Succeeded {
			if c.Endpoint.FailingSince == nil {
				return nil // nothing to clear, as claimed
			}
			_, err := tx.pg.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE tenant_id = $1 AND id = $2 AND failing_since IS NOT NULL`,
				c.TenantID, c.EndpointID)
			return err
		}
		var since *time.Time
		if err := tx.pg.QueryRow(ctx, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $3)
			WHERE tenant_id = $1 AND id = $2 RETURNING failing_since`, c.TenantID, c.EndpointID, a.StartedAt).Scan(&since); err != nil {
			if err == pgx.ErrNoRows {
				return nil // deleted meanwhile
			}
			return err
		}
		reason := o.Disable
		if reason == "" && since != nil && !o.DisableAfter.IsZero() && since.Before(o.DisableAfter) {
			reason = "failing since " + since.UTC().Format(time.RFC3339)
		}
		if reason == "" {
			return nil
		}
		tag, err = tx.pg.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, disabled_at = $4, updated_at = $4
			WHERE tenant_id = $1 AND id = $2 AND enabled`, c.TenantID, c.EndpointID, reason, now)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		disabled = reason
		return tx.cancelDeliveries(ctx, c.TenantID, c.EndpointID)
	})
	return held, disabled, err
}

// DeliveryFilter narrows a delivery log listing.
type DeliveryFilter struct {
	EndpointID string
	State      string
	Kind       string
	EventID    string
	Limit      int
	Offset     int
}

// WebhookDeliveries lists an endpoint's deliveries, newest first, and how many match.
func (tx *Tx) WebhookDeliveries(ctx context.Context, t *schema.Tenant, f DeliveryFilter) ([]*WebhookDelivery, int, error) {
	where := `tenant_id = $1 AND endpoint_id = $2 AND ($3 = '' OR state = $3) AND ($4 = '' OR kind = $4)
		AND ($5 = '' OR event_id::text = $5)`
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE `+where,
		t.ID, f.EndpointID, f.State, f.Kind, f.EventID).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []*WebhookDelivery{}, `SELECT `+webhookDeliveryColumns+` FROM webhook_deliveries
		WHERE `+where+` ORDER BY created_at DESC, id LIMIT $6 OFFSET $7`, scanWebhookDelivery,
		t.ID, f.EndpointID, f.State, f.Kind, f.EventID, f.Limit, f.Offset)
	return out, total, err
}

// WebhookDeliveryByID returns one of a store's deliveries.
func (tx *Tx) WebhookDeliveryByID(ctx context.Context, t *schema.Tenant, id string) (*WebhookDelivery, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("webhook delivery")
	}
	d, err := scanWebhookDelivery(tx.pg.QueryRow(ctx, `SELECT `+webhookDeliveryColumns+` FROM webhook_deliveries
		WHERE tenant_id = $1 AND id = $2`, t.ID, id))
	if err == pgx.ErrNoRows {
		return nil, notFound("webhook delivery")
	}
	return d, err
}

// WebhookAttempts returns the attempts of deliveries, by delivery id, in attempt order.
func (tx *Tx) WebhookAttempts(ctx context.Context, t *schema.Tenant, deliveryIDs []string) (map[string][]*WebhookAttempt, error) {
	idArg, err := uuidArray(deliveryIDs)
	if err != nil {
		return nil, err
	}
	rows, err := appendRows(ctx, tx.pg, nil, `SELECT delivery_id::text, attempt, started_at, duration_ms, request_headers, remote_addr,
		response_status, response_headers, response_body, error FROM webhook_attempts
		WHERE tenant_id = $1 AND delivery_id = ANY($2::UUID[]) ORDER BY delivery_id, attempt`, func(row pgx.Row) (*WebhookAttempt, error) {
		a := &WebhookAttempt{}
		var reqh, resh []byte
		if err := row.Scan(&a.DeliveryID, &a.Attempt, &a.StartedAt, &a.DurationMS, &reqh, &a.RemoteAddr, &a.ResponseStatus, &resh,
			&a.ResponseBody, &a.Error); err != nil {
			return nil, err
		}
		_ = json.Unmarshal(reqh, &a.RequestHeaders)
		_ = json.Unmarshal(resh, &a.ResponseHeaders)
		return a, nil
	}, t.ID, idArg)
	if err != nil {
		return nil, err
	}
	out := map[string][]*WebhookAttempt{}
	for _, a := range rows {
		out[a.DeliveryID] = append(out[a.DeliveryID], a)
	}
	return out, nil
}

// AddDelivery queues one delivery outside the event stream (a redelivery or a test event) for
// an endpoint of the store, due now.
func (tx *Tx) AddDelivery(ctx context.Context, t *schema.Tenant, d *WebhookDelivery) error {
	d.State, d.CreatedAt, d.UpdatedAt, d.NextAttemptAt = DeliveryPending, tx.Now(), tx.Now(), tx.Now()
	return tx.pg.QueryRow(ctx, `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, kind, source, payload,
		state, next_attempt_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7, $7) RETURNING id::text`,
		t.ID, d.EndpointID, d.EventID, d.Kind, d.Source, d.Payload, tx.Now()).Scan(&d.ID)
}

// PruneWebhookLog deletes finished deliveries created before horizon, with their attempts.
func (db *DB) PruneWebhookLog(ctx context.Context, horizon time.Time) (int64, error) {
	var n int64
	err := db.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.pg.Exec(ctx, `DELETE FROM webhook_attempts a USING webhook_deliveries d
			WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id AND d.created_at < $1 AND d.state <> 'pending'`, horizon); err != nil {
			return err
		}
		tag, err := tx.pg.Exec(ctx, `DELETE FROM webhook_deliveries WHERE created_at < $1 AND state <> 'pending'`, horizon)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
