package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/edge/outbound"
	"vitrine/edge/replica"
	"vitrine/origin"
	"vitrine/origin/fulfil"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/origin/webhooks"
	"vitrine/schema"
	"vitrine/sync/blob"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

// TestMain lets the test binary run as the vitrine command: system tests start relays as real
// processes (to kill and freeze them) by re-executing themselves with VITRINE_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("VITRINE_TEST_MAIN") == "1" {
		ctx, stop := signalContext()
		defer stop()
		if err := run(ctx, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "vitrine:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() { <-ch; cancel() }()
	return ctx, cancel
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// system is a whole Vitrine deployment inside a test: a fresh database, an embedded
// nats-server, an origin, relays (in-process or as processes) and edges. Nothing is shared
// between systems (databases, NATS servers, ports, directories are each system's own), so tests
// that start one may run in parallel: the long ones that mostly wait (browsers, clients,
// multi-step flows) do, two at a time on two cores, while those that measure time do not.
type system struct {
	t   *testing.T
	dsn string
	db  *store.DB
	ns  *natstest.Server
	fc  feed.Config
	key []byte
	// workAckWait: see systemOptions.
	workAckWait time.Duration
	edgeSecret  string
	log         *slog.Logger

	mu         sync.Mutex
	localRelay *relay.Relay
	wakeConn   *nats.Conn

	origin     *component
	originAddr string
	// originConfig is the base configuration of origins the system starts.
	originConfig origin.Config
	// media is the blob store of media files every origin and edge of the system shares (a
	// directory, as processes of one machine share), unless their configuration names another.
	media blob.Store
	// webhooks, when set, makes every origin the system starts run a webhook dispatcher.
	webhooks *webhooks.Config
	// retries counts the store's transaction retries.
	retries  atomic.Int64
	replicas []*component // components with a replica, to wait for new tenants
}

// mediaStore returns the system's shared media blob store, made on first use.
func (s *system) mediaStore() blob.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.media == nil {
		fs, err := blob.NewFS(s.t.TempDir())
		if err != nil {
			s.t.Fatal(err)
		}
		s.media = fs
	}
	return s.media
}

// component is a running part of the system.
type component struct {
	name   string
	addr   string
	rep    *replica.Replica
	fol    *feed.Follower
	relay  *relay.Relay
	edge   *edge.Server
	origin *origin.Server
	cancel context.CancelFunc
	done   chan struct{}
	cmd    *exec.Cmd
}

type systemOptions struct {
	// workAckWait is how long an origin's unacknowledged work waits before another takes it
	// (default 2s here).
	workAckWait time.Duration
	dedup       time.Duration
}

func newSystem(t *testing.T, opt systemOptions) *system {
	t.Helper()
	if opt.workAckWait == 0 {
		opt.workAckWait = 2 * time.Second
	}
	s := &system{t: t, ns: natstest.Run(t), workAckWait: opt.workAckWait, key: []byte("0123456789abcdef0123456789abcdef"), edgeSecret: "test-edge-secret-0123456789abcdef", log: testLogger(t)}
	s.fc = feed.Config{DedupWindow: opt.dedup}.WithDefaults()
	s.wakeConn = s.ns.Connect(t)
	s.dsn = storetest.NewMigratedDatabase(t)
	s.openDB()
	return s
}

