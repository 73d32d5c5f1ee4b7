package blob

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// ObjectStoreConfig configures an ObjectStore. Zero values mean the defaults.
type ObjectStoreConfig struct {
	// Bucket is the object store bucket (default DefaultBucket); its stream is OBJ_<Bucket>.
	// deploy/nats/vitrine-accounts.conf grants the default name: change it there too.
	Bucket string
	// Create makes NewObjectStore create the bucket, or update its settings, at start: the
	// writer (origin) sets it. Readers (edges) leave it false and bind to the existing bucket:
	// their NATS role may not create streams.
	Create bool
	// Replicas of the bucket's stream (default 1; 3 in a clustered deployment). With Create.
	Replicas int
	// Storage of the bucket's stream (default jetstream.FileStorage). With Create.
	Storage jetstream.StorageType
	// MaxBytes bounds the bucket (0: unbounded); a Put that would exceed it fails and leaves
	// nothing. With Create.
	MaxBytes int64
	// ChunkSize is the size of the chunks Put writes (default 128 KiB, the object store's).
	ChunkSize int
	// PutWindow is how many chunks a Put has in flight, unacknowledged (default 8): a Put holds
	// PutWindow×ChunkSize bytes of memory.
	PutWindow int
	// ReadAhead is how many bytes of chunks an open object asks for at once (default 512 KiB,
	// at least one chunk): an open object holds at most this much (plus one chunk) in memory.
	ReadAhead int
	// Timeout bounds each wait for the server (an acknowledgement, a batch of chunks) when the
	// context has no deadline, and every read (default 10 s).
	Timeout time.Duration
}

// DefaultBucket is the default media bucket.
const DefaultBucket = "vitrine-media"

