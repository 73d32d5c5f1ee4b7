package feed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
)

// Config names the streams and their limits. Zero values mean the defaults.
type Config struct {
	// Prefix is the first subject token of every Vitrine subject (default "vitrine").
	Prefix string
	// Stream is the compacted state stream (default "VITRINE_STATE").
	Stream string
	// EventStream is the event stream read by webhook dispatchers (default "VITRINE_EVENTS").
	EventStream string
	// WorkStream is the origins' work queue (label batches; default "VITRINE_WORK").
	WorkStream string
	// Replicas of each stream (default 1; 3 in a clustered deployment).
	Replicas int
	// TombstoneTTL is the tombstone horizon: how long a deletion stays in the stream. An edge
	// disconnected for longer re-bootstraps, since it may have missed a deletion (default 7 days).
	TombstoneTTL time.Duration
	// DedupWindow is the stream's Nats-Msg-Id duplicate window (default 2 minutes). Correctness
	// never depends on it; tests shorten it.
	DedupWindow time.Duration
	// EventMaxAge is how long events are kept (default 7 days).
	EventMaxAge time.Duration
	// Domain is the JetStream domain of the cluster holding the streams, as a Follower connected
	// through a leaf node addresses it ($JS.<domain>.API); empty for a direct connection.
	Domain string
}

// WithDefaults returns c with zero values replaced by defaults.
func (c Config) WithDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = "vitrine"
	}
	if c.Stream == "" {
		c.Stream = "VITRINE_STATE"
	}
	if c.EventStream == "" {
		c.EventStream = "VITRINE_EVENTS"
	}
	if c.WorkStream == "" {
		c.WorkStream = "VITRINE_WORK"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.TombstoneTTL == 0 {
		c.TombstoneTTL = 7 * 24 * time.Hour
	}
	if c.DedupWindow == 0 {
		c.DedupWindow = 2 * time.Minute
	}
	if c.EventMaxAge == 0 {
		c.EventMaxAge = 7 * 24 * time.Hour
	}
	return c
}

// Subject returns the subject of a change key ("pub.product.12") of a log.
func (c Config) Subject(shard int, log, key string) string {
	if log == schema.PlatformLog {
		// The registry is public by nature; its subjects drop the visibility token.
		_, rest, _ := strings.Cut(key, ".")
		return c.Prefix + "." + schema.PlatformLog + "." + rest
	}
	return c.Prefix + "." + strconv.Itoa(shard) + "." + log + "." + key
}

// HeadSubject returns the subject of a log's head marker.
func (c Config) HeadSubject(shard int, log string) string {
	return c.Subject(shard, log, string(schema.Pub)+"."+string(schema.KindHead)+"."+schema.HeadID)
}

// EventSubject returns the subject of a domain event.
func (c Config) EventSubject(tenant, kind string) string {
	return c.Prefix + "_events." + tenant + "." + strings.ReplaceAll(kind, ".", "_")
}

// WakeSubject is the core NATS subject on which origins hint a relay that the outbox has rows.
// It is a hint only: the relay polls anyway.
func (c Config) WakeSubject() string { return c.Prefix + "_wake" }

// CredentialsSubject is the core NATS subject on which an origin tells the others the tenants
// whose users or application passwords it changed (one tenant id per line), so that they forget
// the credentials they verified (store.DB.ForgetCredentials). A hint: what it misses expires
// after the store's credential TTL.
func (c Config) CredentialsSubject() string { return c.Prefix + "_credentials" }

// LabelWorkSubject is the subject of label-batch work in WorkStream.
func (c Config) LabelWorkSubject() string { return c.Prefix + "_work.labels" }

// PublicFilters returns the subject filter of an edge serving shards (all shards when empty):
// the public subjects of their tenants and the tenant registry.
func (c Config) PublicFilters(shards []int) []string {
	f := []string{c.Prefix + "." + schema.PlatformLog + ".>"}
	if len(shards) == 0 {
		return append(f, c.Prefix+".*.*.pub.>")
	}
	for _, s := range shards {
		f = append(f, c.Prefix+"."+strconv.Itoa(s)+".*.pub.>")
	}
	return f
}

// AllFilters returns the subject filter of the origin: every subject of the state stream.
func (c Config) AllFilters() []string { return []string{c.Prefix + ".>"} }

// epochKey is the stream metadata key holding the cluster epoch.
const epochKey = "vitrine_epoch"

