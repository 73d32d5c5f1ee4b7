package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/feed"
)

// Config says what a region mirrors and from where. Zero values mean the defaults.
type Config struct {
	// Feed names the state stream and the subject prefix (feed.Config defaults).
	Feed feed.Config
	// Domain is the region's JetStream domain, the leaf node's own (required, e.g. "eu"). The
	// mirrors are managed through $JS.<Domain>.API, never the plain $JS.API: a Mirror connected
	// to the wrong server by mistake (the centre) reaches no JetStream rather than creating
	// mirrors there.
	Domain string
	// SourceDomain is the JetStream domain of the central cluster (default "central").
	SourceDomain string
	// SnapshotBucket and MediaBucket are the object store buckets mirrored besides the state
	// stream (defaults "vitrine-snapshots" and "vitrine-media"; "-" mirrors none).
	SnapshotBucket, MediaBucket string
	// Replicas of each mirror (default 1).
	Replicas int
	// Interval is how often the mirrors are checked against their sources (default 2s).
	Interval time.Duration
	// PruneEvery is how often the object bucket mirrors drop what their sources deleted
	// (default 1m; negative never).
	PruneEvery time.Duration
	// StaleAfter is how long without contact with the sources makes the region not ready
	// (default 10s).
	StaleAfter time.Duration
	// Logger receives what Mirror does (slog.Default when nil).
	Logger *slog.Logger
}

