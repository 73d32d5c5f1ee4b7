package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"vitrine/bench"
	"vitrine/bench/load"
	"vitrine/bench/report"
	"vitrine/deploy/fleet"
)

// fleetOneWay is the one-way delay between the core and a region (80 ms round trip).
const fleetOneWay = 40 * time.Millisecond

// fleetTargetP99 is the target: a write visible on every edge of a far region within
// the round trip plus 25 ms, p99.
const fleetTargetP99 = 2*fleetOneWay + 25*time.Millisecond

// fleetConvergeTarget is our reading of the "converges within seconds" after a heal.
const fleetConvergeTarget = 10 * time.Second

// fleetPrefix names everything the scenario creates on the machine (namespaces, host links).
const fleetPrefix = "vb-"

// fleetPlan sizes the fleet scenario.
type fleetPlan struct {
	products   int
	writes     int           // writes measured at 80 ms of round trip
	writeEvery time.Duration // interval of the measured writes (open loop)
	partition  time.Duration // how long the first region is cut off
	lossWrites int           // writes measured at 10% loss
	readRate   float64       // reads/s per region (partition and rolling restart)
}

func planFleet(short bool) fleetPlan {
	if short {
		return fleetPlan{products: 200, writes: 100, writeEvery: 50 * time.Millisecond, partition: 10 * time.Second, lossWrites: 60, readRate: 200}
	}
	return fleetPlan{products: 500, writes: 400, writeEvery: 50 * time.Millisecond, partition: 60 * time.Second, lossWrites: 200, readRate: 200}
}

// Fleet measures issue 19 on a multi-region fleet (deploy/fleet): freshness across 80 ms of
// round trip, a region partitioned, 10% loss, a rolling restart under load.
func Fleet() bench.Scenario {
	return bench.Scenario{
		Name:        "fleet",
		Description: "multi-region fleet (network namespaces, emulated 80 ms links): far-region freshness, partition, 10% loss, rolling restart (root)",
		Run:         runFleet,
	}
}

// FleetResult is the machine-readable result of the fleet scenario.
type FleetResult struct {
	Regions        []string `json:"regions"`
	EdgesPerRegion int      `json:"edges_per_region"`
	Products       int      `json:"products"`
	Link           string   `json:"link"`
	UpSeconds      float64  `json:"up_s"`
	// Freshness is, per region, each write's time from the origin's acknowledgement until every
	// edge of the region served it.
	Freshness []FleetVisibility `json:"freshness"`
	TargetP99 float64           `json:"target_p99_ms"`
	Met       bool              `json:"met"`
	// Wire is, per region, the frames the region sent to the core during the freshness phase
	// (reads included), by service port.
	Wire      []FleetWire       `json:"wire"`
	Partition FleetPartition    `json:"partition"`
	Loss      []FleetVisibility `json:"loss"`
	Rolling   []FleetRolling    `json:"rolling"`
	Leftovers []string          `json:"leftovers"`
	Method    string            `json:"method"`
}

// FleetVisibility is a write→visible distribution in one region.
type FleetVisibility struct {
	Region   string         `json:"region"`
	Writes   int            `json:"writes"`
	Failed   int            `json:"failed"` // never visible within the bound, or a wrong body
	Visible  load.Summary   `json:"visible"`
	Retries  int            `json:"retries"` // watches answered 503 (floor not reached in the edge's 2 s) and sent again
	Statuses map[string]int `json:"statuses,omitempty"`

	hist *load.Histogram // the distribution, for the plot
}

// FleetWire is one region's traffic toward the core during a phase.
type FleetWire struct {
	Region   string                 `json:"region"`
	Ports    map[string]fleet.Count `json:"ports"`
	Reads    int64                  `json:"reads"`
	ReadErrs int64                  `json:"read_errors"`
	// Forwarded is how many requests the region's edges forwarded to the origin during the
	// phase (vitrine_edge_forwarded_total): a read that left the region would be one. The
	// origin's port also carries each edge's health check (one /healthz a second), which is
	// not a read.
	Forwarded float64 `json:"forwarded"`
}

// FleetPartition is the partition phase.
type FleetPartition struct {
	Region        string              `json:"region"`
	Seconds       float64             `json:"seconds"`
	Reads         FleetReads          `json:"reads"`
	MaxStaleness  int64               `json:"max_staleness_header_s"`
	Forwarded     []FleetForward      `json:"forwarded_writes"`
	Readyz        []string            `json:"readyz_seen"`
	OriginWrites  int                 `json:"origin_writes"`
	LastVersion   int64               `json:"last_version"`
	ConvergeMS    map[string]float64  `json:"converge_ms"`    // per edge: heal to the last write's version
	ReadyAgainMS  map[string]float64  `json:"ready_again_ms"` // per edge: heal to /readyz "ok" (a stale edge answers 200 "degraded")
	MetricsBefore map[string][]string `json:"metrics_before"`
	MetricsDuring map[string][]string `json:"metrics_during"`
	MetricsAfter  map[string][]string `json:"metrics_after"`
}

// FleetForward is a write sent to a partitioned region's edge.
type FleetForward struct {
	StartS     float64 `json:"start_s"` // sent this long after the cut
	Status     int     `json:"status"`
	RetryAfter string  `json:"retry_after"`
	MS         float64 `json:"ms"`
	Error      string  `json:"error,omitempty"`
}

// FleetReads is an open-loop read load's outcome.
type FleetReads struct {
	Sent     int64            `json:"sent"`
	Failed   int64            `json:"failed"`
	Latency  load.Summary     `json:"latency"`
	Failures map[string]int   `json:"failures,omitempty"`
	PerEdge  map[string]int64 `json:"per_edge,omitempty"`
}

