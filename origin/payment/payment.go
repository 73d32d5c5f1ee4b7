// Package payment is the checkout's interface to payment providers, and the built-in test
// provider.
//
// The checkout calls a Provider outside any database transaction, in three steps: it reserves
// stock, coupons and gift-card amounts in one transaction, then authorizes the payment, then
// commits the order (or compensates the reservation) in another. A transaction that is retried
// therefore never calls the provider, and the one call it makes carries an idempotency key (the
// order id): a checkout resumed after a crash authorizes under the same key and is not charged
// twice.
//
// Subscriptions add one step on each side. A checkout that starts a subscription authorizes
// with Request.SaveMethod: an approved authorization then also saves the payment method for
// later use and names it in Result.Method (an opaque reference: a real provider's customer and
// payment method, kept by the origin, never shown). A renewal charges that method off-session
// (Charge), the customer absent, with an idempotency key of its own (the renewal order's id,
// one per subscription, period and attempt).
//
// # Invariants
//
//   - Authorize with a key that was authorized before returns that authorization and charges
//     nothing more.
//   - An error from Authorize means the outcome is unknown (a timeout, the provider down): the
//     caller voids the key before releasing the reservation. A decline is not an error: it is a
//     Result with Approved false.
//   - Charge follows the same rules: a key charged before returns that charge and moves nothing
//     more; an error means the outcome is unknown (retry with the same key, or void it).
//
// # Test tokens
//
// The Test provider understands these payment tokens (the Token* constants):
//
//   - tok_visa: approved; its saved method's renewals are approved.
//   - tok_declined, tok_no_funds: declined ("Your card was declined.", "Your card has
//     insufficient funds.").
//   - tok_error: the provider fails (an error: outcome unknown).
//   - tok_renewals_declined: approved at checkout; every renewal charged to its saved method is
//     declined ("Your card was declined."), so a subscription goes past_due and, after its last
//     retry, is cancelled.
//   - tok_renewal_declined_once: approved at checkout; the first renewal charged to its saved
//     method is declined, later ones are approved (a past_due subscription that recovers).
//
// Any other token is declined.
package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// Request is one authorization request.
type Request struct {
	TenantID string
	// Key is the idempotency key: the order id.
	Key      string
	Amount   int64 // minor units, > 0
	Currency string
	// Token is the payment method as the storefront's provider integration tokenised it.
	Token string
	Email string
	// SaveMethod asks the provider to keep the payment method for off-session charges (a
	// subscription's renewals): an approved Result then names it in Method.
	SaveMethod bool
}

// Result is the outcome of an authorization.
type Result struct {
	Approved bool
	// ID is the provider's reference of the authorization.
	ID string
	// DeclineReason is a message safe to show the shopper.
	DeclineReason string
	// Method is the saved payment method of an approved Request with SaveMethod: the provider's
	// opaque reference, to charge with Charge.
	Method string
}

// Provider authorizes, voids and refunds payments, and charges saved payment methods.
type Provider interface {
	Authorize(ctx context.Context, r Request) (Result, error)
	Void(ctx context.Context, tenantID, key string) error
	// Refund returns money of the payment authorized under r.PaymentKey. Called again with the
	// same r.Key it returns the first call's result and moves nothing more. An error means the
	// outcome is unknown; a refusal (nothing left to refund) is a RefundResult with OK false.
	Refund(ctx context.Context, r RefundRequest) (RefundResult, error)
	// Charge charges a saved payment method off-session (the customer absent: a subscription's
	// renewal). It is an authorization like Authorize's, under r.Key: Void and Refund take that
	// key as they take an authorization's.
	Charge(ctx context.Context, r ChargeRequest) (Result, error)
}

// ChargeRequest is one off-session charge of a saved payment method.
type ChargeRequest struct {
	TenantID string
	// Key is the idempotency key: the renewal order's id.
	Key string
	// Method is the saved method, as Result.Method named it.
	Method   string
	Amount   int64 // minor units, > 0
	Currency string
	Email    string
}

// RefundRequest is one refund request.
type RefundRequest struct {
	TenantID string
	// PaymentKey is the authorization's idempotency key (the order id).
	PaymentKey string
	// PaymentID is the provider's reference of that authorization (Result.ID, the order's
	// payment reference) when the caller knows it. Optional: a provider that needs it finds the
	// payment by PaymentKey otherwise.
	PaymentID string
	// Key is the refund's idempotency key (the refund id).
	Key      string
	Amount   int64 // minor units, > 0
	Currency string
}

// RefundResult is the outcome of a refund.
type RefundResult struct {
	OK bool
	// ID is the provider's reference of the refund.
	ID string
	// Reason says why a refund was refused.
	Reason string
}

