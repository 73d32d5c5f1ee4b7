package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"

	"vitrine/edge/replica"
	"vitrine/sync/feed"
	"vitrine/sync/relay"
	"vitrine/sync/snapshot"
)

// snapshotFlags are the snapshot writer's flags of a process running a relay.
type snapshotFlags struct {
	every      *time.Duration
	index      *bool
	cpuPercent *int
}

// snapshotFlags declares --snapshot-every, --snapshot-search-index and --snapshot-cpu-percent.
func (f flags) snapshotFlags() snapshotFlags {
	return snapshotFlags{
		every: f.Duration("snapshot-every", "VITRINE_SNAPSHOT_EVERY", time.Minute,
			"period of the per-shard snapshots of the state stream written to the vitrine-snapshots bucket while this relay holds its lease (also once the first publish burst settles); 0 disables"),
		index: f.EnvBool("snapshot-search-index", "VITRINE_SNAPSHOT_SEARCH_INDEX", true,
			"add to each shard's snapshot the search index image of its tenants, so that a new edge loads them instead of indexing (the writer loads each shard into a replica of its own to make them: the shard's edge memory and CPU, for the pass)"),
		cpuPercent: f.Int("snapshot-cpu-percent", "VITRINE_SNAPSHOT_CPU_PERCENT", int(snapshot.DefaultCPUShare*100),
			"most of the time a snapshot pass may run while the relay is publishing, in percent (1-100): it rests between its steps so that the relay's publishing beside it keeps its latency; 100 never rests"),
	}
}

// runSnapshots writes the state stream's snapshots every period while rel holds its lease, and
// registers the writer's metrics on set. The writer has a NATS connection of its own (dial), so
// that a pass's stream reads and object writes do not queue ahead of the relay's publishes and
// their acknowledgements on one socket (README, "Twentieth session").
func runSnapshots(g *group, ctx context.Context, dial func() (*nats.Conn, error), fc feed.Config, sf snapshotFlags, rel *relay.Relay, set *metrics.Set, log *slog.Logger) error {
	every := *sf.every
	if every <= 0 {
		return nil
	}
	if p := *sf.cpuPercent; p < 1 || p > 100 {
		return fmt.Errorf("--snapshot-cpu-percent must be between 1 and 100, not %d", p)
	}
	nc, err := dial()
	if err != nil {
		return err
	}
	js, err := fc.JetStream(nc)
	if err != nil {
		nc.Close()
		return err
	}
	wc := snapshot.WriterConfig{Feed: fc, Replicas: fc.Replicas, CPUShare: float64(*sf.cpuPercent) / 100, Logger: log,
		// A pass yields to the relay while writes flow; beside an idle relay it runs at once.
		Busy: func() bool { return rel.PublishedWithin(time.Second) }}
	if *sf.index {
		wc.Annexes = replica.SnapshotAnnexes
	}
	// Some of a pass's steps run long without a point to rest at (a shard's search index image).
	// On a single P the relay's goroutines wait behind such a step, up to 10 ms each time one
	// wakes, and a publish round wakes many: writes waiting for the origin's replica stalled
	// 150–250 ms once a pass (README, "Twentieth session"). With two Ps the kernel schedules the
	// pass's thread and the relay's, which mostly sleeps and so runs as soon as it wakes. Only
	// for the pass: on one CPU, two Ps cost the relay 0.07 ms of CPU per write. A GOMAXPROCS the
	// operator set is kept.
	if os.Getenv("GOMAXPROCS") == "" {
		wc.Pass = func() func() {
			if runtime.GOMAXPROCS(0) >= 2 {
				return func() {}
			}
			runtime.GOMAXPROCS(2)
			return runtime.SetDefaultGOMAXPROCS
		}
	}
	w := snapshot.NewWriter(js, wc)
	set.RegisterMetricsWriter(func(out io.Writer) {
		st := w.Stats()
		metrics.WriteCounterUint64(out, "vitrine_snapshot_passes_total", st.Passes)
		metrics.WriteCounterUint64(out, "vitrine_snapshot_failures_total", st.Failures)
		metrics.WriteCounterUint64(out, "vitrine_snapshot_writes_total", st.Objects)
		metrics.WriteCounterUint64(out, "vitrine_snapshot_unchanged_total", st.Unchanged)
		metrics.WriteCounterUint64(out, "vitrine_snapshot_bytes_total", st.Bytes)
		metrics.WriteCounterUint64(out, "vitrine_snapshot_records_total", st.Records)
		metrics.WriteCounterFloat64(out, "vitrine_snapshot_seconds_total", st.Duration.Seconds())
		metrics.WriteGaugeFloat64(out, "vitrine_snapshot_last_pass_seconds", st.Last.Took.Seconds())
		metrics.WriteGaugeUint64(out, "vitrine_snapshot_last_pass_bytes", uint64(st.Last.Bytes))
		metrics.WriteGaugeUint64(out, "vitrine_snapshot_last_pass_annex_bytes", uint64(st.Last.AnnexBytes))
	})
	g.Go("snapshots", func() error {
		defer nc.Close()
		return w.Run(ctx, every, func() bool { return rel.Stats().LeaseHeld })
	})
	return nil
}

// edgeSnapshots returns the option making an edge's follower bootstrap from the bucket's
// snapshots (read-only: direct gets), or none when on is false.
func edgeSnapshots(ctx context.Context, nc *nats.Conn, fc feed.Config, on bool) ([]func(*feed.Follower), error) {
	if !on {
		return nil, nil
	}
	js, err := fc.JetStream(nc)
	if err != nil {
		return nil, err
	}
	src, err := snapshot.NewSource(ctx, js, "")
	if err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	return []func(*feed.Follower){func(f *feed.Follower) { f.UseSnapshots(src) }}, nil
}

// observeFollowerSnapshots registers an edge follower's snapshot counters on set.
func observeFollowerSnapshots(set *metrics.Set, process string, fol *feed.Follower) {
	set.RegisterMetricsWriter(func(out io.Writer) {
		st := fol.Stats()
		metrics.WriteCounterUint64(out, fmt.Sprintf(`vitrine_follower_snapshot_bootstraps_total{process=%q}`, process), st.FromSnapshot)
		metrics.WriteCounterUint64(out, fmt.Sprintf(`vitrine_follower_snapshot_fallbacks_total{process=%q}`, process), st.SnapshotFallbacks)
	})
}
