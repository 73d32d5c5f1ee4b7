package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"

	"vitrine/origin/store"
	"vitrine/sync/feed"
)

// Config says what to start.
type Config struct {
	// Binary is the vitrine binary the children run (required).
	Binary string
	// DatabaseURL names a PostgreSQL server (any database on it): a fresh database is created
	// there and dropped by Close (required).
	DatabaseURL string
	// DatabaseName names the fresh database (default vitrine_bench_<random>). It must not exist.
	DatabaseName string
	// Origin starts an origin. Without it the cluster is NATS, the relay and the edges: enough
	// for reads and cold starts, while writes go through origin/store in process.
	Origin bool
	// Edges is the number of edges to start (0 or more; more can be added with StartEdge).
	Edges int
	// EdgeArgs are extra flags of every edge (for instance "--cache-bytes=-1").
	EdgeArgs []string
	// RelayArgs are extra flags of the relay (for instance "--snapshot-every=0", so that only
	// WriteSnapshots writes snapshots).
	RelayArgs []string
	// CPUs pins every child to these CPUs with taskset (empty: not pinned).
	CPUs []int
	// LogLevel is the children's log level (default "warn").
	LogLevel string
	// Log receives progress of the cluster itself (default: discarded).
	Log *slog.Logger
	// ReadyTimeout bounds the wait for each child's readiness (default 60s).
	ReadyTimeout time.Duration
}

// Cluster is a running deployment. Its fields are set by Start and not changed after, except
// Edges, which StartEdge appends to (not safe concurrently with reading it).
type Cluster struct {
	// DatabaseURL is the URL of the cluster's own database.
	DatabaseURL string
	// NATSURL is the URL of its nats-server.
	NATSURL string
	// DB is an open store on the database, for setup and checks done in process.
	DB *store.DB
	// Secret is the origin's server secret (application password hashes are keyed with it).
	Secret []byte
	// NATS, Relay and Origin are the processes (Origin is nil without Config.Origin).
	NATS, Relay, Origin *Process
	// Edges are the running edges, in the order they were started.
	Edges []*Process

	cfg       Config
	dir       string
	ownDir    bool
	log       *slog.Logger
	client    *fasthttp.Client
	closeOnce sync.Once
	closeErr  error
	mu        sync.Mutex
	procs     []*Process
	closing   bool
}

