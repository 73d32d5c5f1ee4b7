package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench"
	"vitrine/bench/cluster"
	"vitrine/bench/report"
)

// Cold-start targets of the issue.
const (
	coldTargetShard = 2 * time.Second  // an empty edge of the 100k tenant's shard alone, to serving it
	coldTargetAll   = 10 * time.Second // an empty edge of every shard, to serving the 100k tenant
	coldTargetRSS   = 2.0              // steady RSS against the catalog's raw JSON
)

// coldPlan sizes the cold-start scenario.
type coldPlan struct {
	template      int   // products seeded through the database, cloned for every catalog
	targets       []int // products of the measured tenants
	others        int   // tenants holding the other entities
	otherEntities int   // at least this many other entities (products and variants) in the stream
	settle        time.Duration
}

func planColdStart(short bool) coldPlan {
	if short {
		return coldPlan{template: 300, targets: []int{2000, 10000}, others: 4, otherEntities: 100000, settle: 3 * time.Second}
	}
	return coldPlan{template: 2000, targets: []int{10000, 100000}, others: 20, otherEntities: 1000000, settle: 10 * time.Second}
}

// ColdStart measures how long an empty edge takes to serve large tenants among many other
// entities, bootstrapping from the stream alone (the "before") and from the per-shard snapshots
// (the "after"), and its memory against the catalogs' raw JSON.
func ColdStart() bench.Scenario {
	return bench.Scenario{
		Name:        "coldstart",
		Description: "an empty edge serving 10k and 100k product tenants among 1M other entities, from the stream alone and from per-shard snapshots: time, peak and steady RSS",
		Run:         runColdStart,
	}
}

// ColdStartResult is the machine-readable result of the cold-start scenario.
type ColdStartResult struct {
	TemplateProducts int     `json:"template_products"`
	TemplateSeconds  float64 `json:"template_seed_s"`
	OtherTenants     int     `json:"other_tenants"`
	OtherEntities    int     `json:"other_entities"`
	OtherRawJSON     int64   `json:"other_raw_json_bytes"`
	PublishSeconds   float64 `json:"publish_s"`
	PublishRate      float64 `json:"publish_msgs_per_s"`
	// Snapshot* describe the pass writing every shard's snapshot once the catalogs were
	// published: its duration, the objects and records written and their total size.
	SnapshotSeconds float64 `json:"snapshot_write_s"`
	SnapshotObjects int     `json:"snapshot_objects"`
	SnapshotRecords int     `json:"snapshot_records"`
	SnapshotBytes   int64   `json:"snapshot_bytes"`
	// SnapshotAnnexes and SnapshotAnnexBytes are the search index images the snapshots carry.
	SnapshotAnnexes    int           `json:"snapshot_annexes"`
	SnapshotAnnexBytes int64         `json:"snapshot_annex_bytes"`
	Targets            []ColdTarget  `json:"targets"`
	Runs               []ColdEdgeRun `json:"runs"`
	// EmptyRSS is the steady RSS of an edge that holds no tenant (the process's own floor).
	EmptyRSS int64  `json:"empty_edge_rss_bytes"`
	Method   string `json:"method"`
	// TargetServeShard and TargetServeAll are the serve targets: the largest tenant
	// served by an empty edge of its shard alone, and by an empty edge of every shard.
	TargetServeShard float64         `json:"target_serve_shard_s"`
	TargetServeAll   float64         `json:"target_serve_all_s"`
	TargetRSS        float64         `json:"target_rss_ratio"`
	Met              map[string]bool `json:"met"`
}

// ColdTarget is one measured tenant.
type ColdTarget struct {
	Slug     string `json:"slug"`
	Shard    int    `json:"shard"`
	Products int    `json:"products"`
	Entities int    `json:"entities"`
	RawJSON  int64  `json:"raw_json_bytes"`
}

