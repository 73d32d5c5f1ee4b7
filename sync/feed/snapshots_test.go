package feed

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"vitrine/schema"
)

// recordingSink records what it is handed, in order.
type recordingSink struct{ got []string }

func (s *recordingSink) Reset(string)            {}
func (s *recordingSink) Checkpoint()             {}
func (s *recordingSink) Change(c *schema.Change) { s.got = append(s.got, "change "+c.ID) }
func (s *recordingSink) Annex(a Annex)           { s.got = append(s.got, "annex "+a.Log) }

// plainSink is a Sink that is not an AnnexSink.
type plainSink struct{ n int }

func (s *plainSink) Reset(string)          {}
func (s *plainSink) Checkpoint()           {}
func (s *plainSink) Change(*schema.Change) { s.n++ }

// An AnnexSink is handed every part's annexes before any change; another Sink gets the changes
// alone.
func TestDeliverSnapshotsAnnexesFirst(t *testing.T) {
	part := func(shard string, ids []int, logs ...string) SnapshotPart {
		p := SnapshotPart{Shard: shard, Records: func(fn func(subject string, data []byte) error) error {
			for _, id := range ids {
				c := &schema.Change{Schema: schema.ChangeSchemaVersion, Log: "alpha", Kind: schema.KindCategory, ID: fmt.Sprint(id), Vis: schema.Pub,
					Version: int64(id), TxnFirst: int64(id), TxnLast: int64(id), Data: []byte(`{"id":1}`)}
				if err := fn("vitrine."+shard+".alpha.pub.category."+c.ID, c.Encode()); err != nil {
					return err
				}
			}
			return nil
		}}
		for _, l := range logs {
			p.Annexes = append(p.Annexes, Annex{Kind: AnnexSearchIndex, Log: l, Version: 1})
		}
		return p
	}
	parts := []SnapshotPart{part("0", []int{1, 2}, "alpha"), part("1", []int{3}, "beta", "gamma")}
	rs := &recordingSink{}
	if n, bad, err := DeliverSnapshots(context.Background(), rs, parts); err != nil || bad != 0 || n != 3 {
		t.Fatalf("delivered %d, %d malformed, %v", n, bad, err)
	}
	want := []string{"annex alpha", "annex beta", "annex gamma", "change 1", "change 2", "change 3"}
	if !slices.Equal(rs.got, want) {
		t.Fatalf("sink got %q, want %q", rs.got, want)
	}
	ps := &plainSink{}
	if n, _, err := DeliverSnapshots(context.Background(), ps, parts); err != nil || n != 3 || ps.n != 3 {
		t.Fatalf("plain sink: delivered %d (%d), %v", n, ps.n, err)
	}
}
