package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/schema"
)

// price reads a product's shown price and compare_at from the edge.
func (sh *shop) price(slug string) (string, string) {
	sh.t.Helper()
	r := sh.do("GET", "/api/products/"+slug, "", "")
	if r.status != 200 {
		sh.t.Fatalf("product %s: %d %s", slug, r.status, r.body)
	}
	p := decode[schema.ProductView](sh.t, r)
	compare := ""
	if p.CompareAt != nil {
		compare = p.CompareAt.Formatted
	}
	return p.Price.Formatted, compare
}

func TestFlashSaleBoundaries(t *testing.T) {
	sh := newShop(t)
	id := sh.product("Lantern", 1000, 100)
	slug := "p-1"
	// The sale starts 2 s from now: creating it and reading it back must happen before that, so
	// the answer checker's one-time load (seconds under -race; run first, this test paid it inside
	// the window and found the sale over) happens now.
	commerceAnswers.warm()
	start := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
	end := start.Add(2 * time.Second)
	body := fmt.Sprintf(`{"slug":"lantern-days","title":"Lantern days","percent_off":2500,"product_ids":[%d],"starts_at":%q,"ends_at":%q}`,
		1, start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
	r := sh.do("POST", "/api/admin/flash-sales", "", body, "Authorization", sh.auth)
	if r.status != 201 {
		t.Fatalf("create sale: %d %s", r.status, r.body)
	}
	floor := r.header.Get("Vitrine-Write-Version")
	if r := sh.do("GET", "/api/flash-sales", "", "", "Vitrine-Min-Version", floor); !strings.Contains(string(r.body), `"status":"upcoming"`) {
		t.Fatalf("flash sales before the start (%v before it): %s", time.Until(start).Round(time.Millisecond), r.body)
	}
	session := newSession()
	sh.add(session, id, 1)

	// Before the start, the regular price, on the edge and in the cart. The body is now cached.
	if p, c := sh.price(slug); p != "10.00" || c != "" || time.Now().After(start) {
		t.Fatalf("before the start: %s (compare %q)", p, c)
	}
	// During the sale: the cached body expired at the start; no write happened.
	for {
		p, c := sh.price(slug)
		now := time.Now()
		if p == "7.50" {
			if now.Before(start) || c != "10.00" {
				t.Fatalf("sale price %s (compare %q) at %v, before the start %v", p, c, now, start)
			}
			break
		}
		if now.After(start.Add(500 * time.Millisecond)) {
			t.Fatalf("still %s half a second after the start", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := sh.do("GET", "/api/flash-sales", "", ""); !strings.Contains(string(r.body), `"status":"active"`) {
		t.Fatalf("flash sales during the sale: %s", r.body)
	}
	c := decode[cartBody](t, sh.do("GET", "/api/cart", session, ""))
	if c.Items[0].UnitPrice.Formatted != "7.50" || c.Items[0].CompareAt == nil || !c.Items[0].OnSale {
		t.Fatalf("cart during the sale: %+v", c.Items[0])
	}
	o := sh.do("POST", "/api/checkout", session, guest)
	if o.status != 201 || decode[schema.OrderView](t, o).Totals.Total.Formatted != "7.50" {
		t.Fatalf("checkout during the sale: %d %s", o.status, o.body)
	}
	// After the end: the regular price again, at the edge and at checkout.
	for {
		p, _ := sh.price(slug)
		now := time.Now()
		if p == "10.00" {
			if now.Before(end) {
				t.Fatalf("regular price at %v, before the end %v", now, end)
			}
			break
		}
		if now.After(end.Add(500 * time.Millisecond)) {
			t.Fatalf("still %s half a second after the end", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	session = newSession()
	sh.add(session, id, 1)
	o = sh.do("POST", "/api/checkout", session, guest)
	if o.status != 201 || decode[schema.OrderView](t, o).Totals.Total.Formatted != "10.00" {
		t.Fatalf("checkout after the sale: %d %s", o.status, o.body)
	}
}

func TestReviewsSectionsAndSocialProof(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	id := sh.product("Blanket", 5000, 100)
	var pid schema.ProductID
	sh.settle(func(tx *store.Tx) error {
		v, err := tx.Variant(context.Background(), sh.tn, id)
		pid = v.ProductID
		return err
	})
	reg := sh.do("POST", "/api/customer/register", "", `{"email":"rev@example.com","password":"a long password","name":"Rita"}`)
	token := "Bearer " + reg.json(t)["token"].(string)
	session := newSession()
	sh.add(session, id, 2)
	if r := sh.do("POST", "/api/checkout", session, strings.Replace(guest, `"email":"ann@example.com",`, "", 1), "Authorization", token); r.status != 201 {
		t.Fatalf("checkout: %d %s", r.status, r.body)
	}

	r := sh.do("POST", "/api/products/p-1/reviews", "", `{"rating":5,"title":"Warm","body":"Very warm indeed."}`, "Authorization", token)
	if r.status != 201 || r.json(t)["verified_purchase"] != true {
		t.Fatalf("review: %d %s", r.status, r.body)
	}
	reviewID := int64(r.json(t)["id"].(float64))
	if r := sh.do("POST", "/api/products/p-1/reviews", "", `{"rating":4,"body":"Again"}`, "Authorization", token); r.status != 409 {
		t.Fatalf("second review: %d %s", r.status, r.body)
	}
	if r := sh.do("POST", "/api/products/p-1/reviews", "", `{"rating":9,"body":"x"}`, "Authorization", token); r.status != 400 {
		t.Fatalf("rating 9: %d %s", r.status, r.body)
	}
	if r := sh.do("POST", "/api/products/p-1/reviews", "", `{"rating":5,"body":"x"}`); r.status != 401 {
		t.Fatalf("anonymous review: %d %s", r.status, r.body)
	}
	if n := sh.events(store.EventReviewCreated, 1); n != 1 {
		t.Fatalf("%d review.created events", n)
	}
	if r := sh.do("GET", "/api/products/p-1/reviews", "", ""); !strings.Contains(string(r.body), `"total":0`) {
		t.Fatalf("a pending review is public: %s", r.body)
	}
	m := sh.do("POST", fmt.Sprintf("/api/admin/reviews/%d/moderate", reviewID), "", `{"status":"approved"}`, "Authorization", sh.auth)
	if m.status != 200 {
		t.Fatalf("moderate: %d %s", m.status, m.body)
	}
	floor := m.header.Get("Vitrine-Write-Version")
	rv := sh.do("GET", "/api/products/p-1/reviews", "", "", "Vitrine-Min-Version", floor)
	if !strings.Contains(string(rv.body), `"total":1`) || !strings.Contains(string(rv.body), "Very warm indeed.") || strings.Contains(string(rv.body), "rev@example.com") {
		t.Fatalf("approved review on the edge: %s", rv.body)
	}

	t.Run("social proof is refreshed in batches and invalidates nothing else", func(t *testing.T) {
		edgeTenant := sh.s.replicas[1].rep.TenantBySlug("shop")
		catalog := edgeTenant.Counter(replica.Catalog).Load()
		productItem := edgeTenant.ItemCounter(schema.KindProduct, int64(pid)).Load()
		n, err := sh.s.origin.origin.RefreshStats(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("refresh: %d, %v; want 1 product changed", n, err)
		}
		if n, _ := sh.s.origin.origin.RefreshStats(context.Background()); n != 0 {
			t.Fatalf("a second refresh changed %d products", n)
		}
		var sp schema.SocialProofView
		waitFor(t, 5*time.Second, "social proof on the edge", func() bool {
			sp = decode[schema.SocialProofView](t, sh.do("GET", fmt.Sprintf("/api/products/%d/social-proof", pid), "", ""))
			return sp.ReviewCount == 1
		})
		if sp.Purchases7d != 2 || sp.Purchases30d != 2 || sp.AverageRating == nil || *sp.AverageRating != "5.0" {
			t.Fatalf("social proof %+v", sp)
		}
		if edgeTenant.Counter(replica.Catalog).Load() != catalog || edgeTenant.ItemCounter(schema.KindProduct, int64(pid)).Load() != productItem {
			t.Fatal("a stats batch invalidated catalog bodies")
		}
		if r := sh.do("GET", "/api/products/999999/social-proof", "", ""); r.status != 404 {
			t.Fatalf("unknown product: %d %s", r.status, r.body)
		}
	})

	t.Run("sections are listed active and in order", func(t *testing.T) {
		var floor string
		for _, b := range []string{
			`{"kind":"banner","title":"Second","position":2,"content":{"text":"Free shipping","url":"https://x.example/ship"}}`,
			`{"kind":"hero","title":"First","position":1,"content":{"image":"https://x.example/h.jpg"}}`,
			`{"kind":"text","title":"Hidden","position":0,"active":false}`,
		} {
			r := sh.do("POST", "/api/admin/sections", "", b, "Authorization", sh.auth)
			if r.status != 201 {
				t.Fatalf("section: %d %s", r.status, r.body)
			}
			floor = r.header.Get("Vitrine-Write-Version")
		}
		if r := sh.do("POST", "/api/admin/sections", "", `{"kind":"carousel"}`, "Authorization", sh.auth); r.status != 400 {
			t.Fatalf("bad kind: %d %s", r.status, r.body)
		}
		got := decode[schema.List[schema.Section]](t, sh.do("GET", "/api/storefront/sections", "", "", "Vitrine-Min-Version", floor))
		if len(got.Data) != 2 || got.Data[0].Title != "First" || got.Data[1].Title != "Second" {
			t.Fatalf("sections %+v", got.Data)
		}
	})

	t.Run("the replica equals the database, merchandising included", func(t *testing.T) {
		sh.s.converged(sh.s.replicas[1], []schema.Visibility{schema.Pub}, "shop")
	})
}
