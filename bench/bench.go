package bench

import (
	"context"
	"fmt"
	"log/slog"

	"vitrine/bench/report"
)

// Env is what a scenario runs with. It is filled by cmd/vitrine from flags; scenarios treat it as
// read-only.
type Env struct {
	// Binary is the vitrine binary, started as child processes (os.Executable() of `vitrine
	// bench`).
	Binary string
	// DatabaseURL is a PostgreSQL server URL; scenarios create fresh databases on it and drop
	// them after.
	DatabaseURL string
	// Out is the results folder of this run. Scenarios may write extra files (server logs,
	// configs) under it; plots are written by report.Write.
	Out string
	// Short asks for the short version (make bench: every scenario, all in under 5 minutes).
	Short bool
	// Profile asks scenarios that support it (freshness) to save a CPU profile of each server
	// process over their measured window (<name>.cpu.pprof in Out; `go tool pprof` reads them).
	Profile bool
	// Cores are the CPUs of the machine (as numbered by the kernel); ServerCPUs and LoadCPUs
	// split them.
	Cores []int
	// ServerCPUs is where child server processes are pinned (empty: not pinned).
	ServerCPUs []int
	// LoadCPUs is where the load generator runs (the bench process pins itself here; empty: not
	// pinned).
	LoadCPUs []int
	// Progress shows a one-line progress update (a TTY rewrites the line). Never nil when set by
	// cmd/vitrine; use Env.progress to call it safely.
	Progress func(format string, args ...any)
	// Log receives structured logs of the run. Never nil when set by cmd/vitrine.
	Log *slog.Logger
}

// Pinning describes in words where servers and the generator run, for reports.
func (e Env) Pinning() string {
	if len(e.ServerCPUs) == 0 && len(e.LoadCPUs) == 0 {
		return fmt.Sprintf("not pinned (%d CPUs)", len(e.Cores))
	}
	return fmt.Sprintf("servers pinned to CPUs %v, load generator to CPUs %v (of %d)", e.ServerCPUs, e.LoadCPUs, len(e.Cores))
}

// progress calls e.Progress when it is set.
func (e Env) progress(format string, args ...any) {
	if e.Progress != nil {
		e.Progress(format, args...)
	}
}

// logger returns e.Log, or a logger that discards everything.
func (e Env) logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Scenario is one named measurement of the suite.
type Scenario struct {
	// Name is what `vitrine bench <name>` selects; lowercase, no spaces.
	Name string
	// Description is one line for the usage text and the report.
	Description string
	// Run measures and returns the scenario's report section. It must clean up everything it
	// started before returning, and stop promptly when ctx is cancelled.
	Run func(ctx context.Context, env Env) (report.Section, error)
}

// Registry is an ordered set of scenarios with unique names. The zero value is empty and ready
// to use; it is not safe for concurrent mutation.
type Registry struct {
	scenarios []Scenario
}

// Add appends scenarios in order. It refuses an empty name, a nil Run or a name already present.
func (r *Registry) Add(scenarios ...Scenario) error {
	for _, s := range scenarios {
		if s.Name == "" || s.Name == "all" || s.Run == nil {
			return fmt.Errorf("bench: scenario %q: a name other than \"all\" and a Run are required", s.Name)
		}
		if _, ok := r.Lookup(s.Name); ok {
			return fmt.Errorf("bench: scenario %q registered twice", s.Name)
		}
		r.scenarios = append(r.scenarios, s)
	}
	return nil
}

// Lookup returns the scenario named name.
func (r *Registry) Lookup(name string) (Scenario, bool) {
	for _, s := range r.scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// All returns the scenarios in the order they were added. The slice is a copy.
func (r *Registry) All() []Scenario {
	return append([]Scenario(nil), r.scenarios...)
}
