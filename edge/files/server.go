package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/sync/singleflight"

	"vitrine/edge/pipeline"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// Defaults of Config.
const (
	DefaultCacheBytes     = 64 << 20
	DefaultMaxCachedBytes = 1 << 20
	DefaultMaxStreams     = 256
	DefaultOpenTimeout    = 5 * time.Second
)

// Config configures a Server. Zero values mean the defaults.
type Config struct {
	// CacheBytes is the in-memory cache's budget for small files' bytes (default 64 MiB; negative
	// disables the cache: every file is streamed). As with any ristretto cache, the process's
	// memory for it runs up to about twice the budget.
	CacheBytes int64
	// MaxCachedBytes is the largest file kept in the cache (default 1 MiB, at most a quarter of
	// CacheBytes); larger files are streamed from the store.
	MaxCachedBytes int64
	// MaxStreams bounds the reads from the store running at once: streamed answers and cache
	// fills (default 256). Past it a request is answered 503 with Retry-After at once.
	MaxStreams int
	// OpenTimeout bounds opening a blob, and reading a whole small file to cache it (default 5s).
	OpenTimeout time.Duration
	Logger      *slog.Logger
	// Metrics receives the server's metrics (default: a new set).
	Metrics *metrics.Set
}

// Server answers media files from a blob store, with a cache for small ones. Safe for
// concurrent use.
type Server struct {
	cfg       Config
	store     blob.Store
	log       *slog.Logger
	cache     *ristretto.Cache[uint64, *entry]
	maxCached int64
	fills     singleflight.Group
	slots     chan struct{}
	open      atomic.Int64

	hits, misses, streams, bytesSent, notModified, partial *metrics.Counter
	busy, missing, storeErrors, mismatches                 *metrics.Counter
}

// entryOverhead is what a cache entry costs besides its body (the entry, its name, its header
// values, ristretto's item): an estimate, counted so that many tiny files cannot exceed the
// budget.
const entryOverhead = 400

// entry is a cached file: its bytes and header values, immutable once stored.
type entry struct {
	name string
	body []byte
	meta meta
}

// meta is what the answer's headers say of a file, formatted once.
type meta struct {
	size         int64
	etag         []byte // `"<sha256>"`; nil when unknown
	lastModified []byte // an HTTP date; nil when unknown
	modified     int64  // Unix seconds of lastModified
	contentType  []byte
	// active: a type a browser could run as a document; sent as an attachment, sandboxed.
	active bool
}

func metaOf(f *schema.MediaFile) meta {
	m := meta{size: f.Size, contentType: []byte(f.ContentType)}
	if f.ContentType == "" {
		m.contentType = []byte("application/octet-stream")
	}
	if f.SHA256 != "" {
		m.etag = []byte(`"` + strings.ToLower(f.SHA256) + `"`)
	}
	if !f.Modified.IsZero() {
		m.lastModified = fasthttp.AppendHTTPDate(nil, f.Modified)
		m.modified = f.Modified.Unix()
	}
	m.active = !inlineSafe(f.ContentType)
	return m
}

// inlineSafe reports whether a browser shows a file of this type without running anything of it:
// raster images, audio, video, PDF (sandboxing would keep browsers' viewers from showing it) and
// plain text (with nosniff).
func inlineSafe(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	switch {
	case t == "image/svg+xml":
		return false
	case strings.HasPrefix(t, "image/"), strings.HasPrefix(t, "audio/"), strings.HasPrefix(t, "video/"):
		return true
	}
	switch t {
	case "application/pdf", "text/plain", "text/csv":
		return true
	}
	return false
}

