package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/relay"
)

// edgeProcess is a `vitrine edge` process of a rolling test, on addresses that survive its
// restarts.
type edgeProcess struct {
	addr, ops string
	proc      *component
}

// startEdgeProcess starts `vitrine edge` on e's addresses with the given drain delay.
func (s *system) startEdgeProcess(e *edgeProcess, media, drainDelay string) {
	s.t.Helper()
	env := []string{"VITRINE_NATS_URL=" + s.ns.URL(), "VITRINE_EDGE_SECRET=" + s.edgeSecret, "VITRINE_PLATFORM_DOMAIN=vitrine.test",
		"VITRINE_LOG_LEVEL=" + relayLogLevel()}
	e.proc = s.startProcess(env, "edge", "--addr", e.addr, "--ops-addr", e.ops, "--origin-url", "http://"+s.originAddr,
		"--media-store", "fs:"+media, "--rate-limit", "-1", "--drain-delay", drainDelay, "--drain-timeout", "5s")
}

// waitExit waits for a process to end and fails unless it exited 0.
func waitExit(t *testing.T, c *component, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-c.done:
	case <-time.After(within):
		t.Fatalf("%s still running %s after SIGTERM", c.name, within)
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("%s exited %d after SIGTERM, want 0", c.name, code)
	}
	return time.Since(start)
}

// probeClient polls readiness as a load balancer does: a fresh connection each time, short
// timeout.
var probeClient = &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}