// Process is one child process.
type Process struct {
	// Name is "nats", "relay", "origin" or "edge-<n>".
	Name string
	// PID is the process id (for CPU and memory accounting).
	PID int
	// Addr is the main listen address (NATS clients, or HTTP for origins and edges); empty for
	// the relay.
	Addr string
	// OpsAddr serves /metrics, /healthz and /readyz (empty for NATS).
	OpsAddr string
	// LogFile is where the child's stderr goes.
	LogFile string

	cmd     *exec.Cmd
	done    chan struct{}
	err     error       // the Wait result, set before done is closed
	stopped atomic.Bool // Stop was called: its exit is expected
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// LogTail returns the last n bytes of the process's log, for error messages.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}

// Start starts a cluster. When it fails, everything it started is stopped and removed.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if cfg.Binary == "" || cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("cluster: Binary and DatabaseURL are required")
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 60 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{cfg: cfg, log: cfg.Log, client: &fasthttp.Client{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	var rnd [6]byte
	rand.Read(rnd[:])
	suffix := hex.EncodeToString(rnd[:])
	c.dir, err = os.MkdirTemp("", "vitrine-bench-"+suffix+"-")
	if err != nil {
		return nil, err
	}
	c.ownDir = true
	secret := make([]byte, 32)
	rand.Read(secret)
	c.Secret = secret

	if cfg.DatabaseName == "" {
		cfg.DatabaseName = "vitrine_bench_" + suffix
	}
	if c.DatabaseURL, err = databaseURL(cfg.DatabaseURL, cfg.DatabaseName); err != nil {
		return nil, err
	}
	if err := store.EnsureDatabase(ctx, c.DatabaseURL); err != nil {
		c.DatabaseURL = "" // nothing to drop
		return nil, err
	}
	if c.DB, err = store.Open(ctx, c.DatabaseURL, store.Config{}); err != nil {
		return nil, err
	}
	if err := c.DB.Migrate(ctx); err != nil {
		return nil, err
	}

	natsAddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	c.NATSURL = "nats://" + natsAddr
	if c.NATS, err = c.start("nats", natsAddr, "", "nats", "--addr", natsAddr, "--store-dir", filepath.Join(c.dir, "nats")); err != nil {
		return nil, err
	}
	if err := c.waitTCP(ctx, c.NATS); err != nil {
		return nil, err
	}

	relayOps, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	if c.Relay, err = c.start("relay", "", relayOps, append([]string{"relay", "--ops-addr", relayOps}, cfg.RelayArgs...)...); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, c.Relay); err != nil {
		return nil, err
	}
	if err := c.waitStream(ctx); err != nil {
		return nil, err
	}

	if cfg.Origin {
		addr, ops, err := freeAddrs()
		if err != nil {
			return nil, err
		}
		if c.Origin, err = c.start("origin", addr, ops, "origin", "--addr", addr, "--ops-addr", ops); err != nil {
			return nil, err
		}
		if err := c.waitReady(ctx, c.Origin); err != nil {
			return nil, err
		}
	}
	for range cfg.Edges {
		if _, err := c.StartEdge(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// StartEdge starts one more edge with the configured flags plus args, and waits until it is
// ready (every tenant it serves has had its first checkpoint).
func (c *Cluster) StartEdge(ctx context.Context, args ...string) (*Process, error) {
	p, err := c.StartEdgeNoWait(args...)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// StartEdgeNoWait starts one more edge and returns at once: cold-start measurements time the
// readiness themselves.
func (c *Cluster) StartEdgeNoWait(args ...string) (*Process, error) {
	addr, ops, err := freeAddrs()
	if err != nil {
		return nil, err
	}
	originURL := "http://127.0.0.1:1" // no origin: forwarded requests fail fast
	if c.Origin != nil {
		originURL = "http://" + c.Origin.Addr
	}
	full := append([]string{"edge", "--addr", addr, "--ops-addr", ops, "--origin-url", originURL, "--rate-limit", "-1"}, c.cfg.EdgeArgs...)
	p, err := c.start(fmt.Sprintf("edge-%d", len(c.Edges)+1), addr, ops, append(full, args...)...)
	if err != nil {
		return nil, err
	}
	c.Edges = append(c.Edges, p)
	return p, nil
}

// PIDs returns the process ids of every running child: the server side of CPU accounting.
func (c *Cluster) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, p := range c.procs {
		select {
		case <-p.done:
		default:
			out = append(out, p.PID)
		}
	}
	return out
}

// Running returns the running children (for CPU accounting by process).
func (c *Cluster) Running() []*Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Process
	for _, p := range c.procs {
		select {
		case <-p.done:
		default:
			out = append(out, p)
		}
	}
	return out
}

// ProfileCPU saves a CPU profile of every running child with an ops address over d, each to
// dir/<name>.cpu.pprof, all at once; it returns when every profile is written.
func (c *Cluster) ProfileCPU(ctx context.Context, d time.Duration, dir string) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range c.Running() {
		if p.OpsAddr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() error {
				req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.OpsAddr, int(d.Seconds())), nil)
				if err != nil {
					return err
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					return fmt.Errorf("%s: profile: %s", p.Name, resp.Status)
				}
				f, err := os.Create(filepath.Join(dir, p.Name+".cpu.pprof"))
				if err != nil {
					return err
				}
				if _, err := io.Copy(f, resp.Body); err != nil {
					f.Close()
					return err
				}
				return f.Close()
			}()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// StartHelper starts a child that is not part of the deployment (a piece of the write path that
// a scenario measures alone, such as a bare HTTP server), pinned, logged and ended by Close like
// the others; args are the vitrine binary's arguments. With addr set, it waits until the child
// accepts TCP connections there.
func (c *Cluster) StartHelper(ctx context.Context, name, addr string, args ...string) (*Process, error) {
	p, err := c.start(name, addr, "", args...)
	if err != nil || addr == "" {
		return p, err
	}
	return p, c.waitTCP(ctx, p)
}

// Dir is the cluster's temporary folder (children's logs and the NATS store); Close removes it.
func (c *Cluster) Dir() string { return c.dir }

// Err reports a child that exited before Close, with the end of its log.
func (c *Cluster) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.stopped.Load() {
			continue
		}
		select {
		case <-p.done:
			return fmt.Errorf("cluster: %s exited early (%v): %s", p.Name, p.err, p.LogTail(800))
		default:
		}
	}
	return nil
}

