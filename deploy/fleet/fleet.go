package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultLink is the link `vitrine fleet up` gives every region: 40 ms each way (80 ms of
// round trip), no jitter, no loss, no rate bound.
var DefaultLink = Link{Delay: 40 * time.Millisecond}

// DefaultRegions are the regions `vitrine fleet up` builds when none are named.
var DefaultRegions = []string{"eu", "ap"}

// PostgresBin is where the PostgreSQL 15 server binaries are looked for (Debian's layout).
const PostgresBin = "/usr/lib/postgresql/15/bin"

// Config describes a fleet. Zero values mean the documented defaults.
type Config struct {
	// Dir holds the fleet's data and logs (<Dir>/logs/<process>.log); required. Up empties its
	// data folders (core, regions) and keeps the logs (appended to). The PostgreSQL user must
	// be able to traverse it and its parents.
	Dir string
	// Binary is the vitrine binary every process runs (required).
	Binary string
	// Prefix starts every name the fleet gives the machine (default "vt-"): two fleets with
	// different prefixes can coexist, although their address plans collide on the host's
	// routes, so only one at a time is reachable from the host.
	Prefix string
	// Regions names the regions (default DefaultRegions): a lower-case letter and up to five
	// letters or digits each.
	Regions []string
	// EdgesPerRegion is the number of edges in each region (default 2).
	EdgesPerRegion int
	// Link is every wire's link, both directions (the zero Link is a perfect wire; see
	// DefaultLink).
	Link Link
	// Seed creates the demo store (tenant "demo", host demo.localhost, administrator "admin")
	// and fills it with Products products and Posts posts (0: `vitrine seed`'s defaults).
	Seed           bool
	Products       int
	Posts          int
	EdgeArgs       []string      // extra flags of every edge (e.g. --drain-delay 2s)
	ReadyTimeout   time.Duration // bound of each process's readiness (default 3 minutes)
	StopTimeout    time.Duration // how long a process has to stop before SIGKILL (default 20 s: an edge drains 5 s, then lets requests finish for up to 10 s)
	NoMirror       bool          // run edges on the central domain through the leaf even if `vitrine mirror` exists
	Progress       func(msg string)
	postgresBinDir string
}

// Endpoint is an HTTP server of the fleet.
type Endpoint struct {
	Name      string `json:"name"`   // e.g. "eu-edge-1", "origin"
	Region    string `json:"region"` // "core" for the origin
	Namespace string `json:"namespace"`
	Addr      string `json:"addr"` // public HTTP, host:port
	Ops       string `json:"ops"`  // /metrics, /healthz, /readyz
}

// URL is the endpoint's base URL.
func (e Endpoint) URL() string { return "http://" + e.Addr }

// Region is a region as State shows it.
type Region struct {
	Name      string     `json:"name"`
	Namespace string     `json:"namespace"`
	HostLink  string     `json:"host_link"` // the host's end of the direct veth to the region
	NATS      string     `json:"nats"`      // the leaf node's client URL
	Mirror    bool       `json:"mirror"`    // edges read the region's mirrors (else the central domain through the leaf)
	Edges     []Endpoint `json:"edges"`
}

// State is what a fleet is made of: names, addresses, the demo store. It is what
// <dir>/fleet.json holds.
type State struct {
	Prefix   string    `json:"prefix"`
	Dir      string    `json:"dir"`
	Binary   string    `json:"binary"`
	Created  time.Time `json:"created"`
	Database string    `json:"database"` // URL, reachable from the core (and the host)
	NATS     string    `json:"nats"`     // the hub's client URL
	Core     struct {
		Namespace string `json:"namespace"`
		HostLink  string `json:"host_link"`
	} `json:"core"`
	Origin  Endpoint `json:"origin"`
	Relay   Endpoint `json:"relay"`
	Regions []Region `json:"regions"`
	// Tenant is the demo store's host ("" without Seed); AdminLogin and AdminPassword its
	// administrator's application password (basic auth on the origin and edges).
	Tenant        string `json:"tenant,omitempty"`
	AdminLogin    string `json:"admin_login,omitempty"`
	AdminPassword string `json:"admin_password,omitempty"`
	// Supervisor and Ready are set by the process that owns the fleet (`vitrine fleet`).
	Supervisor int  `json:"supervisor,omitempty"`
	Ready      bool `json:"ready"`
}

// Fleet is a running fleet. Its methods are safe for concurrent use.
type Fleet struct {
	cfg    Config
	plan   plan
	logDir string
	state  State
	env    []string // secrets, given to processes in their environment

	mu      sync.Mutex
	procs   []*process
	tiers   map[*process]int
	edges   map[string][]*process
	wires   map[string]*Wire
	clients map[string]*http.Client
	down    bool
}

// Tiers of processes: started in this order, stopped in the reverse one.
const (
	tierPostgres = iota
	tierHub
	tierCore
	tierLeaf
	tierMirror
	tierEdge
)

// Up builds a fleet and returns when every process is ready. On failure it removes what it
// built. The fleet lives until Down (or until this process dies: its processes get SIGKILL and
// its TAP devices vanish; Cleanup removes the rest).
func Up(ctx context.Context, cfg Config) (_ *Fleet, err error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "vt-"
	}
	if len(cfg.Regions) == 0 {
		cfg.Regions = DefaultRegions
	}
	if cfg.EdgesPerRegion == 0 {
		cfg.EdgesPerRegion = 2
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 3 * time.Minute
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 20 * time.Second
	}
	if cfg.postgresBinDir == "" {
		cfg.postgresBinDir = PostgresBin
	}
	p := plan{prefix: cfg.Prefix, regions: cfg.Regions, edges: cfg.EdgesPerRegion}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if err := cfg.Link.Validate(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" || cfg.Binary == "" {
		return nil, fmt.Errorf("%w: Dir and Binary are required", ErrInvalid)
	}
	if err := Supported(); err != nil {
		return nil, err
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, err
	}
	if cfg.Binary, err = filepath.Abs(cfg.Binary); err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("%w: binary: %v", ErrInvalid, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.postgresBinDir, "postgres")); err != nil {
		return nil, fmt.Errorf("%w: PostgreSQL server binaries: %v", ErrUnsupported, err)
	}
	if left, _ := namespaces(p.coreNS()); len(left) > 0 {
		return nil, fmt.Errorf("%w: namespace %s (stop that fleet first: vitrine fleet down)", ErrExists, p.coreNS())
	}
	for i := range cfg.Regions {
		if _, err := os.Stat(filepath.Join(netnsDir, p.regionNS(i+1))); err == nil {
			return nil, fmt.Errorf("%w: namespace %s (stop that fleet first: vitrine fleet down)", ErrExists, p.regionNS(i+1))
		}
	}
	f := &Fleet{cfg: cfg, plan: p, logDir: filepath.Join(cfg.Dir, "logs"), tiers: map[*process]int{},
		edges: map[string][]*process{}, wires: map[string]*Wire{}, clients: map[string]*http.Client{}}
	defer func() {
		if err != nil {
			f.Down(context.WithoutCancel(ctx))
		}
	}()
	if err := f.prepareDir(); err != nil {
		return nil, err
	}
	f.progress("network: namespaces %s, wires %v", strings.Join(append([]string{p.coreNS()}, nsList(p)...), ", "), cfg.Link)
	if err := f.network(ctx); err != nil {
		return nil, err
	}
	if err := f.core(ctx); err != nil {
		return nil, err
	}
	if err := f.regions(ctx); err != nil {
		return nil, err
	}
	f.progress("fleet ready")
	return f, nil
}