// Stream metadata keys. A regional mirror of the state stream (package region) copies its
// source's epoch under MetadataEpoch and records the source's creation time under
// MetadataSourceCreated, so that it counts as the same stream (StreamIdentity).
const (
	MetadataEpoch         = epochKey
	MetadataSourceCreated = "vitrine_source_created"
)

// StreamIdentity returns what identifies the state stream's content: its epoch and its creation
// time, or for a regional mirror the creation time of the stream it mirrors (MetadataSourceCreated;
// the mirror's own creation time when the value is missing or unreadable). Snapshots name the
// stream they were taken of by these two values.
func StreamIdentity(info *jetstream.StreamInfo) (epoch string, created time.Time) {
	epoch, created = info.Config.Metadata[epochKey], info.Created
	if v, ok := info.Config.Metadata[MetadataSourceCreated]; ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			created = t
		}
	}
	return epoch, created
}

// MirrorStaleAfter is how long a regional mirror may go without hearing from its source (the
// source sends a heartbeat every second) before StreamCurrent says it is not current.
const MirrorStaleAfter = 3 * time.Second

// StreamCurrent reports whether the stream is as current as its source: always for the state
// stream itself; for a regional mirror, when it heard from its source within MirrorStaleAfter.
// A Follower of a mirror cut off from the centre stops reporting the stream as heard from, so
// its Sink's staleness grows as it would for a Follower that lost the centre.
func StreamCurrent(info *jetstream.StreamInfo) bool {
	mi := info.Mirror
	return mi == nil || (mi.Active >= 0 && mi.Active < MirrorStaleAfter)
}

// Header names Vitrine adds to stream messages.
const (
	HeaderEpoch = "Vitrine-Epoch"
	// Event messages carry their kind, their store's id and their creation time (RFC 3339,
	// nanoseconds) beside the subject; the message id (Nats-Msg-Id) is the event's id.
	HeaderEventKind    = "Vitrine-Event-Kind"
	HeaderEventTenant  = "Vitrine-Event-Tenant"
	HeaderEventCreated = "Vitrine-Event-Created"
)

// MinServerVersion is the oldest nats-server with what the design needs: per-message TTL and
// the head-subject fence (Nats-Expected-Last-Subject-Sequence-Subject, 2.11), and streams that
// allow atomic publish (2.12), which relays of releases before feed.Publish use during an
// upgrade. Debian's 2.9.10 is refused.
const MinServerVersion = "2.12.0"

// CheckServer refuses a connection to a nats-server older than MinServerVersion.
func CheckServer(nc *nats.Conn) error {
	v := nc.ConnectedServerVersion()
	if !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("feed: nats-server %s at %s is too old: Vitrine needs %s or newer (run `vitrine nats`)",
			v, nc.ConnectedUrlRedacted(), MinServerVersion)
	}
	return nil
}

func versionAtLeast(v, min string) bool {
	parse := func(s string) [3]int {
		var out [3]int
		s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "-")
		for i, p := range strings.SplitN(s, ".", 3) {
			out[i], _ = strconv.Atoi(p)
		}
		return out
	}
	a, b := parse(v), parse(min)
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

// ErrEpochMismatch is returned when the stream belongs to another database than the caller's.
var ErrEpochMismatch = errors.New("feed: the stream belongs to another cluster epoch")

// stateStreamConfig is the configuration of the compacted state stream.
func (c Config) stateStreamConfig(epoch string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:               c.Stream,
		Description:        "Vitrine replicated state: the latest state of every entity, per subject",
		Subjects:           []string{c.Prefix + ".>"},
		Storage:            jetstream.FileStorage,
		Replicas:           c.Replicas,
		MaxMsgsPerSubject:  1,
		Discard:            jetstream.DiscardOld,
		Duplicates:         c.DedupWindow,
		AllowMsgTTL:        true,
		AllowAtomicPublish: true,
		// Direct gets answer the sequence in a header, which a message's own headers can shadow:
		// the relay reads heads through the regular API, whose sequence comes from the server.
		AllowDirect: false,
		Metadata:    map[string]string{epochKey: epoch},
	}
}

