// Package stripe is a payment.Provider on Stripe's PaymentIntents API, through the official
// stripe-go client.
//
// # Mapping
//
//   - Authorize creates and confirms a PaymentIntent with capture_method=manual (an
//     authorization hold), then captures it. The checkout marks an order paid as soon as its
//     payment is approved and has no later capture step, so an approved Result is a captured
//     payment: leaving it uncaptured would let the hold lapse after seven days. The manual
//     capture still buys something: a payment that needs the shopper (3-D Secure) or whose
//     outcome is unknown is cancelled as a hold, never refunded as a charge.
//   - With Request.SaveMethod, a Customer is created first and the PaymentIntent saves the card
//     for off-session use (setup_future_usage=off_session); Result.Method is "cus_…/pm_…".
//   - Charge confirms an off-session PaymentIntent on a saved method, then captures it as
//     Authorize does. Stripe's authentication_required is a decline asking the customer to
//     update the payment method.
//   - Void cancels the PaymentIntent under a key (cancelling a cancelled one is fine); one that
//     was captured already is refunded in full.
//   - Refund creates a Refund of the PaymentIntent, for a partial amount or the rest.
//
// Amounts are minor units, currencies are sent lowercase, and every object carries the tenant
// and the Vitrine key in its metadata (vitrine_tenant, vitrine_key, vitrine_refund).
//
// # Invariants
//
//   - Every POST carries an Idempotency-Key derived from the caller's key and the tenant
//     ("<tenant>/<key>", plus "/capture", "/cancel"… for the steps after it), so a retry after a
//     crash or a timeout replays Stripe's first answer and moves no money twice.
//   - A decline (card_error, or a request Stripe refused as invalid) is a Result with Approved
//     false and a reason safe to show the shopper; anything else (network, timeout, 5xx, 429,
//     409 idempotency_key_in_use, 401) is an error: the outcome is unknown.
//   - To void or refund a key it finds the PaymentIntent by, in order: the caller's reference,
//     what this process saw under the key (an authorization whose outcome is unknown is replayed
//     with the same key and parameters, which returns its outcome or performs it once), and
//     Stripe's search on metadata (eventually consistent: a payment shows there within about a
//     minute; the origin's sweeper voids only orders older than that).
//   - The secret key is never logged nor put in an error.
package stripe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	stripe "github.com/stripe/stripe-go/v82"

	"vitrine/origin/payment"
)

// Config configures a Provider.
type Config struct {
	// SecretKey is the Stripe secret (sk_…) or restricted (rk_…) key. Required; never logged.
	SecretKey string
	// APIURL is Stripe's API base URL (default https://api.stripe.com); stripe-mock's
	// http://127.0.0.1:12111 in tests.
	APIURL string
	// Timeout bounds one HTTP request to Stripe (default 30s). A request that times out has an
	// unknown outcome.
	Timeout time.Duration
	// Retries is how many times stripe-go retries a request that failed on the network or that
	// Stripe asked to retry, with the same Idempotency-Key (default 2; negative: none).
	Retries int
	// HTTPClient replaces the client built from Timeout (tests).
	HTTPClient *http.Client
	// Logger receives stripe-go's messages (default slog.Default()).
	Logger *slog.Logger
	// Remember is how many keys this process remembers to void or refund without a search
	// (default 4096).
	Remember int
}

// Errors of New.
var (
	ErrNoKey  = errors.New("stripe: a secret key is required (sk_… or rk_…)")
	ErrBadKey = errors.New("stripe: the key is not a secret key: it must start with sk_ or rk_ (a publishable pk_ key cannot move money)")
)

// ErrNotFound is Refund's error when no PaymentIntent is known or found for the payment's key:
// Stripe's search may not show a payment of the last minute yet, so the outcome is unknown and
// a retry later may find it.
var ErrNotFound = errors.New("stripe: no PaymentIntent found for the payment yet")

// Metadata keys set on Stripe objects.
const (
	MetaTenant = "vitrine_tenant"
	MetaKey    = "vitrine_key"
	MetaRefund = "vitrine_refund"
)

// Provider is a payment.Provider on Stripe. It is safe for concurrent use.
type Provider struct {
	sc  *stripe.Client
	log *slog.Logger
	mem *memory
}

