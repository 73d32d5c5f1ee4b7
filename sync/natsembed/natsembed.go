// Package natsembed runs nats-server with JetStream inside the Vitrine process: `vitrine dev`
// embeds it, `vitrine nats` runs it standalone for multi-process setups (Debian's nats-server is
// too old for the design), and tests start one per test on a random port.
//
// A server started from a nats-server configuration file (Options.ConfigFile, `vitrine nats
// --config`) takes everything from the file (accounts, permissions, TLS, leaf nodes, JetStream):
// the files shipped in deploy/nats run unchanged on the project's own server. An address given
// beside the file overrides its listen address; a store directory fills in a missing store_dir.
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
	// ConfigFile, when set, is a nats-server configuration file the server runs with; the fields
	// below then only override it where set (ServerName and MaxStore are ignored).
	ConfigFile string
	// Addr is the client listen address, "host:port"; port 0 or -1 picks a free port
	// (default 127.0.0.1:4222, or the configuration file's listen address).
	Addr string
	// StoreDir is where JetStream keeps its files (required without a configuration file; with
	// one, it applies when the file enables JetStream without a store_dir).
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
	if o.ConfigFile != "" {
		return startFromFile(o)
	}
	if o.StoreDir == "" {
		return nil, fmt.Errorf("natsembed: a store directory is required")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:4222"
	}
	if o.ServerName == "" {
		o.ServerName = "vitrine"
	}
	host, port, err := splitAddr(o.Addr)
	if err != nil {
		return nil, err
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
	return run(opts, o.Log)
}

// startFromFile starts a server configured by o.ConfigFile.
func startFromFile(o Options) (*server.Server, error) {
	opts, err := server.ProcessConfigFile(o.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("natsembed: %w", err)
	}
	if o.Addr != "" {
		if opts.Host, opts.Port, err = splitAddr(o.Addr); err != nil {
			return nil, err
		}
	}
	if opts.JetStream && opts.StoreDir == "" {
		if o.StoreDir == "" {
			return nil, fmt.Errorf("natsembed: %s enables JetStream without a store_dir: name one", o.ConfigFile)
		}
		opts.StoreDir = o.StoreDir
	}
	opts.NoSigs = true
	opts.NoLog = !o.Log
	return run(opts, o.Log)
}

func splitAddr(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("natsembed: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("natsembed: port %q: %w", portStr, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

func run(opts *server.Options, log bool) (*server.Server, error) {
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: %w", err)
	}
	if log {
		s.ConfigureLogger()
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("natsembed: server on %s:%d not ready after 10s", opts.Host, opts.Port)
	}
	return s, nil
}
