package load

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinProcess restricts every thread of process pid (0: this process) to cpus. Threads created
// afterwards inherit the affinity of the thread that creates them, so pinning all current threads
// pins the process; it passes twice over the thread list to catch threads started meanwhile. An
// empty cpus does nothing.
func PinProcess(pid int, cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	if pid == 0 {
		pid = os.Getpid()
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	for pass := 0; pass < 2; pass++ {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("load: pin %d: %w", pid, err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("load: pin %d (thread %d) to CPUs %v: %w", pid, tid, cpus, err)
			}
		}
	}
	return nil
}

// Affinity returns the CPUs this process's calling thread may run on (the machine's CPUs when
// nothing restricted it).
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
