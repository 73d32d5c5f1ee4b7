package scenarios

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench"
	"vitrine/bench/cluster"
	"vitrine/bench/load"
	"vitrine/bench/report"
)

// freshnessTargetP99 is the target: p99 from the origin's acknowledgement to visible on
// every edge.
const freshnessTargetP99 = 25 * time.Millisecond

// freshnessPlan sizes the freshness scenario.
type freshnessPlan struct {
	edges     int
	products  int     // seeded
	pool      int     // products the writes cycle through
	writeRate float64 // writes/s at the origin
	readRate  float64 // reads/s per edge
	warmup    time.Duration
	// quiet is the window between the warm-up and the measurement when the edges carry their
	// read load and nothing is written: each process's CPU then is what the reads cost, and
	// what the measurement's window spends above that rate is what the writes cost.
	quiet    time.Duration
	duration time.Duration
	// floor is how long the pieces of a write run alone after the measurement (measureFloor).
	floor time.Duration
}

func planFreshness(short bool) freshnessPlan {
	if short {
		return freshnessPlan{edges: 2, products: 1000, pool: 500, writeRate: 200, readRate: 500, warmup: 2 * time.Second, quiet: 4 * time.Second, duration: 10 * time.Second, floor: 10 * time.Second}
	}
	return freshnessPlan{edges: 3, products: 10000, pool: 2000, writeRate: 200, readRate: 2000, warmup: 5 * time.Second, quiet: 15 * time.Second, duration: 60 * time.Second, floor: 20 * time.Second}
}

// Freshness measures, for each write acknowledged by the origin, how long until every edge (all
// separate processes) serves the new value, while reads load the edges.
func Freshness() bench.Scenario {
	return bench.Scenario{
		Name:        "freshness",
		Description: "write at the origin to visible on every edge: distribution per edge at a fixed write rate under read load",
		Run:         runFreshness,
	}
}

// FreshnessResult is the machine-readable result of the freshness scenario.
type FreshnessResult struct {
	Edges           int     `json:"edges"`
	Products        int     `json:"products"`
	SeedSeconds     float64 `json:"seed_s"`
	WriteRate       float64 `json:"write_rate"`
	Writes          int     `json:"writes"`
	WriteErrors     int     `json:"write_errors"`
	LateWrites      int     `json:"late_writes"`
	ReadRatePerEdge float64 `json:"read_rate_per_edge"`
	// Overall is, per write, the time until the last edge served it.
	Overall load.Summary            `json:"overall"`
	PerEdge map[string]load.Summary `json:"per_edge"`
	// Ack is the write's own latency, from its intended send time to the origin's answer.
	Ack load.Summary `json:"ack"`
	// SendToVisible is, per write, the time from its intended send to its answer on the last
	// edge: what a writer waits to see its write everywhere (Ack and Overall together).
	SendToVisible load.Summary `json:"send_to_visible"`
	// AckParts says where the acknowledgements' time went (the origin's Server-Timing): for
	// every write, and for the slowest 1% and 0.1% by acknowledgement.
	AckParts []AckPart `json:"ack_parts,omitempty"`
	// Timeouts counts watches the edge answered 503 (floor not reached in its 2 s), Mismatches
	// watches whose body lacked the written value.
	Timeouts   int           `json:"timeouts"`
	Mismatches int           `json:"mismatches"`
	Reads      []ReadLoad    `json:"reads"`
	TargetP99  float64       `json:"target_p99_ms"`
	Met        bool          `json:"met"`
	CPU        load.CPUUsage `json:"cpu"`
	// CPUByProcess is each server process's CPU seconds during the window (nats, relay,
	// origin, edge-N, and the machine's PostgreSQL as database): the cost of the writes, and on
	// edges of the reads as well.
	CPUByProcess map[string]float64 `json:"cpu_by_process"`
	// QuietSeconds is the length of the window before the measurement with the same read load
	// and no writes; QuietCPUByProcess is each process's CPU seconds during it.
	QuietSeconds      float64            `json:"quiet_s"`
	QuietCPUByProcess map[string]float64 `json:"quiet_cpu_by_process"`
	// WriteCPUByProcess is, per process, the CPU milliseconds per acknowledged write above the
	// quiet window's rate: what the writes cost, with the reads' cost taken out.
	WriteCPUByProcess map[string]float64 `json:"write_cpu_ms_by_process"`
	// RelayBatches and RelayPublished are the publishes the relay completed during the window
	// and the changes they carried (its metrics): every publish costs the relay a round (an
	// outbox read; a settling transaction at most every --settle-every) and NATS a head, however
	// few changes it carries.
	RelayBatches   float64 `json:"relay_batches"`
	RelayPublished float64 `json:"relay_published"`
	// SnapshotPasses and SnapshotSeconds are the snapshot passes the relay ran during the
	// window and the time they took (background work beside the writes: paced, see
	// --snapshot-cpu-percent).
	SnapshotPasses  float64 `json:"snapshot_passes"`
	SnapshotSeconds float64 `json:"snapshot_seconds"`
	// Floor is what the pieces a write crosses cost run alone at the same rate, once per write
	// (measureFloor): the least a write path that carries each write alone through them spends
	// per write on this machine.
	Floor    []PieceFloor   `json:"floor,omitempty"`
	Method   string         `json:"method"`
	Statuses map[string]int `json:"write_statuses,omitempty"`
}