// New returns a Server reading files from store.
func New(cfg Config, store blob.Store) (*Server, error) {
	if store == nil {
		return nil, errors.New("files: a blob store is required")
	}
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.MaxCachedBytes <= 0 {
		cfg.MaxCachedBytes = DefaultMaxCachedBytes
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.OpenTimeout <= 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	s := &Server{cfg: cfg, store: store, log: cfg.Logger.With("component", "edge.files"), slots: make(chan struct{}, cfg.MaxStreams)}
	if cfg.CacheBytes > 0 {
		s.maxCached = min(cfg.MaxCachedBytes, cfg.CacheBytes/4)
		var err error
		s.cache, err = ristretto.NewCache(&ristretto.Config[uint64, *entry]{
			// About 10 counters per entry when full, entries of a few tens of KiB on average.
			NumCounters: max(10*cfg.CacheBytes/(16<<10), 1<<10),
			MaxCost:     cfg.CacheBytes,
			BufferItems: 64,
			Metrics:     true,
			// Keys are already xxhash values; Serve compares the full name.
			KeyToHash:          func(h uint64) (uint64, uint64) { return h, 0 },
			IgnoreInternalCost: true,
		})
		if err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
	}
	m := cfg.Metrics
	s.hits = m.NewCounter(`vitrine_edge_media_hits_total`)
	s.misses = m.NewCounter(`vitrine_edge_media_misses_total`)
	s.streams = m.NewCounter(`vitrine_edge_media_streams_total`)
	s.bytesSent = m.NewCounter(`vitrine_edge_media_bytes_total`)
	s.notModified = m.NewCounter(`vitrine_edge_media_not_modified_total`)
	s.partial = m.NewCounter(`vitrine_edge_media_partial_total`)
	s.busy = m.NewCounter(`vitrine_edge_media_busy_total`)
	s.missing = m.NewCounter(`vitrine_edge_media_missing_total`)
	s.storeErrors = m.NewCounter(`vitrine_edge_media_store_errors_total`)
	s.mismatches = m.NewCounter(`vitrine_edge_media_mismatches_total`)
	m.NewGauge(`vitrine_edge_media_streams_open`, func() float64 { return float64(s.open.Load()) })
	m.NewGauge(`vitrine_edge_media_cache_bytes`, func() float64 {
		if s.cache == nil {
			return 0
		}
		return float64(s.cache.Metrics.CostAdded() - s.cache.Metrics.CostEvicted())
	})
	return s, nil
}

// Close releases the cache. Streams still being written keep their store readers until they
// end.
func (s *Server) Close() {
	if s.cache != nil {
		s.cache.Close()
	}
}

// Response header names in canonical form, and constant values.
var (
	keyETag           = []byte(fasthttp.HeaderETag)
	keyLastModified   = []byte(fasthttp.HeaderLastModified)
	keyCacheControl   = []byte(fasthttp.HeaderCacheControl)
	keyAcceptRanges   = []byte(fasthttp.HeaderAcceptRanges)
	keyContentRange   = []byte(fasthttp.HeaderContentRange)
	keyNoSniff        = []byte(fasthttp.HeaderXContentTypeOptions)
	keyDisposition    = []byte(fasthttp.HeaderContentDisposition)
	keyCSP            = []byte(fasthttp.HeaderContentSecurityPolicy)
	keyAllow          = []byte(fasthttp.HeaderAllow)
	cacheImmutable    = []byte("public, max-age=31536000, immutable")
	bytesUnit         = []byte("bytes")
	nosniff           = []byte("nosniff")
	attachment        = []byte("attachment")
	sandbox           = []byte("default-src 'none'; style-src 'unsafe-inline'; sandbox")
	allowGetHead      = []byte("GET, HEAD")
	errMismatch       = errors.New("files: the stored bytes disagree with the replica")
	errOpenTimeout    = errors.New("files: opening the blob timed out")
	errNotAllowed     = &schema.Error{Code: schema.CodeNotAllowed, Message: "Files answer GET and HEAD only"}
	errPrecondition   = &schema.Error{Code: schema.CodeInvalid, Status: fasthttp.StatusPreconditionFailed, Message: "A precondition of the request does not hold"}
	errUnsatisfiable  = &schema.Error{Code: schema.CodeInvalid, Status: fasthttp.StatusRequestedRangeNotSatisfiable, Message: "The requested range is not satisfiable"}
	errMissing        = &schema.Error{Code: schema.CodeNotFound, RetryAfter: 2, Message: "This file is not available at this edge yet; retry shortly"}
	errBusy           = &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 1, Message: "This edge is serving too many files at once; retry shortly"}
	errStoreUnhealthy = &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 1, Message: "This file cannot be read at this edge right now; retry shortly"}
)

// Serve answers a GET or HEAD request for the public file f, as the replica describes it (see
// the package doc). An empty f.ContentType is sent as application/octet-stream; an empty f.SHA256
// means no ETag and no check of the stored bytes; a zero f.Modified no Last-Modified.
func (s *Server) Serve(ctx *fasthttp.RequestCtx, f schema.MediaFile) {
	get := ctx.IsGet()
	if !get && !ctx.IsHead() {
		s.fail(ctx, errNotAllowed)
		ctx.Response.Header.SetCanonical(keyAllow, allowGetHead)
		return
	}
	var h uint64
	if s.cache != nil {
		h = xxhash.Sum64String(f.BlobName)
		if e, ok := s.cache.Get(h); ok && e.name == f.BlobName {
			s.hits.Inc()
			s.answer(ctx, &e.meta, e.body, get)
			return
		}
	}
	m := metaOf(&f)
	p := decide(&ctx.Request.Header, &m, get)
	if p.outcome == sendNotModified || p.outcome == sendPreconditionFailed || p.outcome == sendUnsatisfiable {
		// Decided on the replica's facts alone: no store access.
		s.write(ctx, &m, p, nil, get)
		return
	}
	if s.cache != nil && f.Size <= s.maxCached {
		e, err := s.fill(h, &f, m)
		if err != nil {
			s.storeFailed(ctx, &f, err)
			return
		}
		s.misses.Inc()
		s.write(ctx, &e.meta, p, e.body, get)
		return
	}
	s.stream(ctx, &f, &m, p, get)
}

