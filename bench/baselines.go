package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench/load"
	"vitrine/bench/report"
)

// Baselines is the product-page workload (Zipf popularity over a seeded tenant's products)
// against, in the same run: a bare fasthttp server returning the same body bytes, the edge,
// nginx proxy_cache and Varnish in front of the origin (which answers public reads from its own
// replica), and the edge with its rendered cache disabled. Bodies and cache hits are verified
// before measuring; peaks are closed-loop, latency is open-loop at half of nginx's peak.
func Baselines() Scenario {
	return Scenario{Name: "baselines", Description: "product pages: edge against bare fasthttp, nginx proxy_cache, Varnish and the uncached edge", Run: runBaselines}
}

// target is one server of the baselines.
type target struct {
	name string // as in the report
	addr string
	proc *proc
	// verify checks the server before measuring: bodies identical to the origin's, hits.
	verify func(ctx context.Context) error
}

// BaselinesData is the baselines' part of results.json.
type BaselinesData struct {
	Products     int                  `json:"products"`
	Rounds       int                  `json:"rounds"`
	Peaks        map[string]float64   `json:"peak_median"` // req/s by server
	HeaderBytes  map[string]int       `json:"header_bytes"`
	OpenRate     float64              `json:"open_rate"`
	Measurements []Measurement        `json:"measurements"`
	Ratios       map[string]float64   `json:"ratios"`
	Targets      map[string]TargetRow `json:"targets"`
	Skipped      map[string]string    `json:"skipped,omitempty"`
}

// TargetRow is a target of the issue against its measurement.
type TargetRow struct {
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Met      bool    `json:"met"`
}

