// Package webhooks delivers a store's events to the endpoints it registered: the admin API that
// registers endpoints and shows their delivery log, and the Dispatcher that reads the event
// stream and sends each event, signed, to every endpoint subscribed to its kind.
//
// # Invariants
//
//   - An event is acknowledged on the stream only after its deliveries are committed, one per
//     subscribed endpoint and never two for the same endpoint and event: nothing is lost when an
//     origin dies, and a redelivered stream message adds nothing.
//   - Delivery is at least once. Every attempt is recorded; a duplicate carries the same event id
//     (X-Webhook-Event-Id and the envelope's id). Events are not ordered, not even those of one
//     order: a retried event arrives after later ones. Receivers order by created_at.
//   - Every request is signed as the spec says (X-Webhook-Signature: sha256=<hex HMAC-SHA256 of
//     the raw body>), with the endpoint's secret and, during a rotation's overlap, the previous
//     secret too (in the -Previous headers). Secrets are sealed at rest with the server secret
//     and shown once.
//   - Every request goes through the one outbound client: no loopback, private, link-local or
//     metadata address is reached unless the endpoint's allowlist names it, and no redirect is
//     followed.
//   - A slow or dead endpoint holds at most PerEndpoint deliveries in flight: it never delays
//     another endpoint or another store.
package webhooks

import (
	"context"
	"encoding/json"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Service manages a store's webhook endpoints and shows their delivery log. Its exported
// methods are the operations (the store settings page calls them too); the admin routes' handlers
// decode a request, call one and encode its answer. Its fields are set once.
type Service struct {
	*handler.Responder
	DB *store.DB
	// Dispatcher is woken when a test event or a redelivery is queued (nil: it polls).
	Dispatcher *Dispatcher
	sealer     *sealer
}

// NewService returns the admin service; serverSecret seals endpoint secrets.
func NewService(r *handler.Responder, db *store.DB, serverSecret []byte, d *Dispatcher) (*Service, error) {
	s, err := newSealer(serverSecret)
	if err != nil {
		return nil, err
	}
	return &Service{Responder: r, DB: db, Dispatcher: d, sealer: s}, nil
}

// Bind attaches the admin routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("admin.webhooks.list", s.list)
	t.Bind("admin.webhooks.create", s.create)
	t.Bind("admin.webhooks.get", s.get)
	t.Bind("admin.webhooks.update", s.update)
	t.Bind("admin.webhooks.delete", s.delete)
	t.Bind("admin.webhooks.rotate", s.rotate)
	t.Bind("admin.webhooks.test", s.test)
	t.Bind("admin.webhooks.deliveries", s.deliveries)
	t.Bind("admin.webhooks.redeliver", s.redeliver)
}

// Limits of an endpoint's settings.
const (
	maxURL         = 2048
	maxDescription = 500
	maxAllowlist   = 20
	// MaxOverlap bounds a secret rotation's overlap.
	MaxOverlap = 7 * 24 * time.Hour
	// DefaultOverlap is a rotation's overlap when none is asked for.
	DefaultOverlap = 24 * time.Hour
)

// Endpoint is an endpoint as the admin API shows it. Secret, the plaintext, is in the answers
// that created the endpoint or rotated its secret only.
type Endpoint struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events" doc:"The kinds delivered; empty: every kind."`
	IPAllowlist    []string   `json:"ip_allowlist" doc:"CIDRs; when set, deliveries go only to these addresses (private ones included)."`
	Description    string     `json:"description"`
	Enabled        bool       `json:"enabled"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	FailingSince   *time.Time `json:"failing_since,omitempty" doc:"The first failed attempt since the last delivered one."`
	Secret         string     `json:"secret,omitempty" doc:"The signing secret (whsec_…): in the answer that made or rotated it only."`
	PreviousUntil  *time.Time `json:"previous_secret_until,omitempty" doc:"Until then the previous secret signs too (X-Webhook-Signature-Previous)."`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

func endpointView(e *store.WebhookEndpoint, now time.Time) *Endpoint {
	v := &Endpoint{ID: e.ID, URL: e.URL, Events: e.Events, IPAllowlist: e.IPAllowlist, Description: e.Description,
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, DisabledAt: e.DisabledAt, FailingSince: e.FailingSince,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if v.Events == nil {
		v.Events = []string{}
	}
	if v.IPAllowlist == nil {
		v.IPAllowlist = []string{}
	}
	if e.PreviousUntil != nil && e.PreviousUntil.After(now) {
		v.PreviousUntil = e.PreviousUntil
	}
	return v
}

// Notice is something staff should know about an endpoint: today, that it was disabled.
type Notice struct {
	Kind       string    `json:"kind" doc:"webhook.disabled"`
	EndpointID string    `json:"endpoint_id"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// EndpointList is GET /api/admin/webhooks: every endpoint, and the notices about them.
