package storetest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// CommitFault says how a Proxy fails a COMMIT that the server carried out.
type CommitFault int

const (
	// DropAfterCommit closes the connection instead of passing on the server's COMMIT answer:
	// the client sees a connection lost during COMMIT.
	DropAfterCommit CommitFault = iota + 1
	// AmbiguousCommit replaces the server's COMMIT answer by an error with SQLSTATE 40003
	// (statement_completion_unknown), CockroachDB's "result is ambiguous".
	AmbiguousCommit
)

// Proxy is a TCP proxy on the loopback in front of the test PostgreSQL server that can make
// the answer to a COMMIT fail after the server committed: a real transaction, really
// committed, whose client learns nothing certain. It reads the PostgreSQL protocol just enough
// to see each connection's statements (simple queries, and prepared statements by name) and
// the server's CommandComplete for COMMIT.
type Proxy struct {
	t      testing.TB
	ln     net.Listener
	target string

	mu     sync.Mutex
	marker string // a statement containing it marks its transaction for the fault
	fault  CommitFault
	fired  int
}

// NewProxy starts a proxy to the server of dsn and returns it with dsn rewritten to go through
// it. It stops when t ends.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, ln: ln, target: u.Host}
	t.Cleanup(func() { ln.Close() })
	go p.accept()
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable") // the proxy reads the protocol in clear
	u.RawQuery = q.Encode()
	return p, u.String()
}

// FailCommit arms the proxy once: the next transaction that runs a statement containing
// marker has its COMMIT answer failed with fault, after the server committed it.
func (p *Proxy) FailCommit(marker string, fault CommitFault) {
	p.mu.Lock()
	p.marker, p.fault = marker, fault
	p.mu.Unlock()
}

// Fired returns how many COMMIT answers the proxy failed.
func (p *Proxy) Fired() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

// matches reports whether a statement arms the fault for its transaction.
func (p *Proxy) matches(sql string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault != 0 && p.marker != "" && strings.Contains(sql, p.marker)
}

// take disarms the proxy and returns the fault to inject, if it is still armed.
func (p *Proxy) take() CommitFault {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fault
	if f != 0 {
		p.fault, p.marker = 0, ""
		p.fired++
	}
	return f
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pc := &proxyConn{p: p, client: c, server: s, stmts: map[string]string{}}
		go pc.clientToServer()
		go pc.serverToClient()
	}
}

// proxyConn is one proxied connection.
type proxyConn struct {
	p              *Proxy
	client, server net.Conn

	mu      sync.Mutex
	stmts   map[string]string // prepared statement name → SQL
	marked  bool              // the open transaction ran a marked statement
	commits int               // COMMITs of marked transactions sent, not yet answered
}

func (c *proxyConn) close() {
	c.client.Close()
	c.server.Close()
}

// clientToServer passes messages on, noting statements and COMMITs.
func (c *proxyConn) clientToServer() {
	defer c.close()
	r := bufio.NewReader(c.client)
	// The startup message has no type byte.
	if _, body, err := readMessage(r, false); err != nil || writeMessage(c.server, 0, body) != nil {
		return
	}
	for {
		typ, body, err := readMessage(r, true)
		if err != nil {
			return
		}
		c.note(typ, body)
		if writeMessage(c.server, typ, body) != nil {
			return
		}
	}
}

func (c *proxyConn) note(typ byte, body []byte) {
	var sql string
	c.mu.Lock()
	defer c.mu.Unlock()
	switch typ {
	case 'Q': // Query: the SQL text
		sql = cstring(body)
	case 'P': // Parse: statement name, SQL text, …
		name := cstring(body)
		rest := body[min(len(name)+1, len(body)):]
		c.stmts[name] = cstring(rest)
		return
	case 'B': // Bind: portal name, statement name, …
		portal := cstring(body)
		rest := body[min(len(portal)+1, len(body)):]
		sql = c.stmts[cstring(rest)]
	default:
		return
	}
	switch s := strings.ToLower(strings.TrimSpace(sql)); {
	case s == "commit":
		if c.marked {
			c.commits++
		}
		c.marked = false
	case s == "rollback":
		c.marked = false
	case c.p.matches(sql):
		c.marked = true
	}
}

// serverToClient passes messages on, failing the answer to a marked COMMIT.
func (c *proxyConn) serverToClient() {
	defer c.close()
	r := bufio.NewReader(c.server)
	for {
		typ, body, err := readMessage(r, true)
		if err != nil {
			return
		}
		if typ == 'C' && cstring(body) == "COMMIT" {
			c.mu.Lock()
			marked := c.commits > 0
			if marked {
				c.commits--
			}
			c.mu.Unlock()
			if marked {
				switch c.p.take() {
				case DropAfterCommit:
					return // closes both sides: the client never hears the answer
				case AmbiguousCommit:
					typ, body = 'E', ambiguousError()
				}
			}
		}
		if writeMessage(c.client, typ, body) != nil {
			return
		}
	}
}

// ambiguousError is an ErrorResponse with SQLSTATE 40003, as CockroachDB sends it.
func ambiguousError() []byte {
	var b bytes.Buffer
	for _, f := range []struct {
		k byte
		v string
	}{{'S', "ERROR"}, {'V', "ERROR"}, {'C', "40003"}, {'M', "result is ambiguous (injected by storetest.Proxy after the server committed)"}} {
		b.WriteByte(f.k)
		b.WriteString(f.v)
		b.WriteByte(0)
	}
	b.WriteByte(0)
	return b.Bytes()
}

func readMessage(r *bufio.Reader, typed bool) (byte, []byte, error) {
	var typ byte
	if typed {
		var err error
		if typ, err = r.ReadByte(); err != nil {
			return 0, nil, err
		}
	}
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0, nil, err
	}
	size := int(binary.BigEndian.Uint32(n[:]))
	if size < 4 || size > 1<<30 {
		return 0, nil, errors.New("storetest: proxy: bad message length")
	}
	body := make([]byte, size-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return typ, body, nil
}

// writeMessage writes a message (typ 0: untyped, the startup message).
func writeMessage(w io.Writer, typ byte, body []byte) error {
	buf := make([]byte, 0, len(body)+5)
	if typ != 0 {
		buf = append(buf, typ)
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)+4))
	buf = append(buf, body...)
	_, err := w.Write(buf)
	return err
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}
