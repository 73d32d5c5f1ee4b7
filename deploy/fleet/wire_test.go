package fleet

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestLinkValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Link
		ok   bool
	}{
		{"zero", Link{}, true},
		{"typical", Link{Delay: 40 * time.Millisecond, Jitter: 2 * time.Millisecond, Loss: 0.1, Rate: 1e8}, true},
		{"all lost", Link{Loss: 1}, true},
		{"negative delay", Link{Delay: -1}, false},
		{"negative jitter", Link{Jitter: -1}, false},
		{"loss above one", Link{Loss: 1.5}, false},
		{"negative loss", Link{Loss: -0.1}, false},
		{"negative rate", Link{Rate: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.l.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate(%+v) = %v, want ok %v", tc.l, err, tc.ok)
			}
		})
	}
}

// The link model alone (no devices): delay, jitter, rate, loss, partition, queue bound, order.
func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	frame := make([]byte, 100)
	t.Run("delay", func(t *testing.T) {
		l := newLane(Link{Delay: 40 * time.Millisecond}, 1)
		v, rel := l.admit(t0, frame)
		if v != accepted || !rel.Equal(t0.Add(40*time.Millisecond)) {
			t.Fatalf("admit = %v, %v; want accepted at +40ms", v, rel.Sub(t0))
		}
	})
	t.Run("jitter within bounds", func(t *testing.T) {
		l := newLane(Link{Delay: 40 * time.Millisecond, Jitter: 5 * time.Millisecond}, 2)
		lo, hi := time.Hour, time.Duration(0)
		for i := 0; i < 10000; i++ {
			_, rel := l.admit(t0, frame)
			d := rel.Sub(t0)
			lo, hi = min(lo, d), max(hi, d)
			l.queue = l.queue[:0]
		}
		if lo < 35*time.Millisecond || hi > 45*time.Millisecond || lo > 36*time.Millisecond || hi < 44*time.Millisecond {
			t.Fatalf("delays spread over [%v, %v], want about [35ms, 45ms]", lo, hi)
		}
	})
	t.Run("rate serializes", func(t *testing.T) {
		l := newLane(Link{Rate: 8000}, 3) // 100 bytes = 800 bits = 100 ms
		var rels []time.Duration
		for i := 0; i < 3; i++ {
			_, rel := l.admit(t0, frame)
			rels = append(rels, rel.Sub(t0))
		}
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
		if fmt.Sprint(rels) != fmt.Sprint(want) {
			t.Fatalf("releases %v, want %v", rels, want)
		}
	})
	t.Run("loss rate", func(t *testing.T) {
		l := newLane(Link{Loss: 0.1}, 4)
		const n = 100000
		lost := 0
		for i := 0; i < n; i++ {
			if v, _ := l.admit(t0, frame); v == droppedLoss {
				lost++
			}
			l.queue = l.queue[:0]
		}
		if got := float64(lost) / n; got < 0.095 || got > 0.105 {
			t.Fatalf("lost %.4f of %d frames, want 0.1 ± 0.005", got, n)
		}
		if c := l.c; c.Lost != uint64(lost) || c.In.Frames != n {
			t.Fatalf("counters %+v, want %d lost of %d", c, lost, n)
		}
	})
	t.Run("partition drops all", func(t *testing.T) {
		l := newLane(Link{}, 5)
		l.partitioned = true
		for i := 0; i < 100; i++ {
			if v, _ := l.admit(t0, frame); v != droppedPartition {
				t.Fatalf("frame %d: %v, want dropped by the partition", i, v)
			}
		}
		if l.c.Partitioned != 100 || len(l.queue) != 0 {
			t.Fatalf("partitioned %d, queued %d", l.c.Partitioned, len(l.queue))
		}
	})
	t.Run("queue bound", func(t *testing.T) {
		l := newLane(Link{Delay: time.Second}, 6)
		for i := 0; i < MaxQueue+10; i++ {
			l.admit(t0, frame)
		}
		if l.c.Overflow != 10 || len(l.queue) != MaxQueue {
			t.Fatalf("overflow %d, queued %d; want 10 and %d", l.c.Overflow, len(l.queue), MaxQueue)
		}
	})
	t.Run("a shorter delay does not overtake", func(t *testing.T) {
		l := newLane(Link{Delay: 40 * time.Millisecond}, 7)
		_, first := l.admit(t0, frame)
		l.link.Delay = time.Millisecond
		_, second := l.admit(t0.Add(time.Millisecond), frame)
		if second.Before(first) {
			t.Fatalf("second frame released at %v, before the first at %v", second.Sub(t0), first.Sub(t0))
		}
	})
}

