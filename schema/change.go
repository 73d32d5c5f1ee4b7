package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ChangeSchemaVersion is the newest version of the Change encoding, the one this build's
// writers (the origin's outbox) produce. Readers accept every schema from OldestChangeSchema to
// ChangeSchemaVersion and refuse a newer one rather than guess at it (UnsupportedSchemaError).
//
// # Upgrade policy: readers before writers
//
// What the stream carries is the relays' choice: a relay publishes the schema of `vitrine relay
// --change-schema` (default the newest it writes), re-encoding newer outbox rows with
// EncodeChangeAt. A fleet moves to a build with a new schema N in three steps: the relays run the
// new build with --change-schema N-1; then the readers, edges and origins, are upgraded (a new
// origin writes N into the outbox, which the relays still publish as N-1); then the relays drop
// the flag and publish N. A reader that meets a schema newer than it reads anyway (a relay
// switched too early, or a reader rolled back) skips those changes, keeps serving the last state
// of their logs and says so (feed.Follower, replica.UnsupportedLog): it never applies a change it
// cannot read, and does not bootstrap again for it, which would not help.
const ChangeSchemaVersion = 1

// OldestChangeSchema is the oldest Change encoding this build reads and can still write.
const OldestChangeSchema = 1

// UnsupportedSchemaError is the error of a change written in a schema newer than this build
// reads. Unlike a malformed message, it is expected during an upgrade done in the wrong order.
type UnsupportedSchemaError struct {
	// Schema is the message's schema version.
	Schema int
	// Log is the message's log when it could be read ("" otherwise).
	Log string
}

func (e *UnsupportedSchemaError) Error() string {
	return fmt.Sprintf("schema: change schema %d not supported (this build reads %d to %d)", e.Schema, OldestChangeSchema, ChangeSchemaVersion)
}

// CheckWriteSchema reports whether this build can write changes in schema n: an error unless
// OldestChangeSchema <= n <= ChangeSchemaVersion.
func CheckWriteSchema(n int) error {
	if n < OldestChangeSchema || n > ChangeSchemaVersion {
		return fmt.Errorf("schema: this build writes change schemas %d to %d, not %d", OldestChangeSchema, ChangeSchemaVersion, n)
	}
	return nil
}

// EncodeAt returns the change's wire form in schema n (CheckWriteSchema), for readers that read
// no newer schema. Schema 1 is the only encoding so far; a new schema adds its down-conversion
// here.
func (c *Change) EncodeAt(n int) ([]byte, error) {
	if err := CheckWriteSchema(n); err != nil {
		return nil, err
	}
	switch n {
	case 1:
		v := *c
		v.Schema = 1
		return v.Encode(), nil
	}
	return nil, fmt.Errorf("schema: no encoder for change schema %d", n)
}

// EncodeChangeAt returns the wire form body (a change as the origin wrote it) for readers of
// schema n at most: body itself when it is written in n or an older schema (the common case,
// which costs a prefix check and validates nothing else: the outbox holds what Encode wrote),
// else the change decoded and re-encoded in n.
func EncodeChangeAt(body []byte, n int) ([]byte, error) {
	if err := CheckWriteSchema(n); err != nil {
		return nil, err
	}
	if s, ok := leadingSchema(body); ok && s >= OldestChangeSchema && s <= n {
		return body, nil
	}
	c, err := DecodeChange(body)
	if err != nil {
		return nil, err
	}
	if c.Schema <= n {
		return body, nil
	}
	return c.EncodeAt(n)
}

// leadingSchema reads the schema of a change encoded by Encode, whose first field it is
// (`{"schema":1,`). ok is false for any other shape.
func leadingSchema(b []byte) (int, bool) {
	const prefix = `{"schema":`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return 0, false
	}
	n, i := 0, len(prefix)
	for ; i < len(b) && i < len(prefix)+6 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == len(prefix) || i >= len(b) || (b[i] != ',' && b[i] != '}') {
		return 0, false
	}
	return n, true
}

// newerSchema returns an UnsupportedSchemaError when b is a JSON object whose "schema" is newer
// than this build reads, whatever else it holds (a newer schema may add fields this build would
// refuse as unknown); nil otherwise.
func newerSchema(b []byte) error {
	var p struct {
		Schema int    `json:"schema"`
		Log    string `json:"log"`
	}
	// A field of an unexpected type leaves the others decoded; a syntax error leaves none.
	json.Unmarshal(b, &p)
	if p.Schema <= ChangeSchemaVersion {
		return nil
	}
	e := &UnsupportedSchemaError{Schema: p.Schema}
	if p.Log == PlatformLog || ValidateTenantSlug(p.Log) == nil {
		e.Log = p.Log
	}
	return e
}

