package sitehealth

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"github.com/valyala/fasthttp"

	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/schema"
)

// Bounds of what the origin accepts from edges.
const (
	// maxReplies bounds the replies gathered for one probe.
	maxReplies = 1024
	// maxNameBytes bounds an edge's name and region; longer ones are cut.
	maxNameBytes = 200
)

// DecodeProbeReply decodes an edge's reply about tenant: a JSON object of at most 4 KiB naming
// the edge and the same tenant, with versions and staleness that are not negative. ok is false
// for anything else, which the probe ignores. Names are cut to 200 bytes.
func DecodeProbeReply(b []byte, tenant string) (schema.LagProbeReply, bool) {
	var r schema.LagProbeReply
	if len(b) == 0 || len(b) > schema.MaxLagProbeBytes || json.Unmarshal(b, &r) != nil {
		return schema.LagProbeReply{}, false
	}
	if r.Edge == "" || r.Tenant != tenant || r.Version < 0 || r.Seen < 0 || !(r.StalenessSeconds >= 0) || r.StalenessSeconds > 1e9 {
		return schema.LagProbeReply{}, false
	}
	r.Edge, r.Region = cut(r.Edge), cut(r.Region)
	return r, true
}

// cut shortens s to maxNameBytes, dropping a rune the cut split (and any invalid UTF-8).
func cut(s string) string {
	if len(s) > maxNameBytes {
		s = s[:maxNameBytes]
	}
	return strings.ToValidUTF8(s, "")
}

// LagDetails are the facts of the replica-lag test.
type LagDetails struct {
	// HeadVersion is the store's log version in the database, read before the probe.
	HeadVersion int64 `json:"head_version"`
	// Origin is this origin's replica.
	Origin ReplicaLag `json:"origin"`
	// ProbeWaitMS is how long edges' replies were gathered; Edges are the replies, by name.
	ProbeWaitMS float64      `json:"probe_wait_ms"`
	Edges       []ReplicaLag `json:"edges"`
}

// ReplicaLag is one replica's state against the database.
type ReplicaLag struct {
	// Name and Region name an edge ("origin" for the origin's replica).
	Name   string `json:"name"`
	Region string `json:"region,omitempty"`
	// Serving: the replica answers the store's reads.
	Serving bool `json:"serving"`
	// Version is the store's version the replica applied; LagVersions how far it is behind
	// HeadVersion (0 when it is at it, or past it after a later write).
	Version     int64 `json:"version"`
	LagVersions int64 `json:"lag_versions"`
	// StalenessSeconds is the time since the replica last heard from the state stream about the
	// store's shard.
	StalenessSeconds float64 `json:"staleness_seconds"`
	// Status is this replica's verdict.
	Status Status `json:"status"`
}

// replicaLag is the replica-lag test.
func (s *Service) replicaLag(_ *fasthttp.RequestCtx, rq *handler.Request) Result {
	return s.checkLag(rq.Info, rq.Tenant)
}

// judge sets a replica's status from its lag.
func (s *Service) judge(r *ReplicaLag) {
	l, stale := s.cfg.Lag, time.Duration(r.StalenessSeconds*float64(time.Second))
	switch {
	case !r.Serving:
		r.Status = Recommended
	case r.LagVersions >= l.CriticalVersions || stale >= l.CriticalStaleness:
		r.Status = Critical
	case r.LagVersions >= l.RecommendedVersions || stale >= l.RecommendedStaleness:
		r.Status = Recommended
	default:
		r.Status = Good
	}
}