// EnsureStream returns the state stream, creating it for epoch when it does not exist. It
// returns ErrEpochMismatch (wrapped, with both epochs) when the stream exists for another epoch.
func EnsureStream(ctx context.Context, js jetstream.JetStream, c Config, epoch string) (jetstream.Stream, error) {
	c = c.WithDefaults()
	s, err := js.Stream(ctx, c.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, c.stateStreamConfig(epoch))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, c.Stream)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("feed: state stream %s: %w", c.Stream, err)
	}
	got := s.CachedInfo().Config.Metadata[epochKey]
	if got != epoch {
		return nil, fmt.Errorf("%w: stream %s has epoch %q, the database has %q: run `vitrine replica rebuild`",
			ErrEpochMismatch, c.Stream, got, epoch)
	}
	// Keep what may be tuned (dedup window, replicas) or was changed (direct gets) in line. A
	// replica count is changed in place (nats-server adds or removes peers and copies the
	// messages): the stream keeps its epoch, creation time and sequences, so edges do not
	// bootstrap again.
	if cfg := s.CachedInfo().Config; cfg.Duplicates != c.DedupWindow || cfg.AllowDirect || max(cfg.Replicas, 1) != c.Replicas {
		cfg.Duplicates, cfg.AllowDirect, cfg.Replicas = c.DedupWindow, false, c.Replicas
		if s, err = js.UpdateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("feed: update stream %s: %w", c.Stream, err)
		}
	}
	return s, nil
}

// RecreateStream deletes the state stream, if any, and creates it empty for epoch.
func RecreateStream(ctx context.Context, js jetstream.JetStream, c Config, epoch string) (jetstream.Stream, error) {
	c = c.WithDefaults()
	if err := js.DeleteStream(ctx, c.Stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("feed: delete stream %s: %w", c.Stream, err)
	}
	// nats-server 2.15 may refuse a create that follows a delete of the same stream at once
	// ("error creating store for stream": its log said "could not create storage directory -
	// mkdir …/streams: no such file or directory", the old store's directory being removed
	// meanwhile; seen once in ~200 runs of TestRegionSourceRecreated under load). The create
	// is tried again after a short wait: creating the same configuration twice is harmless.
	var s jetstream.Stream
	var err error
	for attempt := 1; ; attempt++ {
		s, err = js.CreateStream(ctx, c.stateStreamConfig(epoch))
		var apiErr *jetstream.APIError
		if err == nil || attempt == 10 || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Description, "creating store") {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("feed: create stream %s: %w", c.Stream, err)
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("feed: create stream %s: %w", c.Stream, err)
	}
	return s, nil
}

// StreamEpoch returns the epoch of the state stream, or jetstream.ErrStreamNotFound.
func StreamEpoch(ctx context.Context, js jetstream.JetStream, c Config) (string, error) {
	c = c.WithDefaults()
	s, err := js.Stream(ctx, c.Stream)
	if err != nil {
		return "", err
	}
	return s.CachedInfo().Config.Metadata[epochKey], nil
}

// EnsureEventStream returns the event stream, creating it when missing.
func EnsureEventStream(ctx context.Context, js jetstream.JetStream, c Config) (jetstream.Stream, error) {
	c = c.WithDefaults()
	s, err := EnsureStreamConfig(ctx, js, jetstream.StreamConfig{
		Name:        c.EventStream,
		Description: "Vitrine domain events for webhook delivery",
		Subjects:    []string{c.Prefix + "_events.>"},
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      c.EventMaxAge,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("feed: event stream %s: %w", c.EventStream, err)
	}
	return s, nil
}

// EnsureStreamConfig returns the stream cfg names, creating it when missing and updating it only
// when a field cfg sets (subjects, description, storage, replicas, retention, max age, duplicate
// window) differs from the stream's. Processes start and restart while others use the stream,
// and nats-server 2.15 races a stream update (even one that changes nothing) against a consumer
// being created on the same stream (found by the race detector in make test: filestore
// UpdateConfig against ConsumerStore), so an unchanged stream is never updated.
func EnsureStreamConfig(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, cfg.Name)
		}
	}
	if err != nil {
		return nil, err
	}
	have := s.CachedInfo().Config
	replicas := max(cfg.Replicas, 1)
	if slices.Equal(have.Subjects, cfg.Subjects) && have.Description == cfg.Description && have.Storage == cfg.Storage &&
		max(have.Replicas, 1) == replicas && have.Retention == cfg.Retention && have.MaxAge == cfg.MaxAge &&
		(cfg.Duplicates == 0 || have.Duplicates == cfg.Duplicates) {
		return s, nil
	}
	return js.UpdateStream(ctx, cfg)
}

// JetStream returns the JetStream API of nc in the configured domain (see Domain).
func (c Config) JetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	if c.Domain != "" {
		return jetstream.NewWithDomain(nc, c.Domain)
	}
	return jetstream.New(nc)
}
