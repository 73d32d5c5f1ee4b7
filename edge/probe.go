package edge

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
)

// Replica lag probes (the origin's site health test replica-lag, origin/sitehealth): the origin
// publishes a ProbeRequest on the probe subject, a core NATS subject outside the state stream's
// subjects, with a reply subject of its own (ProbeReplies); every edge that serves the store's shard answers once with a
// ProbeReply saying what it has applied, and the origin gathers the answers for a bounded time.
// NATS permissions (deploy/nats) let an edge subscribe to the probe subject and publish only the
// response to a probe it received (allow_responses), never a probe of its own.

// ProbeSubject is the probe subject under a subject prefix (feed.Config.Prefix): beside, not
// under, the state stream's "<prefix>.>", so that a probe is never stored in the stream.
func ProbeSubject(prefix string) string { return prefix + "_probe.lag" }

// ProbeReplies is the subject prefix under which an origin gathers the replies to one probe
// ("<prefix>_probe.reply.<id>"): not an _INBOX subject, because the shipped permissions let a
// regional leaf node publish towards the origins these replies and nothing else of theirs.
func ProbeReplies(prefix string) string { return prefix + "_probe.reply." }

// MaxProbeBytes bounds a probe request an edge decodes, and a reply the origin decodes; larger
// messages are ignored.
const MaxProbeBytes = 4 << 10

// ProbeRequest is a lag probe about one store. The wire form is JSON; origin/sitehealth sends
// the same members.
type ProbeRequest struct {
	// Tenant is the store's slug.
	Tenant string `json:"tenant"`
	// Shard is the store's shard: an edge serving other shards does not answer.
	Shard int `json:"shard"`
}

// ProbeReply is an edge's answer to a lag probe. The wire form is JSON; origin/sitehealth reads
// the same members.
type ProbeReply struct {
	// Edge names the edge (ProbeConfig.Name); Region is its region, when it has one.
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

// ProbeConfig configures an edge's answers to lag probes.
type ProbeConfig struct {
	// Subject is the probe subject (ProbeSubject of the subject prefix).
	Subject string
	// Name identifies the edge in its answers (the commands default it to the host name and
	// listen address); Region is its region, if any.
	Name, Region string
	// Shards are the shards the edge serves (empty: every shard): a probe about a store of
	// another shard is not answered.
	Shards []int
}

// DecodeProbeRequest decodes a probe request: a JSON object of at most MaxProbeBytes with a
// non-empty tenant and a shard that is not negative. ok is false for anything else.
func DecodeProbeRequest(b []byte) (ProbeRequest, bool) {
	var pr ProbeRequest
	if len(b) == 0 || len(b) > MaxProbeBytes || json.Unmarshal(b, &pr) != nil || pr.Tenant == "" || pr.Shard < 0 {
		return ProbeRequest{}, false
	}
	return pr, true
}

// Probe returns the edge's answer to pr at now, and whether it answers at all (a store of a
// shard the edge does not serve: no answer).
func (s *Server) Probe(pr ProbeRequest, cfg ProbeConfig, now time.Time) (ProbeReply, bool) {
	if len(cfg.Shards) > 0 && !slices.Contains(cfg.Shards, pr.Shard) {
		return ProbeReply{}, false
	}
	out := ProbeReply{Edge: cfg.Name, Region: cfg.Region, Tenant: pr.Tenant}
	shard := pr.Shard
	if t := s.rep.TenantBySlug(pr.Tenant); t != nil {
		if info := t.Info(); info != nil {
			shard = info.Shard
		}
		out.Serving = s.rep.Ready() && t.Ready()
		out.Version, out.Seen = t.Version(), t.Seen()
	}
	out.StalenessSeconds = s.rep.Staleness(shard, now).Round(time.Millisecond).Seconds()
	return out, true
}

// AnswerProbes answers the lag probes published on cfg.Subject through nc until ctx ends. A
// probe without a reply subject, or one that does not decode, is ignored. It returns the
// subscription's error, if any, at once.
func (s *Server) AnswerProbes(ctx context.Context, nc *nats.Conn, cfg ProbeConfig) error {
	sub, err := nc.Subscribe(cfg.Subject, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		pr, ok := DecodeProbeRequest(m.Data)
		if !ok {
			return
		}
		reply, ok := s.Probe(pr, cfg, time.Now())
		if !ok {
			return
		}
		b, err := json.Marshal(reply)
		if err != nil {
			return
		}
		if err := m.Respond(b); err != nil {
			s.log.Debug("lag probe answer not sent", "err", err)
		}
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	sub.Unsubscribe()
	return nil
}
