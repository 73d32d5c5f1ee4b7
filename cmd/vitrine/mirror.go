package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/sync/region"
)

// runMirror is `vitrine mirror`: beside a region's leaf node (its own JetStream domain), it keeps
// the leaf's mirrors of the central state stream (public subjects only) and object buckets
// (package region). Run one or two per region: every pass converges on the same mirrors.
func runMirror(ctx context.Context, args []string) error {
	f := newFlags("mirror")
	c := f.common()
	domain := f.String("domain", "VITRINE_REGION_DOMAIN", "", "JetStream domain of the region's leaf node, where the mirrors live (required, e.g. eu)")
	source := f.String("source-domain", "VITRINE_SOURCE_DOMAIN", "central", "JetStream domain of the central cluster holding the streams")
	ops := f.String("ops-addr", "VITRINE_OPS_ADDR", "127.0.0.1:9094", "address of /metrics, /healthz, /readyz (off to disable)")
	snapBucket := f.String("snapshot-bucket", "VITRINE_SNAPSHOT_BUCKET", "vitrine-snapshots", "snapshot bucket to mirror (- for none)")
	mediaBucket := f.String("media-bucket", "VITRINE_MEDIA_BUCKET", "vitrine-media", "media bucket to mirror (- for none)")
	replicas := f.Int("replicas", "VITRINE_MIRROR_REPLICAS", 1, "replicas of each mirror (the leaf node's cluster size, up to 3)")
	interval := f.Duration("interval", "VITRINE_MIRROR_INTERVAL", 2*time.Second, "how often the mirrors are checked against their sources")
	staleAfter := f.Duration("stale-after", "VITRINE_MIRROR_STALE_AFTER", 10*time.Second, "no contact with the centre for this long makes /readyz fail")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *domain == "" {
		return fmt.Errorf("mirror: --domain is required: the region's JetStream domain (deploy/nats/leafnode-edge-region.conf)")
	}
	log := c.logger("mirror")
	nc, err := c.dialNATS("vitrine-mirror", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	m, err := region.New(nc, region.Config{Feed: c.feed(), Domain: *domain, SourceDomain: *source,
		SnapshotBucket: *snapBucket, MediaBucket: *mediaBucket, Replicas: *replicas, Interval: *interval,
		StaleAfter: *staleAfter, Logger: log})
	if err != nil {
		return err
	}
	set := metrics.NewSet()
	observeBuild(set)
	set.RegisterMetricsWriter(func(w io.Writer) { writeMirrorMetrics(w, m.Status(), time.Now()) })
	serveOpsDetail(ctx, *ops, *c.profiles, set, func(now time.Time) (int, []byte) {
		ok, body := m.Readiness(now)
		if !ok {
			return fasthttp.StatusServiceUnavailable, body
		}
		return fasthttp.StatusOK, body
	}, log)
	log.Info("region mirror running", "domain", *domain, "source_domain", *source)
	return m.Run(ctx)
}

// writeMirrorMetrics writes the mirrors' state in Prometheus text format.
func writeMirrorMetrics(w io.Writer, sts []region.Status, now time.Time) {
	for _, st := range sts {
		l := fmt.Sprintf(`{stream=%q}`, st.Stream)
		metrics.WriteGaugeUint64(w, "vitrine_region_mirror_exists"+l, b2u(st.Exists))
		metrics.WriteGaugeUint64(w, "vitrine_region_mirror_error"+l, b2u(st.Err != ""))
		metrics.WriteGaugeUint64(w, "vitrine_region_mirror_lag_messages"+l, st.Lag)
		metrics.WriteGaugeUint64(w, "vitrine_region_mirror_last_seq"+l, st.LastSeq)
		metrics.WriteGaugeUint64(w, "vitrine_region_source_last_seq"+l, st.SourceLastSeq)
		if st.Active >= 0 {
			metrics.WriteGaugeFloat64(w, "vitrine_region_mirror_active_seconds"+l, st.Active.Seconds())
		}
		if !st.LastContact.IsZero() {
			metrics.WriteGaugeFloat64(w, "vitrine_region_source_contact_age_seconds"+l, now.Sub(st.LastContact).Seconds())
		}
		metrics.WriteCounterUint64(w, "vitrine_region_mirror_recreated_total"+l, st.Recreated)
		metrics.WriteCounterUint64(w, "vitrine_region_mirror_pruned_subjects_total"+l, st.Pruned)
		metrics.WriteCounterUint64(w, "vitrine_region_mirror_cut_off_answers_total"+l, st.CutOff)
	}
}