// readyz returns the status and body of a /readyz (0 when it did not answer).
func readyz(addr string) (int, string) {
	resp, err := probeClient.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// addProducts writes n products prefix-0000… in one transaction.
func (s *system) addProducts(tn *schema.Tenant, prefix string, from, n int) {
	s.t.Helper()
	ctx := context.Background()
	if err := s.db.Tx(ctx, func(tx *store.Tx) error {
		for i := from; i < from+n; i++ {
			p := &schema.Product{Slug: fmt.Sprintf("%s-%04d", prefix, i), Title: fmt.Sprintf("Brass %s %d", prefix, i),
				Description: "Made by hand from brass and oak.", Status: schema.ProductActive, Prices: schema.Prices{"USD": int64(1000 + i)}}
			if err := tx.CreateProduct(ctx, tn, p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
}

// A rolling restart of every edge under open-loop read load fails no request (issue 19): a
// client-side balancer that, like a Kubernetes Service, sends only to edges whose /readyz
// answered 200 at its last poll (every 100 ms) sends 200 requests a second (product pages,
// search, a list) while each of three edge processes in turn gets SIGTERM, drains (/readyz 503
// "draining" while it still serves, Connection: close on its answers), exits 0, and is replaced
// on the same addresses. Every request must get a 200 with the right body.
func TestRollingRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	tn, _ := s.tenant("shop")
	s.addProducts(tn, "lamp", 0, 20)
	media := t.TempDir()
	const host = "shop.example.test"
	drainDelay := 700 * time.Millisecond
	// $VITRINE_TEST_ROLLING_DRAIN_DELAY measures other delays (0s: what a restart without the
	// drain fails).
	if d, err := time.ParseDuration(os.Getenv("VITRINE_TEST_ROLLING_DRAIN_DELAY")); err == nil {
		drainDelay = d
	}

	edges := make([]*edgeProcess, 3)
	for i := range edges {
		edges[i] = &edgeProcess{addr: freeAddr(t), ops: freeAddr(t)}
		s.startEdgeProcess(edges[i], media, drainDelay.String())
	}
	uris := []string{"/api/products/lamp-0003", "/api/products/lamp-0011", "/api/products/lamp-0019",
		"/api/search?q=brass", "/api/products?per_page=10", "/api/products?page=2&per_page=5"}
	want := map[string][]byte{}
	for _, e := range edges {
		waitFor(t, 30*time.Second, "edge "+e.addr+" to serve the store", func() bool {
			r, err := tryCall("GET", e.addr, host, "/api/products?per_page=10")
			return err == nil && r.status == 200 && bytes.Contains(r.body, []byte("lamp-0019"))
		})
	}
	for _, uri := range uris {
		r := call(t, "GET", edges[0].addr, host, uri, "")
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", uri, r.status, r.body)
		}
		want[uri] = r.body
	}

	// The balancer: readiness polled per edge; requests round-robin over the ready ones.
	var ready [3]atomic.Bool
	var drainingSeen [3]atomic.Bool
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var pollers sync.WaitGroup
	for i, e := range edges {
		pollers.Add(1)
		go func() {
			defer pollers.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				status, body := readyz(e.addr)
				ready[i].Store(status == 200)
				if status == 503 && strings.Contains(body, `"status":"draining"`) {
					drainingSeen[i].Store(true)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var sent, failed atomic.Int64
	var served [3]atomic.Int64
	var failMu sync.Mutex
	var failures []string
	fail := func(msg string) {
		failed.Add(1)
		failMu.Lock()
		if len(failures) < 10 {
			failures = append(failures, msg)
		}
		failMu.Unlock()
	}
	var next atomic.Uint64
	one := func(n uint64) {
		uri := uris[n%uint64(len(uris))]
		base, i, found := next.Add(1), 0, false
		for k := range uint64(3) {
			if i = int((base + k) % 3); ready[i].Load() {
				found = true
				break
			}
		}
		if !found {
			fail(fmt.Sprintf("%s: no edge ready", uri))
			return
		}
		req, _ := http.NewRequest("GET", "http://"+edges[i].addr+uri, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			fail(fmt.Sprintf("edge %d %s: %v", i, uri, err))
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			fail(fmt.Sprintf("edge %d %s: reading the body: %v", i, uri, err))
		case resp.StatusCode != 200:
			fail(fmt.Sprintf("edge %d %s: %d %.200s", i, uri, resp.StatusCode, b))
		case !bytes.Equal(b, want[uri]):
			fail(fmt.Sprintf("edge %d %s: body differs: %.200s", i, uri, b))
		default:
			served[i].Add(1)
		}
	}
	waitFor(t, 5*time.Second, "the balancer to see every edge ready", func() bool {
		return ready[0].Load() && ready[1].Load() && ready[2].Load()
	})
	// Open loop: a request every 5 ms whatever the answers take.
	var load sync.WaitGroup
	loadDone, loadStart := make(chan struct{}), time.Now()
	go func() {
		defer close(loadDone)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for n := uint64(0); ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sent.Add(1)
			load.Add(1)
			go func() { defer load.Done(); one(n) }()
		}
	}()

	keepAlive := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{}}
	defer keepAlive.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	for i, e := range edges {
		old := e.proc
		old.signal(syscall.SIGTERM)
		if drainDelay > 0 {
			drained(t, i, e, keepAlive, uris[0], want[uris[0]])
		}
		took := waitExit(t, old, 10*time.Second)
		t.Logf("edge %d drained and exited 0 (%.1fs after SIGTERM)", i, took.Seconds())
		s.startEdgeProcess(e, media, drainDelay.String())
		waitFor(t, 30*time.Second, fmt.Sprintf("edge %d's replacement to be ready", i), func() bool {
			status, _ := readyz(e.addr)
			return status == 200
		})
		waitFor(t, 2*time.Second, fmt.Sprintf("the balancer to take edge %d back", i), func() bool { return ready[i].Load() })
	}
	restart := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	stop()
	loadTime := time.Since(loadStart)
	<-loadDone
	load.Wait()
	pollers.Wait()

	t.Logf("rolling restart of 3 edges (drain delay %s) in %.1fs under %d requests (%.0f/s): %d failed; served by edge 0/1/2: %d/%d/%d",
		drainDelay, restart.Seconds(), sent.Load(), float64(sent.Load())/loadTime.Seconds(), failed.Load(),
		served[0].Load(), served[1].Load(), served[2].Load())
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed during the rolling restart:\n%s", n, sent.Load(), strings.Join(failures, "\n"))
	}
	for i := range edges {
		if !drainingSeen[i].Load() && drainDelay > 0 {
			t.Errorf("the balancer never saw edge %d's /readyz answer 503 draining", i)
		}
		if served[i].Load() == 0 {
			t.Errorf("edge %d served no request", i)
		}
	}
}

// drained checks that edge i, after SIGTERM, drains: its ops /readyz answers 503 "draining",
// vitrine_draining is 1, and it still answers a read, closing the keep-alive connection.
func drained(t *testing.T, i int, e *edgeProcess, keepAlive *http.Client, uri string, want []byte) {
	t.Helper()
	waitFor(t, 3*time.Second, fmt.Sprintf("edge %d's ops /readyz to say draining", i), func() bool {
		status, body := readyz(e.ops)
		return status == 503 && strings.Contains(body, `"status":"draining"`)
	})
	req, _ := http.NewRequest("GET", "http://"+e.addr+uri, nil)
	req.Host = "shop.example.test"
	resp, err := keepAlive.Do(req) // a keep-alive request: the edge must close it
	if err != nil {
		t.Fatalf("edge %d draining: %v", i, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(b, want) || !resp.Close {
		t.Fatalf("edge %d draining: %d (Connection: close %v) %.200s", i, resp.StatusCode, resp.Close, b)
	}
	if m := call(t, "GET", e.ops, "ops", "/metrics", ""); !strings.Contains(string(m.body), `vitrine_draining{process="edge"} 1`) {
		t.Errorf("edge %d draining: /metrics lacks vitrine_draining 1", i)
	}
}

// Requests in flight when an edge gets SIGTERM are answered: a read held for a version floor
// written after the signal (with no drain delay: the listener is already closed when the write
// lands), and reads during a long delay, which a second SIGTERM cuts short.
func TestEdgeDrainAnswersInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	tn, _ := s.tenant("shop")
	s.addProducts(tn, "lamp", 0, 3)
	media := t.TempDir()
	const host = "shop.example.test"

	tests := []struct {
		name  string
		delay string
		run   func(t *testing.T, e *edgeProcess)
	}{
		{"a held read finishes after the listener closed", "0s", func(t *testing.T, e *edgeProcess) {
			r := call(t, "GET", e.addr, host, "/api/products/lamp-0001", "")
			v, err := strconv.ParseInt(r.header.Get("Vitrine-Replica-Version"), 10, 64)
			if r.status != 200 || err != nil {
				t.Fatalf("read: %d %q", r.status, r.header.Get("Vitrine-Replica-Version"))
			}
			type answer struct {
				r   *response
				err error
			}
			got := make(chan answer, 1)
			go func() {
				req, _ := http.NewRequest("GET", "http://"+e.addr+"/api/products/late-0000", nil)
				req.Host = host
				req.Header.Set("Vitrine-Min-Version", strconv.FormatInt(v+1, 10))
				resp, err := httpClient.Do(req)
				if err != nil {
					got <- answer{err: err}
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- answer{r: &response{status: resp.StatusCode, header: resp.Header, body: b}, err: err}
			}()
			waitFor(t, 2*time.Second, "the read to be held", func() bool {
				m, err := tryCall("GET", e.ops, "ops", "/metrics")
				return err == nil && strings.Contains(string(m.body), "vitrine_edge_floor_waiters 1\n")
			})
			e.proc.signal(syscall.SIGTERM)
			waitFor(t, 2*time.Second, "the edge to stop accepting", func() bool {
				_, err := tryCall("GET", e.addr, host, "/healthz")
				return err != nil
			})
			s.addProducts(tn, "late", 0, 1)
			a := <-got
			if a.err != nil {
				t.Fatalf("held read: %v", a.err)
			}
			if a.r.status != 200 || !bytes.Contains(a.r.body, []byte(`"late-0000"`)) {
				// Another write of the log may have reached the floor first: the read is still
				// answered, at or past its floor, rather than reset.
				if got, _ := strconv.ParseInt(a.r.header.Get("Vitrine-Replica-Version"), 10, 64); a.r.status != 404 || got <= v {
					t.Fatalf("held read: %d %s %s", a.r.status, a.r.header.Get("Vitrine-Replica-Version"), a.r.body)
				}
			}
			t.Logf("held read answered %d at version %s after the listener closed", a.r.status, a.r.header.Get("Vitrine-Replica-Version"))
			waitExit(t, e.proc, 5*time.Second)
		}},
		{"a second SIGTERM skips the delay", "1m", func(t *testing.T, e *edgeProcess) {
			e.proc.signal(syscall.SIGTERM)
			waitFor(t, 3*time.Second, "/readyz to say draining", func() bool {
				status, body := readyz(e.addr)
				return status == 503 && strings.Contains(body, `"status":"draining"`)
			})
			if r := call(t, "GET", e.addr, host, "/api/products/lamp-0002", ""); r.status != 200 {
				t.Fatalf("read while draining: %d %s", r.status, r.body)
			}
			e.proc.signal(syscall.SIGTERM)
			if took := waitExit(t, e.proc, 5*time.Second); took > 3*time.Second {
				t.Fatalf("exited %s after the second SIGTERM", took)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &edgeProcess{addr: freeAddr(t), ops: freeAddr(t)}
			s.startEdgeProcess(e, media, tt.delay)
			waitFor(t, 30*time.Second, "the edge to serve the store", func() bool {
				r, err := tryCall("GET", e.addr, host, "/api/products/lamp-0002")
				return err == nil && r.status == 200
			})
			tt.run(t, e)
		})
	}
}

// The origin drains the same way (it sits behind a load balancer too): /readyz 503 "draining" on
// its port and its ops address while it still serves, and a second SIGTERM ends the delay.
func TestOriginDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	s.tenant("shop")
	addr, ops := freeAddr(t), freeAddr(t)
	env := []string{"VITRINE_DATABASE_URL=" + s.dsn, "VITRINE_NATS_URL=" + s.ns.URL(), "VITRINE_SECRET=" + string(s.key),
		"VITRINE_EDGE_SECRET=" + s.edgeSecret, "VITRINE_PLATFORM_DOMAIN=example.test", "VITRINE_LOG_LEVEL=" + relayLogLevel()}
	s.startRelayProcess()
	p := s.startProcess(env, "origin", "--addr", addr, "--ops-addr", ops, "--drain-delay", "1m")
	waitFor(t, 30*time.Second, "the origin to serve the store", func() bool {
		r, err := tryCall("GET", addr, "shop.example.test", "/api/products")
		return err == nil && r.status == 200
	})
	p.signal(syscall.SIGTERM)
	for _, a := range []string{addr, ops} {
		waitFor(t, 3*time.Second, a+"/readyz to say draining", func() bool {
			status, body := readyz(a)
			return status == 503 && strings.Contains(body, `"status":"draining"`)
		})
	}
	if r := call(t, "GET", addr, "shop.example.test", "/api/products", ""); r.status != 200 {
		t.Fatalf("a read while draining: %d %s", r.status, r.body)
	}
	if m := call(t, "GET", ops, "ops", "/metrics", ""); !strings.Contains(string(m.body), `vitrine_draining{process="origin"} 1`) {
		t.Errorf("/metrics lacks vitrine_draining 1")
	}
	p.signal(syscall.SIGTERM)
	if took := waitExit(t, p, 5*time.Second); took > 3*time.Second {
		t.Fatalf("exited %s after the second SIGTERM", took)
	}
}

// `vitrine relay --change-schema N` refuses a schema this build cannot write before it connects
// to anything.
func TestRelayChangeSchemaFlag(t *testing.T) {
	for _, value := range []string{"0", "-1", strconv.Itoa(schema.ChangeSchemaVersion + 1), "two"} {
		err := run(context.Background(), []string{"relay", "--change-schema", value, "--nats-url", "nats://127.0.0.1:1", "--ops-addr", "off"})
		if err == nil || !strings.Contains(err.Error(), "change-schema") {
			t.Errorf("--change-schema %s: %v, want it refused", value, err)
		}
	}
	for _, value := range []string{"-1ms", "soon"} {
		err := run(context.Background(), []string{"relay", "--linger", value, "--nats-url", "nats://127.0.0.1:1", "--ops-addr", "off"})
		if err == nil || !strings.Contains(err.Error(), "linger") {
			t.Errorf("--linger %s: %v, want it refused", value, err)
		}
	}
}

// An edge process that meets changes of a newer schema than it reads (a relay switched before
// the edges were upgraded) applies none of them, keeps serving the store and applying the
// changes it can read, does not bootstrap again, and says so: /readyz "degraded" with the log
// and schema, and vitrine_feed_unsupported_changes_total.
func TestEdgeMeetsANewerChangeSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	tn, _ := s.tenant("shop")
	s.addProducts(tn, "lamp", 0, 2)
	const host = "shop.example.test"
	e := &edgeProcess{addr: freeAddr(t), ops: freeAddr(t)}
	s.startEdgeProcess(e, t.TempDir(), "0s")
	waitFor(t, 30*time.Second, "the edge to serve the store", func() bool {
		r, err := tryCall("GET", e.addr, host, "/api/products/lamp-0001")
		return err == nil && r.status == 200
	})

	// A newer writer's product change, with a field this build does not know.
	ctx := context.Background()
	nc := s.connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := feed.StreamEpoch(ctx, js, s.fc)
	if err != nil {
		t.Fatal(err)
	}
	newer := schema.ChangeSchemaVersion + 1
	msg := nats.NewMsg(s.fc.Subject(0, "shop", "pub.product.999"))
	msg.Header.Set(feed.HeaderEpoch, epoch)
	msg.Data = []byte(fmt.Sprintf(`{"schema":%d,"log":"shop","kind":"product","id":"999","vis":"pub","version":1000,"txn_first":1000,"txn_last":1000,"data":{"id":999,"slug":"from-the-future"},"provenance":"v2"}`, newer))
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}

	var ready struct {
		Status      string `json:"status"`
		Unsupported []struct {
			Log     string `json:"log"`
			Schema  int    `json:"schema"`
			Skipped int    `json:"skipped"`
		} `json:"unsupported_changes"`
	}
	waitFor(t, 10*time.Second, "/readyz to name the newer schema", func() bool {
		r, err := tryCall("GET", e.ops, "ops", "/readyz")
		return err == nil && r.status == 200 && json.Unmarshal(r.body, &ready) == nil && len(ready.Unsupported) == 1
	})
	if u := ready.Unsupported[0]; ready.Status != "degraded" || u.Log != "shop" || u.Schema != newer || u.Skipped != 1 {
		t.Fatalf("/readyz %+v", ready)
	}
	m := string(call(t, "GET", e.ops, "ops", "/metrics", "").body)
	for _, want := range []string{
		`vitrine_feed_unsupported_changes_total{process="edge"} 1`,
		fmt.Sprintf(`vitrine_feed_unsupported_schema{process="edge"} %d`, newer),
		`vitrine_feed_malformed_total{process="edge"} 0`,
		`vitrine_feed_bootstraps_total{process="edge"} 1`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Still serving, never the newer change, and still applying what it reads.
	if r := call(t, "GET", e.addr, host, "/api/products/from-the-future", ""); r.status != 404 {
		t.Fatalf("the newer change was applied: %d %s", r.status, r.body)
	}
	s.addProducts(tn, "shade", 0, 1)
	waitFor(t, 10*time.Second, "a later change of the current schema to be served", func() bool {
		r, err := tryCall("GET", e.addr, host, "/api/products/shade-0000")
		return err == nil && r.status == 200
	})
	if r := call(t, "GET", e.addr, host, "/api/products/lamp-0001", ""); r.status != 200 {
		t.Fatalf("lamp-0001: %d", r.status)
	}
}