// ColdEdgeRun is one empty edge started and measured.
type ColdEdgeRun struct {
	Name string `json:"name"`
	// Shards is the edge's --shards flag ("" for every shard).
	Shards string `json:"shards"`
	// Bootstrap is "stream" (--snapshots=false: the last message of every subject read from
	// the stream) or "snapshots" (the default: the shards' snapshots, then the stream from
	// there). FromSnapshot is what the edge's follower reported: 1 when it did bootstrap from
	// snapshots, and SnapshotFallbacks when it fell back to the stream.
	Bootstrap         string `json:"bootstrap"`
	FromSnapshot      int    `json:"follower_snapshot_bootstraps"`
	SnapshotFallbacks int    `json:"follower_snapshot_fallbacks"`
	// IndexImagesUsed and IndexImagesRefused are the replica's counters of the search index
	// images of the snapshots it used and refused (it indexed those tenants' products itself).
	IndexImagesUsed    int `json:"replica_index_images_used"`
	IndexImagesRefused int `json:"replica_index_images_refused"`
	// Serve is, per target slug, the seconds from the process start until its product page,
	// product list and search all answered fully.
	Serve map[string]float64 `json:"serve_s"`
	// Ready is the seconds until /readyz answered 200 (every tenant it serves checkpointed).
	Ready float64 `json:"ready_s"`
	// Entities and RawJSON are what the edge holds (public entities of its shards).
	Entities  int     `json:"entities"`
	RawJSON   int64   `json:"raw_json_bytes"`
	PeakRSS   int64   `json:"peak_rss_bytes"`
	SteadyRSS int64   `json:"steady_rss_bytes"`
	Ratio     float64 `json:"steady_rss_to_raw_json"`
	// RatioAboveEmpty is (steady RSS - an empty edge's RSS) / raw JSON: what the data costs.
	RatioAboveEmpty float64 `json:"steady_rss_above_empty_to_raw_json"`
}

const coldMethod = "A template tenant is seeded through the database (origin/seed, the relay publishing it); every other catalog " +
	"is built from its public products and variants, copied with shifted ids and suffixed slugs and SKUs (same texts), and " +
	"published directly to the state stream in the relay's encoding: publishes of whole transactions of at most 900 " +
	"changes, each ending with the log's head marker and fenced on it, as the relay does (going through the database " +
	"runs at ~1,200 entities/s here, too slow for a million). Tenants are registered in the database, so the registry " +
	"reaches edges through the relay as usual. The other tenants are published first and the measured ones last, so an " +
	"edge following every shard gets them at the end of its bootstrap. An empty edge process is then started; from its " +
	"fork, a poller asks every 5 ms, for each measured tenant, the last product published, the first page of the product " +
	"list (its total must be the whole catalog) and a search for a word of that product's title: the time when all three " +
	"answer fully is the tenant's serve time. Peak RSS is VmHWM from /proc/<pid>/status once every tenant answers; steady " +
	"RSS is VmRSS after the edge has idled for a few seconds. Raw JSON is the total size of the entities' JSON the edge holds. " +
	"Each edge is measured twice: bootstrapping from the stream alone (--snapshots=false, the \"before\") and from the per-shard " +
	"snapshots (the \"after\"), written in one pass (sync/snapshot, in the bench process; the relay's own periodic writer is off) " +
	"once every catalog was published; the edge's follower counters say whether it did bootstrap from them."

