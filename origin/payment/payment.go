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
// # Invariants
//
//   - Authorize with a key that was authorized before returns that authorization and charges
//     nothing more.
//   - An error from Authorize means the outcome is unknown (a timeout, the provider down): the
//     caller voids the key before releasing the reservation. A decline is not an error: it is a
//     Result with Approved false.
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
}

// Result is the outcome of an authorization.
type Result struct {
	Approved bool
	// ID is the provider's reference of the authorization.
	ID string
	// DeclineReason is a message safe to show the shopper.
	DeclineReason string
}

// Provider authorizes, voids and refunds payments.
type Provider interface {
	Authorize(ctx context.Context, r Request) (Result, error)
	Void(ctx context.Context, tenantID, key string) error
	// Refund returns money of the payment authorized under r.PaymentKey. Called again with the
	// same r.Key it returns the first call's result and moves nothing more. An error means the
	// outcome is unknown; a refusal (nothing left to refund) is a RefundResult with OK false.
	Refund(ctx context.Context, r RefundRequest) (RefundResult, error)
}

// RefundRequest is one refund request.
type RefundRequest struct {
	TenantID string
	// PaymentKey is the authorization's idempotency key (the order id).
	PaymentKey string
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
)

// ErrUnavailable is the Test provider's failure for TokenError.
var ErrUnavailable = errors.New("payment: test provider unavailable")

// Test is the built-in test payment provider: it approves TokenApproved, declines TokenDeclined
// and TokenNoFunds, fails on TokenError, and refuses any other token as declined. It records
// every authorization in a Ledger under its idempotency key, exactly once.
type Test struct {
	Ledger Ledger
}

// Authorize implements Provider.
func (p *Test) Authorize(ctx context.Context, r Request) (Result, error) {
	status, reason := "authorized", ""
	switch r.Token {
	case TokenApproved:
	case TokenDeclined:
		status, reason = "declined", "Your card was declined."
	case TokenNoFunds:
		status, reason = "declined", "Your card has insufficient funds."
	case TokenError:
		return Result{}, ErrUnavailable
	default:
		status, reason = "declined", "Unknown payment token: the test provider accepts tok_visa, tok_declined, tok_no_funds and tok_error."
	}
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Result{}, err
	}
	e, err := p.Ledger.TestAuthorize(ctx, r.TenantID, r.Key, "tp_"+hex.EncodeToString(raw[:]), r.Amount, r.Currency, status)
	if err != nil {
		return Result{}, err
	}
	if e.Status == "declined" && reason == "" {
		reason = "Your card was declined."
	}
	return Result{Approved: e.Status == "authorized", ID: e.ID, DeclineReason: reason}, nil
}

// Void implements Provider.
func (p *Test) Void(ctx context.Context, tenantID, key string) error {
	return p.Ledger.TestVoid(ctx, tenantID, key)
}

// Refund implements Provider: it refunds an authorized payment up to its amount.
func (p *Test) Refund(ctx context.Context, r RefundRequest) (RefundResult, error) {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return RefundResult{}, err
	}
	id, ok, err := p.Ledger.TestRefund(ctx, r.TenantID, r.PaymentKey, r.Key, "tr_"+hex.EncodeToString(raw[:]), r.Amount)
	if err != nil {
		return RefundResult{}, err
	}
	if !ok {
		return RefundResult{Reason: "The payment has less left to refund than asked."}, nil
	}
	return RefundResult{OK: true, ID: id}, nil
}
