package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/pprofhandler"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/sync/feed"
	"vitrine/sync/relay"
)

// Defaults of a local deployment. The NATS port is not 4222: Debian's nats-server (too old for
// Vitrine) often runs there.
const (
	defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/vitrine?sslmode=disable"
	defaultNATSAddr    = "127.0.0.1:4250"
	defaultNATSURL     = "nats://" + defaultNATSAddr
)

// flags wraps a FlagSet whose every flag defaults to an environment variable.
type flags struct {
	*flag.FlagSet
}

func newFlags(name string) flags {
	fs := flag.NewFlagSet("vitrine "+name, flag.ContinueOnError)
	return flags{fs}
}

func env(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

func (f flags) String(name, envName, def, usage string) *string {
	if v, ok := env(envName); ok {
		def = v
	}
	return f.FlagSet.String(name, def, usage+" ($"+envName+")")
}

// secretValue is a flag value that never shows in usage output: the default a flag set prints
// comes from String.
type secretValue struct{ v string }

func (s *secretValue) String() string     { return "" }
func (s *secretValue) Set(v string) error { s.v = v; return nil }

// Secret is String for a secret: the value from the environment is used but, unlike String's
// default, never printed by -h.
func (f flags) Secret(name, envName, usage string) *string {
	sv := &secretValue{}
	if v, ok := env(envName); ok {
		sv.v = v
	}
	f.FlagSet.Var(sv, name, usage+" ($"+envName+")")
	return &sv.v
}

func (f flags) Int(name, envName string, def int, usage string) *int {
	if v, ok := env(envName); ok {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		}
	}
	return f.FlagSet.Int(name, def, usage+" ($"+envName+")")
}

func (f flags) Int64(name, envName string, def int64, usage string) *int64 {
	if v, ok := env(envName); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			def = n
		}
	}
	return f.FlagSet.Int64(name, def, usage+" ($"+envName+")")
}

func (f flags) Duration(name, envName string, def time.Duration, usage string) *time.Duration {
	if v, ok := env(envName); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return f.FlagSet.Duration(name, def, usage+" ($"+envName+")")
}

// common holds the flags most commands share.
type common struct {
	databaseURL *string
	natsURL     *string
	logLevel    *string
	prefix      *string
	nats        natsAuth
	// profiles serves Go's profiles (/debug/pprof/) on the process's ops address.
	profiles *bool
	// replicas is the replica count of every stream and bucket the process creates or updates.
	replicas *replicasValue
}

// natsAuth are the NATS credentials and TLS settings of a process (decision 21: outside `vitrine
// dev` every process has credentials of its own role, see deploy/nats, and talks TLS).
type natsAuth struct {
	creds, nkey, user, password *string
	tlsCA, tlsCert, tlsKey      *string
	domain                      *string
	insecure                    *bool
}

func (f flags) common() common {
	db := defaultDatabaseURL
	if v, ok := env("DATABASE_URL"); ok {
		db = v
	}
	return common{
		databaseURL: f.String("database-url", "VITRINE_DATABASE_URL", db, "PostgreSQL or CockroachDB URL (also $DATABASE_URL)"),
		natsURL:     f.String("nats-url", "VITRINE_NATS_URL", defaultNATSURL, "NATS URL (nats-server 2.12 or newer, e.g. `vitrine nats`)"),
		logLevel:    f.String("log-level", "VITRINE_LOG_LEVEL", "info", "log level: debug, info, warn, error"),
		prefix:      f.String("subject-prefix", "VITRINE_SUBJECT_PREFIX", "vitrine", "first token of every NATS subject"),
		profiles:    f.EnvBool("pprof", "VITRINE_PPROF", false, "serve Go's runtime profiles at /debug/pprof/ on the ops address (CPU, heap, goroutines: for measuring; keep the ops address private)"),
		replicas:    f.replicas(),
		nats: natsAuth{
			creds:    f.String("nats-creds", "VITRINE_NATS_CREDS", "", "NATS credentials file (JWT and seed, operator mode)"),
			nkey:     f.String("nats-nkey", "VITRINE_NATS_NKEY", "", "file holding the NATS user nkey seed of this process's role (deploy/nats)"),
			user:     f.String("nats-user", "VITRINE_NATS_USER", "", "NATS user name (with --nats-password)"),
			password: f.Secret("nats-password", "VITRINE_NATS_PASSWORD", "NATS password"),
			tlsCA:    f.String("nats-tls-ca", "VITRINE_NATS_TLS_CA", "", "PEM file of the CA that signed the NATS server's certificate"),
			tlsCert:  f.String("nats-tls-cert", "VITRINE_NATS_TLS_CERT", "", "PEM client certificate presented to NATS (with --nats-tls-key)"),
			tlsKey:   f.String("nats-tls-key", "VITRINE_NATS_TLS_KEY", "", "PEM private key of --nats-tls-cert"),
			domain:   f.String("nats-js-domain", "VITRINE_NATS_JS_DOMAIN", "", "JetStream domain of the central cluster, for an edge reaching it through a leaf node without JetStream (edges of a region with mirrors need none: deploy/nats)"),
			insecure: f.EnvBool("nats-insecure", "VITRINE_NATS_INSECURE", false, "allow NATS without credentials or TLS (local experiments only)"),
		},
	}
}

