package main

import (
	"context"
	"encoding/hex"
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
	}
}

func (c common) logger(process string) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*c.logLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("process", process)
}

func (c common) feed() feed.Config { return feed.Config{Prefix: *c.prefix}.WithDefaults() }

// openDB connects to the database; with create, it first creates the database when missing.
func (c common) openDB(ctx context.Context, create bool, cfg store.Config) (*store.DB, error) {
	if create {
		if err := store.EnsureDatabase(ctx, *c.databaseURL); err != nil {
			return nil, err
		}
	}
	return store.Open(ctx, *c.databaseURL, cfg)
}

// connectNATS connects with endless reconnects and refuses servers older than the design needs.
func connectNATS(url, name string, log *slog.Logger) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }))
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
	set.RegisterMetricsWriter(func(w io.Writer) {
		if rep != nil {
			for _, t := range rep.Tenants() {
				l := fmt.Sprintf(`{process=%q,tenant=%q}`, process, t.Slug)
				metrics.WriteGaugeUint64(w, "vitrine_replica_version"+l, uint64(t.Version()))
				metrics.WriteGaugeUint64(w, "vitrine_replica_lag_versions"+l, uint64(max(0, t.Seen()-t.Version())))
				metrics.WriteGaugeUint64(w, "vitrine_replica_bytes"+l, uint64(t.Snapshot().Bytes))
				metrics.WriteGaugeUint64(w, "vitrine_replica_held"+l, b2u(t.Held()))
			}
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
			metrics.WriteCounterUint64(w, "vitrine_relay_snapshots_total", st.Snapshots)
			metrics.WriteCounterUint64(w, "vitrine_relay_repairs_total", st.Repairs)
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
func serveOps(ctx context.Context, addr string, set *metrics.Set, ready func() bool, log *slog.Logger) {
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
			if ready != nil && !ready() {
				c.SetStatusCode(fasthttp.StatusServiceUnavailable)
				c.SetBodyString("not ready\n")
				return
			}
			c.SetBodyString("ok\n")
		default:
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
