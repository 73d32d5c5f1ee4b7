package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"vitrine/edge/replica"
	"vitrine/origin/store"
)

func metricsText(set *metrics.Set) string {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	return b.String()
}

// `vitrine version` names the module version, the VCS revision (and whether the tree was
// modified), the Go release and the change schema; what the build did not record reads unknown.
func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want []string
	}{
		{"vcs stamped", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "vitrine", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "f11b5c3abc"}, {Key: "vcs.time", Value: "2026-11-25T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			true, []string{"vitrine v1.2.3\n", "revision       f11b5c3abc (modified)\n", "built from     2026-11-25T10:00:00Z\n", "go             go1.26.0\n", "change schema  1\n"}},
		{"no vcs (go build -buildvcs=false, go test)", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "vitrine", Version: "(devel)"}},
			true, []string{"vitrine (devel)\n", "revision       unknown\n", "built from     unknown\n"}},
		{"no build info", nil, false, []string{"vitrine unknown\n", "revision       unknown\n", "go             go1."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildFrom(tc.bi, tc.ok).String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("version output lacks %q:\n%s", w, got)
				}
			}
		})
	}
	var out bytes.Buffer
	if err := runVersion(&out, nil); err != nil || !strings.HasPrefix(out.String(), "vitrine ") || !strings.Contains(out.String(), "change schema  1") {
		t.Fatalf("vitrine version: %v\n%s", err, out.String())
	}
	set := metrics.NewSet()
	observeBuild(set)
	observeBuild(set) // dev registers twice on one set: still one series
	text := metricsText(set)
	if n := strings.Count(text, "vitrine_build_info{"); n != 1 || !strings.Contains(text, `goversion="go1.`) || !strings.Contains(text, `change_schema="1"} 1`+"\n") {
		t.Fatalf("build info gauge (%d series):\n%s", n, text)
	}
}

// --access-log: off by default, stderr, or a file appended to.
func TestOpenAccessLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	for _, tc := range []struct {
		spec   string
		stderr bool
		file   bool
	}{{"", false, false}, {"off", false, false}, {"stderr", true, false}, {path, false, true}} {
		w, closeIt, err := openAccessLog(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if (w == nil) == (tc.stderr || tc.file) || (tc.stderr && w != os.Stderr) {
			t.Fatalf("%q: writer %v", tc.spec, w)
		}
		if l := newAccessLog(w, "edge"); (l == nil) != (w == nil) {
			t.Fatalf("%q: access log %v for writer %v", tc.spec, l, w)
		}
		if tc.file {
			fmt.Fprintln(w, "line")
		}
		closeIt()
	}
	if b, _ := os.ReadFile(path); string(b) != "line\n" {
		t.Fatalf("file holds %q", b)
	}
	if _, _, err := openAccessLog(filepath.Join(t.TempDir(), "no", "such", "dir", "x.log")); err == nil {
		t.Fatal("an unwritable path was accepted")
	}
}