// WithDefaults returns c with zero values replaced by defaults.
func (c ObjectStoreConfig) WithDefaults() ObjectStoreConfig {
	if c.Bucket == "" {
		c.Bucket = DefaultBucket
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = 128 << 10
	}
	if c.PutWindow == 0 {
		c.PutWindow = 8
	}
	if c.ReadAhead == 0 {
		c.ReadAhead = 512 << 10
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

// ObjectStore is a Store in a JetStream object store bucket, in the object store's own format
// (nats.go's jetstream.ObjectStore and `nats object` read and list it): an object is a meta
// message on $O.<bucket>.M.<base64 name> naming a NUID, and its bytes are chunk messages on
// $O.<bucket>.C.<NUID>.
//
// Put writes every chunk (a window of PutWindow in flight), waits for their acknowledgements,
// then publishes the meta message with the header Nats-Expected-Last-Subject-Sequence: the
// object appears at that single publish, complete, and the server refuses it if another Put
// committed the name meanwhile (then the loser compares digests: same bytes, success; other
// bytes, ErrExists). A Put that fails or is cancelled before that point purges its chunks (with
// its own short deadline, after its in-flight publishes are answered): nothing is readable and
// nothing stays. Unlike nats.go's ObjectStore.Put, it never replaces an object, so a reader
// never sees the chunks it streams purged by a retry.
//
// Reads use the stream's direct get API (the bucket allows direct gets), not consumers: Stat is
// one request ($JS.API.DIRECT.GET.OBJ_<bucket>.<meta subject>), and an open object asks for
// batches of chunks ({"seq", "next_by_subj", "batch", "max_bytes"}), one batch of ReadAhead
// bytes at a time as the reader consumes them, so memory per open object is bounded whatever
// the object's size, and readers need no consumer permissions and leave no server state.
//
// Offsets: Put records the stream sequence of every chunk in the meta message (metadata
// "vitrine-chunk-seqs", delta-encoded: about one byte per 128 KiB chunk), so Open at any offset
// asks directly for the chunk holding it and discards less than one chunk. An object written by
// another tool (no such metadata) is read from its first chunk and the bytes before the offset
// are discarded: that costs transferring them (a 100 MB object read from its last byte moves
// 100 MB from the server).
//
// Edges behind a leaf node use the cluster's JetStream domain: give NewObjectStore a
// jetstream.JetStream made with jetstream.NewWithDomain; the direct gets follow its API prefix.
// With Replicas > 1 a direct get may be answered by a replica a few milliseconds behind the
// leader: an object just put may read as not found for that long.
type ObjectStore struct {
	cfg ObjectStoreConfig
	js  jetstream.JetStream
	nc  *nats.Conn
	// stream is the bucket's stream, bound at construction, or on first use by a reader
	// started before the writer created the bucket (bind).
	stream     atomic.Pointer[jetstream.Stream]
	streamName string
	apiPrefix  string // "$JS.API." or "$JS.<domain>.API."
}

// Subjects and metadata of the object store format.
const (
	metaSubjectT   = "$O.%s.M.%s"
	chunkSubjectT  = "$O.%s.C.%s"
	chunkSeqsKey   = "vitrine-chunk-seqs"
	digestPrefix   = "SHA-256="
	headerStatus   = "Status"
	headerDesc     = "Description"
	walkBatch      = 256
	maxMetaRetries = 5
	// maxIndexLen bounds the chunk index in a meta message (objects up to about 6 GB).
	maxIndexLen = 64 << 10
)

// NewObjectStore returns the store in the bucket of cfg, creating or updating it when
// cfg.Create is set, else binding to it (an error when it does not exist). js is the caller's
// JetStream API, made with the JetStream domain when the connection goes through a leaf node.
func NewObjectStore(ctx context.Context, js jetstream.JetStream, cfg ObjectStoreConfig) (*ObjectStore, error) {
	cfg = cfg.WithDefaults()
	if cfg.ChunkSize < 1 || cfg.PutWindow < 1 || cfg.ReadAhead < 1 || cfg.Timeout < 0 {
		return nil, fmt.Errorf("blob: invalid object store configuration %+v", cfg)
	}
	if max := js.Conn().MaxPayload(); max > 0 && int64(cfg.ChunkSize) > max-4096 {
		return nil, fmt.Errorf("blob: chunk size %d exceeds the server's max payload %d (less headers)", cfg.ChunkSize, max)
	}
	s := &ObjectStore{cfg: cfg, js: js, nc: js.Conn(), streamName: "OBJ_" + cfg.Bucket}
	opts := js.Options()
	switch {
	case opts.Domain != "":
		s.apiPrefix = "$JS." + opts.Domain + ".API."
	case opts.APIPrefix != "":
		s.apiPrefix = strings.TrimSuffix(opts.APIPrefix, ".") + "."
	default:
		s.apiPrefix = jetstream.DefaultAPIPrefix
	}
	if cfg.Create {
		if _, err := EnsureObjectStore(ctx, js, jetstream.ObjectStoreConfig{
			Bucket:      cfg.Bucket,
			Description: "Vitrine blobs (sync/blob)",
			Storage:     cfg.Storage,
			Replicas:    cfg.Replicas,
			MaxBytes:    cfg.MaxBytes,
		}); err != nil {
			return nil, fmt.Errorf("blob: create bucket %s: %w", cfg.Bucket, err)
		}
	}
	if _, err := s.bind(ctx); err != nil && (cfg.Create || !errors.Is(err, ErrNotFound)) {
		return nil, err
	}
	// A reader (an edge) may start before the writer (the origin) ever created the bucket: it
	// starts anyway, every object reads as not found, and it binds at the first use after the
	// bucket appears.
	return s, nil
}

// Bucket is the store's bucket name.
func (s *ObjectStore) Bucket() string { return s.cfg.Bucket }

func (s *ObjectStore) metaSubject(name string) string {
	return fmt.Sprintf(metaSubjectT, s.cfg.Bucket, base64.URLEncoding.EncodeToString([]byte(name)))
}

func (s *ObjectStore) chunkSubject(id string) string {
	return fmt.Sprintf(chunkSubjectT, s.cfg.Bucket, id)
}

// wait returns ctx bounded by the configured timeout when it has no deadline.
func (s *ObjectStore) wait(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

// detached is a context for cleaning up after ctx failed: not cancelled with it, bounded.
func (s *ObjectStore) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
}

// bind returns the bucket's stream, looking it up once it exists. A missing bucket is
// ErrNotFound (wrapped).
func (s *ObjectStore) bind(ctx context.Context) (jetstream.Stream, error) {
	if st := s.stream.Load(); st != nil {
		return *st, nil
	}
	st, err := s.js.Stream(ctx, s.streamName)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("blob: bucket %s does not exist yet (the writer creates it): %w", s.cfg.Bucket, ErrNotFound)
		}
		return nil, fmt.Errorf("blob: bucket %s: %w", s.cfg.Bucket, err)
	}
	if !st.CachedInfo().Config.AllowDirect {
		return nil, fmt.Errorf("blob: bucket %s does not allow direct gets", s.cfg.Bucket)
	}
	s.stream.Store(&st)
	return st, nil
}

