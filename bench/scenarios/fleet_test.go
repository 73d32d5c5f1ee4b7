package scenarios

import (
	"reflect"
	"testing"

	"vitrine/deploy/fleet"
)

// The balancer sends only to backends ready at their last poll, round-robin, and says so when
// none is.
func TestBalancer(t *testing.T) {
	tests := []struct {
		name  string
		ready []bool
		picks int
		want  map[int]int // backend → picks
		none  bool
	}{
		{"all ready share evenly", []bool{true, true}, 10, map[int]int{0: 5, 1: 5}, false},
		{"a draining backend gets nothing", []bool{true, false, true}, 10, map[int]int{0: 5, 2: 5}, false},
		{"one left takes everything", []bool{false, true}, 7, map[int]int{1: 7}, false},
		{"none ready", []bool{false, false}, 3, map[int]int{}, true},
		{"no backends", nil, 2, map[int]int{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBalancer(len(tc.ready))
			for i, ok := range tc.ready {
				b.set(i, ok)
			}
			got := map[int]int{}
			for range tc.picks {
				i, ok := b.pick()
				if ok == tc.none {
					t.Fatalf("pick ok = %v, want %v", ok, !tc.none)
				}
				if ok {
					got[i]++
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("picks %v, want %v", got, tc.want)
			}
		})
	}
	// Readiness changes take effect at the next pick.
	b := newBalancer(2)
	b.set(0, true)
	if i, _ := b.pick(); i != 0 {
		t.Fatalf("picked %d with only 0 ready", i)
	}
	b.set(0, false)
	b.set(1, true)
	for range 3 {
		if i, ok := b.pick(); !ok || i != 1 {
			t.Fatalf("picked %d %v after 0 went unready", i, ok)
		}
	}
}

// portDelta keeps only the ports that carried frames between the readings, new ones included.
func TestPortDelta(t *testing.T) {
	before := map[string]fleet.Count{"tcp/7422": {Frames: 10, Bytes: 1000}, "tcp/4222": {Frames: 3, Bytes: 300}}
	after := map[string]fleet.Count{"tcp/7422": {Frames: 15, Bytes: 1600}, "tcp/4222": {Frames: 3, Bytes: 300}, "tcp/8081": {Frames: 2, Bytes: 120}}
	want := map[string]fleet.Count{"tcp/7422": {Frames: 5, Bytes: 600}, "tcp/8081": {Frames: 2, Bytes: 120}}
	if got := portDelta(before, after); !reflect.DeepEqual(got, want) {
		t.Fatalf("portDelta = %v, want %v", got, want)
	}
	if got := portDelta(nil, nil); len(got) != 0 {
		t.Fatalf("portDelta of nothing = %v", got)
	}
}

// metricLines picks samples by metric name, never comments, and not by label values.
func TestMetricLines(t *testing.T) {
	body := []byte("# HELP vitrine_feed_bootstraps_total x\n# TYPE vitrine_feed_bootstraps_total counter\n" +
		"vitrine_feed_bootstraps_total{process=\"edge\"} 1\n" +
		"vitrine_edge_hits_total{why=\"reset\"} 9\n" +
		"vitrine_feed_staleness_seconds{process=\"edge\",shard=\"0\"} 12.5\n\n" +
		"vitrine_follower_resets_total 0\n")
	want := []string{`vitrine_feed_bootstraps_total{process="edge"} 1`, `vitrine_feed_staleness_seconds{process="edge",shard="0"} 12.5`, "vitrine_follower_resets_total 0"}
	if got := metricLines(body, "bootstrap", "reset", "staleness"); !reflect.DeepEqual(got, want) {
		t.Fatalf("metricLines = %q, want %q", got, want)
	}
	if got := metricLines(nil, "x"); got != nil {
		t.Fatalf("metricLines of nothing = %q", got)
	}
}

// readyStatus and compactJSON read /readyz bodies, whatever they hold.
func TestReadyBody(t *testing.T) {
	for _, tc := range []struct {
		body, status string
	}{
		{`{"status": "draining"}`, "draining"},
		{`{"status":"degraded","shards":[{"stale_s":12}]}`, "degraded"},
		{`not json`, ""},
		{``, ""},
	} {
		if got := readyStatus([]byte(tc.body)); got != tc.status {
			t.Errorf("readyStatus(%q) = %q, want %q", tc.body, got, tc.status)
		}
	}
	if got := compactJSON([]byte(`{ "a" : 1 }`), 100); got != `{"a":1}` {
		t.Errorf("compactJSON = %q", got)
	}
	if got := compactJSON([]byte(`abcdef`), 3); got != "abc" {
		t.Errorf("compactJSON cut = %q", got)
	}
}

// bootstrapLines keeps only the bootstrap counters, so before and after compare as strings.
func TestBootstrapLines(t *testing.T) {
	samples := []string{`vitrine_follower_snapshot_bootstraps_total{process="edge"} 0`, `vitrine_feed_staleness_seconds{process="edge",shard="0"} 57.6`,
		`vitrine_feed_bootstraps_total{process="edge"} 1`}
	if got, want := bootstrapLines(samples), "follower_snapshot_bootstraps_total=0,feed_bootstraps_total=1"; got != want {
		t.Fatalf("bootstrapLines = %q, want %q", got, want)
	}
	if got := bootstrapLines(nil); got != "" {
		t.Fatalf("bootstrapLines of nothing = %q", got)
	}
}
