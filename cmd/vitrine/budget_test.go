package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// An edge with --max-replica-bytes (replica.Config.MaxBytes), as a process: the store that does
// not fit is shed; its reads are forwarded to the origin and answer the bodies an unbudgeted edge
// answers; /readyz and /metrics say so; writes through it still work; and its heap stays bounded
// while the shed store grows far past the budget.
func TestEdgeMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	free := s.startEdge(edge.Config{}) // no budget: the reference answers
	big, pw := s.tenant("big")
	small, _ := s.tenant("small")
	ctx := context.Background()
	describe := strings.Repeat("Made by hand from brass and oak, built to last and to be repaired. ", 4)
	addProducts := func(tn *schema.Tenant, prefix string, from, n int, description string) {
		t.Helper()
		if err := s.db.Tx(ctx, func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				p := &schema.Product{Slug: fmt.Sprintf("%s-%04d", prefix, i), Title: fmt.Sprintf("Brass %s %d", prefix, i),
					Description: description, Status: schema.ProductActive, Prices: schema.Prices{"USD": int64(1000 + i)}, Featured: i%5 == 0}
				if err := tx.CreateProduct(ctx, tn, p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	addProducts(big, "lamp", 0, 40, describe)
	addProducts(small, "cup", 0, 3, describe)
	waitFor(t, 10*time.Second, "the reference edge to hold both stores", func() bool {
		return free.rep.TenantBySlug("big").Snapshot().ProductCount() == 40 && free.rep.TenantBySlug("small").Snapshot().ProductCount() == 3
	})
	bigBytes, smallBytes := free.rep.TenantBySlug("big").Snapshot().Bytes, free.rep.TenantBySlug("small").Snapshot().Bytes
	budget := smallBytes + bigBytes/2

	edgeAddr, edgeOps := freeAddr(t), freeAddr(t)
	env := []string{"VITRINE_NATS_URL=" + s.ns.URL(), "VITRINE_EDGE_SECRET=" + s.edgeSecret, "VITRINE_PLATFORM_DOMAIN=vitrine.test",
		"VITRINE_LOG_LEVEL=" + relayLogLevel(), "VITRINE_MAX_REPLICA_BYTES=" + strconv.FormatInt(budget, 10)}
	s.startProcess(env, "edge", "--addr", edgeAddr, "--ops-addr", edgeOps, "--origin-url", "http://"+s.originAddr,
		"--media-store", "fs:"+t.TempDir(), "--rate-limit", "-1", "--pprof")
	waitFor(t, 30*time.Second, "the budgeted edge to serve both stores", func() bool {
		r, err := tryCall("GET", edgeAddr, "small.example.test", "/api/products")
		b, err2 := tryCall("GET", edgeAddr, "big.example.test", "/api/products")
		return err == nil && err2 == nil && r.status == 200 && b.status == 200
	})

	// /readyz (ops and the edge's own) and /metrics name the shed store.
	for _, addr := range []string{edgeOps, edgeAddr} {
		r := call(t, "GET", addr, "ops", "/readyz", "")
		var ready struct {
			Status string `json:"status"`
			Budget struct {
				MaxBytes  int64    `json:"max_bytes"`
				HeldBytes int64    `json:"held_bytes"`
				Shed      []string `json:"shed_tenants"`
			} `json:"replica_budget"`
		}
		if err := json.Unmarshal(r.body, &ready); err != nil || r.status != 200 || ready.Status != "ok" {
			t.Fatalf("%s/readyz %d %s", addr, r.status, r.body)
		}
		if b := ready.Budget; b.MaxBytes != budget || b.HeldBytes != smallBytes || len(b.Shed) != 1 || b.Shed[0] != "big" {
			t.Fatalf("%s/readyz budget %+v, want big shed and %d bytes held of %d", addr, b, smallBytes, budget)
		}
	}
	m := string(call(t, "GET", edgeOps, "ops", "/metrics", "").body)
	for _, want := range []string{
		`vitrine_replica_shed{process="edge",tenant="big"} 1`,
		`vitrine_replica_shed{process="edge",tenant="small"} 0`,
		`vitrine_replica_shed_tenants{process="edge"} 1`,
		fmt.Sprintf(`vitrine_replica_budget_bytes{process="edge"} %d`, budget),
		fmt.Sprintf(`vitrine_replica_held_bytes{process="edge"} %d`, smallBytes),
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// The shed store's reads: forwarded, and the same answers as the unbudgeted edge's.
	requestID := regexp.MustCompile(`"request_id":"[^"]*"`)
	compare := func(host, uri string, shed bool) {
		t.Helper()
		ref := call(t, "GET", free.addr, host, uri, "")
		got := call(t, "GET", edgeAddr, host, uri, "")
		if got.status != ref.status || !bytes.Equal(requestID.ReplaceAll(got.body, nil), requestID.ReplaceAll(ref.body, nil)) {
			t.Errorf("%s %s: budgeted edge %d %.300s\nreference edge %d %.300s", host, uri, got.status, got.body, ref.status, ref.body)
		}
		if ct := got.header.Get("Content-Type"); ct != ref.header.Get("Content-Type") {
			t.Errorf("%s %s: Content-Type %q, want %q", host, uri, ct, ref.header.Get("Content-Type"))
		}
		if cs := got.header.Get("Cache-Status"); (cs == cacheStatusShed) != shed || !strings.HasPrefix(cs, "vitrine-edge; ") {
			t.Errorf("%s %s: Cache-Status %q (shed: %v)", host, uri, cs, shed)
		}
	}
	for _, uri := range []string{
		"/api/products", "/api/products?page=2&per_page=7", "/api/products/featured", "/api/products/lamp-0003",
		"/api/products/lamp-0003/variants", "/api/products/no-such-lamp", "/api/categories", "/api/currencies",
		"/api/search?q=brass", "/api/search/autocomplete?q=bra", "/api/posts", "/api/flash-sales", "/api/storefront/sections",
		"/api/products/lamp-0003/reviews",
		"/index.php?rest_route=/cms/v2/posts", "/index.php?rest_route=/cms/v2/categories", "/index.php?rest_route=/cms/v2/pages",
		"/index.php?rest_route=/cms/v2/posts&_fields=id,title",
	} {
		compare("big.example.test", uri, true)
		compare("small.example.test", strings.ReplaceAll(uri, "lamp-", "cup-"), false) // from its replica
	}

	// Writes through the budgeted edge still work, and read their own write.
	created := call(t, "POST", edgeAddr, "big.example.test", "/api/admin/products", `{"title":"Desk Lamp","status":"active","prices":{"USD":4200}}`,
		"Authorization", basic("admin", pw))
	if created.status != 201 {
		t.Fatalf("write through the budgeted edge: %d %s", created.status, created.body)
	}
	wv := created.header.Get("Vitrine-Write-Version")
	if r := call(t, "GET", edgeAddr, "big.example.test", "/api/products/desk-lamp", "", "Vitrine-Min-Version", wv); r.status != 200 ||
		r.header.Get("Cache-Status") != cacheStatusShed {
		t.Fatalf("read-your-write at version %s: %d %s %s", wv, r.status, r.header.Get("Cache-Status"), r.body)
	}

	// The shed store grows far past the budget: the budgeted edge's live heap does not.
	heapBefore := liveHeap(t, edgeOps)
	long := strings.Repeat(describe, 16) // about 4 KiB a product
	for i := range 40 {
		addProducts(big, "shelf", i*25, 25, long)
	}
	var last int64
	waitFor(t, 30*time.Second, "the reference edge to hold the grown store", func() bool {
		tn := free.rep.TenantBySlug("big")
		last = tn.Version()
		return tn.Snapshot().ProductCount() == 1041
	})
	grown := free.rep.TenantBySlug("big").Snapshot().Bytes - bigBytes
	waitFor(t, 30*time.Second, "the budgeted edge to track the grown store's version", func() bool {
		r, err := tryCall("GET", edgeAddr, "big.example.test", "/api/currencies")
		if err != nil {
			return false
		}
		// At or past the version that held the grown store: later changes of the log (the
		// origin's own, answered through the forward) may have moved it on meanwhile.
		v, err := strconv.ParseInt(r.header.Get("Vitrine-Replica-Version"), 10, 64)
		return err == nil && v >= last
	})
	heapAfter := liveHeap(t, edgeOps)
	t.Logf("the shed store grew by %d bytes of JSON; the budgeted edge's live heap went from %d to %d bytes", grown, heapBefore, heapAfter)
	if grown < 3<<20 {
		t.Fatalf("the store grew by %d bytes only: the bound below proves nothing", grown)
	}
	if heapAfter-heapBefore > grown/3 {
		t.Fatalf("the budgeted edge's live heap grew by %d bytes while the shed store grew by %d", heapAfter-heapBefore, grown)
	}
	if r := call(t, "GET", edgeOps, "ops", "/readyz", ""); !strings.Contains(string(r.body), fmt.Sprintf(`"held_bytes":%d`, smallBytes)) {
		t.Fatalf("held bytes moved: %s", r.body)
	}
}

// cacheStatusShed is the Cache-Status of a shed store's read, forwarded to the origin.
const cacheStatusShed = "vitrine-edge; fwd=bypass; detail=shed"

// liveHeap returns a process's live heap after a collection: HeapAlloc from its heap profile
// (served with --pprof; gc=1 collects first).
func liveHeap(t *testing.T, ops string) int64 {
	t.Helper()
	r := call(t, "GET", ops, "ops", "/debug/pprof/heap?gc=1&debug=1", "")
	m := regexp.MustCompile(`# HeapAlloc = (\d+)`).FindSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("heap profile: %d %.200s", r.status, r.body)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}
