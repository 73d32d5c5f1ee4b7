// Package edge is Vitrine's edge node: a fasthttp server answering anonymous public reads from
// an in-memory replica of the public read model, with a rendered-response cache, and forwarding
// everything else to the origin.
//
// # Overview
//
// A request goes through one pipeline (package pipeline): its tenant comes from the Host header
// (a custom domain, or a subdomain of the platform domain) or X-Tenant-Slug; an unknown tenant
// answers the same 404 as an unknown route. Then CORS per interface, the per-IP rate limit, the
// tenant's readiness, and the read floor (Vitrine-Min-Version or vitrine_min_version: the edge
// waits, bounded, for its replica to reach it, and answers 503 rather than older data).
//
// An anonymous GET is first looked up in the rendered cache under its raw key (tenant, route,
// query minus vitrine_min_version): a hit is served with no routing, no rendering, no
// compression and no allocation. A miss is routed through the route table; a route the edge
// answers is rendered from the replica (package reads) and cached under its canonical key
// (declared arguments only) and under the raw key; any other request is forwarded to the origin,
// and a forwarded write is held until the edge has applied its Vitrine-Write-Version, so a client
// reading through the same edge sees its own write.
//
// # Invariants
//
//   - A miss never goes to the origin: public reads answer from the replica, even with the origin
//     down; but for a tenant the replica shed to keep within its memory budget
//     (--max-replica-bytes, replica.Config.MaxBytes): its reads are forwarded, with Cache-Status
//     "vitrine-edge; fwd=bypass; detail=shed", and its media files answer 503 (the origin serves
//     none).
//   - Per-request headers (request id, CORS, rate limits, versions) are added at serve time and
//     never cached; cached bodies carry absolute URLs from the tenant's canonical base only.
//   - Handlers keep nothing of a *fasthttp.RequestCtx after they return.
package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/sony/gobreaker/v2"
	"github.com/valyala/fasthttp"

	"vitrine/edge/cache"
	"vitrine/edge/files"
	"vitrine/edge/pipeline"
	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// Config configures an edge. Zero values mean the defaults.
type Config struct {
	// Origin is the origin's base URL ("http://127.0.0.1:8081").
	Origin string
	// EdgeSecret authenticates this edge to the origin (Vitrine-Edge-Auth).
	EdgeSecret string
	// CacheBytes is the rendered cache's budget (default 256 MiB; negative disables the cache).
	CacheBytes int64
	// RateLimit is requests per minute per client address and tenant (default 6000; negative
	// disables rate limiting). A tenant's own rate_limit, when set, replaces it for that tenant.
	RateLimit int
	// TrustedProxies are the networks of proxies in front of the edge (load balancers, a CDN)
	// whose X-Forwarded-For is believed to find the client address. Empty: the peer is the client.
	TrustedProxies []netip.Prefix
	// WriteWait bounds how long a forwarded write's response is held for the edge to apply its
	// version (default 100ms).
	WriteWait time.Duration
	// FloorWait bounds how long a read with a version floor waits before answering 503 (default
	// 2s).
	FloorWait time.Duration
	// MaxWaiters caps concurrent floor waits; more answer 503 at once (default 10000).
	MaxWaiters int64
	// MaxFloorAhead refuses (400) a floor further than this above the highest version the edge
	// has seen of the tenant: no write made it, so waiting would only park the request
	// (default 1000000).
	MaxFloorAhead int64
	// ForwardTimeout bounds a forwarded request (default 30s). A request that was sent and not
	// answered in time has an unknown outcome: a write answers 504 outcome_unknown.
	ForwardTimeout time.Duration
	// DialTimeout bounds one connection attempt to the origin (default 2s).
	DialTimeout time.Duration
	// BreakerFailures is the number of consecutive connection failures that open the origin's
	// circuit breaker (default 5); BreakerCooldown how long it stays open before one request
	// probes the origin (default 2s). While open, forwarded requests answer 503 at once.
	BreakerFailures int
	BreakerCooldown time.Duration
	// OriginCheckInterval is how often a running edge asks the origin's /healthz (default 1s;
	// negative: never); OriginCheckTimeout bounds one such probe, connecting included (default
	// 1s); after OriginCheckFailures failed probes in a row (default 2) the origin is marked
	// unreachable: forwarded requests answer 503 with Retry-After at once, without being sent,
	// /readyz reports "degraded" with origin_reachable false, until a probe is answered again.
	OriginCheckInterval, OriginCheckTimeout time.Duration
	OriginCheckFailures                     int
	// StaleAfter is the staleness (time since the state stream was last heard from, per shard)
	// past which /readyz reports the edge degraded (default 10s). A degraded edge stays ready:
	// it keeps serving its replica, with the staleness in every answer's Vitrine-Staleness.
	StaleAfter time.Duration
	// MaxBodyBytes bounds request bodies (default 1 MiB), but media uploads'.
	MaxBodyBytes int
	// MaxUploadBytes bounds the body of a media upload (a POST to cms.media.create, forwarded to
	// the origin), which alone may pass MaxBodyBytes (default 32 MiB, the origin's bound);
	// UploadReadTimeout bounds reading such a request (default 2m, where others have 10s). The
	// edge reads an upload whole before forwarding it (see headerReceived).
	MaxUploadBytes    int
	UploadReadTimeout time.Duration
	// MediaWriteTimeout bounds writing the answer to a GET or HEAD under schema.UploadsPath (a
	// media file, perhaps large, perhaps to a slow client; default 10m).
	MediaWriteTimeout time.Duration
	// Media configures the media file server (package files) that answers those paths.
	Media files.Config
	// DrainDelay is how long, after Run's ctx ends, the edge keeps serving while /readyz answers
	// 503 "draining" and every response closes its connection, so that a load balancer takes it
	// out of rotation before it stops accepting (0: none; `vitrine edge` defaults to 5s).
	// DrainTimeout bounds the wait for requests in flight once it stops accepting (default 10s).
	// See pipeline.Drain.
	DrainDelay, DrainTimeout time.Duration
	// Blobs holds the media files (a JetStream object store bucket, or a directory shared with the
	// origin). Nil: the edge serves no media file (every path under schema.UploadsPath is 404).
	Blobs  blob.Store
	Logger *slog.Logger
	// Metrics receives the edge's metrics (default: a new set).
	Metrics *metrics.Set
}