// FleetRolling is one region's rolling restart.
type FleetRolling struct {
	Region   string     `json:"region"`
	Seconds  float64    `json:"seconds"`
	Reads    FleetReads `json:"reads"`
	Draining []bool     `json:"draining_seen"` // per edge: the balancer saw /readyz 503 draining
	Error    string     `json:"error,omitempty"`
}

const fleetMethod = "Two regions of two edges each, every part in its own network namespace; each region reaches the core only " +
	"through a user-space wire with 40 ms each way (80 ms round trip). A write is a PATCH of a product's title at the origin " +
	"(from the host, which reaches the core directly); on its acknowledgement (Vitrine-Write-Version V) one watch per edge is " +
	"sent from inside the edge's region: GET of the product's page with Vitrine-Min-Version: V, which the edge holds until its " +
	"replica has applied V; a 503 (the edge's 2 s bound) is sent again. A region's time is its slowest edge's. Reads in a region " +
	"come from inside its namespace; the wire counts frames by service port (tcp/4222 the hub's clients, tcp/7422 leaf " +
	"connections, tcp/8081 the origin)."

// fleetRun holds what the phases share.
type fleetRun struct {
	env    bench.Env
	plan   fleetPlan
	f      *fleet.Fleet
	st     fleet.State
	pool   []listedProduct
	seq    atomic.Int64
	origin *http.Client
}

