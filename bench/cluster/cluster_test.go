package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench/cluster"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
)

// buildVitrine builds the vitrine binary the clusters run (from the build cache when unchanged;
// -trimpath, so a checkout elsewhere shares it), or returns $VITRINE_BENCH_BINARY when set (make
// test sets it to the binary it built).
func buildVitrine(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("VITRINE_BENCH_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "vitrine")
	out, err := exec.Command("go", "build", "-trimpath", "-o", bin, "vitrine/cmd/vitrine").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// gone reports whether no process has the id pid any more (a zombie counts as gone: Wait reaps
// it).
func gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// dropped reports whether the database of dsn no longer exists.
func dropped(t *testing.T, dsn string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := store.Open(ctx, dsn, store.Config{})
	if err != nil {
		return true
	}
	defer db.Close()
	return db.Ping(ctx) != nil
}

func TestClusterStartsServesAndStopsEverything(t *testing.T) {
	bin := buildVitrine(t)
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Binary: bin, DatabaseURL: storetest.ServerURL(), Origin: true, Edges: 2, CPUs: []int{0}, LogLevel: "info"})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	shop, err := c.CreateTenant(ctx, "shop", cluster.TenantOptions{Products: 30, Posts: 2})
	if err != nil {
		t.Fatalf("%v\nrelay: %s\nedge: %s", err, c.Relay.LogTail(3000), c.Edges[0].LogTail(3000))
	}
	if shop.Seeded.Products != 30 || shop.Version == 0 {
		t.Fatalf("seeded %+v at version %d", shop.Seeded, shop.Version)
	}
	pids := c.PIDs()
	if len(pids) != 5 { // nats, relay, origin, two edges
		t.Fatalf("PIDs %v, want 5", pids)
	}
	for _, p := range append([]*cluster.Process{c.Origin}, c.Edges...) {
		status, body, err := fasthttp.Get(nil, "http://"+p.OpsAddr+"/readyz")
		if err != nil || status != 200 {
			t.Fatalf("%s /readyz: %d %s %v", p.Name, status, body, err)
		}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + p.Addr + "/api/products?per_page=100")
		req.Header.SetHost(shop.Host)
		req.UseHostHeader = true
		if err := fasthttp.Do(req, resp); err != nil || resp.StatusCode() != 200 || !strings.Contains(string(resp.Body()), `"slug":"basecamp-spork-set"`) {
			t.Fatalf("%s products: %d %.300s %v", p.Name, resp.StatusCode(), resp.Body(), err)
		}
	}
	// Children are pinned.
	out, err := exec.Command("taskset", "-p", "-c", strconv.Itoa(c.Edges[0].PID)).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), ": 0") {
		t.Fatalf("edge affinity: %s %v", out, err)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	dir, dsn := c.Dir(), c.DatabaseURL
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("folder %s still exists: %v", dir, err)
	}
	if !dropped(t, dsn) {
		t.Errorf("database %s still exists", dsn)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A child that dies is reported, and the rest is still cleaned up.
func TestClusterReportsADeadChild(t *testing.T) {
	bin := buildVitrine(t)
	c, err := cluster.Start(context.Background(), cluster.Config{Binary: bin, DatabaseURL: storetest.ServerURL(), Edges: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pids := c.PIDs()
	syscall.Kill(c.Edges[0].PID, syscall.SIGKILL)
	<-c.Edges[0].Exited()
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "edge-1 exited early") {
		t.Fatalf("Err after an edge died: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
}

// Start fails cleanly: nothing is left running, no folder, no database.
func TestClusterStartFailures(t *testing.T) {
	bin := buildVitrine(t)
	// A "binary" that starts and exits at once, as a broken build would.
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'no such thing' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  cluster.Config
		want string
	}{
		{"no binary", context.Background(), cluster.Config{DatabaseURL: storetest.ServerURL()}, "required"},
		{"not a postgres URL", context.Background(), cluster.Config{Binary: bin, DatabaseURL: "mysql://x"}, "not a postgres"},
		{"no database server", context.Background(), cluster.Config{Binary: bin, DatabaseURL: "postgres://postgres@127.0.0.1:1/x?sslmode=disable"}, "connect"},
		{"the binary exits", context.Background(), cluster.Config{Binary: broken, DatabaseURL: storetest.ServerURL()}, "no such thing"},
		{"pinned to a CPU that does not exist", context.Background(), cluster.Config{Binary: bin, DatabaseURL: storetest.ServerURL(), CPUs: []int{4096}}, "nats"},
		{"context cancelled", cancelled, cluster.Config{Binary: bin, DatabaseURL: storetest.ServerURL()}, "canceled"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.DatabaseName = fmt.Sprintf("vitrine_bench_failure_%d_%d", os.Getpid(), i)
			tmpBefore, _ := filepath.Glob(filepath.Join(os.TempDir(), "vitrine-bench-*"))
			c, err := cluster.Start(tt.ctx, tt.cfg)
			if err == nil {
				c.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if dsn := strings.Replace(storetest.ServerURL(), "/postgres?", "/"+tt.cfg.DatabaseName+"?", 1); !dropped(t, dsn) {
				t.Errorf("a failed Start left the database %s", tt.cfg.DatabaseName)
			}
			tmpAfter, _ := filepath.Glob(filepath.Join(os.TempDir(), "vitrine-bench-*"))
			if len(tmpAfter) > len(tmpBefore) {
				t.Errorf("a failed Start left a folder: %v", tmpAfter)
			}
		})
	}
}

// A catalog cloned from a seeded template and published directly to the stream is served by an
// edge like one that came through the relay: every product, under its new slug.
func TestPublishCloneIsServed(t *testing.T) {
	bin := buildVitrine(t)
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Binary: bin, DatabaseURL: storetest.ServerURL(), Edges: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tpl, err := c.CreateTenant(ctx, "tpl", cluster.TenantOptions{Products: 12, Posts: 1})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := c.ReadCatalog(ctx, tpl)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := c.RegisterTenant(ctx, "copies", 3)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.PublishClones(ctx, []*cluster.Tenant{copies}, cat, []int{1000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	st := stats[0]
	if st.Products != 1000 || st.Variants < 1000 || st.Messages <= st.Products+st.Variants || st.RawJSON == 0 {
		t.Fatalf("clone stats %+v", st)
	}
	get := func(uri string) (int, string) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + c.Edges[0].Addr + uri)
		req.Header.SetHost(copies.Host)
		req.UseHostHeader = true
		if err := fasthttp.Do(req, resp); err != nil {
			return 0, err.Error()
		}
		return resp.StatusCode(), string(resp.Body())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := get("/api/products?per_page=1")
		if status == 200 && strings.Contains(body, `"total":1000,`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge never listed the 1000 cloned products: %d %.300s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status, body := get("/api/products/" + st.LastSlug); status != 200 || !strings.Contains(body, st.LastTitle) {
		t.Fatalf("last product %s: %d %.300s", st.LastSlug, status, body)
	}
	// The template's own tenant is untouched.
	if err := c.WaitServed(ctx, tpl, tpl.Version); err != nil {
		t.Fatal(err)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
}
