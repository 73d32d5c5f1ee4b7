package snapshot

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

// A snapshot holding a change of a newer schema than this build reads (written by an upgraded
// writer) is loaded like the stream: that change is skipped and counted as unsupported, the Sink
// is not told it is malformed, and every other record is applied.
func TestSnapshotNewerSchemaIsUnsupported(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	b.tx("alpha", 0, products(0, 20, "a"))
	obs, _, s, recs := shardSnapshot(t, b)
	// Rewrite one product's record in a newer schema, as an upgraded relay would have written it.
	newer := schema.ChangeSchemaVersion + 1
	rewritten := ""
	for i, r := range recs {
		var v map[string]any
		if json.Unmarshal(r.Data, &v) != nil || v["kind"] != "product" {
			continue
		}
		v["schema"] = newer
		v["colour"] = "red"
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = Record{Seq: r.Seq, Subject: r.Subject, Data: data}
		rewritten = r.Subject
		break
	}
	if rewritten == "" {
		t.Fatal("no product record in the snapshot")
	}
	withNewer, err := Encode(s.Header(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "shard-0", withNewer); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(ctx, b.js, "")
	if err != nil {
		t.Fatal(err)
	}
	want := &recSink{}
	b.follow(b.fc.PublicFilters(nil), want, nil)
	got := &recSink{}
	fol := b.follow(b.fc.PublicFilters(nil), got, src)
	waitUntil(t, "both followers checkpointed", func() bool { return want.checkpoints.Load() > 0 && got.checkpoints.Load() > 0 })
	st := fol.Stats()
	if st.FromSnapshot != 1 || st.SnapshotFallbacks != 0 {
		t.Fatalf("stats %+v: want a snapshot bootstrap", st)
	}
	if st.Unsupported != 1 || st.Malformed != 0 || st.UnsupportedSchema != newer {
		t.Fatalf("stats %+v: want the newer change counted unsupported (schema %d), none malformed", st, newer)
	}
	// Every state the stream gives but the rewritten one (the stream still holds it in the
	// schema this build reads).
	skipped := "alpha/" + strings.TrimPrefix(rewritten, b.fc.Prefix+".0.alpha.")
	states := want.snapshot()
	if _, ok := states[skipped]; !ok {
		t.Fatalf("the stream follower has no state %s: %v", skipped, slices.Sorted(maps.Keys(states)))
	}
	delete(states, skipped)
	if g := got.snapshot(); !maps.Equal(g, states) {
		t.Fatalf("from the snapshot %d states, want the stream's %d but %s", len(g), len(states), skipped)
	}
}