type EndpointList struct {
	Data    []*Endpoint `json:"data"`
	Notices []Notice    `json:"notices"`
}

// List returns every endpoint of the store, oldest first, and the notices about them.
func (s *Service) List(ctx context.Context, t *schema.Tenant) (*EndpointList, error) {
	list, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]*store.WebhookEndpoint, error) {
		return tx.WebhookEndpoints(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := &EndpointList{Data: make([]*Endpoint, 0, len(list)), Notices: []Notice{}}
	for _, e := range list {
		out.Data = append(out.Data, endpointView(e, now))
		if !e.Enabled && e.DisabledAt != nil && e.DisabledReason != "" {
			out.Notices = append(out.Notices, Notice{Kind: "webhook.disabled", EndpointID: e.ID, Reason: e.DisabledReason, At: *e.DisabledAt})
		}
	}
	return out, nil
}

func (s *Service) list(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	out, err := s.List(ctx, rq.Info)
	s.Respond(ctx, rq, 200, err, out)
}

// EndpointInput is the body of POST /api/admin/webhooks (url required) and of PATCH
// /api/admin/webhooks/{id} (each field sent replaces the endpoint's).
type EndpointInput struct {
	URL         *string   `json:"url" doc:"https; http only to an address the allowlist names."`
	Events      *[]string `json:"events" doc:"Event kinds (order.created, …); empty or absent: every kind."`
	IPAllowlist *[]string `json:"ip_allowlist" doc:"Up to 20 CIDRs (or addresses)."`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

// apply checks the input and writes it onto e.
func (in *EndpointInput) apply(e *store.WebhookEndpoint) error {
	if in.Events != nil {
		seen := map[string]bool{}
		out := []string{}
		for _, k := range *in.Events {
			if !schema.ValidEventKind(k) {
				return schema.Invalid("events", "unknown event kind %q", k)
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
		slices.Sort(out)
		e.Events = out
	}
	if in.IPAllowlist != nil {
		if len(*in.IPAllowlist) > maxAllowlist {
			return schema.Invalid("ip_allowlist", "at most %d entries", int64(maxAllowlist))
		}
		out := []string{}
		for _, c := range *in.IPAllowlist {
			p, err := ParsePrefix(c)
			if err != nil {
				return schema.Invalid("ip_allowlist", "%q is not a CIDR or an IP address", c)
			}
			out = append(out, p.String())
		}
		e.IPAllowlist = out
	}
	if in.Description != nil {
		if err := schema.ValidateText("description", *in.Description, maxDescription, false); err != nil {
			return err
		}
		e.Description = *in.Description
	}
	if in.Enabled != nil {
		e.Enabled = *in.Enabled
		if e.Enabled {
			e.DisabledReason = ""
		} else if e.DisabledReason == "" {
			e.DisabledReason = "disabled by staff"
		}
	}
	if in.URL != nil {
		e.URL = strings.TrimSpace(*in.URL)
	}
	return checkURL(e.URL, e.IPAllowlist)
}

// ParsePrefix parses an allowlist entry: a CIDR, or one address (a /32 or /128).
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// checkURL refuses what can never be delivered to: not http(s), credentials in the URL, a
// fragment, and http to anything but an address the allowlist names.
func checkURL(raw string, allowlist []string) error {
	if raw == "" {
		return schema.Invalid("url", "url is required")
	}
	if len(raw) > maxURL {
		return schema.Invalid("url", "url is longer than %d characters", int64(maxURL))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return schema.Invalid("url", "url must be an absolute https URL")
	}
	if u.User != nil {
		return schema.Invalid("url", "url must not carry credentials")
	}
	if u.Fragment != "" {
		return schema.Invalid("url", "url must not have a fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
		if err == nil {
			for _, c := range allowlist {
				if p, err := ParsePrefix(c); err == nil && p.Contains(a.Unmap()) {
					return nil
				}
			}
		}
		return schema.Invalid("url", "url must be https; http is allowed only to an IP address the allowlist names")
	default:
		return schema.Invalid("url", "url must be an absolute https URL")
	}
}

// errDisabled refuses a test event or a redelivery to a disabled endpoint.
func errDisabled() error {
	return &schema.Error{Code: schema.CodeConflict, Message: "the endpoint is disabled; enable it first"}
}

// Create registers an endpoint (in.URL required) and returns it with its secret, the one time
// the plaintext is shown.
func (s *Service) Create(ctx context.Context, t *schema.Tenant, in EndpointInput) (*Endpoint, error) {
	if in.URL == nil {
		return nil, schema.Invalid("url", "url is required")
	}
	e := &store.WebhookEndpoint{Enabled: true, Events: []string{}, IPAllowlist: []string{}}
	if err := in.apply(e); err != nil {
		return nil, err
	}
	secret := NewSecret()
	e.Secret = s.sealer.seal(secret)
	if err := s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.CreateWebhookEndpoint(ctx, t, e) }); err != nil {
		return nil, err
	}
	v := endpointView(e, time.Now())
	v.Secret = secret
	return v, nil
}

func (s *Service) create(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in EndpointInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	v, err := s.Create(ctx, rq.Info, in)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/admin/webhooks/"+v.ID)
	s.Reply(ctx, rq, fasthttp.StatusCreated, v)
}

// Get returns one endpoint of the store.
func (s *Service) Get(ctx context.Context, t *schema.Tenant, id string) (*Endpoint, error) {
	e, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.WebhookEndpoint, error) {
		return tx.WebhookEndpointByID(ctx, t, id, false)
	})
	if err != nil {
		return nil, err
	}
	return endpointView(e, time.Now()), nil
}

func (s *Service) get(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	v, err := s.Get(ctx, rq.Info, pipeline.Param(ctx, "id"))
	s.Respond(ctx, rq, 200, err, v)
}

// Update changes an endpoint: each field of in that is set replaces the endpoint's. Disabling it
// cancels its pending deliveries; enabling it clears its failure record.
func (s *Service) Update(ctx context.Context, t *schema.Tenant, id string, in EndpointInput) (*Endpoint, error) {
	e, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.WebhookEndpoint, error) {
		e, err := tx.WebhookEndpointByID(ctx, t, id, true)
		if err != nil {
			return nil, err
		}
		if err := in.apply(e); err != nil {
			return nil, err
		}
		return e, tx.UpdateWebhookEndpoint(ctx, t, e)
	})
	if err != nil {
		return nil, err
	}
	return endpointView(e, time.Now()), nil
}

