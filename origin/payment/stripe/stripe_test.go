package stripe

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	stripego "github.com/stripe/stripe-go/v82"

	"vitrine/origin/payment"
)

const testKey = "sk_test_51QxFixtureSecretKeyNeverLogged0000000000"

// newTestProvider returns a Provider talking to srv, logging into a buffer at debug level.
func newTestProvider(t *testing.T, srv *replayServer, retries int) (*Provider, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	p, err := New(Config{SecretKey: testKey, APIURL: srv.srv.URL, Timeout: 300 * time.Millisecond, Retries: retries,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("the secret key was logged:\n%s", logs.String())
		}
	})
	return p, &logs
}

func request(key, token string) payment.Request {
	return payment.Request{TenantID: "t_shop", Key: key, Amount: 4200, Currency: "EUR", Token: token, Email: "ann@example.com"}
}

func TestAuthorize(t *testing.T) {
	const auth = "pi_3QxAuthorize0000000001"
	cases := []struct {
		name    string
		req     payment.Request
		want    payment.Result
		wantErr bool
		calls   []string
	}{
		{name: "approved and captured", req: request("ord_1", "pm_card_visa"),
			want:  payment.Result{Approved: true, ID: auth},
			calls: []string{"POST /v1/payment_intents", "POST /v1/payment_intents/" + auth + "/capture"}},
		{name: "card declined", req: request("ord_declined", "pm_card_chargeDeclined"),
			want:  payment.Result{ID: "pi_3QxDeclined00000000001", DeclineReason: "Your card was declined."},
			calls: []string{"POST /v1/payment_intents"}},
		{name: "insufficient funds", req: request("ord_no_funds", "pm_card_chargeDeclinedInsufficientFunds"),
			want:  payment.Result{ID: "pi_3QxNoFunds000000000001", DeclineReason: "Your card has insufficient funds."},
			calls: []string{"POST /v1/payment_intents"}},
		{name: "token Stripe does not know", req: request("ord_bad_token", "tok_visa"),
			want:  payment.Result{DeclineReason: "The payment method was not accepted."},
			calls: []string{"POST /v1/payment_intents"}},
		{name: "3-D Secure required: hold cancelled, declined", req: request("ord_3ds", "pm_card_authenticationRequired"),
			want:  payment.Result{ID: "pi_3QxThreeDS00000000001", DeclineReason: reasonRequiresAction},
			calls: []string{"POST /v1/payment_intents", "POST /v1/payment_intents/pi_3QxThreeDS00000000001/cancel"}},
		{name: "server error: outcome unknown", req: request("ord_500", "pm_fixture_api_error"), wantErr: true,
			calls: []string{"POST /v1/payment_intents"}},
		{name: "same key in flight: outcome unknown", req: request("ord_in_flight", "pm_fixture_in_flight"), wantErr: true,
			calls: []string{"POST /v1/payment_intents"}},
		{name: "timeout: outcome unknown", req: request("ord_timeout", "pm_fixture_timeout"), wantErr: true,
			calls: []string{"POST /v1/payment_intents"}},
		{name: "saving the method", req: func() payment.Request {
			r := request("ord_sub", "pm_card_visa")
			r.SaveMethod, r.Amount = true, 1800
			return r
		}(),
			want: payment.Result{Approved: true, ID: "pi_3QxSaveMethod0000000001", Method: "cus_QxSubscriber001/pm_1QxSavedCard000000000001"},
			calls: []string{"POST /v1/customers", "POST /v1/payment_intents",
				"POST /v1/payment_intents/pi_3QxSaveMethod0000000001/capture"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newReplayServer(t)
			p, _ := newTestProvider(t, srv, -1)
			got, err := p.Authorize(context.Background(), c.req)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Fatalf("the error shows the key: %v", err)
			}
			if got != c.want {
				t.Errorf("result = %+v, want %+v", got, c.want)
			}
			if paths := srv.paths(); !reflect.DeepEqual(paths, c.calls) {
				t.Errorf("calls = %v, want %v", paths, c.calls)
			}
			sent := srv.requests()
			create := sent[0]
			if c.req.SaveMethod {
				cus := sent[0]
				if cus.Form.Get("email") != "ann@example.com" || cus.Form.Get("metadata[vitrine_tenant]") != "t_shop" ||
					cus.Header.Get("Idempotency-Key") != "t_shop/"+c.req.Key+"/customer" {
					t.Errorf("customer request: %v %v", cus.Form, cus.Header)
				}
				create = sent[1]
			}
			want := map[string]string{
				"amount": strconv.FormatInt(c.req.Amount, 10), "currency": "eur", "capture_method": "manual", "confirm": "true",
				"payment_method": c.req.Token, "payment_method_types[0]": "card",
				"metadata[vitrine_tenant]": "t_shop", "metadata[vitrine_key]": c.req.Key,
			}
			if c.req.SaveMethod {
				want["customer"], want["setup_future_usage"] = "cus_QxSubscriber001", "off_session"
			}
			for k, v := range want {
				if got := create.Form.Get(k); got != v {
					t.Errorf("create %s = %q, want %q (form %v)", k, got, v, create.Form)
				}
			}
			checkHeaders(t, create, "t_shop/"+c.req.Key)
			for _, r := range sent {
				if strings.HasSuffix(r.Path, "/capture") {
					checkHeaders(t, r, "t_shop/"+c.req.Key+"/capture")
				}
				if strings.HasSuffix(r.Path, "/cancel") {
					checkHeaders(t, r, "t_shop/"+c.req.Key+"/cancel")
				}
			}
		})
	}
}

