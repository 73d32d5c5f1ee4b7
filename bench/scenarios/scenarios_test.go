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