// AckPart is the mean of each part of the acknowledgements of a set of writes, in ms: Send, from
// the write's intended time to the bench sending it; App, the origin's time from reading the
// request to waiting for its replica (routing, authentication, the transaction with its queueing
// and retries); Replica, the origin's wait for its own replica to apply the write; Rest, the
// remainder (the request's and the answer's way between the processes, the origin reading and
// answering, and the scheduling of each).
type AckPart struct {
	Writes  string  `json:"writes"`
	Count   int     `json:"count"`
	Ack     float64 `json:"ack_ms"`
	Send    float64 `json:"send_ms"`
	App     float64 `json:"app_ms"`
	Replica float64 `json:"replica_ms"`
	Rest    float64 `json:"rest_ms"`
	// First and Last are the earliest and the latest intended time of the writes, in seconds
	// from the window's start: slow writes close together shared a stall.
	First float64 `json:"first_s"`
	Last  float64 `json:"last_s"`
}

// ackTiming is one write's acknowledgement and its parts, and its intended time in the window.
type ackTiming struct{ at, ack, send, app, replica time.Duration }

// ackParts returns AckPart for every write and for the slowest 1% and 0.1% by acknowledgement
// (each at least one write); it sorts ts.
func ackParts(ts []ackTiming) []AckPart {
	if len(ts) == 0 {
		return nil
	}
	slices.SortFunc(ts, func(a, b ackTiming) int { return cmp.Compare(b.ack, a.ack) })
	mean := func(name string, ts []ackTiming) AckPart {
		var a, s, p, r time.Duration
		first, last := ts[0].at, ts[0].at
		for _, t := range ts {
			a, s, p, r = a+t.ack, s+t.send, p+t.app, r+t.replica
			first, last = min(first, t.at), max(last, t.at)
		}
		n := float64(len(ts)) * 1e6
		return AckPart{Writes: name, Count: len(ts), Ack: float64(a) / n, Send: float64(s) / n, App: float64(p) / n,
			Replica: float64(r) / n, Rest: float64(a-s-p-r) / n, First: first.Seconds(), Last: last.Seconds()}
	}
	return []AckPart{mean("every write", ts), mean("the slowest 1%", ts[:max(1, len(ts)/100)]),
		mean("the slowest 0.1%", ts[:max(1, len(ts)/1000)])}
}

