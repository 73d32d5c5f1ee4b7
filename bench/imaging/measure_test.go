package imaging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mi "vitrine/origin/media/imaging"
)

var (
	measure = flag.Bool("measure", false, "run the measurement (TestMeasure): each engine in child processes")
	runs    = flag.Int("runs", 7, "measured runs per engine and output type")
	outDir  = flag.String("out", "", "directory for results.json and table.md (none: log only)")
	label   = flag.String("label", "", "suffix for the pure-go engine's name (the WebP backend of this build)")
	mimes   = flag.String("mimes", "image/jpeg,image/webp", "output types to measure, comma-separated")
)

// The child protocol: the test binary re-executed with these variables runs TestChild.
const (
	envChild = "VITRINE_IMAGING_BENCH_CHILD" // engine name "/" output MIME type, or "idle"
	envInput = "VITRINE_IMAGING_BENCH_INPUT" // path of the original
	marker   = "IMAGING_RESULT "
)

// TestEngines checks that every engine built in makes WordPress's dimensions, in both output
// types, on a small photograph (a 2600x1950 one would be too slow for make test; the targets
// and their arithmetic are the same functions).
func TestEngines(t *testing.T) {
	src, err := Photo(640, 480, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Engines() {
		for _, mime := range []string{mi.JPEG, mi.WebP} {
			outs, err := e.Make(src, mime)
			if err != nil {
				t.Fatalf("%s %s: %v", e.Name, mime, err)
			}
			if err := check(outs, 640, 480); err != nil {
				t.Errorf("%s %s: %v", e.Name, mime, err)
			}
		}
	}
	if ts := Targets(4000, 3000); len(ts) != 7 || ts[0].Plan.Width != 2560 || ts[0].Plan.Height != 1920 {
		t.Errorf("targets of 4000x3000 = %+v", ts)
	}
}

// childResult is what a child reports. Peak memory is the child's VmHWM, which starts at its
// exec; the parent's getrusage maxrss of a child also counts the pages the child shared with the
// parent between fork and exec, so it is not used.
type childResult struct {
	Engine  string   `json:"engine"`
	Mime    string   `json:"mime"`
	InitMs  float64  `json:"init_ms"`
	WallMs  float64  `json:"wall_ms"`
	HWMKiB  int64    `json:"vm_hwm_kib"`
	Outputs []Output `json:"outputs"`
}

// TestChild is the child side of TestMeasure; it does nothing in a normal run.
func TestChild(t *testing.T) {
	spec := os.Getenv(envChild)
	if spec == "" {
		t.Skip("child of TestMeasure only")
	}
	src, err := os.ReadFile(os.Getenv(envInput))
	if err != nil {
		t.Fatal(err)
	}
	res := childResult{Engine: spec}
	if spec != "idle" {
		name, mime, _ := strings.Cut(spec, "/")
		i := slices.IndexFunc(Engines(), func(e Engine) bool { return e.Name == name })
		if i < 0 {
			t.Fatalf("no engine %q in this build", name)
		}
		e := Engines()[i]
		res.Engine, res.Mime = name, mime
		// Warm up on a small image that gets two sub-sizes: library start-up (libvips, libwebp and
		// its WebAssembly compilation) is paid once per process in a server, not per upload.
		small, err := Photo(320, 240, 2)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if _, err := e.Make(small, mime); err != nil {
			t.Fatal(err)
		}
		res.InitMs = ms(time.Since(t0))
		runtime.GC()
		t0 = time.Now()
		res.Outputs, err = e.Make(src, mime)
		res.WallMs = ms(time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
	}
	res.HWMKiB = vmHWM()
	b, _ := json.Marshal(res)
	fmt.Println(marker + string(b))
	runtime.KeepAlive(src)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// vmHWM returns this process's peak resident set size in KiB (/proc/self/status VmHWM).
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// row is one engine and output type over all runs.
type row struct {
	Engine      string    `json:"engine"`
	Mime        string    `json:"mime"`
	Runs        int       `json:"runs"`
	WallMs      []float64 `json:"wall_ms"`
	CPUMs       []float64 `json:"cpu_ms"` // user + system time of the whole child
	HWMKiB      []int64   `json:"vm_hwm_kib"`
	InitMs      []float64 `json:"init_ms"`
	OutputBytes int       `json:"output_bytes"`
	Outputs     []Output  `json:"outputs"`
}

// TestMeasure runs each engine and output type -runs times, each run in a fresh child process,
// on a generated 4000x3000 photograph; it logs a table and, with -out, writes results.json and
// table.md there (merged with rows of other builds already in results.json).
func TestMeasure(t *testing.T) {
	if !*measure {
		t.Skip("the measurement runs with -measure (make bench-imaging)")
	}
	const w, h = 4000, 3000
	src, err := Photo(w, h, 42)
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(input, src, 0o644); err != nil {
		t.Fatal(err)
	}
	child := func(spec string) (childResult, *syscall.Rusage) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChild+"="+spec, envInput+"="+input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child %s: %v\n%s%s", spec, err, out, stderr.Bytes())
		}
		var res childResult
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), marker); ok {
				if err := json.Unmarshal([]byte(l), &res); err != nil {
					t.Fatal(err)
				}
			}
		}
		return res, cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	load0 := loadavg()
	idle, _ := child("idle")
	var rows []row
	for _, e := range Engines() {
		for _, mime := range strings.Split(*mimes, ",") {
			r := row{Engine: e.Name, Mime: mime, Runs: *runs}
			if e.Name == "pure-go" && *label != "" {
				r.Engine += " " + *label
			}
			for i := 0; i < *runs; i++ {
				res, ru := child(e.Name + "/" + mime)
				if err := check(res.Outputs, w, h); err != nil {
					t.Fatalf("%s %s: %v", e.Name, mime, err)
				}
				r.WallMs = append(r.WallMs, res.WallMs)
				r.InitMs = append(r.InitMs, res.InitMs)
				r.HWMKiB = append(r.HWMKiB, res.HWMKiB)
				r.CPUMs = append(r.CPUMs, ms(time.Duration(ru.Utime.Nano()+ru.Stime.Nano())))
				r.Outputs = res.Outputs
			}
			for _, o := range r.Outputs {
				r.OutputBytes += o.Bytes
			}
			rows = append(rows, r)
		}
	}
	load1 := loadavg()
	baseline := row{Engine: strings.TrimSpace("baseline: this test binary holding the input " + *label), Runs: 1, HWMKiB: []int64{idle.HWMKiB}}
	rows = append([]row{baseline}, rows...)
	machine := machineInfo(load0, load1)
	table := renderTable(rows, len(src), machine)
	t.Log("\n" + table)
	if *outDir == "" {
		return
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Keep the rows of other builds (another -label) already there.
	var doc struct {
		Input   string `json:"input"`
		Machine string `json:"machine"`
		Rows    []row  `json:"rows"`
	}
	if b, err := os.ReadFile(filepath.Join(*outDir, "results.json")); err == nil {
		_ = json.Unmarshal(b, &doc)
	}
	doc.Rows = slices.DeleteFunc(doc.Rows, func(old row) bool {
		return slices.ContainsFunc(rows, func(r row) bool { return r.Engine == old.Engine && r.Mime == old.Mime })
	})
	doc.Rows = append(doc.Rows, rows...)
	doc.Input = fmt.Sprintf("4000x3000 JPEG quality 90, %d bytes, Photo(4000, 3000, 42)", len(src))
	doc.Machine = machine
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(filepath.Join(*outDir, "results.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	table = renderTable(doc.Rows, len(src), machine)
	if err := os.WriteFile(filepath.Join(*outDir, "table.md"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
}

func median[T int64 | float64](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func renderTable(rows []row, inputBytes int, machine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Input: a 4000x3000 JPEG (quality 90, %d bytes, gradients and noise, seed 42). Outputs: the 2560x1920\n", inputBytes)
	b.WriteString("\"-scaled\" image and the six WordPress sizes (2048x1536, 1536x1152, 1024x768, 768x576, 300x225,\n")
	b.WriteString("150x150 crop), metadata stripped. Each run is a fresh process; wall time from the original's bytes\n")
	b.WriteString("to all encoded outputs in memory, after a warm-up on a 320x240 image (library start-up, also timed);\n")
	b.WriteString("CPU is the whole child's user + system time; peak RSS is the child's VmHWM. Medians of the runs, [min–max].\n\n")
	b.WriteString("| engine | output | runs | wall ms | CPU ms (process) | peak RSS MiB (VmHWM) | start-up ms | output KiB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		mime := strings.TrimPrefix(r.Mime, "image/")
		if mime == "" {
			mime = "–"
		}
		rng := func(v []float64) string {
			if len(v) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.0f [%.0f–%.0f]", median(v), slices.Min(v), slices.Max(v))
		}
		mib := func(v []int64) string {
			if len(v) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.0f [%.0f–%.0f]", float64(median(v))/1024, float64(slices.Min(v))/1024, float64(slices.Max(v))/1024)
		}
		out := "–"
		if r.OutputBytes > 0 {
			out = strconv.Itoa(r.OutputBytes / 1024)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Engine, mime, r.Runs, rng(r.WallMs), rng(r.CPUMs), mib(r.HWMKiB), rng(r.InitMs), out)
	}
	b.WriteString("\n" + machine + "\n")
	return b.String()
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machineInfo describes the machine and the load around the run.
func machineInfo(load0, load1 string) string {
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) >= 2 {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
			}
		}
	}
	vipsVersion := "not installed"
	if out, err := exec.Command("pkg-config", "--modversion", "vips").Output(); err == nil {
		vipsVersion = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("Machine: %d CPUs (%s), %s, %s/%s, %s, GOMAXPROCS %d, libvips %s. Load average before %s, after %s\n(other processes share these cores: absolute times move with them, the ratios less).",
		runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.GOMAXPROCS(0), vipsVersion, load0, load1)
}
