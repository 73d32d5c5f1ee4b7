package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/origin"
	"vitrine/origin/payment"
	"vitrine/origin/store"
	"vitrine/origin/subscriptions"
	"vitrine/schema"
)

// Subscriptions through an edge: staff set and remove a variant's plan; a guest is refused; a
// signed-in checkout starts one subscription per subscription line; the maintenance renewal
// makes a paid order and subscription.renewed, once per period even with two origins renewing
// at once; a declined renewal goes past_due (once), is retried on the schedule and cancelled
// after the last retry; a retry that is approved recovers; the customer and staff cancel, with
// one subscription.cancelled each; another customer neither sees nor cancels it; a plan's count
// completes it.
func TestSubscriptions(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	retries := []time.Duration{time.Second, 3 * time.Second, 5 * time.Second}
	schedule := subscriptions.Schedule{Retries: retries, Lease: time.Minute}
	sh := newShopWith(t, func(s *system) { s.originConfig.Renewals = schedule })
	ctx := context.Background()
	srv := sh.s.origin.origin
	coffee := sh.product("Coffee Club", 1500, 100)
	mug := sh.product("Mug", 1000, 100)
	plan := fmt.Sprintf("/api/admin/variants/%d/subscription", coffee)

	register := func(email string) string {
		t.Helper()
		r := sh.do("POST", "/api/customer/register", "", `{"email":"`+email+`","password":"correct horse battery"}`)
		if r.status != 201 {
			t.Fatalf("register %s: %d %s", email, r.status, r.body)
		}
		return "Bearer " + r.json(t)["token"].(string)
	}
	// checkout checks a cart of lines out as the customer (auth) paying with token.
	checkout := func(auth, token string, lines ...lineQty) *response {
		t.Helper()
		session := newSession()
		for _, l := range lines {
			sh.add(session, l.id, l.q)
		}
		body := strings.Replace(guestWith(token), `"email":"ann@example.com",`, "", 1)
		if auth == "" {
			return sh.do("POST", "/api/checkout", session, guestWith(token))
		}
		return sh.do("POST", "/api/checkout", session, body, "Authorization", auth)
	}
	mine := func(auth string) []store.Subscription {
		t.Helper()
		r := sh.do("GET", "/api/customer/subscriptions", "", "", "Authorization", auth)
		if r.status != 200 {
			t.Fatalf("list subscriptions: %d %s", r.status, r.body)
		}
		return decode[schema.List[store.Subscription]](t, r).Data
	}
	// only returns the one subscription of a customer.
	only := func(auth string) store.Subscription {
		t.Helper()
		subs := mine(auth)
		if len(subs) != 1 {
			t.Fatalf("%d subscriptions, want 1", len(subs))
		}
		return subs[0]
	}
	renew := func(now time.Time) subscriptions.Stats {
		t.Helper()
		st, err := srv.RenewSubscriptions(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// charges counts the off-session charges of the shop's test ledger, by status.
	charges := func() map[string]int {
		t.Helper()
		ps, err := sh.s.db.TestPayments(ctx, sh.tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, p := range ps {
			if p.Method != "" {
				out[p.Status]++
			}
		}
		return out
	}
	ann, bob := register("ann@example.com"), register("bob@example.com")

	t.Run("staff set and remove a variant's plan", func(t *testing.T) {
		r := sh.admin("PUT", plan, `{"interval":"month","interval_count":3,"count":4}`)
		p := decode[store.SubscriptionPlan](t, r)
		if r.status != 200 || p.VariantID != coffee || p.Interval != "month" || p.IntervalCount != 3 || p.Count == nil || *p.Count != 4 {
			t.Fatalf("put plan: %d %s", r.status, r.body)
		}
		r = sh.admin("PUT", plan, `{"interval":"day"}`)
		if p := decode[store.SubscriptionPlan](t, r); r.status != 200 || p.IntervalCount != 1 || p.Count != nil {
			t.Fatalf("replace plan: %d %s", r.status, r.body)
		}
		if r := sh.admin("GET", plan, ""); r.status != 200 || r.json(t)["count"] != nil {
			t.Fatalf("get plan: %d %s", r.status, r.body)
		}
		for _, body := range []string{`{"interval":"fortnight"}`, `{"interval":"day","interval_count":0}`, `{"interval":"day","interval_count":13}`,
			`{"interval_count":2}`, `{"interval":"day","count":0}`, `{"interval":"day","count":null}`, `{"interval":"day","extra":1}`,
			`{"interval":7}`, `[1]`, `{`} {
			if r := sh.admin("PUT", plan, body); r.status != 400 || r.json(t)["error"] == "" {
				t.Fatalf("%s: %d %s", body, r.status, r.body)
			}
		}
		if r := sh.admin("PUT", "/api/admin/variants/999999/subscription", `{"interval":"day"}`); r.status != 404 {
			t.Fatalf("unknown variant: %d %s", r.status, r.body)
		}
		if r := sh.admin("GET", "/api/admin/variants/abc/subscription", ""); r.status != 404 {
			t.Fatalf("bad id: %d %s", r.status, r.body)
		}
		if r := sh.do("PUT", plan, "", `{"interval":"day"}`); r.status != 401 {
			t.Fatalf("without credentials: %d %s", r.status, r.body)
		}
		mugPlan := fmt.Sprintf("/api/admin/variants/%d/subscription", mug)
		if r := sh.admin("PUT", mugPlan, `{"interval":"week"}`); r.status != 200 {
			t.Fatalf("put mug plan: %d %s", r.status, r.body)
		}
		if r := sh.admin("DELETE", mugPlan, ""); r.status != 204 {
			t.Fatalf("delete plan: %d %s", r.status, r.body)
		}
		for _, m := range []string{"GET", "DELETE"} {
			if r := sh.admin(m, mugPlan, ""); r.status != 404 {
				t.Fatalf("%s a removed plan: %d %s", m, r.status, r.body)
			}
		}
	})

	t.Run("a guest cannot check a subscription out", func(t *testing.T) {
		before := sh.stock(coffee)
		r := checkout("", payment.TokenApproved, lineQty{coffee, 1}, lineQty{mug, 1})
		if r.status != 401 || !strings.Contains(r.json(t)["error"].(string), "sign in") || r.json(t)["field"] != "items" ||
			!strings.Contains(r.json(t)["error"].(string), "Coffee Club") {
			t.Fatalf("guest: %d %s", r.status, r.body)
		}
		if sh.stock(coffee) != before {
			t.Fatal("a refused checkout took stock")
		}
		// Without the subscription line, a guest checks out as before.
		if r := checkout("", payment.TokenApproved, lineQty{mug, 1}); r.status != 201 {
			t.Fatalf("guest without a subscription: %d %s", r.status, r.body)
		}
	})

	var first schema.OrderView
	t.Run("a signed-in checkout starts the subscription", func(t *testing.T) {
		r := checkout(ann, payment.TokenApproved, lineQty{coffee, 2}, lineQty{mug, 1})
		if r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		first = decode[schema.OrderView](t, r)
		s := only(ann)
		if s.Status != store.SubscriptionActive || s.VariantID != coffee || s.Quantity != 2 || s.UnitPrice.Amount != 1500 ||
			s.OrderReference != first.Reference || s.LastOrderReference != first.Reference || s.Renewals != 0 || s.Interval != "day" ||
			s.NextAttemptAt == nil || !s.NextAttemptAt.Equal(s.CurrentPeriodEnd) || s.CurrentPeriodEnd.Sub(s.CurrentPeriodStart) != 24*time.Hour {
			t.Fatalf("subscription: %+v", s)
		}
		if len(mine(bob)) != 0 {
			t.Fatal("bob sees ann's subscription")
		}
	})

	t.Run("a renewal makes a paid order and subscription.renewed", func(t *testing.T) {
		start := only(ann)
		stock := sh.stock(coffee)
		if st := renew(start.CurrentPeriodEnd.Add(-time.Second)); st != (subscriptions.Stats{}) {
			t.Fatalf("renewed before the period ended: %+v", st)
		}
		if st := renew(start.CurrentPeriodEnd); st.Renewed != 1 || st.Declined != 0 {
			t.Fatalf("renewal: %+v", st)
		}
		s := only(ann)
		if s.Renewals != 1 || s.Status != store.SubscriptionActive || s.LastOrderReference == first.Reference ||
			!s.CurrentPeriodStart.Equal(start.CurrentPeriodEnd) || s.CurrentPeriodEnd.Sub(s.CurrentPeriodStart) != 24*time.Hour {
			t.Fatalf("after the renewal: %+v", s)
		}
		r := sh.do("GET", "/api/customer/orders/"+s.LastOrderReference, "", "", "Authorization", ann)
		o := decode[schema.OrderView](t, r)
		if r.status != 200 || o.Status != schema.OrderPaid || len(o.Items) != 1 || o.Items[0].VariantID != coffee || o.Items[0].Quantity != 2 ||
			o.Totals.Total.Amount != 3000 || o.ShippingAddress.City != "Springfield" {
			t.Fatalf("renewal order: %d %s", r.status, r.body)
		}
		if sh.stock(coffee) != stock-2 {
			t.Fatalf("stock %d, want %d", sh.stock(coffee), stock-2)
		}
		if n := sh.events(store.EventSubscriptionRenewed, 1); n != 1 {
			t.Fatalf("%d subscription.renewed events, want 1", n)
		}
		e := sh.lastEvent(store.EventSubscriptionRenewed)
		if e["order_reference"] != s.LastOrderReference || e["subscription"].(map[string]any)["id"] != s.ID ||
			e["subscription"].(map[string]any)["renewals"] != 1.0 {
			t.Fatalf("subscription.renewed: %v", e)
		}
		// The renewal order is an order like any: order.created and order.paid (guest, first
		// order, renewal).
		if n := sh.events("order.paid", 3); n != 3 {
			t.Fatalf("%d order.paid events, want 3", n)
		}
		if e := sh.lastEvent("order.paid"); e["reference"] != s.LastOrderReference {
			t.Fatalf("order.paid: %v", e)
		}
		// The same round again renews nothing: the next period has not ended.
		if st := renew(start.CurrentPeriodEnd); st.Renewed != 0 {
			t.Fatalf("renewed twice: %+v", st)
		}
	})

	t.Run("two origins renewing at once renew a period once", func(t *testing.T) {
		other := origin.New(origin.Config{Secret: sh.s.key, Logger: sh.s.log, Payments: sh.pay, Renewals: schedule}, sh.s.db, nil)
		due := only(ann).CurrentPeriodEnd
		before := charges()["authorized"]
		stats := make([]subscriptions.Stats, 16)
		parallel(16, func(i int) *response {
			o := srv
			if i%2 == 1 {
				o = other
			}
			st, err := o.RenewSubscriptions(ctx, due)
			if err != nil {
				t.Error(err)
			}
			stats[i] = st
			return nil
		})
		renewed := 0
		for _, st := range stats {
			renewed += st.Renewed
		}
		s := only(ann)
		if renewed != 1 || s.Renewals != 2 || charges()["authorized"] != before+1 {
			t.Fatalf("renewed %d times, subscription at %d renewals, %d charges (want 1, 2, 1)", renewed, s.Renewals, charges()["authorized"]-before)
		}
		var periods []string
		sh.settle(func(tx *store.Tx) error {
			var err error
			periods, err = tx.SubscriptionPeriods(ctx, sh.tn, s.ID)
			return err
		})
		if len(periods) != 3 {
			t.Fatalf("%d paid periods, want 3", len(periods))
		}
		if n := sh.events(store.EventSubscriptionRenewed, 2); n != 2 {
			t.Fatalf("%d subscription.renewed events, want 2", n)
		}
	})

	t.Run("a renewal whose charge went unanswered is finished under the same key", func(t *testing.T) {
		lost := &hookedProvider{Test: payment.Test{Ledger: sh.s.db}, after: func() error { return errors.New("connection reset") }}
		other := origin.New(origin.Config{Secret: sh.s.key, Logger: sh.s.log, Payments: lost, Renewals: schedule}, sh.s.db, nil)
		start := only(ann)
		before := charges()["authorized"]
		if st, err := other.RenewSubscriptions(ctx, start.CurrentPeriodEnd); err != nil || st.Renewed != 0 || st.Waiting != 1 {
			t.Fatalf("unanswered charge: %+v %v", st, err)
		}
		// The claim holds until its lease is over; then another origin charges again under the
		// same key, which the provider answers with the first charge.
		if st := renew(start.CurrentPeriodEnd.Add(schedule.Lease - time.Second)); st.Renewed != 0 {
			t.Fatalf("renewed during the lease: %+v", st)
		}
		if st := renew(start.CurrentPeriodEnd.Add(schedule.Lease)); st.Renewed != 1 {
			t.Fatalf("after the lease: %+v", st)
		}
		if s := only(ann); s.Renewals != start.Renewals+1 || charges()["authorized"] != before+1 {
			t.Fatalf("subscription at %d renewals, %d charges (want %d, 1)", s.Renewals, charges()["authorized"]-before, start.Renewals+1)
		}
	})

	t.Run("a declined renewal goes past_due, is retried, then cancelled", func(t *testing.T) {
		dee := register("dee@example.com")
		if r := checkout(dee, payment.TokenRenewalsDeclined, lineQty{coffee, 1}); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		stock := sh.stock(coffee)
		at := only(dee).CurrentPeriodEnd
		renew(at)
		s := only(dee)
		if s.Status != store.SubscriptionPastDue || s.FailedAttempts != 1 || s.NextAttemptAt == nil || !s.NextAttemptAt.Equal(at.Add(retries[0])) ||
			s.Renewals != 0 {
			t.Fatalf("after a decline: %+v", s)
		}
		if n := sh.events(store.EventSubscriptionPastDue, 1); n != 1 {
			t.Fatalf("%d subscription.past_due events, want 1", n)
		}
		if e := sh.lastEvent(store.EventSubscriptionPastDue); e["decline_reason"] != "Your card was declined." ||
			e["subscription"].(map[string]any)["id"] != s.ID || e["order_reference"] == "" {
			t.Fatalf("subscription.past_due: %v", e)
		}
		// Nothing happens before the retry is due; each retry follows the schedule.
		renew(at.Add(retries[0] - time.Millisecond))
		if s := only(dee); s.FailedAttempts != 1 {
			t.Fatalf("retried early: %+v", s)
		}
		for i := 1; i < len(retries); i++ {
			at = at.Add(retries[i-1])
			renew(at)
			s := only(dee)
			if s.Status != store.SubscriptionPastDue || s.FailedAttempts != i+1 || !s.NextAttemptAt.Equal(at.Add(retries[i])) {
				t.Fatalf("after retry %d: %+v", i, s)
			}
		}
		at = at.Add(retries[len(retries)-1])
		renew(at)
		s = only(dee)
		if s.Status != store.SubscriptionCancelled || s.NextAttemptAt != nil || s.Cancellation == nil || s.Cancellation.Reason != store.CancelPaymentFailed {
			t.Fatalf("after the last retry: %+v", s)
		}
		if n := sh.events(store.EventSubscriptionCancelled, 1); n != 1 {
			t.Fatalf("%d subscription.cancelled events, want 1", n)
		}
		if e := sh.lastEvent(store.EventSubscriptionCancelled); e["reason"] != store.CancelPaymentFailed {
			t.Fatalf("subscription.cancelled: %v", e)
		}
		if n := sh.events(store.EventSubscriptionPastDue, 1); n != 1 {
			t.Fatalf("%d subscription.past_due events, want 1 per episode", n)
		}
		renew(at.Add(time.Hour))
		if s := only(dee); s.FailedAttempts != len(retries)+1 || s.Renewals != 0 {
			t.Fatalf("a cancelled subscription was retried: %+v", s)
		}
		// Each declined attempt left a payment_failed order whose stock went back.
		if sh.stock(coffee) != stock {
			t.Fatalf("stock %d, want %d", sh.stock(coffee), stock)
		}
		page := decode[schema.Page[map[string]any]](t, sh.do("GET", "/api/customer/orders", "", "", "Authorization", dee))
		failed := 0
		for _, o := range page.Data {
			if o["status"] == schema.OrderPaymentFailed {
				failed++
			}
		}
		if failed != len(retries)+1 {
			t.Fatalf("%d payment_failed renewal orders, want %d", failed, len(retries)+1)
		}
	})

	t.Run("an approved retry recovers a past_due subscription", func(t *testing.T) {
		eve := register("eve@example.com")
		if r := checkout(eve, payment.TokenRenewalDeclinedOnce, lineQty{coffee, 1}); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		start := only(eve)
		renew(start.CurrentPeriodEnd)
		if s := only(eve); s.Status != store.SubscriptionPastDue {
			t.Fatalf("after a decline: %+v", s)
		}
		renew(start.CurrentPeriodEnd.Add(retries[0]))
		s := only(eve)
		if s.Status != store.SubscriptionActive || s.Renewals != 1 || s.FailedAttempts != 0 || !s.CurrentPeriodStart.Equal(start.CurrentPeriodEnd) {
			t.Fatalf("after an approved retry: %+v", s)
		}
		if n := sh.events(store.EventSubscriptionRenewed, 4); n != 4 {
			t.Fatalf("%d subscription.renewed events, want 4", n)
		}
		if e := sh.lastEvent(store.EventSubscriptionRenewed); e["subscription"].(map[string]any)["id"] != s.ID {
			t.Fatalf("subscription.renewed: %v", e)
		}
	})

	t.Run("customers and staff cancel, once", func(t *testing.T) {
		s := only(ann)
		cancel := "/api/customer/subscriptions/" + s.ID + "/cancel"
		if r := sh.do("POST", cancel, "", ""); r.status != 401 {
			t.Fatalf("cancel without a token: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", cancel, "", "", "Authorization", bob); r.status != 404 {
			t.Fatalf("bob cancels ann's: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", cancel, "", `{"comment":5}`, "Authorization", ann); r.status != 400 {
			t.Fatalf("bad body: %d %s", r.status, r.body)
		}
		for _, id := range []string{"not-a-uuid", store.NewUUID()} {
			if r := sh.do("POST", "/api/customer/subscriptions/"+id+"/cancel", "", "", "Authorization", ann); r.status != 404 {
				t.Fatalf("cancel %s: %d %s", id, r.status, r.body)
			}
		}
		for range 2 {
			r := sh.do("POST", cancel, "", `{"comment":"moving abroad"}`, "Authorization", ann)
			c := decode[store.Subscription](t, r)
			if r.status != 200 || c.Status != store.SubscriptionCancelled || c.Cancellation == nil || c.Cancellation.Reason != store.CancelByCustomer ||
				c.Cancellation.Comment != "moving abroad" || c.NextAttemptAt != nil {
				t.Fatalf("cancel: %d %s", r.status, r.body)
			}
		}
		if n := sh.events(store.EventSubscriptionCancelled, 2); n != 2 {
			t.Fatalf("%d subscription.cancelled events, want 2", n)
		}
		if e := sh.lastEvent(store.EventSubscriptionCancelled); e["reason"] != store.CancelByCustomer || e["subscription"].(map[string]any)["id"] != s.ID {
			t.Fatalf("subscription.cancelled: %v", e)
		}
		renew(s.CurrentPeriodEnd.Add(time.Hour))
		if c := only(ann); c.Renewals != s.Renewals {
			t.Fatalf("a cancelled subscription renewed: %+v", c)
		}

		fay := register("fay@example.com")
		if r := checkout(fay, payment.TokenApproved, lineQty{coffee, 1}); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		f := only(fay)
		list := decode[schema.Page[store.Subscription]](t, sh.admin("GET", "/api/admin/subscriptions?status=active", ""))
		found := false
		for _, x := range list.Data {
			found = found || x.ID == f.ID
			if x.Status != store.SubscriptionActive {
				t.Fatalf("status filter: %+v", x)
			}
		}
		if !found {
			t.Fatalf("staff list lacks fay's subscription: %+v", list)
		}
		if all := decode[schema.Page[store.Subscription]](t, sh.admin("GET", "/api/admin/subscriptions?per_page=100", "")); all.Total != 4 {
			t.Fatalf("staff list: %d subscriptions, want 4", all.Total)
		}
		if r := sh.admin("GET", "/api/admin/subscriptions?status=paused", ""); r.status != 400 {
			t.Fatalf("bad status: %d %s", r.status, r.body)
		}
		staff := "/api/admin/subscriptions/" + f.ID + "/cancel"
		if r := sh.do("POST", staff, "", ""); r.status != 401 {
			t.Fatalf("staff cancel without credentials: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", staff, "", "", "Authorization", fay); r.status != 401 {
			t.Fatalf("staff cancel with a customer token: %d %s", r.status, r.body)
		}
		for range 2 {
			r := sh.admin("POST", staff, "")
			if c := decode[store.Subscription](t, r); r.status != 200 || c.Cancellation == nil || c.Cancellation.Reason != store.CancelByStaff {
				t.Fatalf("staff cancel: %d %s", r.status, r.body)
			}
		}
		if n := sh.events(store.EventSubscriptionCancelled, 3); n != 3 {
			t.Fatalf("%d subscription.cancelled events, want 3", n)
		}
		if r := sh.admin("POST", "/api/admin/subscriptions/"+store.NewUUID()+"/cancel", ""); r.status != 404 {
			t.Fatalf("unknown: %d %s", r.status, r.body)
		}
	})

	t.Run("a plan's count completes the subscription", func(t *testing.T) {
		if r := sh.admin("PUT", plan, `{"interval":"week","count":1}`); r.status != 200 {
			t.Fatalf("put plan: %d %s", r.status, r.body)
		}
		gus := register("gus@example.com")
		if r := checkout(gus, payment.TokenApproved, lineQty{coffee, 1}); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		start := only(gus)
		if start.Count == nil || *start.Count != 1 || start.CurrentPeriodEnd.Sub(start.CurrentPeriodStart) != 7*24*time.Hour {
			t.Fatalf("subscription: %+v", start)
		}
		renew(start.CurrentPeriodEnd)
		s := only(gus)
		if s.Status != store.SubscriptionCompleted || s.Renewals != 1 || s.NextAttemptAt != nil {
			t.Fatalf("after its last renewal: %+v", s)
		}
		if r := sh.do("POST", "/api/customer/subscriptions/"+s.ID+"/cancel", "", "", "Authorization", gus); r.status != 409 {
			t.Fatalf("cancel a completed subscription: %d %s", r.status, r.body)
		}
	})

	t.Run("a subscription cancelled while its renewal is charged is not renewed", func(t *testing.T) {
		hal := register("hal@example.com")
		if r := checkout(hal, payment.TokenApproved, lineQty{coffee, 1}); r.status != 201 {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		start := only(hal)
		var once sync.Once
		racing := &hookedProvider{Test: payment.Test{Ledger: sh.s.db}, before: func(r payment.ChargeRequest) {
			if r.Email != "hal@example.com" {
				return
			}
			once.Do(func() {
				if r := sh.admin("POST", "/api/admin/subscriptions/"+start.ID+"/cancel", ""); r.status != 200 {
					t.Errorf("staff cancel: %d %s", r.status, r.body)
				}
			})
		}}
		other := origin.New(origin.Config{Secret: sh.s.key, Logger: sh.s.log, Payments: racing, Renewals: schedule}, sh.s.db, nil)
		// (Other subscriptions due by then renew too: only hal's is checked.)
		if _, err := other.RenewSubscriptions(ctx, start.CurrentPeriodEnd); err != nil {
			t.Fatal(err)
		}
		s := only(hal)
		if s.Status != store.SubscriptionCancelled || s.Renewals != 0 || s.Cancellation.Reason != store.CancelByStaff {
			t.Fatalf("after the race: %+v", s)
		}
		if charges()["voided"] != 1 {
			t.Fatalf("charges %v, want the renewal's voided", charges())
		}
		page := decode[schema.Page[map[string]any]](t, sh.do("GET", "/api/customer/orders", "", "", "Authorization", hal))
		if page.Total != 2 || page.Data[0]["status"] != schema.OrderCancelled {
			t.Fatalf("hal's orders: %+v", page.Data)
		}
		if n := sh.events(store.EventSubscriptionCancelled, 4); n != 4 {
			t.Fatalf("%d subscription.cancelled events, want 4", n)
		}
	})
}

// hookedProvider is the test provider with hooks around off-session charges: before, when set,
// runs first with the request; after, when set, replaces the answer of a charge that was made
// with an error (as when the provider's answer is lost).
type hookedProvider struct {
	payment.Test
	before func(r payment.ChargeRequest)
	after  func() error
}

func (p *hookedProvider) Charge(ctx context.Context, r payment.ChargeRequest) (payment.Result, error) {
	if p.before != nil {
		p.before(r)
	}
	res, err := p.Test.Charge(ctx, r)
	if err == nil && p.after != nil {
		return payment.Result{}, p.after()
	}
	return res, err
}
