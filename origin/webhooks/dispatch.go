package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge/outbound"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/feed"
)

// Config tunes a Dispatcher. Zero values mean the defaults.
type Config struct {
	// Workers bounds the deliveries in flight in this process (default 32).
	Workers int
	// PerEndpoint bounds the deliveries in flight to one endpoint, across origins (default 4).
	PerEndpoint int
	// Timeout bounds one attempt, connection to last byte (default 10 s).
	Timeout time.Duration
	// Schedule is the wait before each retry; its length is the number of retries (default:
	// 30 s, 2 m, 10 m, 30 m, 1 h, 2 h, 4 h, 6 h, 8 h: about a day). Each wait is jittered ±20%.
	Schedule []time.Duration
	// DisableAfter disables an endpoint that has failed every attempt for this long (default
	// 3 days).
	DisableAfter time.Duration
	// Lease is how long a claimed delivery is held by its origin before another may try it
	// (default Timeout + 5 s: an attempt never outlives it).
	Lease time.Duration
	// Poll is how often due retries are looked for without a wake (default 1 s).
	Poll time.Duration
	// Retention is how long finished deliveries and their attempts are kept (default 30 days).
	Retention time.Duration
	// Durable is the event stream consumer's name, shared by every origin (default "webhooks").
	Durable string
	// AckWait is how long the stream waits for an origin to acknowledge an event before giving
	// it to another (default 30 s).
	AckWait time.Duration
}

// DefaultSchedule is the retry schedule: ten attempts over about a day.
var DefaultSchedule = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 6 * time.Hour, 8 * time.Hour}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.PerEndpoint <= 0 {
		c.PerEndpoint = 4
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule
	}
	if c.Lease < c.Timeout+time.Second {
		c.Lease = c.Timeout + 5*time.Second
	}
	if c.DisableAfter <= 0 {
		c.DisableAfter = 3 * 24 * time.Hour
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	if c.Durable == "" {
		c.Durable = "webhooks"
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	return c
}

// Dispatcher turns events into deliveries and sends them. Several origins run one each: they
// share the stream consumer and claim deliveries with leases.
type Dispatcher struct {
	cfg    Config
	db     *store.DB
	js     jetstream.JetStream
	feed   feed.Config
	client *outbound.Client
	sealer *sealer
	log    *slog.Logger
	wake   chan struct{}
	slots  chan struct{}

	fanned, delivered, retried, failed, refused *metrics.Counter
}

// NewDispatcher returns a dispatcher; serverSecret opens the endpoints' sealed secrets. ms
// receives its counters (nil: a private set).
func NewDispatcher(cfg Config, db *store.DB, js jetstream.JetStream, fc feed.Config, client *outbound.Client, serverSecret []byte,
	log *slog.Logger, ms *metrics.Set) (*Dispatcher, error) {
	s, err := newSealer(serverSecret)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = metrics.NewSet()
	}
	cfg = cfg.withDefaults()
	return &Dispatcher{cfg: cfg, db: db, js: js, feed: fc.WithDefaults(), client: client, sealer: s, log: log,
		wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.Workers),
		fanned:    ms.GetOrCreateCounter(`vitrine_webhook_deliveries_queued_total`),
		delivered: ms.GetOrCreateCounter(`vitrine_webhook_attempts_total{outcome="delivered"}`),
		retried:   ms.GetOrCreateCounter(`vitrine_webhook_attempts_total{outcome="retry"}`),
		failed:    ms.GetOrCreateCounter(`vitrine_webhook_attempts_total{outcome="failed"}`),
		refused:   ms.GetOrCreateCounter(`vitrine_webhook_attempts_total{outcome="refused"}`),
	}, nil
}

