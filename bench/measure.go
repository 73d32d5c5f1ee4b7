package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"vitrine/bench/load"
	"vitrine/bench/report"
)

// Measurement is one load run against one server, as results.json records it.
type Measurement struct {
	Server     string  `json:"server"`
	Mode       string  `json:"mode"`           // "closed" (peak) or "open" (fixed rate)
	Rate       float64 `json:"rate,omitempty"` // requests/s asked (open loop)
	Conns      int     `json:"conns"`
	Seconds    float64 `json:"seconds"`
	Requests   uint64  `json:"requests"`
	Errors     uint64  `json:"errors"`
	Late       uint64  `json:"late,omitempty"`
	Throughput float64 `json:"throughput"`
	// Latency: open loop from the intended send time; closed loop the service time.
	Latency load.Summary `json:"latency"`
	// SendLag (open loop) is the generator's share: intended send time to actual send.
	SendLag     *load.Summary `json:"send_lag,omitempty"`
	CPU         load.CPUUsage `json:"cpu"`
	ServerUSReq float64       `json:"server_cpu_us_per_request"`
	// GeneratorBusy is the generator's CPU over the CPUs it may use (1 = saturated).
	GeneratorBusy float64 `json:"generator_busy"`
	HeaderBytes   int     `json:"header_bytes"`
	BodyBytes     int     `json:"body_bytes"`
	// Statuses counts answers by status ("0": transport errors and timeouts).
	Statuses map[int]uint64 `json:"statuses"`

	curve []load.Percentile
}

// measure runs cfg against a server whose CPU is pids' and summarises it.
func measure(ctx context.Context, env Env, server string, cfg load.Config, pids []int) (Measurement, error) {
	mode := "closed"
	if cfg.Rate > 0 {
		mode = fmt.Sprintf("open %.0f/s", cfg.Rate)
	}
	env.progress("%s: %s loop, %d conns, %v", server, mode, cfg.Conns, cfg.Warmup+cfg.Duration)
	res, err := load.Run(ctx, cfg, pids...)
	if err != nil {
		return Measurement{}, fmt.Errorf("%s (%s): %w", server, mode, err)
	}
	m := Measurement{Server: server, Mode: "closed", Rate: cfg.Rate, Conns: cfg.Conns, Seconds: res.Elapsed.Seconds(),
		Requests: res.Requests, Errors: res.Errors, Late: res.Late, Throughput: res.Throughput,
		Latency: res.Latency.Summary(), CPU: res.CPU, HeaderBytes: res.HeaderBytes, BodyBytes: res.BodyBytes,
		curve: res.Latency.Percentiles(), Statuses: res.Statuses}
	if cfg.Rate > 0 {
		m.Mode = "open"
		lag := res.SendLag.Summary()
		m.SendLag = &lag
	}
	if res.Requests > 0 {
		m.ServerUSReq = res.CPU.Server / float64(res.Requests) * 1e6
	}
	if cpus := len(env.LoadCPUs); res.CPU.Wall > 0 {
		if cpus == 0 {
			cpus = max(1, len(env.Cores))
		}
		m.GeneratorBusy = res.CPU.Generator / (res.CPU.Wall * float64(cpus))
	}
	if res.Errors > res.Requests/100 {
		return m, fmt.Errorf("%s (%s): %d errors in %d requests (statuses %v; 0 is a transport error)", server, mode, res.Errors, res.Requests, res.Statuses)
	}
	env.logger().Info("measured", "server", server, "mode", mode, "throughput", int(res.Throughput),
		"p99_ms", m.Latency.P99, "errors", res.Errors, "statuses", fmt.Sprint(res.Statuses), "server_cpu_s", res.CPU.Server, "generator_cpu_s", res.CPU.Generator)
	return m, nil
}

// median returns the median of xs (0 when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentileSeries is a plot series of a latency curve in milliseconds.
func percentileSeries(name string, curve []load.Percentile) report.Series {
	s := report.Series{Name: name}
	for _, p := range curve {
		s.Points = append(s.Points, report.Point{X: p.Percent, Y: float64(p.Value) / float64(time.Millisecond)})
	}
	return s
}

// metMissed words a target check.
func metMissed(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

// ratio formats a/b as "0.92×" (or "n/a").
func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a/b) {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

// thousands formats n with thin separators: 126,000.
func thousands(n float64) string {
	s := strconv.FormatInt(int64(math.Round(n)), 10)
	out := ""
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out += ","
		}
		out += string(c)
	}
	return out
}

// ms formats milliseconds with three significant digits.
func ms(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// pct formats a fraction as a percentage.
func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" }

// generatorNote warns when the generator was saturated in any of ms.
func generatorNote(ms []Measurement) string {
	worst := 0.0
	for _, m := range ms {
		worst = math.Max(worst, m.GeneratorBusy)
	}
	if worst < 0.9 {
		return ""
	}
	return fmt.Sprintf("- Note: the load generator was saturated (up to %s of its CPUs busy): the fastest servers' peaks are the generator's limit, and ratios between them understate the difference.", pct(worst))
}
