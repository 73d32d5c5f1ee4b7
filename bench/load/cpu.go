package load

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc: 100 on every Linux architecture Go
// supports (the kernel fixes it for user space regardless of CONFIG_HZ).
const clockTicks = 100

// CPUUsage is CPU time spent during a measured window, in seconds.
type CPUUsage struct {
	// Server is the CPU of the server processes given to Run (all their threads).
	Server float64 `json:"server_s"`
	// Generator is the CPU of this process (the load generator and anything else it runs).
	Generator float64 `json:"generator_s"`
	// Other is everything else on the machine: busy time of all CPUs minus the two above.
	Other float64 `json:"other_s"`
	// Wall is the length of the window, to turn seconds into cores busy.
	Wall float64 `json:"wall_s"`
}

// cpuSample is a reading of the counters CPUUsage is the difference of.
type cpuSample struct {
	server, self, machine float64 // seconds
}

// sampleCPU reads the CPU seconds of pids (those that have exited count zero), of this process
// and of the whole machine.
func sampleCPU(pids []int) (cpuSample, error) {
	var s cpuSample
	for _, pid := range pids {
		t, err := ProcessCPU(pid)
		if err == nil {
			s.server += t
		}
	}
	self, err := ProcessCPU(os.Getpid())
	if err != nil {
		return s, err
	}
	s.self = self
	s.machine, err = machineBusy()
	return s, err
}

// usage is the CPU used between a and b over wall seconds.
func usage(a, b cpuSample, wall float64) CPUUsage {
	u := CPUUsage{Server: b.server - a.server, Generator: b.self - a.self, Wall: wall}
	u.Other = (b.machine - a.machine) - u.Server - u.Generator
	if u.Other < 0 { // the counters tick at different instants
		u.Other = 0
	}
	return u
}

// ProcessCPU returns the user+system CPU seconds used so far by every thread of process pid
// (from /proc/<pid>/stat).
func ProcessCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count from the
	// last ')'. utime and stime are fields 14 and 15, so the 12th and 13th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("load: /proc/%d/stat: unexpected format", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("load: /proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("load: /proc/%d/stat: unexpected format", pid)
	}
	return float64(utime+stime) / clockTicks, nil
}

// machineBusy returns the busy (non-idle, non-iowait) CPU seconds of all CPUs from /proc/stat.
func machineBusy() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("load: /proc/stat: unexpected format")
	}
	var busy uint64
	// user nice system idle iowait irq softirq steal (guest time is already in user).
	for i, v := range f[1:] {
		if i >= 8 {
			break
		}
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("load: /proc/stat: %w", err)
		}
		if i == 3 || i == 4 {
			continue
		}
		busy += n
	}
	return float64(busy) / clockTicks, nil
}