func TestServicePort(t *testing.T) {
	ipv4 := func(proto byte, sport, dport uint16, frag uint16) []byte {
		f := make([]byte, 14+20+8)
		binary.BigEndian.PutUint16(f[12:], 0x0800)
		f[14] = 0x45
		binary.BigEndian.PutUint16(f[14+6:], frag)
		f[14+9] = proto
		binary.BigEndian.PutUint16(f[34:], sport)
		binary.BigEndian.PutUint16(f[36:], dport)
		return f
	}
	arp := make([]byte, 42)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	for _, tc := range []struct {
		name  string
		frame []byte
		proto byte
		port  uint16
		ok    bool
	}{
		{"tcp request", ipv4(6, 40000, 4222, 0), 6, 4222, true},
		{"tcp answer", ipv4(6, 8081, 51000, 0), 6, 8081, true},
		{"udp", ipv4(17, 45000, 9999, 0), 17, 9999, true},
		{"icmp", ipv4(1, 0, 0, 0), 0, 0, false},
		{"later fragment", ipv4(17, 1, 2, 5), 0, 0, false},
		{"arp", arp, 0, 0, false},
		{"short", []byte{1, 2, 3}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proto, port, ok := servicePort(tc.frame)
			if ok != tc.ok || proto != tc.proto || port != tc.port {
				t.Fatalf("servicePort = %d, %d, %v; want %d, %d, %v", proto, port, ok, tc.proto, tc.port, tc.ok)
			}
		})
	}
}

// needFleet skips a test that needs root, TAP devices and iproute2.
func needFleet(t testing.TB) {
	t.Helper()
	if err := Supported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

var pairs atomic.Int32

// tapPair joins two fresh namespaces by a wire: A has 10.99.0.1/30, B 10.99.0.2/30, each on
// a TAP device tw0. Everything is removed when the test ends.
func tapPair(t testing.TB, l Link) (w *Wire, nsA, nsB string) {
	t.Helper()
	needFleet(t)
	ctx := context.Background()
	prefix := fmt.Sprintf("vtw%d-%d-", os.Getpid(), pairs.Add(1))
	nsA, nsB = prefix+"a", prefix+"b"
	for _, ns := range []string{nsA, nsB} {
		if err := addNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ipCmd(ctx, "netns", "del", ns) })
	}
	ta, err := OpenTAP(nsA, "tw0")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := OpenTAP(nsB, "tw0")
	if err != nil {
		ta.Close()
		t.Fatal(err)
	}
	if w, err = NewWire(ta, tb, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for ns, addr := range map[string]string{nsA: "10.99.0.1/30", nsB: "10.99.0.2/30"} {
		if err := ipCmd(ctx, "-n", ns, "addr", "add", addr, "dev", "tw0"); err != nil {
			t.Fatal(err)
		}
		if err := ipCmd(ctx, "-n", ns, "link", "set", "tw0", "up"); err != nil {
			t.Fatal(err)
		}
	}
	return w, nsA, nsB
}

// A TCP echo through a wire of 20 ms each way answers in 40 ms and a little.
func TestWireTCPRoundTrip(t *testing.T) {
	w, a, b := tapPair(t, Link{Delay: 20 * time.Millisecond})
	ln, err := ListenIn(b, "tcp", "10.99.0.2:7000")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialIn(ctx, a, "tcp", "10.99.0.2:7000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	var rtts []time.Duration
	for i := 0; i < 23; i++ {
		start := time.Now()
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if i >= 3 { // the first exchanges settle ARP and the connection
			rtts = append(rtts, time.Since(start))
		}
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	lo, med, hi := rtts[0], rtts[len(rtts)/2], rtts[len(rtts)-1]
	t.Logf("round trips over 2×20 ms: min %v, median %v, max %v", lo, med, hi)
	if lo < 40*time.Millisecond || med > 48*time.Millisecond {
		t.Fatalf("round trips min %v median %v, want ≥ 40ms and a median under 48ms", lo, med)
	}
	if n := w.Counters(AtoB).Ports["tcp/7000"].Frames; n < 20 {
		t.Fatalf("counted %d frames to tcp/7000, want at least 20", n)
	}
}

// udpPair opens a UDP receiver in b (counting datagrams by their number, in order of arrival)
// and a sender in a, and makes sure ARP is settled.
type udpPair struct {
	tx   net.Conn
	mu   sync.Mutex
	seen []uint32
}

func newUDPPair(t *testing.T, a, b string, port int, delay time.Duration) *udpPair {
	t.Helper()
	rx, err := ListenPacketIn(b, "udp", fmt.Sprintf("10.99.0.2:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	// A receive buffer of 4 MiB (root may exceed rmem_max): a busy machine may not schedule
	// the reader for a while, and a delay change releases a burst.
	if sc, ok := rx.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			raw.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, 4<<20)
			})
		}
	}
	tx, err := DialIn(context.Background(), a, "udp", fmt.Sprintf("10.99.0.2:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Close() })
	u := &udpPair{tx: tx}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := rx.ReadFrom(buf)
			if err != nil {
				return
			}
			if n >= 4 {
				u.mu.Lock()
				u.seen = append(u.seen, binary.BigEndian.Uint32(buf))
				u.mu.Unlock()
			}
		}
	}()
	// Settle ARP: send until one datagram arrives.
	deadline := time.Now().Add(5 * time.Second)
	for u.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no datagram crossed the wire")
		}
		u.send(t, 0xffffffff)
		time.Sleep(20 * time.Millisecond)
	}
	u.settle(2*delay + 100*time.Millisecond) // the other warm-up datagrams still in flight
	u.reset()
	return u
}