func (s *Service) checkLag(info *schema.Tenant, t *replica.Tenant) Result {
	res := Result{Test: "replica_lag", Badge: performance, Status: Good, Label: "Every replica of your store is up to date"}
	intro := p("Edges answer your store's public reads from their replicas, which follow the state stream. A replica that is behind serves older content, and waits before it answers a request that names a newer version.")
	d := LagDetails{Edges: []ReplicaLag{}}
	res.Details = &d
	ctx, cancel := bounded(s.cfg.DatabaseTimeout)
	head, err := s.db.LogVersion(ctx, info)
	cancel()
	if err != nil {
		s.log.Warn("site health: the store's log version is unreadable", "err", err)
		res.Status, res.Label = Critical, "Your store's version could not be read"
		res.Description = intro + p("The database did not give the store's log version, so no replica can be compared with it; see the database test.")
		return res
	}
	d.HeadVersion = head
	lagOf := func(v int64) int64 { return max(0, head-v) }
	d.Origin = ReplicaLag{Name: "origin", Serving: s.rep.Ready() && t.Ready(), Version: t.Version(), LagVersions: lagOf(t.Version()),
		StalenessSeconds: s.rep.Staleness(info.Shard, time.Now()).Round(time.Millisecond).Seconds()}
	s.judge(&d.Origin)
	res.Status = d.Origin.Status
	items := []string{describe(d.Origin, head)}
	replies, asked, perr := s.probe(info)
	d.ProbeWaitMS = ms(s.cfg.ProbeWait)
	for _, r := range replies {
		e := ReplicaLag{Name: r.Edge, Region: r.Region, Serving: r.Serving, Version: r.Version, LagVersions: lagOf(r.Version), StalenessSeconds: r.StalenessSeconds}
		s.judge(&e)
		res.Status = worse(res.Status, e.Status)
		d.Edges = append(d.Edges, e)
		items = append(items, describe(e, head))
	}
	switch {
	case perr != nil:
		s.log.Warn("site health: the lag probe was not sent", "err", perr)
		res.Status = worse(res.Status, Recommended)
		items = append(items, esc("The edges could not be asked: "+perr.Error()+"."))
	case !asked:
		res.Status = worse(res.Status, Recommended)
		items = append(items, "The edges could not be asked: this origin has no NATS connection.")
	case len(replies) == 0:
		res.Status = worse(res.Status, Recommended)
		items = append(items, "No edge answered the lag probe within "+esc(seconds(s.cfg.ProbeWait))+
			": no edge serving this store's shard is running, or none can reach NATS, or they predate lag probes.")
	}
	switch {
	case res.Status == Critical && d.Origin.Status == Critical:
		res.Label = "The origin's replica of your store is far behind"
	case res.Status == Critical:
		res.Label = "An edge's replica of your store is far behind"
	case asked && perr == nil && len(replies) == 0 && d.Origin.Status == Good:
		res.Label = "No edge answered the lag probe"
	case res.Status == Recommended:
		res.Label = "Some replicas of your store are behind"
	}
	res.Description = intro + p("The database is at version %d of your store.", head) + list(items)
	return res
}

// describe is one replica's line of the description.
func describe(r ReplicaLag, head int64) string {
	name := esc(r.Name)
	if r.Region != "" {
		name += " (" + esc(r.Region) + ")"
	}
	if !r.Serving {
		return fmt.Sprintf("%s: does not serve this store yet (version %d of %d)", name, r.Version, head)
	}
	return fmt.Sprintf("%s: version %d, %s behind, last heard from the stream %s ago", name, r.Version,
		plural(r.LagVersions, "version"), seconds(time.Duration(r.StalenessSeconds*float64(time.Second))))
}

// probe publishes a lag probe about info's store and gathers the edges' replies for ProbeWait,
// sorted by name. asked is false without a NATS connection.
func (s *Service) probe(info *schema.Tenant) (replies []schema.LagProbeReply, asked bool, err error) {
	nc := s.cfg.NATS
	if nc == nil {
		return nil, false, nil
	}
	body, err := json.Marshal(schema.LagProbe{Tenant: info.Slug, Shard: info.Shard})
	if err != nil {
		return nil, true, err
	}
	inbox := s.cfg.Feed.Prefix + "_probe.reply." + nuid.Next() // edge.ProbeReplies
	msgs := make(chan *nats.Msg, maxReplies)
	sub, err := nc.ChanSubscribe(inbox, msgs)
	if err != nil {
		return nil, true, err
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(maxReplies, maxReplies*schema.MaxLagProbeBytes)
	if err := nc.PublishRequest(s.cfg.ProbeSubject, inbox, body); err != nil {
		return nil, true, err
	}
	deadline := time.NewTimer(s.cfg.ProbeWait)
	defer deadline.Stop()
	for len(replies) < maxReplies {
		select {
		case m := <-msgs:
			if r, ok := DecodeProbeReply(m.Data, info.Slug); ok {
				replies = append(replies, r)
			}
		case <-deadline.C:
			sort.SliceStable(replies, func(i, j int) bool { return replies[i].Edge < replies[j].Edge })
			return replies, true, nil
		}
	}
	sort.SliceStable(replies, func(i, j int) bool { return replies[i].Edge < replies[j].Edge })
	return replies, true, nil
}
