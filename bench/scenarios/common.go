package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench"
	"vitrine/bench/cluster"
	"vitrine/bench/load"
	"vitrine/bench/report"
)

// progress reports a one-line update when the environment shows progress.
func progress(env bench.Env, format string, args ...any) {
	if env.Progress != nil {
		env.Progress(format, args...)
	}
}

func logger(env bench.Env) *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.New(slog.DiscardHandler)
}

// clusterConfig is the cluster of a scenario: children on the server CPUs.
func clusterConfig(env bench.Env, withOrigin bool, edges int) cluster.Config {
	return cluster.Config{Binary: env.Binary, DatabaseURL: env.DatabaseURL, Origin: withOrigin, Edges: edges,
		CPUs: env.ServerCPUs, Log: logger(env)}
}

// seedProgress turns seed progress into progress lines.
func seedProgress(env bench.Env, slug string) func(done, total int, stage string) {
	return func(done, total int, stage string) {
		progress(env, "seeding %s: %s %d/%d", slug, stage, done, total)
	}
}

// client sends one request to one server and keeps its connections.
type client struct {
	hc   *fasthttp.HostClient
	host string // the tenant's Host header
}

func newClient(addr, host string, conns int) *client {
	return &client{host: host, hc: &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 30 * time.Second,
		WriteTimeout: 10 * time.Second, MaxIdemponentCallAttempts: 1, MaxConnWaitTimeout: 30 * time.Second}}
}

// do sends method uri with body and headers (name, value pairs) and returns the status, the
// body (a copy) and the response's value of the header named in want (if any).
func (c *client) do(method, uri string, body []byte, headers ...string) (status int, out []byte, hdr func(string) string, err error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.SetHost(c.host)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	if err := c.hc.Do(req, resp); err != nil {
		return 0, nil, nil, err
	}
	saved := map[string]string{}
	resp.Header.VisitAll(func(k, v []byte) { saved[string(k)] = string(v) })
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), func(name string) string {
		return saved[string(fasthttp.AppendNormalizedHeaderKeyBytes(nil, []byte(name)))]
	}, nil
}

// listedProduct is a product of a public list.
type listedProduct struct {
	ID   int64  `json:"id"`
	Slug string `json:"slug"`
}

// products returns up to n public products of the tenant, from a server's product lists.
func products(c *client, n int) ([]listedProduct, error) {
	var out []listedProduct
	for page := 1; len(out) < n; page++ {
		status, body, _, err := c.do("GET", "/api/products?per_page=100&page="+strconv.Itoa(page), nil)
		if err != nil {
			return nil, err
		}
		if status != 200 {
			return nil, fmt.Errorf("product list page %d: %d %.200s", page, status, body)
		}
		var list struct {
			Data []listedProduct `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, err
		}
		if len(list.Data) == 0 {
			break
		}
		out = append(out, list.Data...)
	}
	if len(out) > n {
		out = out[:n]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the tenant lists no products")
	}
	return out, nil
}

// ms formats a duration in milliseconds with two decimals.
func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// msf formats milliseconds with two decimals.
func msf(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// verdict says whether a target was met.
func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

// summaryRow is a table row of a histogram's usual percentiles.
func summaryRow(name string, s load.Summary, extra ...string) []string {
	row := []string{name, strconv.FormatInt(s.Count, 10), msf(s.P50), msf(s.P90), msf(s.P99), msf(s.P999), msf(s.Max)}
	return append(row, extra...)
}

// cdf turns a histogram into a CDF series (X in ms, Y the fraction at or below).
func cdf(name string, h *load.Histogram) report.Series {
	s := report.Series{Name: name}
	for _, p := range h.Percentiles() {
		s.Points = append(s.Points, report.Point{X: float64(p.Value) / 1e6, Y: p.Percent / 100})
	}
	return s
}

// percentileSeries turns a histogram into a latency-by-percentile series (Y in ms).
func percentileSeries(name string, h *load.Histogram) report.Series {
	s := report.Series{Name: name}
	for _, p := range h.Percentiles() {
		s.Points = append(s.Points, report.Point{X: p.Percent, Y: float64(p.Value) / 1e6})
	}
	return s
}

// closeCluster closes c, keeping the first error.
func closeCluster(c *cluster.Cluster, err *error) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// sleepUntil waits until t or ctx's end; it reports whether t was reached.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// cpuReading is a reading of the CPU counters a window's load.CPUUsage is the difference of.
type cpuReading struct {
	at                    time.Time
	server, self, machine float64 // seconds
}

// readCPU reads the CPU seconds of pids (exited ones count zero), of this process and of the
// whole machine (busy time of every CPU, from /proc/stat).
func readCPU(pids []int) cpuReading {
	r := cpuReading{at: time.Now()}
	for _, pid := range pids {
		if t, err := load.ProcessCPU(pid); err == nil {
			r.server += t
		}
	}
	r.self, _ = load.ProcessCPU(os.Getpid())
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		f := bytes.Fields(line)
		// cpu user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
		for i := 1; i < len(f) && i <= 8; i++ {
			if i == 4 || i == 5 {
				continue
			}
			n, _ := strconv.ParseUint(string(f[i]), 10, 64)
			r.machine += float64(n) / 100 // USER_HZ
		}
	}
	return r
}

// processCPU reads the CPU seconds of each running cluster child by name, and of the machine's
// PostgreSQL (every process named postgres: its backends, checkpointer and WAL writer) as
// "database".
func processCPU(procs []*cluster.Process) map[string]float64 {
	out := map[string]float64{}
	for _, p := range procs {
		if t, err := load.ProcessCPU(p.PID); err == nil {
			out[p.Name] = t
		}
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile("/proc/" + d.Name() + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			if t, err := load.ProcessCPU(pid); err == nil {
				out["database"] += t
			}
		}
	}
	return out
}

// cpuByProcessBetween is the CPU each process used between two processCPU readings (a process
// missing from either counts zero; a database backend that ended in between is not counted).
func cpuByProcessBetween(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for name, t := range b {
		out[name] = max(0, t-a[name])
	}
	return out
}

// cpuBetween is the CPU used between two readings.
func cpuBetween(a, b cpuReading) load.CPUUsage {
	u := load.CPUUsage{Server: b.server - a.server, Generator: b.self - a.self, Wall: b.at.Sub(a.at).Seconds()}
	u.Other = max(0, (b.machine-a.machine)-u.Server-u.Generator)
	return u
}
