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

// ChangeSchemaVersion is the version of the Change encoding. Readers refuse messages of a newer
// schema rather than guess at them.
const ChangeSchemaVersion = 1

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

// DecodeChange parses and checks a change's wire form. It never panics on malformed input.
//
// The form the relay writes is parsed without reflection (decodeChangeFast); anything else
// (unknown or differently cased keys, a digest, odd values…) takes encoding/json, with the same
// result either way.
func DecodeChange(b []byte) (*Change, error) {
	c, ok := decodeChangeFast(b)
	if !ok {
		var err error
		if c, err = decodeChangeJSON(b); err != nil {
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
	if c.Schema < 1 || c.Schema > ChangeSchemaVersion {
		return fmt.Errorf("schema: change schema %d not supported (this build reads up to %d)", c.Schema, ChangeSchemaVersion)
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
