package mediacmp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/bench/load"
	"vitrine/edge/files"
	"vitrine/edge/pipeline"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// serveEnv names the environment variable that turns the test binary into the media server: its
// value is the JSON of a serveConfig.
const serveEnv = "VITRINE_MEDIACMP_SERVE"

// serveConfig is the media server's configuration, passed from the benchmark to its child.
type serveConfig struct {
	Addr           string `json:"addr"`
	BlobDir        string `json:"blob_dir"`
	MaxCachedBytes int64  `json:"max_cached_bytes"`
	// Bare serves the files' bytes from memory with nothing but a Content-Type, without
	// files.Server: the fasthttp baseline.
	Bare  bool                        `json:"bare"`
	Files map[string]schema.MediaFile `json:"files"` // by request path
}

func TestMain(m *testing.M) {
	if v := os.Getenv(serveEnv); v != "" {
		if err := serve(v); err != nil {
			fmt.Fprintln(os.Stderr, "mediacmp server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve runs the media server until SIGTERM: a fasthttp server with the edge's settings (edge.
// Server.HTTPServer) whose handler looks the file up by path, as the edge's tail looks it up in
// its replica, and answers it with files.Server. /metrics shows the server's metrics.
func serve(config string) error {
	var cfg serveConfig
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		return err
	}
	store, err := blob.NewFS(cfg.BlobDir)
	if err != nil {
		return err
	}
	set := metrics.NewSet()
	srv, err := files.New(files.Config{MaxCachedBytes: cfg.MaxCachedBytes, Metrics: set}, store)
	if err != nil {
		return err
	}
	defer srv.Close()
	bodies := map[string][]byte{}
	if cfg.Bare {
		for path, f := range cfg.Files {
			obj, err := store.Open(context.Background(), f.BlobName, 0)
			if err != nil {
				return err
			}
			bodies[path], err = io.ReadAll(obj)
			obj.Close()
			if err != nil {
				return err
			}
		}
	}
	hs := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/metrics" {
				set.WritePrometheus(ctx)
				return
			}
			f, ok := cfg.Files[string(ctx.Path())]
			if !ok {
				ctx.SetStatusCode(404)
				return
			}
			if cfg.Bare {
				ctx.Response.Header.SetContentType(f.ContentType)
				ctx.Response.SetBodyRaw(bodies[string(ctx.Path())])
				return
			}
			srv.Serve(ctx, f)
		},
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Minute,
		IdleTimeout:           60 * time.Second,
		ReadBufferSize:        pipeline.MaxHeaderBytes,
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		hs.Shutdown()
	}()
	return hs.Serve(ln)
}

// child is a server process of the benchmark.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// start runs argv pinned to cpu (taskset), its output in dir/<name>.log; the kernel kills it
// if the benchmark dies.
func start(tb testing.TB, name, dir string, cpu int, env []string, argv ...string) *child {
	tb.Helper()
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	if cpu >= 0 {
		argv = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath}
	tb.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return c
}

// pids are the child's process and its children (nginx's worker), for CPU accounting.
func (c *child) pids() []int {
	pids := []int{c.cmd.Process.Pid}
	for i := 0; i < len(pids); i++ {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pids[i], pids[i]))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

func (c *child) cpu() float64 {
	var s float64
	for _, p := range c.pids() {
		if t, err := load.ProcessCPU(p); err == nil {
			s += t
		}
	}
	return s
}

