package fleet

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"
)

// Link is how one direction of a wire treats the frames it carries. The zero Link is a perfect
// wire (frames copied as soon as they are read).
type Link struct {
	// Delay is the one-way delay added to every frame.
	Delay time.Duration `json:"delay"`
	// Jitter spreads the delay uniformly over [Delay-Jitter, Delay+Jitter] (never below zero).
	// With jitter, frames may be reordered, as on netem.
	Jitter time.Duration `json:"jitter"`
	// Loss is the probability (0 to 1) that a frame is dropped, independently of the others.
	Loss float64 `json:"loss"`
	// Rate bounds the direction's throughput in bits per second (0: unbounded): a frame leaves
	// the sender's queue only after the previous ones have been "serialized" at this rate.
	Rate int64 `json:"rate"`
}

// Validate reports a Link that cannot be applied.
func (l Link) Validate() error {
	switch {
	case l.Delay < 0 || l.Jitter < 0:
		return fmt.Errorf("%w: negative delay or jitter", ErrInvalid)
	case l.Loss < 0 || l.Loss > 1:
		return fmt.Errorf("%w: loss %v is not a probability", ErrInvalid, l.Loss)
	case l.Rate < 0:
		return fmt.Errorf("%w: negative rate", ErrInvalid)
	}
	return nil
}

// String formats the link for people ("delay 40ms jitter 0s loss 0% rate unbounded").
func (l Link) String() string {
	rate := "unbounded"
	if l.Rate > 0 {
		rate = FormatRate(l.Rate)
	}
	return fmt.Sprintf("delay %v jitter %v loss %g%% rate %s", l.Delay, l.Jitter, l.Loss*100, rate)
}

// FormatRate formats bits per second with the largest whole unit (kbit, mbit, gbit).
func FormatRate(bps int64) string {
	switch {
	case bps >= 1e9 && bps%1e9 == 0:
		return fmt.Sprintf("%dgbit", bps/1e9)
	case bps >= 1e6 && bps%1e6 == 0:
		return fmt.Sprintf("%dmbit", bps/1e6)
	case bps >= 1e3 && bps%1e3 == 0:
		return fmt.Sprintf("%dkbit", bps/1e3)
	}
	return fmt.Sprintf("%dbit", bps)
}

// Direction names one direction of a wire: from its end A to its end B, or back.
type Direction int

// The two directions of a wire.
const (
	AtoB Direction = iota
	BtoA
)

// Count is a number of frames and their bytes.
type Count struct {
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
}

func (c *Count) add(n int) { c.Frames++; c.Bytes += uint64(n) }

// Counters are one direction's totals since the wire started.
type Counters struct {
	// In is every frame read from the sending end, dropped or not.
	In Count `json:"in"`
	// Delivered is every frame written to the receiving end.
	Delivered Count `json:"delivered"`
	// Lost are frames dropped by the loss probability; Partitioned those dropped while the
	// direction was partitioned (on arrival or still in flight when the partition began);
	// Overflow those dropped because MaxQueue frames were already in flight; WriteErrors those
	// the receiving end refused.
	Lost        uint64 `json:"lost"`
	Partitioned uint64 `json:"partitioned"`
	Overflow    uint64 `json:"overflow"`
	WriteErrors uint64 `json:"write_errors"`
	// Ports counts the IPv4 TCP and UDP frames read (as In does) by service port, keyed
	// "tcp/4222": the service port of a frame is the lower of its two ports (the fleet's
	// services listen below 10000, the kernel's ephemeral ports start at 32768).
	Ports map[string]Count `json:"ports,omitempty"`
}

// MaxQueue bounds the frames in flight in one direction of a wire (netem's default limit is
// 1000; a rate-limited direction needs room for its queue).
const MaxQueue = 10000