func nsList(p plan) []string {
	var out []string
	for i := range p.regions {
		out = append(out, p.regionNS(i+1))
	}
	return out
}

func (f *Fleet) progress(format string, args ...any) {
	if f.cfg.Progress != nil {
		f.cfg.Progress(fmt.Sprintf(format, args...))
	}
}

// prepareDir empties the data folders and checks that PostgreSQL can reach its own.
func (f *Fleet) prepareDir() error {
	if err := os.MkdirAll(f.logDir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(f.cfg.Dir, 0o755); err != nil {
		return err
	}
	for _, d := range append([]string{coreName}, f.cfg.Regions...) {
		if err := os.RemoveAll(filepath.Join(f.cfg.Dir, d)); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(f.cfg.Dir, d), 0o755); err != nil {
			return err
		}
	}
	for d := f.cfg.Dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%w: %s is not traversable by other users: PostgreSQL (user postgres) keeps its data under %s", ErrInvalid, d, f.cfg.Dir)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// network builds the namespaces, the host links and the wires.
func (f *Fleet) network(ctx context.Context) error {
	p := f.plan
	places := len(p.regions) + 1
	for k := 0; k < places; k++ {
		if err := addNamespace(ctx, p.nsOf(k)); err != nil {
			return err
		}
	}
	// Service addresses on each namespace's loopback.
	if err := ipCmd(ctx, "-n", p.coreNS(), "addr", "add", p.coreAddr().String()+"/32", "dev", "lo"); err != nil {
		return err
	}
	for i := 1; i <= len(p.regions); i++ {
		addrs := []string{p.regionAddr(i).String()}
		for j := 1; j <= p.edges; j++ {
			addrs = append(addrs, p.edgeAddr(i, j).String())
		}
		for _, a := range addrs {
			if err := ipCmd(ctx, "-n", p.regionNS(i), "addr", "add", a+"/32", "dev", "lo"); err != nil {
				return err
			}
		}
	}
	// Host links: the host reaches every place's services directly, bypassing the wires.
	for k := 0; k < places; k++ {
		host, inside := p.hostAddrs(k)
		steps := [][]string{
			{"link", "add", p.hostVeth(k), "type", "veth", "peer", "name", hostVethInside, "netns", p.nsOf(k)},
			{"addr", "add", host.String() + "/30", "dev", p.hostVeth(k)},
			{"link", "set", p.hostVeth(k), "up"},
			{"-n", p.nsOf(k), "addr", "add", inside.String() + "/30", "dev", hostVethInside},
			{"-n", p.nsOf(k), "link", "set", hostVethInside, "up"},
			{"route", "add", p.regionNet(k), "via", inside.String(), "dev", p.hostVeth(k)},
		}
		for _, s := range steps {
			if err := ipCmd(ctx, s...); err != nil {
				return err
			}
		}
	}
	// Wires: region i reaches the core's services only through its wire.
	for i := 1; i <= len(p.regions); i++ {
		coreTAP, err := OpenTAP(p.coreNS(), p.coreTAP(i))
		if err != nil {
			return err
		}
		regionTAP, err := OpenTAP(p.regionNS(i), regionTAPName)
		if err != nil {
			coreTAP.Close()
			return err
		}
		w, err := NewWire(coreTAP, regionTAP, f.cfg.Link)
		if err != nil {
			coreTAP.Close()
			regionTAP.Close()
			return err
		}
		f.mu.Lock()
		f.wires[p.regions[i-1]] = w
		f.mu.Unlock()
		coreSide, regionSide := p.wireAddrs(i)
		steps := [][]string{
			{"-n", p.coreNS(), "addr", "add", coreSide.String() + "/30", "dev", p.coreTAP(i)},
			{"-n", p.coreNS(), "link", "set", p.coreTAP(i), "up"},
			{"-n", p.regionNS(i), "addr", "add", regionSide.String() + "/30", "dev", regionTAPName},
			{"-n", p.regionNS(i), "link", "set", regionTAPName, "up"},
			{"-n", p.coreNS(), "route", "add", p.regionNet(i), "via", regionSide.String(), "dev", p.coreTAP(i), "src", p.coreAddr().String()},
			{"-n", p.regionNS(i), "route", "add", p.regionNet(0), "via", coreSide.String(), "dev", regionTAPName, "src", p.regionAddr(i).String()},
		}
		for _, s := range steps {
			if err := ipCmd(ctx, s...); err != nil {
				return err
			}
		}
	}
	return nil
}

// core starts PostgreSQL, the hub, the relay and the origin, and seeds the demo store.
func (f *Fleet) core(ctx context.Context) error {
	p := f.plan
	ns, core := p.coreNS(), p.coreAddr().String()
	secret, edgeSecret := randomHex(32), randomHex(32)
	f.env = []string{"VITRINE_SECRET=" + secret, "VITRINE_EDGE_SECRET=" + edgeSecret, "VITRINE_NATS_INSECURE=1", "VITRINE_PAYMENTS=test"}
	st := &f.state
	st.Prefix, st.Dir, st.Binary, st.Created = f.cfg.Prefix, f.cfg.Dir, f.cfg.Binary, time.Now().UTC()
	st.Database = fmt.Sprintf("postgres://postgres@%s:%d/vitrine?sslmode=disable", core, PortPostgres)
	st.NATS = fmt.Sprintf("nats://%s:%d", core, PortNATS)
	st.Core.Namespace, st.Core.HostLink = ns, p.hostVeth(0)
	st.Origin = Endpoint{Name: "origin", Region: coreName, Namespace: ns, Addr: hostPort(core, PortOrigin), Ops: hostPort(core, PortOriginOps)}
	st.Relay = Endpoint{Name: "relay", Region: coreName, Namespace: ns, Ops: hostPort(core, PortRelayOps)}

	// PostgreSQL, as the postgres user, in a cluster of its own.
	f.progress("core: PostgreSQL (initdb)")
	pg, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("%w: user postgres: %v", ErrUnsupported, err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	pgData := filepath.Join(f.cfg.Dir, coreName, "pg")
	if err := os.MkdirAll(pgData, 0o700); err != nil {
		return err
	}
	if err := os.Chown(pgData, uid, gid); err != nil {
		return err
	}
	pgLog := filepath.Join(f.logDir, "core-postgres.log")
	if _, err := runOnce(ctx, pgLog, ns, cred, nil, filepath.Join(f.cfg.postgresBinDir, "initdb"), "-D", pgData, "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return err
	}
	conf := fmt.Sprintf("\n# vitrine fleet\nlisten_addresses = '%s'\nport = %d\nunix_socket_directories = ''\n"+
		"fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\nshared_buffers = 64MB\n", core, PortPostgres)
	if err := appendFile(filepath.Join(pgData, "postgresql.conf"), conf); err != nil {
		return err
	}
	// Trust inside the fleet's addresses (the core, the regions, the host links), like the
	// development server on 127.0.0.1.
	if err := appendFile(filepath.Join(pgData, "pg_hba.conf"), "\n# vitrine fleet\nhost all all 10.77.0.0/16 trust\n"); err != nil {
		return err
	}
	isReady := filepath.Join(f.cfg.postgresBinDir, "pg_isready")
	f.add(tierPostgres, procSpec{name: "core-postgres", ns: ns, cred: cred, stopSignal: syscall.SIGINT, stopTimeout: 30 * time.Second,
		argv: []string{filepath.Join(f.cfg.postgresBinDir, "postgres"), "-D", pgData},
		ready: func(ctx context.Context) error {
			return exec.CommandContext(ctx, "ip", "netns", "exec", ns, isReady, "-q", "-h", core, "-p", strconv.Itoa(PortPostgres)).Run()
		}})

	// The hub: JetStream domain central, a leaf node listener.
	hubConf := filepath.Join(f.cfg.Dir, coreName, "nats.conf")
	if err := os.WriteFile(hubConf, []byte(natsConf("hub", core, "central", filepath.Join(f.cfg.Dir, coreName, "nats"),
		fmt.Sprintf("leafnodes {\n  listen: %q\n  authorization { user: %q, password: %q, account: VITRINE }\n}\n",
			hostPort(core, PortLeafnodes), natsUser, natsUser))), 0o644); err != nil {
		return err
	}
	f.add(tierHub, procSpec{name: "core-nats", ns: ns, argv: []string{f.cfg.Binary, "nats", "--config", hubConf},
		ready: f.natsReady(ns, core, false)})
	if err := f.startTier(ctx, tierPostgres, "core: PostgreSQL"); err != nil {
		return err
	}
	if err := f.startTier(ctx, tierHub, "core: NATS hub"); err != nil {
		return err
	}

	common := []string{"--database-url", st.Database, "--nats-url", st.NATS}
	if _, err := f.run(ctx, "core-migrate", ns, append([]string{"migrate"}, common...)...); err != nil {
		return err
	}
	relay := f.add(tierCore, procSpec{name: "core-relay", ns: ns,
		argv:  append([]string{f.cfg.Binary, "relay", "--ops-addr", st.Relay.Ops}, common...),
		ready: f.httpReady(ns, "http://"+st.Relay.Ops+"/readyz")})
	f.progress("core: relay")
	if err := f.startAll(ctx, relay); err != nil {
		return err
	}
	// The relay creates the streams; the origin follows them.
	hubReady := f.natsReady(ns, core, true)
	if err := poll(ctx, f.cfg.ReadyTimeout, hubReady); err != nil {
		return fmt.Errorf("fleet: the relay created no stream: %w", err)
	}
	origin := f.add(tierCore, procSpec{name: "core-origin", ns: ns,
		argv:  append([]string{f.cfg.Binary, "origin", "--addr", st.Origin.Addr, "--ops-addr", st.Origin.Ops}, common...),
		ready: f.httpReady(ns, "http://"+st.Origin.Ops+"/readyz")})
	f.progress("core: origin")
	if err := f.startAll(ctx, origin); err != nil {
		return err
	}
	if f.cfg.Seed {
		return f.seed(ctx, common)
	}
	return nil
}

// seed creates the demo store and its administrator and fills its catalog.
func (f *Fleet) seed(ctx context.Context, common []string) error {
	ns := f.plan.coreNS()
	f.progress("core: seeding the demo store")
	if _, err := f.run(ctx, "core-seed", ns, append([]string{"tenant", "create", "--slug", "demo", "--name", "Demo",
		"--base-url", "http://demo.localhost", "--currencies", "USD"}, common...)...); err != nil {
		return err
	}
	out, err := f.run(ctx, "core-seed", ns, append([]string{"user", "create", "--tenant", "demo", "--login", "admin",
		"--email", "admin@demo.localhost", "--name", "Admin"}, common...)...)
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`application password \(shown once\): (.+)`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("fleet: no application password in the output of user create: %s", out)
	}
	args := append([]string{"seed", "--tenant", "demo", "--author", "admin"}, common...)
	if f.cfg.Products > 0 {
		args = append(args, "--products", strconv.Itoa(f.cfg.Products))
	}
	if f.cfg.Posts > 0 {
		args = append(args, "--posts", strconv.Itoa(f.cfg.Posts))
	}
	if _, err := f.run(ctx, "core-seed", ns, args...); err != nil {
		return err
	}
	f.mu.Lock()
	// The password is printed in chunks ("abcd efgh …"); clients send it whole.
	f.state.Tenant, f.state.AdminLogin, f.state.AdminPassword = "demo.localhost", "admin", strings.Join(strings.Fields(string(m[1])), "")
	f.mu.Unlock()
	return nil
}

// regions starts each region's leaf node, its mirror and its edges.
func (f *Fleet) regions(ctx context.Context) error {
	p := f.plan
	mirror := !f.cfg.NoMirror && hasMirror(ctx, f.cfg.Binary)
	var leaves, mirrors, edges []*process
	for i := 1; i <= len(p.regions); i++ {
		name, ns, addr := p.regions[i-1], p.regionNS(i), p.regionAddr(i).String()
		r := Region{Name: name, Namespace: ns, HostLink: p.hostVeth(i), NATS: fmt.Sprintf("nats://%s:%d", addr, PortNATS), Mirror: mirror}
		dir := filepath.Join(f.cfg.Dir, name)
		leafConf := filepath.Join(dir, "nats.conf")
		remote := fmt.Sprintf("leafnodes {\n  remotes: [\n    { url: %q, account: VITRINE }\n  ]\n}\n",
			"nats-leaf://"+natsUser+":"+natsUser+"@"+hostPort(p.coreAddr().String(), PortLeafnodes))
		if err := os.WriteFile(leafConf, []byte(natsConf("leaf-"+name, addr, name, filepath.Join(dir, "nats"), remote)), 0o644); err != nil {
			return err
		}
		leaves = append(leaves, f.add(tierLeaf, procSpec{name: name + "-nats", ns: ns, argv: []string{f.cfg.Binary, "nats", "--config", leafConf},
			ready: f.natsReady(ns, addr, false)}))
		natsArgs := []string{"--nats-url", r.NATS}
		edgeDomain := []string{"--nats-js-domain", "central"}
		if mirror {
			ops := hostPort(addr, PortMirrorOps)
			mirrors = append(mirrors, f.add(tierMirror, procSpec{name: name + "-mirror", ns: ns,
				argv:  append([]string{f.cfg.Binary, "mirror", "--domain", name, "--source-domain", "central", "--ops-addr", ops}, natsArgs...),
				ready: f.httpReady(ns, "http://"+ops+"/readyz")}))
			edgeDomain = nil // the mirrors carry the central streams' names in the region's own domain
		}
		for j := 1; j <= p.edges; j++ {
			ea := p.edgeAddr(i, j).String()
			e := Endpoint{Name: fmt.Sprintf("%s-edge-%d", name, j), Region: name, Namespace: ns, Addr: hostPort(ea, PortEdge), Ops: hostPort(ea, PortEdgeOps)}
			argv := append([]string{f.cfg.Binary, "edge", "--addr", e.Addr, "--ops-addr", e.Ops, "--origin-url", f.state.Origin.URL(),
				"--edge-name", e.Name, "--edge-region", name, "--rate-limit", "-1"}, natsArgs...)
			argv = append(append(argv, edgeDomain...), f.cfg.EdgeArgs...)
			ep := f.add(tierEdge, procSpec{name: e.Name, ns: ns, argv: argv, stopTimeout: f.cfg.StopTimeout,
				ready: f.httpReady(ns, "http://"+e.Ops+"/readyz")})
			f.mu.Lock()
			f.edges[name] = append(f.edges[name], ep)
			f.mu.Unlock()
			edges = append(edges, ep)
			r.Edges = append(r.Edges, e)
		}
		f.mu.Lock()
		f.state.Regions = append(f.state.Regions, r)
		f.mu.Unlock()
	}
	f.progress("regions: NATS leaf nodes")
	if err := f.startAll(ctx, leaves...); err != nil {
		return err
	}
	if mirror {
		f.progress("regions: mirrors")
		if err := f.startAll(ctx, mirrors...); err != nil {
			return err
		}
	} else if f.cfg.NoMirror {
		f.progress("regions: no mirrors (NoMirror): edges read the central domain through their leaf node")
	} else {
		f.progress("regions: no `vitrine mirror` in this binary: edges read the central domain through their leaf node")
	}
	f.progress("regions: %d edges", len(edges))
	return f.startAll(ctx, edges...)
}

// hasMirror reports whether the binary has `vitrine mirror` (its -h names --source-domain).
func hasMirror(ctx context.Context, binary string) bool {
	out, _ := exec.CommandContext(ctx, binary, "mirror", "-h").CombinedOutput()
	return bytes.Contains(out, []byte("source-domain"))
}

// natsConf is a nats-server configuration laid out like deploy/nats (an account VITRINE with
// JetStream, a system account, leaf connections bound to VITRINE) but without TLS or
// credentials a client must present: a client that names none is the account's user
// (no_auth_user). The fleet is a closed test bed.
func natsConf(name, addr, domain, storeDir, extra string) string {
	return fmt.Sprintf("server_name: %q\nlisten: %q\nhttp: %q\nmax_payload: 8388608\n"+
		"ping_interval: \"2s\"\nping_max: 3\n"+
		"jetstream {\n  store_dir: %q\n  domain: %s\n  max_memory_store: 268435456\n}\n"+
		"accounts {\n  VITRINE { jetstream: enabled, users: [ { user: %q, password: %q } ] }\n"+
		"  SYS { users: [ { user: \"sys\", password: %q } ] }\n}\nsystem_account: SYS\nno_auth_user: %q\n%s",
		name, hostPort(addr, PortNATS), hostPort(addr, PortNATSHTTP), storeDir, domain,
		natsUser, natsUser, natsUser, natsUser, extra)
}

// natsUser is the fleet's NATS user (and password), in account VITRINE; leaf connections use it
// too.
const natsUser = "fleet"

// add registers a process (not started) in a tier.
func (f *Fleet) add(tier int, spec procSpec) *process {
	spec.env = f.env
	if spec.stopTimeout == 0 {
		spec.stopTimeout = f.cfg.StopTimeout
	}
	pr := newProcess(f.logDir, spec)
	f.mu.Lock()
	f.procs = append(f.procs, pr)
	f.tiers[pr] = tier
	f.mu.Unlock()
	return pr
}

// startTier starts the registered processes of a tier and waits until they are ready.
func (f *Fleet) startTier(ctx context.Context, tier int, msg string) error {
	f.progress("%s", msg)
	var ps []*process
	f.mu.Lock()
	for _, pr := range f.procs {
		if f.tiers[pr] == tier {
			ps = append(ps, pr)
		}
	}
	f.mu.Unlock()
	return f.startAll(ctx, ps...)
}

// startAll starts processes and waits until all are ready.
func (f *Fleet) startAll(ctx context.Context, ps ...*process) error {
	for _, pr := range ps {
		if err := pr.start(); err != nil {
			return err
		}
	}
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, pr := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = pr.waitReady(ctx, f.cfg.ReadyTimeout)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run runs a vitrine command to completion in a namespace, logging to <name>.log.
func (f *Fleet) run(ctx context.Context, name, ns string, args ...string) ([]byte, error) {
	return runOnce(ctx, filepath.Join(f.logDir, name+".log"), ns, nil, f.env, append([]string{f.cfg.Binary}, args...)...)
}

// httpReady is a probe passing when url, fetched inside ns, answers 200.
func (f *Fleet) httpReady(ns, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		status, body, err := f.get(ctx, ns, url)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			if len(body) > 600 {
				body = append(body[:600:600], "…"...)
			}
			return fmt.Errorf("%s: status %d: %s", url, status, bytes.TrimSpace(body))
		}
		return nil
	}
}