// Server is an edge node. Its Handler is safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	rep    *replica.Replica
	cache  *cache.Cache
	router *pipeline.Router
	fwd    *forwarder
	lim    *limiter
	ids    *pipeline.RequestIDs
	http   *pipeline.HTTPMetrics

	hits, misses, fills, notModified, forwarded, forwardErrors *metrics.Counter
	floorTimeouts, writeWaitTimeouts                           *metrics.Counter
	// forwardTime times forwarded requests, answered or not (vitrine_edge_forward_duration_seconds).
	forwardTime *metrics.PrometheusHistogram
	// outcomeUnknown counts forwarded requests sent and never answered; breakerRejected the
	// requests refused while the breaker was open; breakerOpens its transitions to open.
	outcomeUnknown, breakerRejected, breakerOpens *metrics.Counter
	// originDowns counts the health check's verdicts "unreachable"; originRejected the requests
	// refused meanwhile.
	originDowns, originRejected *metrics.Counter
	unknownRoutes               *metrics.Counter
	// shedMedia counts media file requests refused because their tenant was shed.
	shedMedia    *metrics.Counter
	breakerState atomic.Int32 // gobreaker.State
	floor        *pipeline.ReadFloor
	front        *pipeline.Front
	// media answers the public media files (nil without Config.Blobs).
	media *files.Server
	// drain takes the edge out of rotation before it stops (Run).
	drain *pipeline.Drain
	// oneByOne has serve set a hit's headers one by one, never as a block (tests compare the two).
	oneByOne bool
}

// New returns an edge serving rep.
func New(cfg Config, rep *replica.Replica) (*Server, error) {
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = 256 << 20
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = 6000
	}
	if cfg.WriteWait == 0 {
		cfg.WriteWait = 100 * time.Millisecond
	}
	if cfg.FloorWait == 0 {
		cfg.FloorWait = 2 * time.Second
	}
	if cfg.MaxWaiters == 0 {
		cfg.MaxWaiters = 10000
	}
	if cfg.MaxFloorAhead == 0 {
		cfg.MaxFloorAhead = 1_000_000
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	mediaDefaults(&cfg)
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = 10 * time.Second
	}
	if cfg.BreakerCooldown == 0 {
		cfg.BreakerCooldown = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "edge"), rep: rep, ids: pipeline.NewRequestIDs(),
		http: pipeline.NewHTTPMetrics(cfg.Metrics, "edge")}
	var err error
	m := cfg.Metrics
	s.breakerOpens = m.NewCounter(`vitrine_edge_breaker_opens_total`)
	fc := forwardConfig{timeout: cfg.ForwardTimeout, dialTimeout: cfg.DialTimeout, failures: cfg.BreakerFailures,
		cooldown: cfg.BreakerCooldown, onState: func(from, to gobreaker.State) {
			s.breakerState.Store(int32(to))
			if to == gobreaker.StateOpen {
				s.breakerOpens.Inc()
			}
			s.log.Warn("origin circuit breaker", "from", from.String(), "to", to.String())
		},
		checkInterval: cfg.OriginCheckInterval, checkTimeout: cfg.OriginCheckTimeout, checkFailures: cfg.OriginCheckFailures,
		onReachable: func(reachable bool) {
			if !reachable {
				s.originDowns.Inc()
			}
		}}
	s.originDowns = m.NewCounter(`vitrine_edge_origin_unreachable_total`)
	if s.fwd, err = newForwarder(cfg.Origin, cfg.EdgeSecret, fc); err != nil {
		return nil, err
	}
	if cfg.CacheBytes > 0 {
		if s.cache, err = cache.New(cache.Config{MaxBytes: cfg.CacheBytes}); err != nil {
			return nil, err
		}
	}
	if cfg.RateLimit > 0 {
		s.lim = newLimiter(1 << 20)
	}
	s.router = pipeline.NewRouter(schema.Routes, func(r *schema.Route) pipeline.Handler {
		if r.Server != schema.AtEdge {
			return nil // not found here: forwarded
		}
		return s.read
	})
	s.hits = m.NewCounter(`vitrine_edge_cache_hits_total`)
	s.misses = m.NewCounter(`vitrine_edge_cache_misses_total`)
	s.fills = m.NewCounter(`vitrine_edge_cache_fills_total`)
	s.notModified = m.NewCounter(`vitrine_edge_not_modified_total`)
	s.forwarded = m.NewCounter(`vitrine_edge_forwarded_total`)
	s.forwardErrors = m.NewCounter(`vitrine_edge_forward_errors_total`)
	s.forwardTime = m.NewPrometheusHistogramExt(`vitrine_edge_forward_duration_seconds`, pipeline.LatencyBuckets)
	s.outcomeUnknown = m.NewCounter(`vitrine_edge_forward_outcome_unknown_total`)
	s.breakerRejected = m.NewCounter(`vitrine_edge_breaker_rejected_total`)
	s.originRejected = m.NewCounter(`vitrine_edge_origin_unreachable_rejected_total`)
	// 1 while the health check finds the origin reachable (or has no verdict yet), 0 otherwise.
	m.NewGauge(`vitrine_edge_origin_reachable`, func() float64 {
		if s.fwd.reachable() {
			return 1
		}
		return 0
	})
	s.unknownRoutes = m.NewCounter(`vitrine_edge_unknown_routes_total`)
	s.shedMedia = m.NewCounter(`vitrine_edge_shed_media_refused_total`)
	// 0 closed, 1 half-open (a probe is under way), 2 open.
	m.NewGauge(`vitrine_edge_breaker_state`, func() float64 { return float64(s.breakerState.Load()) })
	s.floorTimeouts = m.NewCounter(`vitrine_edge_floor_timeouts_total`)
	s.floor = &pipeline.ReadFloor{Wait: cfg.FloorWait, MaxAhead: cfg.MaxFloorAhead, MaxWaiters: cfg.MaxWaiters,
		Behind: "This edge has not caught up with the requested version yet; retry shortly", OnTimeout: s.floorTimeouts.Inc}
	s.writeWaitTimeouts = m.NewCounter(`vitrine_edge_write_wait_timeouts_total`)
	s.front = &pipeline.Front{Tenants: rep, IDs: s.ids, HTTP: s.http, Floor: s.floor, Routes: s.router, Health: s.health, Tail: s.tail}
	if s.lim != nil {
		s.front.Admit = s.rateLimit
	}
	m.NewGauge(`vitrine_edge_floor_waiters`, func() float64 { return float64(s.floor.Waiters()) })
	s.drain = pipeline.NewDrain(pipeline.DrainConfig{Delay: cfg.DrainDelay, Timeout: cfg.DrainTimeout, Process: "edge", Logger: s.log, Metrics: m,
		DeadlineSlack: deadlineSlack})
	if cfg.Blobs != nil {
		mc := cfg.Media
		mc.Logger, mc.Metrics = s.log, m
		if s.media, err = files.New(mc, cfg.Blobs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Close releases the cache.
func (s *Server) Close() {
	if s.cache != nil {
		s.cache.Close()
	}
	if s.media != nil {
		s.media.Close()
	}
}

// deadlineSlack is how late Run's connections may enforce the server's read, write and idle
// timeouts (pipeline.LazyDeadlines): setting three exact deadlines per request cost about a
// third of a cache hit's work beyond bare fasthttp's (BenchmarkHitServer).
const deadlineSlack = time.Second

// Listener wraps a listener as Run does before serving HTTPServer on it (tests, benchmarks).
func Listener(ln net.Listener) net.Listener { return pipeline.LazyDeadlines(ln, deadlineSlack) }

// HTTPServer returns the fasthttp server to run the edge with.
func (s *Server) HTTPServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               s.drain.Handler(s.Handler),
		ErrorHandler:          pipeline.ServerErrorHandler,
		Logger:                pipeline.FastHTTPLogger(s.log),
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          s.cfg.ForwardTimeout + 10*time.Second,
		IdleTimeout:           60 * time.Second,
		MaxRequestBodySize:    s.cfg.MaxBodyBytes,
		// Media uploads, and only they, may pass MaxRequestBodySize; media files may take longer
		// to write.
		HeaderReceived:  s.headerReceived(),
		ReadBufferSize:  pipeline.MaxHeaderBytes,
		CloseOnShutdown: true,
		// The edge reads no form: a multipart body is forwarded byte for byte, never parsed (fasthttp
		// would re-encode it on the way out, losing each part's headers, and spill large files to
		// disk).
		DisablePreParseMultipartForm: true,
	}
}

