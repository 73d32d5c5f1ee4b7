package fulfil

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
	"github.com/go-pdf/fpdf/contrib/gofpdi"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/feed"
)

// MaxBatchOrders bounds the orders of one label batch.
const MaxBatchOrders = 500

// Work is one order of a label batch, as queued.
type Work struct {
	Tenant   string `json:"tenant"` // slug
	Batch    string `json:"batch"`
	Position int    `json:"position"`
}

// Queue carries label-batch work between origins: a JetStream work-queue stream read through
// one durable consumer that every origin shares, so that the work of an origin that dies is
// redelivered to another after AckWait.
type Queue struct {
	js       jetstream.JetStream
	stream   string
	subject  string
	consumer jetstream.Consumer
	// AckWait is how long an unacknowledged order waits before it is redelivered.
	ackWait time.Duration
}

// MaxDeliveries bounds how often one order of a batch is tried before it is marked failed.
const MaxDeliveries = 5

// NewQueue opens (creating when missing) the work stream and its consumer. subject is the
// stream's one subject ("vitrine_work.labels"); replicas the stream's copies (0 or 1: one; an
// existing stream with another count is changed in place).
func NewQueue(ctx context.Context, js jetstream.JetStream, stream, subject string, ackWait time.Duration, replicas int) (*Queue, error) {
	if ackWait <= 0 {
		ackWait = time.Minute
	}
	if _, err := feed.EnsureStreamConfig(ctx, js, jetstream.StreamConfig{Name: stream, Subjects: []string{subject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute, Replicas: max(replicas, 1)}); err != nil {
		return nil, fmt.Errorf("fulfil: work stream %s: %w", stream, err)
	}
	c, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "label-batches", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: ackWait, MaxDeliver: MaxDeliveries, MaxAckPending: 64})
	if err != nil {
		return nil, fmt.Errorf("fulfil: work consumer: %w", err)
	}
	return &Queue{js: js, stream: stream, subject: subject, consumer: c, ackWait: ackWait}, nil
}

// Publish queues one order of a batch (deduplicated by batch and position).
func (q *Queue) Publish(ctx context.Context, w Work) error {
	b, _ := json.Marshal(w)
	_, err := q.js.Publish(ctx, q.subject, b, jetstream.WithMsgID(w.Batch+"/"+strconv.Itoa(w.Position)))
	return err
}

// RunBatches works the queue until ctx ends: each order's labels are bought and its outcome
// recorded before the message is acknowledged; a carrier that does not answer puts the order back
// (with a delay) until MaxDeliveries, after which it is failed.
func (s *Service) RunBatches(ctx context.Context) error {
	if s.Queue == nil {
		return nil
	}
	cc, err := s.Queue.consumer.Consume(func(m jetstream.Msg) {
		var w Work
		if err := json.Unmarshal(m.Data(), &w); err != nil {
			s.Log.Warn("label batch: malformed work", "err", err)
			m.Term()
			return
		}
		attempt := uint64(1)
		if md, err := m.Metadata(); err == nil {
			attempt = md.NumDelivered
		}
		if err := s.work(ctx, w, attempt >= MaxDeliveries); err != nil {
			s.Log.Warn("label batch: order put back", "err", err, "batch", w.Batch, "position", w.Position, "attempt", attempt)
			m.NakWithDelay(time.Duration(attempt) * time.Second)
			return
		}
		m.Ack()
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	cc.Drain()
	return nil
}

// work buys the labels of one order of a batch and records the outcome. It returns an error
// only when the order should be tried again.
func (s *Service) work(ctx context.Context, w Work, last bool) error {
	t, err := s.DB.TenantBySlug(ctx, w.Tenant)
	if err != nil {
		return err
	}
	b, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.LabelBatch, error) { return tx.LabelBatch(ctx, t, w.Batch) })
	if err != nil {
		if schema.ErrorCode(err) == schema.CodeNotFound {
			return nil
		}
		return err
	}
	if w.Position < 0 || w.Position >= len(b.Items) || b.Items[w.Position].Status != store.BatchQueued {
		return nil
	}
	item := b.Items[w.Position]
	answer, _, _, err := s.purchase(ctx, t, item.Reference, "batch:"+b.ID, []ParcelInput{{}}, b.Service)
	status, msg := store.BatchDone, ""
	var shipments json.RawMessage
	switch {
	case err == nil:
		type done struct {
			ID             string `json:"id"`
			TrackingNumber string `json:"tracking_number"`
			LabelURL       string `json:"label_url"`
		}
		var out []done
		for _, sh := range answer.Shipments {
			out = append(out, done{sh.ID, sh.TrackingNumber, sh.LabelURL})
		}
		shipments, _ = json.Marshal(out)
	case schema.ErrorCode(err) == schema.CodeUnavailable && !last, schema.ErrorCode(err) == schema.CodeInternal && !last:
		return err
	default:
		status, msg = store.BatchFailed, schema.AsError(err).Message
		if schema.ErrorCode(err) == schema.CodeInternal {
			msg = "the labels could not be bought; try this order again on its own"
		}
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		return tx.FinishBatchItem(ctx, t, b.ID, w.Position, status, msg, shipments)
	})
}