// Ledger stores the test provider's authorizations (the origin's database).
type Ledger interface {
	TestAuthorize(ctx context.Context, tenantID, key, id string, amount int64, currency, status string) (LedgerEntry, error)
	TestVoid(ctx context.Context, tenantID, key string) error
	// TestRefund records a refund of the payment under paymentKey, once under key, refusing
	// (ok false) one that would take the payment's refunds past its amount.
	TestRefund(ctx context.Context, tenantID, paymentKey, key, id string, amount int64) (refundID string, ok bool, err error)
	// TestSaveMethod saves the token of the authorization under key as a payment method, once:
	// called again with the key it returns the first method's id.
	TestSaveMethod(ctx context.Context, tenantID, key, id, token string) (methodID string, err error)
	// TestMethod returns a saved method's token (empty when there is no such method) and how
	// many charges of it were declined so far.
	TestMethod(ctx context.Context, tenantID, methodID string) (token string, declined int, err error)
	// TestCharge records an off-session charge of a method as TestAuthorize records an
	// authorization: once under key.
	TestCharge(ctx context.Context, tenantID, key, methodID, id string, amount int64, currency, status string) (LedgerEntry, error)
}

// LedgerEntry is an authorization as the ledger recorded it.
type LedgerEntry struct {
	ID     string
	Status string
}

// Test tokens understood by the Test provider.
const (
	TokenApproved = "tok_visa"     // approved
	TokenDeclined = "tok_declined" // declined: "Your card was declined."
	TokenNoFunds  = "tok_no_funds" // declined: "Your card has insufficient funds."
	TokenError    = "tok_error"    // the provider fails (an error: outcome unknown)
	// TokenRenewalsDeclined is approved at checkout; every charge of its saved method is declined.
	TokenRenewalsDeclined = "tok_renewals_declined"
	// TokenRenewalDeclinedOnce is approved at checkout; the first charge of its saved method is
	// declined, later ones are approved.
	TokenRenewalDeclinedOnce = "tok_renewal_declined_once"
)

// ErrUnavailable is the Test provider's failure for TokenError.
var ErrUnavailable = errors.New("payment: test provider unavailable")

// Test is the built-in test payment provider: it approves TokenApproved, TokenRenewalsDeclined
// and TokenRenewalDeclinedOnce, declines TokenDeclined and TokenNoFunds, fails on TokenError,
// and refuses any other token as declined. It records every authorization, saved method and
// charge in a Ledger under its idempotency key, exactly once.
type Test struct {
	Ledger Ledger
}

// Authorize implements Provider.
func (p *Test) Authorize(ctx context.Context, r Request) (Result, error) {
	status, reason := "authorized", ""
	switch r.Token {
	case TokenApproved, TokenRenewalsDeclined, TokenRenewalDeclinedOnce:
	case TokenDeclined:
		status, reason = "declined", "Your card was declined."
	case TokenNoFunds:
		status, reason = "declined", "Your card has insufficient funds."
	case TokenError:
		return Result{}, ErrUnavailable
	default:
		status, reason = "declined", "Unknown payment token: the test provider accepts tok_visa, tok_declined, tok_no_funds, tok_error, "+
			"tok_renewals_declined and tok_renewal_declined_once."
	}
	e, err := p.Ledger.TestAuthorize(ctx, r.TenantID, r.Key, newID("tp_"), r.Amount, r.Currency, status)
	if err != nil {
		return Result{}, err
	}
	if e.Status == "declined" && reason == "" {
		reason = "Your card was declined."
	}
	res := Result{Approved: e.Status == "authorized", ID: e.ID, DeclineReason: reason}
	if res.Approved && r.SaveMethod {
		if res.Method, err = p.Ledger.TestSaveMethod(ctx, r.TenantID, r.Key, newID("pm_"), r.Token); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// Charge implements Provider: the saved method's token decides (see the package's test tokens).
func (p *Test) Charge(ctx context.Context, r ChargeRequest) (Result, error) {
	token, declined, err := p.Ledger.TestMethod(ctx, r.TenantID, r.Method)
	if err != nil {
		return Result{}, err
	}
	status, reason := "authorized", ""
	switch {
	case token == "":
		status, reason = "declined", "The saved payment method is unknown."
	case token == TokenRenewalsDeclined, token == TokenRenewalDeclinedOnce && declined == 0:
		status, reason = "declined", "Your card was declined."
	}
	e, err := p.Ledger.TestCharge(ctx, r.TenantID, r.Key, r.Method, newID("tp_"), r.Amount, r.Currency, status)
	if err != nil {
		return Result{}, err
	}
	if e.Status != "authorized" && reason == "" {
		reason = "Your card was declined."
	}
	return Result{Approved: e.Status == "authorized", ID: e.ID, DeclineReason: reason}, nil
}

// newID returns a random provider reference with prefix.
func newID(prefix string) string {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("payment: crypto/rand: " + err.Error())
	}
	return prefix + hex.EncodeToString(raw[:])
}

// Void implements Provider.
func (p *Test) Void(ctx context.Context, tenantID, key string) error {
	return p.Ledger.TestVoid(ctx, tenantID, key)
}

// Refund implements Provider: it refunds an authorized payment up to its amount.
func (p *Test) Refund(ctx context.Context, r RefundRequest) (RefundResult, error) {
	id, ok, err := p.Ledger.TestRefund(ctx, r.TenantID, r.PaymentKey, r.Key, newID("tr_"), r.Amount)
	if err != nil {
		return RefundResult{}, err
	}
	if !ok {
		return RefundResult{Reason: "The payment has less left to refund than asked."}, nil
	}
	return RefundResult{OK: true, ID: id}, nil
}