// checkHeaders asserts the headers every POST to Stripe carries.
func checkHeaders(t *testing.T, r sentRequest, key string) {
	t.Helper()
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("%s: Authorization = %q", r, got)
	}
	if got := r.Header.Get("Stripe-Version"); got != "2025-08-27.basil" {
		t.Errorf("%s: Stripe-Version = %q", r, got)
	}
	if got := r.Header.Get("Idempotency-Key"); got != key {
		t.Errorf("%s: Idempotency-Key = %q, want %q", r, got, key)
	}
}

// An authorization retried under its key (a checkout resumed after a crash) gets Stripe's first
// answers back and moves no money twice.
func TestAuthorizeReplayedUnderTheSameKey(t *testing.T) {
	srv := newReplayServer(t)
	p, _ := newTestProvider(t, srv, -1)
	first, err := p.Authorize(context.Background(), request("ord_1", "pm_card_visa"))
	if err != nil {
		t.Fatal(err)
	}
	// Another process (no memory of the first call) resumes the checkout.
	other, _ := newTestProvider(t, srv, -1)
	again, err := other.Authorize(context.Background(), request("ord_1", "pm_card_visa"))
	if err != nil || again != first {
		t.Fatalf("replay = %+v, %v; want %+v", again, err, first)
	}
	want := []string{"POST /v1/payment_intents", "POST /v1/payment_intents/pi_3QxAuthorize0000000001/capture",
		"POST /v1/payment_intents (replayed)", "POST /v1/payment_intents/pi_3QxAuthorize0000000001/capture (replayed)"}
	if got := srv.paths(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls = %v, want %v", got, want)
	}
	// A different amount under the same key is Stripe's idempotency error: an error, not a
	// decline, and nothing more is charged.
	r := request("ord_1", "pm_card_visa")
	r.Amount = 9900
	if _, err := other.Authorize(context.Background(), r); err == nil {
		t.Fatal("a changed request under a used key was not an error")
	}
}

// stripe-go retries a request whose outcome is unknown with the same Idempotency-Key.
func TestRetriesKeepTheKey(t *testing.T) {
	srv := newReplayServer(t)
	p, _ := newTestProvider(t, srv, 1)
	if _, err := p.Authorize(context.Background(), request("ord_timeout", "pm_fixture_timeout")); err != nil {
		// The retry is answered from the idempotency cache: approved.
		t.Fatalf("the retried authorization failed: %v", err)
	}
	sent := srv.requests()
	if len(sent) < 2 || sent[0].Header.Get("Idempotency-Key") != "t_shop/ord_timeout" ||
		sent[1].Header.Get("Idempotency-Key") != "t_shop/ord_timeout" || !sent[1].Replayed {
		t.Fatalf("calls = %v", srv.paths())
	}
}