// EnvBool is a boolean flag defaulting to an environment variable ("1", "true", …).
func (f flags) EnvBool(name, envName string, def bool, usage string) *bool {
	if v, ok := env(envName); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return f.FlagSet.Bool(name, def, usage+" ($"+envName+")")
}

func (c common) logger(process string) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*c.logLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("process", process)
}

func (c common) feed() feed.Config {
	return feed.Config{Prefix: *c.prefix, Domain: *c.nats.domain, Replicas: c.replicas.n}.WithDefaults()
}

// Bounds of --stream-replicas: JetStream keeps at most five copies of a stream.
const (
	minStreamReplicas = 1
	maxStreamReplicas = 5
)

// replicasValue is the value of --stream-replicas: an int from minStreamReplicas to
// maxStreamReplicas. A malformed $VITRINE_STREAM_REPLICAS is not ignored, as other variables
// are, but refused by flags.Parse (check): a fleet must not run single copies it thinks it has
// three of.
type replicasValue struct {
	n      int
	envErr error // the variable's value was refused, and no flag replaced it
}

func (v *replicasValue) String() string {
	if v == nil {
		return "0"
	}
	return strconv.Itoa(v.n)
}

func (v *replicasValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < minStreamReplicas || n > maxStreamReplicas {
		return fmt.Errorf("want a replica count from %d to %d (3 on a three-node NATS cluster), got %q",
			minStreamReplicas, maxStreamReplicas, s)
	}
	v.n, v.envErr = n, nil
	return nil
}

func (v *replicasValue) check() error { return v.envErr }

// replicas declares --stream-replicas.
func (f flags) replicas() *replicasValue {
	v := &replicasValue{n: 1}
	if s, ok := env("VITRINE_STREAM_REPLICAS"); ok {
		if err := v.Set(s); err != nil {
			v.envErr = fmt.Errorf("$VITRINE_STREAM_REPLICAS: %w", err)
		}
	}
	f.FlagSet.Var(v, "stream-replicas", "copies of every JetStream stream and object store bucket this process creates or updates "+
		"(state and event streams, media and snapshot buckets): an `int` from 1 to 5, 3 on a three-node NATS cluster; an existing stream is "+
		"changed in place (`vitrine mirror` has its own --replicas) ($VITRINE_STREAM_REPLICAS)")
	return v
}

// Parse parses args, then refuses a flag value taken from the environment that its flag could
// not accept (a value with a check method: --stream-replicas).
func (f flags) Parse(args []string) error {
	if err := f.FlagSet.Parse(args); err != nil {
		return err
	}
	var err error
	f.FlagSet.VisitAll(func(fl *flag.Flag) {
		if c, ok := fl.Value.(interface{ check() error }); ok && err == nil {
			err = c.check()
		}
	})
	return err
}

// openDB connects to the database; with create, it first creates the database when missing.
func (c common) openDB(ctx context.Context, create bool, cfg store.Config) (*store.DB, error) {
	if create {
		if err := store.EnsureDatabase(ctx, *c.databaseURL); err != nil {
			return nil, err
		}
	}
	return store.Open(ctx, *c.databaseURL, cfg)
}