// natsReady is a probe of a nats-server's monitoring port: /healthz answers 200 and, for a
// leaf node (listening on a region's address), its leaf connection is up; with streams, the
// hub holds at least one stream.
func (f *Fleet) natsReady(ns, addr string, streams bool) func(context.Context) error {
	base := "http://" + hostPort(addr, PortNATSHTTP)
	leaf := addr != f.plan.coreAddr().String()
	return func(ctx context.Context) error {
		if err := f.httpReady(ns, base+"/healthz")(ctx); err != nil {
			return err
		}
		if leaf {
			_, body, err := f.get(ctx, ns, base+"/leafz")
			var lz struct {
				Leafs int `json:"leafnodes"`
			}
			if err == nil {
				err = json.Unmarshal(body, &lz)
			}
			if err != nil || lz.Leafs == 0 {
				return fmt.Errorf("leaf node not connected to the hub (%v)", err)
			}
		}
		if streams {
			_, body, err := f.get(ctx, ns, base+"/jsz")
			var jz struct {
				Streams int `json:"streams"`
			}
			if err == nil {
				err = json.Unmarshal(body, &jz)
			}
			if err != nil || jz.Streams == 0 {
				return fmt.Errorf("no stream yet (%v)", err)
			}
		}
		return nil
	}
}

