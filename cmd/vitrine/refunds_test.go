package main

import (
	"context"
	"fmt"
	"testing"

	"vitrine/origin/store"
)

// refundResult is the body of a refund's answer.
type refundResult struct {
	ID             string `json:"id"`
	Amount         int64  `json:"amount"`
	CardAmount     int64  `json:"card_amount"`
	GiftCardAmount int64  `json:"gift_card_amount"`
	Status         string `json:"status"`
	Order          struct {
		Status     string `json:"status"`
		Total      int64  `json:"total"`
		Refunded   int64  `json:"refunded"`
		Refundable int64  `json:"refundable"`
	} `json:"order"`
}

// Refunds through an edge with a write_orders key: per line with restock, by amount, whole;
// replays and reused keys; refusals; 20 concurrent partial refunds that never exceed what was
// paid; gift cards paid back; order.refunded once per refund.
func TestRefunds(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"erp","scopes":["write_orders"]}`)
	reader, _ := sh.newKey(sh.host, sh.auth, `{"name":"reports","scopes":["read_orders"]}`)
	kettle := sh.product("Kettle", 3000, 100)
	mug := sh.product("Mug", 1250, 100)
	order := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 2}, lineQty{mug, 1})
	uri := "/api/orders/" + order.Reference + "/refund"
	refund := func(key, body string, auth ...string) *response {
		a := "Bearer " + writer
		if len(auth) > 0 {
			a = auth[0]
		}
		hs := []string{"Authorization", a}
		if key != "" {
			hs = append(hs, "Idempotency-Key", key)
		}
		return sh.do("POST", uri, "", body, hs...)
	}
	total := order.Totals.Total.Amount
	before := sh.stock(kettle)

	t.Run("scope and key are checked first", func(t *testing.T) {
		if r := refund("k0", `{}`, "Bearer "+reader); r.status != 403 || r.json(t)["error"] != "Missing required scope: write_orders" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := refund("k0", `{}`, ""); r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	t.Run("bad requests are 400s", func(t *testing.T) {
		for _, tc := range []struct{ key, body string }{
			{"", `{"amount":100}`},
			{"k1", `{"amount":0}`},
			{"k1", `{"amount":-5}`},
			{"k1", `{"lines":[]}`},
			{"k1", `{"lines":[{"line":1,"quantity":0}]}`},
			{"k1", `{"lines":[{"line":1,"quantity":1},{"line":1,"quantity":1}]}`},
			{"k1", `{"restock":true}`},
			{"k1", `{"lines":[{"line":9,"quantity":1}]}`},
			{"k1", `{"amount":"ten"}`},
			{"k1", `{"amount":1,"extra":true}`},
		} {
			if r := refund(tc.key, tc.body); r.status != 400 {
				t.Fatalf("%q %s: %d %s", tc.key, tc.body, r.status, r.body)
			}
		}
		if r := sh.do("POST", "/api/orders/0000-0000-0000-0000/refund", "", `{}`, "Authorization", "Bearer "+writer, "Idempotency-Key", "k1"); r.status != 404 {
			t.Fatalf("unknown order: %d %s", r.status, r.body)
		}
	})

	var first refundResult
	t.Run("one kettle back with restock; a replay changes nothing", func(t *testing.T) {
		r := refund("line-1", `{"lines":[{"line":1,"quantity":1}],"restock":true,"reason":"damaged"}`)
		if r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		first = decode[refundResult](t, r)
		var kettleLine int64
		sh.settle(func(tx *store.Tx) error {
			lines, err := tx.OrderLines(context.Background(), sh.tn, orderID(t, sh, order.Reference))
			if err == nil {
				kettleLine = lines[0].Total
			}
			return err
		})
		if first.Amount != kettleLine/2 || first.Status != "succeeded" || first.Order.Status != "partially_refunded" {
			t.Fatalf("refund %+v, want %d succeeded", first, kettleLine/2)
		}
		if got := sh.stock(kettle); got != before+1 {
			t.Fatalf("kettle stock %d, want %d", got, before+1)
		}
		again := refund("line-1", `{"lines":[{"line":1,"quantity":1}],"restock":true,"reason":"damaged"}`)
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || decode[refundResult](t, again).ID != first.ID {
			t.Fatalf("replay: %d %s", again.status, again.body)
		}
		if got := sh.stock(kettle); got != before+1 {
			t.Fatalf("a replay restocked again: %d", got)
		}
		if r := refund("line-1", `{"amount":1}`); r.status != 422 {
			t.Fatalf("reused key, other body: %d %s", r.status, r.body)
		}
		if r := refund("line-2", `{"lines":[{"line":1,"quantity":2}]}`); r.status != 409 {
			t.Fatalf("more kettles than are left: %d %s", r.status, r.body)
		}
	})

	t.Run("20 concurrent partial refunds never exceed what was paid", func(t *testing.T) {
		left := total - first.Amount
		each := left/7 + 1 // 7 fit, the 8th would not
		rs := parallel(20, func(i int) *response { return refund(fmt.Sprintf("race-%d", i), fmt.Sprintf(`{"amount":%d}`, each)) })
		st := statuses(rs)
		if st[201] != 6 || st[409] != 14 {
			t.Fatalf("statuses %v, want six 201 and fourteen 409", st)
		}
		var sum int64
		for _, r := range rs {
			if r.status == 201 {
				sum += decode[refundResult](t, r).Amount
			}
		}
		if sum+first.Amount > total {
			t.Fatalf("refunded %d of %d", sum+first.Amount, total)
		}
		ledger, err := sh.s.db.TestPayments(context.Background(), sh.tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ledger {
			if p.Key == orderID(t, sh, order.Reference) && p.Amount < sum+first.Amount {
				t.Fatalf("the provider refunded more than it was paid")
			}
		}
	})

	t.Run("the rest, then nothing", func(t *testing.T) {
		r := refund("rest", "")
		if r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		res := decode[refundResult](t, r)
		if res.Order.Status != "refunded" || res.Order.Refundable != 0 || res.Order.Refunded != total {
			t.Fatalf("after the rest: %+v", res)
		}
		if r := refund("more", `{"amount":1}`); r.status != 409 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if n := sh.events("order.refunded", 8); n != 8 {
			t.Fatalf("%d order.refunded events, want 8 (one per succeeded refund)", n)
		}
	})

	t.Run("gift cards get back what they paid, after the card", func(t *testing.T) {
		var code string
		sh.settle(func(tx *store.Tx) error {
			var err error
			code, _, err = tx.CreateGiftCard(context.Background(), sh.tn, "", "USD", 1000, nil)
			return err
		})
		s := newSession()
		sh.add(s, mug, 2)
		if r := sh.do("POST", "/api/cart/gift-card", s, `{"code":"`+code+`"}`); r.status != 200 {
			t.Fatalf("gift card: %d %s", r.status, r.body)
		}
		r := sh.do("POST", "/api/checkout", s, guest)
		if r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		o := decode[orderView](t, r)
		uri = "/api/orders/" + o.Reference + "/refund"
		rr := refund("all", "")
		res := decode[refundResult](t, rr)
		if rr.status != 201 || res.GiftCardAmount != 1000 || res.CardAmount != o.Totals.Total.Amount-1000 {
			t.Fatalf("refund %d %+v", rr.status, res)
		}
		key, _ := store.GiftCardKey(code)
		sh.settle(func(tx *store.Tx) error {
			g, err := tx.GiftCard(context.Background(), sh.tn, key)
			if err == nil && g.Balance != 1000 {
				t.Errorf("gift card balance %d, want 1000", g.Balance)
			}
			return err
		})
	})
}

type orderView = struct {
	Reference string `json:"reference"`
	Totals    struct {
		Total struct {
			Amount int64 `json:"amount"`
		} `json:"total"`
	} `json:"totals"`
}

func orderID(t testing.TB, sh *shop, ref string) string {
	t.Helper()
	var id string
	sh.settle(func(tx *store.Tx) error {
		o, err := tx.OrderByReference(context.Background(), sh.tn, ref)
		if err == nil && o != nil {
			id = o.ID
		}
		return err
	})
	return id
}
