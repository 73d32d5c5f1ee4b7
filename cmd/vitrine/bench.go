package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"vitrine/bench"
	"vitrine/bench/bareorigin"
	"vitrine/bench/load"
	"vitrine/bench/report"
	"vitrine/bench/scenarios"
)

// benchScenarios is the registry of `vitrine bench`, in the order `all` runs them.
func benchScenarios() (*bench.Registry, error) {
	var r bench.Registry
	err := r.Add(bench.Reads(), bench.Baselines(), scenarios.Freshness(), scenarios.ColdStart(), scenarios.Writes(), scenarios.Fleet())
	return &r, err
}

// runBench runs `vitrine bench [flags] <scenario|all>`: the scenarios as child processes of this
// binary, the load generator in this process, and the report in the results folder.
func runBench(ctx context.Context, args []string) error {
	reg, err := benchScenarios()
	if err != nil {
		return err
	}
	f := newFlags("bench")
	c := f.common()
	short := f.Bool("short", false, "the short version of each scenario (make bench: all of them in under 5 minutes)")
	profile := f.Bool("profile", false, "save a CPU profile of each server process over the freshness window (<process>.cpu.pprof in the results folder)")
	out := f.String("out", "VITRINE_BENCH_OUT", "", "results folder (default bench/results/<date>-<scenario>)")
	split := f.String("cpus", "VITRINE_BENCH_CPUS", "", "server and generator CPUs as SERVER/LOAD lists, e.g. 0/1 or 0-1/2-3 (default: half each; 'none' to not pin)")
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: vitrine bench [flags] <scenario|all>\n\nScenarios:\n")
		for _, s := range reg.All() {
			fmt.Fprintf(f.Output(), "  %-12s %s\n", s.Name, s.Description)
		}
		fmt.Fprintf(f.Output(), "\nFlags:\n")
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() != 1 {
		f.Usage()
		return flag.ErrHelp
	}
	name := f.Arg(0)
	scenarios := reg.All()
	if name != "all" {
		s, ok := reg.Lookup(name)
		if !ok {
			f.Usage()
			return fmt.Errorf("unknown scenario %q", name)
		}
		scenarios = []bench.Scenario{s}
	}
	started := time.Now()
	if *out == "" {
		*out = filepath.Join("bench", "results", started.Format("2006-01-02")+"-"+name)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	binary, err := os.Executable()
	if err != nil {
		return err
	}
	cores, err := load.Affinity()
	if err != nil {
		return err
	}
	serverCPUs, loadCPUs, err := splitCPUs(*split, cores)
	if err != nil {
		return err
	}
	// The generator runs here: pin this process to its CPUs, with one more P than CPUs for the
	// open loop's clock, which sleeps in the kernel (see package load). Children are pinned to
	// the server CPUs as they start.
	if len(loadCPUs) > 0 {
		if err := load.PinProcess(0, loadCPUs); err != nil {
			return err
		}
		runtime.GOMAXPROCS(len(loadCPUs) + 1)
	}
	progress := newProgress(os.Stderr)
	defer progress.done()
	logFile, err := os.Create(filepath.Join(*out, "bench.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	env := bench.Env{Binary: binary, DatabaseURL: *c.databaseURL, Out: *out, Short: *short, Profile: *profile, Cores: cores,
		ServerCPUs: serverCPUs, LoadCPUs: loadCPUs, Progress: progress.update,
		Log: slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	meta := report.Meta{Command: "vitrine bench " + strings.Join(args, " "), Started: started, Machine: machine(),
		GoVersion: runtime.Version(), Revision: revision(), Pinning: env.Pinning(), Short: *short}
	var sections []report.Section
	var failed []error
	for _, s := range scenarios {
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		progress.update("%s: starting", s.Name)
		sec, err := s.Run(ctx, env)
		if sec.Name == "" {
			sec.Name = s.Name
		}
		sec.Summary = append(sec.Summary, "", fmt.Sprintf("_%s took %v._", s.Name, time.Since(t0).Round(time.Second)))
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", s.Name, err))
			sec.Summary = append(sec.Summary, "", fmt.Sprintf("**%s failed**: %s", s.Name, oneLine(err.Error())))
			env.Log.Error("scenario failed", "scenario", s.Name, "err", err)
		}
		progress.line("%s: done in %v%s", s.Name, time.Since(t0).Round(time.Second), map[bool]string{true: " (failed)", false: ""}[err != nil])
		sections = append(sections, sec)
		meta.Elapsed = time.Since(started)
		// Write after each scenario, so a later failure keeps the earlier results.
		if err := report.Write(*out, meta, sections); err != nil {
			return err
		}
	}
	progress.done()
	if len(sections) > 0 {
		summary, err := os.ReadFile(filepath.Join(*out, "summary.md"))
		if err != nil {
			return err
		}
		os.Stdout.Write(summary)
		fmt.Printf("\nResults in %s\n", *out)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(failed...)
}

// runBenchFixedServer runs the baselines' bare fasthttp server (hidden: started by the bench).
func runBenchFixedServer(ctx context.Context, args []string) error {
	f := newFlags("bench-fixed-server")
	addr := f.String("addr", "", "127.0.0.1:8090", "listen address")
	bodyFile := f.String("body", "", "", "file whose bytes are every response's body")
	contentType := f.String("content-type", "", "application/json; charset=utf-8", "Content-Type of every response")
	if err := f.Parse(args); err != nil {
		return err
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	return bench.ServeFixed(ctx, *addr, *contentType, body)
}

// runBenchBareOrigin is the bare origin the freshness scenario measures (bench/bareorigin).
func runBenchBareOrigin(ctx context.Context, args []string) error {
	f := newFlags("bench-bare-origin")
	addr := f.String("addr", "", "127.0.0.1:8090", "listen address")
	dbURL := f.String("database-url", "VITRINE_DATABASE_URL", "", "PostgreSQL URL of the database to write to")
	bodyFile := f.String("body", "", "", "file whose bytes are every answer's body and every outbox row")
	if err := f.Parse(args); err != nil {
		return err
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	return bareorigin.Serve(ctx, *addr, *dbURL, body)
}

// runBenchFollower is the bare JetStream follower the freshness scenario measures (bench.FollowStream).
func runBenchFollower(ctx context.Context, args []string) error {
	f := newFlags("bench-follower")
	url := f.String("nats-url", "VITRINE_NATS_URL", "nats://127.0.0.1:4250", "NATS URL")
	stream := f.String("stream", "", "", "the stream to follow")
	if err := f.Parse(args); err != nil {
		return err
	}
	return bench.FollowStream(ctx, *url, *stream)
}

// splitCPUs parses -cpus: "" splits cores in halves (servers get the first), "none" pins nothing.
func splitCPUs(spec string, cores []int) (server, gen []int, err error) {
	switch spec {
	case "none":
		return nil, nil, nil
	case "":
		if len(cores) < 2 {
			return nil, nil, nil
		}
		half := len(cores) / 2
		return cores[:half], cores[half:], nil
	}
	s, g, ok := strings.Cut(spec, "/")
	if !ok {
		return nil, nil, fmt.Errorf("-cpus %q: want SERVER/LOAD, e.g. 0/1", spec)
	}
	if server, err = parseCPUList(s); err == nil {
		gen, err = parseCPUList(g)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("-cpus %q: %w", spec, err)
	}
	return server, gen, nil
}

// parseCPUList parses "0,2-3".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		var lo, hi int
		if a, b, ok := strings.Cut(part, "-"); ok {
			if _, err := fmt.Sscanf(a+" "+b, "%d %d", &lo, &hi); err != nil || hi < lo {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		} else if _, err := fmt.Sscanf(part, "%d", &lo); err != nil {
			return nil, fmt.Errorf("bad CPU %q", part)
		} else {
			hi = lo
		}
		for c := lo; c <= hi; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// machine describes the CPU model, the CPUs and the memory, from /proc.
func machine() string {
	model := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.1f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d × %s%s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}

// revision is the VCS revision the binary was built from, when recorded.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 800 {
		s = s[:800] + "…"
	}
	return s
}

// progress shows scenario progress on one updating line when w is a terminal, else as plain
// lines (each distinct message once).
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	last string
	open bool // a TTY line is showing
}

func newProgress(f *os.File) *progress {
	st, err := f.Stat()
	return &progress{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

// update replaces the progress line.
func (p *progress) update(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", msg)
		p.open = true
		return
	}
	// Plain output: skip repeats that differ only in a counter (the seeding clock).
	if key := strings.TrimRightFunc(msg, func(r rune) bool {
		return r == ')' || r == 's' || (r >= '0' && r <= '9') || r == 'm' || r == '(' || r == ' '
	}); key == p.last {
		return
	} else {
		p.last = key
	}
	fmt.Fprintln(p.w, msg)
}

// line prints a line that stays.
func (p *progress) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
	p.open, p.last = false, ""
}

// done ends a showing TTY line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.open {
		fmt.Fprintf(p.w, "\r\033[K")
		p.open = false
	}
}