func TestVoid(t *testing.T) {
	const auth = "pi_3QxAuthorize0000000001"
	cases := []struct {
		name string
		// before runs on the provider that voids (same process) or on another one.
		before       func(t *testing.T, p *Provider, srv *replayServer)
		fresh        bool // void from another process: no memory of the authorization
		key          string
		calls        []string // after before's
		wantErr      bool
		wantPIStatus string // the PaymentIntent's fixture after the void
	}{
		{name: "timed out authorization: replayed, then cancelled", key: "ord_timeout",
			before: func(t *testing.T, p *Provider, _ *replayServer) {
				if _, err := p.Authorize(context.Background(), request("ord_timeout", "pm_fixture_timeout")); err == nil {
					t.Fatal("no timeout")
				}
			},
			calls: []string{"POST /v1/payment_intents (replayed)", "GET /v1/payment_intents/" + auth,
				"POST /v1/payment_intents/" + auth + "/cancel"},
			wantPIStatus: "payment_intent_canceled.json"},
		{name: "declined authorization: nothing to void", key: "ord_declined",
			before: func(t *testing.T, p *Provider, _ *replayServer) {
				p.mem.replay("t_shop", "ord_declined", func(ctx context.Context) (opened, error) {
					return p.openAuthorization(ctx, request("ord_declined", "pm_card_chargeDeclined"))
				})
			},
			calls: []string{"POST /v1/payment_intents"}},
		{name: "captured payment: refunded in full", key: "ord_1",
			before: func(t *testing.T, p *Provider, _ *replayServer) {
				if _, err := p.Authorize(context.Background(), request("ord_1", "pm_card_visa")); err != nil {
					t.Fatal(err)
				}
			},
			calls:        []string{"GET /v1/payment_intents/" + auth, "POST /v1/refunds"},
			wantPIStatus: "payment_intent_succeeded.json"},
		{name: "another process after a crash: found by search, cancelled", key: "ord_1", fresh: true,
			before: func(t *testing.T, p *Provider, srv *replayServer) {
				srv.setState("payment_intent_requires_capture.json")
			},
			calls: []string{"GET /v1/payment_intents/search", "GET /v1/payment_intents/" + auth,
				"POST /v1/payment_intents/" + auth + "/cancel"},
			wantPIStatus: "payment_intent_canceled.json"},
		{name: "another process, never sent: nothing to void", key: "ord_never", fresh: true,
			calls: []string{"GET /v1/payment_intents/search"}},
		{name: "cancelled already: nothing more", key: "ord_1", fresh: true,
			before: func(t *testing.T, p *Provider, srv *replayServer) {
				srv.setState("payment_intent_canceled.json")
			},
			calls:        []string{"GET /v1/payment_intents/search", "GET /v1/payment_intents/" + auth},
			wantPIStatus: "payment_intent_canceled.json"},
		{name: "3-D Secure hold cancelled by Authorize: voided again fine", key: "ord_3ds",
			before: func(t *testing.T, p *Provider, _ *replayServer) {
				if res, err := p.Authorize(context.Background(), request("ord_3ds", "pm_card_authenticationRequired")); err != nil || res.Approved {
					t.Fatal(res, err)
				}
			},
			calls: []string{"GET /v1/payment_intents/pi_3QxThreeDS00000000001"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newReplayServer(t)
			p, _ := newTestProvider(t, srv, -1)
			if c.before != nil {
				c.before(t, p, srv)
			}
			if c.fresh {
				p, _ = newTestProvider(t, srv, -1)
			}
			n := len(srv.requests())
			err := p.Void(context.Background(), "t_shop", c.key)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v", err)
			}
			if got := srv.paths()[n:]; !reflect.DeepEqual(got, c.calls) {
				t.Errorf("calls = %v, want %v", got, c.calls)
			}
			for _, r := range srv.requests()[n:] {
				switch {
				case strings.HasSuffix(r.Path, "/cancel"):
					checkHeaders(t, r, "t_shop/"+c.key+"/cancel")
				case r.Path == "/v1/refunds":
					checkHeaders(t, r, "t_shop/"+c.key+"/void")
					if r.Form.Get("payment_intent") != auth || r.Form.Get("amount") != "" {
						t.Errorf("void refund: %v", r.Form)
					}
				case r.Path == "/v1/payment_intents/search":
					if q := r.Form.Get("query"); q != "metadata['vitrine_key']:'"+c.key+"' AND metadata['vitrine_tenant']:'t_shop'" {
						t.Errorf("search query %q", q)
					}
				}
			}
			if c.wantPIStatus != "" {
				srv.mu.Lock()
				got := srv.state[auth]
				srv.mu.Unlock()
				if got != c.wantPIStatus {
					t.Errorf("PaymentIntent is %s, want %s", got, c.wantPIStatus)
				}
			}
		})
	}
}

