package cluster

import (
	"context"
	"fmt"

	"vitrine/edge/replica"
	"vitrine/sync/feed"
	"vitrine/sync/snapshot"
)

// WriteSnapshots writes the per-shard snapshots of the state stream to the snapshot bucket in
// process, as the relay's snapshot writer does (incremental from the bucket's snapshots when
// there are usable ones, else a full pass), and returns what the pass wrote. Edges started afterwards with their default
// --snapshots bootstrap from them.
func (c *Cluster) WriteSnapshots(ctx context.Context) (snapshot.Result, error) {
	nc, js, err := c.jetStream()
	if err != nil {
		return snapshot.Result{}, err
	}
	defer nc.Close()
	// Unpaced (CPUShare 1): set-up, with no writes beside it to keep fast.
	w := snapshot.NewWriter(js, snapshot.WriterConfig{Feed: feed.Config{}.WithDefaults(), Annexes: replica.SnapshotAnnexes, CPUShare: 1, Logger: c.log})
	res, err := w.WriteAll(ctx)
	if err != nil {
		return res, fmt.Errorf("cluster: write snapshots: %w", err)
	}
	return res, nil
}