// WithDefaults returns c with zero values replaced by defaults.
func (c Config) WithDefaults() Config {
	c.Feed = c.Feed.WithDefaults()
	if c.SourceDomain == "" {
		c.SourceDomain = "central"
	}
	if c.SnapshotBucket == "" {
		c.SnapshotBucket = "vitrine-snapshots"
	}
	if c.MediaBucket == "" {
		c.MediaBucket = "vitrine-media"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Interval <= 0 {
		c.Interval = 2 * time.Second
	}
	if c.PruneEvery == 0 {
		c.PruneEvery = time.Minute
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Stream is one stream a region mirrors.
type Stream struct {
	// Name is the stream's name, the same at the source and in the region.
	Name string
	// Filters are the subjects mirrored; nil mirrors every subject.
	Filters []string
	// State marks the state stream: the mirror keeps one message per subject, honours
	// per-message TTLs and carries the source's epoch.
	State bool
	// Bucket is the object store bucket the stream holds ("" for the state stream): its
	// mirror is pruned of the subjects the source deleted.
	Bucket string
}

// Streams returns the streams a region mirrors under c.
func (c Config) Streams() []Stream {
	c = c.WithDefaults()
	out := []Stream{{Name: c.Feed.Stream, Filters: StateFilters(c.Feed), State: true}}
	for _, b := range []string{c.SnapshotBucket, c.MediaBucket} {
		if b != "-" {
			out = append(out, Stream{Name: "OBJ_" + b, Bucket: b})
		}
	}
	return out
}

// StateFilters are the subjects of the state stream a region mirrors: what an edge's follower
// reads (feed.Config.PublicFilters of every shard), spelled so that no two filters overlap, as
// nats-server requires of a mirror's filters: the registry's subjects have exactly two tokens
// after "_platform" (<prefix>._platform.tenant.<slug>, <prefix>._platform.log.head), a tenant's
// public subjects at least three after the shard and tenant.
func StateFilters(c feed.Config) []string {
	c = c.WithDefaults()
	return []string{c.Prefix + "." + schema.PlatformLog + ".*.*", c.Prefix + ".*.*." + string(schema.Pub) + ".>"}
}

// Status is the state of one mirror.
type Status struct {
	Stream string `json:"stream"`
	// Exists is true once the mirror was created.
	Exists bool `json:"exists"`
	// SourceMissing is true when the centre answered that the source does not exist (not
	// created yet: a bucket nothing wrote to, or a stream deleted for a rebuild).
	SourceMissing bool `json:"source_missing,omitempty"`
	// Epoch and SourceCreated identify the source the mirror copies (its metadata).
	Epoch         string    `json:"epoch,omitempty"`
	SourceCreated time.Time `json:"source_created,omitzero"`
	// LastSeq is the mirror's last sequence; SourceLastSeq the source's at the last contact.
	LastSeq       uint64 `json:"last_seq"`
	SourceLastSeq uint64 `json:"source_last_seq"`
	// Lag is the number of messages the server reports the mirror behind its source.
	Lag uint64 `json:"lag"`
	// Active is how long ago the mirror last heard from its source, as the leaf node reports
	// it (negative: never).
	Active time.Duration `json:"active_ns"`
	// LastContact is when Mirror last read the source's stream information.
	LastContact time.Time `json:"last_contact,omitzero"`
	// Recreated counts the mirrors deleted and created again because the source was recreated.
	Recreated uint64 `json:"recreated"`
	// Pruned counts the subjects purged because the source no longer holds them.
	Pruned uint64 `json:"pruned"`
	// CutOff counts the leaf node's consumer requests for this mirror that Mirror answered
	// itself because the centre was out of reach (see Run).
	CutOff uint64 `json:"cut_off_answers"`
	// Err is the last failure: of the mirror as the server reports it, or of Mirror's own step.
	Err string `json:"error,omitempty"`
}

// Mirror creates and keeps the region's mirrors. Its methods are safe for concurrent use.
type Mirror struct {
	nc      *nats.Conn
	cfg     Config
	streams []Stream
	local   jetstream.JetStream // the region's domain
	source  jetstream.JetStream // the central domain
	log     *slog.Logger

	mu        sync.Mutex
	status    map[string]*Status
	lastPrune map[string]time.Time
	passes    uint64
}

// New returns a Mirror working through nc, a connection to the region's leaf node with the
// mirror role's credentials.
func New(nc *nats.Conn, cfg Config) (*Mirror, error) {
	cfg = cfg.WithDefaults()
	if cfg.Domain == "" {
		return nil, errors.New("region: the region's JetStream domain is required")
	}
	if cfg.Domain == cfg.SourceDomain {
		return nil, fmt.Errorf("region: the region's domain %q is the source's", cfg.Domain)
	}
	local, err := jetstream.NewWithDomain(nc, cfg.Domain)
	if err != nil {
		return nil, err
	}
	source, err := jetstream.NewWithDomain(nc, cfg.SourceDomain)
	if err != nil {
		return nil, err
	}
	m := &Mirror{nc: nc, cfg: cfg, streams: cfg.Streams(), local: local, source: source, log: cfg.Logger,
		status: map[string]*Status{}, lastPrune: map[string]time.Time{}}
	for _, s := range m.streams {
		m.status[s.Name] = &Status{Stream: s.Name, Active: -1}
	}
	return m, nil
}

// Run checks the mirrors every Interval until ctx ends. It returns nil then: failures are
// logged, kept in Status, and retried at the next pass.
//
// While it runs, Mirror also answers the leaf node's requests for a mirror consumer at the centre
// when the centre is out of reach. nats-server's mirror sends such a request when it has heard
// nothing for 10 s, and during a partition the request goes nowhere: the mirror then waits 30 s
// for an answer before anything else, and a link that returns meanwhile is not used until that
// wait ends (a 15 s partition took 35 s to heal, measured). Answered at once with an error, the
// mirror is free when the leaf connection returns, and nats-server retries it then (within ~2 s).
// Mirror answers only when its own request to the source, made on receiving one, gets no answer
// within a second: with the link up the centre answers the mirror itself.
func (m *Mirror) Run(ctx context.Context) error {
	subs := m.answerWhenCutOff(ctx)
	defer func() {
		for _, sub := range subs {
			sub.Unsubscribe()
		}
	}()
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		m.Sync(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sync makes one pass over the mirrors: each one is created when missing, recreated when its
// source was recreated, and its status refreshed. It returns the first failure (every stream is
// tried anyway).
func (m *Mirror) Sync(ctx context.Context) error {
	var first error
	for _, s := range m.streams {
		if err := m.syncStream(ctx, s); err != nil {
			if first == nil {
				first = err
			}
			m.setErr(s.Name, err)
			if ctx.Err() == nil {
				m.log.Warn("region mirror", "stream", s.Name, "err", err)
			}
		}
	}
	m.mu.Lock()
	m.passes++
	m.mu.Unlock()
	return first
}

// cutOffResponse is a JetStream API error answer to a consumer create request (503, "JetStream
// system temporarily unavailable"): nats-server's mirror retries after it.
const cutOffResponse = `{"type":"io.nats.jetstream.api.v1.consumer_create_response","error":{"code":503,"err_code":10008,"description":"the region is cut off from its source domain (answered by vitrine mirror)"}}`

// answerWhenCutOff subscribes to the consumer create requests of the region's mirrors (the API
// subject nats-server uses for a mirror: CONSUMER.CREATE.<stream> in the source domain). Each
// request starts a goroutine that ends within a second (or when ctx ends).
//
// The subscription names the domain with a wildcard on purpose: the centre refuses a leaf node's
// interest in its own domain's API subjects (it closes the leaf connection over a literal one),
// while a wildcard interest is accepted there and filtered, so nothing of the centre's reaches
// it. Requests of another domain than the source's are ignored.
func (m *Mirror) answerWhenCutOff(ctx context.Context) []*nats.Subscription {
	var subs []*nats.Subscription
	prefix := "$JS." + m.cfg.SourceDomain + ".API."
	for _, s := range m.streams {
		name := s.Name
		subj := "$JS.*.API.CONSUMER.CREATE." + name
		sub, err := m.nc.Subscribe(subj, func(msg *nats.Msg) {
			if msg.Reply != "" && strings.HasPrefix(msg.Subject, prefix) {
				go m.answerIfCutOff(ctx, name, msg)
			}
		})
		if err != nil {
			m.log.Warn("region mirror: cannot watch the mirror's consumer requests", "subject", subj, "err", err)
			continue
		}
		subs = append(subs, sub)
	}
	return subs
}

// answerIfCutOff answers a mirror's consumer request with an error when the source does not
// answer a stream information request within a second.
func (m *Mirror) answerIfCutOff(ctx context.Context, name string, msg *nats.Msg) {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := m.source.Stream(cctx, name)
	if err == nil || errors.Is(err, jetstream.ErrStreamNotFound) || ctx.Err() != nil {
		return // the centre is there: it answers the mirror itself
	}
	if msg.Respond([]byte(cutOffResponse)) == nil {
		m.mu.Lock()
		m.status[name].CutOff++
		m.mu.Unlock()
	}
}

// Passes returns how many passes Sync made.
func (m *Mirror) Passes() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.passes
}

func (m *Mirror) setErr(name string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status[name].Err = err.Error()
}

const requestTimeout = 5 * time.Second

// syncStream brings one mirror in line with its source.
func (m *Mirror) syncStream(ctx context.Context, s Stream) error {
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var src *jetstream.StreamInfo
	srcStream, err := m.source.Stream(cctx, s.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		// Not created yet, or deleted for a rebuild: the mirror keeps what it has, so the
		// region keeps serving, until a source appears.
		m.touchContact(s.Name, true)
	case err != nil:
		// The centre is unreachable: nothing to decide on, the mirror stays as it is.
		m.mu.Lock()
		was := m.status[s.Name].Err
		m.mu.Unlock()
		err = fmt.Errorf("source %s in domain %s unreachable: %w", s.Name, m.cfg.SourceDomain, err)
		if was == "" && ctx.Err() == nil {
			m.log.Warn("region cut off from its source: the mirror keeps its last data", "stream", s.Name, "err", err)
		}
		m.refresh(ctx, s.Name, nil, err)
		return nil
	default:
		src = srcStream.CachedInfo()
		m.touchContact(s.Name, false)
	}

	mctx, mcancel := context.WithTimeout(ctx, requestTimeout)
	defer mcancel()
	cur, err := m.local.Stream(mctx, s.Name)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("mirror %s: %w", s.Name, err)
	}
	if src == nil {
		if cur == nil {
			m.refresh(ctx, s.Name, nil, nil)
			return nil
		}
		m.refresh(ctx, s.Name, cur.CachedInfo(), nil)
		return nil
	}
	want := m.mirrorConfig(s, src)
	if cur != nil {
		if differs(cur.CachedInfo().Config, want) != "" {
			// Another Mirror of the region may have just recreated it: look again right
			// before deleting, so that two of them rarely both recreate it.
			if again, err := m.local.Stream(mctx, s.Name); err == nil {
				cur = again
			}
		}
		if why := differs(cur.CachedInfo().Config, want); why != "" {
			m.log.Info("recreating the region's mirror", "stream", s.Name, "reason", why)
			if err := m.local.DeleteStream(mctx, s.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				return fmt.Errorf("delete mirror %s: %w", s.Name, err)
			}
			m.mu.Lock()
			m.status[s.Name].Recreated++
			m.mu.Unlock()
			cur = nil
		}
	}
	if cur == nil {
		cur, err = m.local.CreateStream(mctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another Mirror of the region created it meanwhile: the next pass checks it.
			cur, err = m.local.Stream(mctx, s.Name)
		}
		if err != nil {
			return fmt.Errorf("create mirror %s: %w", s.Name, err)
		}
		m.log.Info("region mirror created", "stream", s.Name, "source_domain", m.cfg.SourceDomain, "epoch", want.Metadata[feed.MetadataEpoch])
	}
	info, err := cur.Info(mctx)
	if err != nil {
		return fmt.Errorf("mirror %s info: %w", s.Name, err)
	}
	m.refresh(ctx, s.Name, info, nil)
	m.mu.Lock()
	m.status[s.Name].SourceLastSeq = src.State.LastSeq
	m.mu.Unlock()
	if s.Bucket != "" {
		if err := m.maybePrune(ctx, s); err != nil {
			return fmt.Errorf("prune mirror %s: %w", s.Name, err)
		}
	}
	return nil
}

// touchContact records a successful read of the source, and whether it exists.
func (m *Mirror) touchContact(name string, missing bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status[name].LastContact = time.Now()
	m.status[name].SourceMissing = missing
}

// refresh records the mirror's state (info nil: unknown, reread from the leaf when possible) and
// the failure of the step, if any.
func (m *Mirror) refresh(ctx context.Context, name string, info *jetstream.StreamInfo, stepErr error) {
	if info == nil {
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		if s, err := m.local.Stream(cctx, name); err == nil {
			info = s.CachedInfo()
		}
		cancel()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.status[name]
	st.Err = ""
	if stepErr != nil {
		st.Err = stepErr.Error()
	}
	if info == nil {
		return
	}
	st.Exists = true
	st.Epoch = info.Config.Metadata[feed.MetadataEpoch]
	_, st.SourceCreated = feed.StreamIdentity(info)
	st.LastSeq = info.State.LastSeq
	if mi := info.Mirror; mi != nil {
		st.Lag, st.Active = mi.Lag, mi.Active
		if mi.Error != nil && st.Err == "" {
			st.Err = mi.Error.Error()
		}
	}
}

// mirrorConfig is the mirror of s as src is now.
func (m *Mirror) mirrorConfig(s Stream, src *jetstream.StreamInfo) jetstream.StreamConfig {
	md := map[string]string{
		feed.MetadataSourceCreated: src.Created.UTC().Format(time.RFC3339Nano),
		"vitrine_source_domain":    m.cfg.SourceDomain,
	}
	if e, ok := src.Config.Metadata[feed.MetadataEpoch]; ok {
		md[feed.MetadataEpoch] = e
	}
	ms := &jetstream.StreamSource{Name: s.Name, Domain: m.cfg.SourceDomain}
	for _, f := range s.Filters {
		// A transform without a destination is a filter: the mirror's consumer at the source
		// delivers only these subjects, so nothing else ever crosses to the region.
		ms.SubjectTransforms = append(ms.SubjectTransforms, jetstream.SubjectTransformConfig{Source: f})
	}
	c := jetstream.StreamConfig{
		Name:        s.Name,
		Description: fmt.Sprintf("Vitrine regional mirror of %s (domain %s)", s.Name, m.cfg.SourceDomain),
		Mirror:      ms,
		Storage:     jetstream.FileStorage,
		Replicas:    m.cfg.Replicas,
		Discard:     jetstream.DiscardOld,
		AllowDirect: true,
		Metadata:    md,
	}
	if s.State {
		c.MaxMsgsPerSubject = 1
		c.AllowMsgTTL = true
	} else {
		// Object store meta messages are rolled up at the source; a mirror keeps what it is sent.
		c.AllowRollup = true
	}
	return c
}

// differs returns why a mirror's configuration cannot stand for want ("" when it can): another
// source (recreated, another epoch, another domain) or another filter.
func differs(have, want jetstream.StreamConfig) string {
	if have.Mirror == nil {
		return "the stream is not a mirror"
	}
	if have.Mirror.Name != want.Mirror.Name {
		return fmt.Sprintf("it mirrors %s", have.Mirror.Name)
	}
	for _, k := range []string{feed.MetadataSourceCreated, feed.MetadataEpoch, "vitrine_source_domain"} {
		if have.Metadata[k] != want.Metadata[k] {
			return fmt.Sprintf("source %s changed from %q to %q", strings.TrimPrefix(k, "vitrine_"), have.Metadata[k], want.Metadata[k])
		}
	}
	filters := func(c jetstream.StreamConfig) []string {
		var out []string
		for _, t := range c.Mirror.SubjectTransforms {
			out = append(out, t.Source)
		}
		if c.Mirror.FilterSubject != "" {
			out = append(out, c.Mirror.FilterSubject)
		}
		slices.Sort(out)
		return out
	}
	if h, w := filters(have), filters(want); !slices.Equal(h, w) {
		return fmt.Sprintf("filters changed from %q to %q", h, w)
	}
	if !have.AllowDirect || (want.MaxMsgsPerSubject == 1 && (have.MaxMsgsPerSubject != 1 || !have.AllowMsgTTL)) {
		return "limits changed"
	}
	return ""
}

// maybePrune purges from a bucket's mirror every subject its source no longer holds (a replaced
// snapshot's chunks, a deleted file): a mirror does not see the source's purges.
func (m *Mirror) maybePrune(ctx context.Context, s Stream) error {
	if m.cfg.PruneEvery < 0 {
		return nil
	}
	m.mu.Lock()
	due := time.Since(m.lastPrune[s.Name]) >= m.cfg.PruneEvery
	m.mu.Unlock()
	if !due {
		return nil
	}
	filter := "$O." + s.Bucket + ".>"
	cctx, cancel := context.WithTimeout(ctx, 4*requestTimeout)
	defer cancel()
	mine, upTo, err := m.subjects(cctx, m.local, s.Name, filter)
	if err != nil {
		return err
	}
	if len(mine) == 0 {
		m.markPruned(s.Name, 0)
		return nil
	}
	theirs, _, err := m.subjects(cctx, m.source, s.Name, filter)
	if err != nil {
		return err
	}
	st, err := m.local.Stream(cctx, s.Name)
	if err != nil {
		return err
	}
	n := uint64(0)
	for subj, count := range mine {
		if _, ok := theirs[subj]; ok || count == 0 {
			continue
		}
		// Only what the mirror held when the source was listed: a message mirrored since
		// (a new object under a reused meta subject) has a higher sequence and stays.
		if err := st.Purge(cctx, jetstream.WithPurgeSubject(subj), jetstream.WithPurgeSequence(upTo+1)); err != nil {
			return err
		}
		n++
	}
	m.markPruned(s.Name, n)
	if n > 0 {
		m.log.Info("region mirror pruned", "stream", s.Name, "subjects", n)
	}
	return nil
}

func (m *Mirror) markPruned(name string, n uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastPrune[name] = time.Now()
	m.status[name].Pruned += n
}

// subjects lists the subjects of a stream under filter, with their message counts, and the
// stream's last sequence when it was listed.
func (m *Mirror) subjects(ctx context.Context, js jetstream.JetStream, name, filter string) (map[string]uint64, uint64, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, 0, err
	}
	if info.State.Subjects == nil {
		return map[string]uint64{}, info.State.LastSeq, nil
	}
	return info.State.Subjects, info.State.LastSeq, nil
}

// Status returns the state of every mirror, in the order of Config.Streams.
func (m *Mirror) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.streams))
	for _, s := range m.streams {
		out = append(out, *m.status[s.Name])
	}
	return out
}

