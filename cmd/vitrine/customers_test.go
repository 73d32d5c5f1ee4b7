package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

func TestCustomers(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	other, _ := sh.s.tenant("other")
	id := sh.product("Kettle", 3000, 100)

	register := func(email string) string {
		t.Helper()
		r := sh.do("POST", "/api/customer/register", "", `{"email":"`+email+`","password":"correct horse battery","name":"Ann"}`)
		if r.status != 201 {
			t.Fatalf("register %s: %d %s", email, r.status, r.body)
		}
		return r.json(t)["token"].(string)
	}
	ann := register("Ann@Example.com")
	bob := register("bob@example.com")

	t.Run("registration is unique per email", func(t *testing.T) {
		if r := sh.do("POST", "/api/customer/register", "", `{"email":"ann@example.com","password":"another password"}`); r.status != 409 {
			t.Fatalf("duplicate: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", "/api/customer/register", "", `{"email":"c@example.com","password":"short"}`); r.status != 400 {
			t.Fatalf("short password: %d %s", r.status, r.body)
		}
	})

	t.Run("login answers a wrong password and an unknown email the same", func(t *testing.T) {
		ok := sh.do("POST", "/api/customer/login", "", `{"email":"ann@example.com","password":"correct horse battery"}`)
		if ok.status != 200 || !strings.HasPrefix(ok.json(t)["token"].(string), "cst_") {
			t.Fatalf("login: %d %s", ok.status, ok.body)
		}
		wrong := sh.do("POST", "/api/customer/login", "", `{"email":"ann@example.com","password":"wrong password!"}`)
		unknown := sh.do("POST", "/api/customer/login", "", `{"email":"nobody@example.com","password":"wrong password!"}`)
		if wrong.status != 401 || unknown.status != 401 || wrong.json(t)["error"] != unknown.json(t)["error"] {
			t.Fatalf("wrong password %d %s / unknown email %d %s", wrong.status, wrong.body, unknown.status, unknown.body)
		}
	})

	t.Run("a token of one store is invalid at another", func(t *testing.T) {
		r := call(t, "GET", sh.edge, "other.example.test", "/api/customer", "", "Authorization", "Bearer "+ann)
		if r.status != 401 {
			t.Fatalf("token of shop at other: %d %s", r.status, r.body)
		}
		_ = other
	})

	var annRef string
	t.Run("customers see only their own orders", func(t *testing.T) {
		session := newSession()
		sh.add(session, id, 1)
		body := strings.Replace(guest, `"email":"ann@example.com",`, "", 1)
		r := sh.do("POST", "/api/checkout", session, body, "Authorization", "Bearer "+ann)
		if r.status != 201 {
			t.Fatalf("customer checkout: %d %s", r.status, r.body)
		}
		o := decode[schema.OrderView](t, r)
		annRef = o.Reference
		if o.Email != "ann@example.com" {
			t.Fatalf("order email %q, want the customer's", o.Email)
		}
		mine := decode[schema.Page[map[string]any]](t, sh.do("GET", "/api/customer/orders", "", "", "Authorization", "Bearer "+ann))
		if mine.Total != 1 || mine.Data[0]["reference"] != annRef {
			t.Fatalf("ann's orders: %+v", mine)
		}
		theirs := decode[schema.Page[map[string]any]](t, sh.do("GET", "/api/customer/orders", "", "", "Authorization", "Bearer "+bob))
		if theirs.Total != 0 {
			t.Fatalf("bob sees %d orders", theirs.Total)
		}
		if r := sh.do("GET", "/api/customer/orders/"+annRef, "", "", "Authorization", "Bearer "+bob); r.status != 404 {
			t.Fatalf("bob reads ann's order: %d %s", r.status, r.body)
		}
		if r := sh.do("GET", "/api/customer/orders/"+strings.ToLower(annRef), "", "", "Authorization", "Bearer "+ann); r.status != 200 {
			t.Fatalf("ann reads her order: %d %s", r.status, r.body)
		}
		// A well-formed reference no order has is a 404 (it was a nil dereference that took the
		// origin down), and the origin still answers after it.
		if r := sh.do("GET", "/api/customer/orders/"+schema.NewOrderReference(), "", "", "Authorization", "Bearer "+ann); r.status != 404 {
			t.Fatalf("unknown reference: %d %s", r.status, r.body)
		}
		if r := sh.do("GET", "/api/customer/orders/"+annRef, "", "", "Authorization", "Bearer "+ann); r.status != 200 {
			t.Fatalf("after an unknown reference: %d %s", r.status, r.body)
		}
	})

	t.Run("addresses and wishlist belong to their customer", func(t *testing.T) {
		r := sh.do("POST", "/api/customer/addresses", "", `{"name":"Ann","line1":"1 Main St","city":"Springfield","postal_code":"1","country":"US"}`, "Authorization", "Bearer "+ann)
		if r.status != 201 {
			t.Fatalf("add address: %d %s", r.status, r.body)
		}
		addr := int64(r.json(t)["id"].(float64))
		if r := sh.do("DELETE", fmt.Sprintf("/api/customer/addresses/%d", addr), "", "", "Authorization", "Bearer "+bob); r.status != 404 {
			t.Fatalf("bob deletes ann's address: %d %s", r.status, r.body)
		}
		var pid int64
		sh.settle(func(tx *store.Tx) error {
			v, err := tx.Variant(context.Background(), sh.tn, id)
			pid = int64(v.ProductID)
			return err
		})
		for range 2 { // idempotent
			if r := sh.do("POST", "/api/customer/wishlist", "", fmt.Sprintf(`{"product_id":%d}`, pid), "Authorization", "Bearer "+ann); r.status != 200 {
				t.Fatalf("wishlist add: %d %s", r.status, r.body)
			}
		}
		w := decode[schema.List[store.WishlistItem]](t, sh.do("GET", "/api/customer/wishlist", "", "", "Authorization", "Bearer "+ann))
		b := decode[schema.List[store.WishlistItem]](t, sh.do("GET", "/api/customer/wishlist", "", "", "Authorization", "Bearer "+bob))
		if len(w.Data) != 1 || len(b.Data) != 0 {
			t.Fatalf("wishlists: ann %d, bob %d", len(w.Data), len(b.Data))
		}
	})

	t.Run("logout ends the session", func(t *testing.T) {
		if r := sh.do("POST", "/api/customer/logout", "", "", "Authorization", "Bearer "+bob); r.status != 204 {
			t.Fatalf("logout: %d %s", r.status, r.body)
		}
		if r := sh.do("GET", "/api/customer", "", "", "Authorization", "Bearer "+bob); r.status != 401 {
			t.Fatalf("after logout: %d %s", r.status, r.body)
		}
	})

	t.Run("customer.created is emitted once per registration", func(t *testing.T) {
		if n := sh.events(store.EventCustomerCreated, 2); n != 2 {
			t.Fatalf("%d customer.created events, want 2", n)
		}
	})

	t.Run("no order, cart, customer or email reaches a replicated subject", func(t *testing.T) {
		nc := sh.s.connect()
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cons, err := js.OrderedConsumer(ctx, sh.s.fc.Stream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := js.Stream(ctx, sh.s.fc.Stream)
		info, _ := st.Info(ctx)
		seen := uint64(0)
		for seen < info.State.Msgs {
			batch, err := cons.Fetch(500, jetstream.FetchMaxWait(200*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for m := range batch.Messages() {
				n++
				body := string(m.Data())
				for _, secret := range []string{"@example.com", annRef, "cst_", "Springfield", `"kind":"order"`, `"kind":"cart"`, `"kind":"customer"`} {
					if strings.Contains(body, secret) || strings.Contains(m.Subject(), strings.ToLower(secret)) {
						t.Fatalf("%q found on subject %s", secret, m.Subject())
					}
				}
			}
			if n == 0 {
				break
			}
			seen += uint64(n)
		}
		if seen == 0 {
			t.Fatal("read nothing from the state stream")
		}
	})
}

func TestCartTotalsInCurrencies(t *testing.T) {
	sh := newShop(t)
	for _, c := range []string{
		`{"code":"JPY","name":"Japanese Yen","symbol":"¥","exponent":0,"rate":"150"}`,
		`{"code":"KWD","name":"Kuwaiti Dinar","symbol":"KD","exponent":3,"rate":"0.307"}`,
	} {
		if r := sh.do("POST", "/api/admin/currencies", "", c, "Authorization", sh.auth); r.status != 201 {
			t.Fatalf("currency: %d %s", r.status, r.body)
		}
	}
	sh.settle(func(tx *store.Tx) error {
		s := store.DefaultSettings()
		s.TaxBasisPoints = 1075
		return tx.PutSettings(context.Background(), sh.tn, s)
	})
	id := sh.product("Tea Tin", 2499, 100)
	tests := []struct {
		currency                 string
		unit, tax, total, lineTx string
	}{
		{"USD", "24.99", "2.69", "27.68", "2.69"},
		{"JPY", "3749", "403", "4152", "403"},
		{"KWD", "7.672", "0.825", "8.497", "0.825"},
	}
	for _, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			session := newSession()
			r := sh.do("POST", "/api/cart/items", session, fmt.Sprintf(`{"variant_id":%d,"quantity":1,"currency":"%s"}`, id, tt.currency))
			if r.status != 200 {
				t.Fatalf("add: %d %s", r.status, r.body)
			}
			c := decode[cartBody](t, r)
			if c.Currency != tt.currency || c.Items[0].UnitPrice.Formatted != tt.unit || c.Items[0].Tax.Formatted != tt.lineTx ||
				c.Totals.Tax.Formatted != tt.tax || c.Totals.Total.Formatted != tt.total {
				t.Fatalf("%s cart: unit %s tax %s/%s total %s; want %s %s %s", tt.currency, c.Items[0].UnitPrice.Formatted,
					c.Items[0].Tax.Formatted, c.Totals.Tax.Formatted, c.Totals.Total.Formatted, tt.unit, tt.tax, tt.total)
			}
		})
	}

	t.Run("totals are the sum of rounded lines", func(t *testing.T) {
		session := newSession()
		for _, p := range []int64{333, 333, 334} {
			sh.add(session, sh.product("Pin", p, 10), 1)
		}
		c := decode[cartBody](t, sh.do("GET", "/api/cart", session, ""))
		var tax int64
		for _, l := range c.Items {
			tax += l.Tax.Amount
		}
		if tax != c.Totals.Tax.Amount || c.Totals.Tax.Amount != 36+36+36 {
			t.Fatalf("line taxes sum to %d, totals say %d; want 108", tax, c.Totals.Tax.Amount)
		}
	})

	t.Run("bad cart input gets a 4xx", func(t *testing.T) {
		session := newSession()
		cases := []struct {
			method, uri, session, body string
			status                     int
		}{
			{"GET", "/api/cart", "", "", 400},
			{"GET", "/api/cart", "short", "", 400},
			{"GET", "/api/cart", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", 400},
			{"POST", "/api/cart/items", session, `{"variant_id":99999999}`, 404},
			{"POST", "/api/cart/items", session, `{"variant_id":1,"quantity":0}`, 400},
			{"POST", "/api/cart/items", session, `{"variant_id":"x"}`, 400},
			{"POST", "/api/cart/items", session, `{"variant_id":1,"extra":1}`, 400},
			{"POST", "/api/cart/items", session, `not json`, 400},
			{"POST", "/api/cart/items", session, fmt.Sprintf(`{"variant_id":%d,"quantity":1000}`, id), 409},
			{"POST", "/api/cart/items", session, fmt.Sprintf(`{"variant_id":%d,"currency":"XXX"}`, id), 400},
			{"PATCH", "/api/cart/items/abc", session, `{"quantity":1}`, 404},
			{"PATCH", "/api/cart/options", session, `{"shipping_method":"teleport"}`, 400},
			{"POST", "/api/cart/coupon", session, `{"code":"NOPE"}`, 422},
			{"POST", "/api/cart/coupon", session, `{"code":"bad code!"}`, 400},
			{"POST", "/api/cart/gift-card", session, `{"code":"AAAA-BBBB-CCCC-DDDD"}`, 422},
			{"POST", "/api/checkout", session, `{}`, 400},
			{"POST", "/api/checkout", newSession(), guest, 409},
			{"PUT", "/api/cart", session, ``, 405},
		}
		for _, c := range cases {
			r := sh.do(c.method, c.uri, c.session, c.body)
			if r.status != c.status || !strings.Contains(string(r.body), `"error"`) {
				t.Errorf("%s %s %s: %d %s, want %d with an error body", c.method, c.uri, c.body, r.status, r.body, c.status)
			}
		}
	})
}

// flakyProvider fails authorizations, and voids until told otherwise: a checkout then leaves its
// order pending, as when its process dies between reserving and settling.
type flakyProvider struct {
	payment.Test
	voidFails atomic.Bool
}

func (p *flakyProvider) Authorize(context.Context, payment.Request) (payment.Result, error) {
	return payment.Result{}, errors.New("connection reset")
}

func (p *flakyProvider) Void(ctx context.Context, tenant, key string) error {
	if p.voidFails.Load() {
		return errors.New("connection reset")
	}
	return p.Test.Void(ctx, tenant, key)
}

func TestSweeperReleasesAbandonedCheckouts(t *testing.T) {
	s := newSystem(t, systemOptions{})
	pay := &flakyProvider{}
	pay.Ledger = s.db
	pay.voidFails.Store(true)
	s.originConfig.Payments = pay
	s.startRelay(relay.Config{})
	o := s.startOrigin()
	e := s.startEdge(edge.Config{})
	tn, _ := s.tenant("shop")
	sh := &shop{s: s, t: t, tn: tn, edge: e.addr, host: "shop.example.test"}
	id := sh.product("Vase", 5000, 3)
	session := newSession()
	sh.add(session, id, 2)
	r := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-sweep")
	if r.status != 503 {
		t.Fatalf("checkout with the provider down: %d %s", r.status, r.body)
	}
	if n := sh.stock(id); n != 1 {
		t.Fatalf("stock %d while the order is pending, want 1 (reserved)", n)
	}
	if again := sh.do("POST", "/api/checkout", session, guest, "Idempotency-Key", "k-sweep"); again.status != 409 {
		t.Fatalf("retry within the lease: %d %s, want 409", again.status, again.body)
	}
	// The provider comes back; the sweeper voids and releases the abandoned order.
	pay.voidFails.Store(false)
	n, err := o.origin.SweepPendingOrders(context.Background(), 0)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want 1 order cancelled", n, err)
	}
	if n := sh.stock(id); n != 3 {
		t.Fatalf("stock %d after the sweep, want 3", n)
	}
	if n, _ := o.origin.SweepPendingOrders(context.Background(), 0); n != 0 {
		t.Fatalf("second sweep cancelled %d orders", n)
	}
}

func TestEmptyCartChoosesNoShipping(t *testing.T) {
	sh := newShop(t)
	sh.settle(func(tx *store.Tx) error {
		return tx.PutShippingMethod(context.Background(), sh.tn, store.ShippingMethodRow{Code: "standard", Name: "Standard",
			Prices: schema.Prices{"USD": 500}, FreeOver: schema.Prices{"USD": 5000}, Active: true})
	})
	type shipping struct {
		ShippingMethod  *schema.ShippingOption  `json:"shipping_method"`
		ShippingMethods []schema.ShippingOption `json:"shipping_methods"`
		Totals          schema.TotalsView       `json:"totals"`
	}
	view := decode[shipping](t, sh.do("GET", "/api/cart", newSession(), ""))
	if view.ShippingMethod != nil || len(view.ShippingMethods) != 1 || view.Totals.Total.Amount != 0 {
		t.Fatalf("empty cart: %+v", view)
	}
	session := newSession()
	sh.add(session, sh.product("Mug", 1000, 5), 1)
	c := decode[shipping](t, sh.do("GET", "/api/cart", session, ""))
	if c.ShippingMethod == nil || c.ShippingMethod.Code != "standard" || c.Totals.Shipping.Amount != 500 || c.Totals.Total.Amount != 1500 {
		t.Fatalf("cart with a line: %+v", c)
	}
}