// get fetches url from inside a namespace.
func (f *Fleet) get(ctx context.Context, ns, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := f.clientIn(ns).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// poll calls probe every 100 ms until it passes or timeout passes.
func poll(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := probe(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Namespace returns the network namespace of a place, which names where a client runs: "" the
// host (whose namespace is returned as ""), "core" the core, else a region's name.
func (f *Fleet) Namespace(place string) (string, error) {
	if place == "" {
		return "", nil
	}
	if place == coreName {
		return f.plan.coreNS(), nil
	}
	for i, r := range f.plan.regions {
		if r == place {
			return f.plan.regionNS(i + 1), nil
		}
	}
	return "", fmt.Errorf("%w: place %q", ErrNotFound, place)
}

// DialContext opens a connection from a place ("" the host, "core", a region): a load
// generator in a region dials its edges this way. Each new connection costs a thread switch
// into the namespace (tens of microseconds): keep connections alive.
func (f *Fleet) DialContext(ctx context.Context, place, network, addr string) (net.Conn, error) {
	ns, err := f.Namespace(place)
	if err != nil {
		return nil, err
	}
	return DialIn(ctx, ns, network, addr)
}

// HTTPClient returns an HTTP client whose connections are opened from a place ("" the host,
// "core", a region), shared by the fleet's callers.
func (f *Fleet) HTTPClient(place string) (*http.Client, error) {
	ns, err := f.Namespace(place)
	if err != nil {
		return nil, err
	}
	return f.clientIn(ns), nil
}

func (f *Fleet) clientIn(ns string) *http.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clients[ns]; c != nil {
		return c
	}
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return DialIn(ctx, ns, network, addr)
		},
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}}
	f.clients[ns] = c
	return c
}

