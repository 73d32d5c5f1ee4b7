package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/origin/store"
	"vitrine/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Post-purchase tests call from their own loopback addresses (127.0.0.x), so that each has its
// own per-IP throttle buckets at the origin: the edge forwards the address it sees.
var ipClients sync.Map // ip -> *http.Client

func clientFrom(ip string) *http.Client {
	if c, ok := ipClients.Load(ip); ok {
		return c.(*http.Client)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, _ := ipClients.LoadOrStore(ip, &http.Client{Timeout: 15 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}})
	return c.(*http.Client)
}

// callFrom is call from the loopback address ip.
func callFrom(t testing.TB, ip, method, addr, host, uri, body string, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+uri, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := clientFrom(ip).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, uri, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := &response{status: resp.StatusCode, header: resp.Header, body: b}
	commerceAnswers.check(t, req, out)
	return out
}

// from calls the shop through the edge from ip.
func (sh *shop) from(ip, method, uri, body string, headers ...string) *response {
	sh.t.Helper()
	return callFrom(sh.t, ip, method, sh.edge, sh.host, uri, body, headers...)
}

// admin calls the shop's staff API through the edge as its administrator.
func (sh *shop) admin(method, uri, body string) *response {
	sh.t.Helper()
	return sh.do(method, uri, "", body, "Authorization", sh.auth)
}

// productIn creates an active product with one variant in any tenant of the shop's system.
func (sh *shop) productIn(tn *schema.Tenant, title string, price, stock int64) schema.VariantID {
	sh.t.Helper()
	sh.nextN++
	ctx := context.Background()
	var id schema.VariantID
	_, err := sh.s.db.WriteTx(ctx, func(tx *store.Tx) error {
		p := &schema.Product{Slug: fmt.Sprintf("p-%d", sh.nextN), Title: title, Status: schema.ProductActive, Prices: schema.Prices{"USD": price}}
		if err := tx.CreateProduct(ctx, tn, p); err != nil {
			return err
		}
		v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("SKU-%d", sh.nextN), Title: "Default"}, Stock: stock}
		if err := tx.CreateVariant(ctx, tn, v); err != nil {
			return err
		}
		id = v.ID
		return nil
	})
	if err != nil {
		sh.t.Fatal(err)
	}
	return id
}

type lineQty struct {
	id schema.VariantID
	q  int64
}

// orderAt checks out a new cart of lines at host and returns the order.
func (sh *shop) orderAt(host, body string, headers []string, lines ...lineQty) schema.OrderView {
	sh.t.Helper()
	session := newSession()
	for _, l := range lines {
		r := call(sh.t, "POST", sh.edge, host, "/api/cart/items", fmt.Sprintf(`{"variant_id":%d,"quantity":%d}`, l.id, l.q), "X-Cart-Session", session)
		if r.status != 200 {
			sh.t.Fatalf("add to cart at %s: %d %s", host, r.status, r.body)
		}
	}
	r := call(sh.t, "POST", sh.edge, host, "/api/checkout", body, append([]string{"X-Cart-Session", session}, headers...)...)
	if r.status != 201 {
		sh.t.Fatalf("checkout at %s: %d %s", host, r.status, r.body)
	}
	return decode[schema.OrderView](sh.t, r)
}

// withoutRequestID drops the request_id of an error body, the only part that differs between
// two equal errors.
func withoutRequestID(t testing.TB, r *response) string {
	t.Helper()
	m := r.json(t)
	delete(m, "request_id")
	b, _ := json.Marshal(m)
	return string(b)
}

var rfc3339 = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)

// golden compares a JSON body with testdata/name, after replacing the order reference and
// timestamps (and rewrites the file with -update).
func golden(t *testing.T, name string, body []byte, ref string) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: %v: %s", name, err, body)
	}
	got := strings.ReplaceAll(buf.String(), ref, "<reference>")
	got = rfc3339.ReplaceAllString(got, `"<time>"`) + "\n"
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// lastEvent returns the data of the last domain event of a kind in the event stream.
func (sh *shop) lastEvent(kind string) map[string]any {
	sh.t.Helper()
	nc := sh.s.connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		sh.t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), sh.s.fc.EventStream)
	if err != nil {
		sh.t.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(context.Background(), sh.s.fc.EventSubject(sh.tn.Slug, kind))
	if err != nil {
		sh.t.Fatalf("last %s event: %v", kind, err)
	}
	var e struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(msg.Data, &e); err != nil || e.Type != kind {
		sh.t.Fatalf("event %s: %v: %s", kind, err, msg.Data)
	}
	return e.Data
}

// shopperReturnBody is a return as the shopper API shows it.
type shopperReturnBody struct {
	RMA            string             `json:"rma"`
	OrderReference string             `json:"order_reference"`
	Status         string             `json:"status"`
	Items          []store.ReturnLine `json:"items"`
	RefundAmount   *schema.Money      `json:"refund_amount"`
}

