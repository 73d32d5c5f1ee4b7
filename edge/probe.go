package edge

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"vitrine/schema"
)

// Replica lag probes (the origin's site health test replica-lag, origin/sitehealth; the wire
// form is schema's: probe.go): every edge that serves the probed store's shard answers once with
// what it has applied. NATS permissions (deploy/nats) let an edge subscribe to the probe subject
// and publish only the response to a probe it received (allow_responses), never a probe of its
// own.

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

// DecodeProbeRequest decodes a probe request: a JSON object of at most schema.MaxLagProbeBytes with a
// non-empty tenant and a shard that is not negative. ok is false for anything else.
func DecodeProbeRequest(b []byte) (schema.LagProbe, bool) {
	var pr schema.LagProbe
	if len(b) == 0 || len(b) > schema.MaxLagProbeBytes || json.Unmarshal(b, &pr) != nil || pr.Tenant == "" || pr.Shard < 0 {
		return schema.LagProbe{}, false
	}
	return pr, true
}

// Probe returns the edge's answer to pr at now, and whether it answers at all (a store of a
// shard the edge does not serve: no answer).
func (s *Server) Probe(pr schema.LagProbe, cfg ProbeConfig, now time.Time) (schema.LagProbeReply, bool) {
	if len(cfg.Shards) > 0 && !slices.Contains(cfg.Shards, pr.Shard) {
		return schema.LagProbeReply{}, false
	}
	out := schema.LagProbeReply{Edge: cfg.Name, Region: cfg.Region, Tenant: pr.Tenant}
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