// Wire copies Ethernet frames between two TAP devices, A and B, with a Link per direction. Its
// methods are safe for concurrent use. It owns both files: Close closes them, which removes
// non-persistent TAP devices.
type Wire struct {
	a, b  *os.File
	lanes [2]*lane
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// NewWire starts copying frames between a and b (TAP devices opened without packet
// information, non-blocking so that Close interrupts reads), both directions set to l. Its
// goroutines (a reader and a writer per direction) end when Close is called or an end fails.
func NewWire(a, b *os.File, l Link) (*Wire, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	w := &Wire{a: a, b: b, done: make(chan struct{})}
	for d := range w.lanes {
		w.lanes[d] = newLane(l, rand.Uint64())
	}
	w.run(w.lanes[AtoB], a, b)
	w.run(w.lanes[BtoA], b, a)
	return w, nil
}

func (w *Wire) run(l *lane, src, dst *os.File) {
	w.wg.Add(2)
	go func() { defer w.wg.Done(); l.read(src, w.done) }()
	go func() { defer w.wg.Done(); l.write(dst, w.done) }()
}

// SetLink changes one direction's link; frames already in flight keep their release time.
func (w *Wire) SetLink(d Direction, l Link) error {
	if err := l.Validate(); err != nil {
		return err
	}
	ln := w.lanes[d]
	ln.mu.Lock()
	ln.link = l
	ln.mu.Unlock()
	return nil
}

// Link returns one direction's link.
func (w *Wire) Link(d Direction) Link {
	ln := w.lanes[d]
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return ln.link
}

// SetPartition cuts (on) or restores one direction: while cut, every frame is dropped, those
// in flight included.
func (w *Wire) SetPartition(d Direction, on bool) {
	ln := w.lanes[d]
	ln.mu.Lock()
	ln.partitioned = on
	ln.mu.Unlock()
	ln.signal()
}

// Partitioned reports whether one direction is cut.
func (w *Wire) Partitioned(d Direction) bool {
	ln := w.lanes[d]
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return ln.partitioned
}

// Counters returns a copy of one direction's counters.
func (w *Wire) Counters(d Direction) Counters {
	ln := w.lanes[d]
	ln.mu.Lock()
	defer ln.mu.Unlock()
	c := ln.c
	c.Ports = make(map[string]Count, len(ln.ports))
	keys := make([]uint32, 0, len(ln.ports))
	for k := range ln.ports {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		proto := "udp"
		if k>>16 == 6 {
			proto = "tcp"
		}
		c.Ports[fmt.Sprintf("%s/%d", proto, k&0xffff)] = *ln.ports[k]
	}
	return c
}

// Close stops the wire and closes both ends; frames in flight are dropped.
func (w *Wire) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = errors.Join(w.a.Close(), w.b.Close())
		w.wg.Wait()
	})
	return err
}

// lane is one direction of a wire: a reader admits frames into a queue ordered by release time,
// a writer delivers them when due. mu guards everything but wake.
type lane struct {
	mu          sync.Mutex
	link        Link
	partitioned bool
	rng         *rand.Rand
	queue       frameHeap
	seq         uint64
	nextFree    time.Time // when the rate limiter is next free to serialize a frame
	lastRelease time.Time // the latest release time given, to keep order without jitter
	c           Counters
	ports       map[uint32]*Count
	wake        chan struct{}
}

func newLane(l Link, seed uint64) *lane {
	return &lane{link: l, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), ports: map[uint32]*Count{}, wake: make(chan struct{}, 1)}
}

// frame is a frame in flight.
type frame struct {
	release time.Time
	seq     uint64
	data    []byte
}

// frameHeap orders frames by release time, then by arrival.
type frameHeap []frame

func (h frameHeap) Len() int { return len(h) }
func (h frameHeap) Less(i, j int) bool {
	if h[i].release.Equal(h[j].release) {
		return h[i].seq < h[j].seq
	}
	return h[i].release.Before(h[j].release)
}
func (h frameHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *frameHeap) Push(x any)   { *h = append(*h, x.(frame)) }
func (h *frameHeap) Pop() any {
	old := *h
	f := old[len(old)-1]
	old[len(old)-1] = frame{}
	*h = old[:len(old)-1]
	return f
}

// verdict is what admit decided for a frame.
type verdict int

const (
	accepted verdict = iota
	droppedLoss
	droppedPartition
	droppedOverflow
)

