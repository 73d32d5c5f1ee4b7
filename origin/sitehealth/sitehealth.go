// Package sitehealth answers the site health tests of the CMS interface (cms-site-health/v1,
// WordPress's wp-site-health/v1): one GET route per test, /cms-site-health/v1/tests/{test}, for
// administrators, each answering WordPress's test result shape {label, status, badge,
// description, actions, test}, plus a machine-readable details object of our own.
//
// The tests are the platform's own (schema.SiteHealthTests): the database (a ping, its round
// trip, the schema's migration against this build's, the connection pool), NATS (the origin's
// connection, JetStream and the state stream, the origin replica's consumer), replica lag (the
// store's log version in the database against the origin's replica and every edge that answers
// a lag probe on NATS, see edge.AnswerProbes), outbound HTTP (one request through the process's
// one outbound client, decision 19) and WordPress's authorization header test.
//
// # Invariants
//
//   - A test never hangs: every call it makes (database, NATS, the probe's gathering, the
//     outbound request) has its own short bound, and a failure is an answer (critical or
//     recommended, saying what failed), never a 5xx.
//   - "No edge answered" is reported as such (recommended), never as good.
//   - Only administrators (manage_options, WordPress's view_site_health_checks) run a test:
//     anyone else gets rest_forbidden, 401 without a user and 403 with one, before any test runs.
//   - Descriptions are HTML (as WordPress's are): every value that did not come from this package
//     (an edge's name, an error's text, a server version) is escaped.
//   - Nothing is kept between requests; the service is safe for concurrent use.
package sitehealth

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/feed"
)

// Config configures the tests. Zero values mean the defaults.
type Config struct {
	// NATS is the origin's NATS connection (nil: the nats test is critical and replica-lag asks
	// no edge).
	NATS *nats.Conn
	// Feed names the state stream (feed.Config, as the origin's follower uses it).
	Feed feed.Config
	// Follower is the origin replica's follower, whose consumer lag the nats test reports (nil:
	// not reported).
	Follower *feed.Follower
	// ProbeSubject is the subject of lag probes (default: schema.LagProbeSubject of Feed.Prefix,
	// "<prefix>_probe.lag"); ProbeWait how long replies are gathered (default 300ms).
	ProbeSubject string
	ProbeWait    time.Duration
	// OutboundURL is what the outbound-http test requests (default https://api.wordpress.org/,
	// as WordPress's own test); OutboundTimeout bounds it (default 3s); OutboundAllowlist, when
	// set, is the only addresses the request may reach (outbound.CallOptions.Allowlist: tests
	// point the test at a loopback server with it).
	OutboundURL       string
	OutboundTimeout   time.Duration
	OutboundAllowlist []netip.Prefix
	// DatabaseTimeout bounds the database test's calls (default 2s); SlowDatabase is the round
	// trip past which it recommends a look (default 100ms).
	DatabaseTimeout time.Duration
	SlowDatabase    time.Duration
	// SlowNATS is the NATS round trip past which the nats test recommends a look (default
	// 100ms); ConsumerLag the messages the origin's consumer may have pending before it does
	// (default 10000).
	SlowNATS    time.Duration
	ConsumerLag uint64
	// Lag are the replica-lag thresholds.
	Lag LagThresholds
}

// LagThresholds are when replica-lag stops being good: a replica behind the database's log by
// at least Versions, or that has not heard from the state stream for at least Staleness, is
// "recommended" past the first value and "critical" past the second.
type LagThresholds struct {
	// RecommendedVersions and CriticalVersions default to 100 and 10000.
	RecommendedVersions, CriticalVersions int64
	// RecommendedStaleness and CriticalStaleness default to 10s (an edge's default StaleAfter)
	// and 60s.
	RecommendedStaleness, CriticalStaleness time.Duration
}

// DefaultOutboundURL is the outbound-http test's default target, WordPress's own.
const DefaultOutboundURL = "https://api.wordpress.org/"

func (c Config) withDefaults() Config {
	if c.ProbeSubject == "" {
		c.ProbeSubject = schema.LagProbeSubject(c.Feed.WithDefaults().Prefix)
	}
	if c.ProbeWait <= 0 {
		c.ProbeWait = 300 * time.Millisecond
	}
	if c.OutboundURL == "" {
		c.OutboundURL = DefaultOutboundURL
	}
	if c.OutboundTimeout <= 0 {
		c.OutboundTimeout = 3 * time.Second
	}
	if c.DatabaseTimeout <= 0 {
		c.DatabaseTimeout = 2 * time.Second
	}
	if c.SlowDatabase <= 0 {
		c.SlowDatabase = 100 * time.Millisecond
	}
	if c.SlowNATS <= 0 {
		c.SlowNATS = 100 * time.Millisecond
	}
	if c.ConsumerLag == 0 {
		c.ConsumerLag = 10000
	}
	l := &c.Lag
	if l.RecommendedVersions <= 0 {
		l.RecommendedVersions = 100
	}
	if l.CriticalVersions <= 0 {
		l.CriticalVersions = 10000
	}
	if l.RecommendedStaleness <= 0 {
		l.RecommendedStaleness = 10 * time.Second
	}
	if l.CriticalStaleness <= 0 {
		l.CriticalStaleness = 60 * time.Second
	}
	c.Feed = c.Feed.WithDefaults()
	return c
}

