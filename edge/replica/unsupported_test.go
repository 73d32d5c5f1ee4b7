package replica_test

import (
	"slices"
	"testing"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// Changes of a newer schema that the follower skipped are recorded per log, newest schema and
// count, and leave the log's state, version and readiness as they were: the edge keeps serving
// the last state it could read.
func TestUnsupportedChangesKeepTheLastState(t *testing.T) {
	s := newSite(t, replica.Config{})
	if got := s.r.UnsupportedLogs(); got == nil || len(got) != 0 {
		t.Fatalf("UnsupportedLogs() = %#v before any, want empty and not nil", got)
	}
	tn := s.bootstrap("e1")
	version := tn.Version()
	skipped := []struct {
		log    string
		schema int
	}{
		{"shop", schema.ChangeSchemaVersion + 1},
		{"shop", schema.ChangeSchemaVersion + 2},
		{"shop", schema.ChangeSchemaVersion + 1},
		{schema.PlatformLog, schema.ChangeSchemaVersion + 1},
	}
	for _, sk := range skipped {
		s.r.Unsupported(sk.log, sk.schema)
	}
	s.r.Checkpoint()
	got := s.r.UnsupportedLogs()
	type row struct {
		log     string
		schema  int
		skipped uint64
	}
	var rows []row
	for _, u := range got {
		if u.Last.IsZero() {
			t.Errorf("%s: no last_seen", u.Log)
		}
		rows = append(rows, row{u.Log, u.Schema, u.Skipped})
	}
	want := []row{{schema.PlatformLog, schema.ChangeSchemaVersion + 1, 1}, {"shop", schema.ChangeSchemaVersion + 2, 3}}
	if !slices.Equal(rows, want) {
		t.Fatalf("UnsupportedLogs() = %+v, want %+v", rows, want)
	}
	tn = s.r.TenantBySlug("shop")
	if tn == nil || !tn.Ready() || !s.r.Ready() || tn.Version() != version {
		t.Fatalf("after skipped changes: tenant %v, want ready at version %d", tn, version)
	}
	if p := tn.Snapshot().ProductBySlug("alpha"); p == nil || p.ID != 10 {
		t.Fatalf("product alpha gone after skipped changes: %+v", p)
	}
	if s.r.ResyncWanted() != "" {
		t.Fatalf("the replica asks for a new bootstrap: %s", s.r.ResyncWanted())
	}
}