func runBaselines(ctx context.Context, env Env) (report.Section, error) {
	sec := report.Section{Name: "baselines"}
	products, rounds := 10000, 3
	warmup, duration, openDuration := 2*time.Second, 8*time.Second, 10*time.Second
	if env.Short {
		products, rounds = 2000, 1
		warmup, duration, openDuration = 500*time.Millisecond, 2*time.Second, 3*time.Second
	}
	dir, err := scratchDir("vitrine-bench-baselines-")
	if err != nil {
		return sec, err
	}
	defer os.RemoveAll(dir)

	dev, err := startDev(ctx, env, dir, products, 20)
	if err != nil {
		return sec, err
	}
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
		dev.close(ctx)
	}()

	env.progress("baselines: starting the edges")
	edgeProc, edgeAddr, err := dev.startEdge(ctx, env, dir, "edge")
	if err != nil {
		return sec, err
	}
	procs = append(procs, edgeProc)
	uncachedProc, uncachedAddr, err := dev.startEdge(ctx, env, dir, "edge-uncached", "-cache-bytes", "-1")
	if err != nil {
		return sec, err
	}
	procs = append(procs, uncachedProc)
	if err := waitTenant(ctx, edgeAddr, uncachedAddr); err != nil {
		return sec, err
	}
	cat, err := discoverCatalog(ctx, edgeAddr, tenantHost)
	if err != nil {
		return sec, err
	}

	// The origin's bodies are the reference every server must reproduce byte for byte.
	origin := &fasthttp.HostClient{Addr: dev.origin, MaxResponseBodySize: 64 << 20}
	samples := samplePaths(cat.products, 40)
	want := map[string][]byte{}
	var contentType []byte
	for _, p := range samples {
		status, body, ct, _, err := get(origin, p)
		if err != nil || status != 200 {
			return sec, fmt.Errorf("bench: the origin answers %s with %d, %v", p, status, err)
		}
		want[p] = body
		if contentType == nil {
			contentType = ct
		}
	}
	top := cat.products[0]
	bodyFile := filepath.Join(dir, "fixed-body.json")
	if err := os.WriteFile(bodyFile, want[top], 0o644); err != nil {
		return sec, err
	}
	fixedAddr, err := freeAddr()
	if err != nil {
		return sec, err
	}
	fixedProc, err := startProc("fixed", dir, env.ServerCPUs, nil, env.Binary, "bench-fixed-server",
		"-addr", fixedAddr, "-body", bodyFile, "-content-type", string(contentType))
	if err != nil {
		return sec, err
	}
	procs = append(procs, fixedProc)
	if err := waitTCP(ctx, fixedProc, fixedAddr, 10*time.Second); err != nil {
		return sec, err
	}

	targets := []*target{
		{name: "fixed", addr: fixedAddr, proc: fixedProc, verify: func(ctx context.Context) error {
			return verifyBodies(fixedAddr, map[string][]byte{top: want[top], "/any/other/path": want[top]}, false)
		}},
		{name: "edge", addr: edgeAddr, proc: edgeProc, verify: func(ctx context.Context) error {
			if err := fetchAll(ctx, edgeAddr, tenantHost, cat.products, 16); err != nil {
				return err
			}
			return verifyBodies(edgeAddr, want, false)
		}},
	}
	data := BaselinesData{Products: len(cat.products), Rounds: rounds, Peaks: map[string]float64{}, HeaderBytes: map[string]int{},
		Ratios: map[string]float64{}, Targets: map[string]TargetRow{}, Skipped: map[string]string{}}
	var problems []error
	nginxBin, varnishBin, toolErr := ensureTools(ctx, env)
	proxy := func(name, bin string, start func(context.Context, Env, string, string, string) (*proc, string, error)) {
		if bin == "" {
			data.Skipped[name] = toolErr.Error()
			problems = append(problems, fmt.Errorf("%s: %w", name, toolErr))
			return
		}
		p, addr, err := start(ctx, env, bin, dir, dev.origin)
		if err != nil {
			data.Skipped[name] = err.Error()
			problems = append(problems, err)
			return
		}
		procs = append(procs, p)
		targets = append(targets, &target{name: name, addr: addr, proc: p, verify: func(ctx context.Context) error {
			if err := fetchAll(ctx, addr, tenantHost, cat.products, 16); err != nil {
				return err
			}
			return verifyBodies(addr, want, true)
		}})
	}
	proxy("nginx", nginxBin, startNginx)
	proxy("varnish", varnishBin, startVarnish)
	targets = append(targets, &target{name: "edge-uncached", addr: uncachedAddr, proc: uncachedProc, verify: func(ctx context.Context) error {
		return verifyBodies(uncachedAddr, want, false)
	}})

	for _, t := range targets {
		env.progress("baselines: verifying %s (bodies identical to the origin's%s)", t.name, map[bool]string{true: ", cache hits", false: ""}[t.name == "nginx" || t.name == "varnish"])
		if err := t.verify(ctx); err != nil {
			return sec, fmt.Errorf("bench: %s before measuring: %w", t.name, err)
		}
		// Header bytes of the most popular product's answer (identity encoding, no cookies).
		if data.HeaderBytes[t.name], err = headerBytes(t.addr, top); err != nil {
			return sec, err
		}
	}

	wl := newWorkload(cat, tenantHost, false)
	peaks := map[string][]float64{}
	best := map[string]Measurement{}
	for round := 0; round < rounds; round++ {
		for _, t := range targets {
			m, err := measure(ctx, env, t.name, load.Config{Addr: t.addr, Conns: 64, Warmup: warmup, Duration: duration, Next: wl.next, Check: isOK}, t.proc.groupPIDs())
			if err != nil {
				return sec, err
			}
			data.Measurements = append(data.Measurements, m)
			peaks[t.name] = append(peaks[t.name], m.Throughput)
			if m.Throughput >= best[t.name].Throughput {
				best[t.name] = m
			}
		}
	}
	for name, ps := range peaks {
		data.Peaks[name] = median(ps)
	}
	// Open loop at half of nginx's peak (the latency target), or of the edge's without nginx.
	rateFrom := "nginx"
	if data.Peaks["nginx"] == 0 {
		rateFrom = "edge"
	}
	data.OpenRate = data.Peaks[rateFrom] / 2
	open := map[string]Measurement{}
	for _, t := range targets {
		m, err := measure(ctx, env, t.name, load.Config{Addr: t.addr, Conns: 64, Warmup: warmup, Duration: openDuration, Rate: data.OpenRate, Next: wl.next, Check: isOK}, t.proc.groupPIDs())
		if err != nil {
			return sec, err
		}
		data.Measurements = append(data.Measurements, m)
		open[t.name] = m
	}

	// The report.
	p := data.Peaks
	data.Ratios["edge/fixed"] = p["edge"] / p["fixed"]
	if p["nginx"] > 0 {
		data.Ratios["edge/nginx"] = p["edge"] / p["nginx"]
	}
	if p["varnish"] > 0 {
		data.Ratios["edge/varnish"] = p["edge"] / p["varnish"]
	}
	data.Ratios["edge-uncached/edge"] = p["edge-uncached"] / p["edge"]
	check := func(key, goal string, measured float64, ok bool) string {
		data.Targets[key] = TargetRow{Goal: goal, Measured: measured, Met: ok}
		return fmt.Sprintf("- %s: %s (measured %s)", goal, metMissed(ok), map[bool]string{true: ms(measured) + " ms", false: fmt.Sprintf("%.2f×", measured)}[key == "open_p99"])
	}
	hb := data.HeaderBytes
	sec.Summary = append(sec.Summary,
		fmt.Sprintf("Product pages of a %d-product tenant, Zipf popularity (s = %.1f), %d connections, closed loop, median of %d round(s) of %v; body %d bytes (same bytes from every server, verified).",
			len(cat.products), zipfS, 64, rounds, duration, len(want[top])),
		"",
		fmt.Sprintf("**Edge / bare fasthttp: %s** (header bytes %d vs %d)", ratio(p["edge"], p["fixed"]), hb["edge"], hb["fixed"]))
	if p["nginx"] > 0 {
		sec.Summary = append(sec.Summary, "", fmt.Sprintf("**Edge / nginx proxy_cache: %s** (header bytes %d vs %d)", ratio(p["edge"], p["nginx"]), hb["edge"], hb["nginx"]))
	}
	if p["varnish"] > 0 {
		sec.Summary = append(sec.Summary, "", fmt.Sprintf("**Edge / Varnish: %s** (header bytes %d vs %d)", ratio(p["edge"], p["varnish"]), hb["edge"], hb["varnish"]))
	}
	sec.Summary = append(sec.Summary, "", fmt.Sprintf("Edge with its rendered cache disabled / edge: %s (header bytes %d)", ratio(p["edge-uncached"], p["edge"]), hb["edge-uncached"]),
		"", "Targets of the issue:")
	sec.Summary = append(sec.Summary, check("edge_vs_fixed", "edge ≥ 0.9× bare fasthttp", data.Ratios["edge/fixed"], data.Ratios["edge/fixed"] >= 0.9))
	if r, ok := data.Ratios["edge/nginx"]; ok {
		sec.Summary = append(sec.Summary, check("edge_vs_nginx", "edge ≥ 1.3× nginx proxy_cache", r, r >= 1.3))
	}
	if r, ok := data.Ratios["edge/varnish"]; ok {
		sec.Summary = append(sec.Summary, check("edge_vs_varnish", "edge ≥ 2× Varnish", r, r >= 2))
	}
	eo := open["edge"].Latency
	sec.Summary = append(sec.Summary, check("open_p99", fmt.Sprintf("edge p99 ≤ 2 ms open loop at half of %s's peak (%s req/s)", rateFrom, thousands(data.OpenRate)), eo.P99, eo.P99 <= 2))
	if n := generatorNote(data.Measurements); n != "" {
		sec.Summary = append(sec.Summary, n)
	}
	for name, why := range data.Skipped {
		sec.Summary = append(sec.Summary, fmt.Sprintf("- %s was not measured: %s", name, why))
	}

	peakTable := report.Table{Title: "Closed-loop peaks (median of rounds)", Header: []string{"server", "req/s", "vs fixed", "server CPU µs/req", "generator busy", "other CPU s", "header bytes", "body bytes", "p50 ms", "p99 ms", "errors"}}
	openTable := report.Table{Title: fmt.Sprintf("Open loop at %s req/s (latency from the intended send time; send lag: the generator's share)", thousands(data.OpenRate)), Header: []string{"server", "achieved req/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "send lag p99 ms", "late sends", "errors"}}
	bars := report.Series{Name: "req/s (median)"}
	latency := report.Plot{File: "baselines-latency.svg", Title: fmt.Sprintf("Product pages, open loop at %s req/s", thousands(data.OpenRate)), Kind: report.KindPercentiles, XLabel: "percentile", YLabel: "latency (ms)"}
	for _, t := range targets {
		b := best[t.name]
		peakTable.Rows = append(peakTable.Rows, []string{t.name, thousands(p[t.name]), ratio(p[t.name], p["fixed"]), fmt.Sprintf("%.1f", b.ServerUSReq), pct(b.GeneratorBusy),
			fmt.Sprintf("%.2f", b.CPU.Other), fmt.Sprint(data.HeaderBytes[t.name]), fmt.Sprint(len(want[top])), ms(b.Latency.P50), ms(b.Latency.P99), fmt.Sprint(b.Errors)})
		o := open[t.name]
		openTable.Rows = append(openTable.Rows, []string{t.name, thousands(o.Throughput), ms(o.Latency.P50), ms(o.Latency.P90), ms(o.Latency.P99), ms(o.Latency.P999), ms(o.Latency.Max), ms(o.SendLag.P99), fmt.Sprint(o.Late), fmt.Sprint(o.Errors)})
		bars.Points = append(bars.Points, report.Point{Label: t.name, Y: p[t.name]})
		latency.Series = append(latency.Series, percentileSeries(t.name, o.curve))
	}
	sec.Tables = []report.Table{peakTable, openTable}
	sec.Plots = []report.Plot{
		{File: "baselines-throughput.svg", Title: "Product pages: closed-loop peak", Kind: report.KindBars, XLabel: "server", YLabel: "requests/s", Series: []report.Series{bars}},
		latency,
	}
	sec.Data = data
	return sec, errors.Join(problems...)
}

// samplePaths returns the n/2 most popular paths and n/2 spread over the rest.
func samplePaths(paths []string, n int) []string {
	if len(paths) <= n {
		return paths
	}
	out := append([]string(nil), paths[:n/2]...)
	step := (len(paths) - n/2) / (n / 2)
	for i := n / 2; i < len(paths) && len(out) < n; i += step {
		out = append(out, paths[i])
	}
	return out
}

// get GETs path from client with the tenant's Host and returns status, body, content type and
// request id (copies).
func get(client *fasthttp.HostClient, path string) (int, []byte, []byte, string, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(path)
	req.SetHost(tenantHost)
	if err := client.DoTimeout(req, resp, 30*time.Second); err != nil {
		return 0, nil, nil, "", err
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), append([]byte(nil), resp.Header.ContentType()...), string(resp.Header.Peek("X-Request-Id")), nil
}

// verifyBodies checks that addr answers each path with exactly want's body; with hits, that a
// second request is a cache hit: it carries the same X-Request-Id as the first (the origin gives
// every response it renders a new one, so a repeated id was not rendered again).
func verifyBodies(addr string, want map[string][]byte, hits bool) error {
	client := &fasthttp.HostClient{Addr: addr, MaxResponseBodySize: 64 << 20}
	defer client.CloseIdleConnections()
	for path, body := range want {
		status, got, _, id, err := get(client, path)
		if err != nil || status != 200 {
			return fmt.Errorf("GET %s: status %d, %v", path, status, err)
		}
		if !bytes.Equal(got, body) {
			return fmt.Errorf("GET %s: the body differs from the origin's (%d bytes, want %d)", path, len(got), len(body))
		}
		if hits {
			_, _, _, id2, err := get(client, path)
			if err != nil {
				return err
			}
			if id == "" || id2 != id {
				return fmt.Errorf("GET %s: not a cache hit (request ids %q then %q)", path, id, id2)
			}
		}
	}
	return nil
}

// headerBytes returns the size of addr's response header (status line, headers and CRLFs) for
// path.
func headerBytes(addr, path string) (int, error) {
	client := &fasthttp.HostClient{Addr: addr, MaxResponseBodySize: 64 << 20}
	defer client.CloseIdleConnections()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(path)
	req.SetHost(tenantHost)
	if err := client.DoTimeout(req, resp, 30*time.Second); err != nil {
		return 0, err
	}
	return len(resp.Header.Header()), nil
}

// waitTenant waits until every edge in addrs answers the tenant's product list.
func waitTenant(ctx context.Context, addrs ...string) error {
	for _, a := range addrs {
		client := &fasthttp.HostClient{Addr: a}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			status, _, _, _, err := get(client, "/api/products")
			if err == nil && status == 200 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("bench: the edge at %s does not serve the tenant (status %d, %v)", a, status, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