// objectMeta is a parsed meta message.
type objectMeta struct {
	jetstream.ObjectInfo
	seq  uint64 // stream sequence of the meta message
	info Info
}

// meta returns the meta message of name. found is false (with a nil error) when there is none
// or it marks a deletion; m.seq is then the sequence of that marker, or 0. A leader read asks
// the stream's leader (STREAM.MSG.GET): the writer decides on it. Otherwise any replica answers
// (a direct get), possibly a few milliseconds behind.
func (s *ObjectStore) meta(ctx context.Context, name string, leader bool) (m objectMeta, found bool, err error) {
	ctx, cancel := s.wait(ctx)
	defer cancel()
	var raw *jetstream.RawStreamMsg
	if leader {
		raw, err = untilAnswered(ctx, func() (*jetstream.RawStreamMsg, error) { return s.leaderLastMsg(ctx, s.metaSubject(name)) })
	} else {
		var st jetstream.Stream
		if st, err = s.bind(ctx); err == nil {
			raw, err = untilAnswered(ctx, func() (*jetstream.RawStreamMsg, error) { return st.GetLastMsgForSubject(ctx, s.metaSubject(name)) })
		} else if errors.Is(err, ErrNotFound) {
			return m, false, nil
		}
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return m, false, nil
		}
		return m, false, fmt.Errorf("blob: stat %s: %w", name, err)
	}
	m, err = parseMeta(raw.Data, raw.Time)
	if err != nil {
		return m, false, fmt.Errorf("blob: %s: %w", name, err)
	}
	m.seq = raw.Sequence
	if m.Deleted {
		return m, false, nil
	}
	if m.Name != name {
		return m, false, fmt.Errorf("blob: %s: meta message names %q", name, m.Name)
	}
	return m, true, nil
}

