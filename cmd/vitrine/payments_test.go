package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin"
	"vitrine/origin/payment"
	"vitrine/origin/payment/stripe"
	"vitrine/origin/store"
	"vitrine/sync/relay"
)

// testPayments is the provider in-process test origins use: the test provider, named.
func testPayments(db *store.DB) payment.Provider { return &payment.Test{Ledger: db} }

// `vitrine origin` refuses to start unless the payment provider is named; the test provider only
// when named (decision 21). The choice is checked before anything starts: a NATS URL nothing
// listens on shows which runs got past it.
func TestOriginPaymentsMustBeNamed(t *testing.T) {
	const stripeKey = "sk_test_51QxSecretValueNeverShown"
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string // in the error
	}{
		{name: "none named", want: "no payment provider named: set --payments"},
		{name: "stripe without a key", args: []string{"--payments", "stripe"}, want: "--payments=stripe needs a secret key"},
		{name: "stripe with a publishable key", args: []string{"--payments", "stripe", "--stripe-secret-key", "pk_test_51Qx"},
			want: "the key is not a secret key"},
		{name: "unknown provider", args: []string{"--payments", "paypal"}, want: `unknown payment provider "paypal"`},
		{name: "test named", args: []string{"--payments", "test"}, want: "connect to NATS"},
		{name: "test named in the environment", env: map[string]string{"VITRINE_PAYMENTS": "test"}, want: "connect to NATS"},
		{name: "stripe with a secret key", args: []string{"--payments", "stripe", "--stripe-secret-key", stripeKey}, want: "connect to NATS"},
		{name: "stripe with its key in the environment", args: []string{"--payments=stripe"},
			env: map[string]string{"VITRINE_STRIPE_SECRET_KEY": stripeKey}, want: "connect to NATS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("VITRINE_PAYMENTS", "")
			t.Setenv("VITRINE_STRIPE_SECRET_KEY", "")
			t.Setenv("VITRINE_SECRET", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
			t.Setenv("VITRINE_EDGE_SECRET", "edge-secret-0123456789abcdef0123456789")
			t.Setenv("VITRINE_NATS_URL", "nats://127.0.0.1:1")
			t.Setenv("VITRINE_NATS_INSECURE", "1")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			err := runOrigin(context.Background(), append([]string{"--ops-addr", "off"}, c.args...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if strings.Contains(err.Error(), stripeKey) {
				t.Fatalf("the error shows the Stripe key: %v", err)
			}
		})
	}
}

// `vitrine dev` defaults to the test provider and says so; it takes stripe when named.
func TestDevPaymentsDefaultToTest(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    string // the provider's type
		wantLog string
		wantErr string
	}{
		{name: "default", want: "*payment.Test", wantLog: "payments: the test provider (tok_visa pays any order"},
		{name: "stripe named", args: []string{"--payments", "stripe", "--stripe-secret-key", "sk_test_x", "--stripe-api-url", "http://127.0.0.1:12111"},
			want: "*stripe.Provider", wantLog: "payments: stripe"},
		{name: "stripe without a key", args: []string{"--payments", "stripe"}, wantErr: "needs a secret key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("VITRINE_PAYMENTS", "")
			t.Setenv("VITRINE_STRIPE_SECRET_KEY", "")
			f := newFlags("dev")
			pf := f.payments(paymentsTest)
			if err := f.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			p, err := pf.provider(nil, slog.New(slog.NewTextHandler(&logs, nil)))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || pf.check() == nil {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch p.(type) {
			case *payment.Test:
				got = "*payment.Test"
			case *stripe.Provider:
				got = "*stripe.Provider"
			}
			if got != c.want || !strings.Contains(logs.String(), c.wantLog) {
				t.Fatalf("provider %T, log %q; want %s, %q", p, logs.String(), c.want, c.wantLog)
			}
		})
	}
}

// An origin built without a payment provider is a programming error New reports at once,
// instead of quietly taking test payments.
func TestOriginNewRequiresPayments(t *testing.T) {
	defer func() {
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, "Config.Payments is required") {
			t.Fatalf("recovered %v", r)
		}
	}()
	origin.New(origin.Config{Secret: []byte("0123456789abcdef0123456789abcdef")}, nil, nil)
	t.Fatal("New accepted no payment provider")
}

// stripeAPI answers the Stripe calls of a checkout and a refund with the adapter's recorded
// responses (origin/payment/stripe/testdata), over loopback HTTP, and records the requests.
type stripeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	sent []stripeCall
}

