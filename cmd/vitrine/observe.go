package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"vitrine/edge"
	"vitrine/edge/pipeline"
	"vitrine/origin/store"
	"vitrine/sync/feed"
)

// applyLagBuckets are the upper bounds, in seconds, of the replica apply-lag histogram: a write
// is visible on every edge in milliseconds; a lag of a minute is an edge far behind.
var applyLagBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// txTimer returns the store's Config.OnTx: a histogram of transaction durations, retries and
// backoff included (vitrine_store_tx_duration_seconds).
func txTimer(set *metrics.Set) func(time.Duration) {
	h := set.GetOrCreatePrometheusHistogramExt("vitrine_store_tx_duration_seconds", pipeline.LatencyBuckets)
	return func(d time.Duration) { h.Update(d.Seconds()) }
}

// observeDB registers the connection pool's gauges and counters.
func observeDB(set *metrics.Set, db *store.DB) {
	set.RegisterMetricsWriter(func(w io.Writer) {
		st := db.PoolStats()
		metrics.WriteGaugeUint64(w, `vitrine_store_pool_connections{state="acquired"}`, uint64(st.Acquired))
		metrics.WriteGaugeUint64(w, `vitrine_store_pool_connections{state="idle"}`, uint64(st.Idle))
		metrics.WriteGaugeUint64(w, `vitrine_store_pool_connections{state="total"}`, uint64(st.Total))
		metrics.WriteGaugeUint64(w, "vitrine_store_pool_max_connections", uint64(st.Max))
		metrics.WriteCounterUint64(w, "vitrine_store_pool_acquires_total", uint64(st.Acquires))
		metrics.WriteCounterUint64(w, "vitrine_store_pool_empty_acquires_total", uint64(st.EmptyAcquires))
		metrics.WriteCounterUint64(w, "vitrine_store_pool_canceled_acquires_total", uint64(st.Canceled))
		metrics.WriteCounterFloat64(w, "vitrine_store_pool_acquire_wait_seconds_total", st.AcquireWait.Seconds())
		cs := db.CredentialStats()
		metrics.WriteCounterUint64(w, `vitrine_store_credential_cache_total{result="hit"}`, cs.Hits)
		metrics.WriteCounterUint64(w, `vitrine_store_credential_cache_total{result="miss"}`, cs.Misses)
		metrics.WriteCounterUint64(w, "vitrine_store_credential_cache_forgets_total", cs.Forgets)
		metrics.WriteGaugeUint64(w, "vitrine_store_credential_cache_entries", uint64(cs.Entries))
	})
}

// observeApply times the follower's applied transactions: from the head's publication to its
// application (vitrine_replica_apply_lag_seconds{process}).
func observeApply(set *metrics.Set, process string, fol *feed.Follower) {
	h := set.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`vitrine_replica_apply_lag_seconds{process=%q}`, process), applyLagBuckets)
	fol.SetOnApply(func(lag time.Duration) { h.Update(max(lag, 0).Seconds()) })
}

// observeEdge registers the edge's rendered-cache gauges and counters (hits and misses are the
// edge's own vitrine_edge_cache_hits_total and _misses_total).
func observeEdge(set *metrics.Set, srv *edge.Server) {
	set.RegisterMetricsWriter(func(w io.Writer) {
		m, ok := srv.CacheMetrics()
		if !ok {
			return
		}
		metrics.WriteGaugeUint64(w, "vitrine_edge_cache_bytes", uint64(max(m.Used, 0)))
		metrics.WriteGaugeUint64(w, "vitrine_edge_cache_max_bytes", uint64(max(m.MaxBytes, 0)))
		metrics.WriteCounterUint64(w, "vitrine_edge_cache_admitted_total", m.Added)
		metrics.WriteCounterUint64(w, "vitrine_edge_cache_evictions_total", m.Evicted)
		metrics.WriteCounterUint64(w, "vitrine_edge_cache_evicted_bytes_total", m.CostEvicted)
		metrics.WriteCounterUint64(w, `vitrine_edge_cache_refused_total{reason="dropped"}`, m.Dropped)
		metrics.WriteCounterUint64(w, `vitrine_edge_cache_refused_total{reason="rejected"}`, m.Rejected)
		metrics.WriteCounterUint64(w, `vitrine_edge_cache_refused_total{reason="oversize"}`, m.Oversize)
		metrics.WriteCounterUint64(w, "vitrine_edge_cache_stale_total", m.Stale)
		metrics.WriteCounterUint64(w, "vitrine_edge_cache_collisions_total", m.Collisions)
	})
}

// accessLog declares the --access-log flag of a server command.
func (f flags) accessLog() *string {
	return f.String("access-log", "VITRINE_ACCESS_LOG", "", "write one JSON line per request (access log) to stderr, or append it to this file; empty or off: none")
}

// openAccessLog opens the access log's destination: nil for none ("" or "off"), stderr, or a file
// opened for appending. close releases it.
func openAccessLog(spec string) (w io.Writer, close func() error, err error) {
	switch spec {
	case "", "off":
		return nil, func() error { return nil }, nil
	case "stderr", "-":
		return os.Stderr, func() error { return nil }, nil
	}
	file, err := os.OpenFile(spec, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("access log: %w", err)
	}
	return file, file.Close, nil
}

// newAccessLog returns the access log of one server process writing to w, or nil when w is nil.
func newAccessLog(w io.Writer, process string) *pipeline.AccessLog {
	if w == nil {
		return nil
	}
	return pipeline.NewAccessLog(slog.NewJSONHandler(w, nil).WithAttrs([]slog.Attr{slog.String("process", process)}))
}