func (s *system) openDB() {
	db, err := store.Open(context.Background(), s.dsn, store.Config{OnRetry: func() { s.retries.Add(1) }, OnCommit: func([]store.LogCommit) {
		s.mu.Lock()
		r := s.localRelay
		s.mu.Unlock()
		if r != nil {
			r.Wake()
		}
		s.wakeConn.Publish(s.fc.WakeSubject(), nil)
	}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(db.Close)
	if err := db.Migrate(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	s.db = db
}

func (s *system) connect() *nats.Conn {
	nc, err := nats.Connect(s.ns.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		s.t.Fatal(err)
	}
	return nc
}

func (s *system) follow(ctx context.Context, nc *nats.Conn, filters []string, rc replica.Config) (*replica.Replica, *feed.Follower) {
	rc.Logger = s.log
	rep := replica.New(rc)
	fol, err := feed.NewFollower(nc, s.fc, filters, rep, s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	fol.Watch = 100 * time.Millisecond
	go fol.Run(ctx)
	return rep, fol
}

// startRelay runs a relay in the test process.
func (s *system) startRelay(cfg relay.Config) *component {
	ctx, cancel := context.WithCancel(context.Background())
	nc := s.connect()
	cfg.Feed, cfg.Logger = s.fc, s.log
	if cfg.Poll == 0 {
		cfg.Poll = 20 * time.Millisecond
	}
	r, err := relay.New(s.db, nc, cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	c := &component{name: "relay", relay: r, cancel: cancel, done: make(chan struct{})}
	go func() { r.Run(ctx); nc.Close(); close(c.done) }()
	s.mu.Lock()
	s.localRelay = r
	s.mu.Unlock()
	s.t.Cleanup(c.stop)
	return c
}

// startRelayProcess runs `vitrine relay` as a separate process.
func (s *system) startRelayProcess(args ...string) *component {
	env := []string{"VITRINE_DATABASE_URL=" + s.dsn, "VITRINE_NATS_URL=" + s.ns.URL(), "VITRINE_LOG_LEVEL=" + relayLogLevel()}
	if s.fc.DedupWindow > 0 {
		env = append(env, "VITRINE_DEDUP_WINDOW="+s.fc.DedupWindow.String())
	}
	return s.startProcess(env, append([]string{"relay", "--ops-addr", "off", "--poll", "20ms"}, args...)...)
}

// startProcess runs the vitrine command (this test binary, see TestMain) with env and args.
func (s *system) startProcess(env []string, args ...string) *component {
	cmd := exec.Command(os.Args[0], args...)
	// The test nats-server has no users: processes connect bare, which outside `vitrine dev`
	// takes an explicit --nats-insecure (natsauth_test.go runs them with credentials and TLS).
	// No drain delay (`vitrine edge` and `origin` default to 5s behind a load balancer) unless a
	// test asks for one: env and flags given override it.
	cmd.Env = append(append(os.Environ(), "VITRINE_TEST_MAIN=1", "VITRINE_NATS_INSECURE=1", "VITRINE_PAYMENTS="+paymentsTest, "VITRINE_DRAIN_DELAY=0s"), env...)
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	c := &component{name: "vitrine " + args[0], cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(c.done) }()
	s.t.Cleanup(c.kill)
	return c
}

func (c *component) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.edge != nil {
		c.edge.Close()
	}
	<-c.done
}

// kill ends a process without letting it clean up (SIGKILL).
func (c *component) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGCONT)
		c.cmd.Process.Kill()
		<-c.done
	}
}

func (c *component) signal(sig syscall.Signal) {
	if err := c.cmd.Process.Signal(sig); err != nil {
		panic(err)
	}
}

// startOrigin runs the origin on a loopback port (the same port across restarts).
func (s *system) startOrigin() *component {
	ctx, cancel := context.WithCancel(context.Background())
	nc := s.connect()
	rep, fol := s.follow(ctx, nc, s.fc.AllFilters(), replica.Config{PlatformDomain: "vitrine.test", Private: true})
	cfg := s.originConfig
	cfg.Secret, cfg.Logger, cfg.WriteWait = s.key, s.log, 500*time.Millisecond
	cfg.SiteHealth.NATS, cfg.SiteHealth.Feed, cfg.SiteHealth.Follower = nc, s.fc, fol
	if cfg.EdgeSecrets == nil {
		cfg.EdgeSecrets = []string{s.edgeSecret}
	}
	if cfg.Payments == nil {
		cfg.Payments = testPayments(s.db)
	}
	if cfg.Media.Blobs == nil {
		cfg.Media.Blobs = s.mediaStore()
	}
	// A minute per API call, not the library's five seconds: the embedded server's file store
	// stalls for seconds under a cold -race build of the whole suite.
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(time.Minute))
	if err != nil {
		s.t.Fatal(err)
	}
	if cfg.LabelQueue, err = fulfil.NewQueue(ctx, js, s.fc.WorkStream, s.fc.LabelWorkSubject(), s.workAckWait, s.fc.Replicas); err != nil {
		s.t.Fatal(err)
	}
	if s.webhooks != nil {
		client := outbound.New(outbound.Config{Timeout: s.webhooks.Timeout})
		if cfg.Webhooks, err = webhooks.NewDispatcher(*s.webhooks, s.db, js, s.fc, client, s.key, s.log, nil); err != nil {
			s.t.Fatal(err)
		}
	}
	srv := origin.New(cfg, s.db, rep)
	go srv.RunWork(ctx)
	addr := s.originAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.originAddr = ln.Addr().String()
	hs := srv.HTTPServer()
	c := &component{name: "origin", addr: s.originAddr, rep: rep, fol: fol, origin: srv, cancel: cancel, done: make(chan struct{})}
	go func() { hs.Serve(ln); close(c.done) }()
	go func() { <-ctx.Done(); hs.Shutdown(); nc.Close() }()
	s.origin = c
	s.replicas = append(s.replicas, c)
	s.t.Cleanup(c.stop)
	return c
}

