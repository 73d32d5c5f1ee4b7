package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
)

// drained is a server run by a Drain in a test: its address, what Serve returned, the stop
// signal, and a handler's hold on /slow requests.
type drained struct {
	d       *pipeline.Drain
	addr    string
	set     *metrics.Set
	stop    context.CancelFunc
	done    chan error
	release chan struct{}
}

func serveDrained(t *testing.T, cfg pipeline.DrainConfig) *drained {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	x := &drained{addr: addr, set: metrics.NewSet(), done: make(chan error, 1), release: make(chan struct{})}
	cfg.Process, cfg.Metrics = "test", x.set
	x.d = pipeline.NewDrain(cfg)
	srv := &fasthttp.Server{CloseOnShutdown: true, Handler: x.d.Handler(func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/slow" {
			<-x.release
		}
		ctx.SetBodyString("done")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	x.stop = cancel
	go func() { x.done <- x.d.Serve(ctx, srv, addr) }()
	t.Cleanup(func() {
		select {
		case <-x.release:
		default:
			close(x.release)
		}
		cancel()
		x.d.Hurry()
		<-x.done
	})
	waitUntil(t, "the server to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return x
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type answer struct {
	status int
	body   string
	close  bool
	err    error
}

func get(c *http.Client, addr, path string) answer {
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), close: resp.Close, err: err}
}

func (x *drained) returned(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-x.done:
		x.done <- err // for Cleanup
		return err
	case <-time.After(within):
		t.Fatalf("Serve still running %s later", within)
		return nil
	}
}

func TestDrain(t *testing.T) {
	tests := []struct {
		name string
		cfg  pipeline.DrainConfig
		run  func(t *testing.T, x *drained, c *http.Client)
	}{
		{"during the delay: readyz 503 draining, requests served with Connection: close, until hurried", pipeline.DrainConfig{Delay: time.Minute},
			func(t *testing.T, x *drained, c *http.Client) {
				if a := get(c, x.addr, "/x"); a.err != nil || a.status != 200 || a.close {
					t.Fatalf("before the signal: %+v", a)
				}
				if status, _ := x.d.Readiness(func(time.Time) (int, []byte) { return 200, []byte("ok") })(time.Now()); status != 200 {
					t.Fatalf("Readiness before the signal: %d", status)
				}
				x.stop()
				waitUntil(t, "draining", x.d.Draining)
				for _, path := range []string{"/readyz", "/readyz?verbose=1"} {
					if a := get(c, x.addr, path); a.status != 503 || !strings.Contains(a.body, `"status":"draining"`) || !a.close {
						t.Fatalf("%s while draining: %+v", path, a)
					}
				}
				for range 3 {
					if a := get(c, x.addr, "/x"); a.err != nil || a.status != 200 || a.body != "done" || !a.close {
						t.Fatalf("a request while draining: %+v", a)
					}
				}
				status, body := x.d.Readiness(func(time.Time) (int, []byte) { return 200, []byte("ok") })(time.Now())
				if status != 503 || !bytes.Contains(body, []byte(`"in_flight":0`)) {
					t.Fatalf("Readiness while draining: %d %s", status, body)
				}
				var m bytes.Buffer
				x.set.WritePrometheus(&m)
				if !strings.Contains(m.String(), `vitrine_draining{process="test"} 1`) {
					t.Fatalf("metrics while draining:\n%s", m.String())
				}
				x.d.Hurry()
				if err := x.returned(t, 2*time.Second); err != nil {
					t.Fatalf("Serve: %v", err)
				}
			}},
		{"after the delay: no new connection, the request in flight answered", pipeline.DrainConfig{},
			func(t *testing.T, x *drained, c *http.Client) {
				got := make(chan answer, 1)
				go func() { got <- get(c, x.addr, "/slow") }()
				waitUntil(t, "the request in flight", func() bool { return x.d.InFlight() == 1 })
				x.stop()
				waitUntil(t, "the listener to close", func() bool {
					conn, err := net.Dial("tcp", x.addr)
					if err == nil {
						conn.Close()
					}
					return err != nil
				})
				close(x.release)
				if a := <-got; a.err != nil || a.status != 200 || a.body != "done" {
					t.Fatalf("the request in flight: %+v", a)
				}
				if err := x.returned(t, 2*time.Second); err != nil {
					t.Fatalf("Serve: %v", err)
				}
			}},
		{"past the timeout: an error naming it", pipeline.DrainConfig{Timeout: 200 * time.Millisecond},
			func(t *testing.T, x *drained, c *http.Client) {
				go get(c, x.addr, "/slow")
				waitUntil(t, "the request in flight", func() bool { return x.d.InFlight() == 1 })
				x.stop()
				if err := x.returned(t, 2*time.Second); !errors.Is(err, pipeline.ErrDrainTimeout) {
					t.Fatalf("Serve = %v, want ErrDrainTimeout", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := serveDrained(t, tt.cfg)
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			tt.run(t, x, c)
		})
	}
}

// A stop signal that came before Serve leaves nothing to drain: Serve returns at once, without
// listening.
func TestDrainStoppedBeforeServing(t *testing.T) {
	d := pipeline.NewDrain(pipeline.DrainConfig{Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := d.Serve(ctx, &fasthttp.Server{Handler: func(*fasthttp.RequestCtx) {}}, "127.0.0.1:0"); err != nil || time.Since(start) > time.Second {
		t.Fatalf("Serve = %v after %s", err, time.Since(start))
	}
}

// Outside a drain, the wrapped handler adds no allocation to a request.
func TestDrainHandlerDoesNotAllocate(t *testing.T) {
	d := pipeline.NewDrain(pipeline.DrainConfig{})
	h := d.Handler(func(ctx *fasthttp.RequestCtx) {})
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api/products")
	if n := testing.AllocsPerRun(1000, func() { h(&ctx) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}