// State returns what the fleet is made of.
func (f *Fleet) State() State {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.state
	s.Regions = append([]Region(nil), s.Regions...)
	return s
}

// MarkReady records the process that owns the fleet (its supervisor) and that the fleet is
// ready: State carries both from then on.
func (f *Fleet) MarkReady(owner int) {
	f.mu.Lock()
	f.state.Supervisor, f.state.Ready = owner, true
	f.mu.Unlock()
}

// Regions returns the regions' names.
func (f *Fleet) Regions() []string { return append([]string(nil), f.plan.regions...) }

// Origin returns the origin's endpoint, reachable from the core, every region (through its
// wire) and the host.
func (f *Fleet) Origin() Endpoint { return f.State().Origin }

// Edges returns a region's edges, reachable from inside the region, from the host (through the
// region's host link) and from the core (through the wire), never from another region.
func (f *Fleet) Edges(region string) ([]Endpoint, error) {
	for _, r := range f.State().Regions {
		if r.Name == region {
			return append([]Endpoint(nil), r.Edges...), nil
		}
	}
	return nil, fmt.Errorf("%w: region %q", ErrNotFound, region)
}

func (f *Fleet) wire(region string) (*Wire, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.wires[region]
	if w == nil {
		return nil, fmt.Errorf("%w: region %q", ErrNotFound, region)
	}
	return w, nil
}

