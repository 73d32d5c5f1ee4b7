package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"vitrine/edge/search"
	"vitrine/schema"
	"vitrine/sync/feed"
)

// Building a tenant's search index is about two fifths of what a snapshot bootstrap costs (0.93
// of 2.41 s of CPU for a store of 100k products). A snapshot therefore carries, per tenant, an
// image of the index it would build (feed.AnnexSearchIndex): the snapshot writer loads the
// shard into a replica exactly as an edge does (SnapshotAnnexes) and appends each tenant's
// index image. An edge takes the image at the tenant's first apply when the image is of the
// version and currency that apply reaches, and search.LoadImage checks that the image was made
// over exactly the documents the edge holds (a hash of every field the index reads) by this
// build's tokeniser; otherwise, and for a version 2 snapshot, the edge builds the index from
// its products as before. Either way the tenant's index is the one search.Build would make.

// errImageNotFirst: the image arrived for a tenant whose index already existed (not a first
// apply), which has nothing to build.
var errImageNotFirst = errors.New("the tenant's index was not built in one pass")

// Annex takes a snapshot's annex (feed.AnnexSink): a tenant's search index image, kept until
// the tenant's first apply or the generation's first checkpoint. Follower goroutine only.
func (r *Replica) Annex(a feed.Annex) {
	if a.Kind != feed.AnnexSearchIndex {
		return
	}
	g := r.target()
	if g.images == nil {
		g.images = map[string]feed.Annex{}
	}
	g.images[a.Log] = a
}

// imageIndex reads the index of the documents docs of a snapshot at version in currency cur
// from img.
func imageIndex(img *feed.Annex, version int64, cur string, docs []*search.Doc) (*search.Index, error) {
	switch {
	case img.Version != version:
		return nil, fmt.Errorf("image of version %d, the tenant's first apply is at %d", img.Version, version)
	case img.Params != cur:
		return nil, fmt.Errorf("image in currency %q, the store's is %q", img.Params, cur)
	}
	return search.LoadImage(img.Data, docs, search.Options{})
}

// SnapshotAnnexes returns the annexes of a shard's snapshot: the search index image of every
// tenant of shard (its records in stream order) that is served from it, with registry the
// registry's records (the stores' default currencies). It loads both into a replica of their
// own, as an edge would (feed.DeliverSnapshots, then a checkpoint), so an image is of the index
// an edge makes from the same records, at the version its first apply reaches.
func SnapshotAnnexes(ctx context.Context, registry, shard feed.SnapshotPart) ([]feed.Annex, error) {
	r := New(Config{Logger: slog.New(slog.DiscardHandler)})
	r.Reset("snapshot-annexes")
	// Malformed records are skipped here as an edge skips them: the images stay valid.
	if _, _, err := feed.DeliverSnapshots(ctx, r, []feed.SnapshotPart{registry, shard}); err != nil {
		return nil, err
	}
	r.Checkpoint()
	g := r.gen.Load()
	logs := make([]string, 0, len(g.tenants))
	for log := range g.tenants {
		logs = append(logs, log)
	}
	slices.SortFunc(logs, strings.Compare) // the same snapshot bytes for the same records
	var out []feed.Annex
	for _, log := range logs {
		t := g.tenants[log]
		if log == schema.PlatformLog || !t.Ready() {
			continue
		}
		s := t.snap.Load()
		if s.index == nil || s.index.Len() == 0 {
			continue
		}
		img, err := s.index.AppendImage(nil)
		if err != nil {
			continue // not an index Build made (the tenant's state moved after its first apply)
		}
		out = append(out, feed.Annex{Kind: feed.AnnexSearchIndex, Log: log, Version: s.Version, Params: s.indexCur, Data: img})
	}
	return out, nil
}
