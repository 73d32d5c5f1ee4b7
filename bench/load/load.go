package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// Config is one load run against one server.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// Conns is the number of connections, each driven by one worker (closed loop: the
	// concurrency). Default 16.
	Conns int
	// Duration is the measured window. Default 5 s.
	Duration time.Duration
	// Warmup runs the same load before the measured window, unrecorded.
	Warmup time.Duration
	// Rate is the total requests per second of the open loop; 0 runs the closed loop at maximum
	// throughput.
	Rate float64
	// Next fills the request for the seq-th send of one worker (method, URI, Host, headers,
	// body). req has been reset; the default method is GET and the default Host is Addr. Called from the worker's goroutine:
	// it must be safe for concurrent calls from different workers.
	Next func(worker int, seq uint64, req *fasthttp.Request)
	// Check, when set, validates each response (status, body); a false counts as an error.
	// Without it any status below 400 is a success.
	Check func(resp *fasthttp.Response) bool
	// Timeout bounds each request (write and read). Default 10 s.
	Timeout time.Duration
}

// Result is what one run measured, over the measured window.
type Result struct {
	// Requests is the number of requests completed (answered or failed) in the window; Errors
	// those that failed (transport error, timeout, Check false or status ≥ 400).
	Requests, Errors uint64
	// Elapsed is the measured window as it ran (the last answers may arrive after Duration).
	Elapsed time.Duration
	// Throughput is completed requests per second (errors included).
	Throughput float64
	// Latency holds every request of the window. Open loop: from the intended send time (no
	// coordinated omission); closed loop: from the actual send (service time).
	Latency *Histogram
	// CPU is the CPU used during the window: server process(es) given, this process, everything
	// else.
	CPU CPUUsage
	// HeaderBytes is the size of the response header (status line and headers, with their CRLFs)
	// of a sample successful response; 0 if none succeeded.
	HeaderBytes int
	// BodyBytes is the body size of that sample response.
	BodyBytes int
	// Statuses counts answers by HTTP status; 0 counts transport errors and timeouts.
	Statuses map[int]uint64
	// Late counts open-loop requests sent more than 1 ms after their intended time (every
	// connection was busy, or the generator could not keep up); their latency includes the delay.
	Late uint64
	// SendLag is, in the open loop, the delay from each request's intended send time to its
	// actual send: the generator's own share of Latency (plus waiting for a free connection).
	SendLag *Histogram
}

// ErrNoRequests is returned by Run when the window completed no request at all.
var ErrNoRequests = errors.New("load: no request completed in the measured window")

// Run drives cfg's load and measures it, accounting the CPU of serverPIDs as the server's. It
// returns when the window has ended and the requests in flight have answered (or timed out), or
// when ctx is cancelled (then with ctx's error).
func Run(ctx context.Context, cfg Config, serverPIDs ...int) (Result, error) {
	if cfg.Addr == "" || cfg.Next == nil {
		return Result{}, fmt.Errorf("load: Addr and Next are required")
	}
	if cfg.Conns <= 0 {
		cfg.Conns = 16
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Rate < 0 {
		return Result{}, fmt.Errorf("load: negative rate")
	}
	client := &fasthttp.HostClient{
		Addr:                          cfg.Addr,
		MaxConns:                      cfg.Conns,
		ReadTimeout:                   cfg.Timeout,
		WriteTimeout:                  cfg.Timeout,
		MaxIdleConnDuration:           time.Minute,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: true,
		MaxConnWaitTimeout:            cfg.Timeout,
	}
	defer client.CloseIdleConnections()

	r := &runner{cfg: cfg, client: client}
	r.start = time.Now()
	r.from = r.start.Add(cfg.Warmup)
	r.until = r.from.Add(cfg.Duration)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var dues chan time.Time
	if cfg.Rate > 0 {
		dues = make(chan time.Time, 1<<16)
		go r.dispatch(ctx, dues)
	}
	workers := make([]*worker, cfg.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{id: i, r: r, hist: NewHistogram(), sendLag: NewHistogram(), statuses: map[int]uint64{}}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, dues)
		}()
	}

	// Sample CPU at the start and the end of the window.
	var before cpuSample
	var cpuErr error
	timer := time.NewTimer(time.Until(r.from))
	select {
	case <-timer.C:
		before, cpuErr = sampleCPU(serverPIDs)
	case <-ctx.Done():
	}
	timer.Reset(time.Until(r.until))
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	wg.Wait()
	end := time.Now()
	after, err := sampleCPU(serverPIDs)
	if cpuErr == nil {
		cpuErr = err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}

	res := Result{Latency: NewHistogram(), SendLag: NewHistogram(), Elapsed: end.Sub(r.from)}
	if cpuErr == nil {
		res.CPU = usage(before, after, res.Elapsed.Seconds())
	}
	res.Statuses = map[int]uint64{}
	for _, w := range workers {
		for code, n := range w.statuses {
			res.Statuses[code] += n
		}
		res.Requests += w.requests
		res.Errors += w.errors
		res.Late += w.late
		res.Latency.Merge(w.hist)
		res.SendLag.Merge(w.sendLag)
	}
	res.HeaderBytes = int(r.headerBytes.Load())
	res.BodyBytes = int(r.bodyBytes.Load())
	if res.Requests == 0 {
		return res, ErrNoRequests
	}
	res.Throughput = float64(res.Requests) / res.Elapsed.Seconds()
	return res, nil
}