func TestRefund(t *testing.T) {
	const auth = "pi_3QxAuthorize0000000001"
	partial := payment.RefundRequest{TenantID: "t_shop", PaymentKey: "ord_1", PaymentID: auth, Key: "ref_1", Amount: 1500, Currency: "EUR"}
	cases := []struct {
		name    string
		req     payment.RefundRequest
		fresh   bool
		want    payment.RefundResult
		wantErr error
		calls   []string
	}{
		{name: "partial, by the payment's reference", req: partial,
			want: payment.RefundResult{OK: true, ID: "re_3QxPartial0000000001"}, calls: []string{"POST /v1/refunds"}},
		{name: "more than is left: refused with Stripe's reason", req: func() payment.RefundRequest {
			r := partial
			r.Key, r.Amount = "ref_2", 5000
			return r
		}(),
			want:  payment.RefundResult{Reason: "Refund amount (€50.00) is greater than unrefunded amount on charge (€27.00)"},
			calls: []string{"POST /v1/refunds"}},
		{name: "by the key, from memory", req: func() payment.RefundRequest { r := partial; r.PaymentID = ""; return r }(),
			want: payment.RefundResult{OK: true, ID: "re_3QxPartial0000000001"}, calls: []string{"POST /v1/refunds"}},
		{name: "by the key, found by search", fresh: true, req: func() payment.RefundRequest { r := partial; r.PaymentID = ""; return r }(),
			want:  payment.RefundResult{OK: true, ID: "re_3QxPartial0000000001"},
			calls: []string{"GET /v1/payment_intents/search", "POST /v1/refunds"}},
		{name: "by the key, not found yet: outcome unknown", fresh: true,
			req:     payment.RefundRequest{TenantID: "t_shop", PaymentKey: "ord_recent", Key: "ref_3", Amount: 100, Currency: "EUR"},
			wantErr: ErrNotFound, calls: []string{"GET /v1/payment_intents/search"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newReplayServer(t)
			p, _ := newTestProvider(t, srv, -1)
			if _, err := p.Authorize(context.Background(), request("ord_1", "pm_card_visa")); err != nil {
				t.Fatal(err)
			}
			if c.fresh {
				p, _ = newTestProvider(t, srv, -1)
			}
			n := len(srv.requests())
			got, err := p.Refund(context.Background(), c.req)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("result = %+v, want %+v", got, c.want)
			}
			if paths := srv.paths()[n:]; !reflect.DeepEqual(paths, c.calls) {
				t.Errorf("calls = %v, want %v", paths, c.calls)
			}
			for _, r := range srv.requests()[n:] {
				if r.Path != "/v1/refunds" {
					continue
				}
				checkHeaders(t, r, "t_shop/"+c.req.Key)
				want := map[string]string{"payment_intent": auth, "amount": strconv.FormatInt(c.req.Amount, 10),
					"metadata[vitrine_tenant]": "t_shop", "metadata[vitrine_key]": "ord_1", "metadata[vitrine_refund]": c.req.Key}
				for k, v := range want {
					if r.Form.Get(k) != v {
						t.Errorf("refund %s = %q, want %q", k, r.Form.Get(k), v)
					}
				}
			}
		})
	}
	t.Run("replayed under its key", func(t *testing.T) {
		srv := newReplayServer(t)
		p, _ := newTestProvider(t, srv, -1)
		a, err := p.Refund(context.Background(), partial)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Refund(context.Background(), partial)
		if err != nil || a != b {
			t.Fatalf("replay = %+v %v, want %+v", b, err, a)
		}
		if got := srv.paths(); !reflect.DeepEqual(got, []string{"POST /v1/refunds", "POST /v1/refunds (replayed)"}) {
			t.Fatalf("calls = %v", got)
		}
	})
}

