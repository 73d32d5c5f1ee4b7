package scenarios

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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

func TestParseServerTiming(t *testing.T) {
	for _, tc := range []struct {
		in           string
		app, replica time.Duration
		ok           bool
	}{
		{"app;dur=1.234, replica;dur=0.567", 1234 * time.Microsecond, 567 * time.Microsecond, true},
		{"replica;dur=2,app;dur=0", 0, 2 * time.Millisecond, true},
		{"", 0, 0, false},
		{"app;dur=1.0", 0, 0, false},
		{"app;dur=1, replica;dur=1, app;dur=2", 0, 0, false},
		{"app;dur=1, db;dur=1", 0, 0, false},
		{"app;dur=-1, replica;dur=1", 0, 0, false},
		{"app;dur=NaN, replica;dur=1", 0, 0, false},
		{"app;dur=1e300, replica;dur=1", 0, 0, false},
		{"app;desc=x, replica;dur=1", 0, 0, false},
		{"app, replica;dur=1", 0, 0, false},
	} {
		app, replica, ok := parseServerTiming(tc.in)
		if ok != tc.ok || ok && (app != tc.app || replica != tc.replica) {
			t.Errorf("parseServerTiming(%q) = %v, %v, %v; want %v, %v, %v", tc.in, app, replica, ok, tc.app, tc.replica, tc.ok)
		}
	}
}

func FuzzParseServerTiming(f *testing.F) {
	f.Add("app;dur=1.234, replica;dur=0.567")
	f.Add("replica;dur=2,app;dur=0")
	f.Add("app;dur=1e300, replica;dur=1")
	f.Fuzz(func(t *testing.T, h string) {
		app, replica, ok := parseServerTiming(h)
		if !ok {
			return
		}
		if app < 0 || replica < 0 {
			t.Fatalf("%q: negative parts %v, %v", h, app, replica)
		}
		// What it read, written as the origin writes it, reads back the same to the microsecond.
		again := fmt.Sprintf("app;dur=%.3f, replica;dur=%.3f", float64(app)/1e6, float64(replica)/1e6)
		a2, r2, ok := parseServerTiming(again)
		if !ok || (a2-app).Abs() > time.Microsecond || (r2-replica).Abs() > time.Microsecond {
			t.Fatalf("%q read as %v, %v; written as %q read back as %v, %v, %v", h, app, replica, again, a2, r2, ok)
		}
	})
}

// ackParts: the slowest writes are the ones with the longest acknowledgement, and the rest is
// what the parts leave.
func TestAckParts(t *testing.T) {
	if ackParts(nil) != nil {
		t.Fatal("parts of no writes")
	}
	var ts []ackTiming
	for i := range 1000 {
		d := time.Duration(i+1) * time.Millisecond
		ts = append(ts, ackTiming{at: time.Duration(i) * time.Second, ack: d, send: d / 10, app: d / 5, replica: d / 2})
	}
	ts[0], ts[999] = ts[999], ts[0] // order does not matter
	got := ackParts(ts)
	if len(got) != 3 || got[0].Count != 1000 || got[1].Count != 10 || got[2].Count != 1 {
		t.Fatalf("counts: %+v", got)
	}
	if got[2].Ack != 1000 || got[2].Send != 100 || got[2].App != 200 || got[2].Replica != 500 || got[2].Rest != 200 {
		t.Errorf("the slowest write: %+v", got[2])
	}
	if want := (991.0 + 1000) / 2; got[1].Ack != want {
		t.Errorf("the slowest 1%%: ack %v, want %v", got[1].Ack, want)
	}
	if got[1].First != 990 || got[1].Last != 999 || got[0].First != 0 || got[0].Last != 999 {
		t.Errorf("times: %+v", got)
	}
	if got[0].Ack != 500.5 {
		t.Errorf("every write: ack %v, want 500.5", got[0].Ack)
	}
}

func TestFloorReport(t *testing.T) {
	floor := []PieceFloor{
		{Piece: "http", Process: "origin", Ms: 0.1, Ops: 100},
		{Piece: "pg", Process: "database", Ms: 0.5, Ops: 100},
		{Piece: "js", Process: "nats", Ms: 0.4, Ops: 100},
		{Piece: "followers", Process: "followers", Ms: 0.25, Ops: 100},
	}
	real := map[string]float64{"origin": 1, "database": 1.5, "nats": 0.75, "relay": 0.5, "edge-1": 0.25, "edge-2": 0.5}
	table, sum := floorReport(floor, real)
	if sum != 1.25 {
		t.Errorf("floor sum = %v, want 1.25", sum)
	}
	want := [][]string{
		{"http", "100", "0.100", "origin", "1.00"},
		{"pg", "100", "0.500", "database", "1.50"},
		{"js", "100", "0.400", "nats", "0.75"},
		{"followers", "100", "0.250", "the edges (the origin's replica is in the origin's)", "0.75"},
		{"all", "", "1.250", "these processes", "4.00"},
	}
	if len(table.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(table.Rows), len(want), table.Rows)
	}
	for i := range want {
		if strings.Join(table.Rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, table.Rows[i], want[i])
		}
	}
}