// runner is the state the workers of one Run share.
type runner struct {
	cfg                Config
	client             *fasthttp.HostClient
	start, from, until time.Time
	sampled            atomic.Bool
	headerBytes        atomic.Int64
	bodyBytes          atomic.Int64
}

// worker drives one connection. Its counters are read only after it has returned.
type worker struct {
	id                     int
	r                      *runner
	hist, sendLag          *Histogram
	requests, errors, late uint64
	statuses               map[int]uint64
}

func (w *worker) run(ctx context.Context, dues <-chan time.Time) {
	r := w.r
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	for seq := uint64(0); ctx.Err() == nil; seq++ {
		// Open loop: take the next due request; closed loop: send now.
		var from time.Time
		if dues != nil {
			due, ok := <-dues
			if !ok {
				return
			}
			from = due
		}
		sent := time.Now()
		if dues == nil {
			if !sent.Before(r.until) {
				return
			}
			from = sent
		}
		req.Reset()
		resp.Reset()
		r.cfg.Next(w.id, seq, req)
		if len(req.Host()) == 0 {
			req.SetHost(r.cfg.Addr)
		}
		err := r.client.Do(req, resp)
		done := time.Now()
		if from.Before(r.from) {
			continue // warmup
		}
		if dues != nil {
			lag := sent.Sub(from)
			w.sendLag.Record(lag)
			if lag > time.Millisecond {
				w.late++
			}
		}
		w.requests++
		if err != nil {
			w.statuses[0]++
		} else {
			w.statuses[resp.StatusCode()]++
		}
		ok := err == nil && resp.StatusCode() < 400
		if ok && r.cfg.Check != nil {
			ok = r.cfg.Check(resp)
		}
		if !ok {
			w.errors++
		} else if r.sampled.CompareAndSwap(false, true) {
			r.headerBytes.Store(int64(len(resp.Header.Header())))
			r.bodyBytes.Store(int64(len(resp.Body())))
		}
		w.hist.Record(done.Sub(from))
	}
}

// dispatch is the open loop's clock: it hands the k-th request, due at start + k/Rate, to the
// first free worker through dues, and closes dues at the end of the window. It runs on its own
// OS thread and sleeps in the kernel (nanosleep, microsecond precision) rather than on Go timers,
// whose wake-ups are rounded to the millisecond when the scheduler is idle; requests due within
// 20 µs of each other leave together. When every worker is busy, requests queue in dues and their
// latency includes the wait.
func (r *runner) dispatch(ctx context.Context, dues chan<- time.Time) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(dues)
	interval := float64(time.Second) / r.cfg.Rate
	for k := 0; ; k++ {
		due := r.start.Add(time.Duration(float64(k) * interval))
		if !due.Before(r.until) {
			return
		}
		for {
			if ctx.Err() != nil {
				return
			}
			d := time.Until(due)
			if d <= 20*time.Microsecond {
				break
			}
			ts := unix.NsecToTimespec(int64(min(d, 10*time.Millisecond)))
			unix.Nanosleep(&ts, nil) // EINTR: the loop sleeps again
		}
		select {
		case dues <- due:
		case <-ctx.Done():
			return
		}
	}
}