func (u *udpPair) send(t *testing.T, n uint32) {
	var b [64]byte
	binary.BigEndian.PutUint32(b[:], n)
	if _, err := u.tx.Write(b[:]); err != nil {
		t.Fatal(err)
	}
}

// sendN sends datagrams 0..n-1, paced so that no socket buffer overflows.
func (u *udpPair) sendN(t *testing.T, n int) {
	for i := 0; i < n; i++ {
		u.send(t, uint32(i))
		if i%100 == 99 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func (u *udpPair) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.seen)
}

func (u *udpPair) reset() {
	u.mu.Lock()
	u.seen = nil
	u.mu.Unlock()
}

// settle waits until no datagram has arrived for quiet.
func (u *udpPair) settle(quiet time.Duration) int {
	last, since := -1, time.Now()
	for {
		n := u.count()
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) > quiet {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// 10% loss on one direction: about 10% of the datagrams go missing, exactly those counted lost.
func TestWireLoss(t *testing.T) {
	w, a, b := tapPair(t, Link{})
	u := newUDPPair(t, a, b, 7001, 0)
	if err := w.SetLink(AtoB, Link{Loss: 0.1}); err != nil {
		t.Fatal(err)
	}
	before := w.Counters(AtoB)
	const n = 4000
	u.sendN(t, n)
	got := u.settle(200 * time.Millisecond)
	after := w.Counters(AtoB)
	lost := after.Lost - before.Lost
	frac := float64(lost) / n
	t.Logf("10%% loss: %d of %d datagrams lost (%.3f), %d received", lost, n, frac, got)
	if frac < 0.08 || frac > 0.12 {
		t.Fatalf("lost %.3f of the datagrams, want 0.10 ± 0.02", frac)
	}
	if got != n-int(lost) {
		t.Fatalf("received %d, want %d sent minus %d lost", got, n, lost)
	}
	if d := after.Ports["udp/7001"].Frames - before.Ports["udp/7001"].Frames; d != n {
		t.Fatalf("counted %d frames to udp/7001, want %d", d, n)
	}
	if back := w.Counters(BtoA); back.Lost != 0 {
		t.Fatalf("the other direction lost %d frames, want 0", back.Lost)
	}
}

// A partition drops everything, frames in flight included; lifting it restores the wire.
func TestWirePartition(t *testing.T) {
	w, a, b := tapPair(t, Link{Delay: 100 * time.Millisecond})
	u := newUDPPair(t, a, b, 7002, 100*time.Millisecond)
	before := w.Counters(AtoB)
	u.sendN(t, 10) // in flight for 100 ms
	w.SetPartition(AtoB, true)
	u.sendN(t, 50)
	if got := u.settle(300 * time.Millisecond); got != 0 {
		t.Fatalf("%d datagrams crossed a partition", got)
	}
	if d := w.Counters(AtoB).Partitioned - before.Partitioned; d != 60 {
		t.Fatalf("counted %d frames dropped by the partition, want 60", d)
	}
	w.SetPartition(AtoB, false)
	u.sendN(t, 5)
	if got := u.settle(300 * time.Millisecond); got != 5 {
		t.Fatalf("%d of 5 datagrams crossed after the partition, want 5", got)
	}
}

// Without jitter, frames keep their order, also across a delay change.
func TestWireOrder(t *testing.T) {
	w, a, b := tapPair(t, Link{Delay: 10 * time.Millisecond})
	u := newUDPPair(t, a, b, 7003, 10*time.Millisecond)
	const n = 1000
	for i := 0; i < n; i++ {
		if i == n/2 {
			w.SetLink(AtoB, Link{Delay: time.Millisecond})
		}
		u.send(t, uint32(i))
		if i%10 == 9 {
			time.Sleep(time.Millisecond)
		}
	}
	if got := u.settle(200 * time.Millisecond); got != n {
		t.Fatalf("received %d of %d", got, n)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, v := range u.seen {
		if v != uint32(i) {
			t.Fatalf("datagram %d arrived at position %d", v, i)
		}
	}
}

// The emulator's cost: a TCP stream through a wire without delay; reports the throughput and
// the process's CPU time per frame carried (both directions, ACKs included).
func BenchmarkWireTCP(b *testing.B) {
	w, a, nsB := tapPair(b, Link{})
	ln, err := ListenIn(nsB, "tcp", "10.99.0.2:7004")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(io.Discard, c)
	}()
	c, err := DialIn(context.Background(), a, "tcp", "10.99.0.2:7004")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64<<10)
	c.Write(buf) // settle ARP and the connection
	time.Sleep(100 * time.Millisecond)
	before := w.Counters(AtoB).Delivered.Frames + w.Counters(BtoA).Delivered.Frames
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	frames := w.Counters(AtoB).Delivered.Frames + w.Counters(BtoA).Delivered.Frames - before
	cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) * time.Nanosecond
	if frames > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(frames)/1000, "cpu-µs/frame")
	}
}
