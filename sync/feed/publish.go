package feed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxBatch is the most messages, head included, the relay hands Publish at once: the bound on a
// round's memory and on the async publishes in flight (nats.go's default cap is 4,000). It was
// nats-server's default limit of an atomic batch, which the relay used before (README, "Decisions
// changed").
const MaxBatch = 1000

// Message is one message of a fenced publish.
type Message struct {
	Subject string
	Body    []byte
	// MsgID is sent as Nats-Msg-Id: a message retried within the stream's duplicate window is
	// stored once. Never set it on a message a retry may resend together with a later state of
	// the same subject: the window can drop the resent later state (its first copy is recent)
	// while storing the earlier one again (its first copy is older than the window, or the
	// server's record of it was purged or not rebuilt after a restart), and the subject then
	// ends at the earlier state. TestRetryAfterPartialPublishes; TestChaosConvergence found it.
	MsgID string
	// TTL, when non-zero, is the message's own lifetime (tombstones).
	TTL time.Duration
}

// ErrFenced is returned when a message was refused because the fence subject's last sequence was
// not the expected one: another publisher wrote the log since the caller last looked.
var ErrFenced = errors.New("feed: publish fenced off: the log head moved")

// Publish stores msgs in the stream in order and returns the stream sequence of the last one.
// Every message requires the fence subject's last stream sequence to be fenceSeq (0: no message
// on it yet), and only the last may be on the fence subject, so a publisher that does not know
// the current head (a zombie that lost its lease) has everything refused from the moment the head
// moved. The last message is sent only after every other one was stored: when it is the log's
// head marker, a head in the stream always follows the whole of what it covers. A failure
// (ErrFenced, wrapped, when the fence refused a message) may leave the other messages, or some of
// them, stored without their head: a reader keeps changes above a log's latest head until a head
// covers them (package replica), and the publisher's next try sends them all again, in order (see
// Message.MsgID).
//
// This replaced JetStream atomic batches (ADR-50), measured on a 2-core machine
// (BenchmarkPublish): for a one-replica file stream nats-server stages each atomic batch in a file
// store of its own, created, synced and removed per batch, ~2 ms of CPU for a batch of one change
// and its head against ~0.15 ms for the two fenced messages; and consumers were never isolated
// from a batch being stored one message at a time anyway (README, "Decisions changed").
func Publish(ctx context.Context, js jetstream.JetStream, epoch string, msgs []Message, fenceSubject string, fenceSeq uint64) (uint64, error) {
	if len(msgs) == 0 || len(msgs) > MaxBatch {
		return 0, fmt.Errorf("feed: publish of %d messages (1..%d)", len(msgs), MaxBatch)
	}
	for _, m := range msgs[:len(msgs)-1] {
		if m.Subject == fenceSubject {
			// It would move the fence under the messages after it.
			return 0, fmt.Errorf("feed: only the last message of a publish may be on the fence subject %s", fenceSubject)
		}
	}
	fence := strconv.FormatUint(fenceSeq, 10)
	msg := func(m Message) *nats.Msg {
		nm := nats.NewMsg(m.Subject)
		nm.Data = m.Body
		nm.Header.Set(HeaderEpoch, epoch)
		if m.MsgID != "" {
			nm.Header.Set(jetstream.MsgIDHeader, m.MsgID)
		}
		if m.TTL > 0 {
			nm.Header.Set("Nats-TTL", strconv.FormatInt(int64(m.TTL/time.Second), 10)+"s")
		}
		nm.Header.Set(jetstream.ExpectedLastSubjSeqHeader, fence)
		nm.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, fenceSubject)
		return nm
	}
	futures := make([]jetstream.PubAckFuture, 0, len(msgs)-1)
	var failed error
	for _, m := range msgs[:len(msgs)-1] {
		f, err := js.PublishMsgAsync(msg(m))
		if err != nil {
			failed = err
			break
		}
		futures = append(futures, f)
	}
	// Every future is waited for, even after a failure, so that nothing of this call is still in
	// flight when it reports one (unless ctx ends first).
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			if failed == nil {
				failed = err
			}
		case <-ctx.Done():
			return 0, fmt.Errorf("feed: publish: %w", ctx.Err())
		}
	}
	if failed != nil {
		return 0, publishError(failed)
	}
	ack, err := js.PublishMsg(ctx, msg(msgs[len(msgs)-1]))
	if err != nil {
		return 0, publishError(err)
	}
	return ack.Sequence, nil
}

// publishError wraps a refused publish, as ErrFenced when the fence refused it.
func publishError(err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return fmt.Errorf("%w: %v", ErrFenced, err)
	}
	return fmt.Errorf("feed: publish: %w", err)
}
