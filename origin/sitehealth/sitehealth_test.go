package sitehealth

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"vitrine/edge/outbound"
	"vitrine/edge/replica"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

func newService(cfg Config, db *store.DB, rep *replica.Replica) *Service {
	return New(cfg, &handler.Responder{Log: slog.New(slog.DiscardHandler)}, db, rep, outbound.New(outbound.Config{}))
}

// Only administrators run a test: 401 rest_forbidden without a user, 403 with one that is not.
func TestPermitted(t *testing.T) {
	for _, tc := range []struct {
		role   schema.Role
		status int
	}{
		{"", 401},
		{schema.RoleSubscriber, 403},
		{schema.RoleEditor, 403},
		{schema.RoleShopManager, 403},
		{schema.RoleAdministrator, 0},
	} {
		rq := &handler.Request{}
		if tc.role != "" {
			rq.User = &schema.User{Role: tc.role}
		}
		err := permitted(rq)
		if tc.status == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.role, err)
			}
			continue
		}
		e := schema.AsError(err)
		if e.Status != tc.status || e.CMSCode != "rest_forbidden" || e.Message != "Sorry, you are not allowed to do that." {
			t.Errorf("%q: %+v", tc.role, e)
		}
	}
}

func TestDatabase(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	good := newService(Config{}, db, nil).checkDatabase()
	d := good.Details.(*DatabaseDetails)
	if good.Status != Good || good.Test != "database" || !d.Reachable || d.Migration != d.Expected || d.Expected == "" || d.Server == "" {
		t.Fatalf("%+v %+v", good, d)
	}
	if good.Badge != performance || !strings.HasPrefix(good.Description, "<p>") {
		t.Errorf("shape %+v", good)
	}

	slow := newService(Config{SlowDatabase: time.Nanosecond}, db, nil).checkDatabase()
	if slow.Status != Recommended || !strings.Contains(slow.Label, "slow") {
		t.Errorf("slow: %+v", slow)
	}

	db.Close() // an unreachable database: critical, at once
	start := time.Now()
	down := newService(Config{}, db, nil).checkDatabase()
	if down.Status != Critical || down.Label != "Your database is unreachable" || time.Since(start) > 3*time.Second {
		t.Errorf("down: %+v after %s", down, time.Since(start))
	}
}

func TestNATS(t *testing.T) {
	none := newService(Config{}, nil, nil).checkNATS()
	if none.Status != Critical || none.Test != "nats" {
		t.Errorf("without a connection: %+v", none)
	}
	ns := natstest.Run(t)
	nc := ns.Connect(t)
	fc := feed.Config{}.WithDefaults()
	missing := newService(Config{NATS: nc, Feed: fc}, nil, nil).checkNATS()
	if missing.Status != Critical || missing.Label != "The state stream is unreachable" {
		t.Errorf("without the stream: %+v", missing)
	}
	js, _ := fc.JetStream(nc)
	if _, err := feed.EnsureStream(context.Background(), js, fc, "epoch-1"); err != nil {
		t.Fatal(err)
	}
	ok := newService(Config{NATS: nc, Feed: fc}, nil, nil).checkNATS()
	d := ok.Details.(*NATSDetails)
	if ok.Status != Good || d.Status != "CONNECTED" || !d.JetStream || d.Stream == nil || d.Stream.Name != fc.Stream || d.ServerVersion == "" {
		t.Errorf("connected: %+v %+v", ok, d)
	}
	nc.Close()
	closed := newService(Config{NATS: nc, Feed: fc}, nil, nil).checkNATS()
	if closed.Status != Critical || closed.Label != "The origin is not connected to NATS" {
		t.Errorf("closed: %+v", closed)
	}
}

