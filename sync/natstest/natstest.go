// Package natstest runs an embedded nats-server with JetStream for tests: one per call, on a
// random loopback port, with its store in the test's temporary directory, shut down when the test
// ends. Run starts a bare server; RunSecure starts the shipped deploy/nats configuration (TLS with
// client certificates made for the test, one nkey per role, least-privilege permissions) and
// StartLeaf its regional leaf node. Only tests import it.
package natstest

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"vitrine/sync/natsembed"
)

// Server is a test nats-server that can be restarted on the same port and store.
type Server struct {
	*server.Server
	dir  string
	addr string
}

// Run starts a server for t.
func Run(t testing.TB) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir(), addr: "127.0.0.1:0"}
	s.start(t)
	t.Cleanup(func() { s.Server.Shutdown(); s.Server.WaitForShutdown() })
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	ns, err := natsembed.Start(natsembed.Options{Addr: s.addr, StoreDir: s.dir})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = ns
	// Keep the port the first start picked, so that clients reconnect after a restart.
	addr := ns.Addr().(*net.TCPAddr)
	s.addr = "127.0.0.1:" + strconv.Itoa(addr.Port)
}

// URL is the client URL of the server.
func (s *Server) URL() string { return "nats://" + s.addr }

// Restart shuts the server down and starts it again on the same port and store, as an operator
// restart would.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Server.Shutdown()
	s.Server.WaitForShutdown()
	s.start(t)
}

// Connect returns a client connection that reconnects forever, closed when the test ends.
func (s *Server) Connect(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
