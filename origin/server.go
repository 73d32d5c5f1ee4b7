// Package origin is Vitrine's write API and authority: the only process that writes the
// database. It answers the staff catalog administration API, the CMS writes, and every request an
// edge forwards (credentials, post passwords, writes); public reads it answers from its own full
// replica with the same read engine as the edges.
//
// # Overview
//
// A request goes through the shared pipeline (tenant, CORS, request id, errors per interface),
// then authentication: HTTP Basic with a staff user's application password, checked against a
// keyed hash (HMAC-SHA256 with the server secret). A credential that does not verify is a 401 on
// any route, as WordPress does, and no 401 carries a Basic challenge (browsers would cache staff
// passwords). A credentialed write another site could have made a browser send (a form, text
// or untyped body, or _method, from another site) is refused (browser.go). Commerce admin routes check the route's capability before
// decoding; CMS routes check permissions after validation, in WordPress's order.
//
// A write runs as one SERIALIZABLE transaction through the store's retry helper, which records
// the replicated changes and their outbox rows. The response carries Vitrine-Write-Version, the
// tenant log's version after the write; the origin holds it until its own replica has applied
// that version (bounded), so a caller reading the origin next sees its write.
//
// # Invariants
//
//   - Every write is validated before anything is written; a refused request writes nothing.
//   - X-Forwarded-For is trusted only on requests carrying the edge secret.
//   - No handler keeps a *fasthttp.RequestCtx after it returns.
package origin

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/edge/pipeline"
	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/origin/agents"
	"vitrine/origin/bundles"
	"vitrine/origin/carrier"
	"vitrine/origin/customers"
	"vitrine/origin/fulfil"
	"vitrine/origin/handler"
	"vitrine/origin/keys"
	"vitrine/origin/kses"
	"vitrine/origin/media"
	"vitrine/origin/oembed"
	"vitrine/origin/payment"
	"vitrine/origin/refund"
	"vitrine/origin/sitehealth"
	"vitrine/origin/store"
	"vitrine/origin/subscriptions"
	"vitrine/origin/webhooks"
	"vitrine/schema"
)

// Config configures the origin. Zero values mean the defaults.
type Config struct {
	// Secret keys the hash of application passwords (at least 32 bytes). Changing it invalidates
	// every application password.
	Secret []byte
	// EdgeSecrets are the secrets an edge may present (Vitrine-Edge-Auth): the current one and,
	// while edges are rotated to it, the previous one. An edge presenting any of them is trusted
	// with the client's address (Vitrine-Client-IP); none trusts no edge.
	EdgeSecrets []string
	// WriteWait bounds how long a write's response waits for the origin's replica to apply it
	// (default 250ms).
	WriteWait time.Duration
	// FloorWait bounds reads with a version floor (default 2s).
	FloorWait time.Duration
	// KDFMemory is the memory, in bytes, that customer password hashing (argon2id, 19 MiB a
	// hash) may hold at once; sign-ins past it wait (default 256 MiB, at least one hash).
	KDFMemory int64
	// KDFWait bounds that wait; past it the sign-in answers 503 with Retry-After (default 1s).
	KDFWait time.Duration
	// MaxBodyBytes bounds request bodies (default 8 MiB).
	MaxBodyBytes int
	// Payments authorizes checkout payments. Required: the command names it (decision 21), and
	// New panics without one; the built-in test provider is &payment.Test{Ledger: db}.
	Payments payment.Provider
	// Carrier buys shipping labels (default: the simulated carrier, keyed by Secret).
	Carrier carrier.Carrier
	// LabelQueue carries label batches between origins (nil: label batches are refused). The
	// origin works it in RunWork.
	LabelQueue *fulfil.Queue
	// Webhooks delivers the store's events to their endpoints (nil: events are not delivered;
	// endpoints can still be registered). The origin runs it in RunWork.
	Webhooks *webhooks.Dispatcher
	// CheckoutLease is how long a checkout holds its Idempotency-Key before a retry with the same
	// key may take it over and resume the order (default 60s).
	CheckoutLease time.Duration
	Logger        *slog.Logger
	Metrics       *metrics.Set
	// Renewals times subscription renewals: the retries of declined ones and the lease of one
	// being charged (default: subscriptions.Schedule's).
	Renewals subscriptions.Schedule
	// Media configures the media library's writes (origin/media): Media.Blobs is the blob store
	// of media files (sync/blob: a directory, or a JetStream object store bucket), which the
	// commands always name; without one, uploads and the other media writes answer 503. The
	// upload route's body limit is media.UploadBodyLimit(Media.MaxUploadBytes) (32 MiB files by
	// default), every other route's MaxBodyBytes.
	Media media.Config
	// OEmbed configures the oEmbed proxy and the resolution of bare URLs in post content
	// (origin/oembed). Its Client is the process's one outbound client (decision 19), the one
	// the webhook dispatcher uses; Logger and Metrics default to the origin's.
	OEmbed oembed.Config
	// SiteHealth configures the site health tests (origin/sitehealth): the origin's NATS
	// connection and follower, the lag probe, the outbound test's URL. Its outbound test uses
	// OEmbed.Client, the process's one outbound client.
	SiteHealth sitehealth.Config
}