// errNATSInsecure is returned outside `vitrine dev` by a process given no NATS credentials or no
// TLS, unless the operator said --nats-insecure.
var errNATSInsecure = errors.New("NATS credentials and TLS are required outside `vitrine dev`")

// options returns the connection options of the flags, checked: at most one kind of credential,
// a password with its user, a certificate with its key, and files that exist. A process with no
// credentials or without TLS (a tls:// URL or a TLS flag) is refused unless insecure is set.
func (a natsAuth) options(url string) ([]nats.Option, error) {
	var opts []nats.Option
	kinds := 0
	for _, v := range []string{*a.creds, *a.nkey, *a.user} {
		if v != "" {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, fmt.Errorf("NATS credentials: give one of --nats-creds, --nats-nkey, --nats-user")
	}
	if (*a.user == "") != (*a.password == "") {
		return nil, fmt.Errorf("NATS credentials: --nats-user and --nats-password go together")
	}
	for _, file := range []struct{ flag, path string }{{"--nats-creds", *a.creds}, {"--nats-nkey", *a.nkey},
		{"--nats-tls-ca", *a.tlsCA}, {"--nats-tls-cert", *a.tlsCert}, {"--nats-tls-key", *a.tlsKey}} {
		if file.path == "" {
			continue
		}
		if _, err := os.Stat(file.path); err != nil {
			return nil, fmt.Errorf("%s: %w", file.flag, err)
		}
	}
	switch {
	case *a.creds != "":
		opts = append(opts, nats.UserCredentials(*a.creds))
	case *a.nkey != "":
		o, err := nats.NkeyOptionFromSeed(*a.nkey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey: %w", err)
		}
		opts = append(opts, o)
	case *a.user != "":
		opts = append(opts, nats.UserInfo(*a.user, *a.password))
	}
	if (*a.tlsCert == "") != (*a.tlsKey == "") {
		return nil, fmt.Errorf("NATS TLS: --nats-tls-cert and --nats-tls-key go together")
	}
	if *a.tlsCA != "" {
		opts = append(opts, nats.RootCAs(*a.tlsCA))
	}
	if *a.tlsCert != "" {
		opts = append(opts, nats.ClientCert(*a.tlsCert, *a.tlsKey))
	}
	tlsOn := *a.tlsCA != "" || *a.tlsCert != "" || allTLS(url)
	if tlsOn {
		opts = append(opts, nats.Secure())
	}
	if !*a.insecure {
		var missing []string
		if kinds == 0 {
			missing = append(missing, "credentials (--nats-nkey, --nats-creds or --nats-user/--nats-password)")
		}
		if !tlsOn {
			missing = append(missing, "TLS (a tls:// URL, --nats-tls-ca, --nats-tls-cert/--nats-tls-key)")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: missing %s; see deploy/nats. For a local experiment only, --nats-insecure ($VITRINE_NATS_INSECURE=1) allows a bare connection",
				errNATSInsecure, strings.Join(missing, " and "))
		}
	}
	return opts, nil
}

// allTLS reports whether every URL of a comma-separated NATS URL list has the tls scheme.
func allTLS(urls string) bool {
	n := 0
	for _, u := range splitList(urls) {
		if !strings.HasPrefix(strings.ToLower(u), "tls://") {
			return false
		}
		n++
	}
	return n > 0
}

// dialNATS connects a process other than `vitrine dev` with its credentials and TLS (see
// natsAuth.options).
func (c common) dialNATS(name string, log *slog.Logger) (*nats.Conn, error) {
	opts, err := c.nats.options(*c.natsURL)
	if err != nil {
		return nil, err
	}
	return connectNATS(*c.natsURL, name, log, opts...)
}