// startEdge runs an edge on a loopback port.
func (s *system) startEdge(cfg edge.Config) *component {
	ctx, cancel := context.WithCancel(context.Background())
	nc := s.connect()
	rep, fol := s.follow(ctx, nc, s.fc.PublicFilters(nil), replica.Config{PlatformDomain: "vitrine.test"})
	if s.originAddr == "" {
		s.originAddr = freeAddr(s.t)
	}
	cfg.Origin, cfg.Logger = "http://"+s.originAddr, s.log
	if cfg.Blobs == nil {
		cfg.Blobs = s.mediaStore()
	}
	if cfg.EdgeSecret == "" {
		cfg.EdgeSecret = s.edgeSecret
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = -1
	}
	srv, err := edge.New(cfg, rep)
	if err != nil {
		s.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	go srv.AnswerProbes(ctx, nc, edge.ProbeConfig{Subject: schema.LagProbeSubject(s.fc.Prefix), Name: "edge " + ln.Addr().String()})
	hs := srv.HTTPServer()
	c := &component{name: "edge", addr: ln.Addr().String(), rep: rep, fol: fol, edge: srv, cancel: cancel, done: make(chan struct{})}
	go func() { hs.Serve(ln); close(c.done) }()
	go func() { <-ctx.Done(); hs.Shutdown(); nc.Close() }()
	s.replicas = append(s.replicas, c)
	s.t.Cleanup(c.stop)
	return c
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// tenant creates a tenant with an administrator and returns the admin's application password.
func (s *system) tenant(slug string) (*schema.Tenant, string) {
	s.t.Helper()
	ctx := context.Background()
	tn := &schema.Tenant{Slug: slug, Name: "Store " + slug, BaseURL: "https://" + slug + ".shop.example", Timezone: "UTC",
		Currencies: []string{"USD"}, Domains: []string{slug + ".example.test"}}
	if err := s.db.CreateTenant(ctx, tn); err != nil {
		s.t.Fatal(err)
	}
	u := &schema.User{Login: "admin", Email: "admin@" + slug + ".example", Role: schema.RoleAdministrator}
	if err := s.db.CreateUser(ctx, tn, u); err != nil {
		s.t.Fatal(err)
	}
	pw := schema.NewAppPassword()
	if _, err := s.db.CreateAppPassword(ctx, tn, u.ID, "tests", schema.HashAppPassword(s.key, pw)); err != nil {
		s.t.Fatal(err)
	}
	if err := s.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreateCurrency(ctx, tn, &schema.Currency{Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"})
	}); err != nil {
		s.t.Fatal(err)
	}
	// The tenant is served once every running replica has had its first checkpoint of it.
	for _, c := range s.replicas {
		select {
		case <-c.done:
			continue
		default:
		}
		waitFor(s.t, 10*time.Second, c.name+" to serve "+slug, func() bool {
			r := c.rep.TenantBySlug(slug)
			return r != nil && r.Ready()
		})
	}
	return tn, pw
}

// response is an HTTP answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body is not a JSON object: %s", r.status, r.body)
	}
	return m
}

var httpClient = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

