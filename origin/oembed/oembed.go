// Package oembed is the origin's oEmbed proxy (WordPress's GET /oembed/1.0/proxy) and the
// resolution of the bare URLs of post content into embeds: the only code that asks other sites
// about what a store's editors embed. Edges cannot fetch; the origin does, through the
// platform's one outbound client (edge/outbound), and stores what it learnt where edges read it
// (the post's Embeds, replicated) or where every origin finds it again (the oembed_cache table).
//
// # Overview
//
// A URL of the store itself is answered from the origin's replica, as the embed route answers
// it (edge/reads.OEmbedFor), and never fetched or cached. Any other URL goes to the provider
// the registry names for it (providers.go), or, when the request allows discovery, to the
// endpoint the page's <link rel="alternate" type="application/json+oembed"> names
// (discover.go). The provider's answer is sanitised (sanitize.go), cached for a day under a hash
// of the request's arguments, and answered; a fresh cached answer sends nothing out.
//
// # Invariants
//
//   - Every outbound request goes through the outbound client, whose dialer refuses loopback,
//     private, link-local, metadata, IPv4-mapped and NAT64 addresses; every redirect hop is
//     checked again (at most five), and answers are bounded in size (150 KB of a page, 512 KiB
//     of a provider's answer) and in time (Config.Timeout for a whole lookup).
//   - A refused request answers 404 oembed_invalid_url, as any URL without an embed does: the
//     caller learns nothing about the platform's network. Refusals are logged and counted
//     (vitrine_oembed_refused_total).
//   - Only what the sanitiser kept of a provider's html is answered, stored or rendered.
//   - The proxy needs edit_posts (WordPress's permission), checked after the arguments.
package oembed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/edge/pipeline"
	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Config configures the proxy. Zero values mean the defaults; the test hooks' zero values are
// the production rules.
type Config struct {
	// Client sends every outbound request: the process's one outbound client, shared with the
	// webhook dispatcher (nil: a client of the proxy's own, with the default bounds).
	Client *outbound.Client
	// TTL is how long a provider's answer is reused (default a day, WordPress's).
	TTL time.Duration
	// Timeout bounds one lookup, redirects and discovery included (default 10s).
	Timeout time.Duration
	// Providers are providers known besides the built-in registry (Providers), matched first
	// and trusted like them (WordPress's wp_oembed_add_provider).
	Providers []Provider
	// AllowAddrs is a test hook: when set, outbound requests may reach only these addresses,
	// whatever their class (the outbound client's allowlist), so that a test's provider on the
	// loopback interface is reachable. Production leaves it empty: only public addresses.
	AllowAddrs []netip.Prefix
	// AnyPort is a test hook: it lifts the rule that URLs name port 80, 443 or 8080.
	AnyPort bool
	Logger  *slog.Logger
	Metrics *metrics.Set
	// Now is the clock of cache expiries (default time.Now).
	Now func() time.Time
}

// Default values of Config.
const (
	DefaultTTL     = 24 * time.Hour
	DefaultTimeout = 10 * time.Second
)

// ContentEmbedWidth is the width of the embeds of bare URLs in post content (WordPress's
// wp_embed_defaults without a theme's content width); providers are asked for at most 750
// pixels of height.
const ContentEmbedWidth = 500

// Service is the proxy. Its methods are safe for concurrent use.
type Service struct {
	*handler.Responder
	DB *store.DB

	cfg                               Config
	client                            *outbound.Client
	log                               *slog.Logger
	san                               *sanitizer
	hits, fetches, refusals, failures *metrics.Counter
}

// New returns the proxy answering through r and caching in db.
func New(cfg Config, r *handler.Responder, db *store.DB) *Service {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	client := cfg.Client
	if client == nil {
		client = outbound.New(outbound.Config{UserAgent: userAgent})
	}
	m := cfg.Metrics
	return &Service{Responder: r, DB: db, cfg: cfg, client: client, log: cfg.Logger.With("component", "oembed"), san: newSanitizer(),
		hits:     m.NewCounter(`vitrine_oembed_cache_hits_total`),
		fetches:  m.NewCounter(`vitrine_oembed_fetches_total`),
		refusals: m.NewCounter(`vitrine_oembed_refused_total`),
		failures: m.NewCounter(`vitrine_oembed_failures_total`)}
}

// Bind attaches the proxy route's handler.
func (s *Service) Bind(t *handler.Table) { t.Bind("oembed.proxy", s.proxy) }

// Stats are the proxy's counters since it started.
type Stats struct {
	// CacheHits are lookups answered from the cache; Fetches the outbound requests sent;
	// Refused the lookups refused (a URL or an address the rules forbid); Failures the lookups
	// that found no embed otherwise.
	CacheHits, Fetches, Refused, Failures uint64
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	return Stats{CacheHits: s.hits.Get(), Fetches: s.fetches.Get(), Refused: s.refusals.Get(), Failures: s.failures.Get()}
}

const errForbidden = "Sorry, you are not allowed to make proxied oEmbed requests."