// adminReturnBody is a return as the admin API shows it.
type adminReturnBody struct {
	ID           string             `json:"id"`
	RMA          string             `json:"rma"`
	Status       string             `json:"status"`
	RefundAmount int64              `json:"refund_amount"`
	Refundable   int64              `json:"refundable"`
	History      []store.ReturnStep `json:"history"`
	Items        []store.ReturnLine `json:"items"`
}

func TestPostPurchase(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	other, _ := sh.s.tenant("other")
	ctx := context.Background()

	// Products and orders first, in a fixed order, so that ids in the golden bodies are stable.
	kettle := sh.product("Kettle", 3000, 100)
	mug := sh.product("Mug", 1250, 100)
	lamp := sh.product("Last Lamp", 4999, 100)
	otherVase := sh.productIn(other, "Vase", 2000, 10)

	ann := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 2}, lineQty{mug, 1})
	annMore := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 3})
	raceOrder := sh.orderAt(sh.host, guest, nil, lineQty{lamp, 1})
	otherOrder := sh.orderAt("other.example.test", guest, nil, lineQty{otherVase, 1})
	r := sh.do("POST", "/api/customer/register", "", `{"email":"cy@example.com","password":"correct horse battery","name":"Cy"}`)
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	cyToken := r.json(t)["token"].(string)
	r = sh.do("POST", "/api/customer/register", "", `{"email":"dee@example.com","password":"correct horse battery","name":"Dee"}`)
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	deeToken := r.json(t)["token"].(string)
	cyBody := strings.Replace(guest, `"email":"ann@example.com",`, "", 1)
	cy := sh.orderAt(sh.host, cyBody, []string{"Authorization", "Bearer " + cyToken}, lineQty{mug, 2})

	submitted, approved := 0, 0 // returns created and approved, for the event counts

	t.Run("tracking answers malformed, unknown and other stores' references with the same 404", func(t *testing.T) {
		const ip = "127.0.0.11"
		bodies := map[string]string{}
		for _, ref := range []string{"not-a-reference", "0000-0000-0000-0000", otherOrder.Reference, strings.ToLower(otherOrder.Reference)} {
			r := sh.from(ip, "GET", "/api/tracking/"+ref, "", "X-Order-Email", "ann@example.com")
			if r.status != 404 {
				t.Fatalf("%s: %d %s", ref, r.status, r.body)
			}
			bodies[withoutRequestID(t, r)] = ref
		}
		if len(bodies) != 1 {
			t.Fatalf("the 404s differ: %v", bodies)
		}
		// The other store's order is there, at its own store.
		if r := callFrom(t, ip, "GET", sh.edge, "other.example.test", "/api/tracking/"+otherOrder.Reference, ""); r.status != 200 {
			t.Fatalf("the other store's order at its store: %d %s", r.status, r.body)
		}
	})

	t.Run("tracking allows 10 requests a minute per IP, then 429 without data", func(t *testing.T) {
		for attempt, ip := range []string{"127.0.0.12", "127.0.0.13"} {
			start := time.Now()
			rs := parallel(15, func(int) *response {
				return sh.from(ip, "GET", "/api/tracking/"+ann.Reference, "", "X-Order-Email", "ann@example.com")
			})
			if start.Truncate(time.Minute) != time.Now().Truncate(time.Minute) && attempt == 0 {
				continue // the burst straddled two throttle windows: once more
			}
			if st := statuses(rs); st[200] != 10 || st[429] != 5 {
				t.Fatalf("statuses %v, want 10 200 and 5 429", st)
			}
			for _, r := range rs {
				if r.status == 429 && (r.header.Get("Retry-After") == "" || bytes.Contains(r.body, []byte("ann@")) || bytes.Contains(r.body, []byte("Kettle"))) {
					t.Fatalf("429 without Retry-After or with data: %v %s", r.header, r.body)
				}
			}
			// Another address is not held back.
			if r := sh.from("127.0.0.14", "GET", "/api/tracking/"+ann.Reference, ""); r.status != 200 {
				t.Fatalf("another IP: %d %s", r.status, r.body)
			}
			return
		}
	})

	t.Run("the tracking view is masked unless the caller proves ownership", func(t *testing.T) {
		const ip = "127.0.0.15"
		anon := sh.from(ip, "GET", "/api/tracking/"+ann.Reference, "")
		if anon.status != 200 || anon.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("anonymous: %d %v %s", anon.status, anon.header, anon.body)
		}
		golden(t, "tracking_masked.golden", anon.body, ann.Reference)
		wrong := sh.from(ip, "GET", "/api/tracking/"+ann.Reference, "", "X-Order-Email", "bob@example.com")
		if wrong.status != 200 || string(wrong.body) != string(anon.body) {
			t.Fatalf("wrong email: %d %s", wrong.status, wrong.body)
		}
		owner := sh.from(ip, "GET", "/api/tracking/"+strings.ToLower(ann.Reference), "", "X-Order-Email", "  Ann@Example.COM ")
		if owner.status != 200 {
			t.Fatalf("owner: %d %s", owner.status, owner.body)
		}
		golden(t, "tracking_verified.golden", owner.body, ann.Reference)
		if q := sh.from(ip, "GET", "/api/tracking/"+ann.Reference+"?email=ann%40example.com", ""); q.status != 200 || string(q.body) != string(owner.body) {
			t.Fatalf("email in the query: %d %s", q.status, q.body)
		}
		// A customer's token proves their own orders, not others'.
		mine := sh.from(ip, "GET", "/api/tracking/"+cy.Reference, "", "Authorization", "Bearer "+cyToken)
		if mine.status != 200 || mine.json(t)["verified"] != true || mine.json(t)["email"] != "cy@example.com" {
			t.Fatalf("customer's own order: %d %s", mine.status, mine.body)
		}
		notMine := sh.from(ip, "GET", "/api/tracking/"+cy.Reference, "", "Authorization", "Bearer "+deeToken)
		if notMine.status != 200 || notMine.json(t)["verified"] != false || notMine.json(t)["email"] != "c***@example.com" {
			t.Fatalf("another customer's order: %d %s", notMine.status, notMine.body)
		}
		if bad := sh.from(ip, "GET", "/api/tracking/"+cy.Reference, "", "Authorization", "Bearer cst_forged"); bad.status != 401 {
			t.Fatalf("forged token: %d %s", bad.status, bad.body)
		}
	})

	var first adminReturnBody
	t.Run("a return goes through every state, with events", func(t *testing.T) {
		const ip = "127.0.0.16"
		r := sh.from(ip, "POST", "/api/orders/"+ann.Reference+"/return",
			`{"email":"ANN@example.com","items":[{"line_no":1,"quantity":1,"reason":"damaged"}],"note":"the lid is dented"}`)
		if r.status != 201 {
			t.Fatalf("submit: %d %s", r.status, r.body)
		}
		submitted++
		ret := decode[shopperReturnBody](t, r)
		if !regexp.MustCompile(`^RMA-[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$`).MatchString(ret.RMA) || ret.Status != "submitted" || ret.OrderReference != ann.Reference ||
			len(ret.Items) != 1 || ret.Items[0].Title != "Kettle / Default (SKU SKU-1)" || ret.Items[0].Quantity != 1 || ret.RefundAmount != nil {
			t.Fatalf("return %s", r.body)
		}
		if n := sh.events(store.EventReturnSubmitted, submitted); n != submitted {
			t.Fatalf("%d return.submitted events, want %d", n, submitted)
		}
		if e := sh.lastEvent(store.EventReturnSubmitted); e["rma"] != ret.RMA || e["order_reference"] != ann.Reference || e["status"] != "submitted" {
			t.Fatalf("return.submitted carries %v", e)
		}

		list := decode[schema.Page[adminReturnBody]](t, sh.admin("GET", "/api/admin/returns?status=submitted", ""))
		if list.Total != 1 || list.Data[0].RMA != ret.RMA {
			t.Fatalf("submitted returns: %+v", list)
		}
		first = list.Data[0]
		got := decode[adminReturnBody](t, sh.admin("GET", "/api/admin/returns/"+first.ID, ""))
		// One of two kettles: half the line's total (6000 + 8.25%? no tax here: 6000).
		if got.Refundable != 3000 || got.RMA != ret.RMA {
			t.Fatalf("admin view %+v", got)
		}
		if byRMA := sh.admin("GET", "/api/admin/returns/"+strings.ToLower(ret.RMA), ""); byRMA.status != 200 {
			t.Fatalf("by RMA: %d %s", byRMA.status, byRMA.body)
		}

		move := func(body string, want int) adminReturnBody {
			t.Helper()
			r := sh.admin("POST", "/api/admin/returns/"+first.ID+"/transition", body)
			if r.status != want {
				t.Fatalf("transition %s: %d %s, want %d", body, r.status, r.body, want)
			}
			if want != 200 {
				return adminReturnBody{}
			}
			return decode[adminReturnBody](t, r)
		}
		move(`{"status":"received"}`, 409) // not approved yet
		move(`{"status":"shipped"}`, 400)
		move(`{"status":"approved","refund_amount":1}`, 400)
		if a := move(`{"status":"approved","note":"photo checked"}`, 200); a.Status != "approved" {
			t.Fatalf("approved: %+v", a)
		}
		approved++
		if n := sh.events(store.EventReturnApproved, approved); n != approved {
			t.Fatalf("%d return.approved events, want %d", n, approved)
		}
		move(`{"status":"approved"}`, 409)
		move(`{"status":"refunded"}`, 409)
		move(`{"status":"declined"}`, 409)
		move(`{"status":"received"}`, 200)
		move(`{"status":"refunded","refund_amount":3001}`, 400)
		done := move(`{"status":"refunded"}`, 200)
		if done.RefundAmount != 3000 || len(done.History) != 4 || done.History[1].By != "admin" || done.History[1].Note != "photo checked" {
			t.Fatalf("refunded: %+v", done)
		}
		for _, s := range []string{"approved", "received", "declined", "refunded"} {
			move(`{"status":"`+s+`"}`, 409)
		}

		// The shopper reads the return's status in the verified tracking view.
		view := sh.from(ip, "GET", "/api/tracking/"+ann.Reference, "", "X-Order-Email", "ann@example.com")
		var tv struct {
			Returns []shopperReturnBody `json:"returns"`
		}
		if err := json.Unmarshal(view.body, &tv); err != nil || len(tv.Returns) != 1 || tv.Returns[0].Status != "refunded" ||
			tv.Returns[0].RefundAmount == nil || tv.Returns[0].RefundAmount.Formatted != "30.00" || bytes.Contains(view.body, []byte("photo checked")) {
			t.Fatalf("tracking with returns: %v %s", err, view.body)
		}
		if masked := sh.from(ip, "GET", "/api/tracking/"+ann.Reference, ""); bytes.Contains(masked.body, []byte("RMA-")) {
			t.Fatalf("the masked view shows returns: %s", masked.body)
		}
	})

	t.Run("a declined return gives its units back", func(t *testing.T) {
		const ip = "127.0.0.17"
		body := fmt.Sprintf(`{"items":[{"variant_id":%d,"quantity":1,"reason":"no_longer_needed"}]}`, mug)
		r := sh.from(ip, "POST", "/api/orders/"+ann.Reference+"/return", body, "X-Order-Email", "ann@example.com")
		if r.status != 201 {
			t.Fatalf("submit: %d %s", r.status, r.body)
		}
		submitted++
		if again := sh.from(ip, "POST", "/api/orders/"+ann.Reference+"/return", body, "X-Order-Email", "ann@example.com"); again.status != 409 {
			t.Fatalf("the mug is already in a return: %d %s", again.status, again.body)
		}
		rma := decode[shopperReturnBody](t, r).RMA
		if d := sh.admin("POST", "/api/admin/returns/"+rma+"/transition", `{"status":"declined","note":"used"}`); d.status != 200 {
			t.Fatalf("decline: %d %s", d.status, d.body)
		}
		if again := sh.from(ip, "POST", "/api/orders/"+ann.Reference+"/return", body, "X-Order-Email", "ann@example.com"); again.status != 201 {
			t.Fatalf("after the decline: %d %s", again.status, again.body)
		}
		submitted++
	})

	t.Run("returns refuse bad input, more than was bought, and orders that are not the caller's or not paid", func(t *testing.T) {
		n := 0 // each call from its own address: more calls than the per-IP limit
		ret := func(ref, body string, headers ...string) *response {
			n++
			return sh.from(fmt.Sprintf("127.0.1.%d", n), "POST", "/api/orders/"+ref+"/return", body, headers...)
		}
		item := `{"items":[{"line_no":1,"quantity":1,"reason":"damaged"}]}`
		proof := []string{"X-Order-Email", "ann@example.com"}
		cases := []struct {
			name, ref, body string
			headers         []string
			want            int
			says            string
		}{
			{"no items", annMore.Reference, `{"items":[]}`, proof, 400, "items"},
			{"no body", annMore.Reference, ``, proof, 400, "JSON"},
			{"unknown reason", annMore.Reference, `{"items":[{"line_no":1,"quantity":1,"reason":"bored"}]}`, proof, 400, "damaged, wrong_item"},
			{"line and variant", annMore.Reference, fmt.Sprintf(`{"items":[{"line_no":1,"variant_id":%d,"quantity":1,"reason":"other"}]}`, kettle), proof, 400, "exactly one"},
			{"no quantity", annMore.Reference, `{"items":[{"line_no":1,"reason":"other"}]}`, proof, 400, "quantity"},
			{"no such line", annMore.Reference, `{"items":[{"line_no":7,"quantity":1,"reason":"other"}]}`, proof, 400, "no such line"},
			{"line twice", annMore.Reference, `{"items":[{"line_no":1,"quantity":1,"reason":"other"},{"line_no":1,"quantity":1,"reason":"other"}]}`, proof, 400, "twice"},
			{"unknown field", annMore.Reference, `{"items":[],"refund":true}`, proof, 400, "refund"},
			{"no proof", annMore.Reference, item, nil, 400, "email"},
			{"more than bought", annMore.Reference, `{"items":[{"line_no":1,"quantity":4,"reason":"other"}]}`, proof, 409, "at most 3 of the 3 bought can be returned"},
			{"wrong email", annMore.Reference, item, []string{"X-Order-Email", "bob@example.com"}, 404, "no order"},
			{"another customer's token", cy.Reference, item, []string{"Authorization", "Bearer " + deeToken}, 404, "no order"},
			{"another store's order", otherOrder.Reference, item, proof, 404, "no order"},
			{"malformed reference", "nope", item, proof, 404, "no order"},
		}
		for _, tc := range cases {
			r := ret(tc.ref, tc.body, tc.headers...)
			if r.status != tc.want || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("%s: %d %s, want %d saying %q", tc.name, r.status, r.body, tc.want, tc.says)
			}
		}
		// A customer returns with their token alone.
		if r := ret(cy.Reference, `{"items":[{"line_no":1,"quantity":2,"reason":"wrong_item"}]}`, "Authorization", "Bearer "+cyToken); r.status != 201 {
			t.Fatalf("customer's return: %d %s", r.status, r.body)
		}
		submitted++
		// Only paid orders.
		sh.settle(func(tx *store.Tx) error {
			o, err := tx.OrderByReference(ctx, sh.tn, annMore.Reference)
			if err != nil {
				return err
			}
			return tx.SetOrderStatus(ctx, sh.tn, o, schema.OrderCancelled, "")
		})
		if r := ret(annMore.Reference, item, proof...); r.status != 409 || !strings.Contains(string(r.body), "only paid orders") {
			t.Fatalf("cancelled order: %d %s", r.status, r.body)
		}
	})

	t.Run("parallel returns of the last unit of a line: exactly one is accepted", func(t *testing.T) {
		rs := parallel(8, func(i int) *response {
			return sh.from("127.0.0.19", "POST", "/api/orders/"+raceOrder.Reference+"/return",
				`{"items":[{"line_no":1,"quantity":1,"reason":"other"}]}`, "X-Order-Email", "ann@example.com")
		})
		if st := statuses(rs); st[201] != 1 || st[409] != 7 {
			for _, r := range rs {
				t.Logf("%d %s", r.status, r.body)
			}
			t.Fatalf("statuses %v, want one 201 and seven 409", st)
		}
		submitted++
		var tv struct {
			Returns []shopperReturnBody `json:"returns"`
		}
		view := sh.from("127.0.0.19", "GET", "/api/tracking/"+raceOrder.Reference, "", "X-Order-Email", "ann@example.com")
		if err := json.Unmarshal(view.body, &tv); err != nil || len(tv.Returns) != 1 {
			t.Fatalf("the order has %d returns, want 1: %s", len(tv.Returns), view.body)
		}
	})

	t.Run("events: one return.submitted per return, one return.approved per approval", func(t *testing.T) {
		if n := sh.events(store.EventReturnSubmitted, submitted); n != submitted {
			t.Fatalf("%d return.submitted events, want %d", n, submitted)
		}
		if n := sh.events(store.EventReturnApproved, approved); n != approved {
			t.Fatalf("%d return.approved events, want %d", n, approved)
		}
		list := decode[schema.Page[adminReturnBody]](t, sh.admin("GET", "/api/admin/returns?per_page=2", ""))
		if list.Total != submitted || len(list.Data) != 2 || list.TotalPages != (submitted+1)/2 {
			t.Fatalf("returns list: total %d, %d on the page, %d pages; want %d", list.Total, len(list.Data), list.TotalPages, submitted)
		}
	})

	t.Run("newsletter subscriptions are idempotent and tell nothing", func(t *testing.T) {
		const ip = "127.0.0.20"
		a := sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":"news@example.com"}`)
		b := sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":" NEWS@example.com"}`)
		if a.status != 200 || b.status != 200 || string(a.body) != string(b.body) {
			t.Fatalf("new %d %s / existing %d %s", a.status, a.body, b.status, b.body)
		}
		rs := parallel(5, func(int) *response {
			return sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":"fresh@example.com"}`)
		})
		if st := statuses(rs); st[200] != 5 {
			t.Fatalf("parallel subscriptions: %v", st)
		}
		if r := sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":"not-an-email"}`); r.status != 400 {
			t.Fatalf("bad email: %d %s", r.status, r.body)
		}
		subs := decode[schema.Page[store.Subscriber]](t, sh.admin("GET", "/api/admin/newsletter/subscribers", ""))
		if subs.Total != 2 || len(subs.Data) != 2 {
			t.Fatalf("subscribers: %+v", subs)
		}
		// The tenth attempt of the minute passes, the eleventh does not (the bad email counted not).
		for i := 0; i < 3; i++ {
			sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":"news@example.com"}`)
		}
		if r := sh.from(ip, "POST", "/api/newsletter/subscribe", `{"email":"news@example.com"}`); r.status != 429 || r.header.Get("Retry-After") == "" {
			t.Fatalf("eleventh subscription: %d %s", r.status, r.body)
		}
	})

	t.Run("contact messages are validated, stored with the client IP and handled by staff", func(t *testing.T) {
		const ip = "127.0.0.21"
		bad := []struct{ body, field string }{
			{`{"email":"zoe@example.com","message":"hello"}`, "name"},
			{`{"name":"Zoe","email":"zoe","message":"hello"}`, "email"},
			{`{"name":"Zoe","email":"zoe@example.com","message":"   "}`, "message"},
			{`{"name":"Zoe","email":"zoe@example.com","message":"` + strings.Repeat("x", 5001) + `"}`, "message"},
			{`{"name":"Zoe","email":"zoe@example.com","subject":"` + strings.Repeat("s", 201) + `","message":"hi"}`, "subject"},
			{`{"name":"Zoe","email":"zoe@example.com","message":"hi","phone":"1"}`, "phone"},
			{`{"name":"Zoe","email":"zoe@example.com","message":42}`, "message"},
		}
		for _, tc := range bad {
			r := sh.from(ip, "POST", "/api/contact", tc.body)
			if r.status != 400 || r.json(t)["field"] != tc.field {
				t.Errorf("%.60s: %d %s, want 400 on %s", tc.body, r.status, r.body, tc.field)
			}
		}
		r := sh.from(ip, "POST", "/api/contact", `{"name":"Zoe","email":"Zoe@Example.com","subject":"Order","message":"Where is my kettle?"}`)
		if r.status != 201 || r.json(t)["received"] != true || !schema.ValidUUID(r.json(t)["id"].(string)) {
			t.Fatalf("contact: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		list := decode[schema.Page[store.ContactMessage]](t, sh.admin("GET", "/api/admin/contact-messages?status=open", ""))
		if list.Total != 1 || list.Data[0].ID != id || list.Data[0].ClientIP != ip || list.Data[0].Email != "zoe@example.com" || list.Data[0].Handled {
			t.Fatalf("open messages: %+v", list)
		}
		if u := sh.admin("PATCH", "/api/admin/contact-messages/"+id, `{"handled":true}`); u.status != 200 || u.json(t)["handled"] != true {
			t.Fatalf("mark handled: %d %s", u.status, u.body)
		}
		if open := decode[schema.Page[store.ContactMessage]](t, sh.admin("GET", "/api/admin/contact-messages?status=open", "")); open.Total != 0 {
			t.Fatalf("open after handling: %+v", open)
		}
		if h := decode[schema.Page[store.ContactMessage]](t, sh.admin("GET", "/api/admin/contact-messages?status=handled", "")); h.Total != 1 {
			t.Fatalf("handled: %+v", h)
		}
		for _, bad := range []string{"nope", "00000000-0000-4000-8000-000000000000"} {
			if u := sh.admin("PATCH", "/api/admin/contact-messages/"+bad, `{"handled":true}`); u.status != 404 {
				t.Fatalf("unknown message %s: %d %s", bad, u.status, u.body)
			}
		}
		// Five messages a minute per IP (the invalid ones counted not).
		for i := 0; i < 4; i++ {
			sh.from(ip, "POST", "/api/contact", `{"name":"Zoe","email":"zoe@example.com","message":"again"}`)
		}
		if r := sh.from(ip, "POST", "/api/contact", `{"name":"Zoe","email":"zoe@example.com","message":"again"}`); r.status != 429 {
			t.Fatalf("sixth message: %d %s", r.status, r.body)
		}
	})

	t.Run("staff routes need a credential with manage_commerce", func(t *testing.T) {
		ed := &schema.User{Login: "ed", Email: "ed@shop.example", Role: schema.RoleEditor}
		mgr := &schema.User{Login: "mo", Email: "mo@shop.example", Role: schema.RoleShopManager}
		pws := map[string]string{}
		for _, u := range []*schema.User{ed, mgr} {
			if err := sh.s.db.CreateUser(ctx, sh.tn, u); err != nil {
				t.Fatal(err)
			}
			pw := schema.NewAppPassword()
			if _, err := sh.s.db.CreateAppPassword(ctx, sh.tn, u.ID, "tests", schema.HashAppPassword(sh.s.key, pw)); err != nil {
				t.Fatal(err)
			}
			pws[u.Login] = pw
		}
		const id = "00000000-0000-4000-8000-000000000000"
		for _, route := range []struct{ method, uri, body string }{
			{"GET", "/api/admin/returns", ""}, {"GET", "/api/admin/returns/" + id, ""},
			{"POST", "/api/admin/returns/" + id + "/transition", `{"status":"approved"}`},
			{"GET", "/api/admin/newsletter/subscribers", ""}, {"GET", "/api/admin/contact-messages", ""},
			{"GET", "/api/admin/coupons", ""}, {"PUT", "/api/admin/coupons/X1", `{"kind":"percent","value":100}`},
			{"GET", "/api/admin/gift-cards", ""}, {"POST", "/api/admin/gift-cards", `{"amount":100}`},
			{"GET", "/api/admin/shipping-methods", ""}, {"GET", "/api/admin/settings", ""}, {"PUT", "/api/admin/settings", `{}`},
		} {
			if r := sh.do(route.method, route.uri, "", route.body); r.status != 401 || strings.Contains(r.header.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("%s %s anonymous: %d %s", route.method, route.uri, r.status, r.body)
			}
			if r := sh.do(route.method, route.uri, "", route.body, "Authorization", basic("ed", pws["ed"])); r.status != 403 ||
				!strings.Contains(string(r.body), "manage_commerce") {
				t.Errorf("%s %s as an editor: %d %s", route.method, route.uri, r.status, r.body)
			}
			if r := sh.do(route.method, route.uri, "", route.body, "Authorization", basic("ed", "wrong password wrong pass")); r.status != 401 {
				t.Errorf("%s %s with a wrong password: %d %s", route.method, route.uri, r.status, r.body)
			}
		}
		if r := sh.do("GET", "/api/admin/settings", "", "", "Authorization", basic("mo", pws["mo"])); r.status != 200 {
			t.Fatalf("shop manager: %d %s", r.status, r.body)
		}
	})

	t.Run("coupons round-trip through the admin API and apply at checkout", func(t *testing.T) {
		if r := sh.admin("PUT", "/api/admin/coupons/summer20", `{"kind":"percent","value":2000}`); r.status != 201 || r.json(t)["code"] != "SUMMER20" {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if r := sh.admin("PUT", "/api/admin/coupons/SUMMER20", `{"kind":"percent","value":2500,"usage_limit":100}`); r.status != 200 {
			t.Fatalf("replace: %d %s", r.status, r.body)
		}
		got := decode[store.Coupon](t, sh.admin("GET", "/api/admin/coupons/Summer20", ""))
		if got.Value != 2500 || !got.Active || got.UsageLimit == nil || *got.UsageLimit != 100 {
			t.Fatalf("get: %+v", got)
		}
		if list := decode[schema.List[store.Coupon]](t, sh.admin("GET", "/api/admin/coupons", "")); len(list.Data) != 1 {
			t.Fatalf("list: %+v", list)
		}
		for _, body := range []string{`{"kind":"percent","value":0}`, `{"kind":"gift","value":5}`, `{"value":"ten"}`, `{"code":"OTHER"}`} {
			if r := sh.admin("PUT", "/api/admin/coupons/BAD", body); r.status != 400 {
				t.Errorf("PUT %s: %d %s", body, r.status, r.body)
			}
		}
		if r := sh.admin("PUT", "/api/admin/coupons/no%20spaces", `{"kind":"percent","value":5}`); r.status != 400 {
			t.Errorf("bad code: %d %s", r.status, r.body)
		}
		session := newSession()
		sh.add(session, mug, 4)
		if r := sh.do("POST", "/api/cart/coupon", session, `{"code":"summer20"}`); r.status != 200 || decode[cartBody](t, r).Totals.Discount.Amount != 1250 {
			t.Fatalf("apply: %d %s", r.status, r.body)
		}
		if r := sh.admin("DELETE", "/api/admin/coupons/summer20", ""); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		for _, m := range []string{"GET", "DELETE"} {
			if r := sh.admin(m, "/api/admin/coupons/SUMMER20", ""); r.status != 404 {
				t.Fatalf("%s after delete: %d %s", m, r.status, r.body)
			}
		}
	})

	t.Run("gift cards show their code once and are enabled and disabled by id", func(t *testing.T) {
		r := sh.admin("POST", "/api/admin/gift-cards", `{"amount":2500,"note":"goodwill for ann"}`)
		if r.status != 201 {
			t.Fatalf("issue: %d %s", r.status, r.body)
		}
		var issued struct {
			Code     string               `json:"code"`
			GiftCard store.IssuedGiftCard `json:"gift_card"`
		}
		if err := json.Unmarshal(r.body, &issued); err != nil || len(issued.Code) != 19 || issued.GiftCard.Balance != 2500 ||
			issued.GiftCard.Currency != "USD" || issued.GiftCard.Note != "goodwill for ann" || !issued.GiftCard.Active {
			t.Fatalf("issued: %v %s", err, r.body)
		}
		bare := strings.ReplaceAll(issued.Code, "-", "")
		last4 := bare[len(bare)-4:]
		list := sh.admin("GET", "/api/admin/gift-cards?last4="+strings.ToLower(last4), "")
		page := decode[schema.Page[store.IssuedGiftCard]](t, list)
		if list.status != 200 || page.Total != 1 || page.Data[0].ID != issued.GiftCard.ID || bytes.Contains(list.body, []byte(bare[:8])) {
			t.Fatalf("list by last4: %d %s", list.status, list.body)
		}
		one := sh.admin("GET", "/api/admin/gift-cards/"+issued.GiftCard.ID, "")
		if one.status != 200 || bytes.Contains(one.body, []byte(bare[:8])) || bytes.Contains(one.body, []byte(issued.Code[:9])) {
			t.Fatalf("get: %d %s", one.status, one.body)
		}
		if r := sh.admin("PATCH", "/api/admin/gift-cards/"+issued.GiftCard.ID, `{"active":false}`); r.status != 200 || r.json(t)["active"] != false {
			t.Fatalf("disable: %d %s", r.status, r.body)
		}
		session := newSession()
		sh.add(session, mug, 1)
		if r := sh.do("POST", "/api/cart/gift-card", session, `{"code":"`+issued.Code+`"}`); r.status != 422 || !strings.Contains(string(r.body), "not active") {
			t.Fatalf("a disabled card: %d %s", r.status, r.body)
		}
		if r := sh.admin("PATCH", "/api/admin/gift-cards/"+issued.GiftCard.ID, `{"active":true}`); r.status != 200 {
			t.Fatalf("enable: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", "/api/cart/gift-card", session, `{"code":"`+issued.Code+`"}`); r.status != 200 {
			t.Fatalf("an enabled card: %d %s", r.status, r.body)
		}
		if r := sh.admin("POST", "/api/admin/gift-cards", `{"amount":100,"code":"`+issued.Code+`"}`); r.status != 409 {
			t.Fatalf("a code already issued: %d %s", r.status, r.body)
		}
		for _, body := range []string{`{}`, `{"amount":0}`, `{"amount":100,"currency":"XXX"}`, `{"amount":100,"code":"short"}`, `{"amount":100,"expires_at":"2001-01-01T00:00:00Z"}`} {
			if r := sh.admin("POST", "/api/admin/gift-cards", body); r.status != 400 {
				t.Errorf("issue %s: %d %s", body, r.status, r.body)
			}
		}
		for _, id := range []string{"nope", "00000000-0000-4000-8000-000000000000"} {
			if r := sh.admin("GET", "/api/admin/gift-cards/"+id, ""); r.status != 404 {
				t.Errorf("gift card %s: %d %s", id, r.status, r.body)
			}
		}
		if r := sh.admin("GET", "/api/admin/gift-cards?last4=ABCDE", ""); r.status != 400 {
			t.Errorf("a last4 of five: %d %s", r.status, r.body)
		}
	})

	t.Run("shipping methods and settings round-trip and change what carts charge", func(t *testing.T) {
		if r := sh.admin("PUT", "/api/admin/shipping-methods/pickup", `{"name":"Pickup in store","prices":{"USD":0}}`); r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if r := sh.admin("PUT", "/api/admin/shipping-methods/post", `{"name":"Post","prices":{"USD":700},"free_over":{"USD":10000},"position":1}`); r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if r := sh.admin("PUT", "/api/admin/shipping-methods/pickup", `{"name":"Pickup","prices":{"USD":0},"position":2}`); r.status != 200 {
			t.Fatalf("replace: %d %s", r.status, r.body)
		}
		list := decode[schema.List[store.ShippingMethodRow]](t, sh.admin("GET", "/api/admin/shipping-methods", ""))
		if len(list.Data) != 2 || list.Data[0].Code != "post" || list.Data[1].Name != "Pickup" || !list.Data[1].Active {
			t.Fatalf("list: %+v", list)
		}
		for _, tc := range []struct{ uri, body string }{
			{"/api/admin/shipping-methods/Bad%20Code", `{"name":"x","prices":{"USD":1}}`},
			{"/api/admin/shipping-methods/x", `{"name":"x"}`},
			{"/api/admin/shipping-methods/x", `{"name":"x","prices":{"usd":1}}`},
			{"/api/admin/shipping-methods/x", `{"name":"x","prices":{"USD":-1}}`},
		} {
			if r := sh.admin("PUT", tc.uri, tc.body); r.status != 400 {
				t.Errorf("PUT %s %s: %d %s", tc.uri, tc.body, r.status, r.body)
			}
		}

		st := sh.admin("GET", "/api/admin/settings", "")
		if st.status != 200 || st.json(t)["tax_basis_points"] != float64(0) || st.json(t)["cart_ttl_seconds"] != float64(30*24*3600) {
			t.Fatalf("settings: %d %s", st.status, st.body)
		}
		put := sh.admin("PUT", "/api/admin/settings", `{"tax_basis_points":1000,"tax_on_shipping":true}`)
		if put.status != 200 || put.json(t)["tax_basis_points"] != float64(1000) || put.json(t)["token_ttl_seconds"] != float64(30*24*3600) {
			t.Fatalf("put settings: %d %s", put.status, put.body)
		}
		for _, body := range []string{`{"cart_ttl_seconds":5}`, `{"token_ttl_seconds":99999999999}`, `{"tax_basis_points":-1}`, `{"tax":1}`} {
			if r := sh.admin("PUT", "/api/admin/settings", body); r.status != 400 {
				t.Errorf("settings %s: %d %s", body, r.status, r.body)
			}
		}
		// A cart of one mug (12.50) with post (7.00): 10% on both.
		session := newSession()
		sh.add(session, mug, 1)
		c := decode[cartBody](t, sh.do("GET", "/api/cart", session, ""))
		if c.Totals.Shipping.Amount != 700 || c.Totals.Tax.Amount != 195 || c.Totals.Total.Amount != 2145 {
			t.Fatalf("totals %+v, want shipping 700, tax 195, total 2145", c.Totals)
		}
		if r := sh.admin("DELETE", "/api/admin/shipping-methods/post", ""); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if r := sh.admin("DELETE", "/api/admin/shipping-methods/post", ""); r.status != 404 {
			t.Fatalf("delete again: %d %s", r.status, r.body)
		}
		c = decode[cartBody](t, sh.do("GET", "/api/cart", session, ""))
		if c.Totals.Shipping.Amount != 0 || c.Totals.Tax.Amount != 125 {
			t.Fatalf("totals after deleting post: %+v", c.Totals)
		}
	})
}