// parseServerTiming reads the origin's Server-Timing of a write ("app;dur=1.234, replica;dur=0.567",
// milliseconds): ok is false unless both are there, once each, as non-negative numbers.
func parseServerTiming(h string) (app, replica time.Duration, ok bool) {
	seen := 0
	for m := range strings.SplitSeq(h, ",") {
		name, params, found := strings.Cut(strings.TrimSpace(m), ";")
		v, isDur := strings.CutPrefix(strings.TrimSpace(params), "dur=")
		if !found || !isDur {
			return 0, 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1e9 || f != f {
			return 0, 0, false
		}
		d := time.Duration(f * 1e6)
		switch {
		case name == "app" && seen&1 == 0:
			app, seen = d, seen|1
		case name == "replica" && seen&2 == 0:
			replica, seen = d, seen|2
		default:
			return 0, 0, false
		}
	}
	return app, replica, seen == 3
}

// ReadLoad is the read load one edge carried during a measurement.
type ReadLoad struct {
	Edge       string       `json:"edge"`
	Throughput float64      `json:"throughput"`
	Errors     uint64       `json:"errors"`
	Latency    load.Summary `json:"latency"`
}

const freshnessMethod = "Each write is a PATCH of one product's price (every fourth also renames it, which re-indexes its search words) " +
	"sent to the origin at its intended time. When the origin acknowledges it (200 with Vitrine-Write-Version V), one watch " +
	"request per edge is sent at once: GET of the product's page with Vitrine-Min-Version: V. The edge holds it, without " +
	"polling, until its replica has applied V (it wakes on the apply), then renders the page; the body is checked for the new " +
	"price. The time from the acknowledgement to the watch's answer is the freshness of that edge; the slowest edge's is the " +
	"write's. It includes one loopback round trip and one page render (~0.1-0.3 ms) beyond the apply itself: an upper bound. " +
	"The watches add one request per write per edge, against the read load given."

func runFreshness(ctx context.Context, env bench.Env) (_ report.Section, err error) {
	plan := planFreshness(env.Short)
	sec := report.Section{Name: "freshness"}
	progress(env, "freshness: starting NATS, a database, the relay, the origin and %d edges", plan.edges)
	c, err := cluster.Start(ctx, clusterConfig(env, true, plan.edges))
	if err != nil {
		return sec, err
	}
	defer closeCluster(c, &err)
	shop, err := c.CreateTenant(ctx, "fresh", cluster.TenantOptions{Products: plan.products, Progress: seedProgress(env, "fresh")})
	if err != nil {
		return sec, err
	}
	origin := newClient(c.Origin.Addr, shop.Host, 256)
	pool, err := products(origin, plan.pool)
	if err != nil {
		return sec, err
	}
	watchers := make([]*client, len(c.Edges))
	for i, e := range c.Edges {
		watchers[i] = newClient(e.Addr, shop.Host, 512)
	}

	// Read load on every edge for the whole run.
	readCtx, stopReads := context.WithCancel(ctx)
	defer stopReads()
	reads := make([]load.Result, len(c.Edges))
	readErrs := make([]error, len(c.Edges))
	var readWG sync.WaitGroup
	for i, e := range c.Edges {
		readWG.Add(1)
		go func() {
			defer readWG.Done()
			reads[i], readErrs[i] = load.Run(readCtx, readMix(e.Addr, shop.Host, pool, plan.readRate, plan.warmup+plan.quiet+plan.duration), e.PID)
		}()
	}

	w := &freshnessRun{plan: plan, origin: origin, watchers: watchers, pool: pool, auth: shop.Auth,
		overall: load.NewHistogram(), ack: load.NewHistogram(), sendVisible: load.NewHistogram(), statuses: map[string]int{}}
	for range c.Edges {
		w.perEdge = append(w.perEdge, load.NewHistogram())
	}
	progress(env, "freshness: warming up (%s of writes and reads)", plan.warmup)
	if err := w.run(ctx, plan.warmup, false); err != nil {
		return sec, err
	}
	progress(env, "freshness: %s of reads alone (the read load's own CPU)", plan.quiet)
	quietStart, quietProcStart := time.Now(), processCPU(c.Running())
	select {
	case <-ctx.Done():
		return sec, ctx.Err()
	case <-time.After(plan.quiet):
	}
	quietWall, quietCPU := time.Since(quietStart).Seconds(), cpuByProcessBetween(quietProcStart, processCPU(c.Running()))
	cpuStart, procStart := readCPU(c.PIDs()), processCPU(c.Running())
	relayStart := relayCounters(c)
	progress(env, "freshness: %.0f writes/s for %s, %.0f reads/s on each of %d edges", plan.writeRate, plan.duration, plan.readRate, plan.edges)
	profiled := make(chan error, 1)
	if env.Profile {
		go func() { profiled <- c.ProfileCPU(ctx, plan.duration, env.Out) }()
	} else {
		profiled <- nil
	}
	if err := w.run(ctx, plan.duration, true); err != nil {
		return sec, err
	}
	if err := <-profiled; err != nil {
		return sec, fmt.Errorf("profiles: %w", err)
	}
	cpuEnd, procEnd := readCPU(c.PIDs()), processCPU(c.Running())
	relayEnd := relayCounters(c)
	readWG.Wait()
	for i, e := range readErrs {
		if e != nil {
			return sec, fmt.Errorf("read load on %s: %w", c.Edges[i].Name, e)
		}
	}
	if err := c.Err(); err != nil {
		return sec, err
	}
	var floor []PieceFloor
	if len(w.answer) > 0 {
		progress(env, "freshness: the pieces of a write alone at %.0f/s for %s (the floor)", plan.writeRate, plan.floor)
		fw := floorWrite{path: "/api/admin/products/" + strconv.FormatInt(pool[0].ID, 10), auth: shop.Auth,
			body: []byte(`{"prices":{"USD":500000}}`), answer: w.answer}
		if floor, err = measureFloor(ctx, c, plan.writeRate, plan.floor, plan.edges+1, fw, quietCPU["nats"]/quietWall); err != nil {
			return sec, err
		}
	}

	res := FreshnessResult{Edges: plan.edges, Products: plan.products, SeedSeconds: shop.SeedTime.Seconds(), WriteRate: plan.writeRate,
		Writes: w.writes, WriteErrors: w.writeErrors, LateWrites: w.late, ReadRatePerEdge: plan.readRate,
		Overall: w.overall.Summary(), Ack: w.ack.Summary(), SendToVisible: w.sendVisible.Summary(), PerEdge: map[string]load.Summary{}, Timeouts: w.timeouts,
		Mismatches: w.mismatches, TargetP99: float64(freshnessTargetP99) / 1e6, Method: freshnessMethod, Statuses: w.statuses,
		CPU: cpuBetween(cpuStart, cpuEnd), CPUByProcess: cpuByProcessBetween(procStart, procEnd),
		QuietSeconds: quietWall, QuietCPUByProcess: quietCPU,
		RelayBatches: relayEnd.batches - relayStart.batches, RelayPublished: relayEnd.published - relayStart.published,
		SnapshotPasses: relayEnd.passes - relayStart.passes, SnapshotSeconds: relayEnd.passSeconds - relayStart.passSeconds, Floor: floor}
	p99 := w.overall.ValueAtQuantile(0.99)
	res.Met = w.overall.Count() > 0 && p99 <= freshnessTargetP99 && w.timeouts == 0 && w.mismatches == 0
	table := report.Table{Title: "Acknowledgement to visible (ms)", Header: []string{"edge", "writes", "p50", "p90", "p99", "p99.9", "max"}}
	plot := report.Plot{File: "freshness-cdf.svg", Title: "Freshness: origin acknowledgement to visible on each edge", Kind: report.KindCDF,
		XLabel: "ms after the origin's acknowledgement", YLabel: "fraction of writes visible"}
	for i, e := range c.Edges {
		s := w.perEdge[i].Summary()
		res.PerEdge[e.Name] = s
		table.Rows = append(table.Rows, summaryRow(e.Name, s))
		plot.Series = append(plot.Series, cdf(e.Name, w.perEdge[i]))
	}
	table.Rows = append(table.Rows, summaryRow("every edge (slowest)", res.Overall))
	plot.Series = append(plot.Series, cdf("every edge (slowest)", w.overall))
	readTable := report.Table{Title: "Read load during the measurement (open loop, from the intended send time, ms)",
		Header: []string{"edge", "requests", "p50", "p90", "p99", "p99.9", "max", "req/s", "errors"}}
	for i, r := range reads {
		rl := ReadLoad{Edge: c.Edges[i].Name, Throughput: r.Throughput, Errors: r.Errors, Latency: r.Latency.Summary()}
		res.Reads = append(res.Reads, rl)
		readTable.Rows = append(readTable.Rows, summaryRow(rl.Edge, rl.Latency, strconv.FormatFloat(r.Throughput, 'f', 0, 64), strconv.FormatUint(r.Errors, 10)))
	}
	ackTable := report.Table{Title: "The writes themselves: from the intended send time to the origin's acknowledgement, and to visible on every edge (ms)",
		Header: []string{"", "writes", "p50", "p90", "p99", "p99.9", "max", "errors", "late"}}
	ackTable.Rows = append(ackTable.Rows, summaryRow("PATCH /api/admin/products/{id}: acknowledged", res.Ack, strconv.Itoa(w.writeErrors), strconv.Itoa(w.late)),
		summaryRow("the same, to visible on every edge", res.SendToVisible, "", ""))
	res.AckParts = ackParts(w.timings)
	partsTable := report.Table{Title: "Where the acknowledgements' time went, by the origin's Server-Timing (mean ms)",
		Header: []string{"writes", "count", "acknowledged", "bench: intended to sent", "origin: read to replica wait", "origin: replica wait", "the rest",
			"sent between (s into the window)"}}
	for _, p := range res.AckParts {
		partsTable.Rows = append(partsTable.Rows, []string{p.Writes, strconv.Itoa(p.Count), msf(p.Ack), msf(p.Send), msf(p.App), msf(p.Replica), msf(p.Rest),
			strconv.FormatFloat(p.First, 'f', 2, 64) + "–" + strconv.FormatFloat(p.Last, 'f', 2, 64)})
	}

	sec.Summary = []string{
		fmt.Sprintf("Freshness at %.0f writes/s under %.0f reads/s on each of %d edges (separate processes; %d products): "+
			"**p99 %s ms** from the origin's acknowledgement to visible on every edge (p50 %s, p99.9 %s, max %s) — target p99 ≤ %s ms: %s.",
			plan.writeRate, plan.readRate, plan.edges, plan.products, msf(res.Overall.P99), msf(res.Overall.P50), msf(res.Overall.P999),
			msf(res.Overall.Max), ms(freshnessTargetP99), verdict(res.Met)),
		fmt.Sprintf("%d writes measured (%d failed, %d sent late), %d watches timed out, %d served a body without the written value. "+
			"For comparison, published CDN purge figures are ~150 ms, and those only invalidate.", w.writes, w.writeErrors, w.late, w.timeouts, w.mismatches),
		fmt.Sprintf("CPU during the window: servers %.2f s, bench process %.2f s, other %.2f s over %.1f s.", res.CPU.Server, res.CPU.Generator, res.CPU.Other, res.CPU.Wall),
		"Method: " + freshnessMethod,
	}
	cpuTable := report.Table{Title: "Server CPU during the window, by process (edges also serve the read load)",
		Header: []string{"process", "CPU s", "cores busy", "ms per acknowledged write",
			fmt.Sprintf("cores busy, %.0f s of reads alone", res.QuietSeconds), "ms per write above the reads alone"}}
	acked := max(1, w.writes-w.writeErrors)
	res.WriteCPUByProcess = writeCPU(res.CPUByProcess, res.CPU.Wall, res.QuietCPUByProcess, res.QuietSeconds, acked)
	var names []string
	for name := range res.CPUByProcess {
		names = append(names, name)
	}
	sort.Strings(names)
	total, quiet, above := 0.0, 0.0, 0.0
	for _, name := range names {
		t, q, a := res.CPUByProcess[name], res.QuietCPUByProcess[name], res.WriteCPUByProcess[name]
		total, quiet, above = total+t, quiet+q, above+a
		cpuTable.Rows = append(cpuTable.Rows, []string{name, strconv.FormatFloat(t, 'f', 2, 64),
			strconv.FormatFloat(t/res.CPU.Wall, 'f', 2, 64), strconv.FormatFloat(1000*t/float64(acked), 'f', 2, 64),
			strconv.FormatFloat(q/res.QuietSeconds, 'f', 2, 64), strconv.FormatFloat(a, 'f', 2, 64)})
	}
	cpuTable.Rows = append(cpuTable.Rows, []string{"all", strconv.FormatFloat(total, 'f', 2, 64),
		strconv.FormatFloat(total/res.CPU.Wall, 'f', 2, 64), strconv.FormatFloat(1000*total/float64(acked), 'f', 2, 64),
		strconv.FormatFloat(quiet/res.QuietSeconds, 'f', 2, 64), strconv.FormatFloat(above, 'f', 2, 64)})
	sec.Summary = append(sec.Summary, fmt.Sprintf("Server CPU per acknowledged write: %.2f ms in all, %.2f ms above what the same read load "+
		"cost with nothing written (%.0f s of reads alone before the window) — target ≤ 1 ms. The relay completed %.0f publishes "+
		"carrying %.0f changes (%.2f per publish), and ran %.0f snapshot passes (%.2f s).", 1000*total/float64(acked), above, res.QuietSeconds,
		res.RelayBatches, res.RelayPublished, res.RelayPublished/max(1, res.RelayBatches), res.SnapshotPasses, res.SnapshotSeconds))
	sec.Tables = []report.Table{table, ackTable}
	if len(partsTable.Rows) > 0 {
		sec.Tables = append(sec.Tables, partsTable)
	}
	sec.Tables = append(sec.Tables, readTable, cpuTable)
	if len(floor) > 0 {
		floorTable, sum := floorReport(floor, res.WriteCPUByProcess)
		sec.Tables = append(sec.Tables, floorTable)
		sec.Summary = append(sec.Summary, fmt.Sprintf("The pieces a write crosses, each alone at the same %.0f writes/s and once per write, with nothing of Vitrine's in them "+
			"(a bare origin of fasthttp and one one-round-trip SERIALIZABLE transaction through pgx, PostgreSQL, a JetStream publish and %d followers), cost %.2f ms of CPU per write "+
			"on this machine: the floor of a write path that carries each write alone through them. The writes here cost %.2f ms above the reads, %.2f× that floor.",
			plan.writeRate, plan.edges+1, sum, above, above/max(sum, 1e-9)))
	}
	sec.Plots = []report.Plot{plot}
	sec.Data = res
	return sec, nil
}

// relayCount is what relayCounters reads.
type relayCount struct{ batches, published, passes, passSeconds float64 }

// relayCounters reads the relay's publishes, published changes and snapshot passes from its
// metrics (zeros when they cannot be read).
func relayCounters(c *cluster.Cluster) relayCount {
	var rc relayCount
	for _, p := range c.Running() {
		if p.Name != "relay" || p.OpsAddr == "" {
			continue
		}
		if _, body, err := fasthttp.Get(nil, "http://"+p.OpsAddr+"/metrics"); err == nil {
			rc = relayCount{batches: metricValue(body, "vitrine_relay_batches_total"), published: metricValue(body, "vitrine_relay_published_total"),
				passes: metricValue(body, "vitrine_snapshot_passes_total"), passSeconds: metricValue(body, "vitrine_snapshot_seconds_total")}
		}
	}
	return rc
}

// writeCPU is, per process, the CPU milliseconds per write that the window spent above the quiet
// window's rate (never below zero: a process idler under writes than without them cost the writes
// nothing).
func writeCPU(window map[string]float64, windowWall float64, quiet map[string]float64, quietWall float64, writes int) map[string]float64 {
	out := make(map[string]float64, len(window))
	for name, t := range window {
		base := 0.0
		if quietWall > 0 {
			base = quiet[name] / quietWall * windowWall
		}
		out[name] = max(0, 1000*(t-base)/float64(max(1, writes)))
	}
	return out
}

// readMix is the read load of an edge during freshness: product pages with Zipf popularity
// (80%) and product list pages (20%), open loop at rate.
func readMix(addr, host string, pool []listedProduct, rate float64, d time.Duration) load.Config {
	const conns = 8
	rngs := make([]*rand.Rand, conns)
	zipfs := make([]*rand.Zipf, conns)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 42))
		zipfs[i] = rand.NewZipf(rngs[i], 1.1, 1, uint64(len(pool)-1))
	}
	return load.Config{Addr: addr, Conns: conns, Rate: rate, Duration: d,
		Next: func(worker int, seq uint64, req *fasthttp.Request) {
			req.Header.SetHost(host)
			if rngs[worker].IntN(5) == 0 {
				req.SetRequestURI("/api/products?page=" + strconv.Itoa(1+rngs[worker].IntN(20)))
				return
			}
			req.SetRequestURI("/api/products/" + pool[zipfs[worker].Uint64()].Slug)
		},
		Check: func(resp *fasthttp.Response) bool { return resp.StatusCode() == 200 },
	}
}

