package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"vitrine/sync/blob"
	"vitrine/sync/feed"
)

// mediaFlags name the blob store of media files: `vitrine origin` and `vitrine dev` write it,
// and edges read it (the same flags serve `vitrine edge`).
type mediaFlags struct {
	store, bucket *string
	maxUpload     *int64
}

// media declares the media flags; def is the store's default (dev: a directory under its data
// directory, "" until it is known; origin: nats).
func (f flags) media(def string) mediaFlags {
	return mediaFlags{
		store: f.String("media-store", "VITRINE_MEDIA_STORE", def,
			"blob store of media files: fs:<dir> (a directory; machines sharing it) or nats (a JetStream object store bucket)"),
		bucket: f.String("media-bucket", "VITRINE_MEDIA_BUCKET", blob.DefaultBucket, "JetStream object store bucket of media files (with --media-store nats)"),
		maxUpload: f.Int64("media-max-upload", "VITRINE_MEDIA_MAX_UPLOAD", 32<<20,
			"largest media file an upload may carry, in bytes (edges must let such a body through)"),
	}
}

// openMediaStore opens the media blob store named by spec: "fs:<dir>" (created when missing)
// or "nats": the JetStream object store bucket on nc (in fc's JetStream domain: an edge behind a
// leaf node reads the central bucket), which writer creates or updates (the origin; edges bind to
// the existing bucket, as their NATS role may not create streams).
func openMediaStore(ctx context.Context, spec, bucket string, nc *nats.Conn, fc feed.Config, writer bool) (blob.Store, error) {
	switch {
	case strings.HasPrefix(spec, "fs:"):
		dir := strings.TrimPrefix(spec, "fs:")
		if dir == "" {
			return nil, errors.New("--media-store fs:<dir> needs a directory")
		}
		return blob.NewFS(dir)
	case spec == "nats":
		if nc == nil {
			return nil, errors.New("--media-store nats needs a NATS connection")
		}
		js, err := fc.JetStream(nc)
		if err != nil {
			return nil, err
		}
		return blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Bucket: bucket, Create: writer, Replicas: fc.Replicas})
	}
	return nil, fmt.Errorf("--media-store %q: want fs:<dir> or nats", spec)
}