func runColdStart(ctx context.Context, env bench.Env) (_ report.Section, err error) {
	plan := planColdStart(env.Short)
	sec := report.Section{Name: "coldstart"}
	progress(env, "coldstart: starting NATS, a database and the relay")
	cc := clusterConfig(env, false, 0)
	cc.RelayArgs = []string{"--snapshot-every=0"} // the scenario writes the snapshots itself, once
	c, err := cluster.Start(ctx, cc)
	if err != nil {
		return sec, err
	}
	defer closeCluster(c, &err)
	res := ColdStartResult{TemplateProducts: plan.template, OtherTenants: plan.others, Method: coldMethod,
		TargetServeShard: coldTargetShard.Seconds(), TargetServeAll: coldTargetAll.Seconds(), TargetRSS: coldTargetRSS, Met: map[string]bool{}}

	tpl, err := c.CreateTenant(ctx, "template", cluster.TenantOptions{Products: plan.template, Progress: seedProgress(env, "template")})
	if err != nil {
		return sec, err
	}
	res.TemplateSeconds = tpl.SeedTime.Seconds()
	cat, err := c.ReadCatalog(ctx, tpl)
	if err != nil {
		return sec, err
	}
	perProduct := float64(len(cat.Changes)) / float64(plan.template) // entities per product, roughly
	otherProducts := int(float64(plan.otherEntities)/perProduct/float64(plan.others)) + 1

	var others, targets []*cluster.Tenant
	var sizes []int
	for i := range plan.others {
		t, err := c.RegisterTenant(ctx, fmt.Sprintf("other-%02d", i+1), 0)
		if err != nil {
			return sec, err
		}
		others = append(others, t)
		sizes = append(sizes, otherProducts)
	}
	for i, n := range plan.targets {
		t, err := c.RegisterTenant(ctx, fmt.Sprintf("cold-%dk", n/1000), i+1)
		if err != nil {
			return sec, err
		}
		targets = append(targets, t)
	}
	progress(env, "coldstart: publishing %d other tenants of %d products each to the stream", plan.others, otherProducts)
	start := time.Now()
	otherStats, err := c.PublishClones(ctx, others, cat, sizes, 3)
	if err != nil {
		return sec, err
	}
	for _, s := range otherStats {
		res.OtherEntities += s.Messages
		res.OtherRawJSON += s.RawJSON
	}
	progress(env, "coldstart: publishing the measured tenants (%v products)", plan.targets)
	targetStats, err := c.PublishClones(ctx, targets, cat, plan.targets, 2)
	if err != nil {
		return sec, err
	}
	published := res.OtherEntities
	for i, s := range targetStats {
		published += s.Messages
		res.Targets = append(res.Targets, ColdTarget{Slug: targets[i].Slug, Shard: targets[i].Shard, Products: s.Products, Entities: s.Messages, RawJSON: s.RawJSON})
	}
	res.PublishSeconds = time.Since(start).Seconds()
	res.PublishRate = float64(published) / res.PublishSeconds
	progress(env, "coldstart: writing the per-shard snapshots")
	snapStart := time.Now()
	snap, err := c.WriteSnapshots(ctx)
	if err != nil {
		return sec, err
	}
	res.SnapshotSeconds = time.Since(snapStart).Seconds()
	res.SnapshotObjects, res.SnapshotRecords, res.SnapshotBytes = snap.Objects, snap.Records, snap.Bytes
	res.SnapshotAnnexes, res.SnapshotAnnexBytes = snap.Annexes, snap.AnnexBytes

	// The template's own log is small and on shard 0 with the others.
	tplJSON := int64(0)
	for _, ch := range cat.Changes {
		tplJSON += int64(len(ch.Data))
	}
	runs := []struct {
		name, shards string
		targets      []int // indexes into targets
	}{{"every shard", "", allIndexes(len(targets))}}
	for i, t := range targets {
		runs = append(runs, struct {
			name, shards string
			targets      []int
		}{fmt.Sprintf("shard %d only (%s)", t.Shard, t.Slug), strconv.Itoa(t.Shard), []int{i}})
	}
	for _, r := range runs {
		for _, boot := range []string{"stream", "snapshots"} {
			progress(env, "coldstart: an empty edge serving %s, from %s", r.name, boot)
			run := ColdEdgeRun{Name: r.name + ", from " + boot, Shards: r.shards, Bootstrap: boot, Serve: map[string]float64{}}
			if r.shards == "" {
				run.Entities, run.RawJSON = res.OtherEntities+len(cat.Changes), res.OtherRawJSON+tplJSON
			}
			var probes []coldProbe
			for _, i := range r.targets {
				run.Entities += res.Targets[i].Entities
				run.RawJSON += res.Targets[i].RawJSON
				probes = append(probes, newColdProbe(targets[i], targetStats[i]))
			}
			if err := measureColdEdge(ctx, c, plan, &run, probes); err != nil {
				return sec, err
			}
			res.Runs = append(res.Runs, run)
		}
	}
	progress(env, "coldstart: an empty edge serving no tenant (its memory floor)")
	empty := ColdEdgeRun{Name: "no tenant", Shards: "999", Bootstrap: "stream", Serve: map[string]float64{}}
	if err := measureColdEdge(ctx, c, plan, &empty, nil); err != nil {
		return sec, err
	}
	res.EmptyRSS = empty.SteadyRSS
	for i := range res.Runs {
		r := &res.Runs[i]
		if r.RawJSON > 0 {
			r.RatioAboveEmpty = float64(r.SteadyRSS-res.EmptyRSS) / float64(r.RawJSON)
		}
	}
	if err := c.Err(); err != nil {
		return sec, err
	}

	// Targets against the runs: the largest tenant among every shard's entities, and each
	// isolated tenant's memory against its own catalog.
	largest := targets[len(targets)-1].Slug
	serveAll := res.Runs[0].Serve[largest]
	res.Met["serve"] = serveAll <= coldTargetAll.Seconds()
	sec.Summary = append(sec.Summary, fmt.Sprintf("Cold start of an empty edge following every shard from the stream alone (%d entities in the stream, %d of them other tenants'): "+
		"**%s (%d products) served in %.2f s** from the process start — target %s products among every shard within %.0f s: %s. /readyz after %.2f s.",
		res.Runs[0].Entities, res.OtherEntities, largest, res.Targets[len(targets)-1].Products, serveAll, coldTargetLabel(env.Short), coldTargetAll.Seconds(),
		verdictNote(res.Met["serve"], env.Short), res.Runs[0].Ready))
	snapAll := res.Runs[1]
	res.Met["serve from snapshots"] = snapAll.FromSnapshot > 0 && snapAll.Serve[largest] <= coldTargetAll.Seconds()
	sec.Summary = append(sec.Summary, fmt.Sprintf("The same edge from the per-shard snapshots: **%s served in %.2f s** (%.1f× faster), /readyz after %.2f s; "+
		"its follower reports %d snapshot bootstrap(s) and %d fallback(s), its replica %d search index image(s) used and %d refused: %s. "+
		"Writing the %d snapshots (%d records, %s, of which %d search index images of %s) took %.2f s.",
		largest, snapAll.Serve[largest], serveAll/max(snapAll.Serve[largest], 1e-9), snapAll.Ready, snapAll.FromSnapshot, snapAll.SnapshotFallbacks,
		snapAll.IndexImagesUsed, snapAll.IndexImagesRefused, verdictNote(res.Met["serve from snapshots"], env.Short),
		res.SnapshotObjects, res.SnapshotRecords, mib(res.SnapshotBytes), res.SnapshotAnnexes, mib(res.SnapshotAnnexBytes), res.SnapshotSeconds))
	// The largest tenant's shard alone, from the stream and from snapshots.
	for _, r := range res.Runs {
		if r.Shards != strconv.Itoa(targets[len(targets)-1].Shard) {
			continue
		}
		key := "serve " + r.Name
		res.Met[key] = r.Serve[largest] > 0 && r.Serve[largest] <= coldTargetShard.Seconds() && (r.Bootstrap != "snapshots" || r.FromSnapshot > 0)
		sec.Summary = append(sec.Summary, fmt.Sprintf("An empty edge of %s: **%s served in %.2f s** — target %s products of one shard within %.0f s: %s.",
			r.Name, largest, r.Serve[largest], coldTargetLabel(env.Short), coldTargetShard.Seconds(), verdictNote(res.Met[key], env.Short)))
	}
	for _, r := range res.Runs {
		key := "rss " + r.Name
		res.Met[key] = r.Ratio <= coldTargetRSS
		sec.Summary = append(sec.Summary, fmt.Sprintf("Memory, %s: peak RSS %s, steady RSS %s against %s of raw JSON held: **%.2f×** — target ≤ %.0f×: %s "+
			"(%.2f× counting only what is above an empty edge's %s).",
			r.Name, mib(r.PeakRSS), mib(r.SteadyRSS), mib(r.RawJSON), r.Ratio, coldTargetRSS, verdict(res.Met[key]), r.RatioAboveEmpty, mib(res.EmptyRSS)))
	}
	sec.Summary = append(sec.Summary, fmt.Sprintf("The template (%d products) seeded through the database in %.1f s; %d changes published directly to the stream in %.1f s (%.0f/s).",
		plan.template, res.TemplateSeconds, published, res.PublishSeconds, res.PublishRate), "Method: "+coldMethod)

	header := []string{"edge"}
	for _, t := range targets {
		header = append(header, t.Slug+" served (s)")
	}
	header = append(header, "ready (s)", "entities held", "raw JSON", "peak RSS", "steady RSS", "steady/raw", "(steady-empty)/raw")
	table := report.Table{Title: "Empty edges started against the stream, then against the per-shard snapshots", Header: header}
	bars := report.Plot{File: "coldstart-serve.svg", Title: "Cold start: seconds from process start to serving", Kind: report.KindBars, YLabel: "seconds"}
	for _, r := range res.Runs {
		row := []string{r.Name}
		s := report.Series{Name: r.Name}
		for _, t := range targets {
			if v, ok := r.Serve[t.Slug]; ok {
				row = append(row, strconv.FormatFloat(v, 'f', 2, 64))
				s.Points = append(s.Points, report.Point{Label: t.Slug, Y: v})
			} else {
				row = append(row, "")
			}
		}
		row = append(row, strconv.FormatFloat(r.Ready, 'f', 2, 64), strconv.Itoa(r.Entities), mib(r.RawJSON), mib(r.PeakRSS), mib(r.SteadyRSS), strconv.FormatFloat(r.Ratio, 'f', 2, 64),
			strconv.FormatFloat(r.RatioAboveEmpty, 'f', 2, 64))
		table.Rows = append(table.Rows, row)
		bars.Series = append(bars.Series, s)
	}
	sec.Tables = []report.Table{table}
	sec.Plots = []report.Plot{bars}
	sec.Data = res
	return sec, nil
}

