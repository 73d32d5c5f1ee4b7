package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/edge"
	"vitrine/edge/outbound"
	"vitrine/edge/pipeline"
	"vitrine/edge/replica"
	"vitrine/origin"
	"vitrine/origin/fulfil"
	"vitrine/origin/media"
	"vitrine/origin/oembed"
	"vitrine/origin/sitehealth"
	"vitrine/origin/store"
	"vitrine/origin/webhooks"
	"vitrine/sync/blob"
	"vitrine/sync/feed"
	"vitrine/sync/natsembed"
	"vitrine/sync/relay"

	"vitrine/schema"
)

// group runs goroutines and waits for them; the first error cancels the others.
type group struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
}

func newGroup(ctx context.Context) (*group, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &group{cancel: cancel}, ctx
}

func (g *group) Go(name string, f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = fmt.Errorf("%s: %w", name, err)
			}
			g.mu.Unlock()
			g.cancel()
		}
	}()
}

func (g *group) Wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}

// followStream starts a replica following the state stream with the given filters; opts
// configure the follower before it starts (edgeSnapshots).
func followStream(g *group, ctx context.Context, nc *nats.Conn, fc feed.Config, filters []string, rc replica.Config, log *slog.Logger, opts ...func(*feed.Follower)) (*replica.Replica, *feed.Follower, error) {
	rc.Logger = log
	rep := replica.New(rc)
	fol, err := feed.NewFollower(nc, fc, filters, rep, log.With("component", "follower"))
	if err != nil {
		return nil, nil, err
	}
	for _, o := range opts {
		o(fol)
	}
	g.Go("follower", func() error { return fol.Run(ctx) })
	return rep, fol, nil
}

// credentialTTL declares --credential-ttl of a command that runs an origin; its value is
// store.Config.CredentialTTL (off when 0, see storeCredentialTTL).
func (f flags) credentialTTL() *time.Duration {
	return f.Duration("credential-ttl", "VITRINE_CREDENTIAL_TTL", store.DefaultCredentialTTL,
		"how long a verified application password is trusted without asking the database again: another origin's revocation reaches this one over NATS at once, and takes effect here after this at the latest (0: ask on every request)")
}