// The origin's abuse limits and metrics, through a whole system: argon2id under a memory budget
// answers an overflowing sign-in 503 with Retry-After (never 500) and counts it under its route;
// the origin's read floor refuses a far-ahead floor at once and times a near one out, as edges
// do; request, transaction and apply-lag histograms in `le` buckets; pool and cache gauges.
func TestOriginAbuseLimitsAndMetrics(t *testing.T) {
	set := metrics.NewSet()
	sh := newShopWith(t, func(s *system) {
		s.originConfig.Metrics = set
		s.originConfig.KDFMemory = 1 // one hash at a time
		s.originConfig.KDFWait = time.Millisecond
		s.originConfig.FloorWait = 200 * time.Millisecond
	})
	s := sh.s
	if r := sh.do("POST", "/api/customer/register", "", `{"email":"ann@example.com","password":"correct horse battery"}`); r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}

	t.Run("sign-in flood past the KDF budget", func(t *testing.T) {
		const n = 12 // under the per-address sign-in throttle (20 a minute)
		var wg sync.WaitGroup
		resps := make([]*response, n)
		start := make(chan struct{})
		for i := range resps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Unknown emails cost a verification too, and no per-account throttle is shared.
				resps[i] = sh.do("POST", "/api/customer/login", "", fmt.Sprintf(`{"email":"nobody%d@example.com","password":"wrong password!"}`, i))
			}()
		}
		close(start)
		wg.Wait()
		busy := 0
		for _, r := range resps {
			switch r.status {
			case 401:
			case 503:
				busy++
				if r.header.Get("Retry-After") == "" || r.json(t)["error"] == nil {
					t.Errorf("503 without Retry-After or the commerce error shape: %v %s", r.header, r.body)
				}
			default:
				t.Errorf("sign-in during a flood: %d %s", r.status, r.body)
			}
		}
		if busy == 0 {
			t.Fatalf("%d parallel sign-ins with a budget of one hash and a 1ms wait: none refused", n)
		}
		if text := metricsText(set); !strings.Contains(text, `vitrine_http_requests_total{process="origin",route="customer.login POST",status="503"} `) {
			t.Errorf("the refused sign-ins are not counted under their route:\n%s", grepMetric(text, `route="customer.login POST"`))
		}
	})

	t.Run("a write's timings", func(t *testing.T) {
		timing := regexp.MustCompile(`^app;dur=([0-9]+\.[0-9]{3}), replica;dur=([0-9]+\.[0-9]{3})$`)
		waits := func() int {
			m := regexp.MustCompile(`(?m)^vitrine_origin_write_wait_seconds_count ([0-9]+)$`).FindStringSubmatch(metricsText(set))
			if m == nil {
				return 0
			}
			n, _ := strconv.Atoi(m[1])
			return n
		}
		before := waits()
		for i := range 2 {
			r := call(t, "POST", s.originAddr, sh.host, "/api/admin/products", fmt.Sprintf(`{"title":"Timed %d","prices":{"USD":100}}`, i), "Authorization", sh.auth)
			if r.status != 201 || r.header.Get("Vitrine-Write-Version") == "" {
				t.Fatalf("create: %d %v %s", r.status, r.header, r.body)
			}
			m := timing.FindStringSubmatch(r.header.Get("Server-Timing"))
			if m == nil {
				t.Fatalf("Server-Timing %q, want app and replica durations", r.header.Get("Server-Timing"))
			}
			wv, _ := strconv.ParseInt(r.header.Get("Vitrine-Write-Version"), 10, 64)
			if rv, _ := strconv.ParseInt(r.header.Get("Vitrine-Replica-Version"), 10, 64); rv < wv {
				t.Errorf("the answer came before the origin's replica had the write: %v", r.header)
			}
		}
		if r := call(t, "GET", s.originAddr, sh.host, "/api/admin/products", "", "Authorization", sh.auth); r.header.Get("Server-Timing") != "" {
			t.Errorf("a read answered with a write's timings: %q", r.header.Get("Server-Timing"))
		}
		if n := waits() - before; n != 2 {
			t.Errorf("%d waits recorded for two writes:\n%s", n, grepMetric(metricsText(set), "vitrine_origin_write_wait"))
		}
	})

	t.Run("origin read floor", func(t *testing.T) {
		origin := s.originAddr
		for _, tc := range []struct {
			name    string
			floor   string
			status  int
			maxTime time.Duration
		}{
			{"far ahead refused at once", "999999999", 400, 150 * time.Millisecond},
			{"near ahead waits its bound", fmt.Sprint(sh.replicaVersion(t) + 50), 503, 2 * time.Second},
		} {
			t.Run(tc.name, func(t *testing.T) {
				begin := time.Now()
				r := call(t, "GET", origin, sh.host, "/api/products", "", "Vitrine-Min-Version", tc.floor)
				took := time.Since(begin)
				if r.status != tc.status || took > tc.maxTime || r.json(t)["error"] == nil {
					t.Fatalf("floor %s at the origin: %d after %s, want %d within %s: %s", tc.floor, r.status, took, tc.status, tc.maxTime, r.body)
				}
				if tc.status == 503 && r.header.Get("Retry-After") == "" {
					t.Fatal("503 without Retry-After")
				}
			})
		}
		text := metricsText(set)
		for _, want := range []string{
			`vitrine_http_requests_total{process="origin",route="products.list GET",status="400"} 1`,
			`vitrine_http_requests_total{process="origin",route="products.list GET",status="503"} 1`,
			`vitrine_http_request_duration_seconds_bucket{process="origin",route="products.list GET",status="5xx",le="+Inf"} 1`,
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("origin metrics lack %s:\n%s", want, grepMetric(text, `route="products.list GET"`))
			}
		}
	})

	t.Run("transaction, pool, apply lag and cache series", func(t *testing.T) {
		ms := metrics.NewSet()
		db, err := store.Open(context.Background(), s.dsn, store.Config{OnTx: txTimer(ms)})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		observeDB(ms, db)
		if err := db.Tx(context.Background(), func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		nc := s.connect()
		defer nc.Close()
		rep, fol := s.follow(ctx, nc, s.fc.PublicFilters(nil), replica.Config{PlatformDomain: "vitrine.test"})
		observe(ms, "edge", rep, fol, nil)
		var edgeSrv = s.replicas[len(s.replicas)-1].edge
		observeEdge(ms, edgeSrv)
		waitFor(t, 10*time.Second, "the follower's bootstrap", rep.Ready)
		sh.product("Timed", 1000, 5)
		waitFor(t, 10*time.Second, "an applied transaction timed", func() bool {
			return strings.Contains(metricsText(ms), `vitrine_replica_apply_lag_seconds_count{process="edge"} `) &&
				!strings.Contains(metricsText(ms), `vitrine_replica_apply_lag_seconds_count{process="edge"} 0`+"\n")
		})
		sh.do("GET", "/api/products", "", "")
		text := metricsText(ms)
		for _, want := range []string{
			`vitrine_store_tx_duration_seconds_bucket{le="+Inf"} `,
			`vitrine_store_pool_connections{state="total"} `,
			`vitrine_store_pool_max_connections `,
			`vitrine_store_pool_acquire_wait_seconds_total `,
			`vitrine_replica_apply_lag_seconds_bucket{process="edge",le="60"} `,
			`vitrine_edge_cache_bytes `,
			`vitrine_edge_cache_max_bytes `,
			`vitrine_build_info{`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if strings.Contains(text, "vmrange") {
			t.Error("a histogram in vmrange buckets")
		}
		if t.Failed() {
			t.Log(text)
		}
	})
}

func grepMetric(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// replicaVersion is the store's version as the edge reports it.
func (sh *shop) replicaVersion(t *testing.T) int64 {
	t.Helper()
	r := sh.do("GET", "/api/products", "", "")
	var v int64
	fmt.Sscan(r.header.Get("Vitrine-Replica-Version"), &v)
	if v <= 0 {
		t.Fatalf("no Vitrine-Replica-Version: %v", r.header)
	}
	return v
}
