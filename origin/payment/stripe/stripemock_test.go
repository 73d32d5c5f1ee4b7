package stripe

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	stripego "github.com/stripe/stripe-go/v82"

	"vitrine/origin/payment"
)

// stripeMockInstall is the command that installs the stripe-mock these tests run.
const stripeMockInstall = "GOFLAGS=-mod=mod go install github.com/stripe/stripe-mock@v0.203.0"

// startStripeMock starts stripe-mock (Stripe's mock API server, which validates every request
// against Stripe's OpenAPI specification) on a free loopback port and returns its URL. It skips
// the test when the binary is missing: $VITRINE_STRIPE_MOCK names it, or stripe-mock on $PATH.
func startStripeMock(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("VITRINE_STRIPE_MOCK")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("stripe-mock"); err != nil {
			t.Skip("stripe-mock is not installed (install it with `" + stripeMockInstall + "`, or name it in $VITRINE_STRIPE_MOCK)")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Listening for HTTP at address: (\S+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatal("stripe-mock did not start listening within a minute")
	}
	return ""
}

// statusRecorder is an http.RoundTripper recording every answer's status.
type statusRecorder struct {
	mu  sync.Mutex
	got []string
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.got = append(s.got, fmt.Sprintf("%s %s: %d", r.Method, r.URL.Path, resp.StatusCode))
		s.mu.Unlock()
	}
	return resp, err
}

// Every request the adapter sends is one Stripe's API specification accepts: stripe-mock
// validates parameters and answers 400 to an unknown or malformed one. (stripe-mock keeps no
// state, so outcomes are checked against the recorded fixtures, not here.)
func TestRequestsAcceptedByStripeMock(t *testing.T) {
	url := startStripeMock(t)
	rec := &statusRecorder{}
	p, err := New(Config{SecretKey: "sk_test_123", APIURL: url, Retries: -1, HTTPClient: &http.Client{Transport: rec, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := payment.Request{TenantID: "t_shop", Key: "ord_1", Amount: 4200, Currency: "EUR", Token: "pm_card_visa", Email: "ann@example.com"}
	steps := []struct {
		name string
		run  func() error
	}{
		{"authorize", func() error { _, err := p.Authorize(ctx, r); return err }},
		{"authorize saving the method", func() error {
			r := r
			r.Key, r.SaveMethod = "ord_sub", true
			_, err := p.Authorize(ctx, r)
			return err
		}},
		{"capture", func() error {
			_, err := p.finish(ctx, "t_shop", "ord_2", opened{pi: &stripego.PaymentIntent{ID: "pi_123", Status: stripego.PaymentIntentStatusRequiresCapture}}, false)
			return ignoreStatus(err)
		}},
		{"cancel", func() error { return p.cancel(ctx, "t_shop", "ord_3", "pi_123") }},
		{"off-session charge", func() error {
			_, err := p.Charge(ctx, payment.ChargeRequest{TenantID: "t_shop", Key: "ord_renewal", Method: "cus_123/pm_123", Amount: 1800, Currency: "EUR"})
			return ignoreStatus(err)
		}},
		{"void by search", func() error { return p.Void(ctx, "t_shop", "ord_unknown") }},
		{"refund", func() error {
			_, err := p.Refund(ctx, payment.RefundRequest{TenantID: "t_shop", PaymentKey: "ord_1", PaymentID: "pi_123", Key: "ref_1", Amount: 1500, Currency: "EUR"})
			return err
		}},
		{"void refund of a captured payment", func() error {
			rp := &stripego.RefundCreateParams{PaymentIntent: stripego.String("pi_123"), Metadata: meta("t_shop", "ord_1")}
			rp.SetIdempotencyKey(idem("t_shop", "ord_1", "void"))
			_, err := p.sc.V1Refunds.Create(ctx, rp)
			return err
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) < len(steps) {
		t.Fatalf("only %d requests reached stripe-mock: %v", len(rec.got), rec.got)
	}
	for _, g := range rec.got {
		if !regexp.MustCompile(`: 2\d\d$`).MatchString(g) {
			t.Errorf("stripe-mock refused a request: %s", g)
		}
	}
	t.Logf("requests validated by stripe-mock: %v", rec.got)
}

// ignoreStatus drops finish's complaint about the status of stripe-mock's canned objects.
func ignoreStatus(err error) error {
	if err != nil && regexp.MustCompile(`left it|is requires_|is processing`).MatchString(err.Error()) {
		return nil
	}
	return err
}
