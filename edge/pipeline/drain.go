package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// DrainConfig configures a Drain. Zero values mean the defaults.
type DrainConfig struct {
	// Delay is how long the server keeps serving after the stop signal, answering /readyz 503
	// "draining" and closing every connection after its response, before it stops accepting:
	// the time a load balancer needs to notice (its health-check interval times its failure
	// threshold, or a Kubernetes endpoint update). 0: none (dev, tests).
	Delay time.Duration
	// Timeout bounds the wait, once the listener is closed, for in-flight requests to finish
	// (default 10s). Idle keep-alive connections are closed at once, and a connection that has
	// sent no request yet once it has been open 5s (fasthttp's rule, as net/http's).
	Timeout time.Duration
	// Process labels the vitrine_draining gauge ("edge", "origin").
	Process string
	Logger  *slog.Logger
	// Metrics, when set, receives vitrine_draining{process} (1 from the stop signal to exit).
	Metrics *metrics.Set
	// DeadlineSlack, when positive, has Serve's connections enforce their read and write
	// deadlines up to this late (LazyDeadlines), so that most requests move no timer. 0: exact.
	DeadlineSlack time.Duration
}

// Drain takes a fasthttp server out of a load balancer's rotation before stopping it, so that a
// rolling restart fails no request:
//
//  1. on the stop signal (Serve's ctx ends) the server turns draining: /readyz answers 503
//     {"status":"draining"} (Handler on the server's own port, Readiness on the ops port), every
//     other request is still served normally but its response carries Connection: close, so
//     clients' keep-alive connections move to other servers;
//  2. after Delay (or at once after Hurry: an operator's second Ctrl-C) the listener closes,
//     idle keep-alive connections are closed, and requests in flight (a read held for its
//     version floor among them) finish and are answered, for up to Timeout.
//
// Safe for concurrent use. Handler and Readiness may be used before Serve runs.
type Drain struct {
	cfg      DrainConfig
	log      *slog.Logger
	draining atomic.Bool
	since    atomic.Int64 // unix nanoseconds of the stop signal
	inFlight atomic.Int64 // requests inside Handler
	hurry    chan struct{}
	once     sync.Once
}

// NewDrain returns a Drain; with cfg.Metrics it registers vitrine_draining{process}.
func NewDrain(cfg DrainConfig) *Drain {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Delay < 0 {
		cfg.Delay = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := &Drain{cfg: cfg, log: cfg.Logger.With("component", "drain"), hurry: make(chan struct{})}
	if cfg.Metrics != nil {
		cfg.Metrics.NewGauge(fmt.Sprintf(`vitrine_draining{process=%q}`, cfg.Process), func() float64 {
			if d.draining.Load() {
				return 1
			}
			return 0
		})
	}
	return d
}

// Draining reports whether the stop signal has come.
func (d *Drain) Draining() bool { return d.draining.Load() }

// InFlight returns how many requests the server is handling now (through Handler).
func (d *Drain) InFlight() int64 { return d.inFlight.Load() }

// Hurry ends the delay at once (a second stop signal): the server stops accepting and finishes
// what is in flight. Safe to call any number of times, before or during Serve.
func (d *Drain) Hurry() { d.once.Do(func() { close(d.hurry) }) }

// Start turns the server draining without stopping it (Serve calls it on the stop signal).
// It reports whether this call started the drain.
func (d *Drain) Start() bool {
	if d.draining.Swap(true) {
		return false
	}
	d.since.Store(time.Now().UnixNano())
	return true
}

// Handler wraps a server's handler: it counts requests in flight and, while draining, answers
// /readyz itself (503 "draining") and closes each connection after its response. It does not
// allocate.
func (d *Drain) Handler(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if d.draining.Load() && string(ctx.Path()) == pathReadyz {
			status, body := d.Answer(time.Now())
			ctx.Response.Header.SetContentTypeBytes(ContentTypeCommerce)
			ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "private, no-store")
			ctx.SetStatusCode(status)
			ctx.SetBody(body)
			ctx.SetConnectionClose()
			return
		}
		d.inFlight.Add(1)
		next(ctx)
		d.inFlight.Add(-1)
		if d.draining.Load() {
			// Set after the handler: a forwarded answer replaces the response's headers.
			ctx.SetConnectionClose()
		}
	}
}