// proxy answers GET /oembed/1.0/proxy: arguments first, then the permission, as WordPress's
// REST server orders them.
func (s *Service) proxy(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if rq.User == nil || !rq.User.Role.Can(schema.CapEditPosts) {
		e := &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_forbidden", Message: errForbidden, Status: 401}
		if rq.User != nil {
			e.Code, e.Status = schema.CodeForbidden, 403
		}
		s.Fail(ctx, rq, e)
		return
	}
	l := lookup{url: args.Str("url"), maxWidth: abs(args.Int("maxwidth")), maxHeight: abs(args.Int("maxheight")),
		discover: args.Bool("discover"), key: cacheKey("proxy", string(args.AppendKey(nil)))}
	o, err := s.resolve(ctx, rq.Tenant, l)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	handler.CMSHeaders(ctx, rq.Info, nil)
	s.Reply(ctx, rq, fasthttp.StatusOK, o)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// lookup is one URL to resolve.
type lookup struct {
	url                 string
	maxWidth, maxHeight int64 // 0: not given
	discover            bool
	key                 string // the cache key
}

// cacheKey hashes a lookup's normalised arguments (the proxy's declared arguments, so that
// parameters such as _wpnonce or _locale never split the cache).
func cacheKey(kind, args string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + args))
	return hex.EncodeToString(sum[:])
}

// resolve finds the oEmbed data of a URL: the cache, the store's own records, then the
// provider. Any failure is WordPress's 404 oembed_invalid_url.
func (s *Service) resolve(ctx context.Context, t *replica.Tenant, l lookup) (*schema.OEmbed, error) {
	info := t.Info()
	if info == nil {
		return nil, schema.OEmbedInvalidURL()
	}
	now := s.cfg.Now()
	if body, ok, err := s.DB.OEmbedCached(ctx, info, l.key, now); err != nil {
		s.log.Warn("oembed: cache read failed", "tenant", info.Slug, "err", err)
	} else if ok {
		if o, err := schema.ParseOEmbedJSON(body); err == nil {
			s.hits.Inc()
			return o, nil
		}
	}
	if schema.IsLocalURL(l.url, info.BaseURL, info.Domains) {
		// The store's own URL: its records, never a request to itself, never cached.
		if o := reads.OEmbedFor(t, l.url, l.maxWidth, l.maxHeight); o != nil {
			return o, nil
		}
		return nil, schema.OEmbedInvalidURL()
	}
	fctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	o, err := s.fetch(fctx, l)
	if err != nil {
		s.failed(info.Slug, l.url, err)
		return nil, schema.OEmbedInvalidURL()
	}
	if body, err := schema.MarshalJSON(o); err == nil {
		if err := s.DB.PutOEmbed(ctx, info, l.key, l.url, body, now, now.Add(s.cfg.TTL)); err != nil {
			s.log.Warn("oembed: cache write failed", "tenant", info.Slug, "err", err)
		}
	}
	return o, nil
}

// failed logs and counts a lookup that found nothing.
func (s *Service) failed(tenant, url string, err error) {
	var r *refusal
	if errors.As(err, &r) {
		s.refusals.Inc()
		s.log.Warn("oembed: outbound request refused", "tenant", tenant, "url", url, "at", r.url, "reason", r.reason)
		return
	}
	s.failures.Inc()
	s.log.Info("oembed: no embed", "tenant", tenant, "url", url, "err", err)
}

// fetch asks the provider of a URL that is not the store's.
func (s *Service) fetch(ctx context.Context, l lookup) (*schema.OEmbed, error) {
	target, err := parseTarget(l.url)
	if err != nil {
		return nil, err
	}
	if err := s.checkURL(target); err != nil {
		return nil, err
	}
	endpoint, trusted := match(s.cfg.Providers, l.url)
	if !trusted {
		endpoint, trusted = match(Providers, l.url)
	}
	if !trusted {
		if !l.discover {
			return nil, errNoProvider
		}
		resp, final, err := s.get(ctx, l.url, MaxDiscoveryBody)
		if err != nil {
			return nil, err
		}
		if resp.Status/100 == 2 {
			endpoint = discoverLink(resp.Body, final)
		}
		if endpoint == "" {
			return nil, errNoProvider
		}
	}
	width := l.maxWidth
	if width == 0 {
		width = schema.OEmbedDefaultWidth
	}
	height := l.maxHeight
	if height == 0 {
		height = defaultEmbedHeight
	}
	o, err := s.fetchProvider(ctx, endpoint, l.url, width, height)
	if err != nil {
		return nil, err
	}
	switch o.Str("type") {
	case "photo", "video", "rich", "link":
	default:
		return nil, errNoData
	}
	if h := s.san.embedHTML(o, l.url, trusted); h != "" {
		o.Set("html", h)
	} else {
		o.Set("html", false) // WordPress's answer when nothing embeddable was left
	}
	return o, nil
}

// ResolveEmbeds resolves the bare URLs of post content (schema.EmbedCandidates) into the html
// that renders them (schema.AutoEmbed), for the post's Embeds: the store's own records from the
// origin's replica, other sites through their providers (cached like the proxy's answers). URLs
// are resolved a few at a time within Config.Timeout altogether; a URL that yields nothing in
// time is left out, and renders as a link.
func (s *Service) ResolveEmbeds(ctx context.Context, t *replica.Tenant, content string) map[string]string {
	urls := schema.EmbedCandidates(content)
	if len(urls) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	found := make([]string, len(urls))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			l := lookup{url: u, maxWidth: ContentEmbedWidth, discover: true,
				key: cacheKey("content", u+"\x00"+strconv.Itoa(ContentEmbedWidth))}
			if o, err := s.resolve(ctx, t, l); err == nil {
				found[i] = o.Str("html")
			}
		}()
	}
	wg.Wait()
	out := map[string]string{}
	for i, u := range urls {
		if found[i] != "" {
			out[u] = found[i]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