// Readiness reports whether the region's mirrors are current at now: each exists (or its source
// does not exist yet at the centre), shows no error, and its source was heard from within
// StaleAfter (by Mirror, and by the leaf node's mirror consumer); and a JSON body saying which
// are not. A region that is not ready still serves: its edges read the last data the mirrors
// hold.
func (m *Mirror) Readiness(now time.Time) (bool, []byte) {
	type entry struct {
		Status
		Ready  bool   `json:"ready"`
		Reason string `json:"reason,omitempty"`
	}
	var body struct {
		Ready   bool    `json:"ready"`
		Streams []entry `json:"streams"`
	}
	body.Ready = true
	for _, s := range m.Status() {
		e := entry{Status: s, Ready: true}
		switch {
		case !s.Exists && s.SourceMissing && s.Err == "" && now.Sub(s.LastContact) <= m.cfg.StaleAfter:
			e.Reason = "no source at the centre yet: nothing to mirror"
		case !s.Exists:
			e.Ready, e.Reason = false, "no mirror yet"
		case s.Err != "":
			e.Ready, e.Reason = false, s.Err
		case s.LastContact.IsZero() || now.Sub(s.LastContact) > m.cfg.StaleAfter:
			e.Ready, e.Reason = false, "source not heard from"
		case s.Active > m.cfg.StaleAfter:
			e.Ready, e.Reason = false, "the mirror's consumer at the source is silent"
		}
		body.Ready = body.Ready && e.Ready
		body.Streams = append(body.Streams, e)
	}
	b, _ := json.Marshal(body)
	return body.Ready, append(b, '\n')
}
