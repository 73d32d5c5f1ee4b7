package load

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serve runs handler on a loopback port until the test ends and returns its address.
func serve(t *testing.T, handler fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

func get(path string) func(int, uint64, *fasthttp.Request) {
	return func(_ int, _ uint64, req *fasthttp.Request) { req.SetRequestURI(path) }
}

// TestOpenLoopReportsQueueing runs the open loop above the capacity of a server that answers one
// request at a time: latency from the intended send time must show the queue building up, far
// above the service time that a closed loop over one connection measures.
func TestOpenLoopReportsQueueing(t *testing.T) {
	const service = 2 * time.Millisecond // capacity: 500 requests/s
	var mu sync.Mutex
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		time.Sleep(service)
		mu.Unlock()
		ctx.SetBodyString("ok")
	})
	ctx := context.Background()
	closed, err := Run(ctx, Config{Addr: addr, Conns: 1, Duration: 100 * time.Millisecond, Next: get("/")})
	if err != nil {
		t.Fatal(err)
	}
	open, err := Run(ctx, Config{Addr: addr, Conns: 8, Duration: 200 * time.Millisecond, Rate: 1000, Next: get("/")})
	if err != nil {
		t.Fatal(err)
	}
	serviceTime := closed.Latency.ValueAtQuantile(0.5)
	p99 := open.Latency.ValueAtQuantile(0.99)
	t.Logf("closed loop p50 %v (service time); open loop at 2x capacity: p50 %v p99 %v, %d late of %d",
		serviceTime, open.Latency.ValueAtQuantile(0.5), p99, open.Late, open.Requests)
	if serviceTime < service {
		t.Errorf("closed-loop p50 %v below the server's sleep %v", serviceTime, service)
	}
	// At twice the capacity for the whole window, the last requests wait for about half of all
	// the work sent: p99 is tens of service times. 8 connections alone would explain 8.
	if p99 < 20*serviceTime {
		t.Errorf("open-loop p99 %v is not far above the service time %v: the queueing delay is missing", p99, serviceTime)
	}
	if open.Late == 0 {
		t.Error("no request counted late, yet the server could not keep up")
	}
	// Every intended send of the window is made and counted, late or not.
	if want := uint64(200 * time.Millisecond * 1000 / time.Second); open.Requests < want-8 || open.Requests > want+8 {
		t.Errorf("open loop completed %d requests, want about %d (rate × duration)", open.Requests, want)
	}
}

// TestOpenLoopBelowCapacity checks the other side: under capacity, the open loop's latency is
// the service time, and it sends at the asked rate.
func TestOpenLoopBelowCapacity(t *testing.T) {
	addr := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	res, err := Run(context.Background(), Config{Addr: addr, Conns: 4, Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond, Rate: 400, Next: get("/")})
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(120); res.Requests < want-4 || res.Requests > want+4 {
		t.Errorf("%d requests, want about %d", res.Requests, want)
	}
	if res.Errors != 0 || res.HeaderBytes == 0 || res.BodyBytes != 2 {
		t.Errorf("errors %d, header bytes %d, body bytes %d", res.Errors, res.HeaderBytes, res.BodyBytes)
	}
}

func TestRunErrors(t *testing.T) {
	var hits atomic.Int64
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		hits.Add(1)
		switch string(ctx.Path()) {
		case "/fail":
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		case "/notfound":
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		}
		ctx.SetBodyString("body")
	})
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := ln.Addr().String()
		ln.Close()
		return a
	}()
	cases := []struct {
		name      string
		addr      string
		path      string
		check     func(*fasthttp.Response) bool
		allErrors bool
	}{
		{"ok", addr, "/", nil, false},
		{"status 500", addr, "/fail", nil, true},
		{"status 404", addr, "/notfound", nil, true},
		{"check refuses", addr, "/", func(r *fasthttp.Response) bool { return string(r.Body()) == "other" }, true},
		{"check accepts", addr, "/", func(r *fasthttp.Response) bool { return string(r.Body()) == "body" }, false},
		{"connection refused", refused, "/", nil, true},
	}
	for _, c := range cases {
		for _, rate := range []float64{0, 500} {
			t.Run(c.name, func(t *testing.T) {
				res, err := Run(context.Background(), Config{Addr: c.addr, Conns: 2, Duration: 50 * time.Millisecond, Rate: rate, Next: get(c.path), Check: c.check, Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if res.Requests == 0 {
					t.Fatal("no requests")
				}
				if c.allErrors && res.Errors != res.Requests {
					t.Errorf("rate %v: %d errors of %d requests, want all", rate, res.Errors, res.Requests)
				}
				if !c.allErrors && res.Errors != 0 {
					t.Errorf("rate %v: %d errors of %d requests, want none", rate, res.Errors, res.Requests)
				}
				if c.allErrors && res.HeaderBytes != 0 {
					t.Errorf("header bytes %d sampled from a failed response", res.HeaderBytes)
				}
			})
		}
	}

	t.Run("bad config", func(t *testing.T) {
		for _, cfg := range []Config{{}, {Addr: addr}, {Next: get("/")}, {Addr: addr, Next: get("/"), Rate: -1}} {
			if _, err := Run(context.Background(), cfg); err == nil {
				t.Errorf("%+v: no error", cfg)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		_, err := Run(ctx, Config{Addr: addr, Duration: time.Hour, Next: get("/")})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	})
}

func TestCPUAndPinning(t *testing.T) {
	self, err := ProcessCPU(0)
	if err == nil {
		t.Errorf("pid 0 read as %v, want an error", self)
	}
	cpus, err := Affinity()
	if err != nil || len(cpus) == 0 {
		t.Fatalf("affinity %v, %v", cpus, err)
	}
	// Pinning to the CPUs we already have changes nothing and must succeed; an empty set is a
	// no-op; a CPU that does not exist is refused.
	if err := PinProcess(0, cpus); err != nil {
		t.Fatal(err)
	}
	if err := PinProcess(0, nil); err != nil {
		t.Fatal(err)
	}
	if err := PinProcess(0, []int{1000}); err == nil {
		t.Error("pinning to CPU 1000 succeeded")
	}
	if err := PinProcess(1<<30, cpus); err == nil {
		t.Error("pinning a process that does not exist succeeded")
	}
	addr := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	res, err := Run(context.Background(), Config{Addr: addr, Conns: 2, Duration: 100 * time.Millisecond, Next: get("/")}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if res.CPU.Wall <= 0 || res.CPU.Generator <= 0 || res.CPU.Server != 0 {
		t.Errorf("cpu %+v: want wall and generator time, no server time for a missing pid", res.CPU)
	}
}
