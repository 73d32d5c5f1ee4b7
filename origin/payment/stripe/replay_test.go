package stripe

import (
	"fmt"
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

	"encoding/json"
)

// replayServer is Stripe's API over loopback HTTP, answering with the recorded responses in
// testdata/: it routes a request to a fixture by its path and parameters (Stripe's test payment
// methods: pm_card_visa, pm_card_chargeDeclined…), keeps each PaymentIntent's current state,
// and replays the first answer to a POST whose Idempotency-Key it saw before, as Stripe does.
// It records every request for the tests to assert on.
type replayServer struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	sent  []sentRequest
	cache map[string]cachedAnswer // by Idempotency-Key
	state map[string]string       // PaymentIntent id -> fixture of its current state
	// slow holds answers to pm_fixture_timeout until the client gave up.
	slow time.Duration
}

// sentRequest is one request the adapter sent.
type sentRequest struct {
	Method, Path string
	Form         url.Values
	Header       http.Header
	Replayed     bool // answered from the idempotency cache
}

func (r sentRequest) String() string { return r.Method + " " + r.Path }

type cachedAnswer struct {
	status int
	file   string
	form   string
}

func newReplayServer(t *testing.T) *replayServer {
	t.Helper()
	s := &replayServer{t: t, cache: map[string]cachedAnswer{}, state: map[string]string{}, slow: 2 * time.Second}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// fixture returns a testdata file's bytes.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureID returns the id of the object in a fixture.
func fixtureID(t testing.TB, name string) string {
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(fixture(t, name), &v); err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// setState sets a PaymentIntent's current state to a fixture's.
func (s *replayServer) setState(file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[fixtureID(s.t, file)] = file
}

func (s *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	form := r.PostForm
	if r.Method == http.MethodGet {
		form = r.URL.Query()
	}
	req := sentRequest{Method: r.Method, Path: r.URL.Path, Form: form, Header: r.Header.Clone()}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	var status int
	var file string
	var slow bool
	if c, ok := s.cache[key]; ok && r.Method == http.MethodPost {
		req.Replayed = true
		status, file = c.status, c.file
		if c.form != form.Encode() {
			status, file = 400, "error_idempotency_mismatch.json"
		}
		w.Header().Set("Idempotent-Replayed", "true")
	} else {
		status, file, slow = s.answer(r.Method, r.URL.Path, form)
		// Stripe saves the result of a request that began executing; a conflict with one in
		// flight is not saved.
		if r.Method == http.MethodPost && key != "" && status != 409 {
			s.cache[key] = cachedAnswer{status: status, file: file, form: form.Encode()}
		}
	}
	s.sent = append(s.sent, req)
	s.mu.Unlock()
	if slow {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.slow):
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_QxFixture"+strconv.Itoa(len(s.sent)))
	w.WriteHeader(status)
	w.Write(fixture(s.t, file))
}

// answer routes one request (under s.mu) to its status and fixture; slow asks to hold it.
func (s *replayServer) answer(method, path string, form url.Values) (status int, file string, slow bool) {
	pi := strings.TrimPrefix(path, "/v1/payment_intents/")
	id, action, _ := strings.Cut(pi, "/")
	switch {
	case method == "POST" && path == "/v1/customers":
		return 200, "customer.json", false
	case method == "POST" && path == "/v1/payment_intents":
		switch form.Get("payment_method") {
		case "pm_card_visa", "pm_fixture_timeout":
			file = "payment_intent_requires_capture.json"
			if form.Get("customer") != "" {
				file = "payment_intent_saved_requires_capture.json"
			}
			slow = form.Get("payment_method") == "pm_fixture_timeout"
		case "pm_1QxSavedCard000000000001":
			file = "payment_intent_off_session_requires_capture.json"
		case "pm_card_chargeDeclined":
			return 402, "error_card_declined.json", false
		case "pm_card_chargeDeclinedInsufficientFunds":
			return 402, "error_insufficient_funds.json", false
		case "pm_card_authenticationRequired":
			if form.Get("off_session") == "true" {
				return 402, "error_authentication_required.json", false
			}
			file = "payment_intent_requires_action.json"
		case "pm_fixture_api_error":
			return 500, "error_api.json", false
		case "pm_fixture_in_flight":
			return 409, "error_idempotency_key_in_use.json", false
		default:
			return 400, "error_no_such_payment_method.json", false
		}
		s.state[fixtureID(s.t, file)] = file
		return 200, file, slow
	case method == "GET" && path == "/v1/payment_intents/search":
		if strings.Contains(form.Get("query"), "'ord_1'") {
			return 200, "search_payment_intents.json", false
		}
		return 200, "search_empty.json", false
	case method == "GET" && action == "" && id != "":
		if cur, ok := s.state[id]; ok {
			return 200, cur, false
		}
		return 404, "error_resource_missing.json", false
	case method == "POST" && action == "capture":
		next := map[string]string{
			"payment_intent_requires_capture.json":             "payment_intent_succeeded.json",
			"payment_intent_saved_requires_capture.json":       "payment_intent_saved_succeeded.json",
			"payment_intent_off_session_requires_capture.json": "payment_intent_off_session_succeeded.json",
		}[s.state[id]]
		if next == "" {
			return 404, "error_resource_missing.json", false
		}
		s.state[id] = next
		return 200, next, false
	case method == "POST" && action == "cancel":
		cur := s.state[id]
		switch {
		case strings.HasSuffix(cur, "_succeeded.json"):
			return 400, "error_cancel_succeeded.json", false
		case strings.HasSuffix(cur, "canceled.json"):
			return 400, "error_cancel_canceled.json", false
		}
		next := map[string]string{
			"payment_intent_requires_capture.json": "payment_intent_canceled.json",
			"payment_intent_requires_action.json":  "payment_intent_3ds_canceled.json",
		}[cur]
		if next == "" {
			return 404, "error_resource_missing.json", false
		}
		s.state[id] = next
		return 200, next, false
	case method == "POST" && path == "/v1/refunds":
		if form.Get("amount") == "" {
			return 200, "refund_void.json", false
		}
		if n, _ := strconv.Atoi(form.Get("amount")); n > 2700 {
			return 400, "error_refund_too_large.json", false
		}
		return 200, "refund_partial.json", false
	}
	return 404, "error_resource_missing.json", false
}

// requests returns the requests sent so far.
func (s *replayServer) requests() []sentRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentRequest(nil), s.sent...)
}

// paths returns "METHOD path" of the requests sent so far, "(replayed)" after replayed ones.
func (s *replayServer) paths() []string {
	var out []string
	for _, r := range s.requests() {
		p := r.String()
		if r.Replayed {
			p += " (replayed)"
		}
		out = append(out, p)
	}
	return out
}

func (s *replayServer) String() string { return fmt.Sprint(s.paths()) }
