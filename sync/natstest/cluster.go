package natstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is a JetStream cluster of in-process nats-servers joined by routes, as deploy/compose
// and deploy/kubernetes run three: streams with Replicas up to its size can be created on it, and
// its nodes can be stopped and started again to show what a replicated stream survives.
type Cluster struct {
	// Nodes are the servers, in start order; a stopped node's Server is shut down (Running false).
	Nodes []*ClusterNode
}

// ClusterNode is one server of a Cluster, restartable on the same ports and store.
type ClusterNode struct {
	*server.Server
	name, dir   string
	port, cport int   // client and route ports (-1 until first started), kept across restarts
	routes      []int // route ports of the other nodes
	clusterName string
}

// RunCluster starts n servers (n ≥ 2) forming one JetStream cluster, waits until it has elected
// a meta leader that counts every node as a peer and every node is current, and shuts them down
// when the test ends.
func RunCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 2 {
		t.Fatalf("natstest: a cluster needs at least 2 nodes, got %d", n)
	}
	c := &Cluster{}
	t.Cleanup(func() {
		for _, node := range c.Nodes {
			if node.Server != nil {
				node.Server.Shutdown()
				node.Server.WaitForShutdown()
			}
		}
	})
	// Each node but the first binds ports of its own choosing (port -1) and routes to the nodes
	// started before it, so every pair is joined. Ports picked free beforehand and bound later (as
	// they all were) can be taken in between, by another node of the list or another test's
	// connection under a loaded suite, and that node never comes up. The first node needs a route
	// configured to start JetStream clustered: its own route port, picked just before it binds it
	// (a server ignores a route to itself). Once up, a node restarts on the ports it bound, routed
	// to every other node.
	cports := []int{freePort(t)}
	for i := range n {
		node := &ClusterNode{name: "n" + strconv.Itoa(i+1), dir: t.TempDir(), port: -1, cport: -1,
			clusterName: "vitrine-test", routes: slices.Clone(cports)}
		if i == 0 {
			node.cport, cports = cports[0], nil
		}
		c.Nodes = append(c.Nodes, node)
		node.start(t)
		node.port = node.Server.Addr().(*net.TCPAddr).Port
		node.cport = node.Server.ClusterAddr().Port
		cports = append(cports, node.cport)
	}
	for i, node := range c.Nodes {
		node.routes = slices.Delete(slices.Clone(cports), i, i+1)
	}
	c.WaitReady(t, n)
	return c
}

func (node *ClusterNode) start(t testing.TB) {
	t.Helper()
	var routes []*url.URL
	for _, p := range node.routes {
		routes = append(routes, &url.URL{Scheme: "nats", Host: "127.0.0.1:" + strconv.Itoa(p)})
	}
	opts := &server.Options{
		ServerName: node.name,
		Host:       "127.0.0.1",
		Port:       node.port,
		JetStream:  true,
		StoreDir:   node.dir,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: 8 << 20,
		Cluster: server.ClusterOpts{
			Name: node.clusterName,
			Host: "127.0.0.1",
			Port: node.cport,
		},
		Routes:             routes,
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  1 << 30,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("natstest: node %s: %v", node.name, err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatalf("natstest: node %s not ready after 10s", node.name)
	}
	node.Server = s
}

// Name is the node's server name (n1, n2, …), as StreamInfo.Cluster names leaders and replicas.
func (node *ClusterNode) Name() string { return node.name }

// URL is the node's client URL.
func (node *ClusterNode) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(node.port) }

// Stop shuts the node down, as a crashed or drained NATS pod would be.
func (node *ClusterNode) Stop() {
	node.Server.Shutdown()
	node.Server.WaitForShutdown()
}

// Restart starts a stopped node again on the same ports and store; it rejoins the cluster.
func (node *ClusterNode) Restart(t testing.TB) {
	t.Helper()
	node.start(t)
}

// URL is the client URL of every node, comma-separated, as a client of the whole cluster is
// given it.
func (c *Cluster) URL() string {
	var urls []string
	for _, node := range c.Nodes {
		urls = append(urls, node.URL())
	}
	return strings.Join(urls, ",")
}

// Node returns the node named name (a StreamInfo's Cluster.Leader), or nil.
func (c *Cluster) Node(name string) *ClusterNode {
	for _, node := range c.Nodes {
		if node.name == name {
			return node
		}
	}
	return nil
}

// Connect returns a client connection to every node of the cluster that reconnects forever (to
// whichever node is up), closed when the test ends.
func (c *Cluster) Connect(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(c.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// WaitReady waits (up to 30 s, failing t after) until the running nodes have a meta leader that
// counts peers nodes in the cluster and every running node's view of the meta group is current.
func (c *Cluster) WaitReady(t testing.TB, peers int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c.ready(peers) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("natstest: the cluster has no meta leader with %d peers after 30s", peers)
}

func (c *Cluster) ready(peers int) bool {
	var leader *server.Server
	for _, node := range c.Nodes {
		if node.Server != nil && node.Running() && node.JetStreamIsLeader() {
			leader = node.Server
		}
	}
	if leader == nil || len(leader.JetStreamClusterPeers()) < peers {
		return false
	}
	for _, node := range c.Nodes {
		if node.Server != nil && node.Running() && !node.JetStreamIsCurrent() {
			return false
		}
	}
	return true
}

// WaitReplicated waits (up to 10 s) until the stream has replicas copies, every follower current, and returns
// its info.
func WaitReplicated(t *testing.T, js jetstream.JetStream, name string, replicas int) *jetstream.StreamInfo {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			last = err.Error()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		info := s.CachedInfo()
		ok := info.Config.Replicas == replicas && info.Cluster != nil && info.Cluster.Leader != "" &&
			len(info.Cluster.Replicas) == replicas-1
		for _, p := range info.Cluster.Replicas {
			ok = ok && p.Current && !p.Offline
		}
		if ok {
			return info
		}
		last = fmt.Sprintf("config replicas %d, cluster %+v", info.Config.Replicas, info.Cluster)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("stream %s not replicated %d times after 10s: %s", name, replicas, last)
	return nil
}
