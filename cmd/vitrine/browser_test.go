package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestBrowserStorefront proves CORS and the shopper flow in a real browser: a page served from
// another origin than the API browses products, adds one to a cart with X-Cart-Session, checks
// out as a guest with an Idempotency-Key, and reads its own write (the product's availability
// crossing) with vitrine_min_version, in headless Chromium driven by playwright-core
// (testdata/e2e/storefront.mjs). `make test` installs Chromium and the packages of testdata/e2e; without them the test
// is skipped with the reason.
func TestBrowserStorefront(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, chromium := e2eTools(t, "playwright-core", true)

	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	tn, _ := s.tenant("shop")
	sh := &shop{s: s, t: t, tn: tn, edge: e.addr, host: "shop.example.test"}
	sh.product("Last Lantern", 4200, 1)

	// The storefront's own origin: another port of the loopback, serving the static page.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(e2e)), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	page := "http://" + ln.Addr().String() + "/storefront.html?" + url.Values{"api": {"http://" + e.addr}, "tenant": {"shop"}}.Encode()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(e2e, "storefront.mjs"))
	cmd.Env = append(os.Environ(), "STOREFRONT_URL="+page, "CHROMIUM="+chromium)
	cmd.Dir = e2e
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	var got struct {
		CartTotal, Reference, Status, Availability, Error, Log string
		ConsoleErrors                                          []string
	}
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); jerr != nil || err != nil {
		t.Fatalf("browser run failed: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	t.Logf("browser: %+v", got)
	if got.CartTotal != "42.00" || got.Status != schema.OrderPaid || !strings.HasPrefix(got.Availability, "out_of_stock") {
		t.Fatalf("the page showed %+v", got)
	}
	if _, ok := schema.NormalizeOrderReference(got.Reference); !ok {
		t.Fatalf("order reference %q", got.Reference)
	}
	// The order is the guest's, in the database.
	sh.settle(func(tx *store.Tx) error {
		o, err := tx.OrderByReference(context.Background(), tn, got.Reference)
		if err == nil && (o == nil || o.Email != "browser@example.com") {
			t.Errorf("order %s in the database: %+v", got.Reference, o)
		}
		return err
	})
}
