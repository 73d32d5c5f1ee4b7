package snapshot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"vitrine/sync/feed"
)

// Magic opens every snapshot.
const Magic = "VTSNAP\x00\x01"

// Version is the format version this build writes. Version 2 added to each record its change's
// envelope, decoded by the writer (changes.go); version 3 added the annexes (annex.go). This
// build reads 2 and 3 (a version 2 snapshot has no annexes) and refuses 1, and the edge then
// bootstraps from the stream until the writer has replaced the snapshot.
const Version = 3

// minVersion is the oldest format version this build reads.
const minVersion = 2

// Limits a decoder enforces on hostile bytes.
const (
	// MaxRecordData is the largest message data a record may hold (NATS's own maximum payload).
	MaxRecordData = 64 << 20
	// maxString bounds a header string or a subject.
	maxString = 64 << 10
	// maxDecoderMemory bounds the zstd decoder's window.
	maxDecoderMemory = 64 << 20
)

// preamble: magic, version (uint32), total length (uint64), header length (uint32).
const preambleLen = len(Magic) + 4 + 8 + 4

// checksumLen is the trailing xxhash64 of every byte before it.
const checksumLen = 8

// Errors of Open and Check, each wrapped with details; test with errors.Is. Reason names them.
var (
	ErrTruncated = errors.New("snapshot: truncated")
	ErrCorrupt   = errors.New("snapshot: corrupt")
	ErrVersion   = errors.New("snapshot: unknown format version")
	ErrEpoch     = errors.New("snapshot: of another epoch")
	ErrStream    = errors.New("snapshot: of another incarnation of the stream")
	ErrTooOld    = errors.New("snapshot: too old")
	ErrShard     = errors.New("snapshot: of another shard")
)

// Head is a log's head version a snapshot covers.
type Head struct {
	Log     string
	Version int64
}

// Header describes a snapshot: which stream, which shard, which point of the stream.
type Header struct {
	// Epoch and Created identify the state stream (its cluster epoch and creation time).
	Epoch   string
	Created time.Time
	// Shard is the shard token: a shard number, or schema.PlatformLog for the tenant registry.
	Shard string
	// Seq is the stream sequence S the snapshot stands at: it holds, for every subject of the
	// shard's public filter, the last message with a sequence <= Seq (none when the last one is
	// above Seq or the subject has none).
	Seq uint64
	// Taken is when the snapshot was written (the writer's clock).
	Taken time.Time
	// FullAt is when the full pass this snapshot descends from (by incremental passes) was made.
	FullAt time.Time
	// ListedAt and Shards (platform snapshot only): the shards that had public subjects when
	// the stream's sequence was ListedAt. A shard not listed has no message at or below
	// ListedAt.
	ListedAt uint64
	Shards   []string
	// Heads are the version of every log's head marker the snapshot holds.
	Heads []Head
	// Records is how many records follow.
	Records uint64
}

// Record is one message of the stream: its sequence, subject and data.
type Record struct {
	Seq     uint64
	Subject string
	Data    []byte

	// env is the record's encoded envelope (changes.go) when it came from a snapshot (Records),
	// so that writing it again does not decode its data again; nil otherwise.
	env []byte
}

