package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

// changeRecords returns records of every shape a snapshot meets: entity states and tombstones of
// both visibilities, heads with and without digests, registry entries, messages of a newer
// schema, malformed ones, data that also appears elsewhere in its message, and states larger
// than the blocks Changes reads into.
func changeRecords(t testing.TB) []Record {
	t.Helper()
	var recs []Record
	add := func(subject string, data []byte) {
		recs = append(recs, Record{Seq: uint64(len(recs) + 1), Subject: subject, Data: data})
	}
	enc := func(c schema.Change) []byte { return c.Encode() }
	for i := range 300 {
		id := fmt.Sprint(i + 1)
		vis := schema.Pub
		if i%7 == 3 {
			vis = schema.Priv
		}
		var v any = map[string]any{"id": i + 1, "slug": "p-" + id, "title": strings.Repeat("word ", i%13)}
		if i%11 == 5 {
			v = nil // a tombstone
		}
		c := schema.NewChange("alpha", schema.KindProduct, id, vis, v)
		c.Version, c.TxnFirst, c.TxnLast = int64(i+1), int64(i+1), int64(i+1)
		add("vitrine.0.alpha."+c.Key(), enc(c))
	}
	big := schema.NewChange("beta", schema.KindPost, "9", schema.Pub, map[string]string{"content": strings.Repeat("x", 3<<20)})
	big.Version, big.TxnFirst, big.TxnLast = 5, 5, 5
	add("vitrine.0.beta.pub.post.9", enc(big))
	cur := schema.NewChange("beta", schema.KindCurrency, "USD", schema.Pub, map[string]string{"code": "USD"})
	cur.Version, cur.TxnFirst, cur.TxnLast = 6, 6, 7
	add("vitrine.0.beta.pub.currency.USD", enc(cur))
	reg := schema.NewChange(schema.PlatformLog, schema.KindTenant, "beta", schema.Pub, map[string]any{"slug": "beta", "shard": 0})
	reg.Version, reg.TxnFirst, reg.TxnLast = 3, 3, 3
	add("vitrine._platform.tenant.beta", enc(reg))
	add("vitrine.0.beta.pub.log.head", enc(schema.Change{Schema: schema.ChangeSchemaVersion, Log: "beta", Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: 7,
		Digest: &schema.LogDigest{PubCount: 2}}))
	add("vitrine.0.alpha.pub.log.head", enc(schema.Change{Schema: schema.ChangeSchemaVersion, Log: "alpha", Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: 300}))
	// Data that also appears inside another field of its message: no envelope.
	add("vitrine.0.gamma.pub.product.1", []byte(`{"schema":1,"log":"gamma","kind":"product","id":"1","vis":"pub","version":1,"txn_first":1,"txn_last":1,"data":1}`))
	add("vitrine.0.gamma.pub.product.2", []byte(`{"schema":1,"log":"gamma","kind":"product","id":"2","vis":"pub","version":2,"txn_first":2,"txn_last":2,"data":{"a":1} }`))
	add("vitrine.0.gamma.pub.product.3", []byte(`{"schema":1,"log":"gamma","kind":"product","id":"3","vis":"pub","version":3,"txn_first":3,"txn_last":3,"deleted":true,"data":null}`))
	add("vitrine.0.gamma.pub.product.4", []byte(`{"schema":99,"log":"gamma","kind":"product","id":"4","vis":"pub","version":4,"data":{}}`))
	add("vitrine.0.gamma.pub.product.5", []byte(`{"schema":1,"log":"gamma","kind":"product","id":"5"`))
	add("vitrine.0.gamma.pub.product.6", []byte(`not json`))
	add("vitrine.0.gamma.pub.widget.7", []byte(`{"schema":1,"log":"gamma","kind":"widget","id":"7","vis":"pub","version":7,"txn_first":7,"txn_last":7,"data":{"w":[1,2]}}`))
	add("vitrine.0.gamma.pub.product.8", []byte{})
	return recs
}

