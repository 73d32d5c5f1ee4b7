package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"vitrine/schema"
)

// A record's envelope is its change as schema.DecodeChange reads it from the record's data,
// decoded once by the writer so that a loading edge does not scan every message's JSON again.
// Log, kind and id are the subject's (…<log>.<vis>.<kind>.<id>, or …_platform.<kind>.<id>), so
// the envelope holds only:
//
//	schema (uvarint), vis (byte: 0 pub, 1 priv), version (uvarint), version - txn_first and
//	txn_last - version (uvarints), deleted (byte), the length of the change's Data and the
//	number of bytes after it in the record's data (uvarints)
//
// An empty envelope says the record has none: its data does not decode, is of a newer schema, is
// a head (heads carry digests), does not match its subject, or its Data cannot be located in it
// without ambiguity. Changes hands such a record over as data, for the reader to decode as it
// would a stream message. Because Data is a slice of the record's data, bytes and all, a change
// read through its envelope is the one DecodeChange returns, field for field.

// maxEnvelope bounds an envelope's length.
const maxEnvelope = 64

// subjectParts returns the log, kind and id a subject names.
func subjectParts(subject string) (log, kind, id string, ok bool) {
	rest, id, ok1 := cutLast(subject)
	rest, kind, ok2 := cutLast(rest)
	rest, tok, ok3 := cutLast(rest)
	if !ok1 || !ok2 || !ok3 {
		return "", "", "", false
	}
	if tok == schema.PlatformLog {
		return schema.PlatformLog, kind, id, true
	}
	_, log, ok = cutLast(rest)
	return log, kind, id, ok
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// appendEnvelope appends the envelope of a record to b, or nothing.
func appendEnvelope(b []byte, subject string, data []byte) []byte {
	c, err := schema.DecodeChange(data)
	if err != nil || c.Digest != nil || c.IsHead() || c.Schema < 0 || c.Version < c.TxnFirst || c.TxnLast < c.Version || c.TxnFirst < 0 {
		return b
	}
	if log, kind, id, ok := subjectParts(subject); !ok || log != c.Log || kind != string(c.Kind) || id != c.ID {
		return b
	}
	off, n := len(data), len(c.Data)
	if n > 0 {
		off = bytes.Index(data, c.Data)
		if off < 0 || bytes.LastIndex(data, c.Data) != off {
			return b
		}
	}
	var vis byte
	switch c.Vis {
	case schema.Pub:
	case schema.Priv:
		vis = 1
	default:
		return b
	}
	del := byte(0)
	if c.Deleted {
		del = 1
	}
	b = binary.AppendUvarint(b, uint64(c.Schema))
	b = append(b, vis)
	b = binary.AppendUvarint(b, uint64(c.Version))
	b = binary.AppendUvarint(b, uint64(c.Version-c.TxnFirst))
	b = binary.AppendUvarint(b, uint64(c.TxnLast-c.Version))
	b = append(b, del)
	b = binary.AppendUvarint(b, uint64(n))
	return binary.AppendUvarint(b, uint64(len(data)-off-n))
}

// changeLoader decodes envelopes into changes allocated in blocks, interning logs and kinds.
type changeLoader struct {
	slab []schema.Change
	logs map[string]string
}

// slabChanges is how many changes one allocation holds: large enough (about 40 KB) to be a
// block of its own in Go's heap, so that the changes of a load, garbage once applied, never
// share memory pages with the entities that stay (which would keep those pages resident).
const slabChanges = 256

var knownKinds = []schema.Kind{schema.KindProduct, schema.KindVariant, schema.KindCategory, schema.KindCurrency, schema.KindPost,
	schema.KindTenant, schema.KindHead, schema.KindFlashSale, schema.KindSection, schema.KindReview, schema.KindStats,
	schema.KindPostMarker, schema.KindTerm, schema.KindAuthor}

// change decodes env against the record's subject and data; it returns nil when env is empty or
// does not decode to a change that passes schema's checks (the record is then read from its
// data).
func (l *changeLoader) change(subject string, env, data []byte) *schema.Change {
	if len(env) == 0 {
		return nil
	}
	r := &headerReader{b: env}
	sch := r.uvarint("schema")
	vis := r.byte("vis")
	ver, dFirst, dLast := r.uvarint("version"), r.uvarint("txn_first"), r.uvarint("txn_last")
	del := r.byte("deleted")
	n, after := r.uvarint("length"), r.uvarint("after")
	if r.err != nil || len(r.b) != 0 || sch > 1<<20 || vis > 1 || del > 1 || ver > math.MaxInt64/2 || dFirst > ver || dLast > math.MaxInt64/2 ||
		n > uint64(len(data)) || after > uint64(len(data))-n {
		return nil
	}
	logs, kinds, ids, ok := subjectParts(subject)
	if !ok {
		return nil
	}
	if len(l.slab) == 0 {
		l.slab = make([]schema.Change, slabChanges)
	}
	c := &l.slab[0]
	l.slab = l.slab[1:]
	c.Schema, c.Version, c.TxnFirst, c.TxnLast, c.Deleted = int(sch), int64(ver), int64(ver-dFirst), int64(ver+dLast), del == 1
	c.Vis = schema.Pub
	if vis == 1 {
		c.Vis = schema.Priv
	}
	lg, ok := l.logs[logs]
	if !ok {
		if l.logs == nil {
			l.logs = map[string]string{}
		}
		lg = strings.Clone(logs)
		l.logs[lg] = lg
	}
	c.Log = lg
	c.Kind = ""
	for _, k := range knownKinds {
		if string(k) == kinds {
			c.Kind = k
			break
		}
	}
	if c.Kind == "" {
		c.Kind = schema.Kind(strings.Clone(kinds))
	}
	c.ID = strings.Clone(ids)
	if n > 0 {
		off := uint64(len(data)) - after - n
		c.Data = data[off : off+n : off+n]
	}
	if c.Check() != nil {
		*c = schema.Change{}
		return nil
	}
	return c
}

// Changes calls fn with each record's subject and its change, in order, or, for a record
// without an envelope (see above), nil and the record's data, which the reader decodes itself
// (schema.DecodeChange). It stops at fn's first error and returns it; its own errors wrap
// ErrCorrupt as Records' do. It reads the records into blocks of about 1 MiB: a change's Data
// and the subject and data passed to fn are slices of those blocks (fn may keep them, which
// keeps their block), and the changes themselves are allocated in blocks too. A load's
// transient memory is thus a few large blocks, freed whole once nothing points into them,
// instead of several small allocations per record interleaved with what the reader keeps.
// The change's fields a reader may keep for long (log, kind, id) are its own strings.
func (s *Snapshot) Changes(fn func(subject string, c *schema.Change, data []byte) error) error {
	zr, err := zstd.NewReader(bytes.NewReader(s.body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecoderMemory),
		zstd.WithDecoderMaxWindow(maxDecoderMemory))
	if err != nil {
		return err
	}
	defer zr.Close()
	cr := &chunkReader{r: zr}
	var l changeLoader
	seq := uint64(0)
	for i := uint64(0); i < s.h.Records; i++ {
		d, err := cr.uvarint()
		if err != nil {
			return corrupt(fmt.Sprintf("record %d sequence", i), err)
		}
		if (i > 0 && d == 0) || seq+d < seq {
			return fmt.Errorf("%w: record %d out of sequence order", ErrCorrupt, i)
		}
		seq += d
		subj, err := cr.bytes(maxString)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d subject", i), err)
		}
		data, err := cr.bytes(MaxRecordData)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d data", i), err)
		}
		env, err := cr.bytes(maxEnvelope)
		if err != nil {
			return corrupt(fmt.Sprintf("record %d envelope", i), err)
		}
		subject := unsafe.String(unsafe.SliceData(subj), len(subj))
		if err := fn(subject, l.change(subject, env, data), data); err != nil {
			return err
		}
	}
	if !cr.fill(1) {
		if cr.err == io.EOF {
			return nil
		}
		return corrupt("end", cr.err)
	}
	return fmt.Errorf("%w: data after the last record", ErrCorrupt)
}

