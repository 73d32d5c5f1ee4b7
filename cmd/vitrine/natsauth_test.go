package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"vitrine/sync/natstest"
)

// The relay, an origin and an edge run as processes against the shipped NATS configuration
// (deploy/nats: TLS with client certificates, one nkey per role, least-privilege permissions),
// each with its own role: a write through the edge is forwarded, replicated and read back, the
// origin's webhook consumer reads and acknowledges the event stream, its label-batch queue
// exists, the origin's lag probe (site health replica-lag) is answered by the edge. With the
// edge's key, publishing on a state subject or on the probe subject and deleting the stream are
// refused.
// (sync/feed's TestShippedNATSPermissions covers every refusal, and the leaf node.)
func TestNATSLeastPrivilegeSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test: not in -short")
	}
	sec := natstest.RunSecure(t, filepath.Join("..", "..", "deploy", "nats"))
	s := newSystem(t, systemOptions{})
	_, pw := s.tenant("shop")
	originAddr, edgeAddr := freeAddr(t), freeAddr(t)
	env := func(role string) []string {
		return []string{"VITRINE_DATABASE_URL=" + s.dsn, "VITRINE_NATS_URL=" + sec.URL,
			"VITRINE_NATS_INSECURE=0", "VITRINE_NATS_NKEY=" + sec.Seed(role),
			"VITRINE_NATS_TLS_CA=" + sec.CA, "VITRINE_NATS_TLS_CERT=" + sec.Cert, "VITRINE_NATS_TLS_KEY=" + sec.Key,
			"VITRINE_SECRET=" + string(s.key), "VITRINE_EDGE_SECRET=" + s.edgeSecret,
			"VITRINE_PLATFORM_DOMAIN=example.test", "VITRINE_LOG_LEVEL=" + relayLogLevel()}
	}
	procs := []*component{
		s.startProcess(env("relay"), "relay", "--ops-addr", "off"),
		s.startProcess(env("origin"), "origin", "--addr", originAddr, "--ops-addr", "off"),
		s.startProcess(env("edge"), "edge", "--addr", edgeAddr, "--ops-addr", "off", "--origin-url", "http://"+originAddr),
	}
	host := "shop.example.test"
	for _, addr := range []string{originAddr, edgeAddr} {
		waitFor(t, 30*time.Second, "the tenant to reach "+addr, func() bool {
			for _, p := range procs {
				select {
				case <-p.done:
					t.Fatalf("%s exited: %v", p.name, p.cmd.ProcessState)
				default:
				}
			}
			r, err := tryCall("GET", addr, host, "/api/products")
			return err == nil && r.status == 200
		})
	}
	created := call(t, "POST", edgeAddr, host, "/api/admin/products", `{"title":"Desk Lamp","status":"active","prices":{"USD":4200}}`,
		"Authorization", basic("admin", pw))
	if created.status != 201 {
		t.Fatalf("create through the edge: %d %s", created.status, created.body)
	}
	if r := call(t, "GET", edgeAddr, host, "/api/products/desk-lamp", ""); r.status != 200 {
		t.Fatalf("read-your-write through the edge: %d %s", r.status, r.body)
	}
	// The origin's key sends a lag probe, the edge's key answers it.
	lag := call(t, "GET", edgeAddr, host, "/index.php?rest_route=/cms-site-health/v1/tests/replica-lag", "", "Authorization", basic("admin", pw))
	if edges, _ := lag.json(t)["details"].(map[string]any)["edges"].([]any); lag.status != 200 || len(edges) != 1 ||
		edges[0].(map[string]any)["serving"] != true || !strings.HasSuffix(edges[0].(map[string]any)["name"].(string), "/"+edgeAddr) {
		t.Fatalf("the edge did not answer the origin's lag probe: %d %s", lag.status, lag.body)
	}

	ctx := context.Background()
	admin, _ := jetstream.New(sec.Connect(t, sec.URL, "admin"))
	waitFor(t, 15*time.Second, "the origin's webhook consumer to read and acknowledge the product's event", func() bool {
		c, err := admin.Consumer(ctx, s.fc.EventStream, "webhooks")
		if err != nil {
			return false
		}
		ci, err := c.Info(ctx)
		return err == nil && ci.AckFloor.Stream > 0 && ci.NumAckPending == 0
	})
	if _, err := admin.Consumer(ctx, s.fc.WorkStream, "label-batches"); err != nil {
		t.Fatalf("the origin's label-batch consumer: %v", err)
	}

	// The edge's key: no publish on the stream's subjects or the probe subject, no stream deletion.
	var violations []string
	errs := make(chan string, 16)
	edgeNC := sec.Connect(t, sec.URL, "edge", nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err.Error() }))
	edgeJS, _ := jetstream.New(edgeNC)
	if err := edgeNC.Publish("vitrine.0.shop.pub.product.1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := edgeNC.PublishRequest("vitrine_probe.lag", edgeNC.NewInbox(), []byte(`{"tenant":"shop"}`)); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	err := edgeJS.DeleteStream(dctx, s.fc.Stream)
	cancel()
	if err == nil {
		t.Fatal("the edge's key deleted the state stream")
	}
	for len(violations) < 3 {
		select {
		case v := <-errs:
			violations = append(violations, v)
		case <-time.After(3 * time.Second):
			t.Fatalf("permission violations reported: %q", violations)
		}
	}
	for _, want := range []string{`"vitrine.0.shop.pub.product.1"`, `"vitrine_probe.lag"`, `"$JS.API.STREAM.DELETE.VITRINE_STATE"`} {
		if !strings.Contains(strings.Join(violations, "\n"), want) {
			t.Errorf("no permission violation for %s: %q", want, violations)
		}
	}
	if _, err := admin.Stream(ctx, s.fc.Stream); err != nil {
		t.Fatalf("the state stream: %v", err)
	}
	// And the edge still serves its store.
	if r := call(t, "GET", edgeAddr, host, "/api/products/desk-lamp", ""); r.status != 200 {
		t.Fatalf("the edge after the refusals: %d %s", r.status, r.body)
	}
}