var (
	keyETag             = []byte(fasthttp.HeaderETag)
	keyCacheControl     = []byte(fasthttp.HeaderCacheControl)
	keyContentEncoding  = []byte(fasthttp.HeaderContentEncoding)
	keyRobots           = []byte("X-Robots-Tag")
	keyNoSniff          = []byte("X-Content-Type-Options")
	keyAllow            = []byte(fasthttp.HeaderAllow)
	keyRateLimit        = []byte("RateLimit-Limit")
	keyRateRemaining    = []byte("RateLimit-Remaining")
	keyRateReset        = []byte("RateLimit-Reset")
	keyCacheStatus      = []byte("Cache-Status")
	keyStaleness        = []byte(HeaderStaleness)
	keyReplicaVersion   = []byte(pipeline.HeaderReplicaVersion)
	cacheControlPublic  = []byte("public, no-cache")
	cacheControlPrivate = []byte("private, no-store")
	varyAcceptEncoding  = []byte("Accept-Encoding")
	noindex             = []byte("noindex")
	nosniff             = []byte("nosniff")
	stateKey            = "vitrine.edge.request"
	contentTypeCommerce = string(pipeline.ContentTypeCommerce)
	contentTypeCMS      = string(pipeline.ContentTypeCMS)
)

// request is the state a routed read needs; it lives for one request (misses only).
type request struct {
	pipeline.Request
	cacheable bool
	rawKey    []byte
	// shaped: the query names CMS shaping parameters (_fields, _envelope, _jsonp).
	shaped bool
}

// Handler serves one request: the shared front of the pipeline (pipeline.Front), then tail.
func (s *Server) Handler(ctx *fasthttp.RequestCtx) { s.front.Serve(ctx) }

// tail is the edge's own part of a request: the rendered cache, then the route table; a route
// the edge answers is read from the replica, anything else forwarded to the origin.
func (s *Server) tail(ctx *fasthttp.RequestCtx, rq pipeline.Request) {
	iface, t := rq.Iface, rq.Tenant
	// A CMS post password unlocks content only the origin's full replica holds.
	anonymous := rq.Headers.Anonymous() && !(iface == schema.CMS && ctx.QueryArgs().Has("password"))
	// A tenant shed to keep the replica within its memory budget has no state here: whatever
	// the replica would answer is forwarded to the origin, which holds it (see Config and
	// replica.Tenant.Shed); nothing is looked up in the cache.
	shed := t.Shed()
	// OPTIONS on a CMS route describes the route to anyone, without its handler; with
	// credentials it is forwarded like any other request, so that a bad one is a 401 first.
	if iface == schema.CMS && anonymous && ctx.IsOptions() && !shed {
		s.options(ctx, t, rq.Route)
		return
	}
	// A media file: public files are in the replica's file index, whoever asks (credentials
	// change nothing: a private attachment's file is never at an edge).
	if iface == schema.Commerce && s.media != nil && (ctx.IsGet() || ctx.IsHead()) && bytes.HasPrefix(rq.Route, uploadsPath) {
		s.serveMedia(ctx, t, rq.Route[len(uploadsPath):])
		return
	}
	cacheable := s.cache != nil && (ctx.IsGet() || ctx.IsHead()) && anonymous && !shed
	var kb [512]byte
	var raw []byte
	if cacheable {
		raw = rawKey(kb[:0], t, iface, rq.Route, ctx.URI().QueryString())
		if raw != nil {
			if e := s.cache.Get(cache.Hash(raw), raw, ctx.Time().UnixNano()); e != nil {
				s.hits.Inc()
				s.serve(ctx, iface, t, e, &rq.Headers, cacheStatusHit)
				return
			}
		}
	}
	h := s.router.Lookup(ctx, iface, ctx.Method(), rq.Route)
	if h == nil || !anonymous || shed {
		// Not a route the edge answers, or a request the replica must not answer (credentials,
		// a post password, a shed tenant): the origin answers it from its full replica, if the
		// route table has a route the origin could match. The edge holds the whole table: it
		// answers an unknown route itself, as the origin would.
		if !s.routable(ctx, iface, rq.Route, anonymous) {
			s.noRoute(ctx, iface, t, rq.Route)
			return
		}
		why := cacheStatusBypass // a route only the origin answers
		switch {
		case shed && anonymous && (h != nil || (iface == schema.CMS && ctx.IsOptions())):
			why = cacheStatusShed // a read the replica would answer, but for its budget
		case !ctx.IsGet() && !ctx.IsHead():
			why = cacheStatusMethod
		case !anonymous:
			why = cacheStatusRequest
		}
		s.forward(ctx, iface, t, rq.ID, why)
		return
	}
	ctx.SetUserValue(stateKey, &request{Request: rq, cacheable: cacheable && raw != nil, rawKey: bytes.Clone(raw),
		shaped: iface == schema.CMS && pipeline.HasShapeParams(ctx.QueryArgs())})
	h(ctx)
}

var uploadsPath = []byte(schema.UploadsPath)