// untilAnswered calls get until something answers it or ctx ends. A clustered stream's gets are
// answered by its leader (the message get API) or by its replicas that are ready (direct gets):
// for a moment after the stream is created, scaled or loses its leader, nobody answers, and the
// request fails at once with "no responders". That is a wait, not an error (a Put right after
// NewObjectStore created the bucket met it, one run in a dozen on a loaded machine). ctx bounds
// the wait: the store's Timeout, or the caller's deadline (an edge's open timeout), so a bucket
// with no replica up answers as a server that does not answer does.
func untilAnswered(ctx context.Context, get func() (*jetstream.RawStreamMsg, error)) (*jetstream.RawStreamMsg, error) {
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		raw, err := get()
		if !errors.Is(err, nats.ErrNoResponders) {
			return raw, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (nothing answered for the stream until: %v)", err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// leaderLastMsg reads the last message of subject from the stream's leader (the message get
// API; nats.go uses direct gets whenever the stream allows them).
func (s *ObjectStore) leaderLastMsg(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	req, _ := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	reply, err := s.nc.RequestWithContext(ctx, s.apiPrefix+"STREAM.MSG.GET."+s.streamName, req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Sequence uint64    `json:"seq"`
			Data     []byte    `json:"data"`
			Time     time.Time `json:"time"`
		} `json:"message"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("message get: %w", err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, resp.Error
	case resp.Message == nil:
		return nil, errors.New("message get: empty answer")
	}
	return &jetstream.RawStreamMsg{Subject: subject, Sequence: resp.Message.Sequence, Data: resp.Message.Data, Time: resp.Message.Time}, nil
}

// parseMeta decodes a meta message (JSON of jetstream.ObjectInfo); stored is the message's
// time, used when the writer recorded none.
func parseMeta(data []byte, stored time.Time) (objectMeta, error) {
	var m objectMeta
	if err := json.Unmarshal(data, &m.ObjectInfo); err != nil {
		return m, fmt.Errorf("bad meta message: %w", err)
	}
	if m.Deleted {
		return m, nil
	}
	if m.Opts != nil && m.Opts.Link != nil {
		return m, errors.New("object store links are not supported")
	}
	if m.NUID == "" || strings.ContainsAny(m.NUID, ".*> \t\r\n") {
		return m, errors.New("bad meta message: no NUID")
	}
	if m.Size > 1<<62 || (m.Size == 0) != (m.Chunks == 0) || uint64(m.Chunks) > m.Size {
		return m, fmt.Errorf("bad meta message: %d bytes in %d chunks", m.Size, m.Chunks)
	}
	digest, ok := strings.CutPrefix(m.Digest, digestPrefix)
	sum, err := base64.URLEncoding.DecodeString(digest)
	if !ok || err != nil || len(sum) != sha256.Size {
		return m, fmt.Errorf("bad meta message: digest %q", m.Digest)
	}
	modified := m.ModTime
	if modified.IsZero() {
		modified = stored
	}
	m.info = Info{Name: m.Name, Size: int64(m.Size), SHA256: hex.EncodeToString(sum),
		ContentType: m.Headers.Get("Content-Type"), Modified: modified.UTC()}
	if m.info.ContentType == "" {
		m.info.ContentType = DefaultContentType
	}
	return m, nil
}

// Stat implements Store.
func (s *ObjectStore) Stat(ctx context.Context, name string) (Info, error) {
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	m, found, err := s.meta(ctx, name, false)
	if err != nil {
		return Info{}, err
	}
	if !found {
		return Info{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return m.info, nil
}

// Put implements Store.
func (s *ObjectStore) Put(ctx context.Context, name, contentType string, r io.Reader) (Info, error) {
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	ct, err := checkContentType(contentType)
	if err != nil {
		return Info{}, err
	}
	// Any replica will do here: a stale miss is caught when the commit is refused.
	cur, found, err := s.meta(ctx, name, false)
	if err != nil {
		return Info{}, err
	}
	if found {
		return matchExisting(ctx, cur.info, ct, r)
	}
	id := nuid.Next()
	chunks := s.chunkSubject(id)
	up, err := s.upload(ctx, chunks, r)
	if err == nil {
		err = ctx.Err() // cancelled after the last read: commit nothing
	}
	if err != nil {
		s.purge(ctx, chunks)
		return Info{}, fmt.Errorf("blob: put %s: %w", name, noSpace(err))
	}
	info := Info{Name: name, Size: up.size, SHA256: hex.EncodeToString(up.sum), ContentType: ct, Modified: time.Now().UTC()}
	oi := jetstream.ObjectInfo{
		ObjectMeta: jetstream.ObjectMeta{
			Name:     name,
			Headers:  nats.Header{"Content-Type": []string{ct}},
			Metadata: map[string]string{chunkSeqsKey: encodeSeqs(up.seqs)},
			Opts:     &jetstream.ObjectMetaOptions{ChunkSize: uint32(s.cfg.ChunkSize)},
		},
		Bucket:  s.cfg.Bucket,
		NUID:    id,
		Size:    uint64(up.size),
		ModTime: info.Modified,
		Chunks:  uint32(len(up.seqs)),
		Digest:  digestPrefix + base64.URLEncoding.EncodeToString(up.sum),
	}
	if len(up.seqs) == 0 || len(oi.Metadata[chunkSeqsKey]) > maxIndexLen {
		oi.Metadata = nil // nothing to index, or a meta message too large: offsets discard
	}
	data, err := json.Marshal(oi)
	if err != nil {
		s.purge(ctx, chunks)
		return Info{}, fmt.Errorf("blob: put %s: %w", name, err)
	}
	// Every chunk is stored: the commit must not be abandoned half-way by the caller's context
	// (an unknown outcome followed by purging the chunks could leave a visible object without
	// its bytes), so it runs on its own deadline.
	cctx, cancel := s.detached(ctx)
	defer cancel()
	expect := cur.seq
	for range maxMetaRetries {
		msg := nats.NewMsg(s.metaSubject(name))
		msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		msg.Data = data
		_, perr := s.js.PublishMsg(cctx, msg, jetstream.WithExpectLastSequencePerSubject(expect))
		if perr == nil {
			return info, nil
		}
		// Another Put (or a Delete) got there first, or the outcome is unknown: look.
		now, found, err := s.meta(cctx, name, true)
		if err != nil {
			return Info{}, fmt.Errorf("blob: put %s: %w (after %v)", name, err, perr)
		}
		switch {
		case found && now.NUID == id: // ours landed: the acknowledgement was lost
			return info, nil
		case found:
			s.purge(cctx, chunks)
			if same(now.info, info) {
				return now.info, nil
			}
			return Info{}, fmt.Errorf("%w: %s", ErrExists, name)
		case !wrongLastSequence(perr):
			s.purge(cctx, chunks)
			return Info{}, fmt.Errorf("blob: put %s: %w", name, noSpace(perr))
		}
		expect = now.seq // deleted meanwhile: try again after the marker
	}
	s.purge(cctx, chunks)
	return Info{}, fmt.Errorf("blob: put %s: the name kept changing", name)
}

// wrongLastSequence reports whether a publish was refused for its expected last sequence.
func wrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// noSpace joins ErrNoSpace to a JetStream refusal for want of space.
func noSpace(err error) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return err
	}
	switch {
	case apiErr.ErrorCode == 10047 || apiErr.ErrorCode == 10028, // storage or memory resources exceeded
		apiErr.ErrorCode == 10077 && strings.Contains(apiErr.Description, "exceeded"): // the stream's limits
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// uploaded is what upload wrote.
type uploaded struct {
	size int64
	sum  []byte
	seqs []uint64 // stream sequence of each chunk
}

// upload publishes r's bytes as chunks on subject, PutWindow of them unacknowledged at a time,
// and waits for every acknowledgement. On failure it first waits (on its own deadline) for the
// publishes still in flight, so that a purge after it finds every chunk that landed.
func (s *ObjectStore) upload(ctx context.Context, subject string, r io.Reader) (uploaded, error) {
	type flight struct {
		f   jetstream.PubAckFuture
		buf []byte
	}
	var (
		up      uploaded
		h       = sha256.New()
		window  = make([]flight, 0, s.cfg.PutWindow)
		free    [][]byte
		src     = ctxReader{ctx, r}
		timeout = s.cfg.Timeout
	)
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	ack := func(ctx context.Context, fl flight) error {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case a := <-fl.f.Ok():
			up.seqs = append(up.seqs, a.Sequence)
			free = append(free, fl.buf)
			return nil
		case err := <-fl.f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("no acknowledgement of a chunk in %v", timeout)
		}
	}
	fail := func(err error) (uploaded, error) {
		dctx, cancel := s.detached(ctx)
		defer cancel()
		for _, fl := range window {
			ack(dctx, fl) // answered, refused or timed out: nothing more is coming
		}
		return uploaded{}, err
	}
	for {
		if len(window) == s.cfg.PutWindow {
			fl := window[0]
			window = window[1:] // answered below, whatever the answer
			if err := ack(ctx, fl); err != nil {
				return fail(err)
			}
		}
		var buf []byte
		if n := len(free); n > 0 {
			buf, free = free[n-1], free[:n-1]
		} else {
			buf = make([]byte, s.cfg.ChunkSize)
		}
		n, rerr := io.ReadFull(src, buf)
		if n > 0 {
			h.Write(buf[:n])
			up.size += int64(n)
			// The message keeps buf until acknowledged (the client may republish it).
			f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: buf[:n]})
			if err != nil {
				return fail(err)
			}
			window = append(window, flight{f, buf})
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
	for len(window) > 0 {
		fl := window[0]
		window = window[1:]
		if err := ack(ctx, fl); err != nil {
			return fail(err)
		}
	}
	up.sum = h.Sum(nil)
	return up, nil
}

// purge removes the messages of subject, on its own deadline (ctx may be what failed).
func (s *ObjectStore) purge(ctx context.Context, subject string, opts ...jetstream.StreamPurgeOpt) error {
	dctx, cancel := s.detached(ctx)
	defer cancel()
	st, err := s.bind(dctx)
	if err != nil {
		return err
	}
	return st.Purge(dctx, append([]jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject(subject)}, opts...)...)
}

// Delete implements Store. It purges the meta message (the object disappears at once), then the
// chunks; a crash in between leaves unreferenced chunks, never a visible object without bytes.
// The purge stops at the meta message it read, so a Put of the name committed meanwhile stays.
func (s *ObjectStore) Delete(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	m, found, err := s.meta(ctx, name, true)
	if err != nil || (!found && m.seq == 0) {
		return err
	}
	ctx, cancel := s.wait(ctx)
	defer cancel()
	st, err := s.bind(ctx)
	if err != nil {
		return err
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(s.metaSubject(name)), jetstream.WithPurgeSequence(m.seq+1)); err != nil {
		return fmt.Errorf("blob: delete %s: %w", name, err)
	}
	if m.NUID != "" {
		if err := st.Purge(ctx, jetstream.WithPurgeSubject(s.chunkSubject(m.NUID))); err != nil {
			return fmt.Errorf("blob: delete %s: %w", name, err)
		}
	}
	return nil
}

// Open implements Store.
func (s *ObjectStore) Open(ctx context.Context, name string, offset int64) (Object, error) {
	if offset < 0 {
		return nil, fmt.Errorf("blob: negative offset %d", offset)
	}
	if err := ValidName(name); err != nil {
		return nil, err
	}
	m, found, err := s.meta(ctx, name, false)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	o := &natsObject{s: s, info: m.info, subject: s.chunkSubject(m.NUID), next: 1, chunks: int(m.Chunks)}
	if offset >= m.info.Size {
		o.chunks, o.left = 0, 0
		return o, nil
	}
	o.left = m.info.Size - offset
	o.skip = offset
	cs := int64(0)
	if m.Opts != nil {
		cs = int64(m.Opts.ChunkSize)
	}
	// Chunks of our Puts are all full but the last: the index locates the offset's chunk.
	if seqs, err := decodeSeqs(m.Metadata[chunkSeqsKey], int(m.Chunks)); err == nil && cs > 0 &&
		int64(m.Chunks) == (m.info.Size+cs-1)/cs {
		k := offset / cs
		o.next, o.chunks, o.skip = seqs[k], int(m.Chunks)-int(k), offset%cs
	}
	o.inbox = s.nc.NewInbox()
	if o.sub, err = s.nc.SubscribeSync(o.inbox); err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", name, err)
	}
	return o, nil
}

// natsObject reads an object's chunks by batches of direct gets.
type natsObject struct {
	s       *ObjectStore
	info    Info
	subject string // the chunk subject
	inbox   string
	sub     *nats.Subscription
	next    uint64 // stream sequence to ask from
	chunks  int    // chunks still to receive
	left    int64  // bytes still to return
	skip    int64  // bytes still to discard before the offset
	pending bool   // a batch is being received (its end-of-batch is due)
	got     int    // chunks received in the current batch
	buf     []byte // the rest of the current chunk
	err     error
}

func (o *natsObject) Info() Info { return o.info }

func (o *natsObject) Close() error {
	if o.sub != nil {
		o.sub.Unsubscribe()
		o.sub = nil
	}
	if o.err == nil {
		o.err = errors.New("blob: read of a closed object")
	}
	return nil
}

func (o *natsObject) Read(p []byte) (int, error) {
	for len(o.buf) == 0 {
		if o.left == 0 {
			return 0, io.EOF
		}
		if o.err != nil {
			return 0, o.err
		}
		data, err := o.chunk()
		if err != nil {
			o.err = fmt.Errorf("blob: read %s: %w", o.info.Name, err)
			return 0, o.err
		}
		if o.skip >= int64(len(data)) {
			o.skip -= int64(len(data))
			continue
		}
		o.buf, o.skip = data[o.skip:], 0
		if int64(len(o.buf)) > o.left || (o.chunks == 0 && int64(len(o.buf)) != o.left) {
			return 0, o.fail(fmt.Errorf("chunks do not add up to %d bytes", o.info.Size))
		}
	}
	n := copy(p, o.buf)
	o.buf = o.buf[n:]
	o.left -= int64(n)
	return n, nil
}

func (o *natsObject) fail(err error) error {
	o.err = fmt.Errorf("blob: read %s: %w", o.info.Name, err)
	o.buf = nil
	return o.err
}

// chunk returns the next chunk's bytes, asking for a batch when none is under way.
func (o *natsObject) chunk() ([]byte, error) {
	for {
		if o.chunks == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		if !o.pending {
			batch := max(1, min(o.chunks, o.s.cfg.ReadAhead/o.s.cfg.ChunkSize))
			req, _ := json.Marshal(directGet{Seq: o.next, NextFor: o.subject, Batch: batch, MaxBytes: o.s.cfg.ReadAhead})
			if err := o.s.nc.PublishRequest(o.s.apiPrefix+"DIRECT.GET."+o.s.streamName, o.inbox, req); err != nil {
				return nil, err
			}
			o.pending, o.got = true, 0
		}
		m, err := o.sub.NextMsg(o.s.cfg.Timeout)
		if err != nil {
			return nil, fmt.Errorf("waiting for chunks: %w", err)
		}
		if status := m.Header.Get(headerStatus); status != "" && len(m.Data) == 0 {
			if status == "204" { // end of batch
				o.pending = false
				if o.got == 0 {
					return nil, errors.New("the server sent no chunk")
				}
				continue
			}
			if status == "404" {
				return nil, fmt.Errorf("chunks missing (the object was deleted?)")
			}
			return nil, fmt.Errorf("direct get: %s %s", status, m.Header.Get(headerDesc))
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil || seq < o.next || m.Header.Get(jetstream.SubjectHeader) != o.subject {
			return nil, fmt.Errorf("unexpected message %q seq %q", m.Header.Get(jetstream.SubjectHeader), m.Header.Get(jetstream.SequenceHeader))
		}
		o.next, o.chunks = seq+1, o.chunks-1
		o.got++
		return m.Data, nil
	}
}

// directGet is a request of the stream direct get API.
type directGet struct {
	Seq      uint64 `json:"seq,omitempty"`
	NextFor  string `json:"next_by_subj,omitempty"`
	Batch    int    `json:"batch,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// Walk implements Store. It reads every meta message of the bucket (batches of direct gets), so
// its cost grows with the bucket's object count whatever the prefix.
func (s *ObjectStore) Walk(ctx context.Context, prefix string, fn func(Info) error) error {
	if _, ok := walkPrefixDir(prefix); !ok {
		return nil
	}
	inbox := s.nc.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("blob: walk: %w", err)
	}
	defer sub.Unsubscribe()
	all := fmt.Sprintf(metaSubjectT, s.cfg.Bucket, ">")
	for next := uint64(1); ; {
		req, _ := json.Marshal(directGet{Seq: next, NextFor: all, Batch: walkBatch})
		if err := s.nc.PublishRequest(s.apiPrefix+"DIRECT.GET."+s.streamName, inbox, req); err != nil {
			return fmt.Errorf("blob: walk: %w", err)
		}
		batch, done, err := s.walkBatch(ctx, sub, &next, prefix)
		if err != nil {
			return err
		}
		// fn runs between batches: a slow callback never stalls a batch under way.
		for _, info := range batch {
			if err := fn(info); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
}

// walkBatch receives the answer to one batch request of Walk.
func (s *ObjectStore) walkBatch(ctx context.Context, sub *nats.Subscription, next *uint64, prefix string) (batch []Info, done bool, err error) {
	ctx, cancel := s.wait(ctx)
	defer cancel()
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("blob: walk: %w", err)
		}
		if status := m.Header.Get(headerStatus); status != "" && len(m.Data) == 0 {
			switch status {
			case "204": // end of batch
				return batch, false, nil
			case "404": // nothing from *next on
				return batch, true, nil
			}
			return nil, false, fmt.Errorf("blob: walk: direct get: %s %s", status, m.Header.Get(headerDesc))
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil || seq < *next {
			return nil, false, fmt.Errorf("blob: walk: unexpected message seq %q", m.Header.Get(jetstream.SequenceHeader))
		}
		*next = seq + 1
		stored, _ := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer))
		meta, err := parseMeta(m.Data, stored)
		if err != nil || meta.Deleted || ValidName(meta.Name) != nil || !strings.HasPrefix(meta.Name, prefix) ||
			m.Header.Get(jetstream.SubjectHeader) != s.metaSubject(meta.Name) {
			continue // foreign, corrupt or deleted objects
		}
		batch = append(batch, meta.info)
	}
}

// encodeSeqs encodes increasing stream sequences: the first, then the differences, as uvarints
// in unpadded base64url.
func encodeSeqs(seqs []uint64) string {
	var b []byte
	prev := uint64(0)
	for _, s := range seqs {
		b = binary.AppendUvarint(b, s-prev)
		prev = s
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeSeqs decodes n strictly increasing sequences from encodeSeqs's form.
func decodeSeqs(s string, n int) ([]uint64, error) {
	if n <= 0 || len(s) > 16*n {
		return nil, errors.New("no chunk index")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, 0, n)
	prev := uint64(0)
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 || d == 0 || prev+d < prev {
			return nil, errors.New("bad chunk index")
		}
		prev += d
		seqs = append(seqs, prev)
		b = b[k:]
	}
	if len(seqs) != n {
		return nil, fmt.Errorf("chunk index of %d entries for %d chunks", len(seqs), n)
	}
	return seqs, nil
}

// EnsureObjectStore returns the object store bucket cfg names, creating it when missing and
// updating it only when its description, storage, replicas or byte limit differ from cfg's:
// processes that start while others read the bucket never send nats-server a stream update that
// changes nothing (it races consumer creation on the same stream: feed.EnsureStreamConfig).
func EnsureObjectStore(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, err
	}
	st, err := obs.Status(ctx)
	if err != nil {
		return nil, err
	}
	have := st.(*jetstream.ObjectBucketStatus).StreamInfo().Config
	maxBytes := cfg.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	if have.Description == cfg.Description && have.Storage == cfg.Storage && max(have.Replicas, 1) == max(cfg.Replicas, 1) &&
		have.MaxBytes == maxBytes {
		return obs, nil
	}
	return js.UpdateObjectStore(ctx, cfg)
}