// Server is the origin. Its Handler is safe for concurrent use.
type Server struct {
	*handler.Responder // how handlers answer (origin/handler)

	cfg    Config
	log    *slog.Logger
	db     *store.DB
	rep    *replica.Replica
	router *pipeline.Router
	ids    *pipeline.RequestIDs
	http   *pipeline.HTTPMetrics

	authFailures *metrics.Counter
	front        *pipeline.Front
	handlers     *handler.Table
	customers    *customers.Service   // customer accounts (origin/customers)
	keys         *keys.Service        // server keys (origin/keys)
	fulfil       *fulfil.Service      // packing slips and the warehouse's routes (origin/fulfil)
	refunds      *refund.Service      // refunds of orders (origin/refund)
	bundles      *bundles.Service     // bundles and their analytics (origin/bundles)
	webhooks     *webhooks.Service    // webhook endpoints and their log (origin/webhooks)
	validators   map[string]validator // batch pre-checks (batch.go)
	// subs are the subscriptions, their renewals and cancellations (origin/subscriptions).
	subs *subscriptions.Service
	// kses filters the HTML of users without unfiltered_html at write time (origin/kses).
	kses *kses.Filter
	// media writes the media library: uploads, edits, post-processing (origin/media).
	media *media.Service
	// oembed is the oEmbed proxy; it also resolves the bare URLs of post content (origin/oembed).
	oembed *oembed.Service
	// siteHealth runs the site health tests (origin/sitehealth).
	siteHealth *sitehealth.Service
	// agents are the abilities and agent sessions (origin/agents); abilities run through ActAs.
	agents *agents.Service
}