// The directions of a region's wire.
const (
	ToRegion = AtoB // core → region
	ToCore   = BtoA // region → core
)

// SetLink sets both directions of a region's wire.
func (f *Fleet) SetLink(region string, l Link) error {
	w, err := f.wire(region)
	if err != nil {
		return err
	}
	if err := w.SetLink(ToRegion, l); err != nil {
		return err
	}
	return w.SetLink(ToCore, l)
}

// SetLinkDirection sets one direction of a region's wire (ToRegion or ToCore).
func (f *Fleet) SetLinkDirection(region string, d Direction, l Link) error {
	w, err := f.wire(region)
	if err != nil {
		return err
	}
	return w.SetLink(d, l)
}

// Partition cuts a region off from the core (on) or reconnects it: every frame on its wire is
// dropped, both ways, those in flight included. The region's host link stays up: its local
// clients still reach its edges.
func (f *Fleet) Partition(region string, on bool) error {
	w, err := f.wire(region)
	if err != nil {
		return err
	}
	w.SetPartition(ToRegion, on)
	w.SetPartition(ToCore, on)
	return nil
}

// LaneStatus is one direction of a wire.
type LaneStatus struct {
	Link        Link     `json:"link"`
	Partitioned bool     `json:"partitioned"`
	Counters    Counters `json:"counters"`
}