// errShedMedia answers a media file of a tenant the replica shed: the edge no longer knows its
// files, and the origin serves none. The tenant stays shed until the edge bootstraps again.
var errShedMedia = &schema.Error{Code: schema.CodeNotReady, CMSCode: "rest_replica_not_ready",
	Message:    "This edge does not hold this store's files at the moment (its replica is over its memory budget); retry later or through another edge",
	RetryAfter: 30}

// serveMedia answers a media file by its path under the uploads root: 404 unless the tenant's
// replica holds it as a public file.
func (s *Server) serveMedia(ctx *fasthttp.RequestCtx, t *replica.Tenant, path []byte) {
	f, ok := t.MediaFile(string(path))
	if !ok && t.Shed() {
		// The file index of a shed tenant is gone, and the origin serves no media file: a 404
		// would be a lie.
		s.shedMedia.Inc()
		pipeline.WriteError(ctx, schema.Commerce, errShedMedia)
	} else if !ok {
		pipeline.NotFound(ctx, schema.Commerce)
	} else {
		s.media.Serve(ctx, f)
	}
	s.setReplicaVersion(ctx, t)
	s.http.Observe(ctx, pipeline.RouteMedia, ctx.Response.StatusCode())
}

// Cache-Status values (RFC 9211) of the edge's answers: a cache hit; a miss rendered from the
// replica and stored (or not stored: an answer that is not cached, such as an error); and the
// reasons a request is forwarded to the origin: its method, its credentials, a route only the
// origin answers, or a read of a tenant the replica shed to keep within its memory budget.
var (
	cacheStatusShed    = []byte("vitrine-edge; fwd=bypass; detail=shed")
	cacheStatusHit     = []byte("vitrine-edge; hit")
	cacheStatusStored  = []byte("vitrine-edge; fwd=miss; stored")
	cacheStatusMiss    = []byte("vitrine-edge; fwd=miss")
	cacheStatusNoCache = []byte("vitrine-edge; fwd=bypass; detail=replica")
	cacheStatusMethod  = []byte("vitrine-edge; fwd=method")
	cacheStatusRequest = []byte("vitrine-edge; fwd=request")
	cacheStatusBypass  = []byte("vitrine-edge; fwd=bypass")
)

// routable reports whether the origin could route a request the edge does not answer: a route of
// the table matches its method and path. A CMS POST with a method override (_method,
// X-HTTP-Method-Override, applied at the origin) is routable when its path has a route for any
// method, or when it overrides to OPTIONS; a CMS OPTIONS with credentials when its path has a
// route (an anonymous one was answered already).
func (s *Server) routable(ctx *fasthttp.RequestCtx, iface schema.Interface, route []byte, anonymous bool) bool {
	if s.router.Match(ctx, iface, string(ctx.Method()), route) != nil {
		return true
	}
	if iface != schema.CMS {
		return false
	}
	if ctx.IsPost() {
		m := ctx.QueryArgs().Peek("_method")
		if len(m) == 0 {
			m = ctx.Request.Header.Peek("X-HTTP-Method-Override")
		}
		if len(m) == 0 {
			return false
		}
		if bytes.EqualFold(m, []byte("OPTIONS")) {
			return true
		}
	} else if !ctx.IsOptions() {
		return false
	}
	return s.router.MatchPath(ctx, iface, route) != nil
}

// noRoute answers a request no route of the table matches, as the origin does: for the commerce
// interface, 405 with Allow when the path has routes for other methods, else the 404 of an
// unknown route (the CMS answers rest_no_route for both, as WordPress does).
func (s *Server) noRoute(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, route []byte) {
	s.unknownRoutes.Inc()
	if iface == schema.CMS && ctx.IsOptions() {
		// A credentialed OPTIONS on a path without routes: the description of no route.
		s.options(ctx, t, route)
		return
	}
	if allowed := s.router.AllowedAny(iface, route); iface == schema.Commerce && len(allowed) > 0 {
		ctx.Response.Header.SetCanonical(keyAllow, pipeline.AllowValue(allowed))
		pipeline.WriteError(ctx, iface, &schema.Error{Code: schema.CodeNotAllowed, Message: "Method not allowed"})
	} else {
		pipeline.NotFound(ctx, iface)
	}
	pipeline.Reshape(ctx, iface, apiRoot(t))
	s.http.Observe(ctx, pipeline.RouteNotFound, ctx.Response.StatusCode())
}

// apiRoot is the URL of a tenant's CMS discovery index ("" before its registry entry arrived).
func apiRoot(t *replica.Tenant) string {
	if info := t.Info(); info != nil {
		return pipeline.SiteAPIRoot(info.BaseURL)
	}
	return ""
}

// options answers OPTIONS on a CMS path with the route's description (pipeline.Options).
func (s *Server) options(ctx *fasthttp.RequestCtx, t *replica.Tenant, route []byte) {
	base := ""
	if info := t.Info(); info != nil {
		base = info.BaseURL
	}
	pipeline.Options(ctx, base, route)
	if r := s.router.MatchPath(ctx, schema.CMS, route); r != nil {
		// WordPress's OPTIONS answer carries the Allow of the route it describes too.
		param := pipeline.Params(ctx)
		if allow := pipeline.AllowValue(s.anonymousAllow(t, r, param, pipeline.Query(ctx))); len(allow) > 0 {
			ctx.Response.Header.SetCanonical(keyAllow, allow)
		}
	}
	pipeline.Reshape(ctx, schema.CMS, apiRoot(t))
	s.setReplicaVersion(ctx, t)
	s.http.Observe(ctx, pipeline.RouteNotFound, ctx.Response.StatusCode())
}

// rawKey builds the cache key of a request as it came: tenant, interface, route and the query
// minus the routing and read-floor parameters. It returns nil when the key does not fit dst (such
// a request is simply not looked up raw).
func rawKey(dst []byte, t *replica.Tenant, iface schema.Interface, route, query []byte) []byte {
	if len(t.Slug)+len(route)+len(query)+8 > cap(dst) {
		return nil
	}
	dst = append(dst, 'r', byte('0'+iface))
	dst = append(dst, t.Slug...)
	dst = append(dst, 0)
	dst = append(dst, route...)
	dst = append(dst, 0)
	for len(query) > 0 {
		seg := query
		if i := bytes.IndexByte(query, '&'); i >= 0 {
			seg, query = query[:i], query[i+1:]
		} else {
			query = nil
		}
		if len(seg) == 0 || bytes.HasPrefix(seg, []byte("rest_route=")) || bytes.HasPrefix(seg, []byte("vitrine_min_version=")) {
			continue
		}
		dst = append(dst, seg...)
		dst = append(dst, '&')
	}
	return dst
}

