package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestMemoryAvailable(t *testing.T) {
	const meminfo = "MemTotal:       24000000 kB\nMemFree:        20000000 kB\nMemAvailable:   22000000 kB\n"
	tests := []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"no cgroup file", map[string]string{"proc/meminfo": meminfo}, 22000000 << 10, true},
		{"no meminfo", map[string]string{"proc/self/cgroup": "0::/\n"}, 0, false},
		{"meminfo without MemAvailable", map[string]string{"proc/meminfo": "MemTotal: 1 kB\n"}, 0, false},
		{"meminfo garbled", map[string]string{"proc/meminfo": "MemAvailable: lots kB\n"}, 0, false},
		{"v2 unlimited", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/app\n",
			"sys/fs/cgroup/app/memory.max": "max\n", "sys/fs/cgroup/app/memory.current": "1000\n",
		}, 22000000 << 10, true},
		{"v2 limited", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/app\n",
			"sys/fs/cgroup/app/memory.max": "2147483648\n", "sys/fs/cgroup/app/memory.current": "536870912\n",
		}, 2147483648 - 536870912, true},
		{"v2 over its limit", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/app\n",
			"sys/fs/cgroup/app/memory.max": "1000\n", "sys/fs/cgroup/app/memory.current": "2000\n",
		}, 0, true},
		{"v2 limit above the machine's", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/app\n",
			"sys/fs/cgroup/app/memory.max": "107374182400\n", "sys/fs/cgroup/app/memory.current": "0\n",
		}, 22000000 << 10, true},
		{"v1 limited", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/box\n0::/\n",
			"sys/fs/cgroup/memory/box/memory.limit_in_bytes": "1073741824\n",
			"sys/fs/cgroup/memory/box/memory.usage_in_bytes": "73741824\n",
		}, 1000000000, true},
		{"v1 unlimited", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/box\n",
			"sys/fs/cgroup/memory/box/memory.limit_in_bytes": "9223372036854771712\n",
		}, 22000000 << 10, true},
		{"cgroup named but its files missing", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/gone\n0::/gone\n",
		}, 22000000 << 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := memoryAvailable(root)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("memoryAvailable = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestBootstrapGCRestores checks that the first bootstrap's relaxed collector is put back exactly
// as the operator had it, once, and that GOGC set by the operator is left alone.
func TestBootstrapGCRestores(t *testing.T) {
	if _, ok := memoryAvailable("/"); !ok {
		t.Skip("no memory figures on this system")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	prevPercent := debug.SetGCPercent(150)
	prevLimit := debug.SetMemoryLimit(8 << 30)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

	t.Setenv("GOGC", "150")
	if g := relaxGCForBootstrap(log); g != nil {
		t.Fatal("relaxed the collector although GOGC was set")
	}
	os.Unsetenv("GOGC")

	g := relaxGCForBootstrap(log)
	if g == nil {
		t.Fatal("left the collector alone")
	}
	if p := debug.SetGCPercent(bootstrapGCPercent); p != bootstrapGCPercent {
		t.Fatalf("GC percent during the bootstrap = %d, want %d", p, bootstrapGCPercent)
	}
	if l := debug.SetMemoryLimit(-1); l <= 0 || l > 8<<30 {
		t.Fatalf("memory limit during the bootstrap = %d, want at most the operator's 8 GiB", l)
	}
	g.restore()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("GC percent after = %d, want 150", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 8<<30 {
		t.Fatalf("memory limit after = %d, want 8 GiB", l)
	}
	// Only the first restore acts: a later one (the bound's timer) must not undo a change made
	// since.
	debug.SetGCPercent(90)
	g.restore()
	if p := debug.SetGCPercent(150); p != 90 {
		t.Fatalf("a second restore changed the GC percent to %d", p)
	}
	var nilGC *bootstrapGC
	nilGC.restore()
}