// chunkSize is the size of the blocks Changes reads records into.
const chunkSize = 1 << 20

// chunkReader reads from r into blocks; what it returns are slices of them, never overwritten.
type chunkReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	err      error
}

// fill makes n unread bytes available, or reports false (cr.err says why). A block is never
// more than twice the bytes read into it plus chunkSize, whatever length the input claims.
func (cr *chunkReader) fill(n int) bool {
	for cr.end-cr.pos < n {
		if cr.err != nil {
			return false
		}
		if cr.end == len(cr.buf) {
			// A new block; the unread bytes move over (the old block stays with the slices
			// already returned from it).
			have := cr.end - cr.pos
			nb := make([]byte, min(max(n, chunkSize), max(chunkSize, 2*have)))
			copy(nb, cr.buf[cr.pos:cr.end])
			cr.buf, cr.pos, cr.end = nb, 0, have
		}
		k, err := cr.r.Read(cr.buf[cr.end:])
		cr.end += k
		if err != nil {
			cr.err = err
		}
	}
	return true
}

func (cr *chunkReader) uvarint() (uint64, error) {
	cr.fill(binary.MaxVarintLen64) // fewer at the end of the input
	v, n := binary.Uvarint(cr.buf[cr.pos:cr.end])
	switch {
	case n > 0:
		cr.pos += n
		return v, nil
	case n < 0:
		return 0, errors.New("varint overflows")
	case cr.err != nil && cr.err != io.EOF:
		return 0, cr.err
	}
	return 0, io.ErrUnexpectedEOF
}

// bytes reads a uvarint length (at most max) and that many bytes, as a slice of a block.
func (cr *chunkReader) bytes(max uint64) ([]byte, error) {
	n, err := cr.uvarint()
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("length %d over %d", n, max)
	}
	if !cr.fill(int(n)) {
		if cr.err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, cr.err
	}
	b := cr.buf[cr.pos : cr.pos+int(n) : cr.pos+int(n)]
	cr.pos += int(n)
	return b, nil
}

// bytes reads a uvarint length and that many bytes of the envelope, as a slice of it.
func (r *headerReader) bytes(what string) []byte {
	n := r.uvarint(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *headerReader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}