// connectNATS connects with endless reconnects and refuses servers older than the design needs.
func connectNATS(url, name string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			// Permission violations land here: a role asking for more than deploy/nats gives it.
			log.Error("nats error", "err", err)
		})}, extra...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w (start one with `vitrine nats`)", url, err)
	}
	if err := feed.CheckServer(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// parseSecret accepts a hex string of at least 32 bytes, or any string of at least 32 characters.
func parseSecret(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) >= 32 {
		return b, nil
	}
	if len(s) >= 32 {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("the secret must be at least 32 bytes (64 hex digits): set --secret or $VITRINE_SECRET")
}

// minEdgeSecret is the shortest edge secret accepted: 32 characters, as the server secret.
const minEdgeSecret = 32

// checkEdgeSecret refuses a missing or short edge secret. Outside `vitrine dev` it is required:
// without it the origin cannot believe the client address an edge names, and every origin
// throttle would key on the edge's own address, all of its shoppers together.
func checkEdgeSecret(s string) error {
	if s == "" {
		return fmt.Errorf("an edge secret is required: set --edge-secret or $VITRINE_EDGE_SECRET to the same random value (at least %d characters, e.g. `openssl rand -hex 32`) on the origin and every edge", minEdgeSecret)
	}
	if len(s) < minEdgeSecret {
		return fmt.Errorf("the edge secret must be at least %d characters (e.g. `openssl rand -hex 32`)", minEdgeSecret)
	}
	return nil
}

// originEdgeSecrets returns the edge secrets an origin accepts: the current one (required) and,
// during a rotation, the previous one.
func originEdgeSecrets(current, previous string) ([]string, error) {
	if err := checkEdgeSecret(current); err != nil {
		return nil, err
	}
	if previous == "" {
		return []string{current}, nil
	}
	if err := checkEdgeSecret(previous); err != nil {
		return nil, fmt.Errorf("--edge-secret-previous: %w", err)
	}
	return []string{current, previous}, nil
}

func parseShards(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("shards: %q is not a shard number", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// observe registers the metrics of the components a process runs.
func observe(set *metrics.Set, process string, rep *replica.Replica, fol *feed.Follower, rel *relay.Relay) {
	observeBuild(set)
	if fol != nil {
		observeApply(set, process, fol)
	}
	set.RegisterMetricsWriter(func(w io.Writer) {
		if rep != nil {
			for _, t := range rep.Tenants() {
				l := fmt.Sprintf(`{process=%q,tenant=%q}`, process, t.Slug)
				metrics.WriteGaugeUint64(w, "vitrine_replica_version"+l, uint64(t.Version()))
				metrics.WriteGaugeUint64(w, "vitrine_replica_lag_versions"+l, uint64(max(0, t.Seen()-t.Version())))
				metrics.WriteGaugeUint64(w, "vitrine_replica_bytes"+l, uint64(t.Snapshot().Bytes))
				metrics.WriteGaugeUint64(w, "vitrine_replica_held"+l, b2u(t.Held()))
				metrics.WriteGaugeUint64(w, "vitrine_replica_shed"+l, b2u(t.Shed()))
			}
			// The memory budget (--max-replica-bytes; 0 unlimited), what is held against it and
			// how many tenants were shed to keep within it.
			bud, bl := rep.Budget(), fmt.Sprintf(`{process=%q}`, process)
			metrics.WriteGaugeUint64(w, "vitrine_replica_budget_bytes"+bl, uint64(bud.MaxBytes))
			metrics.WriteGaugeUint64(w, "vitrine_replica_held_bytes"+bl, uint64(max(0, bud.HeldBytes)))
			metrics.WriteGaugeUint64(w, "vitrine_replica_shed_tenants"+bl, uint64(len(bud.Shed)))
			ready := uint64(0)
			if rep.Ready() {
				ready = 1
			}
			metrics.WriteGaugeUint64(w, fmt.Sprintf(`vitrine_replica_ready{process=%q}`, process), ready)
			rs := rep.Stats()
			l := fmt.Sprintf(`{process=%q}`, process)
			metrics.WriteCounterUint64(w, "vitrine_replica_held_heads_total"+l, rs.HeldHeads)
			metrics.WriteCounterUint64(w, "vitrine_replica_digest_disagreements_total"+l, rs.Disagreements)
			metrics.WriteCounterUint64(w, "vitrine_replica_resyncs_total"+l, rs.Resyncs)
			metrics.WriteCounterUint64(w, "vitrine_replica_index_images_used_total"+l, rs.IndexImagesUsed)
			metrics.WriteCounterUint64(w, "vitrine_replica_index_images_refused_total"+l, rs.IndexImagesRefused)
			// Seconds since the state stream was last heard from, per shard (decision 22).
			for _, st := range rep.StalenessByShard(time.Now()) {
				metrics.WriteGaugeFloat64(w, fmt.Sprintf(`vitrine_feed_staleness_seconds{process=%q,shard=%q}`, process, st.Shard), st.Staleness.Seconds())
			}
		}
		if fol != nil {
			st := fol.Stats()
			l := fmt.Sprintf(`{process=%q}`, process)
			metrics.WriteCounterUint64(w, "vitrine_feed_delivered_total"+l, st.Delivered)
			metrics.WriteGaugeUint64(w, "vitrine_feed_pending"+l, st.Pending)
			metrics.WriteCounterUint64(w, "vitrine_feed_bootstraps_total"+l, st.Resets)
			metrics.WriteCounterUint64(w, "vitrine_feed_malformed_total"+l, st.Malformed)
			metrics.WriteCounterUint64(w, "vitrine_feed_resyncs_total"+l, st.Resyncs)
		}
		if rel != nil {
			st := rel.Stats()
			metrics.WriteCounterUint64(w, "vitrine_relay_published_total", st.Published)
			metrics.WriteCounterUint64(w, "vitrine_relay_batches_total", st.Batches)
			metrics.WriteCounterUint64(w, "vitrine_relay_fenced_total", st.Fenced)
			metrics.WriteCounterUint64(w, "vitrine_relay_settles_total", st.Settles)
			metrics.WriteCounterUint64(w, "vitrine_relay_snapshots_total", st.Snapshots)
			metrics.WriteCounterUint64(w, "vitrine_relay_repairs_total", st.Repairs)
			metrics.WriteCounterUint64(w, "vitrine_relay_claims_total", st.Claims)
			metrics.WriteCounterUint64(w, "vitrine_relay_events_total", st.Events)
			metrics.WriteGaugeFloat64(w, "vitrine_relay_publish_lag_seconds", st.Lag.Seconds())
			metrics.WriteGaugeUint64(w, "vitrine_relay_lease_held", b2u(st.LeaseHeld))
			metrics.WriteGaugeUint64(w, "vitrine_relay_epoch_mismatch", b2u(st.EpochMismatch))
		}
	})
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// serveOps serves /metrics, /healthz and /readyz on addr until ctx ends.
func serveOps(ctx context.Context, addr string, profiles bool, set *metrics.Set, ready func() bool, log *slog.Logger) {
	serveOpsDetail(ctx, addr, profiles, set, func(time.Time) (int, []byte) {
		if ready != nil && !ready() {
			return fasthttp.StatusServiceUnavailable, []byte("not ready\n")
		}
		return fasthttp.StatusOK, []byte("ok\n")
	}, log)
}

// serveOpsDetail is serveOps with a /readyz answer of the process's own: its status and body
// (an edge's names each shard's staleness and whether it is degraded: edge.Server.Readiness).
// With profiles, Go's runtime profiles are served at /debug/pprof/ too (--pprof).
func serveOpsDetail(ctx context.Context, addr string, profiles bool, set *metrics.Set, readiness func(now time.Time) (int, []byte), log *slog.Logger) {
	if addr == "" || addr == "off" {
		return
	}
	srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: func(c *fasthttp.RequestCtx) {
		switch string(c.Path()) {
		case "/metrics":
			c.SetContentType("text/plain; version=0.0.4")
			set.WritePrometheus(c)
			metrics.WriteProcessMetrics(c)
		case "/healthz":
			c.SetBodyString("ok\n")
		case "/readyz":
			status, body := readiness(time.Now())
			if len(body) > 0 && body[0] == '{' {
				c.SetContentType("application/json")
			}
			c.SetStatusCode(status)
			c.SetBody(body)
		default:
			if profiles && bytes.HasPrefix(c.Path(), []byte("/debug/pprof/")) {
				pprofhandler.PprofHandler(c)
				return
			}
			c.SetStatusCode(fasthttp.StatusNotFound)
		}
	}}
	go func() {
		if err := srv.ListenAndServe(addr); err != nil {
			log.Error("ops listener failed", "addr", addr, "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.Shutdown()
	}()
}
