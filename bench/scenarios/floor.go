package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/bench/cluster"
	"vitrine/bench/load"
	"vitrine/bench/report"
)

// PieceFloor is the CPU per write of one piece of the write path run alone, with nothing of
// Vitrine's own in it (measureFloor).
type PieceFloor struct {
	// Piece says what ran; Process is the process of the real run whose share it is the floor
	// of ("database", "nats", "origin", "followers": the edges and the origin's replica).
	Piece   string `json:"piece"`
	Process string `json:"process"`
	// Ms is the piece's CPU in milliseconds per write; Ops the writes it carried.
	Ms  float64 `json:"ms_per_write"`
	Ops int     `json:"ops"`
}

// floorWrite is what one write of the real run looked like, for the pieces to repeat.
type floorWrite struct {
	path, auth string
	body       []byte // the PATCH's body
	answer     []byte // the origin's answer: the bare server's answer, and the size of the change published
}

// floorStream is the stream the JetStream piece publishes to: outside the state stream's and the
// event stream's subjects.
const floorStream, floorSubjects = "BENCH_FLOOR", "benchfloor.>"

// measureFloor runs the pieces a replicated write crosses, alone, each at rate for d, on the
// cluster's CPUs, and returns each one's CPU per write:
//
//   - a bare origin (`vitrine bench-bare-origin`, bench/bareorigin): a fasthttp server that
//     takes the write's PATCH (its body and headers) and, through pgx, runs a SERIALIZABLE
//     transaction of one round trip (a row, a log row, an outbox row the size of the origin's
//     answer), then answers as the origin did; counted are its own process and PostgreSQL;
//   - JetStream: a publish with acknowledgement of a message the size of the answer to a
//     one-replica file stream keeping one message per subject (as the state stream), on the
//     cluster's NATS server; its CPU above quietRate (the server's CPU per second with nothing
//     written) counts, the publisher's (this process) does not;
//   - followers: that many processes, each an ordered consumer of that stream
//     (`vitrine bench-follower`), reading every message and keeping nothing.
//
// Every piece runs once per write, as Vitrine's do when writes arrive one at a time. Nothing is
// authenticated, decoded, applied or indexed, and no relay reads an outbox: each figure is a lower
// bound of its process's share in the real run at that rate, for a write path that carries each
// write alone. At a given rate most of a piece's CPU is its wake-ups, so a path that carries
// several writes per operation (the relay's publishes under load, the origin's group commit) can
// spend less than this floor on that piece.
func measureFloor(ctx context.Context, c *cluster.Cluster, rate float64, d time.Duration, followers int, w floorWrite, quietRate float64) ([]PieceFloor, error) {
	addr, err := cluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	answerFile := filepath.Join(c.Dir(), "floor-answer.json")
	if err := os.WriteFile(answerFile, w.answer, 0o600); err != nil {
		return nil, err
	}
	server, err := c.StartHelper(ctx, "floor-origin", addr, "bench-bare-origin", "--addr", addr, "--body", answerFile)
	if err != nil {
		return nil, err
	}
	defer c.Stop(server, 5*time.Second)
	httpClient := newClient(addr, "floor.localhost", 64)

	nc, err := nats.Connect(c.NATSURL, nats.Name("bench-floor"))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: floorStream, Subjects: []string{floorSubjects},
		Storage: jetstream.FileStorage, Replicas: 1, MaxMsgsPerSubject: 1}); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer js.DeleteStream(context.WithoutCancel(ctx), floorStream)
	var kids []*cluster.Process
	defer func() {
		for _, p := range kids {
			c.Stop(p, 5*time.Second)
		}
	}()
	for i := range followers {
		p, err := c.StartHelper(ctx, "floor-follower-"+strconv.Itoa(i+1), "", "bench-follower", "--stream", floorStream)
		if err != nil {
			return nil, err
		}
		kids = append(kids, p)
	}
	if err := waitConsumers(ctx, js, followers); err != nil {
		return nil, err
	}

	pieces := []struct {
		name string
		op   func(ctx context.Context, i int) error
	}{
		{"a bare origin: the write's PATCH to fasthttp, a one-round-trip transaction through pgx", func(ctx context.Context, i int) error {
			status, out, _, err := httpClient.do("PATCH", w.path, w.body, "Authorization", w.auth)
			if err == nil && status != 200 {
				err = fmt.Errorf("status %d: %.200s", status, out)
			}
			return err
		}},
		{"JetStream: a publish, acknowledged, to a one-replica file stream", func(ctx context.Context, i int) error {
			_, err := js.Publish(ctx, "benchfloor."+strconv.Itoa(i%10000), w.answer)
			return err
		}},
	}

	// A few of each first, so that connections exist before the window.
	for i := range 20 {
		for _, p := range pieces {
			if err := p.op(ctx, -1-i); err != nil {
				return nil, fmt.Errorf("floor: %s: %w", p.name, err)
			}
		}
	}
	pids := []int{server.PID, c.NATS.PID}
	for _, p := range kids {
		pids = append(pids, p.PID)
	}
	before, beforeDB, start := pidCPU(pids), processCPU(nil)["database"], time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(pieces))
	done := make([]atomic.Int64, len(pieces))
	interval := time.Duration(float64(time.Second) / rate)
	n := int(d / interval)
	for k, p := range pieces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = paceOps(ctx, n, interval, func(i int) error {
				err := p.op(ctx, i)
				if err == nil {
					done[k].Add(1)
				}
				return err
			})
		}()
	}
	wg.Wait()
	after, afterDB, wall := pidCPU(pids), processCPU(nil)["database"], time.Since(start).Seconds()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("floor: %s: %w", pieces[k].name, err)
		}
	}
	per := func(cpu float64, k int) float64 { return 1000 * max(0, cpu) / float64(max(1, done[k].Load())) }
	kidsCPU := 0.0
	for i := 2; i < len(pids); i++ {
		kidsCPU += after[i] - before[i]
	}
	writes, publishes := int(done[0].Load()), int(done[1].Load())
	return []PieceFloor{
		{Piece: pieces[0].name, Process: "origin", Ms: per(after[0]-before[0], 0), Ops: writes},
		{Piece: "PostgreSQL, for that transaction", Process: "database", Ms: per(afterDB-beforeDB, 0), Ops: writes},
		{Piece: pieces[1].name, Process: "nats", Ms: per(after[1]-before[1]-quietRate*wall, 1), Ops: publishes},
		{Piece: fmt.Sprintf("%d followers receiving it (ordered consumers, separate processes)", followers), Process: "followers",
			Ms: per(kidsCPU, 1), Ops: publishes},
	}, nil
}