var _ payment.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) (*Provider, error) {
	if cfg.SecretKey == "" {
		return nil, ErrNoKey
	}
	if !strings.HasPrefix(cfg.SecretKey, "sk_") && !strings.HasPrefix(cfg.SecretKey, "rk_") {
		return nil, ErrBadKey
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Remember <= 0 {
		cfg.Remember = 4096
	}
	retries := int64(2)
	if cfg.Retries > 0 {
		retries = int64(cfg.Retries)
	} else if cfg.Retries < 0 {
		retries = 0
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: cfg.Timeout}
	}
	log := cfg.Logger.With("component", "stripe")
	bc := &stripe.BackendConfig{HTTPClient: hc, LeveledLogger: leveled{log}, MaxNetworkRetries: stripe.Int64(retries),
		EnableTelemetry: stripe.Bool(false)}
	if cfg.APIURL != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.APIURL, "/"))
	}
	sc := stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))
	return &Provider{sc: sc, log: log, mem: newMemory(cfg.Remember)}, nil
}

// idem returns the Idempotency-Key of a step of the operation under key: keys are scoped by
// tenant, as one Stripe account serves every tenant.
func idem(tenantID, key, step string) string {
	k := tenantID + "/" + key
	if step != "" {
		k += "/" + step
	}
	if len(k) > 255 { // Stripe's limit
		sum := sha256.Sum256([]byte(k))
		k = "sha256/" + hex.EncodeToString(sum[:])
	}
	return k
}

func meta(tenantID, key string) map[string]string {
	return map[string]string{MetaTenant: tenantID, MetaKey: key}
}

// opened is a PaymentIntent created under a key, or the decline that refused it.
type opened struct {
	pi      *stripe.PaymentIntent
	decline *payment.Result
}

// replayer creates (again, under the same Idempotency-Key and parameters) the PaymentIntent of
// an authorization or charge.
type replayer func(ctx context.Context) (opened, error)

// Authorize implements payment.Provider.
func (p *Provider) Authorize(ctx context.Context, r payment.Request) (payment.Result, error) {
	open := func(ctx context.Context) (opened, error) { return p.openAuthorization(ctx, r) }
	p.mem.replay(r.TenantID, r.Key, open)
	o, err := open(ctx)
	if err != nil {
		return payment.Result{}, err
	}
	return p.finish(ctx, r.TenantID, r.Key, o, r.SaveMethod)
}

// openAuthorization creates and confirms the PaymentIntent of r (and its Customer when the
// method is to be saved).
func (p *Provider) openAuthorization(ctx context.Context, r payment.Request) (opened, error) {
	params := &stripe.PaymentIntentCreateParams{
		Amount:             stripe.Int64(r.Amount),
		Currency:           stripe.String(strings.ToLower(r.Currency)),
		CaptureMethod:      stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
		Confirm:            stripe.Bool(true),
		PaymentMethod:      stripe.String(r.Token),
		PaymentMethodTypes: stripe.StringSlice([]string{"card"}),
		Metadata:           meta(r.TenantID, r.Key),
	}
	if r.SaveMethod {
		cp := &stripe.CustomerCreateParams{Metadata: meta(r.TenantID, r.Key)}
		if r.Email != "" {
			cp.Email = stripe.String(r.Email)
		}
		cp.SetIdempotencyKey(idem(r.TenantID, r.Key, "customer"))
		c, err := p.sc.V1Customers.Create(ctx, cp)
		if err != nil {
			return opened{}, fmt.Errorf("stripe: creating the customer: %w", err)
		}
		params.Customer = stripe.String(c.ID)
		params.SetupFutureUsage = stripe.String(string(stripe.PaymentIntentSetupFutureUsageOffSession))
	}
	params.SetIdempotencyKey(idem(r.TenantID, r.Key, ""))
	return p.create(ctx, params, "")
}

// Charge implements payment.Provider: an off-session PaymentIntent on the saved method.
func (p *Provider) Charge(ctx context.Context, r payment.ChargeRequest) (payment.Result, error) {
	customer, method, ok := parseMethod(r.Method)
	if !ok {
		return payment.Result{DeclineReason: "The saved payment method is unknown."}, nil
	}
	open := func(ctx context.Context) (opened, error) {
		params := &stripe.PaymentIntentCreateParams{
			Amount:             stripe.Int64(r.Amount),
			Currency:           stripe.String(strings.ToLower(r.Currency)),
			CaptureMethod:      stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
			Confirm:            stripe.Bool(true),
			OffSession:         stripe.Bool(true),
			Customer:           stripe.String(customer),
			PaymentMethod:      stripe.String(method),
			PaymentMethodTypes: stripe.StringSlice([]string{"card"}),
			Metadata:           meta(r.TenantID, r.Key),
		}
		params.SetIdempotencyKey(idem(r.TenantID, r.Key, ""))
		return p.create(ctx, params, reasonAuthenticationRequired)
	}
	p.mem.replay(r.TenantID, r.Key, open)
	o, err := open(ctx)
	if err != nil {
		return payment.Result{}, err
	}
	return p.finish(ctx, r.TenantID, r.Key, o, false)
}