// admit decides a frame's fate at time now and, when accepted, queues it with its release
// time. It is the whole link model, kept free of I/O so that it can be tested alone.
func (l *lane) admit(now time.Time, data []byte) (verdict, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c.In.add(len(data))
	if proto, port, ok := servicePort(data); ok {
		k := uint32(proto)<<16 | uint32(port)
		c := l.ports[k]
		if c == nil {
			c = &Count{}
			l.ports[k] = c
		}
		c.add(len(data))
	}
	switch {
	case l.partitioned:
		l.c.Partitioned++
		return droppedPartition, time.Time{}
	case l.link.Loss > 0 && l.rng.Float64() < l.link.Loss:
		l.c.Lost++
		return droppedLoss, time.Time{}
	case len(l.queue) >= MaxQueue:
		l.c.Overflow++
		return droppedOverflow, time.Time{}
	}
	depart := now
	if l.link.Rate > 0 {
		if l.nextFree.After(depart) {
			depart = l.nextFree
		}
		depart = depart.Add(time.Duration(int64(len(data)) * 8 * int64(time.Second) / l.link.Rate))
		l.nextFree = depart
	}
	delay := l.link.Delay
	if j := l.link.Jitter; j > 0 {
		delay += time.Duration(l.rng.Int64N(int64(2*j)+1)) - j
		if delay < 0 {
			delay = 0
		}
	}
	release := depart.Add(delay)
	if l.link.Jitter == 0 && release.Before(l.lastRelease) {
		// A shorter delay set while frames are in flight must not overtake them.
		release = l.lastRelease
	}
	if release.After(l.lastRelease) {
		l.lastRelease = release
	}
	l.seq++
	heap.Push(&l.queue, frame{release: release, seq: l.seq, data: data})
	return accepted, release
}

func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// read admits every frame read from src until done is closed or src fails.
func (l *lane) read(src *os.File, done <-chan struct{}) {
	buf := make([]byte, 65536)
	for {
		n, err := src.Read(buf)
		if err != nil {
			select {
			case <-done:
				return
			default:
			}
			if errors.Is(err, os.ErrClosed) {
				return
			}
			// Any other failure is retried after a pause, so that a device being
			// reconfigured does not end the lane and a dead one does not spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if n == 0 {
			continue
		}
		data := make([]byte, n)
		copy(data, buf[:n])
		if v, _ := l.admit(time.Now(), data); v == accepted {
			l.signal()
		}
	}
}

// write delivers queued frames to dst when due until done is closed.
func (l *lane) write(dst *os.File, done <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.mu.Unlock()
			select {
			case <-l.wake:
				continue
			case <-done:
				return
			}
		}
		head := l.queue[0]
		if wait := time.Until(head.release); wait > 0 {
			l.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-l.wake:
				timer.Stop()
			case <-done:
				timer.Stop()
				return
			}
			continue
		}
		heap.Pop(&l.queue)
		if l.partitioned {
			l.c.Partitioned++
			l.mu.Unlock()
			continue
		}
		l.mu.Unlock()
		_, err := dst.Write(head.data)
		l.mu.Lock()
		if err != nil {
			l.c.WriteErrors++
		} else {
			l.c.Delivered.add(len(head.data))
		}
		l.mu.Unlock()
		if err != nil && errors.Is(err, os.ErrClosed) {
			return
		}
	}
}

// servicePort returns the IP protocol (6 TCP, 17 UDP) and service port (the lower of source
// and destination) of an Ethernet frame carrying IPv4 TCP or UDP, ok false for anything else
// (ARP, IPv6, non-first fragments).
func servicePort(f []byte) (proto byte, port uint16, ok bool) {
	if len(f) < 14 {
		return 0, 0, false
	}
	et, off := binary.BigEndian.Uint16(f[12:14]), 14
	if et == 0x8100 && len(f) >= 18 {
		et, off = binary.BigEndian.Uint16(f[16:18]), 18
	}
	if et != 0x0800 || len(f) < off+20 {
		return 0, 0, false
	}
	ihl := int(f[off]&0x0f) * 4
	if ihl < 20 || len(f) < off+ihl+4 {
		return 0, 0, false
	}
	if binary.BigEndian.Uint16(f[off+6:off+8])&0x1fff != 0 {
		return 0, 0, false
	}
	proto = f[off+9]
	if proto != 6 && proto != 17 {
		return 0, 0, false
	}
	sp := binary.BigEndian.Uint16(f[off+ihl:])
	dp := binary.BigEndian.Uint16(f[off+ihl+2:])
	return proto, min(sp, dp), true
}
