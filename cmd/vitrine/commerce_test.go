package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// countingProvider is the test payment provider, counting authorizations per idempotency key.
type countingProvider struct {
	payment.Test
	mu    sync.Mutex
	calls map[string]int
}

func (p *countingProvider) Authorize(ctx context.Context, r payment.Request) (payment.Result, error) {
	p.mu.Lock()
	p.calls[r.Key]++
	p.mu.Unlock()
	return p.Test.Authorize(ctx, r)
}

// shop is a running system with one store, reached through an edge.
type shop struct {
	s     *system
	t     *testing.T
	tn    *schema.Tenant
	edge  string
	host  string
	auth  string
	pay   *countingProvider
	nextN int
}

func newShop(t *testing.T) *shop { return newShopWith(t, nil) }

// newShopWith is newShop with the system adjusted by setup before anything starts.
func newShopWith(t *testing.T, setup func(s *system)) *shop {
	s := newSystem(t, systemOptions{})
	if setup != nil {
		setup(s)
	}
	pay := &countingProvider{Test: payment.Test{Ledger: nil}, calls: map[string]int{}}
	pay.Test.Ledger = s.db
	s.originConfig.Payments = pay
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	tn, pw := s.tenant("shop")
	return &shop{s: s, t: t, tn: tn, edge: e.addr, host: "shop.example.test", auth: basic("admin", pw), pay: pay}
}