func (s *Service) update(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in EndpointInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	v, err := s.Update(ctx, rq.Info, pipeline.Param(ctx, "id"), in)
	s.Respond(ctx, rq, 200, err, v)
}

// Delete deletes an endpoint; its pending deliveries are cancelled.
func (s *Service) Delete(ctx context.Context, t *schema.Tenant, id string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteWebhookEndpoint(ctx, t, id) })
}

func (s *Service) delete(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	s.NoContentOr(ctx, rq, s.Delete(ctx, rq.Info, pipeline.Param(ctx, "id")))
}

// RotateInput is the body of POST /api/admin/webhooks/{id}/rotate-secret (may be empty).
type RotateInput struct {
	OverlapSeconds *int64 `json:"overlap_seconds" doc:"How long the old secret keeps signing too: 0 to 604800 (default 86400)."`
}

func errOverlap() error {
	return schema.Invalid("overlap_seconds", "overlap_seconds must be between 0 and %d", int64(MaxOverlap/time.Second))
}

// Rotate gives an endpoint a new secret and returns the endpoint with it, the one time the
// plaintext is shown. For overlap (0 to MaxOverlap) the previous secret signs too.
func (s *Service) Rotate(ctx context.Context, t *schema.Tenant, id string, overlap time.Duration) (*Endpoint, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return nil, errOverlap()
	}
	secret := NewSecret()
	now := time.Now()
	e, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.WebhookEndpoint, error) {
		e, err := tx.WebhookEndpointByID(ctx, t, id, true)
		if err != nil {
			return nil, err
		}
		e.PreviousSecret, e.PreviousUntil = nil, nil
		if overlap > 0 {
			until := now.Add(overlap).UTC()
			e.PreviousSecret, e.PreviousUntil = e.Secret, &until
		}
		e.Secret = s.sealer.seal(secret)
		return e, tx.UpdateWebhookEndpoint(ctx, t, e)
	})
	if err != nil {
		return nil, err
	}
	v := endpointView(e, now)
	v.Secret = secret
	return v, nil
}

