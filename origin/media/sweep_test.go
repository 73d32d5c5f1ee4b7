package media

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// The sweeper removes what failed uploads and deletions left (claims pending or deleted for an
// hour, with their blobs; old blobs no claim names) and nothing else.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := New(nil, db, Posts{}, nil, Config{Blobs: fs})
	put := func(file string) {
		t.Helper()
		if _, err := fs.Put(ctx, schema.MediaBlobName(tn.ID, file), "image/png", bytes.NewReader([]byte(file))); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(files ...string) {
		t.Helper()
		if _, _, err := db.ClaimMediaFiles(ctx, tn, 1, func(int) []string { return files }); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			put(f)
		}
	}
	claim("2026/11/live.png", "2026/11/live-150x150.png")
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		return tx.BindMediaFiles(ctx, tn, 5, []string{"2026/11/live.png", "2026/11/live-150x150.png"})
	}); err != nil {
		t.Fatal(err)
	}
	claim("2026/11/crashed.png") // an upload that never committed
	put("2026/11/orphan.png")    // a blob whose claim is gone
	claim("2026/11/deleted.png") // a deletion whose blob was not removed
	if _, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := tx.BindMediaFiles(ctx, tn, 6, []string{"2026/11/deleted.png"}); err != nil {
			return err
		}
		_, err := tx.DropMediaFiles(ctx, tn, 6)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		fs.Walk(ctx, "media/", func(i blob.Info) error { out = append(out, i.Name); return nil })
		slices.Sort(out)
		return out
	}

	// Nothing is an hour old yet.
	if n, err := s.Sweep(ctx, time.Now(), SweepAge); err != nil || n != (Swept{}) || len(names()) != 5 {
		t.Fatalf("early sweep: %+v %v, left %v", n, err, names())
	}
	// Two hours later the leftovers go, the live attachment's files stay.
	n, err := s.Sweep(ctx, time.Now().Add(2*time.Hour), SweepAge)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schema.MediaBlobName(tn.ID, "2026/11/live-150x150.png"), schema.MediaBlobName(tn.ID, "2026/11/live.png")}
	if got := names(); !slices.Equal(got, want) || n != (Swept{Claims: 2, Orphans: 1}) {
		t.Fatalf("after the sweep: %v (%+v), want %v", got, n, want)
	}
	// The swept names are free again; the live ones are not.
	if c, _, err := db.ClaimMediaFiles(ctx, tn, 1, func(int) []string {
		return []string{"2026/11/crashed.png", "2026/11/orphan.png", "2026/11/deleted.png"}
	}); err != nil || c != 1 {
		t.Errorf("swept names not free: %d %v", c, err)
	}
	if _, _, err := db.ClaimMediaFiles(ctx, tn, 1, func(int) []string { return []string{"2026/11/live.png"} }); err == nil {
		t.Error("a live name was claimed")
	}
}