// Encode returns the snapshot of h, recs (in increasing Seq order) and annexes; h.Records is
// set from recs.
func Encode(h Header, recs []Record, annexes ...feed.Annex) ([]byte, error) {
	h.Records = uint64(len(recs))
	ab, err := appendAnnexes(nil, annexes)
	if err != nil {
		return nil, err
	}
	var hb []byte
	hb = appendString(hb, h.Epoch)
	hb = binary.AppendVarint(hb, unixNano(h.Created))
	hb = appendString(hb, h.Shard)
	hb = binary.AppendUvarint(hb, h.Seq)
	hb = binary.AppendVarint(hb, unixNano(h.Taken))
	hb = binary.AppendVarint(hb, unixNano(h.FullAt))
	hb = binary.AppendUvarint(hb, h.ListedAt)
	hb = binary.AppendUvarint(hb, uint64(len(h.Shards)))
	for _, s := range h.Shards {
		hb = appendString(hb, s)
	}
	hb = binary.AppendUvarint(hb, uint64(len(h.Heads)))
	for _, hd := range h.Heads {
		hb = appendString(hb, hd.Log)
		hb = binary.AppendVarint(hb, hd.Version)
	}
	hb = binary.AppendUvarint(hb, h.Records)
	hb = binary.AppendUvarint(hb, uint64(len(ab)))

	var out bytes.Buffer
	out.Write(make([]byte, preambleLen))
	out.Write(hb)
	zw, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	var rb, eb []byte
	prev := uint64(0)
	for i, r := range recs {
		if r.Seq < prev || (i > 0 && r.Seq == prev) {
			zw.Close()
			return nil, fmt.Errorf("snapshot: records out of sequence order (%d after %d)", r.Seq, prev)
		}
		if len(r.Data) > MaxRecordData || len(r.Subject) > maxString {
			zw.Close()
			return nil, fmt.Errorf("snapshot: record %s too large", r.Subject)
		}
		rb = binary.AppendUvarint(rb[:0], r.Seq-prev)
		rb = appendString(rb, r.Subject)
		rb = binary.AppendUvarint(rb, uint64(len(r.Data)))
		prev = r.Seq
		if _, err := zw.Write(rb); err != nil {
			return nil, err
		}
		if _, err := zw.Write(r.Data); err != nil {
			return nil, err
		}
		env := r.env
		if env == nil {
			eb = appendEnvelope(eb[:0], r.Subject, r.Data)
			env = eb
		}
		rb = binary.AppendUvarint(rb[:0], uint64(len(env)))
		rb = append(rb, env...)
		if _, err := zw.Write(rb); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out.Write(ab)
	b := out.Bytes()
	n := copy(b, Magic)
	binary.BigEndian.PutUint32(b[n:], Version)
	binary.BigEndian.PutUint64(b[n+4:], uint64(len(b)+checksumLen))
	binary.BigEndian.PutUint32(b[n+12:], uint32(len(hb)))
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(b)), nil
}

// Snapshot is a verified snapshot: Open checked its framing and checksum and read its header.
type Snapshot struct {
	h     Header
	body  []byte // the compressed records
	annex []byte // the annexes (annex.go)
}

// Open verifies b (magic, version, length, checksum) and reads its header. Its errors wrap
// ErrTruncated, ErrCorrupt or ErrVersion. It never panics, whatever b holds.
func Open(b []byte) (*Snapshot, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		if len(b) < len(Magic) && string(b) == Magic[:len(b)] {
			return nil, fmt.Errorf("%w: %d bytes", ErrTruncated, len(b))
		}
		return nil, fmt.Errorf("%w: not a snapshot (bad magic)", ErrCorrupt)
	}
	if len(b) < preambleLen+checksumLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrTruncated, len(b))
	}
	p := b[len(Magic):]
	v := binary.BigEndian.Uint32(p)
	if v < minVersion || v > Version {
		return nil, fmt.Errorf("%w %d (this build reads %d to %d)", ErrVersion, v, minVersion, Version)
	}
	total := binary.BigEndian.Uint64(p[4:])
	switch {
	case uint64(len(b)) < total:
		return nil, fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(b), total)
	case uint64(len(b)) > total:
		return nil, fmt.Errorf("%w: %d bytes after the end", ErrCorrupt, uint64(len(b))-total)
	}
	end := len(b) - checksumLen
	if got, want := xxhash.Sum64(b[:end]), binary.BigEndian.Uint64(b[end:]); got != want {
		return nil, fmt.Errorf("%w: checksum %016x, expected %016x", ErrCorrupt, got, want)
	}
	hl := uint64(binary.BigEndian.Uint32(p[12:]))
	if hl > uint64(end-preambleLen) {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrCorrupt, hl)
	}
	h, annexLen, err := decodeHeader(b[preambleLen:preambleLen+int(hl)], v)
	if err != nil {
		return nil, err
	}
	body := b[preambleLen+int(hl) : end]
	if annexLen > uint64(len(body)) {
		return nil, fmt.Errorf("%w: annexes of %d bytes", ErrCorrupt, annexLen)
	}
	split := len(body) - int(annexLen)
	return &Snapshot{h: h, body: body[:split:split], annex: body[split:]}, nil
}

// Header returns the snapshot's header.
func (s *Snapshot) Header() Header { return s.h }