// Answer is the /readyz answer while draining: 503 and
// {"status":"draining","draining_seconds":…,"in_flight":…}.
func (d *Drain) Answer(now time.Time) (int, []byte) {
	secs := 0.0
	if s := d.since.Load(); s != 0 {
		secs = now.Sub(time.Unix(0, s)).Round(time.Millisecond).Seconds()
	}
	b := make([]byte, 0, 80)
	b = append(b, `{"status":"draining","draining_seconds":`...)
	b = strconv.AppendFloat(b, secs, 'f', -1, 64)
	b = append(b, `,"in_flight":`...)
	b = strconv.AppendInt(b, d.inFlight.Load(), 10)
	b = append(b, '}')
	return fasthttp.StatusServiceUnavailable, b
}

// Readiness wraps a /readyz answer (the ops port's): Answer while draining, else inner's.
func (d *Drain) Readiness(inner func(now time.Time) (int, []byte)) func(now time.Time) (int, []byte) {
	return func(now time.Time) (int, []byte) {
		if d.draining.Load() {
			return d.Answer(now)
		}
		return inner(now)
	}
}

// ErrDrainTimeout is returned by Serve when requests were still in flight at the drain timeout.
var ErrDrainTimeout = errors.New("pipeline: drain timed out with requests in flight")

// Serve runs srv on addr until ctx ends, then drains it (see Drain) and returns nil once every
// connection is closed, ErrDrainTimeout when some were still open after Timeout, or the
// listener's error. A ctx that has ended already returns at once: a process stopped before it
// served anything has nothing to drain. srv.Handler should be wrapped by Handler.
func (d *Drain) Serve(ctx context.Context, srv *fasthttp.Server, addr string) error {
	if ctx.Err() != nil {
		return nil
	}
	// Listening here, not in ListenAndServe, reports a bad address at once and lets the
	// listener be closed even when the signal comes before srv has registered it.
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if d.cfg.DeadlineSlack > 0 {
		ln = LazyDeadlines(ln, d.cfg.DeadlineSlack)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	d.Start()
	start := time.Now()
	d.log.Info("drain started: /readyz answers 503, keep-alive connections close after their response",
		"addr", addr, "delay", d.cfg.Delay.String(), "in_flight", d.inFlight.Load(), "open_connections", srv.GetOpenConnectionsCount())
	if d.cfg.Delay > 0 {
		t := time.NewTimer(d.cfg.Delay)
		select {
		case <-t.C:
		case <-d.hurry:
			d.log.Info("drain delay cut short", "after", time.Since(start).Round(time.Millisecond).String())
		case err := <-errc:
			t.Stop()
			return err
		}
		t.Stop()
	}
	d.log.Info("drain: no longer accepting; finishing requests in flight", "in_flight", d.inFlight.Load(),
		"open_connections", srv.GetOpenConnectionsCount(), "timeout", d.cfg.Timeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), d.cfg.Timeout)
	defer cancel()
	err = srv.ShutdownWithContext(sctx)
	left := d.inFlight.Load()
	took := time.Since(start).Round(time.Millisecond).String()
	if errors.Is(err, context.DeadlineExceeded) {
		d.log.Error("drain timed out: requests still in flight are cut", "in_flight", left,
			"open_connections", srv.GetOpenConnectionsCount(), "took", took)
		return fmt.Errorf("%w: %d requests after %s", ErrDrainTimeout, left, d.cfg.Timeout)
	}
	d.log.Info("drain ended", "in_flight", left, "took", took)
	return err
}