func runFleet(ctx context.Context, env bench.Env) (_ report.Section, err error) {
	sec := report.Section{Name: "fleet"}
	if err := fleet.Supported(); err != nil {
		return sec, fmt.Errorf("fleet: needs root, network namespaces and /dev/net/tun: %w", err)
	}
	plan := planFleet(env.Short)
	// The fleet's processes inherit this process's affinity, and its wires run here: the whole
	// fleet is the system under test, so it gets every core (restored after).
	if len(env.LoadCPUs) > 0 && len(env.Cores) > 0 {
		if err := load.PinProcess(0, env.Cores); err != nil {
			return sec, err
		}
		procs := runtime.GOMAXPROCS(len(env.Cores) + 1)
		defer func() { load.PinProcess(0, env.LoadCPUs); runtime.GOMAXPROCS(procs) }()
	}
	dir, err := os.MkdirTemp("", "vitrine-fleetbench-")
	if err != nil {
		return sec, err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // PostgreSQL (user postgres) traverses it
	res := FleetResult{Products: plan.products, TargetP99: float64(fleetTargetP99) / 1e6, Method: fleetMethod,
		Link: fleet.Link{Delay: fleetOneWay}.String()}
	start := time.Now()
	f, err := fleet.Up(ctx, fleet.Config{Dir: dir, Binary: env.Binary, Prefix: fleetPrefix, Link: fleet.Link{Delay: fleetOneWay},
		Seed: true, Products: plan.products, Posts: 5,
		Progress: func(m string) { progress(env, "fleet: %5.1fs %s", time.Since(start).Seconds(), m) }})
	if err != nil {
		return sec, err
	}
	defer func() {
		derr := f.Down(context.WithoutCancel(ctx))
		// The processes' logs are kept beside the results only when the scenario failed, for
		// diagnosis: they name this machine's paths and the run's throwaway admin password, so
		// they are not part of a results folder meant to be committed.
		if logs := filepath.Join(dir, "logs"); env.Out != "" && (err != nil || derr != nil) {
			os.CopyFS(filepath.Join(env.Out, "fleet-logs"), os.DirFS(logs))
		}
		if derr != nil && err == nil {
			err = derr
		}
	}()
	res.UpSeconds = time.Since(start).Seconds()
	r := &fleetRun{env: env, plan: plan, f: f, st: f.State()}
	res.Regions, res.EdgesPerRegion = f.Regions(), len(r.st.Regions[0].Edges)
	if r.origin, err = f.HTTPClient(""); err != nil {
		return sec, err
	}
	if r.pool, err = r.products(ctx); err != nil {
		return sec, err
	}

	// 1. Freshness across 80 ms, reads inside each region meanwhile; the wire's counters.
	progress(env, "fleet: %d writes at the origin, watched on every edge of %v (40 ms each way)", plan.writes, res.Regions)
	before := r.wireCounters()
	fwdBefore := r.forwardedByRegion(ctx, res.Regions)
	readCtx, stopReads := context.WithCancel(ctx)
	tallies := map[string]*readTally{}
	var readWG sync.WaitGroup
	for _, region := range res.Regions {
		edges, _ := f.Edges(region)
		t := newReadTally()
		tallies[region] = t
		var rr atomic.Uint64
		readWG.Add(1)
		go func() {
			defer readWG.Done()
			r.readLoad(readCtx, region, t, plan.readRate, func() (string, bool) {
				e := edges[int(rr.Add(1)%uint64(len(edges)))]
				return e.URL(), true
			})
		}()
	}
	fresh, err := r.visibility(ctx, plan.writes, plan.writeEvery)
	stopReads()
	readWG.Wait()
	if err != nil {
		return sec, err
	}
	after := r.wireCounters()
	fwdAfter := r.forwardedByRegion(ctx, res.Regions)
	for _, region := range res.Regions {
		tr := tallies[region].result()
		res.Wire = append(res.Wire, FleetWire{Region: region, Ports: portDelta(before[region], after[region]), Reads: tr.Sent, ReadErrs: tr.Failed,
			Forwarded: fwdAfter[region] - fwdBefore[region]})
	}
	res.Freshness = fresh
	res.Met = len(fresh) > 0
	for _, v := range fresh {
		if v.Failed > 0 || v.Visible.Count == 0 || v.Visible.P99 > res.TargetP99 {
			res.Met = false
		}
	}

	// 2. The first region cut off.
	progress(env, "fleet: partitioning %s for %s under %.0f reads/s", res.Regions[0], plan.partition, plan.readRate)
	if res.Partition, err = r.partition(ctx, res.Regions[0]); err != nil {
		return sec, err
	}

	// 3. 10% loss both ways on every wire.
	progress(env, "fleet: 10%% loss both ways, %d writes", plan.lossWrites)
	lossy := fleet.Link{Delay: fleetOneWay, Loss: 0.10}
	for _, region := range res.Regions {
		if err := f.SetLink(region, lossy); err != nil {
			return sec, err
		}
	}
	res.Loss, err = r.visibility(ctx, plan.lossWrites, 100*time.Millisecond)
	for _, region := range res.Regions {
		if lerr := f.SetLink(region, fleet.Link{Delay: fleetOneWay}); lerr != nil && err == nil {
			err = lerr
		}
	}
	if err != nil {
		return sec, err
	}

	// 4. Rolling restart of every region's edges at once (one edge at a time per region).
	progress(env, "fleet: rolling restart of every region's edges under %.0f reads/s per region", plan.readRate)
	res.Rolling = make([]FleetRolling, len(res.Regions))
	var rollWG sync.WaitGroup
	for i, region := range res.Regions {
		rollWG.Add(1)
		go func() { defer rollWG.Done(); res.Rolling[i] = r.rolling(ctx, region) }()
	}
	rollWG.Wait()
	if err := ctx.Err(); err != nil {
		return sec, err
	}

	// Down, then check that nothing is left.
	progress(env, "fleet: down")
	if err := f.Down(ctx); err != nil {
		return sec, err
	}
	res.Leftovers = leftovers(ctx, fleetPrefix)
	fillFleetSection(&sec, plan, res)
	return sec, nil
}

// products lists the demo store's products at the origin.
func (r *fleetRun) products(ctx context.Context) ([]listedProduct, error) {
	status, _, body, err := r.do(ctx, r.origin, "GET", r.st.Origin.URL()+"/api/products?per_page=100", nil, 10*time.Second, false)
	if err != nil || status != 200 {
		return nil, fmt.Errorf("fleet: product list at the origin: %d %v %.200s", status, err, body)
	}
	var list struct {
		Data []listedProduct `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data) == 0 {
		return nil, fmt.Errorf("fleet: product list at the origin: %v %.200s", err, body)
	}
	return list.Data, nil
}

// do sends one request to the demo store (Host the tenant; auth adds the administrator's basic
// auth) and returns the status, headers and body.
func (r *fleetRun) do(ctx context.Context, c *http.Client, method, url string, body []byte, timeout time.Duration, auth bool, headers ...string) (int, http.Header, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Host = r.st.Tenant
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.SetBasicAuth(r.st.AdminLogin, r.st.AdminPassword)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// write renames a product at base (the origin, or an edge that forwards it) and returns the
// status, headers, the written version (0 if none) and the new title.
func (r *fleetRun) write(ctx context.Context, c *http.Client, base string, timeout time.Duration) (int, http.Header, int64, listedProduct, string, error) {
	n := r.seq.Add(1)
	p := r.pool[int(n)%len(r.pool)]
	title := "Fleet bench " + strconv.FormatInt(n, 10)
	status, h, _, err := r.do(ctx, c, "PATCH", base+"/api/admin/products/"+strconv.FormatInt(p.ID, 10), []byte(`{"title":"`+title+`"}`), timeout, true)
	var v int64
	if h != nil {
		v, _ = strconv.ParseInt(h.Get("Vitrine-Write-Version"), 10, 64)
	}
	return status, h, v, p, title, err
}

// visibility writes n times at the origin, one every interval (open loop), and watches every
// edge of every region for each write; it returns each region's write→visible distribution.
func (r *fleetRun) visibility(ctx context.Context, n int, every time.Duration) ([]FleetVisibility, error) {
	regions := r.f.Regions()
	type watcher struct {
		region int
		url    string
		c      *http.Client
	}
	var ws []watcher
	for i, region := range regions {
		edges, err := r.f.Edges(region)
		if err != nil {
			return nil, err
		}
		c, err := r.f.HTTPClient(region)
		if err != nil {
			return nil, err
		}
		for _, e := range edges {
			ws = append(ws, watcher{region: i, url: e.URL(), c: c})
		}
	}
	var mu sync.Mutex
	hists := make([]*load.Histogram, len(regions))
	out := make([]FleetVisibility, len(regions))
	for i, region := range regions {
		hists[i] = load.NewHistogram()
		out[i] = FleetVisibility{Region: region, Statuses: map[string]int{}}
	}
	writeFailures := 0
	var wg sync.WaitGroup
	start := time.Now()
	for k := range n {
		if !sleepUntil(ctx, start.Add(time.Duration(k)*every)) {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, v, p, title, err := r.write(ctx, r.origin, r.st.Origin.URL(), 10*time.Second)
			acked := time.Now()
			if err != nil || status != 200 || v == 0 {
				mu.Lock()
				writeFailures++
				mu.Unlock()
				return
			}
			slowest := make([]time.Duration, len(regions))
			failed := make([]bool, len(regions))
			retries := make([]int, len(regions))
			var ewg sync.WaitGroup
			var emu sync.Mutex
			for _, w := range ws {
				ewg.Add(1)
				go func() {
					defer ewg.Done()
					tries, ok := 0, false
					for time.Since(acked) < 30*time.Second && ctx.Err() == nil {
						st, _, b, err := r.do(ctx, w.c, "GET", w.url+"/api/products/"+p.Slug, nil, 10*time.Second, false,
							"Vitrine-Min-Version", strconv.FormatInt(v, 10))
						if err == nil && st == 200 {
							ok = bytes.Contains(b, []byte(title))
							break
						}
						tries++
						if err == nil && st != 503 {
							break
						}
						time.Sleep(5 * time.Millisecond)
					}
					d := time.Since(acked)
					emu.Lock()
					slowest[w.region] = max(slowest[w.region], d)
					failed[w.region] = failed[w.region] || !ok
					retries[w.region] += tries
					emu.Unlock()
				}()
			}
			ewg.Wait()
			mu.Lock()
			defer mu.Unlock()
			for i := range regions {
				out[i].Writes++
				out[i].Retries += retries[i]
				if failed[i] {
					out[i].Failed++
					continue
				}
				hists[i].Record(slowest[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Visible, out[i].hist = hists[i].Summary(), hists[i]
		if writeFailures > 0 {
			out[i].Statuses["origin write failed"] = writeFailures
		}
	}
	return out, nil
}

// wireCounters reads every region's region→core counters by port.
func (r *fleetRun) wireCounters() map[string]map[string]fleet.Count {
	out := map[string]map[string]fleet.Count{}
	for _, region := range r.f.Regions() {
		if ls, err := r.f.Link(region); err == nil {
			out[region] = ls.ToCore.Counters.Ports
		}
	}
	return out
}

// portDelta is after minus before, per port, leaving out ports that carried nothing between.
func portDelta(before, after map[string]fleet.Count) map[string]fleet.Count {
	out := map[string]fleet.Count{}
	for port, a := range after {
		b := before[port]
		if a.Frames > b.Frames {
			out[port] = fleet.Count{Frames: a.Frames - b.Frames, Bytes: a.Bytes - b.Bytes}
		}
	}
	return out
}

// readTally counts an open-loop read load. Safe for concurrent use.
type readTally struct {
	sent, failed atomic.Int64
	staleMax     atomic.Int64
	mu           sync.Mutex
	hist         *load.Histogram
	failures     map[string]int
	perEdge      map[string]int64
}

func newReadTally() *readTally {
	return &readTally{hist: load.NewHistogram(), failures: map[string]int{}, perEdge: map[string]int64{}}
}

func (t *readTally) fail(why string) {
	t.failed.Add(1)
	t.mu.Lock()
	if len(t.failures) < 20 {
		t.failures[why]++
	} else if _, ok := t.failures[why]; ok {
		t.failures[why]++
	}
	t.mu.Unlock()
}

func (t *readTally) result() FleetReads {
	t.mu.Lock()
	defer t.mu.Unlock()
	return FleetReads{Sent: t.sent.Load(), Failed: t.failed.Load(), Latency: t.hist.Summary(), Failures: t.failures, PerEdge: t.perEdge}
}

// readLoad sends rate reads/s (open loop, from the intended time) from inside region to the
// edge pick chooses, until ctx ends: product pages and a list, each checked for 200.
func (r *fleetRun) readLoad(ctx context.Context, region string, t *readTally, rate float64, pick func() (string, bool)) {
	c, err := r.f.HTTPClient(region)
	if err != nil {
		t.fail(err.Error())
		return
	}
	interval := time.Duration(float64(time.Second) / rate)
	var wg sync.WaitGroup
	defer wg.Wait()
	start := time.Now()
	for n := 0; ; n++ {
		intended := start.Add(time.Duration(n) * interval)
		if !sleepUntil(ctx, intended) {
			return
		}
		t.sent.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			base, ok := pick()
			if !ok {
				t.fail("no edge ready")
				return
			}
			uri := "/api/products?per_page=10"
			if n%4 != 0 {
				uri = "/api/products/" + r.pool[n%len(r.pool)].Slug
			}
			status, h, _, err := r.do(context.WithoutCancel(ctx), c, "GET", base+uri, nil, 10*time.Second, false)
			switch {
			case err != nil:
				t.fail(fmt.Sprintf("%s: %v", base, trimErr(err)))
				return
			case status != 200:
				t.fail(fmt.Sprintf("%s: status %d", base, status))
				return
			}
			if s, err := strconv.ParseInt(h.Get("Vitrine-Staleness"), 10, 64); err == nil {
				for old := t.staleMax.Load(); s > old && !t.staleMax.CompareAndSwap(old, s); old = t.staleMax.Load() {
				}
			}
			t.mu.Lock()
			t.hist.Record(time.Since(intended))
			t.perEdge[base]++
			t.mu.Unlock()
		}()
	}
}

// trimErr keeps an error's last part (the cause), so failures group in the report.
func trimErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 80 {
		return s[i+2:]
	}
	return s
}

// partition cuts region off for the plan's time under read load, writing at the origin and
// through the region's edge, then heals it and times the convergence.
func (r *fleetRun) partition(ctx context.Context, region string) (FleetPartition, error) {
	res := FleetPartition{Region: region, Seconds: r.plan.partition.Seconds(), ConvergeMS: map[string]float64{}, ReadyAgainMS: map[string]float64{}}
	edges, err := r.f.Edges(region)
	if err != nil {
		return res, err
	}
	rc, err := r.f.HTTPClient(region)
	if err != nil {
		return res, err
	}
	res.MetricsBefore = r.edgeMetrics(ctx, rc, edges)
	tally := newReadTally()
	readCtx, stopReads := context.WithCancel(ctx)
	defer stopReads()
	var rr atomic.Uint64
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		r.readLoad(readCtx, region, tally, r.plan.readRate, func() (string, bool) {
			return edges[int(rr.Add(1)%uint64(len(edges)))].URL(), true
		})
	}()
	time.Sleep(time.Second)
	if err := r.f.Partition(region, true); err != nil {
		return res, err
	}
	cut := time.Now()
	phase, endPhase := context.WithDeadline(ctx, cut.Add(r.plan.partition))
	defer endPhase()
	var wg sync.WaitGroup
	var mu sync.Mutex
	// Writes at the origin (the core keeps moving).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for phase.Err() == nil {
			status, _, v, _, _, err := r.write(phase, r.origin, r.st.Origin.URL(), 5*time.Second)
			if err == nil && status == 200 && v > 0 {
				mu.Lock()
				res.OriginWrites++
				res.LastVersion = max(res.LastVersion, v)
				mu.Unlock()
			}
			sleepUntil(phase, time.Now().Add(200*time.Millisecond))
		}
	}()
	// Writes through the cut-off region's edges, one at a time.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; phase.Err() == nil; k++ {
			e := edges[k%len(edges)]
			t0 := time.Now()
			status, h, _, _, _, err := r.write(ctx, rc, e.URL(), 45*time.Second)
			fw := FleetForward{StartS: t0.Sub(cut).Seconds(), Status: status, MS: float64(time.Since(t0)) / 1e6}
			if h != nil {
				fw.RetryAfter = h.Get("Retry-After")
			}
			if err != nil {
				fw.Error = trimErr(err)
			}
			mu.Lock()
			res.Forwarded = append(res.Forwarded, fw)
			mu.Unlock()
			sleepUntil(phase, time.Now().Add(2*time.Second))
		}
	}()
	// /readyz and metrics of the edges, every second.
	seen := map[string]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for phase.Err() == nil {
			for _, e := range edges {
				status, _, b, err := r.do(phase, rc, "GET", "http://"+e.Ops+"/readyz", nil, time.Second, false)
				if err != nil {
					continue
				}
				line := fmt.Sprintf("%s %d %s", e.Name, status, compactJSON(b, 400))
				key := fmt.Sprintf("%s %d %s", e.Name, status, readyStatus(b))
				mu.Lock()
				if !seen[key] {
					seen[key] = true
					res.Readyz = append(res.Readyz, fmt.Sprintf("+%.1fs %s", time.Since(cut).Seconds(), line))
				}
				mu.Unlock()
			}
			sleepUntil(phase, time.Now().Add(time.Second))
		}
	}()
	<-phase.Done()
	mu.Lock()
	last := res.LastVersion
	mu.Unlock()
	res.MetricsDuring = r.edgeMetrics(ctx, rc, edges)
	if err := r.f.Partition(region, false); err != nil {
		return res, err
	}
	healed := time.Now()
	// Convergence: each edge's replica version reaching the last write's.
	var cwg sync.WaitGroup
	for _, e := range edges {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			conv, ready := false, false
			for time.Since(healed) < 2*time.Minute && ctx.Err() == nil && (!conv || !ready) {
				if !conv {
					if _, h, _, err := r.do(ctx, rc, "GET", e.URL()+"/api/products?per_page=1", nil, time.Second, false); err == nil {
						if v, _ := strconv.ParseInt(h.Get("Vitrine-Replica-Version"), 10, 64); v >= last {
							conv = true
							mu.Lock()
							res.ConvergeMS[e.Name] = float64(time.Since(healed)) / 1e6
							mu.Unlock()
						}
					}
				}
				if !ready {
					if st, _, b, err := r.do(ctx, rc, "GET", "http://"+e.Ops+"/readyz", nil, time.Second, false); err == nil && st == 200 && readyStatus(b) == "ok" {
						ready = true
						mu.Lock()
						res.ReadyAgainMS[e.Name] = float64(time.Since(healed)) / 1e6
						mu.Unlock()
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	cwg.Wait()
	wg.Wait() // the forwarded write in flight, if any, ends
	stopReads()
	<-readsDone
	res.Reads = tally.result()
	res.MaxStaleness = tally.staleMax.Load()
	time.Sleep(time.Second)
	res.MetricsAfter = r.edgeMetrics(ctx, rc, edges)
	return res, ctx.Err()
}

// readyStatus is the "status" of a /readyz body ("" when it has none).
func readyStatus(b []byte) string {
	var v struct {
		Status string `json:"status"`
	}
	json.Unmarshal(b, &v)
	return v.Status
}

// compactJSON is b without insignificant spaces, cut to n bytes.
func compactJSON(b []byte, n int) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		b = buf.Bytes()
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// edgeMetrics returns, per edge, its /metrics lines about bootstraps, resets and staleness.
// forwardedByRegion returns, per region, the sum of its edges' vitrine_edge_forwarded_total
// (NaN when an edge did not answer: the phase's check then fails).
func (r *fleetRun) forwardedByRegion(ctx context.Context, regions []string) map[string]float64 {
	out := map[string]float64{}
	for _, region := range regions {
		edges, err := r.f.Edges(region)
		c, cerr := r.f.HTTPClient(region)
		if err != nil || cerr != nil {
			out[region] = math.NaN()
			continue
		}
		for _, e := range edges {
			_, _, b, err := r.do(ctx, c, "GET", "http://"+e.Ops+"/metrics", nil, 2*time.Second, false)
			v, ok := sampleValue(b, "vitrine_edge_forwarded_total")
			if err != nil || !ok {
				out[region] = math.NaN()
				break
			}
			out[region] += v
		}
	}
	return out
}

// sampleValue returns the value of the first sample of a Prometheus text body named name
// (labels ignored).
func sampleValue(body []byte, name string) (float64, bool) {
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		n, rest, _ := strings.Cut(line, " ")
		if n, _, _ = strings.Cut(n, "{"); n != name {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

func (r *fleetRun) edgeMetrics(ctx context.Context, c *http.Client, edges []fleet.Endpoint) map[string][]string {
	out := map[string][]string{}
	for _, e := range edges {
		_, _, b, err := r.do(ctx, c, "GET", "http://"+e.Ops+"/metrics", nil, 2*time.Second, false)
		if err != nil {
			out[e.Name] = []string{"unreachable: " + trimErr(err)}
			continue
		}
		out[e.Name] = metricLines(b, "bootstrap", "reset", "staleness", "replica_lag")
	}
	return out
}

// metricLines returns the samples (not comments) of a Prometheus text body whose metric name
// contains one of words, in order.
func metricLines(body []byte, words ...string) []string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		for _, w := range words {
			if strings.Contains(name, w) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// balancer routes requests round-robin over the backends whose readiness answered 200 at its
// last poll, as a load balancer's health checks do. Safe for concurrent use.
type balancer struct {
	ready []atomic.Bool
	next  atomic.Uint64
}

func newBalancer(n int) *balancer { return &balancer{ready: make([]atomic.Bool, n)} }

// set records backend i's last readiness.
func (b *balancer) set(i int, ok bool) { b.ready[i].Store(ok) }

// pick returns the next ready backend, false when none is.
func (b *balancer) pick() (int, bool) {
	var up [16]int
	ready := up[:0]
	for i := range b.ready {
		if b.ready[i].Load() {
			ready = append(ready, i)
		}
	}
	if len(ready) == 0 {
		return 0, false
	}
	return ready[b.next.Add(1)%uint64(len(ready))], true
}

// rolling restarts region's edges one at a time (SIGTERM, drain, start, ready) under the plan's
// read load, sent through a balancer polling each edge's /readyz every 100 ms.
func (r *fleetRun) rolling(ctx context.Context, region string) FleetRolling {
	res := FleetRolling{Region: region}
	edges, err := r.f.Edges(region)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Draining = make([]bool, len(edges))
	probe := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return r.f.DialContext(ctx, region, network, addr)
		}}}
	b := newBalancer(len(edges))
	var draining sync.Map
	pollCtx, stopPolls := context.WithCancel(ctx)
	var polls sync.WaitGroup
	defer func() { stopPolls(); polls.Wait() }()
	for i, e := range edges {
		polls.Add(1)
		go func() {
			defer polls.Done()
			for pollCtx.Err() == nil {
				st, _, body, err := r.do(pollCtx, probe, "GET", "http://"+e.Ops+"/readyz", nil, 300*time.Millisecond, false)
				b.set(i, err == nil && st == 200)
				if err == nil && st == 503 && readyStatus(body) == "draining" {
					draining.Store(i, true)
				}
				sleepUntil(pollCtx, time.Now().Add(100*time.Millisecond))
			}
		}()
	}
	if !waitUntil(ctx, 5*time.Second, func() bool { _, ok := b.pick(); return allReady(b) && ok }) {
		res.Error = "the balancer never saw every edge ready"
		return res
	}
	tally := newReadTally()
	readCtx, stopReads := context.WithCancel(ctx)
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		r.readLoad(readCtx, region, tally, r.plan.readRate, func() (string, bool) {
			i, ok := b.pick()
			return edges[i].URL(), ok
		})
	}()
	time.Sleep(time.Second)
	start := time.Now()
	for i := range edges {
		if err := r.f.RestartEdge(ctx, region, i+1); err != nil {
			res.Error = fmt.Sprintf("restart of %s: %v", edges[i].Name, err)
			break
		}
		if !waitUntil(ctx, 5*time.Second, func() bool { return b.ready[i].Load() }) {
			res.Error = fmt.Sprintf("the balancer did not take %s back", edges[i].Name)
			break
		}
	}
	res.Seconds = time.Since(start).Seconds()
	time.Sleep(time.Second)
	stopReads()
	<-readsDone
	res.Reads = tally.result()
	for i := range edges {
		_, res.Draining[i] = draining.Load(i)
	}
	return res
}

func allReady(b *balancer) bool {
	for i := range b.ready {
		if !b.ready[i].Load() {
			return false
		}
	}
	return true
}

// waitUntil polls cond every 10 ms for up to d.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// leftovers lists the namespaces and links named with prefix that remain on the machine.
func leftovers(ctx context.Context, prefix string) []string {
	var out []string
	for _, argv := range [][]string{{"ip", "netns", "list"}, {"ip", "-o", "link", "show"}} {
		b, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", strings.Join(argv, " "), err))
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			for _, f := range fields[:min(2, len(fields))] {
				if strings.HasPrefix(strings.TrimSuffix(f, ":"), prefix) {
					out = append(out, strings.TrimSpace(line))
					break
				}
			}
		}
	}
	return out
}

// fillFleetSection writes the report section.
func fillFleetSection(sec *report.Section, plan fleetPlan, res FleetResult) {
	p := res.Partition
	fresh := report.Table{Title: fmt.Sprintf("Write at the origin → visible on every edge of the region, 40 ms each way (ms; target p99 ≤ %s)", ms(fleetTargetP99)),
		Header: []string{"region", "writes", "p50", "p90", "p99", "p99.9", "max", "failed", "503 re-sent"}}
	for _, v := range res.Freshness {
		fresh.Rows = append(fresh.Rows, summaryRow(v.Region, v.Visible, strconv.Itoa(v.Failed), strconv.Itoa(v.Retries)))
	}
	loss := report.Table{Title: "The same at 10% loss both ways on every wire (ms)",
		Header: []string{"region", "writes", "p50", "p90", "p99", "p99.9", "max", "failed", "503 re-sent"}}
	for _, v := range res.Loss {
		loss.Rows = append(loss.Rows, summaryRow(v.Region, v.Visible, strconv.Itoa(v.Failed), strconv.Itoa(v.Retries)))
	}
	wire := report.Table{Title: "Region → core frames on the wire during the freshness phase (reads served inside the region meanwhile; tcp/8081 carries the edges' origin health checks)",
		Header: []string{"region", "reads served", "read errors", "forwarded by its edges", "port", "frames", "bytes"}}
	for _, w := range res.Wire {
		ports := make([]string, 0, len(w.Ports))
		for port := range w.Ports {
			ports = append(ports, port)
		}
		sort.Strings(ports)
		for _, port := range []string{"tcp/4222", "tcp/8081"} {
			if _, ok := w.Ports[port]; !ok {
				ports = append(ports, port)
			}
		}
		for _, port := range ports {
			c := w.Ports[port]
			wire.Rows = append(wire.Rows, []string{w.Region, strconv.FormatInt(w.Reads, 10), strconv.FormatInt(w.ReadErrs, 10), fmt.Sprint(w.Forwarded), port,
				strconv.FormatUint(c.Frames, 10), strconv.FormatUint(c.Bytes, 10)})
		}
	}
	fwd := report.Table{Title: fmt.Sprintf("Writes sent through %s's edges while it was cut off", p.Region),
		Header: []string{"#", "sent (s after the cut)", "status", "Retry-After", "ms to answer", "error"}}
	for i, w := range p.Forwarded {
		fwd.Rows = append(fwd.Rows, []string{strconv.Itoa(i + 1), strconv.FormatFloat(w.StartS, 'f', 1, 64), strconv.Itoa(w.Status), w.RetryAfter, msf(w.MS), w.Error})
	}
	conv := report.Table{Title: fmt.Sprintf("%s after healing (ms from the heal)", p.Region),
		Header: []string{"edge", "replica at the last write's version", "/readyz \"ok\" again"}}
	var names []string
	for name := range p.ConvergeMS {
		names = append(names, name)
	}
	for name := range p.ReadyAgainMS {
		if _, ok := p.ConvergeMS[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		c, ok := p.ConvergeMS[name]
		cs := "never"
		if ok {
			cs = msf(c)
		}
		rs := "never"
		if v, ok := p.ReadyAgainMS[name]; ok {
			rs = msf(v)
		}
		conv.Rows = append(conv.Rows, []string{name, cs, rs})
	}
	metrics := report.Table{Title: "Edge metrics (bootstraps, resets, staleness) before the partition, at its end, and after the heal",
		Header: []string{"edge", "when", "samples"}}
	var edgeNames []string
	for name := range p.MetricsBefore {
		edgeNames = append(edgeNames, name)
	}
	sort.Strings(edgeNames)
	for _, name := range edgeNames {
		for _, w := range []struct {
			when string
			m    map[string][]string
		}{{"before", p.MetricsBefore}, {"end of partition", p.MetricsDuring}, {"after heal", p.MetricsAfter}} {
			metrics.Rows = append(metrics.Rows, []string{name, w.when, strings.Join(w.m[name], "; ")})
		}
	}
	readyz := report.Table{Title: "/readyz answers seen during the partition (each new status once, time from the cut)", Header: []string{"answer"}}
	for _, l := range p.Readyz {
		readyz.Rows = append(readyz.Rows, []string{l})
	}
	roll := report.Table{Title: fmt.Sprintf("Rolling restart of every edge, one at a time per region, under %.0f reads/s per region through a readiness-polling balancer", plan.readRate),
		Header: []string{"region", "seconds", "requests", "failed", "p50", "p99", "max", "draining seen", "failures"}}
	for _, rr := range res.Rolling {
		roll.Rows = append(roll.Rows, []string{rr.Region, strconv.FormatFloat(rr.Seconds, 'f', 1, 64), strconv.FormatInt(rr.Reads.Sent, 10),
			strconv.FormatInt(rr.Reads.Failed, 10), msf(rr.Reads.Latency.P50), msf(rr.Reads.Latency.P99), msf(rr.Reads.Latency.Max),
			fmt.Sprint(rr.Draining), joinFailures(rr.Reads.Failures) + rr.Error})
	}

	// Headlines.
	var fparts []string
	for _, v := range res.Freshness {
		fparts = append(fparts, fmt.Sprintf("%s p99 %s ms (p50 %s, max %s, %d writes, %d failed)", v.Region, msf(v.Visible.P99), msf(v.Visible.P50), msf(v.Visible.Max), v.Writes, v.Failed))
	}
	// A read leaving its region would be a forwarded request (to the origin) or a hub client's
	// frame; the origin's port otherwise carries only the edges' health checks.
	crossing, forwarded, checks := 0, 0.0, uint64(0)
	for _, w := range res.Wire {
		crossing += int(w.Ports["tcp/4222"].Frames)
		forwarded += w.Forwarded
		checks += w.Ports["tcp/8081"].Frames
	}
	var fwStatus []string
	var fwMax float64
	statusCount := map[string]int{}
	for _, w := range p.Forwarded {
		statusCount[fmt.Sprintf("%d (Retry-After %q)", w.Status, w.RetryAfter)]++
		if w.Status != 200 {
			fwMax = max(fwMax, w.MS)
		}
	}
	for k, n := range statusCount {
		fwStatus = append(fwStatus, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(fwStatus)
	var convMax float64
	for _, v := range p.ConvergeMS {
		convMax = max(convMax, v)
	}
	rebooted := len(edgeNames) == 0
	var boots []string
	for _, name := range edgeNames {
		b, a := bootstrapLines(p.MetricsBefore[name]), bootstrapLines(p.MetricsAfter[name])
		rebooted = rebooted || b != a
		boots = append(boots, fmt.Sprintf("%s %s → %s", name, b, a))
	}
	var lparts []string
	for _, v := range res.Loss {
		lparts = append(lparts, fmt.Sprintf("%s p50 %s / p99 %s / max %s ms (%d of %d failed)", v.Region, msf(v.Visible.P50), msf(v.Visible.P99), msf(v.Visible.Max), v.Failed, v.Writes))
	}
	var rparts []string
	rollOK := len(res.Rolling) > 0
	for _, rr := range res.Rolling {
		rparts = append(rparts, fmt.Sprintf("%s %d failed of %d in %.1f s", rr.Region, rr.Reads.Failed, rr.Reads.Sent, rr.Seconds))
		rollOK = rollOK && rr.Reads.Failed == 0 && rr.Error == "" && rr.Reads.Sent > 0
	}
	left := "nothing left behind (no " + fleetPrefix + "* namespace or link)"
	if len(res.Leftovers) > 0 {
		left = "LEFT BEHIND: " + strings.Join(res.Leftovers, "; ")
	}
	short := ""
	if plan.partition < time.Minute {
		short = " (short run: partition shortened from the issue's 60 s)"
	}
	sec.Summary = []string{
		fmt.Sprintf("Fleet: %d regions × %d edges, %d products, 40 ms each way between the core and each region; up in %.1f s.", len(res.Regions), res.EdgesPerRegion, res.Products, res.UpSeconds),
		fmt.Sprintf("Far-region freshness (origin acknowledgement → visible on every edge of the region): %s — target p99 ≤ %s ms: %s.", strings.Join(fparts, "; "), ms(fleetTargetP99), verdict(res.Met)),
		fmt.Sprintf("Reads stay in their region: %d region→core frames on tcp/4222 (hub clients) and %v requests forwarded to the origin by the regions' edges while they served their reads; what crossed was leaf-node (tcp/7422) replication and %d frames on tcp/8081, the edges' origin health checks (one /healthz a second per edge): %s.",
			crossing, forwarded, checks, verdict(crossing == 0 && forwarded == 0)),
		fmt.Sprintf("Partition of %s for %.0f s%s: %d of %d reads failed under %.0f reads/s (%s); highest Vitrine-Staleness seen %d s; writes through its edges: %s (slowest to fail %s ms); after the heal every edge reached the last write's version in %s ms at most (target ≤ %s s: %s); follower bootstrap counters before → after: %s (no re-bootstrap: %s).",
			p.Region, p.Seconds, short, p.Reads.Failed, p.Reads.Sent, plan.readRate, verdict(p.Reads.Failed == 0 && p.Reads.Sent > 0), p.MaxStaleness, strings.Join(fwStatus, ", "), msf(fwMax), msf(convMax), strconv.Itoa(int(fleetConvergeTarget/time.Second)),
			verdict(len(p.ConvergeMS) == len(edgeNames) && len(edgeNames) > 0 && convMax <= float64(fleetConvergeTarget)/1e6), strings.Join(boots, "; "), verdict(!rebooted)),
		fmt.Sprintf("10%% loss both ways: %s.", strings.Join(lparts, "; ")),
		fmt.Sprintf("Rolling restart (SIGTERM, default 5 s drain, one edge at a time, balancer polling /readyz every 100 ms): %s — zero failed: %s.", strings.Join(rparts, "; "), verdict(rollOK)),
		"After Down: " + left + ".",
		"Method: " + fleetMethod,
	}
	sec.Tables = []report.Table{fresh, wire, fwd, readyz, conv, metrics, loss, roll}
	plot := report.Plot{File: "fleet-freshness-cdf.svg", Title: "Origin acknowledgement to visible on every edge of a far region (80 ms round trip)",
		Kind: report.KindCDF, XLabel: "ms after the origin's acknowledgement", YLabel: "fraction of writes visible"}
	for _, set := range []struct {
		label string
		vs    []FleetVisibility
	}{{"", res.Freshness}, {", 10% loss", res.Loss}} {
		for _, v := range set.vs {
			if v.hist != nil && v.hist.Count() > 0 {
				plot.Series = append(plot.Series, cdf(v.Region+set.label, v.hist))
			}
		}
	}
	if len(plot.Series) > 0 {
		sec.Plots = []report.Plot{plot}
	}
	sec.Data = res
}

// bootstrapLines is the bootstrap counters among an edge's metric samples, joined.
func bootstrapLines(samples []string) string {
	var out []string
	for _, s := range samples {
		if name, v, ok := strings.Cut(s, " "); ok && strings.Contains(name, "bootstraps_total") {
			name, _, _ = strings.Cut(name, "{")
			out = append(out, strings.TrimPrefix(name, "vitrine_")+"="+v)
		}
	}
	return strings.Join(out, ",")
}

// joinFailures formats failure counts for a table cell.
func joinFailures(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