// Kind names a replicated entity kind. It is a subject token.
type Kind string

// Replicated kinds.
const (
	KindProduct  Kind = "product"
	KindVariant  Kind = "variant"
	KindCategory Kind = "category"
	KindCurrency Kind = "currency"
	KindPost     Kind = "post"
	// KindTenant is a tenant registry entry, replicated on the platform log.
	KindTenant Kind = "tenant"
	// KindHead is a log's head marker: the relay publishes it last in every batch of a log, with
	// the log's version. Receiving it is a per-log checkpoint.
	KindHead Kind = "log"
)

// Visibility says who may read a change: pub is the public read model that edges hold; priv
// (drafts, private content, credentials, personal data) is read only by the origin.
type Visibility string

// Visibilities. They are subject tokens.
const (
	Pub  Visibility = "pub"
	Priv Visibility = "priv"
)

// Left returns the visibilities of before missing from after, in before's order: those an
// entity leaves in a write. A writer records a tombstone for each of them before the entity's
// new states, so that a reader of a left subject never keeps a stale state.
func Left(before, after []Visibility) []Visibility {
	var left []Visibility
	for _, v := range before {
		if !slices.Contains(after, v) {
			left = append(left, v)
		}
	}
	return left
}

// PlatformLog is the log name of the tenant registry. It takes the place of a tenant slug in
// changes and cannot be a tenant slug (slugs start with a letter).
const PlatformLog = "_platform"

// HeadID is the id of the head marker of every log.
const HeadID = "head"

// Change is one replicated row: the latest state of one entity (or its deletion) at one version
// of one log. A transaction changing k entities writes k changes with consecutive versions
// TxnFirst..TxnLast.
type Change struct {
	Schema int `json:"schema"`
	// Log is the tenant slug, or PlatformLog for the tenant registry.
	Log      string     `json:"log"`
	Kind     Kind       `json:"kind"`
	ID       string     `json:"id"`
	Vis      Visibility `json:"vis"`
	Version  int64      `json:"version"`
	TxnFirst int64      `json:"txn_first,omitempty"`
	TxnLast  int64      `json:"txn_last,omitempty"`
	// Deleted marks a tombstone: the entity no longer exists at this visibility.
	Deleted bool `json:"deleted,omitempty"`
	// Data is the entity's JSON (a Product, a Post…); empty for tombstones and heads.
	Data json.RawMessage `json:"data,omitempty"`
	// Digest, on a head marker only, is the log's live state after the head's version, as the
	// relay published it. Heads without one (a relay that has not adopted the log yet) are
	// trusted as before.
	Digest *LogDigest `json:"digest,omitempty"`
	// Decoded is what a sink decoded from Data ahead of applying the change (a feed.Preparer
	// running on another goroutine), for that sink's own use. It is not part of the wire form:
	// Encode leaves it out and DecodeChange never sets it.
	Decoded any `json:"-"`
}

// Key is the change's subject suffix below its log: "<vis>.<kind>.<id>".
func (c *Change) Key() string { return string(c.Vis) + "." + string(c.Kind) + "." + c.ID }

// IsHead reports whether the change is a log head marker.
func (c *Change) IsHead() bool { return c.Kind == KindHead }

// Encode returns the change's wire form.
func (c *Change) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		// Every field of Change marshals; Data is validated JSON from json.Marshal.
		panic("schema: encode change: " + err.Error())
	}
	return b
}

