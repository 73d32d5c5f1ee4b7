package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/sync/natstest"
)

// --stream-replicas ($VITRINE_STREAM_REPLICAS) reaches feed.Config, the flag wins over the
// variable, and a count outside 1–5 is refused with a message naming the range, from the flag
// as from the variable (which, unlike other variables, is never silently ignored).
func TestStreamReplicasFlag(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      int
		err       string // a part of the error; "" for none
	}{
		{name: "default", want: 1},
		{name: "flag", args: []string{"--stream-replicas", "3"}, want: 3},
		{name: "variable", env: "3", want: 3},
		{name: "flag over variable", env: "5", args: []string{"--stream-replicas=1"}, want: 1},
		{name: "flag over a bad variable", env: "6", args: []string{"--stream-replicas", "3"}, want: 3},
		{name: "flag 0", args: []string{"--stream-replicas", "0"}, err: `from 1 to 5 (3 on a three-node NATS cluster), got "0"`},
		{name: "flag 6", args: []string{"--stream-replicas", "6"}, err: `from 1 to 5 (3 on a three-node NATS cluster), got "6"`},
		{name: "variable 0", env: "0", err: `$VITRINE_STREAM_REPLICAS: want a replica count from 1 to 5`},
		{name: "variable 6", env: "6", err: `$VITRINE_STREAM_REPLICAS: want a replica count from 1 to 5`},
		{name: "variable not a number", env: "three", err: `$VITRINE_STREAM_REPLICAS: want a replica count from 1 to 5 (3 on a three-node NATS cluster), got "three"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("VITRINE_STREAM_REPLICAS", tc.env)
			f := newFlags("test")
			f.FlagSet.SetOutput(io.Discard)
			c := f.common()
			err := f.Parse(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.feed().Replicas; got != tc.want {
				t.Fatalf("feed.Config.Replicas %d, want %d", got, tc.want)
			}
		})
	}
}

// The origin's media bucket is created with the flag's replica count (openMediaStore), on a
// three-node cluster.
func TestStreamReplicasMediaBucket(t *testing.T) {
	ctx := context.Background()
	cl := natstest.RunCluster(t, 3)
	nc := cl.Connect(t)
	t.Setenv("VITRINE_STREAM_REPLICAS", "")
	f := newFlags("test")
	c := f.common()
	if err := f.Parse([]string{"--stream-replicas", "3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := openMediaStore(ctx, "nats", "media-r3", nc, c.feed(), true); err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	s, err := js.Stream(ctx, "OBJ_media-r3")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Replicas; got != 3 {
		t.Fatalf("media bucket has %d replicas, want 3", got)
	}
}