// Requeue queues again the items still queued after a while: their message may never have
// reached the stream (the origin died between the commit and the publish). Duplicates are
// harmless: the purchase key makes a second delivery find the first one's purchase.
func (s *Service) Requeue(ctx context.Context, olderThan time.Duration) (int, error) {
	if s.Queue == nil {
		return 0, nil
	}
	items, err := s.DB.QueuedBatchItems(ctx, time.Now().Add(-olderThan), 1000)
	if err != nil {
		return 0, err
	}
	for _, it := range items {
		pos, _ := strconv.Atoi(it[2])
		if err := s.Queue.Publish(ctx, Work{Tenant: it[0], Batch: it[1], Position: pos}); err != nil {
			return 0, err
		}
	}
	return len(items), nil
}

// BatchLabelsInput is the body of POST /api/orders/batch-labels.
type BatchLabelsInput struct {
	References *[]string `json:"references" doc:"1 to 500 order references, each once; every unit not shipped yet of each order goes in one parcel."`
	Service    *string   `json:"service" doc:"ground (default) or express."`
}

// BatchAccepted is the answer of POST /api/orders/batch-labels: the batch queued, or the one
// made before under the same Idempotency-Key.
type BatchAccepted struct {
	BatchID   string `json:"batchId"`
	StatusURL string `json:"status_url"`
	Total     int    `json:"total" doc:"Orders in the batch."`
}

// BatchStatus is a batch's progress.
type BatchStatus struct {
	BatchID    string             `json:"batchId"`
	Status     string             `json:"status" doc:"queued, running or done."`
	Total      int                `json:"total"`
	Done       int                `json:"done"`
	Failed     int                `json:"failed"`
	Queued     int                `json:"queued"`
	Results    []*store.BatchItem `json:"results"`
	LabelsURL  string             `json:"labels_url,omitempty" doc:"Every label of the batch as one PDF: when it is done with a label bought."`
	CreatedAt  time.Time          `json:"created_at"`
	FinishedAt *time.Time         `json:"finished_at"`
}

func statusOf(b *store.LabelBatch) *BatchStatus {
	st := &BatchStatus{BatchID: b.ID, Total: len(b.Items), Results: b.Items, CreatedAt: b.CreatedAt, FinishedAt: b.FinishedAt}
	for _, it := range b.Items {
		switch it.Status {
		case store.BatchDone:
			st.Done++
		case store.BatchFailed:
			st.Failed++
		default:
			st.Queued++
		}
	}
	switch {
	case st.Queued == 0:
		st.Status = "done"
		if st.Done > 0 {
			st.LabelsURL = "/api/orders/batch-labels/" + b.ID + "/labels"
		}
	case st.Queued < st.Total:
		st.Status = "running"
	default:
		st.Status = "queued"
	}
	return st
}