// canonicalKey builds the key of a read from its route, path parameters and declared arguments.
func canonicalKey(t *replica.Tenant, r *schema.Route, ctx *fasthttp.RequestCtx, args *schema.Args) []byte {
	k := make([]byte, 0, 128)
	k = append(k, 'c')
	k = append(k, t.Slug...)
	k = append(k, 0)
	k = append(k, r.Name...)
	k = append(k, 0)
	k = append(k, pipeline.Param(ctx, "slug")...)
	k = append(k, pipeline.Param(ctx, "id")...)
	k = append(k, 0)
	if r.Interface == schema.CMS {
		k = pipeline.AppendEmbedKey(k, ctx.QueryArgs())
	}
	return args.AppendKey(k)
}

// read answers a route the edge serves: from the cache under its canonical key, else rendered
// from the replica and cached.
func (s *Server) read(ctx *fasthttp.RequestCtx, r *schema.Route) {
	st := ctx.UserValue(stateKey).(*request)
	t, iface := st.Tenant, st.Iface
	s.misses.Inc()
	var ck []byte
	if st.cacheable {
		args, err := schema.ParseArgs(r, pipeline.Query(ctx))
		if err != nil {
			s.failAllow(ctx, iface, t, r, err)
			return
		}
		ck = canonicalKey(t, r, ctx, args)
		if st.shaped {
			// The shaped answer is cached under the canonical key and the normalised shape.
			sh := pipeline.ParseShape(ctx.QueryArgs())
			sk := sh.Key(bytes.Clone(ck))
			if e := s.cache.Get(cache.Hash(sk), sk, ctx.Time().UnixNano()); e != nil {
				s.alias(e, st.rawKey)
				s.serve(ctx, iface, t, e, &st.Headers, cacheStatusHit)
				return
			}
		}
		if e := s.cache.Get(cache.Hash(ck), ck, ctx.Time().UnixNano()); e != nil {
			if st.shaped {
				s.serveShaped(ctx, iface, t, e, st, cacheStatusHit)
				return
			}
			s.alias(e, st.rawKey)
			s.serve(ctx, iface, t, e, &st.Headers, cacheStatusHit)
			return
		}
	}
	param := pipeline.Params(ctx)
	resp := reads.Answer(&reads.Request{Route: r, Tenant: t, Query: pipeline.Query(ctx), Param: param, Allow: s.selfHints(t)})
	if t.Shed() {
		// Shed while this answer was rendered: it may come from the empty snapshot, published
		// after the flag. The origin answers instead.
		s.forward(ctx, iface, t, st.ID, cacheStatusShed)
		return
	}
	if resp.Err != nil {
		s.failAllow(ctx, iface, t, r, resp.Err)
		return
	}
	headers := resp.Headers
	var allow []byte
	if iface == schema.CMS {
		allow = pipeline.AllowValue(s.anonymousAllow(t, r, param, pipeline.Query(ctx)))
	}
	if len(allow) > 0 {
		// Part of the entry: every anonymous request with this key passes the same checks.
		headers = append(headers, [2][]byte{keyAllow, allow})
	}
	if iface == schema.CMS && !hasHeader(headers, "Link") {
		if info := t.Info(); info != nil {
			headers = append(headers, [2][]byte{[]byte("Link"), []byte(pipeline.APIRootLink(pipeline.SiteAPIRoot(info.BaseURL)))})
		}
	}
	if !st.cacheable || !resp.Cacheable() {
		// Nothing to keep: answer without pre-compressing.
		s.writeUncached(ctx, iface, t, r, resp.Status, resp.Body, headers, resp.ContentType)
		return
	}
	contentType := contentTypeCommerce
	if iface == schema.CMS {
		contentType = contentTypeCMS
	}
	if resp.ContentType != "" { // an oEmbed response in XML, the embed page
		contentType = resp.ContentType
	}
	var expires int64
	if !resp.Expires.IsZero() {
		expires = resp.Expires.UnixNano()
	}
	e := cache.BuildFor(ck, resp.Status, contentType, resp.Body, resp.Deps, expires, headers, pipeline.RouteIndex(r), st.Headers.AcceptEncoding)
	s.cache.Put(cache.Hash(ck), e)
	s.fills.Inc()
	if st.shaped {
		s.serveShaped(ctx, iface, t, e, st, cacheStatusStored)
		return
	}
	s.alias(e, st.rawKey)
	s.serve(ctx, iface, t, e, &st.Headers, cacheStatusStored)
}

// serveShaped answers a CMS read whose query shapes it (_fields, _envelope, _jsonp) from the
// entry of its unshaped answer: the shaped body is built once, cached under the canonical key
// plus the normalised shape (and the raw key), and served like any entry, so the next identical
// request is an allocation-free hit.
func (s *Server) serveShaped(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, e *cache.Entry, st *request, cs []byte) {
	sh := pipeline.ParseShape(ctx.QueryArgs())
	out := sh.Apply(e.Status, e.Headers, e.Identity, apiRoot(t))
	sk := sh.Key(bytes.Clone(e.Key))
	se := cache.BuildFor(sk, out.Status, string(out.ContentType), out.Body, e.Deps, e.Expires, out.Headers, e.Route, st.Headers.AcceptEncoding)
	s.cache.Put(cache.Hash(sk), se)
	s.alias(se, st.rawKey)
	s.serve(ctx, iface, t, se, &st.Headers, cs)
}

// writeUncached answers a rendered body that is not cached.
// contentType "" is the interface's JSON.
func (s *Server) writeUncached(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, r *schema.Route, status int, body []byte, headers [][2][]byte, contentType string) {
	h := &ctx.Response.Header
	for _, kv := range headers {
		h.SetBytesKV(kv[0], kv[1])
	}
	h.SetBytesV(fasthttp.HeaderCacheControl, cacheControlPublic)
	if iface == schema.CMS {
		h.SetBytesV("X-Robots-Tag", noindex)
		h.SetBytesV("X-Content-Type-Options", nosniff)
	}
	if contentType != "" {
		h.SetContentType(contentType)
	} else {
		h.SetContentTypeBytes(pipeline.ContentType(iface))
	}
	s.setReplicaVersion(ctx, t)
	if s.cache != nil {
		h.SetCanonical(keyCacheStatus, cacheStatusMiss)
	} else {
		h.SetCanonical(keyCacheStatus, cacheStatusNoCache)
	}
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
	pipeline.Reshape(ctx, iface, apiRoot(t))
	s.http.Observe(ctx, pipeline.RouteIndex(r), ctx.Response.StatusCode())
}

func hasHeader(h [][2][]byte, name string) bool {
	for _, kv := range h {
		if string(kv[0]) == name {
			return true
		}
	}
	return false
}