// tryCall sends a request without failing the test on transport errors (servers starting up).
func tryCall(method, addr, host, uri string) (*response, error) {
	req, err := http.NewRequest(method, "http://"+addr+uri, nil)
	if err != nil {
		return nil, err
	}
	req.Host = host
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// call sends a request to addr with the tenant's host name; a body without a Content-Type
// header is sent as JSON.
func call(t testing.TB, method, addr, host, uri, body string, headers ...string) *response {
	t.Helper()
	return send(t, true, method, addr, host, uri, body, headers...)
}

// rawCall is call with exactly the headers given: for form, text and untyped bodies.
func rawCall(t testing.TB, method, addr, host, uri, body string, headers ...string) *response {
	t.Helper()
	return send(t, false, method, addr, host, uri, body, headers...)
}

// send is call and rawCall (an empty body is no body: http.NewRequest makes it http.NoBody).
// Commerce answers go through the OpenAPI check.
func send(t testing.TB, jsonBody bool, method, addr, host, uri, body string, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+uri, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if jsonBody && body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, uri, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := &response{status: resp.StatusCode, header: resp.Header, body: b}
	commerceAnswers.check(t, req, out)
	return out
}

// callEarlyAnswer sends a request over a raw connection, ignoring write errors, and reads the
// response: for servers that answer (413) and close before the body is fully sent.
func callEarlyAnswer(t testing.TB, method, addr, host, uri, body string, headers ...string) *response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest(method, "http://"+addr+uri, strings.NewReader(body))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	go req.Write(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, uri, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

func basic(login, password string) string {
	return "Basic " + b64(login+":"+password)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// converged waits until a replica holds every log at the database's version, then compares
// digests of the visibilities it holds.
func (s *system) converged(c *component, vis []schema.Visibility, slugs ...string) {
	s.t.Helper()
	ctx := context.Background()
	for _, slug := range slugs {
		log, err := s.db.LogBySlug(ctx, slug)
		if err != nil {
			s.t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			tn := c.rep.TenantBySlug(slug)
			if tn != nil && tn.Ready() && tn.Version() >= log.Version {
				break
			}
			if time.Now().After(deadline) {
				state := "unknown tenant"
				if tn != nil {
					state = fmt.Sprintf("ready %v, version %d, seen %d", tn.Ready(), tn.Version(), tn.Seen())
				}
				s.t.Fatalf("%s never reached %s@%d: %s; follower %+v; stream: %s", c.name, slug, log.Version, state, c.fol.Stats(), s.streamState(slug))
			}
			time.Sleep(10 * time.Millisecond)
		}
		want, err := s.db.Digest(ctx, log, vis...)
		if err != nil {
			s.t.Fatal(err)
		}
		got := c.rep.TenantBySlug(slug).Snapshot().Digest(slug, vis...)
		if got.Sum() != want.Sum() {
			s.t.Fatalf("%s replica of %s at version %d differs from the database at %d (%d vs %d states):\n%s\nfollower %+v; stream: %s", c.name, slug,
				c.rep.TenantBySlug(slug).Version(), log.Version, got.Len(), want.Len(),
				strings.Join(s.explainDiff(got.Diff(want, 20)), "\n"), c.fol.Stats(), s.streamState(slug))
		}
	}
}

// explainDiff adds to each line of a digest difference what the stream holds on the entity's
// subject: missing from the stream means the relay lost it, present means the replica did.
func (s *system) explainDiff(lines []string) []string {
	nc := s.connect()
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	st, err := js.Stream(ctx, s.fc.Stream)
	if err != nil {
		return append(lines, "stream: "+err.Error())
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		// "+ alpha/pub/product/129:hash"
		key, _, _ := strings.Cut(strings.TrimLeft(l, "+- "), ":")
		parts := strings.Split(key, "/")
		if len(parts) != 4 {
			out = append(out, l)
			continue
		}
		subj := s.fc.Subject(0, parts[0], parts[1]+"."+parts[2]+"."+parts[3])
		msg, err := st.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			out = append(out, l+"  stream: "+err.Error())
			continue
		}
		ch, err := schema.DecodeChange(msg.Data)
		if err != nil {
			out = append(out, l+"  stream: undecodable")
			continue
		}
		out = append(out, fmt.Sprintf("%s  stream: seq %d version %d (txn %d-%d) deleted %v", l, msg.Sequence, ch.Version, ch.TxnFirst, ch.TxnLast, ch.Deleted))
	}
	return out
}

// streamState describes a log's head in the stream, for failure messages.
func (s *system) streamState(slug string) string {
	nc := s.connect()
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	st, err := js.Stream(ctx, s.fc.Stream)
	if err != nil {
		return err.Error()
	}
	info, _ := st.Info(ctx)
	msg, err := st.GetLastMsgForSubject(ctx, s.fc.HeadSubject(0, slug))
	if err != nil {
		return fmt.Sprintf("last seq %d, head: %v", info.State.LastSeq, err)
	}
	c, _ := schema.DecodeChange(msg.Data)
	l, _ := s.db.Lease(ctx, "relay")
	return fmt.Sprintf("last seq %d, head of %s at seq %d version %d; lease %+v", info.State.LastSeq, slug, msg.Sequence, c.Version, l)
}
