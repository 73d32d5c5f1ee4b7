package feed_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// stateStream returns a JetStream client of a fresh embedded server and the state stream
// (epoch "epoch-1", default configuration) created on it.
func stateStream(t *testing.T) (jetstream.JetStream, jetstream.Stream, feed.Config) {
	t.Helper()
	ns := natstest.Run(t)
	js, _ := jetstream.New(ns.Connect(t))
	cfg := feed.Config{}.WithDefaults()
	st, err := feed.EnsureStream(context.Background(), js, cfg, "epoch-1")
	if err != nil {
		t.Fatal(err)
	}
	return js, st, cfg
}

// TestPublish: every message of a publish is fenced on the head subject, the head is stored only
// after everything before it, a failed publish leaves its stored messages without a head, and the
// retry under the same message ids stores each of them once.
func TestPublish(t *testing.T) {
	ctx := context.Background()
	js, st, cfg := stateStream(t)
	headSubj := cfg.HeadSubject(0, "shop")
	withID := func(m feed.Message, v int64) feed.Message {
		m.MsgID = "epoch-1:shop:" + strconv.FormatInt(v, 10)
		if m.Subject == headSubj {
			m.MsgID = "epoch-1:shop:head:" + strconv.FormatInt(v, 10)
		}
		return m
	}
	changes := func(from, to int64) []feed.Message {
		var msgs []feed.Message
		for v := from; v <= to; v++ {
			msgs = append(msgs, withID(change("shop", schema.Pub, strconv.FormatInt(v, 10), v), v))
		}
		return append(msgs, withID(head("shop", to), to))
	}
	lastSeq := func() uint64 {
		t.Helper()
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	headSeq := func() uint64 {
		t.Helper()
		m, err := st.GetLastMsgForSubject(ctx, headSubj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return m.Sequence
	}

	// A head, and what it covers before it.
	seq, err := feed.Publish(ctx, js, "epoch-1", changes(1, 3), headSubj, 0)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 4 || headSeq() != 4 {
		t.Fatalf("first publish: head at %d (stream says %d), want 4", seq, headSeq())
	}
	for v := uint64(1); v <= 3; v++ {
		m, err := st.GetMsg(ctx, v)
		if err != nil || !strings.HasSuffix(m.Subject, ".pub.product."+strconv.FormatUint(v, 10)) || m.Header.Get(feed.HeaderEpoch) != "epoch-1" {
			t.Fatalf("sequence %d: %v %v", v, m, err)
		}
	}

	for _, tc := range []struct {
		name     string
		msgs     []feed.Message
		fence    uint64
		fenced   bool
		refused  bool // refused before anything is sent
		stored   int  // messages the stream gained
		wantHead bool // the publish moved the head
	}{
		{name: "a stale fence refuses every message", msgs: changes(4, 6), fence: 0, fenced: true},
		{name: "only the last message may be on the fence subject", fence: 4, refused: true,
			msgs: append([]feed.Message{withID(head("shop", 4), 4)}, changes(4, 5)...)},
		{name: "no messages", fence: 4, refused: true},
		{name: "a failed message withholds the head (messages around it are stored)", fence: 4, stored: 2, msgs: []feed.Message{
			withID(change("shop", schema.Pub, "4", 4), 4),
			{Subject: "elsewhere.not.in.the.stream", Body: []byte("x")},
			withID(change("shop", schema.Pub, "5", 5), 5),
			withID(head("shop", 5), 5),
		}},
		{name: "the retry stores what was missing, each message once", msgs: changes(4, 6), fence: 4, stored: 2, wantHead: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeHead := lastSeq(), headSeq()
			_, err := feed.Publish(ctx, js, "epoch-1", tc.msgs, headSubj, tc.fence)
			switch {
			case tc.fenced && !errors.Is(err, feed.ErrFenced):
				t.Fatalf("err = %v, want fenced", err)
			case !tc.fenced && errors.Is(err, feed.ErrFenced):
				t.Fatalf("fenced: %v", err)
			case (tc.refused || tc.stored < len(tc.msgs)) && !tc.wantHead && err == nil:
				t.Fatal("no error")
			case tc.wantHead && err != nil:
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // anything still in flight would land now
			if got := lastSeq() - before; got != uint64(tc.stored) {
				t.Fatalf("the stream gained %d messages, want %d", got, tc.stored)
			}
			if moved := headSeq() != beforeHead; moved != tc.wantHead {
				t.Fatalf("head moved: %v, want %v", moved, tc.wantHead)
			}
		})
	}
}

// TestRetryAfterPartialPublishes: publishes cut before their head left two states of one subject
// above the head; the retry resends everything above the head in order, and the subject ends at
// its last state. The relay sends changes without message ids so that this holds whatever the
// duplicate window remembers (Message.MsgID): with per-version ids (the relay until 2026-11-27)
// TestChaosConvergence, under load, found a retry after a nats-server restart that stored a
// product's live state again while the window dropped the resent deletion after it, under a head
// whose digest counted the deletion, which no replica could then claim.
func TestRetryAfterPartialPublishes(t *testing.T) {
	ctx := context.Background()
	js, st, cfg := stateStream(t)
	headSubj := cfg.HeadSubject(0, "shop")
	live := change("shop", schema.Pub, "7", 1)
	gone := change("shop", schema.Pub, "7", 2)
	tomb := schema.Change{Schema: schema.ChangeSchemaVersion, Log: "shop", Kind: schema.KindProduct, ID: "7", Vis: schema.Pub,
		Version: 2, TxnFirst: 2, TxnLast: 2, Deleted: true}
	gone.Body = tomb.Encode()
	refused := feed.Message{Subject: "elsewhere.not.in.the.stream", Body: []byte("x")}
	for _, msgs := range [][]feed.Message{{live, refused, head("shop", 1)}, {live, gone, refused, head("shop", 2)}} {
		if _, err := feed.Publish(ctx, js, "epoch-1", msgs, headSubj, 0); err == nil {
			t.Fatal("the cut publish succeeded")
		}
	}
	if _, err := feed.Publish(ctx, js, "epoch-1", []feed.Message{live, gone, head("shop", 2)}, headSubj, 0); err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, cfg.Subject(0, "shop", "pub.product.7"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := schema.DecodeChange(m.Data); err != nil || c.Version != 2 || !c.Deleted {
		t.Fatalf("the subject holds %+v (%v) after the retry, want the deletion at version 2", c, err)
	}
}

// atomicBatch publishes msgs as one JetStream atomic batch, fenced as feed.Publish fences: what
// the relay did before feed.Publish, kept here as BenchmarkPublish's baseline.
func atomicBatch(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, msgs []feed.Message, fenceSubject string, fenceSeq uint64) (uint64, error) {
	id := nuid.Next()
	for i, m := range msgs {
		nm := nats.NewMsg(m.Subject)
		nm.Data = m.Body
		nm.Header.Set("Nats-Batch-Id", id)
		nm.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		nm.Header.Set(jetstream.MsgIDHeader, m.MsgID)
		if i == 0 {
			nm.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(fenceSeq, 10))
			nm.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, fenceSubject)
		}
		if i < len(msgs)-1 {
			if err := nc.PublishMsg(nm); err != nil {
				return 0, err
			}
			continue
		}
		nm.Header.Set("Nats-Batch-Commit", "1")
		ack, err := js.PublishMsg(ctx, nm)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	return 0, errors.New("empty batch")
}

// BenchmarkPublish compares feed.Publish with the atomic batch it replaced, for a transaction of
// one change and of eight (each with its head) on a one-replica file stream, in one process with
// the server: cpu-ns/op is the process's CPU (server and client) per transaction.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1, 8} {
		for _, how := range []string{"atomic-batch", "fenced"} {
			b.Run(fmt.Sprintf("%s/changes=%d", how, n), func(b *testing.B) {
				ctx := context.Background()
				ns := natstest.Run(b)
				nc := ns.Connect(b)
				js, _ := jetstream.New(nc)
				c := feed.Config{}.WithDefaults()
				if _, err := feed.EnsureStream(ctx, js, c, "e1"); err != nil {
					b.Fatal(err)
				}
				head := c.HeadSubject(0, "t1")
				body := make([]byte, 600)
				var seq uint64
				cpu0 := processCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					msgs := make([]feed.Message, 0, n+1)
					for k := 0; k < n; k++ {
						v := strconv.Itoa(i*n + k)
						msgs = append(msgs, feed.Message{Subject: c.Subject(0, "t1", "pub.product."+strconv.Itoa((i*n+k)%1000)),
							Body: body, MsgID: "e1:t1:" + v})
					}
					msgs = append(msgs, feed.Message{Subject: head, Body: []byte("head"), MsgID: "e1:t1:head:" + strconv.Itoa(i)})
					var err error
					if how == "atomic-batch" {
						seq, err = atomicBatch(ctx, nc, js, msgs, head, seq)
					} else {
						seq, err = feed.Publish(ctx, js, "e1", msgs, head, seq)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