func coldTargetLabel(short bool) string {
	if short {
		return "100k (the short run measures smaller tenants)"
	}
	return "100k"
}

func verdictNote(ok, short bool) string {
	if short {
		return verdict(ok) + " (at the short run's size)"
	}
	return verdict(ok)
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// coldProbe checks that an edge serves one tenant fully.
type coldProbe struct {
	slug, host string
	uris       []string
	wants      [][]byte // a body fragment each answer must hold
}

func newColdProbe(t *cluster.Tenant, st cluster.CloneStats) coldProbe {
	word := strings.ToLower(strings.Fields(st.LastTitle)[0])
	return coldProbe{slug: t.Slug, host: t.Host,
		uris:  []string{"/api/products/" + st.LastSlug, "/api/products?per_page=1", "/api/search?q=" + url.QueryEscape(word) + "&per_page=1"},
		wants: [][]byte{[]byte(`"slug":"` + st.LastSlug + `"`), []byte(`"total":` + strconv.Itoa(st.Products) + `,`), []byte(`"total":`)}}
}

// measureColdEdge starts an empty edge and times its probes, then reads its memory.
func measureColdEdge(ctx context.Context, c *cluster.Cluster, plan coldPlan, run *ColdEdgeRun, probes []coldProbe) error {
	var args []string
	if run.Shards != "" {
		args = []string{"--shards", run.Shards}
	}
	args = append(args, "--snapshots="+strconv.FormatBool(run.Bootstrap == "snapshots"))
	start := time.Now()
	p, err := c.StartEdgeNoWait(args...)
	if err != nil {
		return err
	}
	defer c.Stop(p, 5*time.Second)
	hc := &fasthttp.HostClient{Addr: p.Addr, MaxConns: 4, ReadTimeout: 10 * time.Second}
	served := map[string]bool{}
	deadline := start.Add(5 * time.Minute)
	for len(served) < len(probes) {
		for _, pr := range probes {
			if !served[pr.slug] && probeOnce(hc, pr) {
				served[pr.slug] = true
				run.Serve[pr.slug] = time.Since(start).Seconds()
			}
		}
		if len(served) == len(probes) {
			break
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("coldstart: %s exited: %s", p.Name, p.LogTail(800))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("coldstart: %s did not serve every tenant within 5 minutes", p.Name)
		}
	}
	for {
		if status, _, err := fasthttp.Get(nil, "http://"+p.OpsAddr+"/readyz"); err == nil && status == 200 {
			run.Ready = time.Since(start).Seconds()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("coldstart: %s never ready", p.Name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	run.PeakRSS = procStatus(p.PID, "VmHWM")
	if !sleepUntil(ctx, time.Now().Add(plan.settle)) {
		return ctx.Err()
	}
	run.SteadyRSS = procStatus(p.PID, "VmRSS")
	if _, body, err := fasthttp.Get(nil, "http://"+p.OpsAddr+"/metrics"); err == nil {
		run.FromSnapshot = int(metricValue(body, `vitrine_follower_snapshot_bootstraps_total{process="edge"}`))
		run.SnapshotFallbacks = int(metricValue(body, `vitrine_follower_snapshot_fallbacks_total{process="edge"}`))
		run.IndexImagesUsed = int(metricValue(body, `vitrine_replica_index_images_used_total{process="edge"}`))
		run.IndexImagesRefused = int(metricValue(body, `vitrine_replica_index_images_refused_total{process="edge"}`))
	}
	run.PeakRSS = max(run.PeakRSS, procStatus(p.PID, "VmHWM"))
	if run.RawJSON > 0 {
		run.Ratio = float64(run.SteadyRSS) / float64(run.RawJSON)
	}
	return nil
}

func probeOnce(hc *fasthttp.HostClient, pr coldProbe) bool {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	for i, uri := range pr.uris {
		req.Reset()
		resp.Reset()
		req.SetRequestURI(uri)
		req.Header.SetHost(pr.host)
		if err := hc.Do(req, resp); err != nil || resp.StatusCode() != 200 || !bytes.Contains(resp.Body(), pr.wants[i]) {
			return false
		}
		if i == 2 && bytes.Contains(resp.Body(), []byte(`"total":0,`)) {
			return false
		}
	}
	return true
}

// procStatus returns a memory field of /proc/<pid>/status in bytes (0 when unreadable).
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n * 1024 // kB
			}
		}
	}
	return 0
}

// metricValue returns the value of a sample of Prometheus text (0 when absent).
func metricValue(body []byte, name string) float64 {
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
