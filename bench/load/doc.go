// Package load drives HTTP load at one server and measures it: a closed loop (every connection
// sends its next request as soon as the previous answer arrives: the peak throughput) and an open
// loop at a fixed rate (requests are due at fixed intended times whether or not earlier ones have
// answered, and latency runs from the intended send time, so a stalled server shows as queueing
// delay instead of fewer, faster samples: no coordinated omission).
//
// # Overview
//
//	res, err := load.Run(ctx, load.Config{
//		Addr: "127.0.0.1:8080", Conns: 64, Duration: 10 * time.Second, Rate: 20000,
//		Next: func(worker int, seq uint64, req *fasthttp.Request) { req.SetRequestURI("/api/products") },
//	}, serverPID)
//
// Latencies go into an HDR histogram (Histogram, a wrapper of HdrHistogram/hdrhistogram-go:
// 0 to 60 s at three significant digits). CPU use during the measured window is read from
// /proc: the server processes named by the caller, this process, and the rest of the machine.
// PinProcess pins every thread of a process to a set of CPUs (sched_setaffinity). The closed
// loop is this package's own fasthttp client: on one core of the reference machine it drives
// ~126k requests/s against a bare fasthttp server, about what wrk reaches there.
//
// # Invariants
//
//   - Each connection is used by one worker at a time; a worker's requests are sequential.
//   - In the open loop the k-th request is due at start + k/Rate, whatever happened before; the
//     first free connection sends it, and its latency runs from the due time, so waiting for a
//     connection (all Conns busy) or for the generator counts. SendLag shows that share apart.
//   - The open loop's clock sleeps on its own OS thread: run it with GOMAXPROCS ≥ 2 (one for the
//     clock, one for the connections), even on one CPU, or the connections wait for the clock.
//   - Only requests started inside the measured window (after Warmup, before Warmup+Duration) are
//     recorded; requests still in flight at the end are waited for (up to the timeout) and count.
//   - Linux only for CPU accounting and pinning (it reads /proc); elsewhere those are zero or
//     errors, and the load itself still runs.
package load
