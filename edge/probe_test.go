package edge_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"vitrine/edge"
	"vitrine/sync/natstest"

	"vitrine/schema"
)

// What an edge answers a lag probe: the store's applied and seen versions, whether it serves
// it, its staleness; nothing for a store of a shard it does not serve.
func TestProbeAnswer(t *testing.T) {
	f := newFixture(t, edge.Config{})
	now := time.Now()
	for _, tc := range []struct {
		name    string
		req     schema.LagProbe
		cfg     edge.ProbeConfig
		answers bool
		want    schema.LagProbeReply
	}{
		{name: "a store it serves", req: schema.LagProbe{Tenant: "demo"}, cfg: edge.ProbeConfig{Name: "e1", Region: "eu"}, answers: true,
			want: schema.LagProbeReply{Edge: "e1", Region: "eu", Tenant: "demo", Serving: true, Version: f.feed.versions["demo"], Seen: f.feed.versions["demo"]}},
		{name: "a store it does not know", req: schema.LagProbe{Tenant: "nope"}, cfg: edge.ProbeConfig{Name: "e1"}, answers: true,
			want: schema.LagProbeReply{Edge: "e1", Tenant: "nope"}},
		{name: "its shard among others", req: schema.LagProbe{Tenant: "other"}, cfg: edge.ProbeConfig{Name: "e1", Shards: []int{3, 0}}, answers: true,
			want: schema.LagProbeReply{Edge: "e1", Tenant: "other", Serving: true, Version: f.feed.versions["other"], Seen: f.feed.versions["other"]}},
		{name: "another shard", req: schema.LagProbe{Tenant: "demo", Shard: 0}, cfg: edge.ProbeConfig{Name: "e1", Shards: []int{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := f.srv.Probe(tc.req, tc.cfg, now)
			if ok != tc.answers {
				t.Fatalf("answers %v, want %v", ok, tc.answers)
			}
			if !ok {
				return
			}
			if got.StalenessSeconds < 0 || got.StalenessSeconds > 60 {
				t.Errorf("staleness %v s", got.StalenessSeconds)
			}
			got.StalenessSeconds = 0
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeProbeRequest(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"tenant":"demo","shard":0}`, true},
		{`{"tenant":"demo"}`, true},
		{`{"tenant":"demo","shard":4,"extra":[1,2]}`, true},
		{`{"tenant":""}`, false},
		{`{"shard":1}`, false},
		{`{"tenant":"demo","shard":-1}`, false},
		{`{"tenant":7}`, false},
		{`[]`, false},
		{``, false},
		{`{"tenant":"` + strings.Repeat("a", schema.MaxLagProbeBytes) + `"}`, false},
	} {
		if _, ok := edge.DecodeProbeRequest([]byte(tc.in)); ok != tc.ok {
			t.Errorf("%.60q: ok %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func FuzzDecodeProbeRequest(f *testing.F) {
	for _, s := range []string{`{"tenant":"demo","shard":0}`, `{"tenant":""}`, `{"shard":-1}`, `null`, `{"tenant":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pr, ok := edge.DecodeProbeRequest(b)
		if ok && (pr.Tenant == "" || pr.Shard < 0 || len(b) > schema.MaxLagProbeBytes) {
			t.Fatalf("accepted %q as %+v", b, pr)
		}
		if !ok && pr != (schema.LagProbe{}) {
			t.Fatalf("refused %q but returned %+v", b, pr)
		}
	})
}

// gather publishes a probe about tenant on nc and collects the replies for wait.
func gather(t *testing.T, nc *nats.Conn, tenant string, wait time.Duration) []schema.LagProbeReply {
	t.Helper()
	inbox := schema.LagProbeReplies("vitrine") + nuid.Next()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(schema.LagProbe{Tenant: tenant})
	if err := nc.PublishRequest(schema.LagProbeSubject("vitrine"), inbox, body); err != nil {
		t.Fatal(err)
	}
	var out []schema.LagProbeReply
	deadline := time.Now().Add(wait)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return out
		}
		var r schema.LagProbeReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("reply %q: %v", m.Data, err)
		}
		out = append(out, r)
	}
}

