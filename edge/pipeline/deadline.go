package pipeline

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// LazyDeadlines wraps a listener so that the read and write deadlines of its connections cost
// no timer operation on most requests.
//
// A fasthttp server with read, write and idle timeouts sets three deadlines per request (idle,
// then read once the request starts, then write), and each one takes the connection's poller
// lock and moves a runtime timer: measured at about 3,500 instructions per request, a third of
// what an edge cache hit costs beyond bare fasthttp. A connection of this listener keeps the
// deadline it was asked for, but moves the real one only when the new deadline is earlier than
// the real one by more than slack; a real deadline that passes before the one asked for is
// moved then, and the read or write it cut short resumes. On a busy keep-alive connection that
// is one timer operation per read timeout instead of three per request.
//
// Deadlines are enforced late by up to slack, never early. Everything else passes through to
// the wrapped connection, io.ReaderFrom included (sendfile for media files).
func LazyDeadlines(ln net.Listener, slack time.Duration) net.Listener {
	return &lazyListener{Listener: ln, slack: int64(slack)}
}

type lazyListener struct {
	net.Listener
	slack int64
}

func (l *lazyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &lazyConn{Conn: c}
	lc.read.slack, lc.write.slack = l.slack, l.slack
	lc.read.set, lc.write.set = c.SetReadDeadline, c.SetWriteDeadline
	return lc, nil
}

// lazyConn is a connection of LazyDeadlines.
type lazyConn struct {
	net.Conn
	read, write lazyDeadline
}

// lazyDeadline is one direction's deadline. Times are unix nanoseconds, 0 meaning none.
type lazyDeadline struct {
	slack  int64
	set    func(time.Time) error
	wanted atomic.Int64 // the deadline the caller asked for
	armed  atomic.Int64 // the real deadline of the connection
	mu     sync.Mutex   // serialises changes of the real deadline
}

// request records the deadline t and moves the real one when it is missing, or later than t by
// more than slack; a real deadline earlier than t is left for extend to move when it passes.
func (d *lazyDeadline) request(t time.Time) error {
	if t.IsZero() {
		d.wanted.Store(0)
		if d.armed.Load() == 0 {
			return nil
		}
		return d.arm(0)
	}
	w := t.UnixNano()
	d.wanted.Store(w)
	if a := d.armed.Load(); a != 0 && a <= w+d.slack {
		return nil
	}
	return d.arm(w + d.slack)
}

// arm sets the real deadline to a (0: none).
func (d *lazyDeadline) arm(a int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var t time.Time
	if a != 0 {
		t = time.Unix(0, a)
	}
	if err := d.set(t); err != nil {
		return err
	}
	d.armed.Store(a)
	return nil
}

// extend is called when the real deadline has passed: it reports whether the deadline asked for
// is still ahead (or none), after moving the real one to it, so that the operation may resume.
func (d *lazyDeadline) extend() bool {
	w := d.wanted.Load()
	if w != 0 && time.Now().UnixNano() >= w {
		return false
	}
	if w != 0 {
		w += d.slack
	}
	return d.arm(w) == nil
}

// exact moves the real deadline to the one asked for (plus slack) if it is earlier.
func (d *lazyDeadline) exact() error {
	w, a := d.wanted.Load(), d.armed.Load()
	switch {
	case w == 0 && a != 0:
		return d.arm(0)
	case w != 0 && a < w:
		return d.arm(w + d.slack)
	}
	return nil
}

func (c *lazyConn) SetDeadline(t time.Time) error {
	if err := c.read.request(t); err != nil {
		return err
	}
	return c.write.request(t)
}

func (c *lazyConn) SetReadDeadline(t time.Time) error  { return c.read.request(t) }
func (c *lazyConn) SetWriteDeadline(t time.Time) error { return c.write.request(t) }

func (c *lazyConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !c.read.extend() {
			return n, err
		}
	}
}

func (c *lazyConn) Write(b []byte) (int, error) {
	written := 0
	for {
		n, err := c.Conn.Write(b)
		written += n
		if !errors.Is(err, os.ErrDeadlineExceeded) || !c.write.extend() {
			return written, err
		}
		b = b[n:]
	}
}

// ReadFrom keeps the wrapped connection's io.ReaderFrom (a TCP connection's sendfile). A reader
// copied through a buffer loses what was read but not written when the write fails, so nothing
// is resumed here: the real deadline is made the one asked for (within slack) first.
func (c *lazyConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.write.exact(); err != nil {
		return 0, err
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}
