package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

var pubOnly = []schema.Visibility{schema.Pub}

func writeVersion(t testing.TB, r *response) int64 {
	t.Helper()
	v, err := strconv.ParseInt(r.header.Get("Vitrine-Write-Version"), 10, 64)
	if err != nil {
		t.Fatalf("no Vitrine-Write-Version on a write (%d): %s", r.status, r.body)
	}
	return v
}

// Create, update and delete of a product at the origin show up at every edge in order: an edge
// never serves an older version after a newer one.
func TestWritesReachEdgesInOrder(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	edges := []*component{s.startEdge(edge.Config{}), s.startEdge(edge.Config{})}
	_, pw := s.tenant("shop")
	host, auth := "shop.example.test", basic("admin", pw)

	created := call(t, "POST", s.originAddr, host, "/api/admin/products",
		`{"title":"Ordered Lamp","status":"active","prices":{"USD":1000}}`, "Authorization", auth)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	id := int64(created.json(t)["id"].(float64))
	slug := created.json(t)["slug"].(string)
	// Every edge has the product before the watchers start: a 404 they saw before the create
	// arrived would read as a resurrection after the deletion.
	for _, e := range edges {
		if r := call(t, "GET", e.addr, host, "/api/products/"+slug, "", "Vitrine-Min-Version", fmt.Sprint(writeVersion(t, created))); r.status != 200 {
			t.Fatalf("edge at the create's version: %d %s", r.status, r.body)
		}
	}

	// Watchers read the product from each edge as fast as they can and record what they see.
	var stop atomic.Bool
	var wg sync.WaitGroup
	type seen struct {
		price   int64
		version int64
		gone    bool
	}
	observed := make([][]seen, len(edges))
	for i, e := range edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r := call(t, "GET", e.addr, host, "/api/products/"+slug, "")
				switch r.status {
				case 200:
					m := r.json(t)
					observed[i] = append(observed[i], seen{price: int64(m["price"].(map[string]any)["amount"].(float64)), version: int64(m["version"].(float64))})
				case 404:
					observed[i] = append(observed[i], seen{gone: true})
				default:
					t.Errorf("edge %d answered %d: %s", i, r.status, r.body)
					return
				}
			}
		}()
	}
	const updates = 40
	var last int64
	for i := 1; i <= updates; i++ {
		// Alternate the way in: straight to the origin, or forwarded by an edge.
		addr := s.originAddr
		if i%2 == 0 {
			addr = edges[i%len(edges)].addr
		}
		r := call(t, "PATCH", addr, host, fmt.Sprintf("/api/admin/products/%d", id), fmt.Sprintf(`{"prices":{"USD":%d}}`, 1000+i), "Authorization", auth)
		if r.status != 200 {
			t.Fatalf("update %d: %d %s", i, r.status, r.body)
		}
		last = writeVersion(t, r)
	}
	for _, e := range edges {
		r := call(t, "GET", e.addr, host, "/api/products/"+slug, "", "Vitrine-Min-Version", fmt.Sprint(last))
		if r.status != 200 || int64(r.json(t)["price"].(map[string]any)["amount"].(float64)) != 1000+updates {
			t.Fatalf("edge at the last write's version: %d %s", r.status, r.body)
		}
	}
	del := call(t, "DELETE", s.originAddr, host, fmt.Sprintf("/api/admin/products/%d", id), "", "Authorization", auth)
	if del.status != 200 {
		t.Fatalf("delete: %d %s", del.status, del.body)
	}
	dv := writeVersion(t, del)
	for _, e := range edges {
		if r := call(t, "GET", e.addr, host, "/api/products/"+slug, "", "Vitrine-Min-Version", fmt.Sprint(dv)); r.status != 404 {
			t.Fatalf("deleted product still served: %d", r.status)
		}
	}
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	for i, obs := range observed {
		var prev seen
		gone := false
		for _, o := range obs {
			switch {
			case gone && !o.gone:
				t.Fatalf("edge %d served the product again after its deletion", i)
			case o.gone:
				gone = true
			case o.version < prev.version || o.price < prev.price:
				t.Fatalf("edge %d went back from version %d (price %d) to %d (price %d)", i, prev.version, prev.price, o.version, o.price)
			default:
				prev = o
			}
		}
		if len(obs) < 10 {
			t.Fatalf("edge %d was read only %d times", i, len(obs))
		}
		t.Logf("edge %d: %d reads", i, len(obs))
	}
}

