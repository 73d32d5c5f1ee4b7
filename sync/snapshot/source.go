package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/blob"
	"vitrine/sync/feed"
)

// DefaultBucket is the object store bucket holding the snapshots.
const DefaultBucket = "vitrine-snapshots"

// PlatformObject is the name of the tenant registry's snapshot.
const PlatformObject = "platform"

// ObjectName returns the object name of a shard's snapshot ("shard-<n>"), or PlatformObject for
// schema.PlatformLog.
func ObjectName(shard string) string {
	if shard == schema.PlatformLog {
		return PlatformObject
	}
	return "shard-" + shard
}

// MaxObjectBytes bounds a snapshot a Source reads into memory.
const MaxObjectBytes = 4 << 30

// Source reads snapshots from the bucket for a feed.Follower (it implements
// feed.SnapshotSource). It reads through the stream's direct get API only (blob.ObjectStore), so
// an edge needs no consumer, no publish and no stream API beyond INFO on the bucket.
type Source struct {
	store *blob.ObjectStore
	// Now is the clock snapshots' ages are measured with (time.Now when nil).
	Now func() time.Time
	// Parallel is how many snapshots are fetched at once (default 4).
	Parallel int
}

// NewSource returns a Source reading bucket (DefaultBucket when "") through js, made with the
// JetStream domain when the connection goes through a leaf node. The bucket need not exist yet:
// until a writer creates it every load fails as missing and the Follower reads the stream.
func NewSource(ctx context.Context, js jetstream.JetStream, bucket string) (*Source, error) {
	if bucket == "" {
		bucket = DefaultBucket
	}
	st, err := blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: bucket, Timeout: 5 * time.Second, ReadAhead: 2 << 20})
	if err != nil {
		return nil, err
	}
	return &Source{store: st}, nil
}

// Fetch reads and verifies one object: framing and checksum (Open) and, when want is not nil,
// its stream, shard and age.
func (s *Source) Fetch(ctx context.Context, shard string, want *feed.SnapshotWant) (*Snapshot, int64, error) {
	name := ObjectName(shard)
	obj, err := s.store.Open(ctx, name, 0)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return nil, 0, fmt.Errorf("%s: missing: %w", name, err)
		}
		return nil, 0, fmt.Errorf("%s: unreachable: %w", name, err)
	}
	defer obj.Close()
	size := obj.Info().Size
	if size > MaxObjectBytes {
		return nil, 0, fmt.Errorf("%s: %d bytes, over the %d a snapshot may have", name, size, int64(MaxObjectBytes))
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(obj, b); err != nil {
		return nil, 0, fmt.Errorf("%s: read: %w", name, err)
	}
	snap, err := Open(b)
	if err == nil {
		_, err = snap.Annexes()
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	if want != nil {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		if err := snap.Check(want.Epoch, want.Created, shard, want.MaxAge, now()); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	return snap, size, nil
}

// Snapshots implements feed.SnapshotSource: the registry's snapshot, then each wanted shard's
// (every shard the registry's snapshot lists when want.Shards is nil). A wanted shard the
// registry's snapshot does not list had no public message at its ListedAt: it needs no
// snapshot, and the Follower reads it from the stream from there.
func (s *Source) Snapshots(ctx context.Context, want feed.SnapshotWant) (*feed.SnapshotSet, error) {
	plat, size, err := s.Fetch(ctx, schema.PlatformLog, &want)
	if err != nil {
		return nil, err
	}
	ph := plat.Header()
	shards := want.Shards
	if shards == nil {
		shards = ph.Shards
	} else {
		shards = slices.DeleteFunc(slices.Clone(shards), func(sh string) bool { return !slices.Contains(ph.Shards, sh) })
	}
	set := &feed.SnapshotSet{Floor: ph.ListedAt, Bytes: size}
	set.Parts = append(set.Parts, part(schema.PlatformLog, plat))
	snaps := make([]*Snapshot, len(shards))
	sizes := make([]int64, len(shards))
	errs := make([]error, len(shards))
	par := s.Parallel
	if par <= 0 {
		par = 4
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, sh := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			snaps[i], sizes[i], errs[i] = s.Fetch(ctx, sh, &want)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for i := range shards {
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	for i, sh := range shards {
		set.Parts = append(set.Parts, part(sh, snaps[i]))
		set.Bytes += sizes[i]
	}
	return set, nil
}

func part(shard string, s *Snapshot) feed.SnapshotPart {
	annexes, _ := s.Annexes() // Fetch refused a snapshot whose annexes do not decode
	return feed.SnapshotPart{Shard: shard, Seq: s.Header().Seq, Records: func(fn func(subject string, data []byte) error) error {
		return s.Records(func(r Record) error { return fn(r.Subject, r.Data) })
	}, Changes: s.Changes, Annexes: annexes}
}

// Reason names the kind of a load failure for metrics and logs: "missing", "truncated",
// "corrupt", "version", "epoch", "stream", "too old", "shard" or "unreachable".
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, blob.ErrNotFound):
		return "missing"
	case errors.Is(err, ErrTruncated):
		return "truncated"
	case errors.Is(err, ErrCorrupt):
		return "corrupt"
	case errors.Is(err, ErrVersion):
		return "version"
	case errors.Is(err, ErrEpoch):
		return "epoch"
	case errors.Is(err, ErrStream):
		return "stream"
	case errors.Is(err, ErrTooOld):
		return "too old"
	case errors.Is(err, ErrShard):
		return "shard"
	}
	return "unreachable"
}

// shardNumber reports whether s is a shard number token.
func shardNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 31)
	return err == nil
}

// Part returns s as the part of a feed.SnapshotSet for its shard.
func Part(s *Snapshot) feed.SnapshotPart { return part(s.Header().Shard, s) }