func (s *Service) rotate(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in RotateInput
	if len(strings.TrimSpace(string(ctx.Request.Body()))) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	overlap := DefaultOverlap
	if in.OverlapSeconds != nil {
		// Checked in seconds first: a huge count would overflow a Duration.
		if *in.OverlapSeconds < 0 || *in.OverlapSeconds > int64(MaxOverlap/time.Second) {
			s.Fail(ctx, rq, errOverlap())
			return
		}
		overlap = time.Duration(*in.OverlapSeconds) * time.Second
	}
	v, err := s.Rotate(ctx, rq.Info, pipeline.Param(ctx, "id"), overlap)
	s.Respond(ctx, rq, 200, err, v)
}

// Queued is the answer to a test event or a redelivery: the delivery queued.
type Queued struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	Kind       string `json:"kind"`
}

// TestKind is the kind of a test event.
const TestKind = "webhook.test"

// SendTest queues a test event (kind TestKind) for an enabled endpoint.
func (s *Service) SendTest(ctx context.Context, t *schema.Tenant, id string) (*Queued, error) {
	d, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.WebhookDelivery, error) {
		e, err := tx.WebhookEndpointByID(ctx, t, id, false)
		if err != nil {
			return nil, err
		}
		if !e.Enabled {
			return nil, errDisabled()
		}
		id := store.NewUUID()
		body, err := Envelope{ID: id, Kind: TestKind, CreatedAt: time.Now().UTC(), Store: t.Slug,
			Data: json.RawMessage(`{"test":true}`)}.Encode()
		if err != nil {
			return nil, err
		}
		d := &store.WebhookDelivery{EndpointID: e.ID, EventID: id, Kind: TestKind, Source: store.SourceTest, Payload: body}
		return d, tx.AddDelivery(ctx, t, d)
	})
	if err != nil {
		return nil, err
	}
	s.Dispatcher.Wake()
	return &Queued{DeliveryID: d.ID, EventID: d.EventID, Kind: d.Kind}, nil
}

func (s *Service) test(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	q, err := s.SendTest(ctx, rq.Info, pipeline.Param(ctx, "id"))
	s.Respond(ctx, rq, fasthttp.StatusAccepted, err, q)
}

// Delivery is a delivery as the log shows it, with every attempt.
type Delivery struct {
	ID            string                  `json:"id"`
	EventID       string                  `json:"event_id"`
	Kind          string                  `json:"kind"`
	Source        string                  `json:"source" doc:"event, redeliver or test."`
	State         string                  `json:"state" doc:"pending, delivered, failed or cancelled."`
	Attempts      int                     `json:"attempts"`
	NextAttemptAt *time.Time              `json:"next_attempt_at,omitempty"`
	Payload       json.RawMessage         `json:"payload" doc:"The body sent, as signed."`
	Log           []*store.WebhookAttempt `json:"log"`
	CreatedAt     time.Time               `json:"created_at"`
	UpdatedAt     time.Time               `json:"updated_at"`
}

// DeliveryFilter narrows an endpoint's delivery log: each field set must match.
type DeliveryFilter struct {
	State, Kind, EventID string
	// Limit and Offset pick a page of the log, newest first.
	Limit, Offset int
}

