package pipeline_test

import (
	"net"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"vitrine/edge/pipeline"
)

// Observe (count and time) against Count (count only): the cost the duration histogram adds to
// every request, and neither allocates once the series exist.
func BenchmarkHTTPMetrics(b *testing.B) {
	m := pipeline.NewHTTPMetrics(metrics.NewSet(), "edge")
	var rq fasthttp.Request
	ctx := new(fasthttp.RequestCtx) // no start time: Observe skips the clock (see the test)
	ctx.Init(&rq, nil, nil)
	b.Run("Count", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m.Count(3, 200)
		}
	})
	b.Run("Observe", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m.Observe(ctx, 3, 200)
		}
	})
}

// Observe allocates nothing once its series exist, timing included: measured inside a handler
// fasthttp serves, where ctx.Time() is the request's start (a bare RequestCtx has none).
func TestObserveAllocatesNothing(t *testing.T) {
	m := pipeline.NewHTTPMetrics(metrics.NewSet(), "edge")
	ln := fasthttputil.NewInmemoryListener()
	defer ln.Close()
	var allocs float64
	var started time.Time
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		started = ctx.Time()
		m.Observe(ctx, 3, 200)
		allocs = testing.AllocsPerRun(1000, func() { m.Observe(ctx, 3, 200) })
	}}
	go srv.Serve(ln)
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	if code, _, err := c.Get(nil, "http://x/"); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	if started.IsZero() {
		t.Fatal("the handler's ctx has no start time")
	}
	if allocs != 0 {
		t.Fatalf("Observe allocates %.1f times", allocs)
	}
}
