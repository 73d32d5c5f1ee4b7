package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"vitrine/origin/carrier"
	"vitrine/schema"
)

type labelsAnswer struct {
	Shipments []struct {
		ID             string `json:"id"`
		TrackingNumber string `json:"tracking_number"`
		Status         string `json:"status"`
		LabelURL       string `json:"label_url"`
		Lines          []struct {
			Line     int   `json:"line"`
			Quantity int64 `json:"quantity"`
		} `json:"lines"`
	} `json:"shipments"`
	Order struct {
		FulfillmentStatus string `json:"fulfillment_status"`
	} `json:"order"`
}

// A warehouse day through an edge, with server keys only (and staff for the simulated
// carrier's scans): 30 orders, a pick list, multi-parcel labels for some, the same label request
// ten times at once, one single label and a label batch for the rest, every parcel delivered, a
// partial refund with restock; order.shipped, order.delivered and order.refunded once per order.
func TestWarehouseDay(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	reader, _ := sh.newKey(sh.host, sh.auth, `{"name":"warehouse","scopes":["read_orders"]}`)
	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"shipping","scopes":["write_orders"]}`)
	kettle := sh.product("Kettle", 3000, 1000)
	mug := sh.product("Mug", 1250, 1000)
	var orders []schema.OrderView
	for i := range 30 {
		orders = append(orders, sh.orderAt(sh.host, guest, nil, lineQty{kettle, int64(1 + i%3)}, lineQty{mug, 2}))
	}
	var refs []string
	var units int64
	for i, o := range orders {
		refs = append(refs, o.Reference)
		units += int64(1+i%3) + 2
	}
	key := func(k string) []string { return []string{"Authorization", "Bearer " + writer, "Idempotency-Key", k} }

	r := sh.do("GET", "/api/orders/batch/pick-list?references="+strings.Join(refs, ","), "", "", "Authorization", "Bearer "+reader, "Accept", "application/json")
	if pl := decode[pickList](t, r); len(pl.Orders) != 30 || pl.Units != units || pl.SKUs != 2 {
		t.Fatalf("pick list: %d orders, %d units (want %d), %d SKUs", len(pl.Orders), pl.Units, units, pl.SKUs)
	}

	var shipments []string
	t.Run("multi-parcel labels for five orders, lines split, never more than ordered", func(t *testing.T) {
		for i, o := range orders[:5] {
			kettles := int64(1 + i%3)
			uri := "/api/orders/" + o.Reference + "/shipping-labels/multi"
			over := fmt.Sprintf(`{"parcels":[{"lines":[{"line":1,"quantity":%d}]},{"lines":[{"line":2,"quantity":3}]}]}`, kettles)
			if r := sh.do("POST", uri, "", over, key("over-"+o.Reference)...); r.status != 409 {
				t.Fatalf("three mugs of two: %d %s", r.status, r.body)
			}
			body := fmt.Sprintf(`{"parcels":[{"lines":[{"line":1,"quantity":%d}],"weight_grams":1800},{"lines":[{"line":2,"quantity":2}]}],"service":"express"}`, kettles)
			r := sh.do("POST", uri, "", body, key("multi-"+o.Reference)...)
			if r.status != 201 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			a := decode[labelsAnswer](t, r)
			if len(a.Shipments) != 2 || a.Order.FulfillmentStatus != "fulfilled" {
				t.Fatalf("labels %s", r.body)
			}
			for _, s := range a.Shipments {
				if !carrier.ValidTrackingNumber(s.TrackingNumber) || s.Status != "label_created" {
					t.Fatalf("shipment %+v", s)
				}
				shipments = append(shipments, s.ID)
			}
			if r := sh.do("POST", "/api/orders/"+o.Reference+"/shipping-label", "", "", key("more-"+o.Reference)...); r.status != 409 {
				t.Fatalf("a label for a shipped order: %d %s", r.status, r.body)
			}
		}
	})

	t.Run("the same label request ten times at once buys one label", func(t *testing.T) {
		o := orders[5]
		rs := parallel(10, func(int) *response {
			return sh.do("POST", "/api/orders/"+o.Reference+"/shipping-label", "", "", key("once-"+o.Reference)...)
		})
		ids := map[string]bool{}
		for _, r := range rs {
			if r.status != 201 && r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			for _, s := range decode[labelsAnswer](t, r).Shipments {
				ids[s.ID] = true
			}
		}
		if st := statuses(rs); st[201] != 1 || len(ids) != 1 {
			t.Fatalf("statuses %v, shipments %v: want one purchase of one label", st, ids)
		}
		for id := range ids {
			shipments = append(shipments, id)
		}
	})

	t.Run("one single label with its PDF, and a label batch for the rest", func(t *testing.T) {
		o := orders[6]
		r := sh.do("POST", "/api/orders/"+o.Reference+"/shipping-label", "", "", key("single-"+o.Reference)...)
		if r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		a := decode[labelsAnswer](t, r)
		if len(a.Shipments) != 1 || len(a.Shipments[0].Lines) != 2 || a.Order.FulfillmentStatus != "fulfilled" {
			t.Fatalf("label %s", r.body)
		}
		shipments = append(shipments, a.Shipments[0].ID)
		pdf := sh.do("GET", a.Shipments[0].LabelURL, "", "", "Authorization", "Bearer "+reader)
		if pdf.status != 200 || !bytes.HasPrefix(pdf.body, []byte("%PDF-")) {
			t.Fatalf("label PDF: %d", pdf.status)
		}

		rest := refs[7:]
		r = sh.do("POST", "/api/orders/batch-labels", "", `{"references":["`+strings.Join(rest, `","`)+`"]}`, key("day-batch")...)
		if r.status != 202 {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
		id := r.json(t)["batchId"].(string)
		var st batchStatus
		waitFor(t, 30*time.Second, "the batch", func() bool { st = sh.batchStatus(id, reader); return st.Status == "done" })
		if st.Done != len(rest) || st.Failed != 0 {
			t.Fatalf("batch %+v", st)
		}
		for _, ref := range rest {
			o, ships := sh.orderShipments(ref)
			for _, x := range ships {
				shipments = append(shipments, x.ID)
			}
			if len(ships) != 1 || o.View.FulfillmentStatus != "fulfilled" {
				t.Errorf("order %s: %d shipments, %s", ref, len(ships), o.View.FulfillmentStatus)
			}
		}
	})

	t.Run("the carrier delivers every parcel", func(t *testing.T) {
		if r := sh.admin("POST", "/api/admin/shipments/"+shipments[0]+"/advance", ""); r.status != 200 || r.json(t)["status"] != "in_transit" {
			t.Fatalf("advance: %d %s", r.status, r.body)
		}
		for _, id := range shipments {
			if r := sh.admin("POST", "/api/admin/shipments/"+id+"/advance", `{"to":"delivered"}`); r.status != 200 {
				t.Fatalf("deliver %s: %d %s", id, r.status, r.body)
			}
		}
		if r := sh.admin("POST", "/api/admin/shipments/"+shipments[0]+"/advance", ""); r.status != 409 {
			t.Fatalf("past delivered: %d %s", r.status, r.body)
		}
		tr := sh.do("GET", "/api/tracking/"+orders[0].Reference, "", "", "X-Order-Email", "ann@example.com").json(t)
		ships, _ := tr["shipments"].([]any)
		if tr["fulfillment_status"] != "delivered" || len(ships) != 2 {
			t.Fatalf("tracking: %v", tr)
		}
		events := ships[0].(map[string]any)["events"].([]any)
		if len(events) != 4 || events[3].(map[string]any)["status"] != "delivered" {
			t.Fatalf("events %v", events)
		}
	})

	t.Run("a partial refund with restock", func(t *testing.T) {
		before := sh.stock(mug)
		r := sh.do("POST", "/api/orders/"+orders[7].Reference+"/refund", "", `{"lines":[{"line":2,"quantity":1}],"restock":true}`, key("refund-7")...)
		if r.status != 201 || sh.stock(mug) != before+1 {
			t.Fatalf("refund: %d %s; mug stock %d → %d", r.status, r.body, before, sh.stock(mug))
		}
	})

	t.Run("a return label for an approved return, once", func(t *testing.T) {
		o := orders[8]
		body := fmt.Sprintf(`{"items":[{"variant_id":%d,"quantity":1,"reason":"no_longer_needed"}]}`, mug)
		r := sh.from("127.0.0.60", "POST", "/api/orders/"+o.Reference+"/return", body, "X-Order-Email", "ann@example.com")
		if r.status != 201 {
			t.Fatalf("return: %d %s", r.status, r.body)
		}
		ret := r.json(t)
		rma := ret["rma"].(string)
		uri := "/api/orders/" + o.Reference + "/return-label"
		if r := sh.do("POST", uri, "", `{"return_id":"`+rma+`"}`, key("ret-early")...); r.status != 409 {
			t.Fatalf("a label for a submitted return: %d %s", r.status, r.body)
		}
		if r := sh.admin("POST", "/api/admin/returns/"+rma+"/transition", `{"status":"approved"}`); r.status != 200 {
			t.Fatalf("approve: %d %s", r.status, r.body)
		}
		r = sh.do("POST", uri, "", `{"return_id":"`+rma+`"}`, key("ret-1")...)
		if r.status != 201 {
			t.Fatalf("return label: %d %s", r.status, r.body)
		}
		a := decode[labelsAnswer](t, r)
		if len(a.Shipments) != 1 || !carrier.ValidTrackingNumber(a.Shipments[0].TrackingNumber) || a.Order.FulfillmentStatus != "delivered" {
			t.Fatalf("return label %s", r.body)
		}
		if r := sh.do("POST", uri, "", `{"return_id":"`+rma+`"}`, key("ret-2")...); r.status != 409 {
			t.Fatalf("a second label for one return: %d %s", r.status, r.body)
		}
		if r := sh.do("POST", "/api/orders/"+orders[9].Reference+"/return-label", "", `{"return_id":"`+rma+`"}`, key("ret-3")...); r.status != 404 {
			t.Fatalf("another order's return: %d %s", r.status, r.body)
		}
	})

	for kind, want := range map[string]int{"order.shipped": 30, "order.delivered": 30, "order.refunded": 1} {
		if n := sh.events(kind, want); n != want {
			t.Errorf("%d %s events, want %d (once per order)", n, kind, want)
		}
	}
}
