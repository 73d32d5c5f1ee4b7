package sitehealth

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
)

// NATSDetails are the facts of the nats test.
type NATSDetails struct {
	// Status is the connection's state (CONNECTED, RECONNECTING, …; "none" without one).
	Status string `json:"status"`
	// ServerVersion is the connected server's version; RoundTripMS one flush's round trip.
	ServerVersion string  `json:"server_version,omitempty"`
	RoundTripMS   float64 `json:"round_trip_ms"`
	// JetStream: the state stream's information was read.
	JetStream bool         `json:"jetstream"`
	Stream    *StreamFacts `json:"stream,omitempty"`
	// Consumer is the origin replica's consumer (its follower), when known.
	Consumer *ConsumerFacts `json:"consumer,omitempty"`
}

// StreamFacts are the state stream's.
type StreamFacts struct {
	Name         string `json:"name"`
	LastSequence uint64 `json:"last_sequence"`
	Messages     uint64 `json:"messages"`
}

// ConsumerFacts are the origin replica's follower's: messages delivered to the replica, and
// the messages the server still had for it at its last delivery (its lag).
type ConsumerFacts struct {
	Delivered uint64 `json:"delivered"`
	Pending   uint64 `json:"pending"`
}

// natsTest is the nats test: the origin's connection, a round trip, JetStream and the state
// stream, the origin replica's consumer.
func (s *Service) natsTest(_ *fasthttp.RequestCtx, _ *handler.Request) Result {
	return s.checkNATS()
}

func (s *Service) checkNATS() Result {
	res := Result{Test: "nats", Badge: performance, Status: Good, Label: "The origin is connected to NATS and the state stream"}
	intro := p("NATS carries every change from the database to the replicas (the state stream), the store's events to webhooks, and the edges' lag probes.")
	d := NATSDetails{Status: "none"}
	res.Details = &d
	nc := s.cfg.NATS
	if nc == nil {
		res.Status, res.Label = Critical, "The origin has no NATS connection"
		res.Description = intro + p("This origin was started without one: its replica does not follow the state stream.")
		return res
	}
	d.Status = nc.Status().String()
	if nc.Status() != nats.CONNECTED {
		res.Status, res.Label = Critical, "The origin is not connected to NATS"
		res.Description = intro + p("The connection is %s: the origin's replica stops at what it has, and writes wait for it to catch up.", esc(d.Status))
		res.Actions = p("Check the NATS servers and the origin's credentials; the origin's log says why it is disconnected.")
		return res
	}
	d.ServerVersion = nc.ConnectedServerVersion()
	ctx, cancel := bounded(s.cfg.DatabaseTimeout)
	defer cancel()
	start := time.Now()
	err := nc.FlushWithContext(ctx)
	d.RoundTripMS = ms(time.Since(start))
	if err != nil {
		res.Status, res.Label = Critical, "NATS does not answer the origin"
		res.Description = intro + p("A round trip to the server did not complete within %s.", seconds(s.cfg.DatabaseTimeout))
		return res
	}
	notes := []string{esc("nats-server " + d.ServerVersion), "round trip " + esc(fmtMS(d.RoundTripMS))}
	js, err := s.cfg.Feed.JetStream(nc)
	if err == nil {
		stream, serr := js.Stream(ctx, s.cfg.Feed.Stream)
		err = serr
		if serr == nil {
			info := stream.CachedInfo()
			d.JetStream = true
			d.Stream = &StreamFacts{Name: info.Config.Name, LastSequence: info.State.LastSeq, Messages: info.State.Msgs}
			notes = append(notes, esc("state stream "+d.Stream.Name+": last sequence "+itoa(int64(d.Stream.LastSequence))+", "+plural(int64(d.Stream.Messages), "message")))
		}
	}
	if err != nil {
		s.log.Warn("site health: the state stream is unreachable", "err", err)
		res.Status, res.Label = Critical, "The state stream is unreachable"
		res.Description = intro + list(notes) + p("JetStream did not answer for the state stream %s: %s.", esc(s.cfg.Feed.Stream), esc(err.Error()))
		return res
	}
	if f := s.cfg.Follower; f != nil {
		fs := f.Stats()
		d.Consumer = &ConsumerFacts{Delivered: fs.Delivered, Pending: fs.Pending}
		notes = append(notes, esc("the origin's replica: "+plural(int64(fs.Delivered), "message")+" delivered, "+itoa(int64(fs.Pending))+" pending"))
	}
	switch {
	case d.Consumer != nil && d.Consumer.Pending >= s.cfg.ConsumerLag:
		res.Status, res.Label = Recommended, "The origin's replica is behind the state stream"
	case time.Duration(d.RoundTripMS*float64(time.Millisecond)) > s.cfg.SlowNATS:
		res.Status, res.Label = Recommended, "NATS is slow to answer the origin"
		notes = append(notes, esc("a round trip should take less than "+s.cfg.SlowNATS.String()))
	}
	res.Description = intro + list(notes)
	return res
}
