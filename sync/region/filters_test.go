package region_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/region"
)

// The state mirror's filters carry exactly what an edge's follower reads: every registry and
// public subject, no private one, and they do not overlap (nats-server refuses overlapping
// filters on a mirror).
func TestStateFilters(t *testing.T) {
	cfg := feed.Config{}.WithDefaults()
	filters := region.StateFilters(cfg)
	if len(filters) != 2 || server.SubjectsCollide(filters[0], filters[1]) {
		t.Fatalf("filters %q overlap", filters)
	}
	reg := schema.NewChange(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, nil)
	for _, tc := range []struct {
		subject string
		want    bool
	}{
		{cfg.Subject(0, schema.PlatformLog, reg.Key()), true},
		{cfg.HeadSubject(0, schema.PlatformLog), true},
		{cfg.Subject(3, "shop", "pub.product.12"), true},
		{cfg.HeadSubject(3, "shop"), true},
		{cfg.Subject(3, "shop", "priv.post.7"), false},
		{cfg.Subject(3, "shop", "priv.user.1"), false},
	} {
		got := false
		for _, f := range filters {
			got = got || server.SubjectMatchesFilter(tc.subject, f)
		}
		read := false
		for _, f := range cfg.PublicFilters(nil) {
			read = read || server.SubjectMatchesFilter(tc.subject, f)
		}
		if got != tc.want || got != read {
			t.Errorf("%s: mirrored %v, followed %v, want %v", tc.subject, got, read, tc.want)
		}
	}
}