// Wake asks the delivery loop to look for due deliveries now. A nil dispatcher ignores it.
func (d *Dispatcher) Wake() {
	if d == nil {
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run reads the event stream and delivers until ctx ends; in-flight attempts finish first.
func (d *Dispatcher) Run(ctx context.Context) error {
	if _, err := feed.EnsureEventStream(ctx, d.js, d.feed); err != nil {
		return err
	}
	c, err := d.js.CreateOrUpdateConsumer(ctx, d.feed.EventStream, jetstream.ConsumerConfig{Durable: d.cfg.Durable,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: d.cfg.AckWait, MaxAckPending: 1024,
		FilterSubject: d.feed.Prefix + "_events.>"})
	if err != nil {
		return fmt.Errorf("webhooks: event consumer: %w", err)
	}
	// Events are fanned out in batches: one lookup per store and kind, one insert per batch,
	// then every message of the batch acknowledged (a failed batch is redelivered whole: the
	// unique index makes that harmless).
	go func() {
		for ctx.Err() == nil {
			batch, err := c.Fetch(fanOutBatch, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				if ctx.Err() == nil {
					d.log.Warn("webhooks: fetching events", "err", err)
					time.Sleep(time.Second)
				}
				continue
			}
			var msgs []jetstream.Msg
			for m := range batch.Messages() {
				msgs = append(msgs, m)
			}
			if len(msgs) == 0 {
				continue
			}
			if err := d.fanOut(ctx, msgs); err != nil {
				d.log.Warn("webhooks: events not queued; they will be redelivered", "err", err, "events", len(msgs))
				for _, m := range msgs {
					m.NakWithDelay(time.Second)
				}
				continue
			}
			for _, m := range msgs {
				m.Ack()
			}
			d.Wake()
		}
	}()
	var wg sync.WaitGroup
	d.deliverLoop(ctx, &wg)
	wg.Wait()
	return nil
}

// fanOutBatch is how many events are fanned out in one transaction.
const fanOutBatch = 256

// fanOut queues events for every endpoint of their store subscribed to their kind.
func (d *Dispatcher) fanOut(ctx context.Context, msgs []jetstream.Msg) error {
	type key struct{ tenant, kind string }
	subscribed := map[key][]*store.WebhookEndpoint{}
	var ds []*store.WebhookDelivery
	for _, m := range msgs {
		h := m.Headers()
		id, kind, tenant := h.Get(jetstream.MsgIDHeader), h.Get(feed.HeaderEventKind), h.Get(feed.HeaderEventTenant)
		if id == "" || kind == "" || tenant == "" || !schema.ValidUUID(id) || !schema.ValidUUID(tenant) {
			d.log.Warn("webhooks: an event without its id, kind or store is dropped", "subject", m.Subject())
			continue
		}
		k := key{tenant, kind}
		endpoints, seen := subscribed[k]
		if !seen {
			var err error
			if endpoints, err = d.db.SubscribedEndpoints(ctx, tenant, kind); err != nil {
				return err
			}
			subscribed[k] = endpoints
		}
		if len(endpoints) == 0 {
			continue
		}
		body, err := d.envelope(ctx, m, id, kind, tenant)
		if schema.ErrorCode(err) == schema.CodeNotFound {
			continue // the store is gone
		}
		if err != nil {
			return err
		}
		for _, e := range endpoints {
			ds = append(ds, &store.WebhookDelivery{TenantID: tenant, EndpointID: e.ID, EventID: id, Kind: kind, Source: store.SourceEvent, Payload: body})
		}
	}
	n, err := d.db.AddDeliveries(ctx, ds, time.Now())
	d.fanned.Add(n)
	return err
}

// envelope is the body delivered for an event message. The message is the event as the store
// wrote it (store.Event): its data, store slug and creation time go into the envelope; a
// malformed one is delivered with null data rather than lost.
func (d *Dispatcher) envelope(ctx context.Context, m jetstream.Msg, id, kind, tenant string) ([]byte, error) {
	var ev struct {
		Tenant  string          `json:"tenant"`
		Created time.Time       `json:"created_at"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(m.Data(), &ev); err != nil || len(ev.Data) == 0 {
		d.log.Warn("webhooks: an event's body does not decode; delivered with null data", "id", id, "err", err)
		ev.Data = json.RawMessage(`null`)
	}
	if ev.Created.IsZero() {
		ev.Created, _ = time.Parse(time.RFC3339Nano, m.Headers().Get(feed.HeaderEventCreated))
	}
	if ev.Tenant == "" {
		t, err := d.db.TenantByID(ctx, tenant)
		if err != nil {
			return nil, err
		}
		ev.Tenant = t.Slug
	}
	return Envelope{ID: id, Kind: kind, CreatedAt: ev.Created.UTC(), Store: ev.Tenant, Data: ev.Data}.Encode()
}

// deliverLoop claims due deliveries whenever a worker slot is free, until ctx ends.
func (d *Dispatcher) deliverLoop(ctx context.Context, wg *sync.WaitGroup) {
	poll := time.NewTicker(d.cfg.Poll)
	defer poll.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		free := d.cfg.Workers - len(d.slots)
		if free > 0 {
			claimed, err := d.db.ClaimDeliveries(ctx, time.Now(), d.cfg.Lease, d.cfg.PerEndpoint, free)
			if err != nil && ctx.Err() == nil {
				d.log.Warn("webhooks: claiming deliveries", "err", err)
			}
			for _, c := range claimed {
				d.slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-d.slots; wg.Done(); d.Wake() }() // a slot is free: claim again
					d.attempt(context.WithoutCancel(ctx), c)
				}()
			}
			if len(claimed) == free {
				continue // there may be more due
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-poll.C:
		case <-prune.C:
			if n, err := d.db.PruneWebhookLog(ctx, time.Now().Add(-d.cfg.Retention)); err != nil {
				d.log.Warn("webhooks: pruning the delivery log", "err", err)
			} else if n > 0 {
				d.log.Info("webhooks: delivery log pruned", "deliveries", n)
			}
		}
	}
}

// maxLoggedBody bounds the part of an answer kept in the delivery log.
const maxLoggedBody = 4 << 10

// attempt sends one delivery and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, c *store.ClaimedDelivery) {
	now := time.Now()
	n := c.Attempts + 1
	a := &store.WebhookAttempt{Attempt: n, StartedAt: now.UTC(), RequestHeaders: map[string]string{}, ResponseHeaders: map[string]string{}}
	req, err := d.request(ctx, c, n, now)
	var resp *outbound.Response
	if err == nil {
		for k := range req.Header {
			a.RequestHeaders[k] = req.Header.Get(k)
		}
		resp, err = d.client.Do(ctx, req, outbound.CallOptions{Allowlist: allowlist(c.Endpoint.IPAllowlist), MaxBody: maxLoggedBody,
			Timeout: d.cfg.Timeout})
	}
	a.DurationMS = int(time.Since(now) / time.Millisecond)
	o := store.AttemptOutcome{DisableAfter: now.Add(-d.cfg.DisableAfter)}
	var refused *outbound.RefusedError
	switch {
	case err == nil && resp.Status >= 200 && resp.Status < 300:
		o.State, o.Succeeded = store.DeliveryDelivered, true
	case err == nil && resp.Status == http.StatusGone:
		o.State, o.Disable = store.DeliveryFailed, "the endpoint answered 410 Gone"
	case errors.As(err, &refused):
		a.Error = "refused: " + refused.Error()
		d.refused.Inc()
	case err != nil:
		a.Error = err.Error()
	}
	if resp != nil {
		a.ResponseStatus, a.RemoteAddr = resp.Status, resp.RemoteAddr
		a.ResponseBody = string(bytes.ToValidUTF8(resp.Body, []byte("\uFFFD")))
		for k := range resp.Header {
			a.ResponseHeaders[k] = resp.Header.Get(k)
		}
		if a.Error == "" && o.State == "" {
			a.Error = "answered " + strconv.Itoa(resp.Status)
		}
	}
	if o.State == "" {
		if c.Source == store.SourceTest || n > len(d.cfg.Schedule) {
			o.State = store.DeliveryFailed // a test event is tried once: staff are watching
		} else {
			o.State, o.RetryAt = store.DeliveryPending, now.Add(jitter(d.cfg.Schedule[n-1]))
		}
	}
	held, disabled, err := d.db.RecordAttempt(ctx, c, a, o, time.Now())
	switch {
	case err != nil:
		d.log.Warn("webhooks: recording an attempt", "err", err, "delivery", c.ID)
	case !held:
		d.log.Info("webhooks: a delivery's lease ran out before its attempt was recorded; another origin retries it", "delivery", c.ID)
	}
	if disabled != "" {
		d.log.Warn("webhooks: endpoint disabled", "endpoint", c.EndpointID, "reason", disabled)
	}
	switch o.State {
	case store.DeliveryDelivered:
		d.delivered.Inc()
	case store.DeliveryPending:
		d.retried.Inc()
	default:
		d.failed.Inc()
	}
}

// request builds the signed request of a delivery's attempt n.
func (d *Dispatcher) request(ctx context.Context, c *store.ClaimedDelivery, n int, now time.Time) (*http.Request, error) {
	secret, err := d.sealer.open(c.Endpoint.Secret)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint.URL, bytes.NewReader(c.Payload))
	if err != nil {
		return nil, err
	}
	ts := now.Unix()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set(HeaderSignature, Signature(secret, c.Payload))
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderTimestampSignature, TimestampSignature(secret, ts, c.Payload))
	h.Set(HeaderEventID, c.EventID)
	h.Set(HeaderEventKind, c.Kind)
	h.Set(HeaderDeliveryID, c.ID)
	h.Set(HeaderAttempt, strconv.Itoa(n))
	if c.Endpoint.PreviousSecret != nil && c.Endpoint.PreviousUntil != nil && now.Before(*c.Endpoint.PreviousUntil) {
		if prev, err := d.sealer.open(c.Endpoint.PreviousSecret); err == nil {
			h.Set(HeaderPreviousSignature, Signature(prev, c.Payload))
			h.Set(HeaderPreviousTimestampSignature, TimestampSignature(prev, ts, c.Payload))
		}
	}
	return req, nil
}

func allowlist(cidrs []string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		if p, err := ParsePrefix(c); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// jitter spreads a wait by ±20% so that retries of one outage do not arrive together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}