// DecodeChange parses and checks a change's wire form. It never panics on malformed input. A
// change of a schema newer than this build reads is refused with an *UnsupportedSchemaError.
//
// The form the relay writes is parsed without reflection (decodeChangeFast); anything else
// (unknown or differently cased keys, a digest, odd values…) takes encoding/json, with the same
// result either way.
func DecodeChange(b []byte) (*Change, error) {
	c, ok := decodeChangeFast(b)
	if !ok {
		var err error
		if c, err = decodeChangeJSON(b); err != nil {
			if u := newerSchema(b); u != nil {
				return nil, u
			}
			return nil, err
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeChangeJSON is DecodeChange's parse by encoding/json: one document, no unknown fields.
func decodeChangeJSON(b []byte) (*Change, error) {
	var c Change
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("schema: decode change: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("schema: decode change: trailing data")
	}
	return &c, nil
}

// Check validates a change's envelope: schema version, subject-safe tokens, version bounds.
func (c *Change) Check() error {
	if c.Schema > ChangeSchemaVersion {
		e := &UnsupportedSchemaError{Schema: c.Schema}
		if c.Log == PlatformLog || ValidateTenantSlug(c.Log) == nil {
			e.Log = c.Log
		}
		return e
	}
	if c.Schema < OldestChangeSchema {
		return fmt.Errorf("schema: change schema %d not supported (this build reads %d to %d)", c.Schema, OldestChangeSchema, ChangeSchemaVersion)
	}
	if c.Log != PlatformLog {
		if err := ValidateTenantSlug(c.Log); err != nil {
			return fmt.Errorf("schema: change log %q is not a tenant slug", c.Log)
		}
	}
	if c.Vis != Pub && c.Vis != Priv {
		return fmt.Errorf("schema: change visibility %q", c.Vis)
	}
	if !SubjectToken(string(c.Kind)) || !SubjectToken(c.ID) {
		return fmt.Errorf("schema: change kind or id is not a subject token")
	}
	if c.Version < 0 || c.TxnFirst < 0 || c.TxnLast < 0 {
		return fmt.Errorf("schema: negative version")
	}
	if c.Kind == KindHead {
		if c.Deleted || len(c.Data) != 0 {
			return fmt.Errorf("schema: head carries no data")
		}
		if d := c.Digest; d != nil && (d.PubCount < 0 || d.PrivCount < 0) {
			return fmt.Errorf("schema: head digest with a negative count")
		}
		return nil
	}
	if c.Digest != nil {
		return fmt.Errorf("schema: only a head carries a digest")
	}
	if c.Version == 0 || c.TxnFirst > c.Version || c.TxnLast < c.Version {
		return fmt.Errorf("schema: version %d outside its transaction %d..%d", c.Version, c.TxnFirst, c.TxnLast)
	}
	hasData := len(c.Data) > 0 && string(bytes.TrimSpace(c.Data)) != "null"
	if c.Deleted != !hasData || (len(c.Data) > 0 && !hasData) {
		return fmt.Errorf("schema: a change has data exactly when it is not a tombstone")
	}
	return nil
}

// SubjectToken reports whether s can be one token of a NATS subject as Vitrine writes them:
// 1–200 bytes of letters, digits, '-', '_'.
func SubjectToken(s string) bool {
	if len(s) == 0 || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// MaxChangesPerTxn bounds a replicated transaction so that it always fits one atomic publish batch
// (the stream's limit is 1000 messages including the head marker). Bulk writes split their work
// into transactions below it.
const MaxChangesPerTxn = 900

// NewChange builds the change for one entity value. v must marshal to JSON; a nil v makes a
// tombstone.
func NewChange(log string, kind Kind, id string, vis Visibility, v any) Change {
	c := Change{Schema: ChangeSchemaVersion, Log: log, Kind: kind, ID: id, Vis: vis}
	if v == nil {
		c.Deleted = true
		return c
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("schema: marshal entity: " + err.Error())
	}
	if string(b) == "null" { // a typed nil pointer: a tombstone too
		c.Deleted = true
		return c
	}
	c.Data = b
	return c
}

// IDString formats an integer id as a change id.
func IDString[T ~int64](id T) string { return strconv.FormatInt(int64(id), 10) }

// Digest summarises a set of entity states, so that a replica and the database can be compared
// without shipping either. Add order does not matter.
type Digest struct {
	lines []string
}

// Add records one entity state at one visibility. data is the entity's JSON (which carries the
// entity's version). The log position of the change that carried it is deliberately left out: a
// rebuilt stream carries the same states at other positions.
func (d *Digest) Add(log string, kind Kind, id string, vis Visibility, data []byte) {
	sum := sha256.Sum256(data)
	d.lines = append(d.lines, log+"/"+string(vis)+"/"+string(kind)+"/"+id+":"+hex.EncodeToString(sum[:12]))
}

// Len is the number of entity states added.
func (d *Digest) Len() int { return len(d.lines) }

// Sum returns the digest in hex.
func (d *Digest) Sum() string {
	sort.Strings(d.lines)
	h := sha256.New()
	for _, l := range d.lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Diff returns up to n lines present in exactly one of a and b, for test failure messages.
func (d *Digest) Diff(other *Digest, n int) []string {
	sort.Strings(d.lines)
	sort.Strings(other.lines)
	in := map[string]int{}
	for _, l := range d.lines {
		in[l]++
	}
	for _, l := range other.lines {
		in[l]--
	}
	var out []string
	for l, c := range in {
		if c > 0 {
			out = append(out, "- "+l)
		} else if c < 0 {
			out = append(out, "+ "+l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.TrimLeft(out[i], "+- ") < strings.TrimLeft(out[j], "+- ") })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