// Deliveries returns a page of an endpoint's deliveries, newest first, each with every attempt,
// and how many deliveries match the filter.
func (s *Service) Deliveries(ctx context.Context, t *schema.Tenant, id string, f DeliveryFilter) ([]*Delivery, int, error) {
	type result struct {
		list     []*store.WebhookDelivery
		total    int
		attempts map[string][]*store.WebhookAttempt
	}
	r, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (result, error) {
		var r result
		e, err := tx.WebhookEndpointByID(ctx, t, id, false)
		if err != nil {
			return r, err
		}
		r.list, r.total, err = tx.WebhookDeliveries(ctx, t, store.DeliveryFilter{EndpointID: e.ID, State: f.State,
			Kind: f.Kind, EventID: f.EventID, Limit: f.Limit, Offset: f.Offset})
		if err != nil {
			return r, err
		}
		ids := make([]string, len(r.list))
		for i, d := range r.list {
			ids[i] = d.ID
		}
		r.attempts, err = tx.WebhookAttempts(ctx, t, ids)
		return r, err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Delivery, 0, len(r.list))
	for _, d := range r.list {
		v := &Delivery{ID: d.ID, EventID: d.EventID, Kind: d.Kind, Source: d.Source, State: d.State, Attempts: d.Attempts,
			Payload: d.Payload, Log: r.attempts[d.ID], CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
		if v.Log == nil {
			v.Log = []*store.WebhookAttempt{}
		}
		if d.State == store.DeliveryPending {
			next := d.NextAttemptAt
			v.NextAttemptAt = &next
		}
		out = append(out, v)
	}
	return out, r.total, nil
}

func (s *Service) deliveries(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, func(n string) (string, bool) {
		v := ctx.QueryArgs().Peek(n)
		return string(v), v != nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	list, total, err := s.Deliveries(ctx, rq.Info, pipeline.Param(ctx, "id"), DeliveryFilter{State: args.Str("state"),
		Kind: args.Str("kind"), EventID: args.Str("event_id"), Limit: perPage, Offset: (page - 1) * perPage})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := schema.Page[*Delivery]{Data: list, Page: page, PerPage: perPage, Total: total,
		TotalPages: (total + perPage - 1) / perPage}
	base := "/api/admin/webhooks/" + pipeline.Param(ctx, "id") + "/deliveries?per_page=" + strconv.Itoa(perPage) + "&page="
	if page < out.TotalPages {
		next := base + strconv.Itoa(page+1)
		out.Next = &next
	}
	if page > 1 {
		prev := base + strconv.Itoa(page-1)
		out.Prev = &prev
	}
	s.Reply(ctx, rq, 200, out)
}

// Redeliver queues the event of one of an enabled endpoint's deliveries again: a new delivery
// with the same event id.
func (s *Service) Redeliver(ctx context.Context, t *schema.Tenant, id, deliveryID string) (*Queued, error) {
	d, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.WebhookDelivery, error) {
		e, err := tx.WebhookEndpointByID(ctx, t, id, false)
		if err != nil {
			return nil, err
		}
		old, err := tx.WebhookDeliveryByID(ctx, t, deliveryID)
		if err != nil || old.EndpointID != e.ID {
			return nil, &schema.Error{Code: schema.CodeNotFound, Message: "webhook delivery not found"}
		}
		if !e.Enabled {
			return nil, errDisabled()
		}
		d := &store.WebhookDelivery{EndpointID: e.ID, EventID: old.EventID, Kind: old.Kind, Source: store.SourceRedeliver, Payload: old.Payload}
		return d, tx.AddDelivery(ctx, t, d)
	})
	if err != nil {
		return nil, err
	}
	s.Dispatcher.Wake()
	return &Queued{DeliveryID: d.ID, EventID: d.EventID, Kind: d.Kind}, nil
}

func (s *Service) redeliver(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	q, err := s.Redeliver(ctx, rq.Info, pipeline.Param(ctx, "id"), pipeline.Param(ctx, "delivery"))
	s.Respond(ctx, rq, fasthttp.StatusAccepted, err, q)
}

// Envelope is the body of every delivery.
type Envelope struct {
	// ID is the event's id: the same in every delivery of the event, a redelivery included.
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	CreatedAt time.Time       `json:"created_at"`
	Store     string          `json:"store"`
	Data      json.RawMessage `json:"data"`
}

// Encode is the envelope's JSON, the bytes that are signed.
func (e Envelope) Encode() ([]byte, error) { return schema.MarshalJSON(e) }