// TestChangesEqualDecodeChange: every record read through Changes is the change
// schema.DecodeChange makes of its data (or, without an envelope, the data itself), in order,
// with the subject; and Records still returns the data as written.
func TestChangesEqualDecodeChange(t *testing.T) {
	recs := changeRecords(t)
	b, err := Encode(Header{Epoch: "e", Created: time.Unix(1, 0), Shard: "0", Seq: uint64(len(recs))}, recs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	i, withEnv := 0, 0
	err = s.Changes(func(subject string, c *schema.Change, data []byte) error {
		r := recs[i]
		i++
		if subject != r.Subject || string(data) != string(r.Data) {
			t.Fatalf("record %d: subject %q data %.80q, want %q %.80q", i-1, subject, data, r.Subject, r.Data)
		}
		want, werr := schema.DecodeChange(r.Data)
		if c == nil {
			if werr == nil && want.Digest == nil && !want.IsHead() && strings.Count(string(r.Data), string(want.Data)) == 1 {
				t.Errorf("record %d (%s) has no envelope", i-1, r.Subject)
			}
			return nil
		}
		withEnv++
		if werr != nil {
			t.Fatalf("record %d: envelope decoded where DecodeChange fails: %v", i-1, werr)
		}
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("record %d: %+v, want %+v", i-1, c, want)
		}
		return nil
	})
	if err != nil || i != len(recs) {
		t.Fatalf("Changes: %d of %d records, %v", i, len(recs), err)
	}
	if withEnv < 300 {
		t.Fatalf("only %d records had envelopes", withEnv)
	}
	got, err := readAll(s)
	if err != nil || len(got) != len(recs) {
		t.Fatalf("Records: %d, %v", len(got), err)
	}
	for k := range recs {
		if got[k].Seq != recs[k].Seq || got[k].Subject != recs[k].Subject || string(got[k].Data) != string(recs[k].Data) {
			t.Fatalf("Records: record %d differs", k)
		}
	}
	// Written again from what Records returned (an incremental pass), the snapshot is the same.
	again, err := Encode(s.Header(), got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again[:len(again)-8]) != string(b[:len(b)-8]) {
		t.Fatal("re-encoding the records read back changed the snapshot")
	}
}

// TestChangesCorrupt: truncated or trailing record bytes are refused as by Records.
func TestChangesCorrupt(t *testing.T) {
	recs := changeRecords(t)[:20]
	h := Header{Epoch: "e", Created: time.Unix(1, 0), Shard: "0", Seq: 100}
	for _, c := range []struct {
		name    string
		records uint64
	}{{"fewer records than counted", 21}, {"more records than counted", 19}} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Encode(h, recs)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(b)
			if err != nil {
				t.Fatal(err)
			}
			s.h.Records = c.records
			n := 0
			err = s.Changes(func(string, *schema.Change, []byte) error { n++; return nil })
			if err == nil || !strings.Contains(err.Error(), ErrCorrupt.Error()) {
				t.Fatalf("Changes = %v after %d records, want corrupt", err, n)
			}
			if rerr := s.Records(func(Record) error { return nil }); rerr == nil {
				t.Fatal("Records accepted it")
			}
		})
	}
}

// TestOlderFormatRefused: a snapshot of format 1 (records without envelopes), as a writer of the
// previous build left it in the bucket, is refused with ErrVersion: the edge bootstraps from the
// stream and the writer makes a full pass.
func TestOlderFormatRefused(t *testing.T) {
	_, _, b := sampleSnapshot(t, 3)
	binary.BigEndian.PutUint32(b[len(Magic):], 1)
	end := len(b) - checksumLen
	binary.BigEndian.PutUint64(b[end:], xxhashSum(b[:end]))
	if _, err := Open(b); !errors.Is(err, ErrVersion) || Reason(err) != "version" {
		t.Fatalf("Open = %v, want %v", err, ErrVersion)
	}
}