// answer answers from a cached entry.
func (s *Server) answer(ctx *fasthttp.RequestCtx, m *meta, body []byte, get bool) {
	s.write(ctx, m, decide(&ctx.Request.Header, m, get), body, get)
}

// write answers plan p for a file whose whole body is in memory (or nil for the answers that
// have none: 304, 412, 416).
func (s *Server) write(ctx *fasthttp.RequestCtx, m *meta, p plan, body []byte, get bool) {
	h := &ctx.Response.Header
	switch p.outcome {
	case sendPreconditionFailed:
		s.fail(ctx, errPrecondition)
		return
	case sendUnsatisfiable:
		s.fail(ctx, errUnsatisfiable)
		var b [40]byte
		h.SetCanonical(keyContentRange, strconv.AppendInt(append(b[:0], "bytes */"...), m.size, 10))
		return
	case sendNotModified:
		s.notModified.Inc()
		setValidators(h, m)
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	setHeaders(h, m)
	part := body
	if p.outcome == sendPart {
		part = body[p.start : p.start+p.length]
		setContentRange(h, p, m.size)
		s.partial.Inc()
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
	} else {
		ctx.SetStatusCode(fasthttp.StatusOK)
	}
	ctx.Response.SetBodyRaw(part)
	if get {
		s.bytesSent.Add(len(part))
	}
}

// setValidators sets the headers a 304 repeats: the validators and Cache-Control.
func setValidators(h *fasthttp.ResponseHeader, m *meta) {
	h.SetCanonical(keyCacheControl, cacheImmutable)
	if m.etag != nil {
		h.SetCanonical(keyETag, m.etag)
	}
	if m.lastModified != nil {
		h.SetCanonical(keyLastModified, m.lastModified)
	}
}

// setHeaders sets the headers of a 200 or 206 but its length and range.
func setHeaders(h *fasthttp.ResponseHeader, m *meta) {
	setValidators(h, m)
	h.SetContentTypeBytes(m.contentType)
	h.SetCanonical(keyAcceptRanges, bytesUnit)
	h.SetCanonical(keyNoSniff, nosniff)
	if m.active {
		h.SetCanonical(keyDisposition, attachment)
		h.SetCanonical(keyCSP, sandbox)
	}
}

func setContentRange(h *fasthttp.ResponseHeader, p plan, size int64) {
	var b [80]byte
	v := append(b[:0], "bytes "...)
	v = strconv.AppendInt(v, p.start, 10)
	v = append(v, '-')
	v = strconv.AppendInt(v, p.start+p.length-1, 10)
	v = append(v, '/')
	v = strconv.AppendInt(v, size, 10)
	h.SetCanonical(keyContentRange, v)
}

// fail answers err in the commerce interface's error shape.
func (s *Server) fail(ctx *fasthttp.RequestCtx, err *schema.Error) {
	pipeline.WriteError(ctx, schema.Commerce, err)
}

// storeFailed answers a failure to read f from the store: 404 for a blob the store lacks, 503
// for anything else.
func (s *Server) storeFailed(ctx *fasthttp.RequestCtx, f *schema.MediaFile, err error) {
	switch {
	case errors.Is(err, blob.ErrNotFound):
		s.missing.Inc()
		s.fail(ctx, errMissing)
	case errors.Is(err, errBusyStore):
		s.busy.Inc()
		s.fail(ctx, errBusy)
	case errors.Is(err, errMismatch):
		s.mismatches.Inc()
		s.log.Error("stored file disagrees with the replica: not served", "blob", f.BlobName, "err", err)
		s.fail(ctx, errStoreUnhealthy)
	default:
		s.storeErrors.Inc()
		s.log.Warn("blob store read failed", "blob", f.BlobName, "err", err)
		s.fail(ctx, errStoreUnhealthy)
	}
}

// errBusyStore: every store slot is taken.
var errBusyStore = errors.New("files: every store read slot is taken")

// acquire takes a store read slot, or reports false when all are taken.
func (s *Server) acquire() bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *Server) release() { <-s.slots }