// freshnessRun drives the writes and their watches.
type freshnessRun struct {
	plan     freshnessPlan
	origin   *client
	watchers []*client
	pool     []listedProduct
	auth     string
	seq      int

	mu                        sync.Mutex
	overall, ack, sendVisible *load.Histogram
	perEdge                   []*load.Histogram
	writes, writeErrors, late int
	timeouts, mismatches      int
	timings                   []ackTiming // of writes whose answer carried the origin's Server-Timing
	windowStart               time.Time   // of the measured run
	statuses                  map[string]int
	answer                    []byte // the last acknowledged write's answer body
}

// run writes at the plan's rate for d; with record, the writes and watches are measured.
func (w *freshnessRun) run(ctx context.Context, d time.Duration, record bool) error {
	interval := time.Duration(float64(time.Second) / w.plan.writeRate)
	n := int(d / interval)
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	start := time.Now()
	if record {
		w.windowStart = start
	}
	for i := range n {
		intended := start.Add(time.Duration(i) * interval)
		if !sleepUntil(ctx, intended) {
			break
		}
		late := false
		select {
		case sem <- struct{}{}:
		default:
			late = true
			sem <- struct{}{}
		}
		w.seq++
		seq := w.seq
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			w.write(seq, intended, late, record)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// write makes one write and watches every edge for it.
func (w *freshnessRun) write(seq int, intended time.Time, late, record bool) {
	p := w.pool[seq%len(w.pool)]
	price := 500000 + seq
	body := `{"prices":{"USD":` + strconv.Itoa(price) + `}}`
	if seq%4 == 0 {
		body = `{"prices":{"USD":` + strconv.Itoa(price) + `},"title":"Bench Renamed ` + strconv.Itoa(seq) + `"}`
	}
	sent := time.Now()
	status, out, hdr, err := w.origin.do("PATCH", "/api/admin/products/"+strconv.FormatInt(p.ID, 10), []byte(body), "Authorization", w.auth)
	acked := time.Now()
	version := ""
	if err == nil {
		version = hdr("Vitrine-Write-Version")
	}
	if err != nil || status != 200 || version == "" {
		w.mu.Lock()
		defer w.mu.Unlock()
		if record {
			w.writeErrors++
			w.statuses[fmt.Sprintf("%d %.80s %v", status, out, err)]++
		}
		return
	}
	want := []byte(`"amount":` + strconv.Itoa(price) + `,`)
	lat := make([]time.Duration, len(w.watchers))
	timedOut := make([]bool, len(w.watchers))
	mismatch := make([]bool, len(w.watchers))
	var wg sync.WaitGroup
	for i, c := range w.watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, b, _, err := c.do("GET", "/api/products/"+p.Slug, nil, "Vitrine-Min-Version", version)
			lat[i] = time.Since(acked)
			timedOut[i] = err != nil || st != 200
			mismatch[i] = !timedOut[i] && !bytes.Contains(b, want)
		}()
	}
	wg.Wait()
	if !record {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.answer = out
	if late {
		w.late++
	}
	w.ack.Record(acked.Sub(intended))
	if app, replica, ok := parseServerTiming(hdr("Server-Timing")); ok {
		w.timings = append(w.timings, ackTiming{at: intended.Sub(w.windowStart), ack: acked.Sub(intended), send: max(0, sent.Sub(intended)), app: app, replica: replica})
	}
	var slowest time.Duration
	for i := range lat {
		w.perEdge[i].Record(lat[i])
		slowest = max(slowest, lat[i])
		if timedOut[i] {
			w.timeouts++
		}
		if mismatch[i] {
			w.mismatches++
		}
	}
	w.overall.Record(slowest)
	w.sendVisible.Record(acked.Sub(intended) + slowest)
}
