package schema

// Replica lag probes, the wire form shared by edges (edge/probe.go) and origins
// (the origin's site health test replica-lag, origin/sitehealth): the origin
// publishes a LagProbe on the probe subject, a core NATS subject outside the state stream's
// subjects, with a reply subject of its own (LagProbeReplies); every edge that serves the store's shard answers once with a
// LagProbeReply saying what it has applied, and the origin gathers the answers for a bounded time.
// NATS permissions (deploy/nats) let an edge subscribe to the probe subject and publish only the
// response to a probe it received (allow_responses), never a probe of its own.

// LagProbeSubject is the probe subject under a subject prefix (feed.Config.Prefix): beside, not
// under, the state stream's "<prefix>.>", so that a probe is never stored in the stream.
func LagProbeSubject(prefix string) string { return prefix + "_probe.lag" }

// LagProbeReplies is the subject prefix under which an origin gathers the replies to one probe
// ("<prefix>_probe.reply.<id>"): not an _INBOX subject, because the shipped permissions let a
// regional leaf node publish towards the origins these replies and nothing else of theirs.
func LagProbeReplies(prefix string) string { return prefix + "_probe.reply." }

// MaxLagProbeBytes bounds a probe request an edge decodes, and a reply the origin decodes; larger
// messages are ignored.
const MaxLagProbeBytes = 4 << 10

// LagProbe is a lag probe about one store. The wire form is JSON.
type LagProbe struct {
	// Tenant is the store's slug.
	Tenant string `json:"tenant"`
	// Shard is the store's shard: an edge serving other shards does not answer.
	Shard int `json:"shard"`
}

// LagProbeReply is an edge's answer to a lag probe. The wire form is JSON.
type LagProbeReply struct {
	// Edge names the edge (edge.ProbeConfig.Name); Region is its region, when it has one.
	Edge   string `json:"edge"`
	Region string `json:"region,omitempty"`
	// Tenant is the store the probe asked about.
	Tenant string `json:"tenant"`
	// Serving: the edge answers the store's reads (its replica is bootstrapped and the store has
	// had its first checkpoint). An edge that does not know the store answers false.
	Serving bool `json:"serving"`
	// Version is the store's log version the edge has applied (verified against the log
	// digest); Seen the highest version it has seen in the stream.
	Version int64 `json:"version"`
	Seen    int64 `json:"seen"`
	// StalenessSeconds is how long the edge has not heard from the state stream about the
	// store's shard (replica.Replica.Staleness): the time since its last message or its last
	// "nothing pending" confirmation.
	StalenessSeconds float64 `json:"staleness_seconds"`
}