type stripeCall struct {
	path string
	form url.Values
	key  string // Idempotency-Key
}

func newStripeAPI(t *testing.T) *stripeAPI {
	api := &stripeAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		api.mu.Lock()
		api.sent = append(api.sent, stripeCall{path: r.URL.Path, form: r.PostForm, key: r.Header.Get("Idempotency-Key")})
		api.mu.Unlock()
		status, file := 404, "error_resource_missing.json"
		switch {
		case r.URL.Path == "/v1/payment_intents" && r.PostForm.Get("payment_method") == "pm_card_visa":
			status, file = 200, "payment_intent_requires_capture.json"
		case r.URL.Path == "/v1/payment_intents" && r.PostForm.Get("payment_method") == "pm_card_chargeDeclined":
			status, file = 402, "error_card_declined.json"
		case strings.HasSuffix(r.URL.Path, "/capture"):
			status, file = 200, "payment_intent_succeeded.json"
		case r.URL.Path == "/v1/refunds":
			status, file = 200, "refund_partial.json"
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "origin", "payment", "stripe", "testdata", file))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(b)
	}))
	t.Cleanup(api.Close)
	return api
}

func (api *stripeAPI) calls() []stripeCall {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]stripeCall(nil), api.sent...)
}

// A store whose origin is given the Stripe provider: a checkout authorizes and captures a
// PaymentIntent of the order's amount under the order's key, a decline is the checkout's 402
// with Stripe's message, and a refund is a Stripe Refund of the PaymentIntent.
func TestCheckoutThroughStripe(t *testing.T) {
	api := newStripeAPI(t)
	s := newSystem(t, systemOptions{})
	p, err := stripe.New(stripe.Config{SecretKey: "sk_test_51QxSystemTest", APIURL: api.URL, Retries: -1, Timeout: 5 * time.Second, Logger: s.log})
	if err != nil {
		t.Fatal(err)
	}
	s.originConfig.Payments = p
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	tn, pw := s.tenant("shop")
	sh := &shop{s: s, t: t, tn: tn, edge: e.addr, host: "shop.example.test", auth: basic("admin", pw)}
	mug := sh.product("Mug", 1250, 10)

	order := sh.orderAt(sh.host, guestWith("pm_card_visa"), nil, lineQty{mug, 2})
	id := orderID(t, sh, order.Reference)
	calls := api.calls()
	if len(calls) != 2 || calls[0].path != "/v1/payment_intents" || calls[1].path != "/v1/payment_intents/pi_3QxAuthorize0000000001/capture" {
		t.Fatalf("calls %+v", calls)
	}
	create := calls[0]
	want := map[string]string{"amount": strconv.FormatInt(order.Totals.Due.Amount, 10), "currency": "usd", "capture_method": "manual",
		"confirm": "true", "metadata[vitrine_tenant]": tn.ID, "metadata[vitrine_key]": id}
	for k, v := range want {
		if create.form.Get(k) != v {
			t.Errorf("create %s = %q, want %q", k, create.form.Get(k), v)
		}
	}
	if create.key != tn.ID+"/"+id || calls[1].key != tn.ID+"/"+id+"/capture" {
		t.Errorf("idempotency keys %q %q", create.key, calls[1].key)
	}
	if order.Status != "paid" {
		t.Errorf("order %s", order.Status)
	}

	session := newSession()
	sh.add(session, mug, 1)
	r := sh.do("POST", "/api/checkout", session, guestWith("pm_card_chargeDeclined"))
	if r.status != 402 || !strings.Contains(string(r.body), "payment declined: Your card was declined.") {
		t.Fatalf("declined checkout: %d %s", r.status, r.body)
	}

	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"erp","scopes":["write_orders"]}`)
	n := len(api.calls())
	r = sh.do("POST", "/api/orders/"+order.Reference+"/refund", "", `{"amount":500}`, "Authorization", "Bearer "+writer, "Idempotency-Key", "r1")
	if r.status != 201 {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	calls = api.calls()[n:]
	if len(calls) != 1 || calls[0].path != "/v1/refunds" || calls[0].form.Get("payment_intent") != "pi_3QxAuthorize0000000001" ||
		calls[0].form.Get("amount") != "500" || !strings.HasPrefix(calls[0].key, tn.ID+"/") {
		t.Fatalf("refund calls %+v", calls)
	}
}