// A subscription's checkout saves the card; its renewals charge it off-session.
func TestSavedMethodAndOffSessionCharge(t *testing.T) {
	srv := newReplayServer(t)
	p, _ := newTestProvider(t, srv, -1)
	r := request("ord_sub", "pm_card_visa")
	r.SaveMethod, r.Amount = true, 1800
	res, err := p.Authorize(context.Background(), r)
	if err != nil || !res.Approved || res.Method == "" {
		t.Fatalf("checkout = %+v, %v", res, err)
	}
	cases := []struct {
		name   string
		req    payment.ChargeRequest
		want   payment.Result
		calls  []string
		posted bool
	}{
		{name: "renewal approved",
			req:    payment.ChargeRequest{TenantID: "t_shop", Key: "ord_renewal", Method: res.Method, Amount: 1800, Currency: "EUR"},
			want:   payment.Result{Approved: true, ID: "pi_3QxRenewal000000000001"},
			calls:  []string{"POST /v1/payment_intents", "POST /v1/payment_intents/pi_3QxRenewal000000000001/capture"},
			posted: true},
		{name: "bank asks for authentication: declined, update the method",
			req: payment.ChargeRequest{TenantID: "t_shop", Key: "ord_renewal_3ds", Method: "cus_QxSubscriber002/pm_card_authenticationRequired",
				Amount: 1800, Currency: "EUR"},
			want:   payment.Result{ID: "pi_3QxAuthRequired0000001", DeclineReason: reasonAuthenticationRequired},
			calls:  []string{"POST /v1/payment_intents"},
			posted: true},
		{name: "unknown saved method: declined without a call",
			req:  payment.ChargeRequest{TenantID: "t_shop", Key: "ord_renewal_x", Method: "tp_123", Amount: 1800, Currency: "EUR"},
			want: payment.Result{DeclineReason: "The saved payment method is unknown."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(srv.requests())
			got, err := p.Charge(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("result = %+v, want %+v", got, c.want)
			}
			if paths := srv.paths()[n:]; len(paths)+len(c.calls) > 0 && !reflect.DeepEqual(paths, c.calls) {
				t.Errorf("calls = %v, want %v", paths, c.calls)
			}
			if !c.posted {
				return
			}
			create := srv.requests()[n]
			customer, method, _ := strings.Cut(c.req.Method, "/")
			want := map[string]string{"amount": "1800", "currency": "eur", "confirm": "true", "off_session": "true",
				"customer": customer, "payment_method": method, "capture_method": "manual",
				"metadata[vitrine_tenant]": "t_shop", "metadata[vitrine_key]": c.req.Key}
			for k, v := range want {
				if create.Form.Get(k) != v {
					t.Errorf("charge %s = %q, want %q", k, create.Form.Get(k), v)
				}
			}
			checkHeaders(t, create, "t_shop/"+c.req.Key)
		})
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	cases := []struct {
		key  string
		want error
	}{
		{"", ErrNoKey},
		{"pk_test_51QxPublishable", ErrBadKey},
		{"whsec_abc", ErrBadKey},
	}
	for _, c := range cases {
		_, err := New(Config{SecretKey: c.key})
		if !errors.Is(err, c.want) {
			t.Errorf("New(%q) = %v, want %v", c.key, err, c.want)
		}
		if c.key != "" && strings.Contains(err.Error(), c.key) {
			t.Errorf("the error shows the key: %v", err)
		}
	}
	for _, key := range []string{"sk_test_x", "rk_live_x"} {
		if _, err := New(Config{SecretKey: key}); err != nil {
			t.Errorf("New(%q) = %v", key, err)
		}
	}
}

// Errors whose outcome is unknown are short and carry Stripe's request id, never the key.
func TestUnknownErrorsAreShort(t *testing.T) {
	srv := newReplayServer(t)
	p, logs := newTestProvider(t, srv, -1)
	_, err := p.Authorize(context.Background(), request("ord_500", "pm_fixture_api_error"))
	if err == nil || !strings.Contains(err.Error(), "api_error (HTTP 500, request req_QxFixture1): An unknown error occurred") {
		t.Fatalf("err = %v", err)
	}
	var se *stripego.Error
	if !errors.As(err, &se) || se.Type != stripego.ErrorTypeAPI {
		t.Fatalf("the Stripe error is not reachable: %v", err)
	}
	if logs.Len() == 0 {
		t.Fatal("stripe-go logged nothing at debug level: the key check saw nothing")
	}
}

func FuzzParseMethod(f *testing.F) {
	for _, s := range []string{"cus_1/pm_2", "cus_/pm_", "tp_123", "cus_1/pm_2/x", "/", "cus_1/", "pm_1/cus_2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, m, ok := parseMethod(s)
		if !ok {
			if c != "" || m != "" {
				t.Fatalf("refused %q but returned %q %q", s, c, m)
			}
			return
		}
		if c+"/"+m != s || !strings.HasPrefix(c, "cus_") || !strings.HasPrefix(m, "pm_") || strings.Contains(c, "/") || strings.Contains(m, "/") {
			t.Fatalf("parseMethod(%q) = %q %q", s, c, m)
		}
	})
}
