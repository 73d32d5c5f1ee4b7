package scenarios

import (
	"os"
	"testing"
)

// The memory fields cold starts report are read from /proc in bytes; a missing process or field
// reads as zero rather than failing the run.
func TestProcStatus(t *testing.T) {
	tests := []struct {
		name  string
		pid   int
		field string
		zero  bool
	}{
		{"resident set", os.Getpid(), "VmRSS", false},
		{"high-water mark", os.Getpid(), "VmHWM", false},
		{"unknown field", os.Getpid(), "VmNothing", true},
		{"no such process", 1 << 30, "VmRSS", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := procStatus(tt.pid, tt.field)
			if tt.zero != (got == 0) || got%1024 != 0 {
				t.Fatalf("procStatus(%d, %s) = %d", tt.pid, tt.field, got)
			}
		})
	}
	if rss, hwm := procStatus(os.Getpid(), "VmRSS"), procStatus(os.Getpid(), "VmHWM"); hwm < rss {
		t.Fatalf("peak %d below current %d", hwm, rss)
	}
}

// CPU accounting never reports negative time for the rest of the machine (counters tick at
// different instants) and counts this process as the generator.
func TestCPUBetween(t *testing.T) {
	a := readCPU([]int{os.Getpid()})
	x := 0
	for i := range 20_000_000 {
		x += i
	}
	b := readCPU([]int{1 << 30})
	u := cpuBetween(a, b)
	if u.Other < 0 || u.Wall <= 0 || u.Generator < 0 || x == 0 {
		t.Fatalf("usage %+v", u)
	}
}

// A process's CPU per write is what the measured window spent above the quiet window's rate,
// scaled to the window's length, and never below zero.
func TestWriteCPU(t *testing.T) {
	tests := []struct {
		name                  string
		window, quiet         float64 // CPU seconds
		windowWall, quietWall float64
		writes                int
		want                  float64 // ms per write
	}{
		{"reads cost nothing", 6, 0, 60, 15, 12000, 0.5},
		{"same rate as the quiet window", 12, 3, 60, 15, 12000, 0},
		{"half the window's CPU above the reads", 12, 1.5, 60, 15, 12000, 0.5},
		{"idler under writes", 2, 3, 60, 15, 12000, 0},
		{"no quiet window", 6, 0, 60, 0, 12000, 0.5},
		{"no writes", 6, 0, 60, 15, 0, 6000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := writeCPU(map[string]float64{"p": tt.window}, tt.windowWall, map[string]float64{"p": tt.quiet}, tt.quietWall, tt.writes)["p"]
			if d := got - tt.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("writeCPU = %v ms, want %v", got, tt.want)
			}
		})
	}
}