// storeCredentialTTL maps --credential-ttl to store.Config.CredentialTTL, where 0 is the default.
func storeCredentialTTL(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("--credential-ttl must be 0 (off) or a positive duration, not %v", d)
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// tellCredentialChanges returns the store's OnCredentialsChange: it tells the other origins
// sharing the database which tenants' users or application passwords changed (a core NATS
// message; what it does not reach expires after their credential TTL).
func tellCredentialChanges(nc *nats.Conn, fc feed.Config) func([]string) {
	return func(tenantIDs []string) {
		nc.Publish(fc.CredentialsSubject(), []byte(strings.Join(tenantIDs, "\n")))
	}
}

// hearCredentialChanges makes db forget the credentials of the tenants other origins changed.
func hearCredentialChanges(nc *nats.Conn, fc feed.Config, db *store.DB) (*nats.Subscription, error) {
	return nc.Subscribe(fc.CredentialsSubject(), func(m *nats.Msg) {
		db.ForgetCredentials(strings.Split(string(m.Data), "\n")...)
	})
}

// wakeRelays returns the store's commit hook: it wakes a relay in this process, and relays in
// other processes through a core NATS hint naming the logs the commit took versions of (one per
// line), so that a relay publishes them without scanning the outbox (relay.WakeLogs).
func wakeRelays(nc *nats.Conn, fc feed.Config, local func() *relay.Relay) func([]store.LogCommit) {
	return func(commits []store.LogCommit) {
		names := make([]string, len(commits))
		for i, c := range commits {
			names[i] = c.Log
		}
		if r := local(); r != nil {
			r.WakeLogs(names)
		}
		if nc != nil {
			nc.Publish(fc.WakeSubject(), []byte(strings.Join(names, "\n")))
		}
	}
}

func runNATS(ctx context.Context, args []string) error {
	f := newFlags("nats")
	addr := f.String("addr", "VITRINE_NATS_ADDR", defaultNATSAddr, "client listen address (with --config: overrides the file's listen)")
	dir := f.String("store-dir", "VITRINE_NATS_STORE_DIR", filepath.Join(".vitrine", "nats"), "JetStream storage directory (with --config: when the file names none)")
	config := f.String("config", "VITRINE_NATS_CONFIG", "", "nats-server configuration file (accounts, permissions, TLS, leaf nodes: see deploy/nats)")
	verbose := f.FlagSet.Bool("log", false, "print the server's own log")
	if err := f.Parse(args); err != nil {
		return err
	}
	o := natsembed.Options{Addr: *addr, StoreDir: *dir, Log: *verbose, ConfigFile: *config}
	if *config != "" {
		// The file's listen address stands unless one was named explicitly.
		_, fromEnv := env("VITRINE_NATS_ADDR")
		named := fromEnv
		f.Visit(func(fl *flag.Flag) { named = named || fl.Name == "addr" })
		if !named {
			o.Addr = ""
		}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	s, err := natsembed.Start(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "nats-server %s listening on %s (JetStream %v, store %s)\n", server.VERSION, s.ClientURL(), s.JetStreamEnabled(), s.StoreDir())
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

func runOrigin(ctx context.Context, args []string) error {
	f := newFlags("origin")
	c := f.common()
	addr := f.String("addr", "VITRINE_ORIGIN_ADDR", "127.0.0.1:8081", "listen address")
	accessLog := f.accessLog()
	ops := f.String("ops-addr", "VITRINE_OPS_ADDR", "127.0.0.1:9091", "address of /metrics, /healthz, /readyz (off to disable)")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret keying application password hashes (64 hex digits)")
	edgeSecret := f.Secret("edge-secret", "VITRINE_EDGE_SECRET", "secret edges present; their client address is trusted (required, at least 32 characters)")
	edgePrevious := f.Secret("edge-secret-previous", "VITRINE_EDGE_SECRET_PREVIOUS", "the edge secret being rotated out, still accepted until every edge presents the new one")
	credentialTTL := f.credentialTTL()
	workAckWait := f.Duration("work-ack-wait", "VITRINE_WORK_ACK_WAIT", time.Minute, "how long an origin's unfinished label-batch order waits before another origin takes it")
	whWorkers := f.Int("webhook-workers", "VITRINE_WEBHOOK_WORKERS", 32, "webhook deliveries in flight in this origin")
	whPerEndpoint := f.Int("webhook-per-endpoint", "VITRINE_WEBHOOK_PER_ENDPOINT", 4, "webhook deliveries in flight to one endpoint, across origins")
	whTimeout := f.Duration("webhook-timeout", "VITRINE_WEBHOOK_TIMEOUT", 10*time.Second, "bound of one webhook delivery attempt")
	whAckWait := f.Duration("webhook-ack-wait", "VITRINE_WEBHOOK_ACK_WAIT", 30*time.Second, "how long an event taken by an origin that stopped waits before another origin takes it")
	platformDomain := f.String("platform-domain", "VITRINE_PLATFORM_DOMAIN", "localhost", "tenants resolve as <slug>.<platform-domain>")
	pay := f.payments("")
	mf := f.media("nats")
	hf := f.siteHealth()
	df := f.drain()
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := pay.check(); err != nil {
		return err
	}
	key, err := parseSecret(*secret)
	if err != nil {
		return err
	}
	edgeSecrets, err := originEdgeSecrets(*edgeSecret, *edgePrevious)
	if err != nil {
		return err
	}
	log := c.logger("origin")
	alw, closeAccess, err := openAccessLog(*accessLog)
	if err != nil {
		return err
	}
	defer closeAccess()
	nc, err := c.dialNATS("vitrine-origin", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	set := metrics.NewSet()
	retries := set.NewCounter("vitrine_store_tx_retries_total")
	grouped := set.NewCounter("vitrine_store_grouped_writes_total")
	fc := c.feed()
	credTTL, err := storeCredentialTTL(*credentialTTL)
	if err != nil {
		return err
	}
	db, err := c.openDB(ctx, false, store.Config{OnRetry: retries.Inc, OnGroup: func(n int) { grouped.Add(n) }, OnTx: txTimer(set),
		OnCommit: wakeRelays(nc, fc, func() *relay.Relay { return nil }), CredentialTTL: credTTL, OnCredentialsChange: tellCredentialChanges(nc, fc)})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := hearCredentialChanges(nc, fc, db); err != nil {
		return err
	}
	if _, err := db.Epoch(ctx); err != nil {
		return err
	}
	g, gctx, serving := drainGroup(ctx)
	rep, fol, err := followStream(g, gctx, nc, fc, fc.AllFilters(), replica.Config{PlatformDomain: *platformDomain, Private: true}, log)
	if err != nil {
		return err
	}
	queue, err := labelQueue(gctx, nc, fc, *workAckWait)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	client := outbound.New(outbound.Config{UserAgent: outboundUserAgent})
	hooks, err := webhookDispatcher(nc, fc, db, key, webhooks.Config{Workers: *whWorkers, PerEndpoint: *whPerEndpoint, Timeout: *whTimeout, AckWait: *whAckWait}, client, log, set)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	payments, err := pay.provider(db, log)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	mediaStore, err := openMediaStore(gctx, *mf.store, *mf.bucket, nc, c.feed(), true)
	if err != nil {
		g.cancel()
		g.Wait()
		return fmt.Errorf("media store: %w", err)
	}
	srv := origin.New(origin.Config{Secret: key, EdgeSecrets: edgeSecrets, Logger: log, Metrics: set, LabelQueue: queue, Webhooks: hooks, Payments: payments,
		Media: media.Config{Blobs: mediaStore, MaxUploadBytes: *mf.maxUpload}, OEmbed: oembed.Config{Client: client},
		SiteHealth: hf.config(nc, fc, fol)}, db, rep)
	observe(set, "origin", rep, fol, nil)
	observeUnsupported(set, "origin", fol)
	observeDB(set, db)
	srv.SetAccessLog(newAccessLog(alw, "origin"))
	// The origin drains like an edge: it sits behind a load balancer too.
	drain := pipeline.NewDrain(pipeline.DrainConfig{Delay: *df.delay, Timeout: *df.timeout, Process: "origin", Logger: log, Metrics: set})
	hs := srv.HTTPServer()
	hs.Handler = drain.Handler(hs.Handler)
	serveOpsDetail(gctx, *ops, *c.profiles, set, drain.Readiness(func(time.Time) (int, []byte) {
		if !rep.Ready() {
			return 503, []byte("not ready\n")
		}
		return 200, []byte("ok\n")
	}), log)
	g.Go("work", func() error { return srv.RunWork(gctx) })
	g.Go("maintenance", func() error { return srv.Maintain(gctx) })
	serveDraining(g, gctx, ctx, serving, drain, "origin", func(dctx context.Context) error { return drain.Serve(dctx, hs, *addr) })
	log.Info("origin listening", "addr", *addr)
	<-gctx.Done()
	return g.Wait()
}

// drainFlags are the drain flags of a server behind a load balancer (`vitrine edge`, `vitrine
// origin`; pipeline.Drain).
type drainFlags struct {
	delay, timeout *time.Duration
}

func (f flags) drain() drainFlags {
	return drainFlags{
		delay: f.Duration("drain-delay", "VITRINE_DRAIN_DELAY", 5*time.Second, "on SIGTERM, how long the server keeps serving while /readyz answers 503 draining and keep-alive connections close, "+
			"before it stops accepting: at least the load balancer's health-check interval times its failure threshold (Kubernetes: endpoint propagation). A second SIGTERM or Ctrl-C skips the rest"),
		timeout: f.Duration("drain-timeout", "VITRINE_DRAIN_TIMEOUT", 10*time.Second, "then, how long requests in flight may take to finish (past it the process exits 1)"),
	}
}

// drainGroup returns the group of a server that drains: its components (the follower, the ops
// server, the work loops) outlive the stop signal, since the server keeps serving from them
// while it drains, and stop once it has (serveDraining). Until the server is serving, the stop
// signal cancels the group at once: a start-up blocked on NATS or a bucket does not hang.
func drainGroup(ctx context.Context) (*group, context.Context, *atomic.Bool) {
	g, gctx := newGroup(context.WithoutCancel(ctx))
	serving := new(atomic.Bool)
	context.AfterFunc(ctx, func() {
		if !serving.Load() {
			g.cancel()
		}
	})
	return g, gctx, serving
}

// serveDraining runs serve in g: its context ends with the stop signal (ctx) or when another
// component of the group failed (gctx); once it has drained and returned, the group stops. A
// second SIGTERM or SIGINT during the drain skips the rest of its delay.
func serveDraining(g *group, gctx, ctx context.Context, serving *atomic.Bool, d *pipeline.Drain, name string, serve func(context.Context) error) {
	dctx, stop := context.WithCancel(ctx)
	context.AfterFunc(gctx, stop)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	serving.Store(true)
	g.Go(name, func() error {
		defer g.cancel()
		defer signal.Stop(sigs)
		defer stop()
		done := make(chan struct{})
		defer close(done)
		go func() {
			// The first signal is the one that started the drain; the second hurries it.
			n := 0
			for {
				select {
				case <-sigs:
					if n++; n >= 2 {
						d.Hurry()
					}
				case <-done:
					return
				}
			}
		}()
		return serve(dctx)
	})
}

// observeUnsupported registers the follower's count of changes skipped because their change
// schema is newer than this build reads (vitrine_feed_unsupported_changes_total{process}) and
// the newest such schema (vitrine_feed_unsupported_schema{process}, 0: none).
func observeUnsupported(set *metrics.Set, process string, fol *feed.Follower) {
	l := fmt.Sprintf(`{process=%q}`, process)
	set.RegisterMetricsWriter(func(w io.Writer) {
		st := fol.Stats()
		metrics.WriteCounterUint64(w, "vitrine_feed_unsupported_changes_total"+l, st.Unsupported)
		metrics.WriteGaugeUint64(w, "vitrine_feed_unsupported_schema"+l, uint64(st.UnsupportedSchema))
	})
}

func runRelay(ctx context.Context, args []string) error {
	f := newFlags("relay")
	c := f.common()
	ops := f.String("ops-addr", "VITRINE_OPS_ADDR", "127.0.0.1:9092", "address of /metrics, /healthz, /readyz (off to disable)")
	leaseTTL := f.Duration("lease-ttl", "VITRINE_RELAY_LEASE_TTL", 0, "relay lease duration (default 2s: a standby takes over within it)")
	poll := f.Duration("poll", "VITRINE_RELAY_POLL", 0, "outbox poll interval when nothing wakes the relay (default 50ms)")
	linger := f.Duration("linger", "VITRINE_RELAY_LINGER", 0, "least time between two publishing rounds of a busy relay, so that writes share publishes (0: publish each round at once; see the README)")
	settleEvery := f.Duration("settle-every", "VITRINE_RELAY_SETTLE_EVERY", relay.DefaultSettleEvery, "least time between two transactions recording a busy log's publishes in the database (0: one per publish; a relay taking over settles what a stopped one left from the outbox)")
	dedup := f.Duration("dedup-window", "VITRINE_DEDUP_WINDOW", 0, "state stream duplicate window (default 2m)")
	snapFlags := f.snapshotFlags()
	changeSchema := f.Int("change-schema", "VITRINE_CHANGE_SCHEMA", schema.ChangeSchemaVersion,
		fmt.Sprintf("change schema to publish (%d to %d): during an upgrade, the schema every edge and origin of the fleet reads; readers are upgraded before relays publish a newer one", schema.OldestChangeSchema, schema.ChangeSchemaVersion))
	if err := f.Parse(args); err != nil {
		return err
	}
	if *linger < 0 {
		return fmt.Errorf("--linger must be 0 (off) or a positive duration, not %v", *linger)
	}
	if *settleEvery < 0 {
		return fmt.Errorf("--settle-every must be 0 (every publish) or a positive duration, not %v", *settleEvery)
	}
	if *settleEvery == 0 {
		*settleEvery = -1 // relay.Config: negative settles every publish
	}
	if err := schema.CheckWriteSchema(*changeSchema); err != nil {
		return fmt.Errorf("--change-schema: %w", err)
	}
	log := c.logger("relay")
	nc, err := c.dialNATS("vitrine-relay", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	set := metrics.NewSet()
	// The relay's statements are all keyed reads and writes of its record and the outboxes:
	// planned once per connection (store.Config.GenericPlans).
	db, err := c.openDB(ctx, false, store.Config{OnTx: txTimer(set), GenericPlans: true})
	if err != nil {
		return err
	}
	defer db.Close()
	fc := c.feed()
	fc.DedupWindow = *dedup
	r, err := relay.New(db, nc, relay.Config{Feed: fc, LeaseTTL: *leaseTTL, Poll: *poll, Linger: *linger, SettleEvery: *settleEvery, Logger: log, ChangeSchema: *changeSchema})
	if err != nil {
		return err
	}
	observe(set, "relay", nil, nil, r)
	observeDB(set, db)
	serveOps(ctx, *ops, *c.profiles, set, func() bool { return !r.Stats().EpochMismatch }, log)
	log.Info("relay running", "change_schema", *changeSchema)
	g, gctx := newGroup(ctx)
	dial := func() (*nats.Conn, error) { return c.dialNATS("vitrine-relay-snapshots", log) }
	if err := runSnapshots(g, gctx, dial, fc, snapFlags, r, set, log); err != nil {
		return err
	}
	g.Go("relay", func() error { defer g.cancel(); return r.Run(gctx) })
	<-gctx.Done()
	return g.Wait()
}

// edgeFlags are the flags of an edge, shared by `vitrine edge` and `vitrine dev`.
type edgeFlags struct {
	shards, platformDomain, edgeSecret, trustedProxies *string
	cacheBytes                                         *int64
	rateLimit                                          *int
	staleAfter, forwardTimeout                         *time.Duration
	replicaBytes                                       *int64
	snapshots                                          *bool

	// name and region identify the edge in its answers to lag probes (edge.ProbeConfig).
	name, region *string
	// drain is set by `vitrine edge` only (`vitrine dev` stops at once).
	drain *drainFlags
	// relaxGC is set by `vitrine edge` only: its first bootstrap runs with the collector relaxed
	// (relaxGCForBootstrap). `vitrine dev` shares its process with an origin.
	relaxGC bool
}

func (f flags) edge() edgeFlags {
	return edgeFlags{
		shards:         f.String("shards", "VITRINE_SHARDS", "", "comma-separated shards this edge serves (default all)"),
		platformDomain: f.String("platform-domain", "VITRINE_PLATFORM_DOMAIN", "localhost", "tenants resolve as <slug>.<platform-domain>"),
		edgeSecret:     f.Secret("edge-secret", "VITRINE_EDGE_SECRET", "secret presented to the origin on forwarded requests (required, at least 32 characters)"),
		cacheBytes:     f.Int64("cache-bytes", "VITRINE_CACHE_BYTES", 256<<20, "rendered cache budget in bytes (negative disables the cache)"),
		rateLimit:      f.Int("rate-limit", "VITRINE_RATE_LIMIT", 6000, "default requests per minute per client address and store (negative disables; a store's rate_limit overrides)"),
		trustedProxies: f.String("trusted-proxies", "VITRINE_TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies in front of the edge whose X-Forwarded-For is believed"),
		staleAfter:     f.Duration("stale-after", "VITRINE_STALE_AFTER", 10*time.Second, "staleness (time since the state stream was last heard from, per shard) past which /readyz reports the edge degraded; it keeps serving"),
		forwardTimeout: f.Duration("forward-timeout", "VITRINE_FORWARD_TIMEOUT", 30*time.Second, "bound of a forwarded request; a write sent and unanswered in time answers 504 outcome_unknown"),
		replicaBytes:   f.Int64("max-replica-bytes", "VITRINE_MAX_REPLICA_BYTES", 0, "replica memory budget, in bytes of the raw JSON of the entities held (the Go heap is a multiple of it: see the README); past it the largest stores are shed, their reads forwarded to the origin, until the next bootstrap (0: unlimited)"),
		snapshots:      f.EnvBool("snapshots", "VITRINE_SNAPSHOTS", true, "bootstrap from the per-shard snapshots of the vitrine-snapshots bucket when they are usable (same stream, intact, younger than half the tombstone horizon), else from the stream"),
		name:           f.String("edge-name", "VITRINE_EDGE_NAME", "", "the edge's name in its answers to lag probes (site health; default <host name>/<listen address>)"),
		region:         f.String("edge-region", "VITRINE_EDGE_REGION", "", "the edge's region in its answers to lag probes (site health)"),
	}
}

// healthFlags are the site health flags of an origin, shared by `vitrine origin` and `vitrine
// dev`.
type healthFlags struct {
	outboundURL     *string
	outboundTimeout *time.Duration
}

func (f flags) siteHealth() healthFlags {
	return healthFlags{
		outboundURL:     f.String("health-outbound-url", "VITRINE_HEALTH_OUTBOUND_URL", sitehealth.DefaultOutboundURL, "what the site health outbound-http test requests through the outbound client"),
		outboundTimeout: f.Duration("health-outbound-timeout", "VITRINE_HEALTH_OUTBOUND_TIMEOUT", 3*time.Second, "bound of the site health outbound-http test's request"),
	}
}

// config is the origin's site health configuration: its NATS connection, the state stream and
// the lag probe's subject under fc, its replica's follower.
func (h healthFlags) config(nc *nats.Conn, fc feed.Config, fol *feed.Follower) sitehealth.Config {
	return sitehealth.Config{NATS: nc, Feed: fc, Follower: fol, ProbeSubject: schema.LagProbeSubject(fc.Prefix),
		OutboundURL: *h.outboundURL, OutboundTimeout: *h.outboundTimeout}
}

// answerProbes has srv answer lag probes on nc until ctx ends (edge.AnswerProbes), named by
// --edge-name or, by default, its host name and listen address.
func answerProbes(g *group, ctx context.Context, srv *edge.Server, nc *nats.Conn, fc feed.Config, ef edgeFlags, addr string) error {
	shards, err := parseShards(*ef.shards)
	if err != nil {
		return err
	}
	name := *ef.name
	if name == "" {
		host, _ := os.Hostname()
		name = host + "/" + addr
	}
	cfg := edge.ProbeConfig{Subject: schema.LagProbeSubject(fc.Prefix), Name: name, Region: *ef.region, Shards: shards}
	g.Go("probes", func() error { return srv.AnswerProbes(ctx, nc, cfg) })
	return nil
}

// parsePrefixes parses a comma-separated list of CIDRs (a bare address is a single host).
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range splitList(s) {
		if !strings.Contains(p, "/") {
			a, err := netip.ParseAddr(p)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: %w", p, err)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		pf, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", p, err)
		}
		out = append(out, pf.Masked())
	}
	return out, nil
}

// startEdge starts an edge following the stream on nc, forwarding to originURL, serving media
// files from files (nil: none) and letting uploads of maxUpload bytes through.
func startEdge(g *group, ctx context.Context, ef edgeFlags, originURL string, nc *nats.Conn, fc feed.Config, files blob.Store, maxUpload int64, set *metrics.Set, log *slog.Logger) (*edge.Server, *replica.Replica, error) {
	shards, err := parseShards(*ef.shards)
	if err != nil {
		return nil, nil, err
	}
	if *ef.replicaBytes < 0 {
		return nil, nil, fmt.Errorf("--max-replica-bytes must be 0 (unlimited) or a number of bytes, not %d", *ef.replicaBytes)
	}
	snaps, err := edgeSnapshots(ctx, nc, fc, *ef.snapshots)
	if err != nil {
		return nil, nil, err
	}
	var gc *bootstrapGC
	if ef.relaxGC {
		gc = relaxGCForBootstrap(log)
	}
	rep, fol, err := followStream(g, ctx, nc, fc, fc.PublicFilters(shards), replica.Config{Shards: shards, PlatformDomain: *ef.platformDomain, MaxBytes: *ef.replicaBytes}, log, snaps...)
	if err != nil {
		return nil, nil, err
	}
	observeFollowerSnapshots(set, "edge", fol)
	g.Go("bootstrap memory", func() error { releaseBootstrapMemory(ctx, rep, fol, gc, log); return nil })
	proxies, err := parsePrefixes(*ef.trustedProxies)
	if err != nil {
		return nil, nil, err
	}
	var drainDelay, drainTimeout time.Duration
	if ef.drain != nil {
		drainDelay, drainTimeout = *ef.drain.delay, *ef.drain.timeout
	}
	srv, err := edge.New(edge.Config{Origin: originURL, EdgeSecret: *ef.edgeSecret, CacheBytes: *ef.cacheBytes,
		RateLimit: *ef.rateLimit, TrustedProxies: proxies, Logger: log, Metrics: set,
		StaleAfter: *ef.staleAfter, ForwardTimeout: *ef.forwardTimeout,
		Blobs: files, MaxUploadBytes: int(media.UploadBodyLimit(maxUpload)), DrainDelay: drainDelay, DrainTimeout: drainTimeout}, rep)
	if err != nil {
		return nil, nil, err
	}
	observe(set, "edge", rep, fol, nil)
	observeUnsupported(set, "edge", fol)
	observeEdge(set, srv)
	return srv, rep, nil
}

func runEdge(ctx context.Context, args []string) error {
	f := newFlags("edge")
	c := f.common()
	ef := f.edge()
	addr := f.String("addr", "VITRINE_EDGE_ADDR", "127.0.0.1:8080", "listen address")
	originURL := f.String("origin-url", "VITRINE_ORIGIN_URL", "http://127.0.0.1:8081", "origin base URL")
	ops := f.String("ops-addr", "VITRINE_OPS_ADDR", "127.0.0.1:9093", "address of /metrics, /healthz, /readyz (off to disable)")
	accessLog := f.accessLog()
	mf := f.media("nats")
	df := f.drain()
	ef.drain = &df
	ef.relaxGC = true
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := checkEdgeSecret(*ef.edgeSecret); err != nil {
		return err
	}
	log := c.logger("edge")
	alw, closeAccess, err := openAccessLog(*accessLog)
	if err != nil {
		return err
	}
	defer closeAccess()
	nc, err := c.dialNATS("vitrine-edge", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	set := metrics.NewSet()
	g, gctx, serving := drainGroup(ctx)
	files, err := openMediaStore(gctx, *mf.store, *mf.bucket, nc, c.feed(), false)
	if err != nil {
		g.cancel()
		g.Wait()
		return fmt.Errorf("media store: %w", err)
	}
	srv, _, err := startEdge(g, gctx, ef, *originURL, nc, c.feed(), files, *mf.maxUpload, set, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.SetAccessLog(newAccessLog(alw, "edge"))
	if err := answerProbes(g, gctx, srv, nc, c.feed(), ef, *addr); err != nil {
		return err
	}
	serveOpsDetail(gctx, *ops, *c.profiles, set, srv.Readiness, log)
	serveDraining(g, gctx, ctx, serving, srv.Drain(), "edge", func(dctx context.Context) error { return srv.Run(dctx, *addr) })
	log.Info("edge listening", "addr", *addr, "origin", *originURL)
	<-gctx.Done()
	return g.Wait()
}

// labelQueue opens the origins' label-batch work queue on JetStream.
// outboundUserAgent is the User-Agent of the process's outbound calls.
const outboundUserAgent = "vitrine"

// webhookDispatcher builds the origin's webhook dispatcher, its outbound calls through client,
// the process's one outbound client (decision 19: webhooks, the oEmbed proxy and media uploads
// by URL share it).
func webhookDispatcher(nc *nats.Conn, fc feed.Config, db *store.DB, key []byte, cfg webhooks.Config, client *outbound.Client, log *slog.Logger, set *metrics.Set) (*webhooks.Dispatcher, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return webhooks.NewDispatcher(cfg, db, js, fc, client, key, log.With("component", "webhooks"), set)
}

func labelQueue(ctx context.Context, nc *nats.Conn, fc feed.Config, ackWait time.Duration) (*fulfil.Queue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return fulfil.NewQueue(ctx, js, fc.WorkStream, fc.LabelWorkSubject(), ackWait, fc.Replicas)
}