func waitListening(tb testing.TB, c *child, addr string) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(c.log)
			tb.Fatalf("%s does not listen on %s: %s", c.name, addr, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// machineBusy is the busy CPU seconds of the whole machine (/proc/stat, USER_HZ 100).
func machineBusy() float64 {
	b, _ := os.ReadFile("/proc/stat")
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var busy float64
	for i, f := range strings.Fields(string(line))[1:] {
		if i >= 8 {
			break
		}
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseFloat(f, 64)
		busy += n
	}
	return busy / 100
}

// measurement is one wrk run against one server.
type measurement struct {
	rps, serverCPUPerReq, otherCores, generatorCores float64
	transfer                                         string
	errors                                           string
}

var (
	reRPS      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reTransfer = regexp.MustCompile(`Transfer/sec:\s+(\S+)`)
	reErrors   = regexp.MustCompile(`(Non-2xx or 3xx responses: \d+|Socket errors: [^\n]+)`)
)

// runWrk drives url for d with wrk on CPU loadCPU (one thread, 64 connections) and measures the
// server's CPU.
func runWrk(tb testing.TB, wrk string, loadCPU int, url string, d time.Duration, srv *child) measurement {
	tb.Helper()
	args := []string{wrk, "-t1", "-c64", "-d" + strconv.Itoa(int(d/time.Second)) + "s", url}
	if loadCPU >= 0 {
		args = append([]string{"taskset", "-c", strconv.Itoa(loadCPU)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cpu0, busy0, t0 := srv.cpu(), machineBusy(), time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0).Seconds()
	cpu1, busy1 := srv.cpu(), machineBusy()
	if err != nil {
		tb.Fatalf("wrk: %v: %s", err, out)
	}
	m := reRPS.FindSubmatch(out)
	if m == nil {
		tb.Fatalf("wrk printed no rate: %s", out)
	}
	var r measurement
	r.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	if t := reTransfer.FindSubmatch(out); t != nil {
		r.transfer = string(t[1])
	}
	if e := reErrors.FindAll(out, -1); e != nil {
		r.errors = string(bytes.Join(e, []byte("; ")))
	}
	serverCPU := cpu1 - cpu0
	r.serverCPUPerReq = serverCPU / (r.rps * wall)
	var gen float64
	if cmd.ProcessState != nil {
		gen = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	r.generatorCores = gen / wall
	r.otherCores = max(0, (busy1-busy0)-serverCPU-gen) / wall
	return r
}

func get(tb testing.TB, addr, path string) (int, []byte, *fasthttp.ResponseHeader) {
	tb.Helper()
	c := &fasthttp.HostClient{Addr: addr, MaxResponseBodySize: 64 << 20}
	req, resp := fasthttp.AcquireRequest(), new(fasthttp.Response)
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI("http://" + addr + path)
	if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
		tb.Fatalf("GET %s%s: %v", addr, path, err)
	}
	return resp.StatusCode(), bytes.Clone(resp.Body()), &resp.Header
}

func metric(tb testing.TB, addr, name string) float64 {
	_, body, _ := get(tb, addr, "/metrics")
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

// mediaFile is one file of the comparison.
type mediaFile struct {
	label, path string
	body        []byte
}

// target is one server of the comparison.
type target struct {
	name  string
	addr  string
	child *child
	edge  bool
}

func BenchmarkMediaHits(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("linux only (taskset, /proc)")
	}
	out, err := exec.Command("../../deploy/local/ensure-nginx.sh").Output()
	if err != nil {
		b.Skipf("nginx is needed: %v", err)
	}
	nginx := strings.TrimSpace(string(out))
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is needed: WRK=1 deploy/local/ensure-nginx.sh installs it")
	}
	serverCPU, loadCPU := -1, -1
	if n := runtime.NumCPU(); n >= 2 {
		serverCPU, loadCPU = n-1, 0
	}
	rounds, duration, warmup := 3, 8*time.Second, 2*time.Second
	if testing.Short() {
		rounds, duration, warmup = 1, 3*time.Second, time.Second
	}

	dir := b.TempDir()
	store, err := blob.NewFS(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	const tenant = "11111111-1111-1111-1111-111111111111"
	catalog := map[string]schema.MediaFile{}
	var list []mediaFile
	for i, f := range []struct {
		label, file string
		size        int
	}{
		{"20 KB", "2026/11/photo-9f86d081884c-300x200.jpg", 20 << 10},
		{"2 MB", "2026/11/photo-9f86d081884c.jpg", 2 << 20},
	} {
		body := make([]byte, f.size)
		rand.NewChaCha8([32]byte{byte(i + 1)}).Read(body)
		info, err := store.Put(context.Background(), schema.MediaBlobName(tenant, f.file), "image/jpeg", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		path := schema.UploadsPath + f.file
		catalog[path] = schema.MediaFile{BlobName: info.Name, ContentType: info.ContentType, Size: info.Size, SHA256: info.SHA256, Modified: info.Modified}
		www := filepath.Join(dir, "www", filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(www), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(www, body, 0o644); err != nil {
			b.Fatal(err)
		}
		list = append(list, mediaFile{label: f.label, path: path, body: body})
	}

	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	startEdge := func(name string, maxCached int64, bare bool) *target {
		addr := freeAddr(b)
		cfg, _ := json.Marshal(serveConfig{Addr: addr, BlobDir: store.Root(), MaxCachedBytes: maxCached, Bare: bare, Files: catalog})
		c := start(b, name, dir, serverCPU, []string{serveEnv + "=" + string(cfg), "GOMAXPROCS=1"}, self)
		waitListening(b, c, addr)
		return &target{name: name, addr: addr, child: c, edge: !bare}
	}
	edge := startEdge("edge", 0, false)
	edgeCached := startEdge("edge-cache-4MiB", 4<<20, false)
	bare := startEdge("bare-fasthttp", 0, true)

	nginxAddr := freeAddr(b)
	ndir := filepath.Join(dir, "nginx")
	os.MkdirAll(filepath.Join(ndir, "tmp"), 0o755)
	conf := fmt.Sprintf(`# nginx serving the media files, written by bench/mediacmp.
user root;
daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events {
    worker_connections 4096;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    server {
        listen %[2]s;
        root %[3]s;
        location /cms-content/uploads/ {
            add_header Cache-Control "public, max-age=31536000, immutable";
            add_header X-Content-Type-Options nosniff;
        }
    }
}
`, ndir, nginxAddr, filepath.Join(dir, "www"))
	if err := os.WriteFile(filepath.Join(ndir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	nc := start(b, "nginx", ndir, serverCPU, nil, nginx, "-p", ndir, "-c", filepath.Join(ndir, "nginx.conf"))
	waitListening(b, nc, nginxAddr)
	ngx := &target{name: "nginx", addr: nginxAddr, child: nc}

	// Every server answers every file with the same bytes; the edges' second answers are
	// cache hits (the 2 MB file only where the cache takes it).
	for _, t := range []*target{edge, edgeCached, bare, ngx} {
		for _, f := range list {
			for range 2 {
				status, body, h := get(b, t.addr, f.path)
				if status != 200 || !bytes.Equal(body, f.body) || string(h.ContentType()) != "image/jpeg" {
					b.Fatalf("%s %s: %d, %d bytes, %s", t.name, f.path, status, len(body), h.ContentType())
				}
			}
		}
	}
	if metric(b, edge.addr, "vitrine_edge_media_hits_total") < 1 || metric(b, edge.addr, "vitrine_edge_media_streams_total") < 2 ||
		metric(b, edgeCached.addr, "vitrine_edge_media_hits_total") < 2 {
		b.Fatal("the edges do not answer from their caches as expected")
	}

	type key struct{ file, server string }
	results := map[key][]measurement{}
	plan := []struct {
		file    mediaFile
		targets []*target
	}{
		{list[0], []*target{edge, bare, ngx}},
		{list[1], []*target{edge, edgeCached, bare, ngx}},
	}
	for _, p := range plan {
		for _, t := range p.targets {
			runWrk(b, wrk, loadCPU, "http://"+t.addr+p.file.path, warmup, t.child)
		}
	}
	b.ResetTimer()
	for round := range rounds {
		for _, p := range plan {
			for _, t := range p.targets {
				m := runWrk(b, wrk, loadCPU, "http://"+t.addr+p.file.path, duration, t.child)
				b.Logf("round %d %s %s: %.0f req/s (%s/s), %.1f µs server CPU per request, generator %.2f cores, other %.2f cores %s",
					round+1, p.file.label, t.name, m.rps, m.transfer, m.serverCPUPerReq*1e6, m.generatorCores, m.otherCores, m.errors)
				results[key{p.file.label, t.name}] = append(results[key{p.file.label, t.name}], m)
			}
		}
	}
	median := func(ms []measurement, f func(measurement) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| file | server | req/s (median of %d) | ratio to nginx | server CPU per request | other CPU (cores) |\n|---|---|---|---|---|---|\n", rounds)
	for _, p := range plan {
		base := median(results[key{p.file.label, "nginx"}], func(m measurement) float64 { return m.rps })
		for _, t := range p.targets {
			ms := results[key{p.file.label, t.name}]
			rps := median(ms, func(m measurement) float64 { return m.rps })
			cpu := median(ms, func(m measurement) float64 { return m.serverCPUPerReq })
			other := median(ms, func(m measurement) float64 { return m.otherCores })
			fmt.Fprintf(&table, "| %s | %s | %.0f | %.2f | %.1f µs | %.2f |\n", p.file.label, t.name, rps, rps/base, cpu*1e6, other)
			b.ReportMetric(rps, strings.ReplaceAll(p.file.label+"/"+t.name, " ", "")+"-req/s")
		}
	}
	b.Logf("server on CPU %d, wrk (1 thread, 64 connections) on CPU %d; %d rounds of %v\n%s", serverCPU, loadCPU, rounds, duration, table.String())
}