func TestOutbound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(400 * time.Millisecond)
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	for _, tc := range []struct {
		name   string
		cfg    Config
		status Status
		why    string
	}{
		{"an answer, whatever its status", Config{OutboundURL: srv.URL, OutboundAllowlist: loopback}, Good, ""},
		{"a closed port", Config{OutboundURL: closed, OutboundAllowlist: loopback}, Critical, "the connection was refused"},
		{"a name that does not resolve", Config{OutboundURL: "http://no-such-host.invalid/"}, Critical, "the name no-such-host.invalid did not resolve"},
		{"a certificate no CA signed", Config{OutboundURL: tlsSrv.URL, OutboundAllowlist: loopback}, Critical, "its TLS certificate was not accepted"},
		{"loopback without the allowlist", Config{OutboundURL: srv.URL}, Critical, "refused by the outbound rules: 127.0.0.1 is loopback"},
		{"no answer in time", Config{OutboundURL: srv.URL + "/slow", OutboundAllowlist: loopback, OutboundTimeout: 200 * time.Millisecond}, Critical, "no answer within 0.2 s"},
		{"not a URL", Config{OutboundURL: "http://[::1"}, Critical, "the URL is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res := newService(tc.cfg, nil, nil).checkOutbound()
			d := res.Details.(*OutboundDetails)
			if res.Status != tc.status || !strings.Contains(d.Error, tc.why) || res.Test != "outbound_http" || res.Badge != security {
				t.Fatalf("%+v %+v", res, d)
			}
			if tc.status == Good && (d.Status != http.StatusTeapot || !strings.HasPrefix(res.Label, "Can communicate with 127.0.0.1:")) {
				t.Fatalf("%+v %+v", res, d)
			}
			if tc.status == Critical && !strings.HasPrefix(res.Label, "Could not reach ") {
				t.Fatalf("label %q", res.Label)
			}
			if time.Since(start) > 2*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
		})
	}
}

func TestAuthorization(t *testing.T) {
	if r := authorizationResult(true); r.Status != Good || r.Label != "The Authorization header is working as expected" || r.Test != "authorization_header" {
		t.Errorf("%+v", r)
	}
	if r := authorizationResult(false); r.Status != Recommended || r.Label != "The authorization header is missing" {
		t.Errorf("%+v", r)
	}
}

func TestJudge(t *testing.T) {
	s := newService(Config{}, nil, nil)
	for _, tc := range []struct {
		r    ReplicaLag
		want Status
	}{
		{ReplicaLag{Serving: true}, Good},
		{ReplicaLag{Serving: true, LagVersions: 99, StalenessSeconds: 9.9}, Good},
		{ReplicaLag{Serving: true, LagVersions: 100}, Recommended},
		{ReplicaLag{Serving: true, StalenessSeconds: 10}, Recommended},
		{ReplicaLag{Serving: true, LagVersions: 10000}, Critical},
		{ReplicaLag{Serving: true, StalenessSeconds: 60}, Critical},
		{ReplicaLag{Serving: false}, Recommended},
	} {
		s.judge(&tc.r)
		if tc.r.Status != tc.want {
			t.Errorf("%+v: want %s", tc.r, tc.want)
		}
	}
}

// A replica at the database's version of a store, as an origin's would be.
func replicaAt(t *testing.T, info *schema.Tenant, version int64) *replica.Replica {
	t.Helper()
	rep := replica.New(replica.Config{Private: true})
	rep.Reset("epoch-1")
	info.Status = schema.TenantActive
	c := schema.NewChange(schema.PlatformLog, schema.KindTenant, info.Slug, schema.Pub, info)
	c.Version, c.TxnFirst, c.TxnLast = 1, 1, 1
	rep.Change(&c)
	rep.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: schema.PlatformLog, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: 1})
	rep.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: info.Slug, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: version})
	rep.Checkpoint()
	return rep
}