// fill reads a small file whole, checks it against the replica's facts and caches it. Concurrent
// fills of one file share one read.
func (s *Server) fill(h uint64, f *schema.MediaFile, m meta) (*entry, error) {
	v, err, _ := s.fills.Do(f.BlobName, func() (any, error) {
		if !s.acquire() {
			return nil, errBusyStore
		}
		defer s.release()
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OpenTimeout)
		defer cancel()
		obj, err := s.store.Open(ctx, f.BlobName, 0)
		if err != nil {
			return nil, err
		}
		defer obj.Close()
		if err := check(obj.Info(), f); err != nil {
			return nil, err
		}
		body := make([]byte, f.Size)
		if _, err := io.ReadFull(obj, body); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%w: shorter than %d bytes", errMismatch, f.Size)
			}
			return nil, err
		}
		if f.SHA256 != "" {
			sum := sha256.Sum256(body)
			if !strings.EqualFold(hex.EncodeToString(sum[:]), f.SHA256) {
				return nil, fmt.Errorf("%w: SHA-256 %x, the replica says %s", errMismatch, sum, f.SHA256)
			}
		}
		e := &entry{name: f.BlobName, body: body, meta: m}
		s.cache.Set(h, e, int64(len(body)+len(e.name)+entryOverhead))
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*entry), nil
}

// check compares what the store says of a blob with the replica's facts.
func check(info blob.Info, f *schema.MediaFile) error {
	if info.Size != f.Size {
		return fmt.Errorf("%w: %d bytes stored, the replica says %d", errMismatch, info.Size, f.Size)
	}
	if info.SHA256 != "" && f.SHA256 != "" && !strings.EqualFold(info.SHA256, f.SHA256) {
		return fmt.Errorf("%w: SHA-256 %s stored, the replica says %s", errMismatch, info.SHA256, f.SHA256)
	}
	return nil
}

// stream answers plan p (200 or 206) for a file read from the store as fasthttp writes it. A
// HEAD asks the store whether the blob is there (Stat), and reads nothing.
func (s *Server) stream(ctx *fasthttp.RequestCtx, f *schema.MediaFile, m *meta, p plan, get bool) {
	if !s.acquire() {
		s.storeFailed(ctx, f, errBusyStore)
		return
	}
	octx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(s.cfg.OpenTimeout, cancel)
	var obj blob.Object
	var info blob.Info
	var err error
	if get {
		if obj, err = s.store.Open(octx, f.BlobName, p.start); err == nil {
			info = obj.Info()
		}
	} else {
		info, err = s.store.Stat(octx, f.BlobName)
	}
	if !timer.Stop() && err == nil {
		err = errOpenTimeout // the open took too long: its context is cancelled
	}
	if err == nil {
		err = check(info, f)
	}
	if err != nil || !get {
		if obj != nil {
			obj.Close()
		}
		cancel()
		s.release()
		if err != nil {
			s.storeFailed(ctx, f, err)
			return
		}
		setHeaders(&ctx.Response.Header, m)
		ctx.Response.Header.SetContentLength(int(m.size))
		ctx.SetStatusCode(fasthttp.StatusOK)
		return
	}
	s.streams.Inc()
	s.open.Add(1)
	setHeaders(&ctx.Response.Header, m)
	if p.outcome == sendPart {
		setContentRange(&ctx.Response.Header, p, m.size)
		s.partial.Inc()
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
	} else {
		ctx.SetStatusCode(fasthttp.StatusOK)
	}
	body := &bodyStream{s: s, obj: obj, left: p.length, cancel: cancel}
	if fo, ok := obj.(FileObject); ok {
		if file := fo.File(); file != nil {
			// fasthttp sends an *io.LimitedReader over an *os.File with sendfile(2). It does not
			// close it: the request's user values are closed once the answer is written (or the
			// connection failed), and body, among them, closes the object and frees its slot.
			ctx.SetUserValue(streamKey, body)
			s.bytesSent.Add(int(p.length))
			ctx.SetBodyStream(&io.LimitedReader{R: file, N: p.length}, int(p.length))
			return
		}
	}
	ctx.SetBodyStream(body, int(p.length))
}

// FileObject is implemented by a store's objects that are an open file positioned at the
// object's read offset (File returns it; closing the object closes it). Serve hands such a file
// to fasthttp, which sends it with sendfile(2), without copying it through user space as it
// must copy any other reader.
type FileObject interface {
	File() *os.File
}

// streamKey is the request's user value under which a file-backed stream waits to be closed.
const streamKey = "vitrine.files.stream"

// bodyStream is a streamed answer's body: at most left bytes of a store reader. fasthttp closes
// it once the body is written or the connection failed; Close releases the reader and its slot.
type bodyStream struct {
	s      *Server
	obj    blob.Object
	left   int64
	cancel context.CancelFunc
	closed atomic.Bool
}

func (b *bodyStream) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.obj.Read(p)
	b.left -= int64(n)
	b.s.bytesSent.Add(n)
	if err == io.EOF && b.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *bodyStream) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	err := b.obj.Close()
	b.cancel()
	b.s.open.Add(-1)
	b.s.release()
	return err
}
