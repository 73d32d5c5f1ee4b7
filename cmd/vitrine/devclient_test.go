package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// newcomerClient is what a newcomer types first: the npm wpapi client discovering the API from
// the URL `vitrine dev` prints, with no tenant header and no custom name lookup, then listing
// posts through namespace('cms/v2'). It prints one JSON line.
const newcomerClient = `
const WPAPI = require('wpapi');
WPAPI.discover(process.argv[1]).then(async (site) => {
  const posts = await site.namespace('cms/v2').posts().get();
  console.log(JSON.stringify({ endpoint: site._options.endpoint, count: posts.length,
    total: Number(posts._paging && posts._paging.total), link: posts[0] && posts[0].link }));
}).catch((e) => { console.error(String((e && e.stack) || e)); process.exit(1); });
`

// TestDevWordPressClient runs `vitrine dev` (this test binary as the command, see TestMain) and
// points the npm wpapi client at the edge's loopback address as a newcomer would. The database
// starts as an earlier dev left it (the demo store's base on demo.localhost, which Node cannot
// resolve); dev moves the store to the edge's own address. A second start on another edge port
// moves the base again, and demo.localhost and X-Tenant-Slug keep working.
func TestDevWordPressClient(t *testing.T) {
	t.Parallel()
	node, e2e, _ := e2eTools(t, "wpapi", false)
	dsn := storetest.NewDatabase(t)
	dataDir := t.TempDir()
	ctx := context.Background()

	edgeA := freeAddr(t)
	_, portA, _ := net.SplitHostPort(edgeA)
	db, err := store.Open(ctx, dsn, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	old := &schema.Tenant{Slug: "demo", Name: "Vitrine Demo Store", BaseURL: "http://demo.localhost:" + portA, Timezone: "Europe/Paris", Currencies: []string{"USD"}}
	if err := db.CreateTenant(ctx, old); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for i, edgeAddr := range []string{edgeA, freeAddr(t)} {
		_, port, _ := net.SplitHostPort(edgeAddr)
		base := "http://127.0.0.1:" + port
		stop := startDevProcess(t, dsn, dataDir, edgeAddr)

		var info devInfo
		b, err := os.ReadFile(filepath.Join(dataDir, "dev.json"))
		if err != nil || json.Unmarshal(b, &info) != nil {
			t.Fatalf("dev.json: %v %s", err, b)
		}
		if info.TenantURL != base {
			t.Fatalf("start %d: tenant_url %q, want %q", i, info.TenantURL, base)
		}

		// Discovery from the index URL the first time, from the site root the second.
		site := base + "/index.php?rest_route=/"
		if i == 1 {
			site = base + "/"
		}
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		cmd := exec.CommandContext(cctx, node, "-e", newcomerClient, site)
		cmd.Dir = e2e
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("start %d: node wpapi discover(%s): %s", i, site, out)
		if err != nil {
			t.Fatalf("wpapi failed: %v", err)
		}
		if strings.Contains(string(out), "assuming default routes") {
			t.Fatalf("wpapi did not discover the routes")
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var got struct {
			Endpoint string
			Count    int
			Total    int
			Link     string
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
			t.Fatalf("wpapi output: %v", err)
		}
		if got.Endpoint != base+"/index.php?rest_route=/" || got.Count == 0 || got.Count != min(got.Total, 10) || !strings.HasPrefix(got.Link, base+"/") {
			t.Fatalf("start %d: wpapi saw %+v", i, got)
		}

		// Without a tenant header, every absolute URL names the edge's address; the store's host
		// under the platform domain and the tenant header still resolve it.
		r := call(t, "GET", edgeAddr, "", "/index.php?rest_route=/", "")
		idx := r.json(t)
		if r.status != 200 || idx["url"] != base || idx["home"] != base ||
			r.header.Get("Link") != "<"+base+"/index.php?rest_route=/>; rel=\"https://api.w.org/\"" ||
			!strings.Contains(string(r.body), `"authorization":"`+base+`/cms-admin/authorize-application.php"`) {
			t.Fatalf("start %d: index %d Link %q: %.400s", i, r.status, r.header.Get("Link"), r.body)
		}
		for _, h := range [][]string{{"demo.localhost:" + port}, {"", "X-Tenant-Slug", "demo"}} {
			r := call(t, "GET", edgeAddr, h[0], "/index.php?rest_route=/cms/v2/posts&per_page=1", "", h[1:]...)
			if r.status != 200 || !strings.Contains(string(r.body), `"link":"`+base+`/`) {
				t.Fatalf("start %d, %v: %d %.300s", i, h, r.status, r.body)
			}
		}
		stop()
	}
}

// startDevProcess runs `vitrine dev` with a small demo store on loopback ports, waits until it
// has written dev.json, and returns a function that stops it with SIGTERM.
func startDevProcess(t *testing.T, dsn, dataDir, edgeAddr string) func() {
	t.Helper()
	os.Remove(filepath.Join(dataDir, "dev.json"))
	cmd := exec.Command(os.Args[0], "dev", "-data-dir", dataDir, "-database-url", dsn, "-log-level", relayLogLevel(),
		"-edge-addr", edgeAddr, "-origin-addr", freeAddr(t), "-ops-addr", freeAddr(t), "-nats-addr", freeAddr(t),
		"-products", "30", "-posts", "12", "-rate-limit", "-1")
	cmd.Env = append(os.Environ(), "VITRINE_TEST_MAIN=1")
	if testing.Verbose() {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("vitrine dev did not stop within 30 s of SIGTERM")
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var info devInfo
		if b, err := os.ReadFile(filepath.Join(dataDir, "dev.json")); err == nil && json.Unmarshal(b, &info) == nil && info.AdminPassword != "" {
			return stop
		}
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("vitrine dev exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("vitrine dev was not ready within 2 minutes")
		}
	}
}

// TestDevStoreAt checks where dev serves the demo store for each form of -edge-addr.
func TestDevStoreAt(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080", ":9000": "http://127.0.0.1:9000", "0.0.0.0:8080": "http://127.0.0.1:8080",
		"[::]:8080": "http://127.0.0.1:8080", "Localhost:8080": "http://localhost:8080", "127.0.0.2:80": "http://127.0.0.2:80",
		"[::1]:8080": "", "127.0.0.1:0": "", "127.0.0.1": "", "127.0.0.1:http": "",
	} {
		ds, err := devStoreAt(addr, "demo", "localhost")
		if ds.base != want || (err == nil) != (want != "") {
			t.Errorf("%s: %q %v, want %q", addr, ds.base, err, want)
		}
	}
	ds, _ := devStoreAt("127.0.0.1:8080", "demo", "localhost")
	if ds.host != "127.0.0.1" || ds.alias != "demo.localhost:8080" {
		t.Errorf("%+v", ds)
	}
}

// TestPlaceDemo checks that the demo store takes the edge's address from a store an earlier
// start served there (with another -tenant), whose base goes back to its platform host.
func TestPlaceDemo(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.NewDatabase(t), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	shop := &schema.Tenant{Slug: "shop", Name: "Shop", BaseURL: "http://127.0.0.1:8080", Domains: []string{"127.0.0.1", "shop.example"}, Currencies: []string{"USD"}}
	demo := &schema.Tenant{Slug: "demo", Name: "Demo", BaseURL: "http://demo.localhost:8080", Currencies: []string{"USD"}}
	for _, tn := range []*schema.Tenant{shop, demo} {
		if err := db.CreateTenant(ctx, tn); err != nil {
			t.Fatal(err)
		}
	}
	ds, _ := devStoreAt("127.0.0.1:8081", "demo", "localhost")
	got, err := placeDemo(ctx, db, demo, ds)
	if err != nil {
		t.Fatal(err)
	}
	if got.BaseURL != "http://127.0.0.1:8081" || !slices.Equal(got.Domains, []string{"127.0.0.1"}) {
		t.Errorf("demo: %s %v", got.BaseURL, got.Domains)
	}
	if shop, _ = db.TenantBySlug(ctx, "shop"); shop.BaseURL != "http://shop.localhost:8081" || !slices.Equal(shop.Domains, []string{"shop.example"}) {
		t.Errorf("shop: %s %v", shop.BaseURL, shop.Domains)
	}
	// Placing it again changes nothing.
	again, err := placeDemo(ctx, db, got, ds)
	if err != nil || again.Version != got.Version {
		t.Errorf("again: %v, version %d then %d", err, got.Version, again.Version)
	}
}