// With the relay paused, a read carrying the write's version waits and answers the new value
// once the relay resumes; held past the bound it gets 503, never the old value. A write
// forwarded through an edge is visible on that edge when its response arrives.
func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	s := newSystem(t, systemOptions{})
	rel := s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{FloorWait: 3 * time.Second})
	short := s.startEdge(edge.Config{FloorWait: 300 * time.Millisecond})
	_, pw := s.tenant("shop")
	host, auth := "shop.example.test", basic("admin", pw)
	r := call(t, "POST", e.addr, host, "/api/admin/products", `{"title":"Kettle","slug":"kettle","status":"active","prices":{"USD":2500}}`, "Authorization", auth)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := int64(r.json(t)["id"].(float64))

	t.Run("forwarded write is visible on its edge", func(t *testing.T) {
		for i := 0; i < 20; i++ {
			title := fmt.Sprintf("Kettle %d", i)
			w := call(t, "PATCH", e.addr, host, fmt.Sprintf("/api/admin/products/%d", id), `{"title":"`+title+`"}`, "Authorization", auth)
			if w.status != 200 {
				t.Fatalf("write: %d %s", w.status, w.body)
			}
			got := call(t, "GET", e.addr, host, "/api/products/kettle", "")
			if got.json(t)["title"] != title {
				t.Fatalf("read after write on the same edge: %s, want %q", got.body, title)
			}
		}
	})

	t.Run("floor waits for a paused relay", func(t *testing.T) {
		rel.stop()
		w := call(t, "PATCH", s.originAddr, host, fmt.Sprintf("/api/admin/products/%d", id), `{"title":"After the pause"}`, "Authorization", auth)
		if w.status != 200 {
			t.Fatalf("write with the relay paused: %d %s", w.status, w.body)
		}
		v := writeVersion(t, w)
		// Held past the bound: 503, never the old value.
		held := call(t, "GET", short.addr, host, "/api/products/kettle", "", "Vitrine-Min-Version", fmt.Sprint(v))
		if held.status != 503 || held.header.Get("Retry-After") == "" || strings.Contains(string(held.body), "Kettle") {
			t.Fatalf("floor past the bound: %d %s", held.status, held.body)
		}
		if m := held.json(t); m["code"] != "unavailable" || m["error"] == "" {
			t.Fatalf("error shape: %s", held.body)
		}
		go func() {
			time.Sleep(500 * time.Millisecond)
			s.startRelay(relay.Config{})
		}()
		start := time.Now()
		got := call(t, "GET", e.addr, host, "/api/products/kettle?vitrine_min_version="+fmt.Sprint(v), "")
		if got.status != 200 || got.json(t)["title"] != "After the pause" {
			t.Fatalf("floor read after the relay resumed: %d %s", got.status, got.body)
		}
		if waited := time.Since(start); waited < 400*time.Millisecond {
			t.Fatalf("answered after %s, before the relay resumed", waited)
		}
		if rv, _ := strconv.ParseInt(got.header.Get("Vitrine-Replica-Version"), 10, 64); rv < v {
			t.Fatalf("Vitrine-Replica-Version %d below the floor %d", rv, v)
		}
	})
}

// An edge started after the writes, with the origin stopped, serves the whole catalog from the
// stream alone; with the origin down every public read answers 200 and forwarded writes get a
// prompt JSON 503.
func TestEdgeServesFromTheStreamAlone(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	o := s.startOrigin()
	tn, pw := s.tenant("shop")
	ctx := context.Background()
	var postID schema.PostID
	_, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		c := &schema.Category{Slug: "lamps", Name: "Lamps"}
		if err := tx.CreateCategory(ctx, tn, c); err != nil {
			return err
		}
		for i := 0; i < 60; i++ {
			p := &schema.Product{Slug: fmt.Sprintf("lamp-%d", i), Title: fmt.Sprintf("Lamp %d", i), Status: schema.ProductActive,
				Prices: schema.Prices{"USD": int64(1000 + i)}, CategoryIDs: []schema.CategoryID{c.ID}, Featured: i%10 == 0}
			if err := tx.CreateProduct(ctx, tn, p); err != nil {
				return err
			}
			if err := tx.CreateVariant(ctx, tn, &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("L-%d", i)}, Stock: 9}); err != nil {
				return err
			}
		}
		post := &schema.Post{Title: "News", Content: "Body", Status: schema.StatusPublish, Author: 1, CommentStatus: "open", PingStatus: "open",
			Format: "standard", Slug: "news", DateGMT: tx.Now(), ModifiedGMT: tx.Now()}
		err := tx.CreatePost(ctx, tn, post)
		postID = post.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s.converged(o, []schema.Visibility{schema.Pub, schema.Priv}, "shop")
	o.stop()

	e := s.startEdge(edge.Config{})
	s.converged(e, pubOnly, "shop")
	host := "shop.example.test"
	if r := call(t, "GET", e.addr, host, "/api/products?per_page=100", ""); r.status != 200 || r.json(t)["total"].(float64) != 60 {
		t.Fatalf("catalog from the stream: %d %s", r.status, r.body)
	}
	for _, uri := range []string{"/api/products", "/api/products/featured", "/api/products/lamp-3", "/api/products/lamp-3/variants",
		"/api/categories", "/api/currencies", "/index.php?rest_route=/cms/v2/posts", "/index.php?rest_route=/cms/v2/posts/" + fmt.Sprint(postID)} {
		if r := call(t, "GET", e.addr, host, uri, ""); r.status != 200 {
			t.Errorf("%s with the origin down: %d %s", uri, r.status, r.body)
		}
	}
	for _, w := range []struct{ method, uri, code string }{
		{"POST", "/api/admin/products", "unavailable"},
		{"PATCH", "/api/admin/products/1", "unavailable"},
		{"POST", "/index.php?rest_route=/cms/v2/posts", "rest_origin_unavailable"},
	} {
		start := time.Now()
		r := call(t, w.method, e.addr, host, w.uri, `{"title":"x"}`, "Authorization", basic("admin", pw))
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s %s took %s with the origin down", w.method, w.uri, took)
		}
		if r.status != 503 || r.header.Get("Retry-After") == "" || r.json(t)["code"] != w.code {
			t.Errorf("%s %s with the origin down: %d %s", w.method, w.uri, r.status, r.body)
		}
	}
}