// product creates an active product with one variant of the given stock and price (USD cents).
func (sh *shop) product(title string, price, stock int64) schema.VariantID {
	sh.t.Helper()
	sh.nextN++
	ctx := context.Background()
	var id schema.VariantID
	_, err := sh.s.db.WriteTx(ctx, func(tx *store.Tx) error {
		p := &schema.Product{Slug: fmt.Sprintf("p-%d", sh.nextN), Title: title, Status: schema.ProductActive, Prices: schema.Prices{"USD": price}}
		if err := tx.CreateProduct(ctx, sh.tn, p); err != nil {
			return err
		}
		v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("SKU-%d", sh.nextN), Title: "Default"}, Stock: stock}
		if err := tx.CreateVariant(ctx, sh.tn, v); err != nil {
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

func (sh *shop) stock(id schema.VariantID) int64 {
	sh.t.Helper()
	var n int64
	if err := sh.s.db.Tx(context.Background(), func(tx *store.Tx) error {
		v, err := tx.Variant(context.Background(), sh.tn, id)
		if err == nil {
			n = v.Stock
		}
		return err
	}); err != nil {
		sh.t.Fatal(err)
	}
	return n
}

func (sh *shop) settle(fn func(tx *store.Tx) error) {
	sh.t.Helper()
	if err := sh.s.db.Tx(context.Background(), fn); err != nil {
		sh.t.Fatal(err)
	}
}

func newSession() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (sh *shop) do(method, uri, session, body string, headers ...string) *response {
	sh.t.Helper()
	if session != "" {
		headers = append(headers, "X-Cart-Session", session)
	}
	return call(sh.t, method, sh.edge, sh.host, uri, body, headers...)
}

func (sh *shop) add(session string, id schema.VariantID, q int64) {
	sh.t.Helper()
	r := sh.do("POST", "/api/cart/items", session, fmt.Sprintf(`{"variant_id":%d,"quantity":%d}`, id, q))
	if r.status != 200 {
		sh.t.Fatalf("add to cart: %d %s", r.status, r.body)
	}
}

const guest = `{"email":"ann@example.com","shipping_address":{"name":"Ann","line1":"1 Main St","city":"Springfield","postal_code":"12345","country":"US"},"payment_token":"tok_visa"}`

func guestWith(token string) string {
	return strings.Replace(guest, "tok_visa", token, 1)
}

// parallel runs n calls of f at once and returns their answers.
func parallel(n int, f func(i int) *response) []*response {
	out := make([]*response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func statuses(rs []*response) map[int]int {
	m := map[int]int{}
	for _, r := range rs {
		m[r.status]++
	}
	return m
}

type cartBody struct {
	Currency string                `json:"currency"`
	Items    []schema.CartLineView `json:"items"`
	Totals   schema.TotalsView     `json:"totals"`
	Issues   []schema.CartIssue    `json:"issues"`
	Revision int64                 `json:"revision"`
}

func decode[T any](t testing.TB, r *response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d: %v: %s", r.status, err, r.body)
	}
	return v
}

// events counts the domain events of a kind in the event stream, waiting for the relay to move
// at least min of them there.
func (sh *shop) events(kind string, min int) int {
	sh.t.Helper()
	nc := sh.s.connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		sh.t.Fatal(err)
	}
	subject := sh.s.fc.EventSubject(sh.tn.Slug, kind)
	n := 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := js.Stream(context.Background(), sh.s.fc.EventStream)
		if err == nil {
			info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(subject))
			if err == nil {
				n = int(info.State.Subjects[subject])
			}
		}
		if n >= min || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCheckoutUnderConcurrency(t *testing.T) {
	t.Parallel()
	sh := newShop(t)

	t.Run("50 checkouts for the last unit make exactly one order", func(t *testing.T) {
		id := sh.product("Last Lamp", 4999, 1)
		sessions := make([]string, 50)
		for i := range sessions {
			sessions[i] = newSession()
			sh.add(sessions[i], id, 1)
		}
		rs := parallel(50, func(i int) *response { return sh.do("POST", "/api/checkout", sessions[i], guest) })
		st := statuses(rs)
		if st[201] != 1 || st[409] != 49 {
			t.Fatalf("statuses %v, want one 201 and 49 409", st)
		}
		for _, r := range rs {
			if r.status == 409 && !strings.Contains(string(r.body), "Last Lamp") {
				t.Fatalf("the out-of-stock error does not name the line: %s", r.body)
			}
		}
		if n := sh.stock(id); n != 0 {
			t.Fatalf("stock %d after the sale, want 0", n)
		}
		if n := sh.events(store.EventOutOfStock, 1); n != 1 {
			t.Fatalf("%d out_of_stock events, want 1", n)
		}
		// The crossing is replicated: the edge shows the variant out of stock.
		waitFor(t, 5*time.Second, "the edge to show the variant out of stock", func() bool {
			r := sh.do("GET", "/api/products/p-1", "", "")
			return strings.Contains(string(r.body), `"availability":"out_of_stock"`)
		})
	})

	t.Run("50 checkouts of different products all succeed", func(t *testing.T) {
		sessions := make([]string, 50)
		for i := range sessions {
			sessions[i] = newSession()
			sh.add(sessions[i], sh.product(fmt.Sprintf("Item %d", i), 1000+int64(i), 100), 2)
		}
		before := sh.s.retries.Load()
		lat := make([]time.Duration, 50)
		rs := parallel(50, func(i int) *response {
			start := time.Now()
			r := sh.do("POST", "/api/checkout", sessions[i], guest)
			lat[i] = time.Since(start)
			return r
		})
		if st := statuses(rs); st[201] != 50 {
			for _, r := range rs {
				if r.status != 201 {
					t.Logf("%d %s", r.status, r.body)
				}
			}
			t.Fatalf("statuses %v, want 50 201", st)
		}
		slices.Sort(lat)
		t.Logf("50 parallel checkouts: p50 %v, p99 %v, max %v; %d transaction retries", lat[24], lat[49*99/100], lat[49], sh.s.retries.Load()-before)
	})

	t.Run("20 parallel adds of different variants to one cart keep all 20", func(t *testing.T) {
		session := newSession()
		ids := make([]schema.VariantID, 20)
		for i := range ids {
			ids[i] = sh.product(fmt.Sprintf("Sock %d", i), 500, 10)
		}
		rs := parallel(20, func(i int) *response {
			return sh.do("POST", "/api/cart/items", session, fmt.Sprintf(`{"variant_id":%d,"quantity":1}`, ids[i]))
		})
		if st := statuses(rs); st[200] != 20 {
			t.Fatalf("statuses %v", st)
		}
		c := decode[cartBody](t, sh.do("GET", "/api/cart", session, ""))
		if len(c.Items) != 20 || c.Totals.Subtotal.Amount != 20*500 {
			t.Fatalf("cart has %d lines, subtotal %d; want 20 and 10000", len(c.Items), c.Totals.Subtotal.Amount)
		}
	})

	t.Run("a single-use coupon discounts exactly one of 10 parallel checkouts", func(t *testing.T) {
		limit := int64(1)
		sh.settle(func(tx *store.Tx) error {
			return tx.PutCoupon(context.Background(), sh.tn, &store.Coupon{Code: "ONCE", Kind: schema.DiscountPercent, Value: 2000, UsageLimit: &limit, Active: true})
		})
		id := sh.product("Coupon Cup", 1000, 100)
		sessions := make([]string, 10)
		for i := range sessions {
			sessions[i] = newSession()
			sh.add(sessions[i], id, 1)
			if r := sh.do("POST", "/api/cart/coupon", sessions[i], `{"code":"once"}`); r.status != 200 {
				t.Fatalf("apply coupon: %d %s", r.status, r.body)
			}
		}
		rs := parallel(10, func(i int) *response { return sh.do("POST", "/api/checkout", sessions[i], guest) })
		discounted := 0
		for _, r := range rs {
			switch r.status {
			case 201:
				o := decode[schema.OrderView](t, r)
				if o.Totals.Discount.Amount != 200 {
					t.Fatalf("order with discount %d, want 200", o.Totals.Discount.Amount)
				}
				discounted++
			case 409:
				if !strings.Contains(string(r.body), "ONCE") {
					t.Fatalf("refusal does not name the coupon: %s", r.body)
				}
			default:
				t.Fatalf("unexpected %d %s", r.status, r.body)
			}
		}
		if discounted != 1 {
			t.Fatalf("%d discounted orders, want 1", discounted)
		}
	})

	t.Run("a 10.00 gift card pays for exactly one of two parallel 8.00 orders", func(t *testing.T) {
		var code string
		sh.settle(func(tx *store.Tx) error {
			var err error
			code, _, err = tx.CreateGiftCard(context.Background(), sh.tn, "", "USD", 1000, nil)
			return err
		})
		id := sh.product("Gift Mug", 800, 100)
		sessions := []string{newSession(), newSession()}
		for _, s := range sessions {
			sh.add(s, id, 1)
			if r := sh.do("POST", "/api/cart/gift-card", s, `{"code":"`+strings.ToLower(code)+`"}`); r.status != 200 {
				t.Fatalf("apply gift card: %d %s", r.status, r.body)
			}
		}
		noToken := `{"email":"bo@example.com","shipping_address":{"name":"Bo","line1":"2 Main St","city":"Springfield","postal_code":"12345","country":"US"}}`
		rs := parallel(2, func(i int) *response { return sh.do("POST", "/api/checkout", sessions[i], noToken) })
		if st := statuses(rs); st[201] != 1 || st[409] != 1 {
			t.Fatalf("statuses %v (%s / %s), want one 201 and one 409", st, rs[0].body, rs[1].body)
		}
		key, _ := store.GiftCardKey(code)
		sh.settle(func(tx *store.Tx) error {
			g, err := tx.GiftCard(context.Background(), sh.tn, key)
			if err == nil && g.Balance != 200 {
				t.Errorf("gift card balance %d, want 200", g.Balance)
			}
			return err
		})
	})
}

func TestCheckoutIdempotencyAndPayments(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	id := sh.product("Teapot", 2500, 1000)

	t.Run("same key and body replays the same order", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 1)
		first := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-replay")
		if first.status != 201 {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		again := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-replay")
		if again.status != 201 || string(again.body) != string(first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s (replayed %q)", again.status, again.body, again.header.Get("Idempotent-Replayed"))
		}
		other := sh.do("POST", "/api/checkout", session, strings.Replace(guest, "ann@", "zed@", 1), "Idempotency-Key", "k-replay")
		if other.status != 422 {
			t.Fatalf("same key, other body: %d %s, want 422", other.status, other.body)
		}
	})

	t.Run("the same key in parallel makes one order, charged once", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 1)
		before := sh.stock(id)
		rs := parallel(10, func(int) *response {
			return sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-parallel")
		})
		refs := map[string]bool{}
		for _, r := range rs {
			switch r.status {
			case 201:
				refs[decode[schema.OrderView](t, r).Reference] = true
			case 409:
				if !strings.Contains(string(r.body), "in progress") {
					t.Fatalf("409 that is not the in-flight answer: %s", r.body)
				}
			default:
				t.Fatalf("unexpected %d %s", r.status, r.body)
			}
		}
		if len(refs) != 1 {
			t.Fatalf("%d distinct orders, want 1", len(refs))
		}
		if got := before - sh.stock(id); got != 1 {
			t.Fatalf("stock went down by %d, want 1", got)
		}
	})

	t.Run("checkouts retried after serialization failures authorize once each", func(t *testing.T) {
		sh.settle(func(tx *store.Tx) error {
			return tx.PutCoupon(context.Background(), sh.tn, &store.Coupon{Code: "HOT", Kind: schema.DiscountFixed, Value: 100, Active: true})
		})
		sessions := make([]string, 12)
		for i := range sessions {
			sessions[i] = newSession()
			sh.add(sessions[i], id, 1)
			sh.do("POST", "/api/cart/coupon", sessions[i], `{"code":"HOT"}`)
		}
		before := sh.s.retries.Load()
		rs := parallel(12, func(i int) *response {
			return sh.do("POST", "/api/checkout", sessions[i], guest, "Idempotency-Key", "hot-"+sessions[i])
		})
		if st := statuses(rs); st[201] != 12 {
			t.Fatalf("statuses %v", st)
		}
		if sh.s.retries.Load() == before {
			t.Log("no transaction was retried this run: the contended coupon row did not conflict")
		}
		ledger, err := sh.s.db.TestPayments(context.Background(), sh.tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		sh.pay.mu.Lock()
		defer sh.pay.mu.Unlock()
		byKey := map[string]int{}
		for _, p := range ledger {
			byKey[p.Key]++
		}
		for k, n := range sh.pay.calls {
			if n != 1 || byKey[k] != 1 {
				t.Fatalf("order %s authorized %d times (%d ledger rows), want once", k, n, byKey[k])
			}
		}
	})

	t.Run("a declined payment releases the reservation and keeps the cart", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 3)
		before := sh.stock(id)
		r := sh.do("POST", "/api/checkout", session, guestWith("tok_declined"), "Idempotency-Key", "k-declined")
		if r.status != 402 || !strings.Contains(string(r.body), "declined") {
			t.Fatalf("decline: %d %s", r.status, r.body)
		}
		if n := sh.stock(id); n != before {
			t.Fatalf("stock %d after a decline, want %d", n, before)
		}
		if c := decode[cartBody](t, sh.do("GET", "/api/cart", session, "")); len(c.Items) != 1 {
			t.Fatalf("cart lost after a decline: %+v", c)
		}
		if again := sh.do("POST", "/api/checkout", session, guestWith("tok_declined"), "Idempotency-Key", "k-declined"); again.status != 402 {
			t.Fatalf("replayed decline: %d %s", again.status, again.body)
		}
		if ok := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-after-decline"); ok.status != 201 {
			t.Fatalf("checkout with a good card after a decline: %d %s", ok.status, ok.body)
		}
	})

	t.Run("a failing provider charges nothing and lets the same key retry", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 2)
		before := sh.stock(id)
		r := sh.do("POST", "/api/checkout", session, guestWith("tok_error"), "Idempotency-Key", "k-error")
		if r.status != 503 || r.header.Get("Retry-After") == "" {
			t.Fatalf("provider down: %d %s", r.status, r.body)
		}
		if n := sh.stock(id); n != before {
			t.Fatalf("stock %d after a provider failure, want %d", n, before)
		}
		if again := sh.do("POST", "/api/checkout", session, guestWith("tok_error"), "Idempotency-Key", "k-error"); again.status != 503 {
			t.Fatalf("retry with the same key ran again? %d %s", again.status, again.body)
		}
	})

	t.Run("a changed total is refused, not charged", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 1)
		body := strings.Replace(guest, `"payment_token"`, `"expected_total":2400,"payment_token"`, 1)
		r := sh.do("POST", "/api/checkout", session, body)
		if r.status != 409 || !strings.Contains(string(r.body), "24.00 to 25.00") {
			t.Fatalf("expected_total mismatch: %d %s", r.status, r.body)
		}
	})
}

