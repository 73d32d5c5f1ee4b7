package schema_test

import (
	"testing"

	"vitrine/schema"
)

func TestSlotVis(t *testing.T) {
	for _, c := range []struct {
		key  string
		want schema.Visibility
	}{
		{"pub.product.1", schema.Pub},
		{"priv.product.1", schema.Priv},
		{"priv", schema.Pub},
		{"privy.x.1", schema.Pub},
		{"", schema.Pub},
	} {
		if got := schema.SlotVis(c.key); got != c.want {
			t.Errorf("SlotVis(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

// A digest kept incrementally through AdvanceDigest equals one summed afresh over the final live
// states, whatever the history: updates, visibility moves, deletions, re-creations, a key
// written twice in one batch.
func TestAdvanceDigestMatchesAFreshSum(t *testing.T) {
	row := func(v int64, key string, deleted bool) schema.OutboxRow {
		return schema.OutboxRow{Version: v, TxnFirst: v, TxnLast: v, Key: key, Deleted: deleted}
	}
	batches := [][]schema.OutboxRow{
		{row(1, "pub.product.1", false), row(2, "priv.product.1", false), row(3, "pub.variant.7", false)},
		{row(4, "pub.product.1", true), row(5, "priv.product.1", false)}, // product 1 leaves the public model
		{row(6, "pub.variant.7", false), row(7, "pub.variant.7", true)},  // twice in one batch, then gone
		{row(8, "pub.product.1", false), row(9, "pub.post.3", false)},    // back, and a post
		{row(10, "pub.post.3", false)},
	}
	var d schema.LogDigest
	live := map[string]int64{}
	for _, b := range batches {
		prev := map[string]int64{}
		for _, r := range b {
			if v, ok := live[r.Key]; ok {
				prev[r.Key] = v
			}
		}
		var changes []schema.SlotChange
		d, changes = schema.AdvanceDigest(d, prev, b)
		for _, c := range changes {
			if c.Deleted {
				delete(live, c.Key)
			} else {
				live[c.Key] = c.Version
			}
		}
	}
	var fresh schema.LogDigest
	for k, v := range live {
		fresh.Add(schema.SlotVis(k), k, v)
	}
	if d != fresh {
		t.Fatalf("incremental %+v, fresh %+v", d, fresh)
	}
	want := map[string]int64{"pub.product.1": 8, "priv.product.1": 5, "pub.post.3": 10}
	if len(live) != len(want) {
		t.Fatalf("live states %v, want %v", live, want)
	}
	for k, v := range want {
		if live[k] != v {
			t.Fatalf("live states %v, want %v", live, want)
		}
	}
	if d.PubCount != 2 || d.PrivCount != 1 {
		t.Fatalf("counts %+v", d)
	}
	if !d.Matches(fresh, true) || d.Matches(schema.LogDigest{PubCount: 2, PubSum: d.PubSum + 1}, false) {
		t.Fatal("Matches")
	}
	// The private side matters only to a replica that follows it.
	other := d
	other.PrivSum++
	if !d.Matches(other, false) || d.Matches(other, true) {
		t.Fatal("Matches with and without the private states")
	}
}

// DigestTerm distinguishes keys and versions, including nearby ones.
func TestDigestTermSpreads(t *testing.T) {
	seen := map[uint64]string{}
	for _, key := range []string{"pub.product.1", "pub.product.2", "priv.product.1", "pub.variant.1"} {
		for v := int64(1); v <= 1000; v++ {
			h := schema.DigestTerm(key, v)
			if prev, ok := seen[h]; ok {
				t.Fatalf("%s@%d collides with %s", key, v, prev)
			}
			seen[h] = key
		}
	}
}

// Only a head carries a digest, and never a negative count.
func TestChangeDigestChecks(t *testing.T) {
	head := schema.Change{Schema: schema.ChangeSchemaVersion, Log: "shop", Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: 3,
		Digest: &schema.LogDigest{PubCount: 2, PubSum: 9}}
	if _, err := schema.DecodeChange(head.Encode()); err != nil {
		t.Fatalf("head with a digest: %v", err)
	}
	head.Digest.PrivCount = -1
	if _, err := schema.DecodeChange(head.Encode()); err == nil {
		t.Fatal("a negative count decoded")
	}
	c := schema.NewChange("shop", schema.KindProduct, "1", schema.Pub, map[string]int{"id": 1})
	c.Version, c.TxnFirst, c.TxnLast = 1, 1, 1
	c.Digest = &schema.LogDigest{}
	if _, err := schema.DecodeChange(c.Encode()); err == nil {
		t.Fatal("an entity change with a digest decoded")
	}
}

// DigestTermOf, what replicas compute from a change's parts, equals DigestTerm of its key, what
// the relay computes from an outbox row.
func TestDigestTermOfParts(t *testing.T) {
	for _, c := range []struct {
		vis  schema.Visibility
		kind schema.Kind
		id   string
	}{{schema.Pub, schema.KindProduct, "12"}, {schema.Priv, schema.KindPost, "7"}, {schema.Pub, schema.KindCurrency, "EUR"}} {
		ch := schema.Change{Vis: c.vis, Kind: c.kind, ID: c.id}
		for _, v := range []int64{1, 99, 1 << 40} {
			if schema.DigestTermOf(c.vis, c.kind, c.id, v) != schema.DigestTerm(ch.Key(), v) {
				t.Fatalf("%s@%d: the parts hash differently from the key", ch.Key(), v)
			}
		}
	}
}
