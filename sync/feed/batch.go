package feed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// MaxBatch is the largest atomic batch nats-server accepts by default (messages, head included).
const MaxBatch = 1000

// Message is one message of an atomic batch.
type Message struct {
	Subject string
	Body    []byte
	// MsgID is sent as Nats-Msg-Id.
	MsgID string
	// TTL, when non-zero, is the message's own lifetime (tombstones).
	TTL time.Duration
}

// ErrFenced is returned when a batch was refused because the fence subject's last sequence was not
// the expected one: another publisher wrote the log since the caller last looked.
var ErrFenced = errors.New("feed: batch fenced off: the log head moved")

// PublishBatch publishes msgs as one JetStream atomic batch: the stream stores all of them or
// none. The first message requires the fence subject's last stream sequence to be fenceSeq (0: no
// message on it yet). It returns the stream sequence of the last message.
//
// nats.go has no atomic batch API; the protocol is headers on ordinary messages (ADR-50):
// Nats-Batch-Id on each, Nats-Batch-Sequence from 1, Nats-Batch-Commit on the last, whose PubAck
// reports the outcome of the whole batch.
func PublishBatch(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, epoch string, msgs []Message, fenceSubject string, fenceSeq uint64) (uint64, error) {
	if len(msgs) == 0 || len(msgs) > MaxBatch {
		return 0, fmt.Errorf("feed: batch of %d messages (1..%d)", len(msgs), MaxBatch)
	}
	id := nuid.Next()
	for i, m := range msgs {
		nm := nats.NewMsg(m.Subject)
		nm.Data = m.Body
		nm.Header.Set("Nats-Batch-Id", id)
		nm.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		nm.Header.Set(HeaderEpoch, epoch)
		if m.MsgID != "" {
			nm.Header.Set(jetstream.MsgIDHeader, m.MsgID)
		}
		if m.TTL > 0 {
			nm.Header.Set("Nats-TTL", strconv.FormatInt(int64(m.TTL/time.Second), 10)+"s")
		}
		if i == 0 {
			nm.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(fenceSeq, 10))
			nm.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, fenceSubject)
		}
		if i < len(msgs)-1 {
			if err := nc.PublishMsg(nm); err != nil {
				return 0, fmt.Errorf("feed: publish batch: %w", err)
			}
			continue
		}
		nm.Header.Set("Nats-Batch-Commit", "1")
		ack, err := js.PublishMsg(ctx, nm)
		if err != nil {
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
				apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
				return 0, fmt.Errorf("%w: %v", ErrFenced, err)
			}
			return 0, fmt.Errorf("feed: commit batch: %w", err)
		}
		return ack.Sequence, nil
	}
	panic("unreachable")
}
