package pipeline

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// lazyPair returns a connection accepted through LazyDeadlines and its peer.
func lazyPair(t *testing.T, slack time.Duration) (server, client net.Conn) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LazyDeadlines(raw, slack)
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// A read deadline is enforced, late by at most the slack, never early, whatever deadlines came
// before it: an earlier one left in place, a later one that replaces it, or none.
func TestLazyDeadlinesRead(t *testing.T) {
	const slack = 50 * time.Millisecond
	server, client := lazyPair(t, slack)
	buf := make([]byte, 16)

	// A first deadline is armed: the read times out after it.
	start := time.Now()
	server.SetReadDeadline(start.Add(100 * time.Millisecond))
	if _, err := server.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 100*time.Millisecond+slack+100*time.Millisecond {
		t.Fatalf("timed out after %v", d)
	}

	// A later deadline than the real one: the real one passes first and the read resumes,
	// returning the data sent in between.
	server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	server.SetReadDeadline(time.Now().Add(400 * time.Millisecond))
	go func() {
		time.Sleep(250 * time.Millisecond)
		client.Write([]byte("late"))
	}()
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "late" {
		t.Fatalf("read after a moved deadline: %q %v", buf[:n], err)
	}

	// An earlier deadline than the real one (by more than the slack) is armed at once.
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	start = time.Now()
	server.SetReadDeadline(start.Add(100 * time.Millisecond))
	if _, err := server.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("read: %v after %v", err, time.Since(start))
	}

	// No deadline: the read waits for data.
	server.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		client.Write([]byte("none"))
	}()
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "none" {
		t.Fatalf("read without a deadline: %q %v", buf[:n], err)
	}
}

// A write cut short by a real deadline earlier than the one asked for resumes where it stopped:
// the peer receives every byte once.
func TestLazyDeadlinesWrite(t *testing.T) {
	server, client := lazyPair(t, 10*time.Millisecond)
	server.(*lazyConn).Conn.(*net.TCPConn).SetWriteBuffer(64 << 10)
	client.(*net.TCPConn).SetReadBuffer(64 << 10)
	server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	server.SetWriteDeadline(time.Now().Add(20 * time.Second)) // later: left for the write to move
	data := make([]byte, 4<<20)                               // more than the socket buffers hold
	for i := range data {
		data[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // past the first deadline, with the write blocked
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(data))))
		got <- b
	}()
	first := server.(*lazyConn).write.armed.Load()
	if n, err := server.Write(data); err != nil || n != len(data) {
		t.Fatalf("write: %d %v", n, err)
	}
	if server.(*lazyConn).write.armed.Load() == first {
		t.Error("the write was never cut short by the first deadline: the test tests nothing")
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("the peer received %d bytes, not the %d written", len(b), len(data))
	}
}

// The timer operations saved: requests that move their deadlines forward arm the real one once.
func TestLazyDeadlinesArmOnce(t *testing.T) {
	server, _ := lazyPair(t, time.Second)
	lc := server.(*lazyConn)
	now := time.Now()
	lc.SetReadDeadline(now.Add(10 * time.Second))
	armed := lc.read.armed.Load()
	for i := range 100 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		lc.SetReadDeadline(at.Add(60 * time.Second)) // idle
		lc.SetReadDeadline(at.Add(10 * time.Second)) // reading a request
		lc.SetWriteDeadline(at.Add(40 * time.Second))
	}
	if lc.read.armed.Load() != armed {
		t.Errorf("the real read deadline moved")
	}
}
