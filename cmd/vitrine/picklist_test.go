package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type pickList struct {
	Orders []string `json:"orders"`
	Lines  []struct {
		SKU      string `json:"sku"`
		Title    string `json:"title"`
		Quantity int64  `json:"quantity"`
		Orders   []struct {
			Reference string `json:"reference"`
			Quantity  int64  `json:"quantity"`
		} `json:"orders"`
	} `json:"lines"`
	Units int64 `json:"units"`
	SKUs  int   `json:"skus"`
}

// The pick list through an edge: units still to send across the chosen orders, one row per
// SKU in SKU order, refunded units left out; by references or by date range; JSON or PDF.
func TestPickList(t *testing.T) {
	sh := newShop(t)
	reader, _ := sh.newKey(sh.host, sh.auth, `{"name":"warehouse","scopes":["read_orders"]}`)
	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"erp","scopes":["write_orders"]}`)
	start := time.Now().Add(-time.Second).UTC()
	kettle := sh.product("Kettle", 3000, 100)
	mug := sh.product("Mug", 1250, 100)
	a := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 2}, lineQty{mug, 1})
	b := sh.orderAt(sh.host, guest, nil, lineQty{mug, 3})
	c := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 1})
	if r := sh.do("POST", "/api/orders/"+c.Reference+"/refund", "", `{"lines":[{"line":1,"quantity":1}]}`,
		"Authorization", "Bearer "+writer, "Idempotency-Key", "c-all"); r.status != 201 {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	get := func(query string, accept string) *response {
		return sh.do("GET", "/api/orders/batch/pick-list"+query, "", "", "Authorization", "Bearer "+reader, "Accept", accept)
	}

	r := get("?references="+a.Reference+","+strings.ToLower(b.Reference)+","+c.Reference, "application/json")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	pl := decode[pickList](t, r)
	if len(pl.Orders) != 2 || pl.Units != 6 || pl.SKUs != 2 || pl.Lines[0].SKU > pl.Lines[1].SKU {
		t.Fatalf("pick list %s", r.body)
	}
	want := map[string]int64{"Kettle": 2, "Mug": 4} // c's kettle was refunded: not picked
	for _, l := range pl.Lines {
		if !strings.HasPrefix(l.Title, "Kettle") && !strings.HasPrefix(l.Title, "Mug") || want[strings.Fields(l.Title)[0]] != l.Quantity {
			t.Fatalf("line %+v, want %v", l, want)
		}
	}

	window := "?from=" + start.Format("2006-01-02T15:04:05") + "&to=" + time.Now().Add(time.Minute).UTC().Format("2006-01-02T15:04:05")
	if r := get(window, "application/json"); decode[pickList](t, r).Units != 6 {
		t.Fatalf("by date: %s", r.body)
	}
	if r := get("?from=2001-01-01T00:00:00&to=2001-01-02T00:00:00", "application/json"); decode[pickList](t, r).Units != 0 {
		t.Fatalf("an empty window: %s", r.body)
	}
	if r := get("?references="+a.Reference, ""); r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		t.Fatalf("PDF: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for _, q := range []string{"?references=nonsense", "?limit=0", "?limit=501", "?from=yesterday", window[:len(window)-19] + "2001-01-01T00:00:00"} {
		if r := get(q, "application/json"); r.status != 400 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
	}
	if r := sh.do("GET", "/api/orders/batch/pick-list", "", "", "Authorization", "Bearer "+writer); r.status != 403 {
		t.Fatalf("a write_orders key: %d %s", r.status, r.body)
	}
}