// The lag test against edges that answer on NATS (here, plain responders), and without any.
func TestReplicaLag(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	info := storetest.Tenant(t, db, "shop")
	head, err := db.LogVersion(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	rep := replicaAt(t, info, head)
	tn := rep.TenantBySlug("shop")
	if tn == nil || tn.Version() != head {
		t.Fatalf("replica at %v, want %d", tn, head)
	}
	ns := natstest.Run(t)
	fc := feed.Config{}.WithDefaults()
	cfg := Config{NATS: ns.Connect(t), Feed: fc, ProbeWait: 200 * time.Millisecond}

	// No edge.
	res := newService(cfg, db, rep).checkLag(info, tn)
	d := res.Details.(*LagDetails)
	if res.Status != Recommended || res.Label != "No edge answered the lag probe" || len(d.Edges) != 0 || d.Origin.Status != Good || d.HeadVersion != head {
		t.Fatalf("no edge: %+v %+v", res, d)
	}
	if !strings.Contains(res.Description, "No edge answered") {
		t.Errorf("description %q", res.Description)
	}

	// Edges: one at the head, one behind and stale, one not serving, and replies the origin
	// must ignore (another store, malformed, no name).
	answers := []string{
		`{"edge":"b-edge","region":"eu","tenant":"shop","serving":true,"version":` + itoa(head) + `,"staleness_seconds":0.2}`,
		`{"edge":"<a-edge>","tenant":"shop","serving":true,"version":0,"staleness_seconds":30}`,
		`{"edge":"c-edge","tenant":"shop","serving":false}`,
		`{"edge":"d-edge","tenant":"other","serving":true,"version":` + itoa(head) + `}`,
		`{"edge":`,
		`{"tenant":"shop","serving":true}`,
	}
	responder := ns.Connect(t)
	sub, err := responder.Subscribe(edgeProbeSubject, func(m *nats.Msg) {
		var pr schema.LagProbe
		if json.Unmarshal(m.Data, &pr) != nil || pr.Tenant != "shop" || !strings.HasPrefix(m.Reply, "vitrine_probe.reply.") {
			t.Errorf("probe %q reply %q", m.Data, m.Reply)
		}
		for _, a := range answers {
			responder.Publish(m.Reply, []byte(a))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	responder.Flush()
	res = newService(cfg, db, rep).checkLag(info, tn)
	d = res.Details.(*LagDetails)
	if len(d.Edges) != 3 {
		t.Fatalf("edges %+v", d.Edges)
	}
	a, b, c := d.Edges[0], d.Edges[1], d.Edges[2]
	if a.Name != "<a-edge>" || a.Status != Recommended || a.LagVersions != head || b.Name != "b-edge" || b.Status != Good || b.Region != "eu" ||
		b.LagVersions != 0 || c.Name != "c-edge" || c.Status != Recommended || c.Serving {
		t.Errorf("edges %+v", d.Edges)
	}
	if res.Status != Recommended || res.Label != "Some replicas of your store are behind" {
		t.Errorf("%+v", res)
	}
	if strings.Contains(res.Description, "<a-edge>") || !strings.Contains(res.Description, "&lt;a-edge&gt;") {
		t.Errorf("an edge's name is not escaped: %s", res.Description)
	}
}

// edgeProbeSubject is schema.LagProbeSubject("vitrine").
const edgeProbeSubject = "vitrine_probe.lag"

func TestDecodeProbeReply(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"edge":"e","tenant":"shop","serving":true,"version":3,"seen":4,"staleness_seconds":0.5}`, true},
		{`{"edge":"e","tenant":"shop"}`, true},
		{`{"edge":"","tenant":"shop"}`, false},
		{`{"edge":"e","tenant":"other"}`, false},
		{`{"edge":"e","tenant":"shop","version":-1}`, false},
		{`{"edge":"e","tenant":"shop","seen":-1}`, false},
		{`{"edge":"e","tenant":"shop","staleness_seconds":-0.1}`, false},
		{`{"edge":"e","tenant":"shop","staleness_seconds":1e300}`, false},
		{`{"edge":"e","tenant":"shop","version":"3"}`, false},
		{`{"edge":"e","tenant":"shop","pad":"` + strings.Repeat("x", 5000) + `"}`, false},
		{`null`, false},
	} {
		if _, ok := DecodeProbeReply([]byte(tc.in), "shop"); ok != tc.ok {
			t.Errorf("%.80s: ok %v, want %v", tc.in, ok, tc.ok)
		}
	}
	r, _ := DecodeProbeReply([]byte(`{"edge":"`+strings.Repeat("é", 150)+`","tenant":"shop"}`), "shop")
	if len(r.Edge) > 200 || !strings.HasPrefix(r.Edge, "éé") || strings.ToValidUTF8(r.Edge, "") != r.Edge {
		t.Errorf("a long name is cut to %d bytes: %q", len(r.Edge), r.Edge)
	}
}

func FuzzDecodeProbeReply(f *testing.F) {
	for _, s := range []string{`{"edge":"e","tenant":"shop","serving":true,"version":3,"staleness_seconds":0.5}`,
		`{"edge":"e","tenant":"shop","staleness_seconds":NaN}`, `{"edge":"\xff\xfe","tenant":"shop"}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := DecodeProbeReply(b, "shop")
		if !ok {
			if r != (schema.LagProbeReply{}) {
				t.Fatalf("refused %q but returned %+v", b, r)
			}
			return
		}
		if r.Edge == "" || r.Tenant != "shop" || r.Version < 0 || r.Seen < 0 || r.StalenessSeconds < 0 || len(r.Edge) > 200 || len(r.Region) > 200 ||
			strings.ToValidUTF8(r.Edge, "") != r.Edge {
			t.Fatalf("accepted %q as %+v", b, r)
		}
	})
}