// parseMethod splits a saved method's reference, "cus_…/pm_…", into its Customer and
// PaymentMethod ids.
func parseMethod(s string) (customer, method string, ok bool) {
	customer, method, ok = strings.Cut(s, "/")
	if !ok || len(customer) <= len("cus_") || len(method) <= len("pm_") || !strings.HasPrefix(customer, "cus_") ||
		!strings.HasPrefix(method, "pm_") || strings.Contains(method, "/") {
		return "", "", false
	}
	return customer, method, true
}

// reasonAuthenticationRequired is the decline of an off-session charge the bank wants the
// customer to authenticate.
const reasonAuthenticationRequired = "Your bank asks you to confirm this payment, which cannot be done while you are away: " +
	"update your payment method to continue."

// reasonRequiresAction is the decline of a checkout payment that needs 3-D Secure.
const reasonRequiresAction = "Your bank asks you to authenticate this payment, which this checkout cannot do: use another card."

// create sends a PaymentIntent create: a refusal is an opened with a decline, anything whose
// outcome is unknown an error. authRequired, if set, is the reason given for
// authentication_required.
func (p *Provider) create(ctx context.Context, params *stripe.PaymentIntentCreateParams, authRequired string) (opened, error) {
	pi, err := p.sc.V1PaymentIntents.Create(ctx, params)
	if err == nil {
		return opened{pi: pi}, nil
	}
	se, definite := refused(err)
	if !definite {
		return opened{}, fmt.Errorf("stripe: creating the payment: %w", unknown(err))
	}
	res := &payment.Result{DeclineReason: declineReason(se)}
	if se.Code == stripe.ErrorCodeAuthenticationRequired && authRequired != "" {
		res.DeclineReason = authRequired
	}
	if se.PaymentIntent != nil {
		res.ID = se.PaymentIntent.ID
	}
	return opened{decline: res}, nil
}

// finish turns a created PaymentIntent into a Result: it captures an authorization, cancels
// one that needs the shopper, and reports a declined one.
func (p *Provider) finish(ctx context.Context, tenantID, key string, o opened, save bool) (payment.Result, error) {
	if o.decline != nil {
		p.mem.forget(tenantID, key)
		return *o.decline, nil
	}
	pi := o.pi
	p.mem.saw(tenantID, key, pi.ID)
	switch pi.Status {
	case stripe.PaymentIntentStatusRequiresCapture:
		cp := &stripe.PaymentIntentCaptureParams{}
		cp.SetIdempotencyKey(idem(tenantID, key, "capture"))
		captured, err := p.sc.V1PaymentIntents.Capture(ctx, pi.ID, cp)
		if err != nil {
			return payment.Result{}, fmt.Errorf("stripe: capturing %s: %w", pi.ID, unknown(err))
		}
		if captured.Status != stripe.PaymentIntentStatusSucceeded {
			return payment.Result{}, fmt.Errorf("stripe: capturing %s left it %s", pi.ID, captured.Status)
		}
		if captured.Customer == nil {
			captured.Customer = pi.Customer
		}
		if captured.PaymentMethod == nil {
			captured.PaymentMethod = pi.PaymentMethod
		}
		pi = captured
	case stripe.PaymentIntentStatusSucceeded:
	case stripe.PaymentIntentStatusRequiresAction:
		if err := p.cancel(ctx, tenantID, key, pi.ID); err != nil {
			return payment.Result{}, err
		}
		return payment.Result{ID: pi.ID, DeclineReason: reasonRequiresAction}, nil
	case stripe.PaymentIntentStatusRequiresPaymentMethod, stripe.PaymentIntentStatusCanceled:
		reason := "Your card was declined."
		if pi.LastPaymentError != nil {
			reason = declineReason(pi.LastPaymentError)
		}
		return payment.Result{ID: pi.ID, DeclineReason: reason}, nil
	default: // processing, requires_confirmation: not settled yet
		return payment.Result{}, fmt.Errorf("stripe: payment %s is %s", pi.ID, pi.Status)
	}
	res := payment.Result{Approved: true, ID: pi.ID}
	if save {
		if pi.Customer == nil || pi.PaymentMethod == nil || pi.Customer.ID == "" || pi.PaymentMethod.ID == "" {
			return payment.Result{}, fmt.Errorf("stripe: payment %s saved no customer and payment method", pi.ID)
		}
		res.Method = pi.Customer.ID + "/" + pi.PaymentMethod.ID
	}
	return res, nil
}