// New returns an origin writing db and reading rep (a replica following every subject).
func New(cfg Config, db *store.DB, rep *replica.Replica) *Server {
	if cfg.WriteWait == 0 {
		cfg.WriteWait = 250 * time.Millisecond
	}
	if cfg.FloorWait == 0 {
		cfg.FloorWait = 2 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	if cfg.Payments == nil {
		panic("origin: Config.Payments is required: name the payment provider (&payment.Test{Ledger: db} only in development and tests)")
	}
	if cfg.Carrier == nil {
		cfg.Carrier = &carrier.Sim{Secret: cfg.Secret}
	}
	if cfg.CheckoutLease == 0 {
		cfg.CheckoutLease = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	if cfg.OEmbed.Client == nil {
		// The process's one outbound client (decision 19): the commands pass the one the webhook
		// dispatcher uses; an origin made without one makes one, shared by oEmbed and media.
		cfg.OEmbed.Client = outbound.New(outbound.Config{})
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "origin"), db: db, rep: rep,
		ids: pipeline.NewRequestIDs(), http: pipeline.NewHTTPMetrics(cfg.Metrics, "origin"), kses: kses.New()}
	s.Responder = &handler.Responder{Log: s.log, HTTP: s.http, WriteWait: cfg.WriteWait,
		Writes:            cfg.Metrics.NewCounter(`vitrine_origin_writes_total`),
		WriteWaitTimeouts: cfg.Metrics.NewCounter(`vitrine_origin_write_wait_timeouts_total`),
		WriteWaitTime:     cfg.Metrics.GetOrCreatePrometheusHistogramExt(`vitrine_origin_write_wait_seconds`, pipeline.LatencyBuckets)}
	s.authFailures = cfg.Metrics.NewCounter(`vitrine_origin_auth_failures_total`)
	s.front = &pipeline.Front{Tenants: rep, IDs: s.ids, HTTP: s.http, Health: s.health, Tail: s.tail,
		Floor: &pipeline.ReadFloor{Wait: cfg.FloorWait, Behind: "The origin has not applied the requested version yet; retry shortly"},
		Nested: func(ctx *fasthttp.RequestCtx) bool {
			return ctx.UserValue(batchItemKey) != nil || actingUser(ctx) != nil
		}}
	s.handlers = handler.NewTable(schema.Routes)
	s.validators = map[string]validator{}
	s.batchHandlers()
	s.catalogHandlers()
	s.cmsHandlers()
	s.termHandlers()     // CMS categories and tags (terms.go)
	s.menuHandlers()     // CMS navigation menus and menu locations (menus.go)
	s.templateHandlers() // CMS templates and template parts (templates.go)
	s.designHandlers()   // CMS global styles and themes (globalstyles.go, themes.go)
	s.settingsHandlers() // store settings pages (settings.go)
	s.userHandlers()     // CMS users and application passwords (users_cms.go, apppasswords.go)
	s.cartHandlers()
	s.customers = &customers.Service{Responder: s.Responder, DB: db, KDF: customers.NewKDF(cfg.KDFMemory, cfg.KDFWait)}
	s.customers.Bind(s.handlers)
	s.keys = &keys.Service{Responder: s.Responder, DB: db, Secret: cfg.Secret}
	s.keys.Bind(s.handlers)
	s.fulfil = &fulfil.Service{Responder: s.Responder, DB: db, Carrier: cfg.Carrier, Queue: cfg.LabelQueue}
	s.fulfil.Bind(s.handlers)
	s.refunds = &refund.Service{Responder: s.Responder, DB: db, Payments: cfg.Payments}
	s.refunds.Bind(s.handlers)
	s.bundles = &bundles.Service{Responder: s.Responder, DB: db}
	s.bundles.Bind(s.handlers)
	s.subs = &subscriptions.Service{Responder: s.Responder, DB: db, Payments: cfg.Payments, WithCustomer: s.customers.WithCustomer,
		Schedule: cfg.Renewals.WithDefaults()}
	s.subs.Bind(s.handlers)
	wh, err := webhooks.NewService(s.Responder, db, cfg.Secret, cfg.Webhooks)
	if err != nil {
		panic("origin: " + err.Error()) // Config.Secret is required, as for application passwords
	}
	s.webhooks = wh
	s.webhooks.Bind(s.handlers)
	s.postPurchaseHandlers()
	s.merchHandlers()
	mc := cfg.Media
	if mc.Logger == nil {
		mc.Logger = s.log
	}
	if mc.Client == nil {
		mc.Client = cfg.OEmbed.Client // the process's one outbound client
	}
	s.media = media.New(s.Responder, db, media.Posts{View: s.postView, ParseDate: parseCMSDate}, s.kses, mc)
	s.media.Bind(s.handlers)
	oc := cfg.OEmbed
	if oc.Logger == nil {
		oc.Logger = cfg.Logger
	}
	if oc.Metrics == nil {
		oc.Metrics = cfg.Metrics
	}
	s.oembed = oembed.New(oc, s.Responder, db)
	s.oembed.Bind(s.handlers)
	s.agents = agents.New(s.Responder, db, cfg.Secret, s.ActAs)
	s.agents.Bind(s.handlers)
	s.adminOrderHandlers() // staff's order list (admin_orders.go), which an ability reads
	s.siteHealth = sitehealth.New(cfg.SiteHealth, s.Responder, db, rep, cfg.OEmbed.Client)
	s.siteHealth.Bind(s.handlers)
	s.router = pipeline.NewRouter(schema.Routes, func(r *schema.Route) pipeline.Handler {
		if r.Server == schema.AtEdge {
			return s.read
		}
		h := s.handlers.Func(r)
		if h == nil {
			return nil
		}
		return func(ctx *fasthttp.RequestCtx, r *schema.Route) { s.dispatch(ctx, r, h) }
	})
	s.front.Routes = s.router // refusals are counted under their route
	return s
}

// bind attaches a handler to the route of the table with that name (handler.Table.Bind: a name
// the table lacks, or a second binding, panics).
func (s *Server) bind(name string, h handler.Func) { s.handlers.Bind(name, h) }

// HTTPServer returns the fasthttp server to run the origin with.
func (s *Server) HTTPServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               s.Handler,
		ErrorHandler:          pipeline.ServerErrorHandler,
		Logger:                pipeline.FastHTTPLogger(s.log),
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		// Longer than the edges' idle connection lifetime (5s): an edge never reuses a
		// connection the origin is about to close.
		IdleTimeout:        90 * time.Second,
		MaxRequestBodySize: s.cfg.MaxBodyBytes,
		ReadBufferSize:     pipeline.MaxHeaderBytes,
		CloseOnShutdown:    true,
		HeaderReceived:     s.uploadLimits(),
	}
}

