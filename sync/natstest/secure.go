package natstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"vitrine/sync/natsembed"
)

// Roles are the users of deploy/nats/vitrine-accounts.conf and vitrine-region-accounts.conf.
var Roles = []string{"relay", "origin", "edge", "leaf", "admin", "mirror"}

// Secure is the shipped central NATS configuration (deploy/nats/nats-server.conf with its
// vitrine-accounts.conf) running in a test: the file itself, with only what cannot run on one test
// machine rewritten (certificate paths to certificates made for the test, addresses to loopback
// ports, the store directory, the three-node cluster block removed). Every role has a fresh nkey;
// the public keys reach the configuration through the environment, as in production.
type Secure struct {
	*server.Server
	// Dir holds the rendered configurations, the certificates and the seed files.
	Dir string
	// URL is the client URL (tls://127.0.0.1:port).
	URL string
	// CA, Cert and Key are the PEM files a client uses: the CA that signed every certificate, a
	// client certificate and its key.
	CA, Cert, Key string
	// LeafPort is the port leaf nodes connect to.
	LeafPort int

	deploy string
	seeds  map[string]string // role → seed file
}

// RunSecure starts the shipped central configuration found in deployDir (the repository's
// deploy/nats). It sets the VITRINE_NATS_<ROLE>_NKEY variables with t.Setenv, so the test must
// not be parallel.
func RunSecure(t *testing.T, deployDir string) *Secure {
	t.Helper()
	dir := t.TempDir()
	s := &Secure{Dir: dir, deploy: deployDir, seeds: map[string]string{}}
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	makeCertificates(t, tlsDir)
	s.CA, s.Cert, s.Key = filepath.Join(tlsDir, "ca.pem"), filepath.Join(tlsDir, "client.pem"), filepath.Join(tlsDir, "client-key.pem")
	for _, role := range Roles {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		file := filepath.Join(dir, role+".nk")
		if err := os.WriteFile(file, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		s.seeds[role] = file
		t.Setenv("VITRINE_NATS_"+strings.ToUpper(role)+"_NKEY", pub)
		if role == "leaf" {
			t.Setenv("VITRINE_NATS_LEAF_SEED", string(seed))
		}
	}
	s.copyAccounts(t, dir)
	s.LeafPort = freePort(t)
	conf := s.render(t, "nats-server.conf", []replacement{
		{"/etc/nats/tls/", tlsDir + "/"},
		{"listen: 0.0.0.0:4222", "listen: 127.0.0.1:-1"},
		{"http: 127.0.0.1:8222", ""},
		{"store_dir: /var/lib/nats/jetstream", "store_dir: " + strconv.Quote(filepath.Join(dir, "jetstream"))},
		{"listen: 0.0.0.0:7422", "listen: 127.0.0.1:" + strconv.Itoa(s.LeafPort)},
	}, "cluster {")
	ns, err := natsembed.Start(natsembed.Options{ConfigFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	s.Server = ns
	s.URL = "tls://127.0.0.1:" + strconv.Itoa(ns.Addr().(*net.TCPAddr).Port)
	return s
}

// StartLeaf starts the shipped regional leaf node configuration (deploy/nats/
// leafnode-edge-region.conf: JetStream domain "eu", vitrine-region-accounts.conf) connected to s,
// and returns its client URL once the leaf connection is up.
func (s *Secure) StartLeaf(t *testing.T) string {
	t.Helper()
	tlsDir := filepath.Join(s.Dir, "tls")
	conf := s.render(t, "leafnode-edge-region.conf", []replacement{
		{"/etc/nats/tls/", tlsDir + "/"},
		{"listen: 0.0.0.0:4222", "listen: 127.0.0.1:-1"},
		{"store_dir: /var/lib/nats/jetstream", "store_dir: " + strconv.Quote(filepath.Join(s.Dir, "leaf-jetstream"))},
		{`urls: ["nats-leaf://nats-1:7422", "nats-leaf://nats-2:7422", "nats-leaf://nats-3:7422"]`,
			`urls: ["nats-leaf://127.0.0.1:` + strconv.Itoa(s.LeafPort) + `"]`},
	}, "")
	ns, err := natsembed.Start(natsembed.Options{ConfigFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	deadline := time.Now().Add(10 * time.Second)
	for ns.NumLeafNodes() == 0 || s.NumLeafNodes() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the leaf node did not connect to the central server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "tls://127.0.0.1:" + strconv.Itoa(ns.Addr().(*net.TCPAddr).Port)
}

// Seed returns the seed file of a role.
func (s *Secure) Seed(role string) string { return s.seeds[role] }

// Options returns the client options of a role: its nkey, the CA and the client certificate.
func (s *Secure) Options(t testing.TB, role string) []nats.Option {
	t.Helper()
	nk, err := nats.NkeyOptionFromSeed(s.seeds[role])
	if err != nil {
		t.Fatal(err)
	}
	return []nats.Option{nk, nats.RootCAs(s.CA), nats.ClientCert(s.Cert, s.Key)}
}

// Connect connects as role to url (s.URL or a leaf node's), with extra options after the role's.
func (s *Secure) Connect(t testing.TB, url, role string, extra ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, append(s.Options(t, role), extra...)...)
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

type replacement struct{ old, new string }

// copyAccounts copies the shipped accounts file next to the rendered configurations, which
// include it by a relative path.
func (s *Secure) copyAccounts(t testing.TB, dir string) {
	t.Helper()
	for _, name := range []string{"vitrine-accounts.conf", "vitrine-region-accounts.conf"} {
		b, err := os.ReadFile(filepath.Join(s.deploy, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// render writes a shipped configuration with the replacements (each must apply) and, when
// dropBlock is set, the top-level block opening with it removed.
func (s *Secure) render(t testing.TB, name string, reps []replacement, dropBlock string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.deploy, name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, r := range reps {
		if !strings.Contains(text, r.old) {
			t.Fatalf("%s no longer contains %q: update natstest.RunSecure with it", name, r.old)
		}
		text = strings.ReplaceAll(text, r.old, r.new)
	}
	if dropBlock != "" {
		start := strings.Index(text, "\n"+dropBlock)
		end := strings.Index(text[start+1:], "\n}\n")
		if start < 0 || end < 0 {
			t.Fatalf("%s has no top-level %q block", name, dropBlock)
		}
		text = text[:start+1] + text[start+1+end+3:]
	}
	out := filepath.Join(s.Dir, name)
	if err := os.WriteFile(out, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// makeCertificates writes a CA (ca.pem), a server certificate for 127.0.0.1 and localhost
// (server.pem, server-key.pem), a client certificate (client.pem, client-key.pem) and the leaf
// node's client certificate (leaf.pem, leaf-key.pem) into dir.
func makeCertificates(t testing.TB, dir string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vitrine test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	issue := func(name string, serial int64, server bool) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "vitrine test " + name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		if server {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
		writePEM(t, filepath.Join(dir, name+"-key.pem"), "EC PRIVATE KEY", keyDER)
	}
	issue("server", 2, true)
	issue("client", 3, false)
	issue("leaf", 4, false)
}

func writePEM(t testing.TB, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
