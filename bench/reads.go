package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"vitrine/bench/load"
	"vitrine/bench/report"
)

// Reads is the edge's public read mix on a seeded tenant (product pages by Zipf popularity,
// product lists, search, autocomplete, posts) at 10k and 100k products: the closed-loop peak and
// the open-loop latency at fixed fractions of it.
func Reads() Scenario {
	return Scenario{Name: "reads", Description: "the edge's public read mix on a seeded tenant at 10k and 100k products: peak and open-loop latency", Run: runReads}
}

// ReadsData is the reads' part of results.json.
type ReadsData struct {
	Mix   map[string]int `json:"mix_percent"`
	Sizes []ReadsSize    `json:"sizes"`
}

// ReadsSize is the reads measured at one catalog size.
type ReadsSize struct {
	Products     int           `json:"products"`
	SeedSeconds  float64       `json:"seed_seconds"`
	Peak         Measurement   `json:"peak"`
	Open         []Measurement `json:"open"`
	OpenFraction []float64     `json:"open_fraction_of_peak"`
}

func runReads(ctx context.Context, env Env) (report.Section, error) {
	sec := report.Section{Name: "reads"}
	sizes := []int{10000, 100000}
	fractions := []float64{0.25, 0.5, 0.75}
	warmup, duration := 3*time.Second, 10*time.Second
	if env.Short {
		sizes, fractions = []int{2000}, []float64{0.5}
		warmup, duration = time.Second, 3*time.Second
	}
	data := ReadsData{Mix: map[string]int{}}
	var mix []string
	for _, m := range readMix {
		data.Mix[m.name] = m.share
		mix = append(mix, fmt.Sprintf("%s %d%%", m.name, m.share))
	}
	sec.Summary = append(sec.Summary, fmt.Sprintf("Read mix through one edge process (cache on): %s; product and word popularity Zipf (s = %.1f). Closed-loop peak with 64 connections, then open loop (latency from the intended send time) at fractions of the peak.",
		strings.Join(mix, ", "), zipfS), "")
	peakTable := report.Table{Title: "Closed-loop peak", Header: []string{"products", "req/s", "server CPU µs/req", "generator busy", "other CPU s", "p50 ms", "p99 ms", "errors"}}
	openTable := report.Table{Title: "Open loop", Header: []string{"products", "rate req/s", "achieved", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "send lag p99 ms", "late sends", "errors"}}
	latency := report.Plot{File: "reads-latency.svg", Title: "Read mix, open loop", Kind: report.KindPercentiles, XLabel: "percentile", YLabel: "latency (ms)"}
	bars := report.Series{Name: "req/s"}
	var all []Measurement
	for _, n := range sizes {
		size, err := readsAt(ctx, env, n, fractions, warmup, duration)
		if err != nil {
			sec.Data = data
			return sec, err
		}
		data.Sizes = append(data.Sizes, size)
		p := size.Peak
		all = append(all, p)
		all = append(all, size.Open...)
		sec.Summary = append(sec.Summary, fmt.Sprintf("- %s products: **%s req/s** peak, %.1f µs of server CPU per request; p99 %s ms open loop at half the peak.",
			thousands(float64(n)), thousands(p.Throughput), p.ServerUSReq, ms(openAt(size, 0.5).Latency.P99)))
		peakTable.Rows = append(peakTable.Rows, []string{thousands(float64(n)), thousands(p.Throughput), fmt.Sprintf("%.1f", p.ServerUSReq), pct(p.GeneratorBusy),
			fmt.Sprintf("%.2f", p.CPU.Other), ms(p.Latency.P50), ms(p.Latency.P99), fmt.Sprint(p.Errors)})
		bars.Points = append(bars.Points, report.Point{Label: thousands(float64(n)) + " products", Y: p.Throughput})
		for _, o := range size.Open {
			openTable.Rows = append(openTable.Rows, []string{thousands(float64(n)), thousands(o.Rate), thousands(o.Throughput), ms(o.Latency.P50), ms(o.Latency.P90),
				ms(o.Latency.P99), ms(o.Latency.P999), ms(o.Latency.Max), ms(o.SendLag.P99), fmt.Sprint(o.Late), fmt.Sprint(o.Errors)})
			latency.Series = append(latency.Series, percentileSeries(fmt.Sprintf("%dk @ %s/s", n/1000, thousands(o.Rate)), o.curve))
		}
	}
	if n := generatorNote(all); n != "" {
		sec.Summary = append(sec.Summary, n)
	}
	sec.Tables = []report.Table{peakTable, openTable}
	sec.Plots = []report.Plot{latency,
		{File: "reads-throughput.svg", Title: "Read mix: closed-loop peak", Kind: report.KindBars, XLabel: "catalog", YLabel: "requests/s", Series: []report.Series{bars}}}
	sec.Data = data
	return sec, nil
}

// openAt returns the open-loop measurement at fraction f of the peak (or the first one).
func openAt(s ReadsSize, f float64) Measurement {
	for i, x := range s.OpenFraction {
		if x == f {
			return s.Open[i]
		}
	}
	if len(s.Open) > 0 {
		return s.Open[0]
	}
	return Measurement{}
}

// readsAt measures the read mix on a tenant of n products.
func readsAt(ctx context.Context, env Env, n int, fractions []float64, warmup, duration time.Duration) (ReadsSize, error) {
	size := ReadsSize{Products: n, OpenFraction: fractions}
	dir, err := scratchDir("vitrine-bench-reads-")
	if err != nil {
		return size, err
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	posts := 200
	if env.Short {
		posts = 30
	}
	dev, err := startDev(ctx, env, dir, n, posts)
	if err != nil {
		return size, err
	}
	defer dev.close(ctx)
	size.SeedSeconds = time.Since(t0).Seconds()
	env.progress("reads %d: starting the edge", n)
	edge, addr, err := dev.startEdge(ctx, env, dir, "edge")
	if err != nil {
		return size, err
	}
	defer edge.stop()
	if err := waitTenant(ctx, addr); err != nil {
		return size, err
	}
	cat, err := discoverCatalog(ctx, addr, tenantHost)
	if err != nil {
		return size, err
	}
	wl := newWorkload(cat, tenantHost, true)
	name := fmt.Sprintf("edge %dk", n/1000)
	size.Peak, err = measure(ctx, env, name, load.Config{Addr: addr, Conns: 64, Warmup: warmup, Duration: duration, Next: wl.next, Check: isOK}, edge.groupPIDs())
	if err != nil {
		return size, err
	}
	for _, f := range fractions {
		m, err := measure(ctx, env, name, load.Config{Addr: addr, Conns: 64, Warmup: warmup, Duration: duration, Rate: f * size.Peak.Throughput, Next: wl.next, Check: isOK}, edge.groupPIDs())
		if err != nil {
			return size, err
		}
		size.Open = append(size.Open, m)
	}
	return size, nil
}