// uploadLimits lets a POST to the upload route (pipeline.UploadTarget) carry a file of
// Media.MaxUploadBytes, read within two minutes; every other request keeps MaxBodyBytes and the
// server's read timeout. The body is still read whole before the handler runs.
func (s *Server) uploadLimits() func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	upload := fasthttp.RequestConfig{MaxRequestBodySize: int(media.UploadBodyLimit(s.cfg.Media.MaxUploadBytes)), ReadTimeout: 2 * time.Minute}
	uploads := pipeline.UploadPaths()
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if h.IsPost() && pipeline.UploadTarget(h.RequestURI(), uploads) {
			return upload
		}
		return fasthttp.RequestConfig{}
	}
}

// RunWork works the origin's queues (label batches, webhook deliveries) until ctx ends.
func (s *Server) RunWork(ctx context.Context) error {
	errs := make(chan error, 1)
	go func() { errs <- s.fulfil.RunBatches(ctx) }()
	if s.cfg.Webhooks != nil {
		if err := s.cfg.Webhooks.Run(ctx); err != nil {
			s.log.Error("webhook dispatcher stopped", "err", err)
		}
	}
	return <-errs
}

// Run serves on addr until ctx ends, then drains in-flight requests (10s at most).
func (s *Server) Run(ctx context.Context, addr string) error {
	return pipeline.Serve(ctx, s.HTTPServer(), addr, 10*time.Second)
}

const stateKey = "vitrine.origin.request"

// Handler serves one request: the shared front of the pipeline (pipeline.Front), then tail.
func (s *Server) Handler(ctx *fasthttp.RequestCtx) { s.front.Serve(ctx) }

// tail is the origin's own part of a request: authentication, then the route table; a read
// route is answered from the full replica, any other by its bound handler (dispatch).
func (s *Server) tail(ctx *fasthttp.RequestCtx, fr pipeline.Request) {
	iface, t, info := fr.Iface, fr.Tenant, fr.Info
	if iface == schema.CMS {
		// CMS answers are shaped last (_fields, _envelope, _jsonp), whatever answered them.
		defer fr.Shape(ctx)
	}
	var user *schema.User
	var err error
	// A server-key route takes no staff credential: whatever its Authorization holds is the
	// key check's to refuse ("API key required"), not a bad application password.
	switch {
	case fr.Nested && actingUser(ctx) != nil:
		user = actingUser(ctx) // an agent session's call (actas.go), made in-process
	case iface == schema.CMS && agentRoute(fr.Route) && bearer(ctx):
		// An agent session token: the agent routes authenticate it themselves (origin/agents).
	case iface != schema.Commerce || !s.keyRoute(ctx, fr.Route):
		user, err = s.authenticate(ctx, iface, info)
	}
	if err != nil {
		// No WWW-Authenticate: Basic challenge, as WordPress sends none for application
		// passwords; a challenge makes browsers prompt for and cache staff credentials, which
		// they would then attach to requests any site makes them send.
		s.authFailures.Inc()
		s.FailAt(ctx, iface, pipeline.RouteNotFound, s.fromEdge(ctx), err)
		return
	}
	if user != nil && !fr.Nested && crossSiteForgeable(ctx, info) {
		// A write another site could have made a browser send with credentials it holds
		// (browser.go).
		s.FailAt(ctx, iface, pipeline.RouteNotFound, s.fromEdge(ctx), errCrossSite)
		return
	}
	if iface == schema.CMS {
		// After authentication, as WordPress: a bad credential is a 401 even here. A batch item
		// has no method override (WordPress's batch runs its requests past it).
		if !fr.Nested {
			pipeline.MethodOverride(ctx)
		}
		if ctx.IsOptions() {
			pipeline.Options(ctx, info.BaseURL, fr.Route)
			if r := s.router.MatchPath(ctx, iface, fr.Route); r != nil {
				s.setAllow(ctx, &handler.Request{Iface: iface, Tenant: t, Info: info, User: user}, r) // allow.go
			}
			pipeline.SetReplicaVersion(&ctx.Response.Header, t.Version())
			s.http.Observe(ctx, pipeline.RouteNotFound, ctx.Response.StatusCode())
			return
		}
	}
	h := s.router.Lookup(ctx, iface, ctx.Method(), fr.Route)
	if h == nil {
		s.noRoute(ctx, iface, fr.Route)
		return
	}
	rq := &handler.Request{Iface: iface, Tenant: t, Info: info, User: user, FromEdge: s.fromEdge(ctx)}
	ctx.SetUserValue(stateKey, rq)
	h(ctx)
	if iface == schema.CMS && rq.Route != nil {
		// After the handler, as WordPress's rest_post_dispatch (allow.go).
		s.setAllow(ctx, rq, rq.Route)
	}
}