// LinkStatus is a region's wire, both directions.
type LinkStatus struct {
	Region   string     `json:"region"`
	ToRegion LaneStatus `json:"to_region"`
	ToCore   LaneStatus `json:"to_core"`
}

// Link returns a region's wire: settings and counters.
func (f *Fleet) Link(region string) (LinkStatus, error) {
	w, err := f.wire(region)
	if err != nil {
		return LinkStatus{}, err
	}
	lane := func(d Direction) LaneStatus {
		return LaneStatus{Link: w.Link(d), Partitioned: w.Partitioned(d), Counters: w.Counters(d)}
	}
	return LinkStatus{Region: region, ToRegion: lane(ToRegion), ToCore: lane(ToCore)}, nil
}

// Status is a fleet's state, processes and links.
type Status struct {
	State     State           `json:"state"`
	Processes []ProcessStatus `json:"processes"`
	Links     []LinkStatus    `json:"links"`
}

// Status returns the fleet's state, its processes (readiness probed now, up to a second each,
// in parallel) and links.
func (f *Fleet) Status() Status {
	s := Status{State: f.State()}
	f.mu.Lock()
	procs := append([]*process(nil), f.procs...)
	f.mu.Unlock()
	s.Processes = make([]ProcessStatus, len(procs))
	var wg sync.WaitGroup
	for i, pr := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := pr.status()
			if ps.Running && pr.spec.ready != nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				ps.Ready = pr.spec.ready(ctx) == nil
				cancel()
			}
			s.Processes[i] = ps
		}()
	}
	wg.Wait()
	for _, r := range f.plan.regions {
		if ls, err := f.Link(r); err == nil {
			s.Links = append(s.Links, ls)
		}
	}
	return s
}