func TestStockCrossingEvents(t *testing.T) {
	sh := newShop(t)
	id := sh.product("Kite", 1500, schema.DefaultLowStockThreshold+1)
	buy := func(q int64) {
		t.Helper()
		session := newSession()
		sh.add(session, id, q)
		if r := sh.do("POST", "/api/checkout", session, guest); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
	}
	buy(1) // in_stock → low_stock
	buy(1) // stays low: no event
	buy(schema.DefaultLowStockThreshold - 1)
	if n := sh.stock(id); n != 0 {
		t.Fatalf("stock %d", n)
	}
	// A restock through the admin API crosses back.
	r := sh.do("PATCH", fmt.Sprintf("/api/admin/variants/%d", id), "", `{"stock":50}`, "Authorization", sh.auth)
	if r.status != 200 {
		t.Fatalf("restock: %d %s", r.status, r.body)
	}
	for kind, want := range map[string]int{store.EventLowStock: 1, store.EventOutOfStock: 1, store.EventBackInStock: 1, store.EventOrderPaid: 3} {
		if n := sh.events(kind, want); n != want {
			t.Errorf("%d %s events, want %d", n, kind, want)
		}
	}
	if r := sh.do("GET", "/api/products/p-1", "", "", "Vitrine-Min-Version", r.header.Get("Vitrine-Write-Version")); !strings.Contains(string(r.body), `"availability":"in_stock"`) {
		t.Fatalf("after the restock: %s", r.body)
	}
}