// agentRoute reports whether a CMS rest route is in the agent namespace (matched, as routes
// are, case-insensitively).
func agentRoute(route []byte) bool {
	const ns = "/agent/v1"
	return len(route) >= len(ns) && bytes.EqualFold(route[:len(ns)], []byte(ns)) && (len(route) == len(ns) || route[len(ns)] == '/')
}

// bearer reports whether the request's Authorization is a Bearer credential.
func bearer(ctx *fasthttp.RequestCtx) bool {
	scheme, _, _ := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	return bytes.EqualFold(scheme, []byte("Bearer"))
}

// keyRoute reports whether a commerce request is for a server-key route.
func (s *Server) keyRoute(ctx *fasthttp.RequestCtx, route []byte) bool {
	r := s.router.Match(ctx, schema.Commerce, string(ctx.Method()), route)
	return r != nil && r.Auth == schema.AuthKey
}

// noRoute answers a request no route matched: 405 with Allow when the commerce path exists for
// other methods, else the 404 of an unknown route (WordPress answers 404 for both).
func (s *Server) noRoute(ctx *fasthttp.RequestCtx, iface schema.Interface, route []byte) {
	if iface == schema.Commerce {
		if allowed := s.router.Allowed(iface, route); len(allowed) > 0 {
			var b []byte
			for i, m := range allowed {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = append(b, m...)
			}
			ctx.Response.Header.SetBytesV(fasthttp.HeaderAllow, b)
			s.FailAt(ctx, iface, pipeline.RouteNotFound, s.fromEdge(ctx), &schema.Error{Code: schema.CodeNotAllowed, Message: "Method not allowed"})
			return
		}
	}
	pipeline.NotFound(ctx, iface)
	s.http.Observe(ctx, pipeline.RouteNotFound, 404)
}

// fromEdge reports whether the request carries one of the edge secrets. Every secret is compared,
// in constant time, so the answer's timing does not tell which one matched.
func (s *Server) fromEdge(ctx *fasthttp.RequestCtx) bool {
	got := ctx.Request.Header.Peek(pipeline.HeaderEdgeAuth)
	if len(got) == 0 {
		return false
	}
	match := 0
	for _, secret := range s.cfg.EdgeSecrets {
		if secret != "" {
			match |= subtle.ConstantTimeCompare(got, []byte(secret))
		}
	}
	return match == 1
}

// authenticate returns the staff user of an Authorization: Basic header (nil when none is sent).
// On commerce routes a Bearer credential (a customer session token) is left to the routes that
// take one.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx, iface schema.Interface, t *schema.Tenant) (*schema.User, error) {
	auth := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	if len(auth) == 0 {
		return nil, nil
	}
	invalid := &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "incorrect_password",
		Message: "The provided password is an invalid application password."}
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(auth), []byte{' '})
	if iface == schema.Commerce && bytes.EqualFold(scheme, []byte("Bearer")) {
		return nil, nil
	}
	if !bytes.EqualFold(scheme, []byte("Basic")) {
		return nil, &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_not_logged_in",
			Message: "Unsupported credential: use HTTP Basic with an application password"}
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(cred)))
	if err != nil {
		return nil, invalid
	}
	login, password, ok := bytes.Cut(raw, []byte{':'})
	if !ok || len(login) == 0 {
		return nil, invalid
	}
	hash := schema.HashAppPassword(s.cfg.Secret, string(password))
	ip := pipeline.ClientIP(ctx, s.fromEdge(ctx))
	return s.db.AuthenticateUse(ctx, t, string(login), hash, string(ip), time.Now())
}