// Service runs the site health tests. It is safe for concurrent use.
type Service struct {
	*handler.Responder
	cfg    Config
	db     *store.DB
	rep    *replica.Replica
	client *outbound.Client
	log    *slog.Logger
}

// New returns the site health service of an origin writing db and reading rep; client is the
// process's one outbound client (decision 19), which the outbound-http test uses.
func New(cfg Config, r *handler.Responder, db *store.DB, rep *replica.Replica, client *outbound.Client) *Service {
	log := slog.Default()
	if r != nil && r.Log != nil {
		log = r.Log
	}
	return &Service{Responder: r, cfg: cfg.withDefaults(), db: db, rep: rep, client: client, log: log.With("component", "sitehealth")}
}

// Status is a test's verdict, WordPress's three.
type Status string

// The statuses of a test result.
const (
	Good        Status = "good"
	Recommended Status = "recommended"
	Critical    Status = "critical"
)

// worse returns the more severe of a and b.
func worse(a, b Status) Status {
	rank := map[Status]int{Good: 0, Recommended: 1, Critical: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Badge is the category a result is shown under (WordPress: Performance, Security; blue).
type Badge struct {
	Label string `json:"label"`
	Color string `json:"color"`
}

var (
	performance = Badge{Label: "Performance", Color: "blue"}
	security    = Badge{Label: "Security", Color: "blue"}
)

// Result is a test's answer in WordPress's shape; Details is ours (the facts behind the
// verdict, for tools: WordPress's own clients read the other members only).
type Result struct {
	Label       string `json:"label"`
	Status      Status `json:"status"`
	Badge       Badge  `json:"badge"`
	Description string `json:"description"`
	Actions     string `json:"actions"`
	Test        string `json:"test"`
	Details     any    `json:"details,omitempty"`
}

// test is one site health test: it runs with the request (tenant, headers) and answers.
type test func(ctx *fasthttp.RequestCtx, rq *handler.Request) Result

// Bind binds the route of every test in schema.SiteHealthTests ("sitehealth.<test>"). A test
// the route table declares and this package does not run panics, like any unbound name.
func (s *Service) Bind(t *handler.Table) {
	tests := map[string]test{
		"database":             s.database,
		"nats":                 s.natsTest,
		"replica-lag":          s.replicaLag,
		"outbound-http":        s.outboundHTTP,
		"authorization-header": s.authorizationHeader,
	}
	for _, name := range schema.SiteHealthTests {
		run := tests[name]
		if run == nil {
			panic("sitehealth: no test " + name)
		}
		t.Bind("sitehealth."+name, s.serve(run))
	}
}

// errForbidden is WordPress's answer to a permission callback returning false.
const errForbidden = "Sorry, you are not allowed to do that."

// Permitted is the tests' permission check: WordPress's view_site_health_checks, which it
// grants administrators; here manage_options, which only administrators hold. The origin's
// Allow header asks it too.
func Permitted(u *schema.User) bool { return u != nil && u.Role.Can(schema.CapManageOptions) }

// permitted is Permitted as the routes answer it: rest_forbidden, 401 without a user and 403
// with one.
func permitted(rq *handler.Request) error {
	if Permitted(rq.User) {
		return nil
	}
	e := &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_forbidden", Message: errForbidden, Status: 401}
	if rq.User != nil {
		e.Code, e.Status = schema.CodeForbidden, 403
	}
	return e
}

// serve checks the permission, runs the test and answers its result.
func (s *Service) serve(run test) handler.Func {
	return func(ctx *fasthttp.RequestCtx, rq *handler.Request) {
		if err := permitted(rq); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
		res := run(ctx, rq)
		handler.CMSHeaders(ctx, rq.Info, nil)
		s.Reply(ctx, rq, fasthttp.StatusOK, res)
	}
}

// p is an HTML paragraph of already-escaped text.
func p(format string, args ...any) string { return "<p>" + fmt.Sprintf(format, args...) + "</p>" }

// esc escapes text for a description.
func esc(s string) string { return html.EscapeString(s) }

// ms is a duration in milliseconds, to the tenth.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}

// seconds formats a duration for a description ("0.3 s", "12 s").
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// plural is n and the word, with an s unless n is 1.
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// list is an HTML list of already-escaped items.
func list(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "<ul><li>" + strings.Join(items, "</li><li>") + "</li></ul>"
}

// bounded returns a context of d, detached from the request (whose RequestCtx fasthttp reuses).
func bounded(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
