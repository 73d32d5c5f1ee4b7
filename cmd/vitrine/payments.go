package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"vitrine/origin/payment"
	"vitrine/origin/payment/stripe"
)

// Payment providers --payments names.
const (
	paymentsTest   = "test"
	paymentsStripe = "stripe"
)

// errNoPayments is the refusal of an origin started without naming its payment provider: the
// test provider approves tok_visa for any order, so it is never chosen by default outside
// `vitrine dev` (decision 21).
var errNoPayments = errors.New("no payment provider named: set --payments (or $VITRINE_PAYMENTS) to stripe, with --stripe-secret-key, " +
	"or to test for a store that takes no real money (the test provider approves tok_visa for any order)")

// paymentFlags choose and configure the payment provider.
type paymentFlags struct {
	name      *string
	stripeKey *string
	stripeURL *string
	timeout   *time.Duration
	// dev says the provider defaulted to test (`vitrine dev`).
	dev bool
}

// payments declares the payment flags; def is the provider used when none is named (empty:
// one must be named).
func (f flags) payments(def string) paymentFlags {
	usage := "payment provider: stripe, or test (the built-in test provider: tok_visa pays any order)"
	if def == "" {
		usage += "; required"
	}
	return paymentFlags{
		name:      f.String("payments", "VITRINE_PAYMENTS", def, usage),
		stripeKey: f.Secret("stripe-secret-key", "VITRINE_STRIPE_SECRET_KEY", "Stripe secret key (sk_… or rk_…) for --payments=stripe"),
		stripeURL: f.String("stripe-api-url", "VITRINE_STRIPE_API_URL", "", "Stripe API base URL (default Stripe's; stripe-mock's for tests)"),
		timeout:   f.Duration("stripe-timeout", "VITRINE_STRIPE_TIMEOUT", 30*time.Second, "bound of one request to Stripe (its outcome is unknown after it)"),
		dev:       def == paymentsTest,
	}
}

// check refuses a missing, unknown or incomplete choice, before anything starts.
func (pf paymentFlags) check() error {
	_, err := pf.provider(nil, nil)
	return err
}

// provider returns the payment provider named: the test provider keeps its ledger in ledger.
// log (optional) is told which one.
func (pf paymentFlags) provider(ledger payment.Ledger, log *slog.Logger) (payment.Provider, error) {
	switch *pf.name {
	case "":
		return nil, errNoPayments
	case paymentsTest:
		if log != nil {
			if pf.dev {
				log.Info("payments: the test provider (tok_visa pays any order; --payments=stripe for real payments)")
			} else {
				log.Warn("payments: the test provider was named: tok_visa pays any order, no real money moves")
			}
		}
		return &payment.Test{Ledger: ledger}, nil
	case paymentsStripe:
		if *pf.stripeKey == "" {
			return nil, errors.New("--payments=stripe needs a secret key: set --stripe-secret-key or $VITRINE_STRIPE_SECRET_KEY")
		}
		cfg := stripe.Config{SecretKey: *pf.stripeKey, APIURL: *pf.stripeURL, Timeout: *pf.timeout, Logger: log}
		p, err := stripe.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("--stripe-secret-key: %w", err)
		}
		if log != nil {
			api := *pf.stripeURL
			if api == "" {
				api = "https://api.stripe.com"
			}
			log.Info("payments: stripe", "api", api, "timeout", *pf.timeout)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown payment provider %q: --payments takes stripe or test", *pf.name)
}
