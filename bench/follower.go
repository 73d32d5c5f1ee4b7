package bench

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// FollowStream is the bare JetStream follower the freshness scenario measures beside the
// replication's own followers: an ordered consumer of every message of the stream named stream
// on the NATS server at url, that reads each message and keeps nothing. It runs until ctx ends.
// `vitrine bench-follower` runs it as a child process.
func FollowStream(ctx context.Context, url, stream string) error {
	nc, err := nats.Connect(url, nats.Name("bench-follower"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("follower: %w", err)
	}
	// The follower's cost is each message's delivery: read off the connection, parsed and handed
	// to the handler, which keeps nothing.
	cc, err := cons.Consume(func(jetstream.Msg) {})
	if err != nil {
		return fmt.Errorf("follower: %w", err)
	}
	defer cc.Stop()
	<-ctx.Done()
	return nil
}