// alias stores e under the raw key of a request too, sharing its bodies.
func (s *Server) alias(e *cache.Entry, raw []byte) {
	if raw == nil || bytes.Equal(raw, e.Key) {
		return
	}
	a := *e
	a.Key = raw
	s.cache.Put(cache.Hash(raw), &a)
}

// failAllow is fail for a CMS read the edge routed: the error carries the Allow header of the
// matched route for an anonymous caller, as WordPress's errors after routing do.
func (s *Server) failAllow(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, r *schema.Route, err error) {
	if iface == schema.CMS {
		param := pipeline.Params(ctx)
		if allow := pipeline.AllowValue(s.anonymousAllow(t, r, param, pipeline.Query(ctx))); len(allow) > 0 {
			ctx.Response.Header.SetCanonical(keyAllow, allow)
		}
	}
	s.fail(ctx, iface, r, err)
}

func (s *Server) fail(ctx *fasthttp.RequestCtx, iface schema.Interface, r *schema.Route, err error) {
	pipeline.WriteError(ctx, iface, err)
	t := ctx.UserValue(stateKey).(*request).Tenant
	pipeline.Reshape(ctx, iface, apiRoot(t))
	s.setReplicaVersion(ctx, t)
	ctx.Response.Header.SetCanonical(keyCacheStatus, cacheStatusMiss)
	s.http.Observe(ctx, pipeline.RouteIndex(r), ctx.Response.StatusCode())
}

// serve writes a cached or freshly rendered entry with the per-request headers; cs is its
// Cache-Status.
func (s *Server) serve(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, e *cache.Entry, hs *pipeline.Headers, cs []byte) {
	h := &ctx.Response.Header
	var lines []byte
	if iface == schema.CMS {
		lines = e.Lines(cmsLines)
	} else {
		lines = e.Lines(commerceLines)
	}
	var buf [1024]byte
	if lines != nil && len(lines)+192 <= len(buf) && !s.oneByOne {
		// Cache-Status, the entry's headers and the replica's, as one block (pipeline.SetLines):
		// one fasthttp call instead of eight or more.
		b := buf[:0]
		if s.http.AccessOn() {
			h.SetCanonical(keyCacheStatus, cs) // the access log reads it back
		} else {
			b = pipeline.AppendLine(b, keyCacheStatus, cs)
		}
		b = append(b, lines...)
		b = pipeline.AppendIntLine(b, keyReplicaVersion, t.Version())
		b = pipeline.AppendIntLine(b, keyStaleness, s.staleness(ctx, t))
		pipeline.SetLines(h, b)
	} else {
		h.SetCanonical(keyCacheStatus, cs)
		h.SetCanonical(keyETag, e.ETag)
		h.SetCanonical(keyCacheControl, cacheControlPublic)
		h.AddBytesV(fasthttp.HeaderVary, varyAcceptEncoding)
		s.setReplicaVersion(ctx, t)
		for _, kv := range e.Headers {
			h.SetBytesKV(kv[0], kv[1])
		}
		if iface == schema.CMS {
			h.SetCanonical(keyRobots, noindex)
			h.SetCanonical(keyNoSniff, nosniff)
		}
	}
	if len(hs.IfNoneMatch) > 0 && etagMatches(hs.IfNoneMatch, e.ETag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		s.notModified.Inc()
		s.http.Observe(ctx, e.Route, fasthttp.StatusNotModified)
		return
	}
	up, body, enc := e.Serve(hs.AcceptEncoding)
	if up != nil {
		// The first request for a coding the entry lacks makes it (cache.BuildFor), once.
		s.cache.Put(cache.Hash(up.Key), up)
	}
	if enc != nil {
		h.SetContentEncodingBytes(enc)
	}
	h.SetContentTypeBytes(e.ContentType)
	ctx.SetStatusCode(e.Status)
	ctx.Response.SetBodyRaw(body)
	s.http.Observe(ctx, e.Route, e.Status)
}

func commerceLines(e *cache.Entry) []byte { return entryLines(e, false) }
func cmsLines(e *cache.Entry) []byte      { return entryLines(e, true) }

// entryLines makes the header lines serve sends for an entry whatever the request
// (cache.Entry.Lines): ETag, Cache-Control, Vary, the entry's own headers and, on the CMS, the
// robots and sniffing headers, with the values the one-by-one path gives them (they are set on a
// scratch header the same way, in the same order). It returns nil, and serve sets them one by
// one, when the entry's headers name a header fasthttp keeps apart or one set per request: one
// by one they replace it, a block would repeat it.
func entryLines(e *cache.Entry, cms bool) []byte {
	for _, kv := range e.Headers {
		// A Vary of the entry's would replace CORS's Vary: Origin one by one.
		if bytes.EqualFold(kv[0], []byte(fasthttp.HeaderVary)) || perRequestHeader(kv[0]) {
			return nil
		}
	}
	var h fasthttp.ResponseHeader
	h.SetNoDefaultContentType(true)
	h.SetCanonical(keyETag, e.ETag)
	h.SetCanonical(keyCacheControl, cacheControlPublic)
	h.AddBytesV(fasthttp.HeaderVary, varyAcceptEncoding)
	for _, kv := range e.Headers {
		h.SetBytesKV(kv[0], kv[1])
	}
	if cms {
		h.SetCanonical(keyRobots, noindex)
		h.SetCanonical(keyNoSniff, nosniff)
	}
	var b []byte
	for k, v := range h.All() {
		if perRequestHeader(k) {
			return nil
		}
		b = pipeline.AppendLine(b, k, v)
	}
	return b
}

