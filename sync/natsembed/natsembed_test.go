package natsembed_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"vitrine/sync/natsembed"
)

// A server started from a configuration file takes the file's settings; an address given beside
// it overrides the file's listen address, a store directory fills in a missing store_dir, and a
// file that cannot run is refused with the reason.
func TestStartFromConfigFile(t *testing.T) {
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	port := free()
	for _, tc := range []struct {
		name      string
		conf      string
		opts      natsembed.Options
		wantErr   string
		jetstream bool
		port      int // 0: any
	}{
		{name: "file's store_dir", conf: "listen: 127.0.0.1:-1\njetstream { store_dir: %DIR% }\n", jetstream: true},
		{name: "store dir fills in", conf: "listen: 127.0.0.1:-1\njetstream {}\n", opts: natsembed.Options{StoreDir: "%DIR%"}, jetstream: true},
		{name: "no store dir at all", conf: "listen: 127.0.0.1:-1\njetstream {}\n", wantErr: "store_dir"},
		{name: "address overrides listen", conf: "listen: 127.0.0.1:-1\n", opts: natsembed.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)}, port: port},
		{name: "no JetStream (a leaf node)", conf: "listen: 127.0.0.1:-1\n"},
		{name: "unknown field", conf: "listen: 127.0.0.1:-1\nno_such_setting: 1\n", wantErr: "no_such_setting"},
		{name: "undefined variable", conf: "listen: 127.0.0.1:-1\nauthorization { token: $VITRINE_TEST_UNSET_VARIABLE }\n", wantErr: "VITRINE_TEST_UNSET_VARIABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "nats.conf")
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(tc.conf, "%DIR%", strconv.Quote(filepath.Join(dir, "js")))), 0o600); err != nil {
				t.Fatal(err)
			}
			o := tc.opts
			o.ConfigFile = file
			o.StoreDir = strings.ReplaceAll(o.StoreDir, "%DIR%", filepath.Join(dir, "js"))
			s, err := natsembed.Start(o)
			if tc.wantErr != "" {
				if err == nil {
					s.Shutdown()
					t.Fatalf("started; want an error about %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Shutdown(); s.WaitForShutdown() }()
			if s.JetStreamEnabled() != tc.jetstream {
				t.Fatalf("JetStream %v, want %v", s.JetStreamEnabled(), tc.jetstream)
			}
			if tc.jetstream && !strings.HasPrefix(s.StoreDir(), filepath.Join(dir, "js")) {
				t.Fatalf("store %s", s.StoreDir())
			}
			if got := s.Addr().(*net.TCPAddr).Port; tc.port != 0 && got != tc.port {
				t.Fatalf("port %d, want %d", got, tc.port)
			}
		})
	}
}