func (s *Service) createBatch(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in BatchLabelsInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	key, err := handler.IdempotencyKey(ctx, "for label batches")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if s.Queue == nil {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 5, Message: "label batches are not running on this origin"})
		return
	}
	if in.References == nil || len(*in.References) == 0 || len(*in.References) > MaxBatchOrders {
		s.Fail(ctx, rq, schema.Invalid("references", "references lists 1 to %d orders", int64(MaxBatchOrders)))
		return
	}
	svc := "ground"
	if in.Service != nil {
		svc = *in.Service
	}
	if svc != "ground" && svc != "express" {
		s.Fail(ctx, rq, schema.Invalid("service", "service is ground or express"))
		return
	}
	seen := map[string]bool{}
	var refs []string
	for _, r := range *in.References {
		ref, ok := schema.NormalizeOrderReference(r)
		if !ok {
			s.Fail(ctx, rq, schema.Invalid("references", "%q is not an order reference", r))
			return
		}
		if seen[ref] {
			s.Fail(ctx, rq, schema.Invalid("references", "%s is listed twice", ref))
			return
		}
		seen[ref] = true
		refs = append(refs, ref)
	}
	b, _ := json.Marshal(struct {
		R []string
		S string
	}{refs, svc})
	sum := sha256.Sum256(b)
	batch := &store.LabelBatch{Key: key, RequestHash: hex.EncodeToString(sum[:]), Service: svc}
	var created bool
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		batch.Items = nil
		var err error
		if created, err = tx.CreateLabelBatch(ctx, rq.Info, batch, refs); err != nil || created {
			return err
		}
		prev, err := tx.LabelBatchByKey(ctx, rq.Info, key)
		if err != nil {
			return err
		}
		if prev.RequestHash != batch.RequestHash {
			return &schema.Error{Code: schema.CodeUnprocessable, Field: "Idempotency-Key",
				Message: "this Idempotency-Key was already used for another batch; use a new key for a new batch"}
		}
		*batch = *prev
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if created {
		for _, it := range batch.Items {
			if err := s.Queue.Publish(ctx, Work{Tenant: rq.Info.Slug, Batch: batch.ID, Position: it.Position}); err != nil {
				// Requeue (origin maintenance) publishes what did not make it.
				s.Log.Warn("label batch: queueing failed; maintenance will queue it again", "err", err, "batch", batch.ID)
				break
			}
		}
	} else {
		ctx.Response.Header.Set("Idempotent-Replayed", "true")
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/orders/batch-labels/"+batch.ID+"/status")
	s.Reply(ctx, rq, fasthttp.StatusAccepted, &BatchAccepted{BatchID: batch.ID, StatusURL: "/api/orders/batch-labels/" + batch.ID + "/status",
		Total: len(batch.Items)})
}

func (s *Service) batchStatus(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	b, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.LabelBatch, error) {
		return tx.LabelBatch(ctx, rq.Info, pipeline.Param(ctx, "batchId"))
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Reply(ctx, rq, 200, statusOf(b))
}

// batchLabels answers every label of a finished batch as one PDF, in the batch's order.
func (s *Service) batchLabels(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var pdfs [][]byte
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		pdfs = nil
		b, err := tx.LabelBatch(ctx, rq.Info, pipeline.Param(ctx, "batchId"))
		if err != nil {
			return err
		}
		if st := statusOf(b); st.Status != "done" || st.Done == 0 {
			return &schema.Error{Code: schema.CodeConflict, Message: "the batch has no labels yet: it is " + st.Status}
		}
		for _, it := range b.Items {
			var shs []struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(it.Shipments, &shs); err != nil {
				return err
			}
			for _, sh := range shs {
				pdf, err := tx.ShipmentLabel(ctx, rq.Info, "", sh.ID)
				if err != nil {
					return err
				}
				pdfs = append(pdfs, pdf)
			}
		}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out, err := mergeLabels(pdfs)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Document(ctx, rq, "labels-"+pipeline.Param(ctx, "batchId")+".pdf", out)
}

// mergeLabels puts the first page of each label PDF on a 4×6 in page of one document, in order.
// (pdfcpu merges PDFs too, but its default configuration writes to the user's configuration
// directory and exits the process when it cannot: not a library call for a server.)
func mergeLabels(pdfs [][]byte) ([]byte, error) {
	const w, h = 101.6, 152.4
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: w, Ht: h}})
	pdf.SetTitle("Shipping labels", true)
	pdf.SetAutoPageBreak(false, 0)
	imp := gofpdi.NewImporter()
	for _, b := range pdfs {
		rs := io.ReadSeeker(bytes.NewReader(b))
		tpl := imp.ImportPageFromStream(pdf, &rs, 1, "/MediaBox")
		pdf.AddPage()
		imp.UseImportedTemplate(pdf, tpl, 0, 0, w, h)
	}
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, fmt.Errorf("fulfil: merging %d labels: %w", len(pdfs), err)
	}
	return out.Bytes(), nil
}