// perRequestHeader reports whether a hit's answer may carry a header of this name besides the
// entry's lines, or fasthttp writes it from its own fields.
func perRequestHeader(name []byte) bool {
	for _, n := range [...]string{pipeline.HeaderRequestID, "Cache-Status", pipeline.HeaderReplicaVersion, HeaderStaleness,
		fasthttp.HeaderContentType, fasthttp.HeaderContentLength, fasthttp.HeaderContentEncoding, fasthttp.HeaderServer,
		fasthttp.HeaderSetCookie, fasthttp.HeaderTrailer, fasthttp.HeaderConnection, fasthttp.HeaderTransferEncoding, fasthttp.HeaderDate} {
		if bytes.EqualFold(name, []byte(n)) {
			return true
		}
	}
	return hasPrefixFold(name, "Access-Control-") || hasPrefixFold(name, "RateLimit-")
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// anonymousAllow lists the methods at route r's path whose permission check an anonymous
// caller passes for this request (WordPress's Allow header): never a route that needs a
// credential; the reads the edge answers by their read check (reads.Permitted). Public routes
// the origin answers have paths the edge does not serve.
func (s *Server) anonymousAllow(t *replica.Tenant, r *schema.Route, param func(string) string, query func(string) (string, bool)) []string {
	return schema.AllowedMethods(s.router.At(r), func(x *schema.Route) bool {
		return x.Auth == schema.AuthPublic && x.Server == schema.AtEdge &&
			reads.Permitted(&reads.Request{Route: x, Tenant: t, Param: param, Query: query})
	})
}

// selfHints returns the targetHints of the records an anonymous read renders: for the rest path
// of a self link, anonymousAllow for a GET of that link (no query), as WordPress's
// get_target_hints_for_link.
func (s *Server) selfHints(t *replica.Tenant) func(path string) []string {
	var probe *fasthttp.RequestCtx
	noQuery := func(string) (string, bool) { return "", false }
	return func(path string) []string {
		if probe == nil {
			probe = new(fasthttp.RequestCtx)
		}
		probe.ResetUserValues()
		r := s.router.Match(probe, schema.CMS, "GET", []byte(path))
		if r == nil {
			return []string{}
		}
		return s.anonymousAllow(t, r, pipeline.Params(probe), noQuery)
	}
}

// etagMatches reports whether an If-None-Match value names etag ("*", a list, weak forms).
func etagMatches(inm, etag []byte) bool {
	for len(inm) > 0 {
		var tok []byte
		if i := bytes.IndexByte(inm, ','); i >= 0 {
			tok, inm = inm[:i], inm[i+1:]
		} else {
			tok, inm = inm, nil
		}
		tok = bytes.TrimSpace(tok)
		tok = bytes.TrimPrefix(tok, []byte("W/"))
		if bytes.Equal(tok, etag) || (len(tok) == 1 && tok[0] == '*') {
			return true
		}
	}
	return false
}

// HeaderStaleness is the response header of an answer from the replica: how many seconds (an
// integer, as Age) the edge has not heard from the state stream about the tenant's shard. A
// healthy edge says 0 or 1; past Config.StaleAfter, /readyz reports the edge degraded.
const HeaderStaleness = "Vitrine-Staleness"

// setReplicaVersion sets the headers of an answer from the replica: Vitrine-Replica-Version and
// Vitrine-Staleness. It does not allocate.
func (s *Server) setReplicaVersion(ctx *fasthttp.RequestCtx, t *replica.Tenant) {
	pipeline.SetReplicaVersion(&ctx.Response.Header, t.Version())
	var b [20]byte
	ctx.Response.Header.SetCanonical(keyStaleness, strconv.AppendInt(b[:0], s.staleness(ctx, t), 10))
}

// staleness is the Vitrine-Staleness of an answer about tenant t, in seconds.
func (s *Server) staleness(ctx *fasthttp.RequestCtx, t *replica.Tenant) int64 {
	shard := 0
	if info := t.Info(); info != nil {
		shard = info.Shard
	}
	return int64(s.rep.Staleness(shard, ctx.Time()) / time.Second)
}

// rateLimit spends a token of the client's bucket at tenant t; when none is left it answers 429.
// Every answer carries RateLimit-Limit, -Remaining and -Reset (seconds).
func (s *Server) rateLimit(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant) bool {
	limit := s.cfg.RateLimit
	if info := t.Info(); info != nil && info.RateLimit > 0 {
		limit = info.RateLimit
	}
	ok, remaining, retry := s.lim.allow(pipeline.ClientAddr(ctx, s.cfg.TrustedProxies), t.Slug, limit, ctx.Time().UnixNano())
	var b [128]byte
	lines := pipeline.AppendIntLine(b[:0], keyRateLimit, int64(limit))
	lines = pipeline.AppendIntLine(lines, keyRateRemaining, int64(remaining))
	lines = pipeline.AppendIntLine(lines, keyRateReset, int64(retry))
	pipeline.SetLines(&ctx.Response.Header, lines)
	if ok {
		return true
	}
	pipeline.WriteError(ctx, iface, &schema.Error{Code: schema.CodeRateLimited, CMSCode: "rest_rate_limited",
		Message: "Too many requests; retry later", RetryAfter: retry})
	return false
}

// forward sends a request to the origin; why is its Cache-Status. A successful write's response
// is held until the edge has applied the write's version (bounded by WriteWait).
//
// When the origin does not answer, what the client is told depends on whether the request was
// sent: never sent (the connection failed, or the breaker is open) is 503 with Retry-After,
// safe to retry; sent and unanswered (timed out, connection lost while waiting) is, for a write,
// 504 outcome_unknown without retry advice: the origin may have applied it, or may apply it
// when it resumes. A read sent and unanswered is 504 with Retry-After: reading again is safe.
func (s *Server) forward(ctx *fasthttp.RequestCtx, iface schema.Interface, t *replica.Tenant, rid []byte, why []byte) {
	s.forwarded.Inc()
	id := bytes.Clone(rid)
	safe := ctx.IsGet() || ctx.IsHead() || ctx.IsOptions()
	start := time.Now()
	err := s.fwd.forward(ctx, id, t.Slug, pipeline.ClientAddr(ctx, s.cfg.TrustedProxies))
	s.forwardTime.UpdateDuration(start)
	ctx.Response.Header.Set(pipeline.HeaderRequestID, string(id))
	if err != nil {
		s.forwardErrors.Inc()
		var e *schema.Error
		switch {
		case errors.Is(err, errOriginDown):
			s.originRejected.Inc()
			e = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_origin_unavailable",
				Message: "The store's origin is unreachable from this edge; retry shortly", RetryAfter: max(1, int(s.fwd.checkInterval/time.Second))}
		case errors.Is(err, errBreakerOpen):
			s.breakerRejected.Inc()
			e = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_origin_unavailable",
				Message: "The store's origin is unavailable; retry shortly", RetryAfter: max(1, int(s.cfg.BreakerCooldown/time.Second))}
		case neverSent(err):
			s.log.Warn("origin unavailable", "err", err, "request_id", string(id))
			e = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_origin_unavailable",
				Message: "The store's origin is unavailable; retry shortly", RetryAfter: 1}
		case safe:
			s.log.Warn("origin did not answer", "err", err, "request_id", string(id))
			e = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_origin_timeout", Status: fasthttp.StatusGatewayTimeout,
				Message: "The store's origin did not answer in time; retry shortly", RetryAfter: 1}
		default:
			s.outcomeUnknown.Inc()
			s.log.Error("forwarded request sent and not answered: outcome unknown", "err", err, "request_id", string(id),
				"method", string(ctx.Method()), "path", string(ctx.Path()))
			e = &schema.Error{Code: schema.CodeOutcomeUnknown, CMSCode: "rest_outcome_unknown",
				Message: "The store's origin received the request but did not answer in time: it may or may not have been applied. " +
					"Check before retrying, or retry with the same Idempotency-Key"}
		}
		pipeline.CORS(&ctx.Response.Header, iface, ctx.Request.Header.Peek(fasthttp.HeaderOrigin))
		pipeline.WriteError(ctx, iface, e)
		pipeline.Reshape(ctx, iface, apiRoot(t))
		pipeline.SetReplicaVersion(&ctx.Response.Header, t.Version())
		ctx.Response.Header.SetCanonical(keyCacheStatus, why)
		s.http.Observe(ctx, pipeline.RouteForwarded, ctx.Response.StatusCode())
		return
	}
	pipeline.CORS(&ctx.Response.Header, iface, ctx.Request.Header.Peek(fasthttp.HeaderOrigin))
	if status := ctx.Response.StatusCode(); status >= 200 && status < 300 {
		if wv := ctx.Response.Header.Peek(pipeline.HeaderWriteVersion); len(wv) > 0 {
			if v, err := fasthttp.ParseUint(wv); err == nil && !t.WaitFor(int64(v), s.cfg.WriteWait) {
				s.writeWaitTimeouts.Inc()
			}
		}
	}
	pipeline.SetReplicaVersion(&ctx.Response.Header, t.Version())
	if len(ctx.Response.Header.Peek(fasthttp.HeaderCacheControl)) == 0 {
		ctx.Response.Header.SetBytesV(fasthttp.HeaderCacheControl, cacheControlPrivate)
	}
	ctx.Response.Header.AddBytesKV(keyCacheStatus, why)
	s.http.Observe(ctx, pipeline.RouteForwarded, ctx.Response.StatusCode())
}