// paceOps calls op n times, the i-th at start + i*interval (open loop: each in its own goroutine,
// at most 64 at once), and returns the first error.
func paceOps(ctx context.Context, n int, interval time.Duration, op func(i int) error) error {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	start := time.Now()
	for i := range n {
		if !sleepUntil(ctx, start.Add(time.Duration(i)*interval)) {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := op(i); err != nil {
				first.CompareAndSwap(nil, &err)
			}
		}()
	}
	wg.Wait()
	if err := first.Load(); err != nil {
		return *err
	}
	return ctx.Err()
}

// pidCPU reads the CPU seconds of each pid (an exited one reads zero).
func pidCPU(pids []int) []float64 {
	out := make([]float64, len(pids))
	for i, pid := range pids {
		out[i], _ = load.ProcessCPU(pid)
	}
	return out
}

// waitConsumers waits (up to 30 s) until the floor stream has n consumers.
func waitConsumers(ctx context.Context, js jetstream.JetStream, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := js.Stream(ctx, floorStream)
		if err == nil && s.CachedInfo().State.Consumers >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("floor: %d followers not consuming after 30s", n)
		}
		if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// floorReport is the table of the pieces' floor beside the real run's CPU per write above the
// reads (real, by process; the followers' row sums the edges'), and the floor's sum.
func floorReport(floor []PieceFloor, real map[string]float64) (report.Table, float64) {
	t := report.Table{Title: "The pieces of a write, each alone at the same rate: the floor (CPU ms per write)",
		Header: []string{"piece", "writes", "ms per write", "this run's process", "its ms per write above the reads"}}
	sum, realSum := 0.0, 0.0
	for _, p := range floor {
		r, name := real[p.Process], p.Process
		if p.Process == "followers" {
			r, name = 0, "the edges (the origin's replica is in the origin's)"
			for proc, ms := range real {
				if strings.HasPrefix(proc, "edge-") {
					r += ms
				}
			}
		}
		sum, realSum = sum+p.Ms, realSum+r
		t.Rows = append(t.Rows, []string{p.Piece, strconv.Itoa(p.Ops), strconv.FormatFloat(p.Ms, 'f', 3, 64), name, strconv.FormatFloat(r, 'f', 2, 64)})
	}
	t.Rows = append(t.Rows, []string{"all", "", strconv.FormatFloat(sum, 'f', 3, 64), "these processes", strconv.FormatFloat(realSum, 'f', 2, 64)})
	return t, sum
}
