// Package natsembed runs nats-server with JetStream inside the Vitrine process: `vitrine dev`
// embeds it, `vitrine nats` runs it standalone for multi-process setups (Debian's nats-server is
// too old for the design), and tests start one per test on a random port.
package natsembed

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Options configures an embedded server.
type Options struct {
	// Addr is the client listen address, "host:port"; port 0 or -1 picks a free port
	// (default 127.0.0.1:4222).
	Addr string
	// StoreDir is where JetStream keeps its files (required).
	StoreDir string
	// ServerName identifies the server in a cluster and in logs (default "vitrine").
	ServerName string
	// Log enables the server's own logging to stderr.
	Log bool
	// MaxStore bounds JetStream file storage in bytes (default: no bound but the disk).
	MaxStore int64
}

// Start starts a server and waits until it accepts connections.
func Start(o Options) (*server.Server, error) {
	if o.StoreDir == "" {
		return nil, fmt.Errorf("natsembed: a store directory is required")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:4222"
	}
	if o.ServerName == "" {
		o.ServerName = "vitrine"
	}
	host, portStr, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("natsembed: address %q: %w", o.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("natsembed: port %q: %w", portStr, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName:         o.ServerName,
		Host:               host,
		Port:               port,
		JetStream:          true,
		StoreDir:           o.StoreDir,
		JetStreamMaxStore:  o.MaxStore,
		NoLog:              !o.Log,
		NoSigs:             true,
		MaxPayload:         8 << 20,
		JetStreamMaxMemory: 256 << 20,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: %w", err)
	}
	if o.Log {
		s.ConfigureLogger()
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("natsembed: server on %s not ready after 10s", o.Addr)
	}
	return s, nil
}