// Every edge answers a probe once, on the probe's inbox; a probe that does not decode or names
// no inbox is not answered; an edge that stopped answers no more.
func TestAnswerProbesOverNATS(t *testing.T) {
	ns := natstest.Run(t)
	f := newFixture(t, edge.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	for i, name := range []string{"edge-a", "edge-b"} {
		nc := ns.Connect(t)
		cctx := ctx
		if i == 1 {
			var c2 context.CancelFunc
			cctx, c2 = context.WithCancel(ctx)
			go func() { <-stopped; c2() }()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.srv.AnswerProbes(cctx, nc, edge.ProbeConfig{Subject: schema.LagProbeSubject("vitrine"), Name: name}); err != nil {
				t.Error(err)
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	origin := ns.Connect(t)
	waitUntil(t, "both edges to subscribe", func() bool { return len(gather(t, origin, "demo", 100*time.Millisecond)) == 2 })

	got := gather(t, origin, "demo", 200*time.Millisecond)
	names := map[string]bool{}
	for _, r := range got {
		names[r.Edge] = true
		if !r.Serving || r.Version != f.feed.versions["demo"] || r.Tenant != "demo" {
			t.Errorf("reply %+v", r)
		}
	}
	if len(got) != 2 || !names["edge-a"] || !names["edge-b"] {
		t.Fatalf("replies %+v", got)
	}

	// Malformed probes and probes without an inbox get nothing.
	inbox := origin.NewInbox()
	sub, _ := origin.SubscribeSync(inbox)
	for _, body := range []string{`{`, `{"tenant":""}`, strings.Repeat("x", schema.MaxLagProbeBytes+1)} {
		origin.PublishRequest(schema.LagProbeSubject("vitrine"), inbox, []byte(body))
	}
	origin.Publish(schema.LagProbeSubject("vitrine"), []byte(`{"tenant":"demo"}`))
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("answered a probe it should have ignored: %s", m.Data)
	}

	close(stopped)
	waitUntil(t, "the stopped edge to leave", func() bool {
		got := gather(t, origin, "demo", 100*time.Millisecond)
		return len(got) == 1 && got[0].Edge == "edge-a"
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The shipped NATS permissions (deploy/nats): an origin's key publishes a probe and gathers the
// replies of an edge connected directly and of one behind the regional leaf node; an edge's key
// answers each probe once and may neither publish a probe nor write to an inbox that sent it
// nothing.
func TestProbePermissions(t *testing.T) {
	sec := natstest.RunSecure(t, "../deploy/nats")
	leafURL := sec.StartLeaf(t)
	f := newFixture(t, edge.Config{})
	var mu sync.Mutex
	var violations []string
	record := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		violations = append(violations, err.Error())
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	conns := map[string]*nats.Conn{"direct": sec.Connect(t, sec.URL, "edge", record), "via leaf": sec.Connect(t, leafURL, "edge", record)}
	for name, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.srv.AnswerProbes(ctx, nc, edge.ProbeConfig{Subject: schema.LagProbeSubject("vitrine"), Name: name})
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	origin := sec.Connect(t, sec.URL, "origin")
	waitUntil(t, "both edges to answer the origin", func() bool { return len(gather(t, origin, "demo", 200*time.Millisecond)) == 2 })

	saw := func(subject string) bool {
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			for _, v := range violations {
				if strings.Contains(v, "ermissions violation") && strings.Contains(v, `"`+subject+`"`) {
					mu.Unlock()
					return true
				}
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	// An edge publishing a probe of its own: refused, and no edge hears it.
	direct := conns["direct"]
	inbox := direct.NewInbox()
	sub, _ := direct.SubscribeSync(inbox)
	direct.PublishRequest(schema.LagProbeSubject("vitrine"), inbox, []byte(`{"tenant":"demo"}`))
	if !saw(schema.LagProbeSubject("vitrine")) {
		t.Errorf("an edge's key published a probe: violations %q", violations)
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("a probe an edge published was answered: %s", m.Data)
	}
	// An edge writing to an origin's reply subject that sent it nothing.
	oinbox := schema.LagProbeReplies("vitrine") + nuid.Next()
	osub, _ := origin.SubscribeSync(oinbox)
	origin.Flush()
	direct.Publish(oinbox, []byte(`{"edge":"forged","tenant":"demo"}`))
	if !saw(oinbox) {
		t.Errorf("an edge's key wrote to an inbox unasked: violations %q", violations)
	}
	if m, err := osub.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("the origin received an unasked message: %s", m.Data)
	}
}