// Stop ends one child gracefully (SIGTERM, then SIGKILL after grace) and waits for it. Its exit
// is not an error for Err.
func (c *Cluster) Stop(p *Process, grace time.Duration) {
	p.stopped.Store(true)
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Close stops every child, newest first, drops the database and removes the temporary folder.
// It is safe to call more than once; later calls return the first call's result.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		procs := append([]*Process(nil), c.procs...)
		c.mu.Unlock()
		for i := len(procs) - 1; i >= 0; i-- {
			c.Stop(procs[i], 5*time.Second)
		}
		var errs []error
		if c.DB != nil {
			c.DB.Close()
		}
		if c.DatabaseURL != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			errs = append(errs, store.DropDatabase(ctx, c.DatabaseURL))
			cancel()
		}
		if c.ownDir {
			errs = append(errs, os.RemoveAll(c.dir))
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// start runs the vitrine binary with args as a child named name.
func (c *Cluster) start(name, addr, ops string, args ...string) (*Process, error) {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return nil, fmt.Errorf("cluster: closed")
	}
	logFile := filepath.Join(c.dir, name+".log")
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own descriptor
	bin, argv := c.cfg.Binary, args
	if len(c.cfg.CPUs) > 0 {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("cluster: pinning to CPUs %v needs taskset (util-linux): %w", c.cfg.CPUs, err)
		}
		bin, argv = taskset, append([]string{"-c", cpuList(c.cfg.CPUs), c.cfg.Binary}, args...)
	}
	cmd := exec.Command(bin, argv...)
	cmd.Env = append(os.Environ(),
		"VITRINE_DATABASE_URL="+c.DatabaseURL,
		"VITRINE_NATS_URL="+c.NATSURL,
		// The cluster's own `vitrine nats` has no users: a bench on one machine connects bare.
		"VITRINE_NATS_INSECURE=1",
		"VITRINE_SECRET="+hex.EncodeToString(c.Secret),
		"VITRINE_EDGE_SECRET=bench-edge-secret-0123456789abcdef",
		// The bench's orders pay with tok_visa: the test provider, named explicitly.
		"VITRINE_PAYMENTS=test",
		// No load balancer polls a bench cluster's /readyz: stop without a drain delay.
		"VITRINE_DRAIN_DELAY=0s",
		"VITRINE_LOG_LEVEL="+c.cfg.LogLevel,
		// Go's profiles on each child's (loopback) ops address, for scenarios that profile.
		"VITRINE_PPROF=1",
	)
	cmd.Stdout, cmd.Stderr = f, f
	// The kernel ends the child if this process dies without running Close.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start %s: %w", name, err)
	}
	p := &Process{Name: name, PID: cmd.Process.Pid, Addr: addr, OpsAddr: ops, LogFile: logFile, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	c.log.Info("cluster: started", "process", name, "pid", p.PID, "addr", addr, "ops", ops)
	return p, nil
}

// waitTCP waits until p accepts TCP connections on its address.
func (c *Cluster) waitTCP(ctx context.Context, p *Process) error {
	return c.poll(ctx, p, func() bool {
		conn, err := net.DialTimeout("tcp", p.Addr, time.Second)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	})
}

// waitReady waits until p's /readyz answers 200.
func (c *Cluster) waitReady(ctx context.Context, p *Process) error {
	return c.poll(ctx, p, func() bool {
		code, _, err := c.client.Get(nil, "http://"+p.OpsAddr+"/readyz")
		return err == nil && code == fasthttp.StatusOK
	})
}

// waitStream waits until the relay has created the state stream (a relay is ready before that).
func (c *Cluster) waitStream(ctx context.Context) error {
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		return fmt.Errorf("cluster: connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	name := feed.Config{}.WithDefaults().Stream
	return c.poll(ctx, c.Relay, func() bool {
		_, err := js.Stream(ctx, name)
		return err == nil
	})
}

// poll calls ok every 10 ms until it holds, p exits, ctx ends or the ready timeout passes.
func (c *Cluster) poll(ctx context.Context, p *Process, ok func() bool) error {
	deadline := time.Now().Add(c.cfg.ReadyTimeout)
	for !ok() {
		select {
		case <-p.done:
			return fmt.Errorf("cluster: %s exited while starting (%v): %s", p.Name, p.err, p.LogTail(800))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: %s not ready after %s: %s", p.Name, c.cfg.ReadyTimeout, p.LogTail(800))
		}
	}
	return nil
}

// databaseURL returns server with its database replaced by name.
func databaseURL(server, name string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("cluster: %q is not a postgres:// URL", server)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// FreeAddr returns a loopback address with a port free at the time of the call.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func freeAddrs() (string, string, error) {
	a, err := FreeAddr()
	if err != nil {
		return "", "", err
	}
	b, err := FreeAddr()
	return a, b, err
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