// health answers /healthz (the process is up) and /readyz (Readiness).
func (s *Server) health(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentTypeBytes(pipeline.ContentTypeCommerce)
	ctx.Response.Header.SetBytesV(fasthttp.HeaderCacheControl, cacheControlPrivate)
	if string(ctx.Path()) == "/healthz" {
		ctx.SetBodyString(`{"status":"ok"}`)
		return
	}
	status, body := s.Readiness(time.Now())
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// Readiness is the edge's /readyz answer, a status and a JSON body:
//
//   - 503 "bootstrapping" until the replica has completed its bootstrap and every tenant it
//     serves has had its first checkpoint;
//   - 503 "draining" from the stop signal on (Run, pipeline.Drain): a load balancer takes the
//     edge out of rotation while it still serves;
//   - 200 "degraded" when a shard's staleness (time since the state stream was last heard from
//     about it, per shard and for the registry) exceeds StaleAfter: the edge keeps serving its
//     replica (decision 22), every answer saying how stale in Vitrine-Staleness, and operators
//     alert on the status or on vitrine_feed_staleness_seconds;
//   - 200 "degraded" too when the follower skipped changes of a change schema newer than this
//     build reads (a writer upgraded before its readers): those logs stay at the last version
//     this edge could read, listed under unsupported_changes with their schema;
//   - 200 "degraded" too while the origin health check finds the origin unreachable
//     (origin_reachable false): reads are answered, writes refused at once with 503;
//   - 200 "ok" otherwise.
//
// The body lists each shard's staleness in seconds and whether it is past StaleAfter, and the
// replica's memory budget: its bytes (0: unlimited), the bytes held, and the tenants shed to keep
// within it. Shedding leaves the edge ready: every tenant is still answered, a shed one's reads
// by the origin.
func (s *Server) Readiness(now time.Time) (int, []byte) {
	type shard struct {
		Shard     string  `json:"shard"`
		Staleness float64 `json:"staleness_seconds"`
		Stale     bool    `json:"stale"`
	}
	type budget struct {
		MaxBytes  int64    `json:"max_bytes"`
		HeldBytes int64    `json:"held_bytes"`
		Shed      []string `json:"shed_tenants"`
	}
	b := s.rep.Budget()
	out := struct {
		Status      string                   `json:"status"`
		StaleAfter  float64                  `json:"stale_after_seconds"`
		Shards      []shard                  `json:"shards"`
		Budget      budget                   `json:"replica_budget"`
		Unsupported []replica.UnsupportedLog `json:"unsupported_changes"`
		Origin      bool                     `json:"origin_reachable"`
		InFlight    *int64                   `json:"in_flight,omitempty"`
	}{Status: "ok", StaleAfter: s.cfg.StaleAfter.Seconds(), Shards: []shard{}, Origin: s.fwd.reachable(),
		Budget:      budget{MaxBytes: b.MaxBytes, HeldBytes: b.HeldBytes, Shed: append([]string{}, b.Shed...)},
		Unsupported: s.rep.UnsupportedLogs()}
	if len(out.Unsupported) > 0 || !out.Origin {
		out.Status = "degraded"
	}
	for _, st := range s.rep.StalenessByShard(now) {
		stale := st.Staleness > s.cfg.StaleAfter
		if stale {
			out.Status = "degraded"
		}
		out.Shards = append(out.Shards, shard{Shard: st.Shard, Staleness: st.Staleness.Round(time.Millisecond).Seconds(), Stale: stale})
	}
	status := fasthttp.StatusOK
	if !s.rep.Ready() {
		out.Status, status = "bootstrapping", fasthttp.StatusServiceUnavailable
	}
	if s.drain.Draining() {
		n := s.drain.InFlight()
		out.Status, status, out.InFlight = "draining", fasthttp.StatusServiceUnavailable, &n
	}
	body, _ := json.Marshal(out)
	return status, body
}

// Run serves on addr until ctx ends, then drains (pipeline.Drain): /readyz answers 503
// "draining" while the edge keeps serving for DrainDelay, closing keep-alive connections after
// each response; then it stops accepting and lets requests in flight finish, for DrainTimeout at
// most.
//
// While it runs, the origin health check runs too (OriginCheckInterval).
func (s *Server) Run(ctx context.Context, addr string) error {
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.fwd.watch(wctx, s.log) }()
	defer func() { cancel(); <-done }()
	return s.drain.Serve(ctx, s.HTTPServer(), addr)
}

// WatchOrigin runs the origin health check until ctx ends, for a caller serving the edge's
// Handler or HTTPServer itself rather than through Run (Run does it).
func (s *Server) WatchOrigin(ctx context.Context) { s.fwd.watch(ctx, s.log) }

// Drain returns the edge's drain: Hurry cuts its delay short (a second stop signal).
func (s *Server) Drain() *pipeline.Drain { return s.drain }