// RestartEdge stops edge i (1-based) of a region with SIGTERM (it drains), starts it again and
// waits until it is ready.
func (f *Fleet) RestartEdge(ctx context.Context, region string, i int) error {
	f.mu.Lock()
	es := f.edges[region]
	f.mu.Unlock()
	if i < 1 || i > len(es) {
		return fmt.Errorf("%w: edge %d of region %q", ErrNotFound, i, region)
	}
	pr := es[i-1]
	pr.stop()
	if err := pr.start(); err != nil {
		return err
	}
	return pr.waitReady(ctx, f.cfg.ReadyTimeout)
}

// Down stops every process (edges first, PostgreSQL last; SIGTERM, SIGKILL after the stop
// timeout), closes the wires and removes the namespaces and host links. Calling it again does
// nothing.
func (f *Fleet) Down(ctx context.Context) error {
	f.mu.Lock()
	if f.down {
		f.mu.Unlock()
		return nil
	}
	f.down = true
	procs := append([]*process(nil), f.procs...)
	tiers := make(map[*process]int, len(f.tiers))
	for pr, t := range f.tiers {
		tiers[pr] = t
	}
	wires := f.wires
	f.wires = map[string]*Wire{}
	f.mu.Unlock()
	f.progress("stopping %d processes", len(procs))
	for tier := tierEdge; tier >= tierPostgres; tier-- {
		var wg sync.WaitGroup
		var names []string
		start := time.Now()
		for _, pr := range procs {
			if tiers[pr] != tier {
				continue
			}
			names = append(names, pr.spec.name)
			wg.Add(1)
			go func() { defer wg.Done(); pr.stop() }()
		}
		wg.Wait()
		if len(names) > 0 {
			f.progress("stopped %s in %v", strings.Join(names, ", "), time.Since(start).Round(time.Millisecond))
		}
	}
	var errs []error
	for _, w := range wires {
		w.Close()
	}
	f.mu.Lock()
	for _, c := range f.clients {
		c.CloseIdleConnections()
	}
	f.mu.Unlock()
	if _, err := Cleanup(ctx, f.cfg.Prefix, 5*time.Second); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func appendFile(path, s string) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = fh.WriteString(s)
	return errors.Join(err, fh.Close())
}