// Outside `vitrine dev` a process refuses to connect to NATS without credentials or TLS unless
// told --nats-insecure, and refuses contradictory or missing credential files.
func TestNATSConnectionOptions(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "edge.nk")
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := kp.Seed()
	if err := os.WriteFile(seed, sb, 0o600); err != nil {
		t.Fatal(err)
	}
	pem := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(pem, []byte("not read before connecting"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		url      string
		env      string // VITRINE_NATS_INSECURE
		insecure bool   // errNATSInsecure expected
		wantErr  string // another error expected
	}{
		{name: "nothing", insecure: true},
		{name: "credentials without TLS", args: []string{"-nats-nkey", seed}, insecure: true},
		{name: "TLS without credentials", args: []string{"-nats-tls-ca", pem}, insecure: true},
		{name: "tls URL without credentials", url: "tls://nats.example:4222", insecure: true},
		{name: "nkey and CA", args: []string{"-nats-nkey", seed, "-nats-tls-ca", pem}},
		{name: "user, password and a tls URL", args: []string{"-nats-user", "edge", "-nats-password", "pw"}, url: "tls://a:4222,tls://b:4222"},
		{name: "one plain URL among tls ones", args: []string{"-nats-user", "edge", "-nats-password", "pw"}, url: "tls://a:4222,nats://b:4222", insecure: true},
		{name: "nothing, insecure", args: []string{"-nats-insecure"}},
		{name: "insecure from the environment", env: "1"},
		{name: "insecure overridden by the flag", env: "1", args: []string{"-nats-insecure=false"}, insecure: true},
		{name: "two kinds of credentials", args: []string{"-nats-nkey", seed, "-nats-user", "edge", "-nats-password", "pw", "-nats-tls-ca", pem}, wantErr: "give one of"},
		{name: "user without password", args: []string{"-nats-user", "edge", "-nats-tls-ca", pem}, wantErr: "go together"},
		{name: "certificate without key", args: []string{"-nats-nkey", seed, "-nats-tls-cert", pem}, wantErr: "go together"},
		{name: "missing seed file", args: []string{"-nats-nkey", filepath.Join(dir, "missing.nk"), "-nats-tls-ca", pem}, wantErr: "--nats-nkey"},
		{name: "not a seed", args: []string{"-nats-nkey", pem, "-nats-tls-ca", pem}, wantErr: "--nats-nkey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("VITRINE_NATS_INSECURE", tc.env)
			f := newFlags("test")
			c := f.common()
			args := tc.args
			if tc.url != "" {
				args = append(args, "-nats-url", tc.url)
			}
			if err := f.Parse(args); err != nil {
				t.Fatal(err)
			}
			_, err := c.nats.options(*c.natsURL)
			switch {
			case tc.insecure:
				if !errors.Is(err, errNATSInsecure) {
					t.Fatalf("got %v, want the refusal without --nats-insecure", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// The relay, origin and edge commands refuse to start without NATS credentials and TLS.
func TestProcessesRefuseBareNATS(t *testing.T) {
	for _, args := range [][]string{
		{"relay", "--ops-addr", "off"},
		{"origin", "--ops-addr", "off", "--secret", "0123456789abcdef0123456789abcdef", "--edge-secret", "test-edge-secret-0123456789abcdef", "--payments", "test"},
		{"edge", "--ops-addr", "off", "--edge-secret", "test-edge-secret-0123456789abcdef"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Setenv("VITRINE_NATS_INSECURE", "")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := run(ctx, append(args, "--nats-url", "nats://127.0.0.1:1"))
			if !errors.Is(err, errNATSInsecure) {
				t.Fatalf("%s started or failed otherwise: %v", args[0], err)
			}
		})
	}
}