// cancel cancels a PaymentIntent; one cancelled already is fine.
func (p *Provider) cancel(ctx context.Context, tenantID, key, id string) error {
	cp := &stripe.PaymentIntentCancelParams{}
	cp.SetIdempotencyKey(idem(tenantID, key, "cancel"))
	_, err := p.sc.V1PaymentIntents.Cancel(ctx, id, cp)
	if err == nil {
		return nil
	}
	var se *stripe.Error
	if errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState {
		if pi, gerr := p.sc.V1PaymentIntents.Retrieve(ctx, id, nil); gerr == nil && pi.Status == stripe.PaymentIntentStatusCanceled {
			return nil
		}
	}
	return fmt.Errorf("stripe: cancelling %s: %w", id, unknown(err))
}

// Void implements payment.Provider: it cancels the PaymentIntent under key, or refunds it in
// full if it was captured. A key with no PaymentIntent (never sent, or declined) has nothing to
// void.
func (p *Provider) Void(ctx context.Context, tenantID, key string) error {
	id, replay := p.mem.recall(tenantID, key)
	switch {
	case id != "":
	case replay != nil:
		o, err := replay(ctx)
		if err != nil {
			return err
		}
		if o.decline != nil {
			p.mem.forget(tenantID, key)
			return nil
		}
		id = o.pi.ID
	default:
		pi, err := p.search(ctx, tenantID, key)
		if err != nil {
			return err
		}
		if pi == nil {
			return nil
		}
		id = pi.ID
	}
	pi, err := p.sc.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return fmt.Errorf("stripe: reading %s: %w", id, unknown(err))
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusCanceled:
	case stripe.PaymentIntentStatusSucceeded:
		rp := &stripe.RefundCreateParams{PaymentIntent: stripe.String(id), Metadata: meta(tenantID, key)}
		rp.Metadata[MetaRefund] = "void"
		rp.SetIdempotencyKey(idem(tenantID, key, "void"))
		if _, err := p.sc.V1Refunds.Create(ctx, rp); err != nil {
			var se *stripe.Error
			if !errors.As(err, &se) || se.Code != stripe.ErrorCodeChargeAlreadyRefunded {
				return fmt.Errorf("stripe: refunding %s to void it: %w", id, unknown(err))
			}
		}
	case stripe.PaymentIntentStatusProcessing:
		return fmt.Errorf("stripe: payment %s is processing; void it later", id)
	default:
		if err := p.cancel(ctx, tenantID, key, id); err != nil {
			return err
		}
	}
	p.mem.forget(tenantID, key)
	return nil
}

// Refund implements payment.Provider.
func (p *Provider) Refund(ctx context.Context, r payment.RefundRequest) (payment.RefundResult, error) {
	id := r.PaymentID
	if !strings.HasPrefix(id, "pi_") {
		id, _ = p.mem.recall(r.TenantID, r.PaymentKey)
	}
	if id == "" {
		pi, err := p.search(ctx, r.TenantID, r.PaymentKey)
		if err != nil {
			return payment.RefundResult{}, err
		}
		if pi == nil {
			return payment.RefundResult{}, ErrNotFound
		}
		id = pi.ID
	}
	rp := &stripe.RefundCreateParams{PaymentIntent: stripe.String(id), Amount: stripe.Int64(r.Amount), Metadata: meta(r.TenantID, r.PaymentKey)}
	rp.Metadata[MetaRefund] = r.Key
	rp.SetIdempotencyKey(idem(r.TenantID, r.Key, ""))
	ref, err := p.sc.V1Refunds.Create(ctx, rp)
	if err != nil {
		se, definite := refused(err)
		if !definite {
			return payment.RefundResult{}, fmt.Errorf("stripe: refunding %s: %w", id, unknown(err))
		}
		return payment.RefundResult{Reason: se.Msg}, nil
	}
	switch ref.Status {
	case stripe.RefundStatusFailed, stripe.RefundStatusCanceled:
		reason := "The refund failed."
		if ref.FailureReason != "" {
			reason = "The refund failed: " + strings.ReplaceAll(string(ref.FailureReason), "_", " ") + "."
		}
		return payment.RefundResult{ID: ref.ID, Reason: reason}, nil
	}
	return payment.RefundResult{OK: true, ID: ref.ID}, nil
}

