package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPlanValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    plan
		ok   bool
	}{
		{"defaults", plan{prefix: "vt-", regions: []string{"eu", "ap"}, edges: 2}, true},
		{"core is taken", plan{prefix: "vt-", regions: []string{"core"}, edges: 1}, false},
		{"twice", plan{prefix: "vt-", regions: []string{"eu", "eu"}, edges: 1}, false},
		{"too long for an interface name", plan{prefix: "vt-", regions: []string{"europe1"}, edges: 1}, false},
		{"upper case", plan{prefix: "vt-", regions: []string{"EU"}, edges: 1}, false},
		{"prefix without dash", plan{prefix: "vt", regions: []string{"eu"}, edges: 1}, false},
		{"no edges", plan{prefix: "vt-", regions: []string{"eu"}, edges: 0}, false},
		{"no regions", plan{prefix: "vt-", edges: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.validate(); (err == nil) != tc.ok {
				t.Fatalf("validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
	p := plan{prefix: "vt-", regions: []string{"eu", "ap"}, edges: 2}
	if got := fmt.Sprint(p.edgeAddr(2, 1), " ", p.hostVeth(2), " ", p.regionNS(1)); got != "10.77.2.11 vt-h-ap vt-eu" {
		t.Fatalf("plan names %q", got)
	}
}

// fleetBinary returns the vitrine binary the end-to-end test runs ($VITRINE_FLEET_BINARY, else
// bin/vitrine when it was built with `vitrine fleet`), or skips.
func fleetBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("VITRINE_FLEET_BINARY")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "vitrine")
		if out, _ := exec.Command(bin, "fleet", "-h").CombinedOutput(); !strings.Contains(string(out), "fleet up") {
			t.Skipf("skipped: %s is missing or older than `vitrine fleet` (make build, or set VITRINE_FLEET_BINARY)", bin)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("skipped: no vitrine binary at %s (make build, or set VITRINE_FLEET_BINARY)", bin)
	}
	return bin
}

// edgeArgs makes the edges of the test stop at once (no drain delay) when the binary drains.
func edgeArgs(bin string) []string {
	if out, _ := exec.Command(bin, "edge", "-h").CombinedOutput(); strings.Contains(string(out), "-drain-delay") {
		return []string{"--drain-delay", "0s"}
	}
	return nil
}

// One region, one edge, 20 ms each way: the fleet comes up seeded, the edge answers inside its
// region and from the host but not from the core, a write reaches it across the wire, it keeps
// answering reads while partitioned, and Down leaves nothing behind.
func TestUpDown(t *testing.T) {
	needFleet(t)
	if testing.Short() {
		t.Skip("skipped in -short: starts PostgreSQL, NATS and five processes")
	}
	bin := fleetBinary(t)
	dir := t.TempDir()
	// PostgreSQL (user postgres) must traverse to its data under dir.
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	prefix := fmt.Sprintf("vt%d-", os.Getpid()%100)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	f, err := Up(ctx, Config{Dir: dir, Binary: bin, Prefix: prefix, Regions: []string{"eu"}, EdgesPerRegion: 1,
		Link: Link{Delay: 20 * time.Millisecond}, Seed: true, Products: 20, Posts: 3, StopTimeout: 10 * time.Second, ReadyTimeout: time.Minute,
		EdgeArgs: edgeArgs(bin),
		Progress: func(m string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), m) }})
	if err != nil {
		t.Fatal(err)
	}
	down := false
	defer func() {
		if !down {
			f.Down(context.Background())
		}
	}()
	t.Logf("up in %v", time.Since(start).Round(time.Millisecond))
	st := f.State()
	edges, err := f.Edges("eu")
	if err != nil || len(edges) != 1 {
		t.Fatalf("edges %v, %v", edges, err)
	}
	edge := edges[0]
	list := edge.URL() + "/api/products?per_page=1"

	get := func(place, url string) (int, http.Header, []byte, error) {
		c, err := f.HTTPClient(place)
		if err != nil {
			return 0, nil, nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		req.Host = st.Tenant
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, body, nil
	}
	for _, place := range []string{"eu", ""} {
		if status, _, body, err := get(place, list); err != nil || status != 200 {
			t.Fatalf("GET %s from %q: %d %v %.200s", list, place, status, err, body)
		}
	}
	// A region has no route but to the core: another region's address is unreachable.
	if status, _, _, err := get("eu", "http://10.77.2.11:8080/"); err == nil {
		t.Fatalf("a region reached another region's address (status %d)", status)
	}

	// A write at the origin, seen at the far edge.
	_, _, body, err := get("eu", list)
	if err != nil {
		t.Fatal(err)
	}
	id := firstID(body)
	if id == "" {
		t.Fatalf("no product id in %.300s", body)
	}
	wreq, _ := http.NewRequestWithContext(ctx, http.MethodPatch, st.Origin.URL()+"/api/admin/products/"+id, strings.NewReader(`{"title":"Fleet renamed"}`))
	wreq.Host = st.Tenant
	wreq.SetBasicAuth(st.AdminLogin, st.AdminPassword)
	wreq.Header.Set("Content-Type", "application/json")
	hc, _ := f.HTTPClient("")
	resp, err := hc.Do(wreq)
	if err != nil {
		t.Fatal(err)
	}
	wbody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	written := time.Now()
	v, _ := strconv.ParseInt(resp.Header.Get("Vitrine-Write-Version"), 10, 64)
	if resp.StatusCode != 200 || v == 0 {
		t.Fatalf("PATCH at the origin: %d (version %q) %.300s", resp.StatusCode, resp.Header.Get("Vitrine-Write-Version"), wbody)
	}
	for {
		_, h, _, err := get("eu", list)
		if err == nil {
			if rv, _ := strconv.ParseInt(h.Get("Vitrine-Replica-Version"), 10, 64); rv >= v {
				break
			}
		}
		if time.Since(written) > 10*time.Second {
			t.Fatalf("the edge did not reach version %d in 10 s", v)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("write at the origin visible at the edge after %v (20 ms each way)", time.Since(written).Round(time.Millisecond))

	// Cut off: reads still answered from the replica, the wire drops, the host link works.
	if err := f.Partition("eu", true); err != nil {
		t.Fatal(err)
	}
	if status, _, b, err := get("eu", list); err != nil || status != 200 {
		t.Fatalf("read during the partition: %d %v %.200s", status, err, b)
	}
	ls, _ := f.Link("eu")
	t.Logf("link during the partition: to region %+v; to core partitioned %v", ls.ToRegion.Link, ls.ToCore.Partitioned)
	if err := f.Partition("eu", false); err != nil {
		t.Fatal(err)
	}
	if ls.ToCore.Counters.Ports["tcp/4222"].Frames != 0 {
		t.Fatalf("edge traffic to the hub crossed the wire: %+v (edges talk to their leaf node only)", ls.ToCore.Counters.Ports)
	}

	down = true
	if err := f.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if left, _ := namespaces(prefix); len(left) > 0 {
		t.Fatalf("namespaces left: %v", left)
	}
	if _, err := os.Stat("/sys/class/net/" + prefix + "h-eu"); err == nil {
		t.Fatalf("host link %sh-eu left", prefix)
	}
}

// firstID finds the first "id" in a JSON document (a product list, whatever its envelope).
func firstID(body []byte) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return ""
	}
	var walk func(any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if id, ok := x["id"]; ok {
				return fmt.Sprint(id)
			}
			for _, k := range []string{"products", "items", "data"} {
				if s := walk(x[k]); s != "" {
					return s
				}
			}
		case []any:
			for _, e := range x {
				if s := walk(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(v)
}