// Check refuses a snapshot of another stream (epoch, creation time), of another shard ("" skips
// the shard check), or older than maxAge at now (0: no age limit).
func (s *Snapshot) Check(epoch string, created time.Time, shard string, maxAge time.Duration, now time.Time) error {
	h := s.h
	switch {
	case h.Epoch != epoch:
		return fmt.Errorf("%w: %q, the stream's is %q", ErrEpoch, h.Epoch, epoch)
	case !h.Created.Equal(created):
		return fmt.Errorf("%w: stream created %s, the stream's was created %s", ErrStream, h.Created.UTC().Format(time.RFC3339Nano), created.UTC().Format(time.RFC3339Nano))
	case shard != "" && h.Shard != shard:
		return fmt.Errorf("%w: %q, wanted %q", ErrShard, h.Shard, shard)
	case maxAge > 0 && now.Sub(h.Taken) > maxAge:
		return fmt.Errorf("%w: taken %s ago, the limit is %s", ErrTooOld, now.Sub(h.Taken).Round(time.Second), maxAge)
	}
	return nil
}

// Records calls fn with each record in order; it stops at fn's first error and returns it. A
// record's Data is its own (fn may keep it). Changes reads the same records faster, decoded. Its errors wrap ErrCorrupt when the records do not
// decode or do not number Header().Records.
func (s *Snapshot) Records(fn func(Record) error) error {
	zr, err := zstd.NewReader(bytes.NewReader(s.body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecoderMemory),
		zstd.WithDecoderMaxWindow(maxDecoderMemory))
	if err != nil {
		return err
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 64<<10)
	seq := uint64(0)
	for i := uint64(0); i < s.h.Records; i++ {
		d, err := binary.ReadUvarint(br)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d sequence", i), err)
		}
		if (i > 0 && d == 0) || seq+d < seq {
			return fmt.Errorf("%w: record %d out of sequence order", ErrCorrupt, i)
		}
		seq += d
		subj, err := readBytes(br, maxString)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d subject", i), err)
		}
		data, err := readBytes(br, MaxRecordData)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d data", i), err)
		}
		env, err := readBytes(br, maxEnvelope)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d envelope", i), err)
		}
		if env == nil {
			env = []byte{}
		}
		if err := fn(Record{Seq: seq, Subject: string(subj), Data: data, env: env}); err != nil {
			return err
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("%w: data after the last record", ErrCorrupt)
		}
		return corrupt("end", err)
	}
	return nil
}

func corrupt(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, what, err)
}

// readBytes reads a uvarint length (at most max) and that many bytes.
func readBytes(br *bufio.Reader, max uint64) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("length %d over %d", n, max)
	}
	// Grow in steps so that a hostile length cannot make a large allocation before its bytes
	// turn out to be missing.
	out := make([]byte, 0, min(n, 1<<20))
	for uint64(len(out)) < n {
		k := min(n-uint64(len(out)), 1<<20)
		start := len(out)
		out = append(out, make([]byte, k)...)
		if _, err := io.ReadFull(br, out[start:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// headerReader reads a header's fields from a byte slice, remembering the first error.
type headerReader struct {
	b   []byte
	err error
}

func (r *headerReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: header %s", ErrCorrupt, what)
	}
}

func (r *headerReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *headerReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *headerReader) string(what string) string {
	n := r.uvarint(what)
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) || n > maxString {
		r.fail(what)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeHeader reads a header of format version v, and the length of the annexes (none before
// version 3).
func decodeHeader(b []byte, v uint32) (Header, uint64, error) {
	r := &headerReader{b: b}
	var h Header
	h.Epoch = r.string("epoch")
	h.Created = fromNano(r.varint("created"))
	h.Shard = r.string("shard")
	h.Seq = r.uvarint("sequence")
	h.Taken = fromNano(r.varint("taken"))
	h.FullAt = fromNano(r.varint("full pass time"))
	h.ListedAt = r.uvarint("listed-at sequence")
	// Every element takes at least one byte: a count above the bytes left is a lie.
	if n := r.uvarint("shard count"); r.err == nil {
		if n > uint64(len(r.b)) {
			r.fail("shard count")
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			h.Shards = append(h.Shards, r.string("shard"))
		}
	}
	if n := r.uvarint("head count"); r.err == nil {
		if n > uint64(len(r.b)) {
			r.fail("head count")
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			h.Heads = append(h.Heads, Head{Log: r.string("head log"), Version: r.varint("head version")})
		}
	}
	h.Records = r.uvarint("record count")
	var annexLen uint64
	if v >= 3 {
		annexLen = r.uvarint("annex length")
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return Header{}, 0, r.err
	}
	return h, annexLen, nil
}