// search finds the PaymentIntent under a key by its metadata (nil when there is none).
func (p *Provider) search(ctx context.Context, tenantID, key string) (*stripe.PaymentIntent, error) {
	q := fmt.Sprintf("metadata['%s']:'%s' AND metadata['%s']:'%s'", MetaKey, quote(key), MetaTenant, quote(tenantID))
	sp := &stripe.PaymentIntentSearchParams{SearchParams: stripe.SearchParams{Query: q, Limit: stripe.Int64(10)}}
	for pi, err := range p.sc.V1PaymentIntents.Search(ctx, sp) {
		if err != nil {
			return nil, fmt.Errorf("stripe: searching the payment of %s: %w", key, unknown(err))
		}
		if pi.Metadata[MetaKey] == key && pi.Metadata[MetaTenant] == tenantID {
			return pi, nil
		}
	}
	return nil, nil
}

// quote escapes a value for Stripe's search query language.
func quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

// refused reports whether err is Stripe's definite refusal (nothing was done): a card error, or
// a request Stripe rejected as invalid. Idempotency errors, rate limits, authentication and
// server errors are not: their outcome is unknown or the request must be retried.
func refused(err error) (*stripe.Error, bool) {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return nil, false
	}
	switch {
	case se.Type == stripe.ErrorTypeCard:
		return se, true
	case se.Type == stripe.ErrorTypeInvalidRequest && se.HTTPStatusCode == http.StatusBadRequest:
		return se, true
	}
	return se, false
}

// declineReason is the shopper-safe message of a refusal: Stripe's card error messages are
// written for the cardholder; other refusals get a generic one.
func declineReason(se *stripe.Error) string {
	if se.Type == stripe.ErrorTypeCard && se.Msg != "" {
		return se.Msg
	}
	return "The payment method was not accepted."
}

// unknown returns an error of Stripe's as a short, loggable error: type, code, status, message
// and request id (stripe.Error's own text is its whole JSON).
func unknown(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return err
	}
	return &apiError{err: se}
}

// apiError is a Stripe API error whose outcome is unknown.
type apiError struct{ err *stripe.Error }

func (e *apiError) Error() string {
	s := fmt.Sprintf("%s (HTTP %d", e.err.Type, e.err.HTTPStatusCode)
	if e.err.Code != "" {
		s += ", " + string(e.err.Code)
	}
	if e.err.RequestID != "" {
		s += ", request " + e.err.RequestID
	}
	return s + "): " + e.err.Msg
}

func (e *apiError) Unwrap() error { return e.err }

// leveled adapts slog to stripe-go's logger: its request lines are debug, its errors info
// (declines are ordinary; the caller logs what matters).
type leveled struct{ log *slog.Logger }

func (l leveled) Debugf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l leveled) Infof(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l leveled) Warnf(format string, v ...any)  { l.log.Info(fmt.Sprintf(format, v...)) }
func (l leveled) Errorf(format string, v ...any) { l.log.Info(fmt.Sprintf(format, v...)) }

// memory remembers, per tenant and key, the PaymentIntent this process saw or the request that
// creates it, for Void and Refund to act without a search. It is bounded: the oldest entries go
// first.
type memory struct {
	mu      sync.Mutex
	entries map[string]memo
	ring    []slot
	next    int
	seq     uint64
}

type memo struct {
	seq    uint64
	id     string
	replay replayer
}

type slot struct {
	key string
	seq uint64
}

func newMemory(n int) *memory {
	return &memory{entries: map[string]memo{}, ring: make([]slot, n)}
}

func (m *memory) put(tenantID, key string, e memo) {
	k := tenantID + "/" + key
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.entries[k]; ok {
		e.seq = old.seq
		if e.replay == nil {
			e.replay = old.replay
		}
		m.entries[k] = e
		return
	}
	m.seq++
	e.seq = m.seq
	if s := m.ring[m.next]; s.key != "" && m.entries[s.key].seq == s.seq {
		delete(m.entries, s.key)
	}
	m.ring[m.next] = slot{key: k, seq: e.seq}
	m.next = (m.next + 1) % len(m.ring)
	m.entries[k] = e
}

// replay remembers how to create the PaymentIntent under key, before it is sent.
func (m *memory) replay(tenantID, key string, r replayer) { m.put(tenantID, key, memo{replay: r}) }

// saw remembers the PaymentIntent created under key.
func (m *memory) saw(tenantID, key, id string) { m.put(tenantID, key, memo{id: id}) }

func (m *memory) forget(tenantID, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, tenantID+"/"+key)
}

func (m *memory) recall(tenantID, key string) (string, replayer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[tenantID+"/"+key]
	return e.id, e.replay
}