// read answers the read routes from the origin's full replica.
func (s *Server) read(ctx *fasthttp.RequestCtx, r *schema.Route) {
	rq := ctx.UserValue(stateKey).(*handler.Request)
	rq.Route = r
	viewer := reads.Viewer{User: rq.User, PostPassword: string(ctx.QueryArgs().Peek("password"))}
	resp := reads.Answer(&reads.Request{Route: r, Tenant: rq.Tenant, Viewer: viewer, Allow: s.selfHints(ctx, rq),
		Param: pipeline.Params(ctx), Query: pipeline.Query(ctx)})
	idx := pipeline.RouteIndex(r)
	if resp.Err != nil {
		s.Fail(ctx, rq, resp.Err)
		return
	}
	h := &ctx.Response.Header
	for _, kv := range resp.Headers {
		h.SetBytesKV(kv[0], kv[1])
	}
	if rq.Iface == schema.CMS {
		handler.CMSHeaders(ctx, rq.Info, resp.Headers)
	}
	if rq.User != nil {
		h.Set(fasthttp.HeaderCacheControl, "no-cache, must-revalidate, max-age=0, no-store, private")
	} else {
		h.Set(fasthttp.HeaderCacheControl, "public, no-cache")
	}
	pipeline.SetReplicaVersion(&ctx.Response.Header, rq.Tenant.Version())
	if resp.ContentType != "" { // an oEmbed response in XML, the embed page
		h.SetContentType(resp.ContentType)
	} else {
		h.SetContentTypeBytes(pipeline.ContentType(rq.Iface))
	}
	ctx.SetStatusCode(resp.Status)
	ctx.SetBody(resp.Body)
	s.http.Observe(ctx, idx, resp.Status)
}

// dispatch runs the handler of a write, admin or key route. Staff commerce routes check their
// capability and key routes their server key here; CMS handlers check permissions themselves,
// after validation, in WordPress's order.
func (s *Server) dispatch(ctx *fasthttp.RequestCtx, r *schema.Route, h handler.Func) {
	rq := ctx.UserValue(stateKey).(*handler.Request)
	rq.Route = r
	if s.batchGate(ctx, rq, r) {
		return
	}
	if r.Interface == schema.Commerce && r.Auth == schema.AuthStaff {
		if rq.User == nil {
			// No Basic challenge (see tail).
			s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnauthorized,
				Message: "Authentication required: HTTP Basic with a staff user's application password"})
			return
		}
		if !rq.User.Role.Can(r.Cap) {
			s.Fail(ctx, rq, &schema.Error{Code: schema.CodeForbidden,
				Message: "Missing required capability: " + string(r.Cap)})
			return
		}
	}
	if r.Auth == schema.AuthKey {
		if _, err := s.keys.Authorize(ctx, rq, r.Scope); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	h(ctx, rq)
}

// announceWrites sets Vitrine-Write-Version when the request's transactions wrote the tenant's
// log, after a bounded wait for the origin's replica to apply it.
func (s *Server) announceWrites(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var top int64
	for _, c := range rq.Commits {
		if c.Log == rq.Tenant.Slug {
			top = max(top, c.Version)
		}
	}
	if top == 0 {
		return
	}
	pipeline.SetWriteVersion(&ctx.Response.Header, top)
	s.WaitReplica(ctx, rq, top)
}

// health answers /healthz (the process is up) and /readyz (the database answers and the replica
// has bootstrapped).
func (s *Server) health(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentTypeBytes(pipeline.ContentTypeCommerce)
	if string(ctx.Path()) == "/healthz" {
		ctx.SetBodyString(`{"status":"ok"}`)
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.db.Ping(dctx); err != nil {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString(`{"status":"database unavailable"}`)
		return
	}
	if !s.rep.Ready() {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString(`{"status":"bootstrapping"}`)
		return
	}
	ctx.SetBodyString(`{"status":"ok"}`)
}
