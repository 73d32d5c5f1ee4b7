package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"gopkg.in/yaml.v3"

	"vitrine/sync/natsembed"
)

// The deployment files (deploy/container, deploy/compose, deploy/kubernetes) are checked here
// against the binary they run: every command, flag and VITRINE_* variable they give must be one
// the command's real flag set has (learnt from `vitrine <command> -h`, run by this test binary
// as the vitrine command), every probe must ask /healthz or /readyz on the port the ops address
// names, ports and references must agree between containers, Services and probes, and every
// Secret, ConfigMap and image a workload names must come from its kustomization. kubectl
// kustomize builds each kustomization when kubectl is installed.

// deployDir is the repository's deploy/ folder, seen from cmd/vitrine.
const deployDir = "../../deploy"

// ---------------------------------------------------------------- vitrine probe

func TestProbeCommand(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/unready", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"bootstrapping"}`))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) { w.Write(bytes.Repeat([]byte("x"), 1<<20)) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	closed := func() string { // an address nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}()
	for _, tc := range []struct {
		name     string
		args     []string
		want     error // nil: success; errAny: some error
		contains string
	}{
		{"200", []string{srv.URL + "/ok"}, nil, ""},
		{"204", []string{srv.URL + "/nocontent"}, nil, ""},
		{"large body", []string{srv.URL + "/huge"}, nil, ""},
		{"503 readiness", []string{srv.URL + "/unready"}, errProbeStatus, "503"},
		{"404", []string{srv.URL + "/missing"}, errProbeStatus, "404"},
		{"redirect is not health", []string{srv.URL + "/moved"}, errProbeStatus, "302"},
		{"refused", []string{"http://" + closed + "/healthz"}, errAny, "refused"},
		{"timeout", []string{"--timeout=150ms", srv.URL + "/slow"}, errAny, "deadline"},
		{"not http", []string{"ftp://127.0.0.1/x"}, errAny, "not an http"},
		{"no host", []string{"http:///healthz"}, errAny, "not an http"},
		{"no url", nil, errAny, "exactly one URL"},
		{"two urls", []string{srv.URL + "/ok", srv.URL + "/ok"}, errAny, "exactly one URL"},
		{"zero timeout", []string{"--timeout=0s", srv.URL + "/ok"}, errAny, "positive"},
		{"unknown flag", []string{"--retries=3", srv.URL + "/ok"}, errAny, "not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := run(context.Background(), append([]string{"probe"}, tc.args...))
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("probe failed: %v", err)
			case tc.want == errAny && err == nil, tc.want != nil && tc.want != errAny && !errors.Is(err, tc.want):
				t.Fatalf("probe: got %v, want %v", err, tc.want)
			case err != nil && !strings.Contains(err.Error(), tc.contains):
				t.Fatalf("probe error %q does not say %q", err, tc.contains)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("probe took %v", d)
			}
		})
	}
}

// errAny stands for "some error" in TestProbeCommand's table.
var errAny = errors.New("any error")

// ---------------------------------------------------------------- the binary's command line

// cliFlag is one flag of a command, as its -h output shows it.
type cliFlag struct {
	typ string // "" for a boolean flag; else the value's type ("string", "duration", "int", …)
	env string // its VITRINE_* variable, if any
	def string // its default as printed ("" when none is printed)
}

// cliCommand is a command's real flag set.
type cliCommand struct {
	name  string
	flags map[string]cliFlag
	envs  map[string]bool // every variable the command reads
}

// cli learns the vitrine command line from this test binary run as the vitrine command
// (TestMain, VITRINE_TEST_MAIN=1): `help` for the commands, `<command> -h` for each one's flags.
type cli struct {
	t        *testing.T
	mu       sync.Mutex
	commands map[string]bool // "edge", "replica rebuild", …
	specs    map[string]*cliCommand
}

var (
	sharedCLIOnce sync.Once
	sharedCLI     *cli
	sharedCLIErr  error
)

func vitrineCLI(t *testing.T) *cli {
	t.Helper()
	sharedCLIOnce.Do(func() {
		c := &cli{commands: map[string]bool{}, specs: map[string]*cliCommand{}}
		out, err := runCLI("help")
		if err != nil {
			sharedCLIErr = fmt.Errorf("vitrine help: %v\n%s", err, out)
			return
		}
		line := regexp.MustCompile(`^  vitrine ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?\s`)
		for _, l := range strings.Split(out, "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				c.commands[m[1]] = true
				if m[2] != "" {
					c.commands[m[1]+" "+m[2]] = true
				}
			}
		}
		c.commands["help"] = true
		sharedCLI = c
	})
	if sharedCLIErr != nil {
		t.Fatal(sharedCLIErr)
	}
	c := sharedCLI
	c.t = t
	return c
}

// runCLI runs this test binary as the vitrine command with args, with no VITRINE_* variable of
// the test's environment, and returns what it printed.
func runCLI(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VITRINE_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "VITRINE_TEST_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

var (
	flagLine = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9._-]*)(?: (.+))?$`)
	flagEnv  = regexp.MustCompile(`\(\$([A-Z][A-Z0-9_]*)\)`)
	anyEnv   = regexp.MustCompile(`\$([A-Z][A-Z0-9_]*)`)
	flagDef  = regexp.MustCompile(`\(default "?(.*?)"?\)$`)
)

// command resolves words (the container's arguments) to a command and the rest of the
// arguments: the longest known command first ("replica rebuild" before "replica").
func (c *cli) command(words []string) (*cliCommand, []string, error) {
	if len(words) == 0 {
		return nil, nil, fmt.Errorf("no command")
	}
	name := ""
	if len(words) > 1 && c.commands[words[0]+" "+words[1]] {
		name = words[0] + " " + words[1]
	} else if c.commands[words[0]] {
		name = words[0]
	} else {
		return nil, nil, fmt.Errorf("unknown command %q (vitrine help)", words[0])
	}
	rest := words[len(strings.Fields(name)):]
	spec, err := c.spec(name)
	return spec, rest, err
}

// spec returns a command's flag set, from `vitrine <command> -h`.
func (c *cli) spec(name string) (*cliCommand, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.specs[name]; ok {
		return s, nil
	}
	s := &cliCommand{name: name, flags: map[string]cliFlag{}, envs: map[string]bool{}}
	if name == "help" || name == "version" {
		c.specs[name] = s
		return s, nil
	}
	out, _ := runCLI(append(strings.Fields(name), "-h")...) // -h exits non-zero by design
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			cur = m[1]
			s.flags[cur] = cliFlag{typ: m[2]}
			continue
		}
		if cur == "" || !strings.HasPrefix(l, "    \t") {
			continue
		}
		f := s.flags[cur]
		if m := flagEnv.FindStringSubmatch(l); m != nil {
			f.env = m[1]
		}
		if m := flagDef.FindStringSubmatch(l); m != nil {
			f.def = m[1]
		}
		s.flags[cur] = f
		for _, m := range anyEnv.FindAllStringSubmatch(l, -1) {
			s.envs[m[1]] = true
		}
	}
	if len(s.flags) == 0 {
		return nil, fmt.Errorf("vitrine %s -h listed no flags:\n%s", name, out)
	}
	c.specs[name] = s
	return s, nil
}

// union is an invocation whose command reads what any of names reads (for a service that runs
// several commands).
func (c *cli) union(names ...string) *invocation {
	u := &cliCommand{name: strings.Join(names, ", "), flags: map[string]cliFlag{}, envs: map[string]bool{}}
	for _, n := range names {
		s, err := c.spec(n)
		if err != nil {
			c.t.Fatal(err)
		}
		for k, v := range s.flags {
			u.flags[k] = v
		}
		for k := range s.envs {
			u.envs[k] = true
		}
	}
	return &invocation{cmd: u, flags: map[string]string{}}
}

// invocation is one container's vitrine command line, checked.
type invocation struct {
	cmd        *cliCommand
	flags      map[string]string // the flags given, by name
	positional []string
}

// parse checks a command line the way the flag package reads it: known flags, a value for
// each non-boolean one and of its type, and positional arguments only where the command takes
// them (probe's URL).
func (c *cli) parse(words []string) (*invocation, error) {
	cmd, rest, err := c.command(words)
	if err != nil {
		return nil, err
	}
	inv := &invocation{cmd: cmd, flags: map[string]string{}}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			inv.positional = append(inv.positional, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			inv.positional = append(inv.positional, rest[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, ok := cmd.flags[name]
		if !ok {
			return nil, fmt.Errorf("vitrine %s has no flag -%s", cmd.name, name)
		}
		if !hasValue && f.typ != "" {
			if i+1 >= len(rest) {
				return nil, fmt.Errorf("vitrine %s: -%s needs a value", cmd.name, name)
			}
			i++
			value = rest[i]
		}
		if !hasValue && f.typ == "" {
			value = "true"
		}
		if err := checkValue(f, value); err != nil {
			return nil, fmt.Errorf("vitrine %s -%s: %w", cmd.name, name, err)
		}
		inv.flags[name] = value
	}
	switch {
	case cmd.name == "probe" && len(inv.positional) != 1:
		return nil, fmt.Errorf("vitrine probe takes one URL, got %q", inv.positional)
	case cmd.name != "probe" && len(inv.positional) > 0:
		return nil, fmt.Errorf("vitrine %s takes no argument, got %q (a flag after an argument is not read)", cmd.name, inv.positional)
	}
	return inv, nil
}

// checkValue checks a flag's value (or its variable's) the way the flag set parses it; a
// variable with a malformed value is silently ignored by the binary (its default wins), so a
// manifest must never hold one.
func checkValue(f cliFlag, v string) error {
	var err error
	switch f.typ {
	case "":
		_, err = strconv.ParseBool(v)
	case "duration":
		_, err = time.ParseDuration(v)
	case "int", "int64":
		_, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("value %q: %w", v, err)
	}
	return nil
}

// opsPort is the port of the invocation's ops address: its --ops-addr, else its variable from
// env, else the flag's default.
func (inv *invocation) opsPort(env map[string]string) (string, error) {
	addr, ok := inv.flags["ops-addr"]
	if !ok {
		addr, ok = env["VITRINE_OPS_ADDR"]
	}
	if !ok {
		f, has := inv.cmd.flags["ops-addr"]
		if !has {
			return "", fmt.Errorf("vitrine %s has no ops address", inv.cmd.name)
		}
		addr = f.def
	}
	if addr == "" || addr == "off" {
		return "", fmt.Errorf("vitrine %s: the ops address is off, nothing answers probes", inv.cmd.name)
	}
	_, port, err := net.SplitHostPort(addr)
	return port, err
}

// checkEnv checks the VITRINE_* variables set for an invocation: each one must be read by the
// command (a flag's variable, or DATABASE_URL), or, for `vitrine nats`, be named in a NATS
// configuration file; values with a type are parsed as the flag would.
func checkEnv(inv *invocation, env map[string]string, confVars map[string]bool) []string {
	var problems []string
	for _, k := range sortedKeys(env) {
		if !strings.HasPrefix(k, "VITRINE_") {
			continue
		}
		if inv.cmd.name == "nats" && confVars[k] {
			continue
		}
		if !inv.cmd.envs[k] {
			problems = append(problems, fmt.Sprintf("%s is set, and vitrine %s does not read it", k, inv.cmd.name))
			continue
		}
		v := env[k]
		if v == "" || strings.Contains(v, "$") {
			continue // not a literal (a secret, an interpolation, a reference)
		}
		if k == "VITRINE_STREAM_REPLICAS" {
			// Refused by the binary, not ignored: the process would not start.
			if err := new(replicasValue).Set(v); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v (the binary refuses it)", k, err))
			}
		}
		for _, f := range inv.cmd.flags {
			if f.env == k {
				if err := checkValue(f, v); err != nil {
					problems = append(problems, fmt.Sprintf("%s: %v (the binary would ignore it)", k, err))
				}
			}
		}
	}
	return problems
}

// leastPrivilege reports secrets given to a process that has no use for them: an edge is
// exposed to the Internet and gets neither the database nor the server secret, and no process
// but the origin gets a payment provider's key.
func leastPrivilege(inv *invocation, env map[string]string) []string {
	var problems []string
	forbidden := map[string][]string{
		"edge":    {"VITRINE_DATABASE_URL", "DATABASE_URL", "VITRINE_SECRET", "VITRINE_STRIPE_SECRET_KEY"},
		"relay":   {"VITRINE_SECRET", "VITRINE_EDGE_SECRET", "VITRINE_STRIPE_SECRET_KEY"},
		"migrate": {"VITRINE_SECRET", "VITRINE_EDGE_SECRET", "VITRINE_STRIPE_SECRET_KEY"},
		"nats":    {"VITRINE_DATABASE_URL", "VITRINE_SECRET", "VITRINE_EDGE_SECRET", "VITRINE_STRIPE_SECRET_KEY"},
	}
	for _, k := range forbidden[inv.cmd.name] {
		if _, ok := env[k]; ok {
			problems = append(problems, fmt.Sprintf("vitrine %s is given %s, which it has no use for", inv.cmd.name, k))
		}
	}
	return problems
}

// natsConfVars are the variables the shipped NATS configuration files read ($NAME).
func natsConfVars(t *testing.T) map[string]bool {
	t.Helper()
	vars := map[string]bool{}
	err := filepath.WalkDir(deployDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".conf") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if i := strings.Index(l, "#"); i >= 0 {
				l = l[:i]
			}
			for _, m := range anyEnv.FindAllStringSubmatch(l, -1) {
				vars[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vars
}

// checkProbeURL checks a health check URL of a vitrine container: on the loopback, /healthz or
// /readyz on the ops port; for `vitrine nats`, the server's monitoring port and /healthz.
func checkProbeURL(inv *invocation, raw string, env map[string]string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return fmt.Errorf("probe %s: a container checks itself on the loopback, not %q", raw, h)
	}
	return checkProbe(inv, u.Port(), u.Path, env)
}

// natsMonitorPort is the monitoring port of the shipped NATS configurations (http: …:8222).
const natsMonitorPort = "8222"

func checkProbe(inv *invocation, port, path string, env map[string]string) error {
	if inv.cmd.name == "nats" {
		if port != natsMonitorPort || path != "/healthz" {
			return fmt.Errorf("vitrine nats is probed on its monitoring port %s at /healthz, not %s %s", natsMonitorPort, port, path)
		}
		return nil
	}
	want, err := inv.opsPort(env)
	if err != nil {
		return err
	}
	if port != want {
		return fmt.Errorf("probe on port %s, the ops address of vitrine %s is on %s", port, inv.cmd.name, want)
	}
	if path != "/healthz" && path != "/readyz" {
		return fmt.Errorf("probe path %s: the ops address answers /healthz and /readyz", path)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---------------------------------------------------------------- YAML

// yamlDocs reads every document of a YAML file (or of kubectl kustomize's output).
func yamlDocs(t *testing.T, name string, b []byte) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs
}

// yMap, yList, yStr and yStrs read a decoded YAML tree without panicking on a missing or odd node.
func yMap(v any, path ...string) map[string]any {
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	mm, _ := v.(map[string]any)
	return mm
}

func yList(v any, path ...string) []any {
	if len(path) > 0 {
		v = yMap(v, path[:len(path)-1]...)[path[len(path)-1]]
	}
	ll, _ := v.([]any)
	return ll
}

func yStr(v any, path ...string) string {
	if len(path) > 0 {
		v = yMap(v, path[:len(path)-1]...)[path[len(path)-1]]
	}
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func yStrs(v []any) []string {
	out := make([]string, 0, len(v))
	for _, x := range v {
		out = append(out, yStr(x))
	}
	return out
}

// Every YAML file under deploy/compose and deploy/kubernetes parses, and holds something.
func TestDeployYAMLParses(t *testing.T) {
	n := 0
	for _, root := range []string{"compose", "kubernetes"} {
		err := filepath.WalkDir(filepath.Join(deployDir, root), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(yamlDocs(t, p, b)) == 0 {
				t.Errorf("%s: no YAML document", p)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 10 {
		t.Fatalf("found %d YAML files under deploy/compose and deploy/kubernetes", n)
	}
}

// ---------------------------------------------------------------- compose

// composeValue resolves compose's interpolation for a check: ${X:-default} and ${X-default}
// give the default, ${X:?…}, ${X?…} and ${X} give "$" (unknown here).
func composeValue(v string) string {
	re := regexp.MustCompile(`\$\{([A-Z0-9_]+)(?:(:?-)([^}]*)|(:?\?)[^}]*)?\}`)
	return re.ReplaceAllStringFunc(v, func(s string) string {
		mm := re.FindStringSubmatch(s)
		if mm[2] != "" {
			return mm[3]
		}
		return "$"
	})
}

func TestComposeMatchesBinary(t *testing.T) {
	t.Parallel()
	c := vitrineCLI(t)
	confVars := natsConfVars(t)
	file := filepath.Join(deployDir, "compose", "compose.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs := yamlDocs(t, file, b)
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents", file, len(docs))
	}
	doc := docs[0]
	services := yMap(doc, "services")
	secrets := yMap(doc, "secrets")
	volumes := yMap(doc, "volumes")
	// Who answers on which name: service names and network aliases.
	names := map[string]string{}
	for _, name := range sortedKeys(services) {
		names[name] = name
		for _, a := range yStrs(yList(services[name], "networks", "default", "aliases")) {
			names[a] = name
		}
	}
	invs := map[string]*invocation{}
	roles := map[string]int{}
	for _, name := range sortedKeys(services) {
		svc := yMap(services, name)
		if !strings.Contains(yStr(svc, "image"), "VITRINE_IMAGE") {
			continue
		}
		inv, err := c.parse(yStrs(yList(svc, "command")))
		if err != nil {
			t.Errorf("service %s: %v", name, err)
			continue
		}
		invs[name] = inv
		roles[inv.cmd.name]++
	}
	for _, name := range sortedKeys(invs) {
		svc, inv := yMap(services, name), invs[name]
		env := map[string]string{}
		for k, v := range yMap(svc, "environment") {
			env[k] = composeValue(yStr(v))
		}
		envCheck := inv
		if inv.cmd.name == "help" {
			// The admin service runs the administration commands (docker compose run … admin
			// <command>): its variables are those they read.
			envCheck = c.union("replica rebuild", "tenant create", "user create", "seed")
		}
		for _, p := range checkEnv(envCheck, env, confVars) {
			t.Errorf("service %s: %s", name, p)
		}
		for _, p := range leastPrivilege(inv, env) {
			t.Errorf("service %s: %s", name, p)
		}
		// Files named by variables are secrets this service mounts.
		mounted := yStrs(yList(svc, "secrets"))
		for _, k := range sortedKeys(env) {
			if p, ok := strings.CutPrefix(env[k], "/run/secrets/"); ok && !slices.Contains(mounted, p) {
				t.Errorf("service %s: %s=%s, a secret it does not mount", name, k, env[k])
			}
		}
		for _, s := range mounted {
			if _, ok := secrets[s]; !ok {
				t.Errorf("service %s: secret %s is not declared", name, s)
			}
		}
		for _, v := range yStrs(yList(svc, "volumes")) {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join(deployDir, "compose", src)); err != nil {
					t.Errorf("service %s: volume %s: %v", name, v, err)
				}
			} else if _, ok := volumes[src]; !ok {
				t.Errorf("service %s: volume %s is not declared", name, src)
			}
		}
		// The health check, unless disabled, is `vitrine probe` on the ops address.
		hc := yMap(svc, "healthcheck")
		if yStr(hc, "disable") == "true" {
			if inv.cmd.name != "migrate" && inv.cmd.name != "help" {
				t.Errorf("service %s (vitrine %s) runs without a health check", name, inv.cmd.name)
			}
		} else {
			test := yStrs(yList(hc, "test"))
			if len(test) < 3 || test[0] != "CMD" || test[1] != "/usr/local/bin/vitrine" {
				t.Errorf("service %s: health check %q is not [CMD, /usr/local/bin/vitrine, probe, …] (the image has no shell)", name, test)
			} else if pinv, err := c.parse(test[2:]); err != nil {
				t.Errorf("service %s: health check: %v", name, err)
			} else if pinv.cmd.name != "probe" {
				t.Errorf("service %s: health check runs vitrine %s", name, pinv.cmd.name)
			} else if err := checkProbeURL(inv, pinv.positional[0], env); err != nil {
				t.Errorf("service %s: %v", name, err)
			}
		}
		// Ordering: whatever uses the database waits for the migration; dependencies exist.
		deps := yMap(svc, "depends_on")
		for _, d := range sortedKeys(deps) {
			if _, ok := services[d]; !ok {
				t.Errorf("service %s depends on %s, which does not exist", name, d)
			}
		}
		if slices.Contains([]string{"relay", "origin", "edge"}, inv.cmd.name) {
			if yStr(deps, "migrate", "condition") != "service_completed_successfully" {
				t.Errorf("service %s does not wait for migrate to complete", name)
			}
			if yMap(svc, "deploy", "resources", "limits") == nil {
				t.Errorf("service %s has no resource limits", name)
			}
			if yStr(svc, "restart") == "" {
				t.Errorf("service %s has no restart policy", name)
			}
		}
		// The edges' origin URL names a service running the origin on that port.
		if inv.cmd.name == "edge" {
			raw := inv.flags["origin-url"]
			if raw == "" {
				raw = env["VITRINE_ORIGIN_URL"]
			}
			u, err := url.Parse(raw)
			if err != nil || names[u.Hostname()] == "" {
				t.Errorf("service %s: origin URL %q names no service", name, raw)
			} else if oinv := invs[names[u.Hostname()]]; oinv == nil || oinv.cmd.name != "origin" {
				t.Errorf("service %s: origin URL %q does not name an origin", name, raw)
			} else if _, port, _ := net.SplitHostPort(oinv.flags["addr"]); port != u.Port() {
				t.Errorf("service %s: origin URL port %s, the origin listens on %q", name, u.Port(), oinv.flags["addr"])
			}
		}
		// NATS URLs name the NATS services (defined before or after this one).
		if raw := env["VITRINE_NATS_URL"]; raw != "" {
			for _, one := range strings.Split(raw, ",") {
				u, err := url.Parse(one)
				target := []string{""}
				if err == nil && names[u.Hostname()] != "" {
					target = append(yStrs(yList(services[names[u.Hostname()]], "command")), "")
				}
				if target[0] != "nats" {
					t.Errorf("service %s: NATS URL %q names no vitrine nats service", name, one)
				}
			}
		}
	}
	for role, min := range map[string]int{"nats": 3, "migrate": 1, "relay": 2, "origin": 1, "edge": 2} {
		if roles[role] < min {
			t.Errorf("compose runs %d vitrine %s, want at least %d", roles[role], role, min)
		}
	}
}

// streamCreators are the commands that create or update streams and buckets, and so read
// --stream-replicas for them: the relay (state, events, snapshots), the origin (media, events,
// work) and the administration commands (replica rebuild recreates the state stream).
var streamCreators = []string{"relay", "origin", "help", "replica"}

// Compose runs a three-node NATS cluster: every process that creates streams makes them with one
// copy per node (VITRINE_STREAM_REPLICAS), so that losing a node loses no copy.
func TestComposeStreamReplicas(t *testing.T) {
	file := filepath.Join(deployDir, "compose", "compose.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	services := yMap(yamlDocs(t, file, b)[0], "services")
	nodes, creators := 0, 0
	for _, name := range sortedKeys(services) {
		if cmd := yStrs(yList(services[name], "command")); len(cmd) > 0 && cmd[0] == "nats" {
			nodes++
		}
	}
	if nodes < 3 {
		t.Fatalf("compose runs %d NATS nodes, want a cluster of 3", nodes)
	}
	for _, name := range sortedKeys(services) {
		cmd := yStrs(yList(services[name], "command"))
		if len(cmd) == 0 || !slices.Contains(streamCreators, cmd[0]) {
			continue
		}
		creators++
		got := composeValue(yStr(services[name], "environment", "VITRINE_STREAM_REPLICAS"))
		if got != strconv.Itoa(nodes) {
			t.Errorf("service %s (vitrine %s): VITRINE_STREAM_REPLICAS %q, want %d (one copy per NATS node)", name, cmd[0], got, nodes)
		}
	}
	if creators < 3 {
		t.Errorf("found %d services creating streams (relays, origins, admin), want at least 3", creators)
	}
}

// Kubernetes runs the NATS chart with a three-server cluster: the relays and origins (which take
// vitrine-common) create streams with that many copies; a region's overlay, whose leaf node is
// one server and which creates no central stream, removes the setting.
func TestKubernetesStreamReplicas(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", "nats", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := yStr(yamlDocs(t, "nats/values.yaml", b)[0], "config", "cluster", "replicas")
	build := func(t *testing.T, rel string) []map[string]any {
		t.Helper()
		dir := filepath.Join(deployDir, "kubernetes", rel)
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("kubectl is not installed: kustomize builds not run")
		}
		out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
		}
		return yamlDocs(t, "kustomize "+rel, out)
	}
	// streamReplicas is the variable as each vitrine container gets it ("" when unset), by
	// its command.
	streamReplicas := func(docs []map[string]any) map[string][]string {
		objects := map[string]map[string]any{}
		for _, d := range docs {
			objects[yStr(d, "kind")+"/"+yStr(d, "metadata", "name")] = d
		}
		got := map[string][]string{}
		for _, d := range docs {
			for _, ctr := range containers(d) {
				args := yStrs(yList(ctr, "args"))
				if !strings.Contains(yStr(ctr, "image"), "vitrine") || len(args) == 0 {
					continue
				}
				v := ""
				for _, ef := range yList(ctr, "envFrom") {
					if cm := objects["ConfigMap/"+yStr(ef, "configMapRef", "name")]; cm != nil {
						if x, ok := yMap(cm, "data")["VITRINE_STREAM_REPLICAS"]; ok {
							v = yStr(x)
						}
					}
				}
				for _, e := range yList(ctr, "env") {
					if yStr(e, "name") == "VITRINE_STREAM_REPLICAS" {
						v = yStr(e, "value")
					}
				}
				got[args[0]] = append(got[args[0]], v)
			}
		}
		return got
	}
	t.Run("base", func(t *testing.T) {
		got := streamReplicas(build(t, "base"))
		for _, cmd := range []string{"relay", "origin"} {
			if len(got[cmd]) == 0 {
				t.Errorf("base runs no vitrine %s", cmd)
			}
			for _, v := range got[cmd] {
				if v != nodes {
					t.Errorf("vitrine %s: VITRINE_STREAM_REPLICAS %q, want %s (nats/values.yaml config.cluster.replicas)", cmd, v, nodes)
				}
			}
		}
	})
	t.Run("overlays/region-eu", func(t *testing.T) {
		for cmd, vs := range streamReplicas(build(t, "overlays/region-eu")) {
			for _, v := range vs {
				if v != "" {
					t.Errorf("region: vitrine %s gets VITRINE_STREAM_REPLICAS %q (the region's leaf node is one server)", cmd, v)
				}
			}
		}
	})
}

// gen-secrets.sh makes certificates that verify for the names compose uses, and nkeys whose
// seeds match the public keys it writes to .env; the compose NATS configuration runs with them
// (on the project's embedded server, paths rewritten) and a Vitrine process connects to it with
// the edge role; `vitrine probe` passes on its monitoring endpoint. `docker compose config`
// checks the whole file where a compose is installed.
func TestComposeSecretsAndNATS(t *testing.T) {
	for _, tool := range []string{"openssl", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: gen-secrets.sh needs it", tool)
		}
	}
	tmp := t.TempDir()
	compose := filepath.Join(tmp, "compose")
	copyTree(t, filepath.Join(deployDir, "compose"), compose)
	copyTree(t, filepath.Join(deployDir, "nats"), filepath.Join(tmp, "nats"))
	os.RemoveAll(filepath.Join(compose, "secrets"))
	os.Remove(filepath.Join(compose, ".env"))
	if out, err := exec.Command("bash", filepath.Join(compose, "gen-secrets.sh")).CombinedOutput(); err != nil {
		t.Fatalf("gen-secrets.sh: %v\n%s", err, out)
	}
	if out, err := exec.Command("bash", filepath.Join(compose, "gen-secrets.sh")).CombinedOutput(); err == nil {
		t.Fatalf("gen-secrets.sh overwrote an existing .env without --force:\n%s", out)
	}
	sec := filepath.Join(compose, "secrets")
	env := readEnvFile(t, filepath.Join(compose, ".env"))
	// Every secret compose.yaml declares is a file gen-secrets.sh made.
	cb, err := os.ReadFile(filepath.Join(compose, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	declared := yMap(yamlDocs(t, "compose.yaml", cb)[0], "secrets")
	for _, name := range sortedKeys(declared) {
		if _, err := os.Stat(filepath.Join(compose, yStr(declared[name], "file"))); err != nil {
			t.Errorf("secret %s: gen-secrets.sh did not make it: %v", name, err)
		}
	}
	if len(declared) < 9 {
		t.Errorf("compose.yaml declares %d secrets", len(declared))
	}
	for _, k := range []string{"POSTGRES_PASSWORD", "VITRINE_SECRET", "VITRINE_EDGE_SECRET"} {
		if len(env[k]) < 32 {
			t.Errorf(".env: %s is %d characters", k, len(env[k]))
		}
	}
	if _, err := parseSecret(env["VITRINE_SECRET"]); err != nil {
		t.Errorf(".env: VITRINE_SECRET: %v", err)
	}
	if err := checkEdgeSecret(env["VITRINE_EDGE_SECRET"]); err != nil {
		t.Errorf(".env: VITRINE_EDGE_SECRET: %v", err)
	}
	for _, role := range []string{"relay", "origin", "edge", "leaf", "admin"} {
		seed, err := os.ReadFile(filepath.Join(sec, "nats-"+role+".nk"))
		if err != nil {
			t.Fatal(err)
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
		if err != nil {
			t.Fatalf("nats-%s.nk: %v", role, err)
		}
		pub, _ := kp.PublicKey()
		if want := env["VITRINE_NATS_"+strings.ToUpper(role)+"_NKEY"]; pub != want || !nkeys.IsValidPublicUserKey(pub) {
			t.Errorf("%s: the seed's public key is %s, .env says %s", role, pub, want)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(sec, "nats-ca.pem")))
	server := readCert(t, filepath.Join(sec, "nats-server.pem"))
	for _, name := range []string{"nats-1", "nats-2", "nats-3", "localhost"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("server certificate for %s (usage %v): %v", name, usage, err)
			}
		}
	}
	client := readCert(t, filepath.Join(sec, "nats-client.pem"))
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}

	// The compose NATS configuration, on this machine: paths under the temporary folder, every
	// listener on a free loopback port.
	conf, err := os.ReadFile(filepath.Join(compose, "nats", "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	rewritten := strings.NewReplacer(
		"/run/secrets/", sec+"/",
		"store_dir: /data", "store_dir: "+filepath.Join(tmp, "js"),
		"http: 0.0.0.0:8222", "http: 127.0.0.1:-1",
		"listen: 0.0.0.0:6222", "listen: 127.0.0.1:-1",
	).Replace(string(conf))
	if rewritten == string(conf) || strings.Contains(rewritten, "/run/secrets") {
		t.Fatalf("nats.conf: the rewrite for the test did not apply")
	}
	confDir := filepath.Join(tmp, "natsconf")
	os.MkdirAll(confDir, 0o755)
	os.WriteFile(filepath.Join(confDir, "nats.conf"), []byte(rewritten), 0o644)
	copyFile(t, filepath.Join(deployDir, "nats", "vitrine-accounts.conf"), filepath.Join(confDir, "vitrine-accounts.conf"))
	for k, v := range env {
		if strings.HasPrefix(k, "VITRINE_NATS_") {
			t.Setenv(k, v)
		}
	}
	t.Setenv("NATS_SERVER_NAME", "nats-1")
	s, err := natsembed.Start(natsembed.Options{ConfigFile: filepath.Join(confDir, "nats.conf"), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("the compose NATS configuration does not run: %v", err)
	}
	defer s.Shutdown()
	f := newFlags("edge")
	cm := f.common()
	addr := s.Addr().(*net.TCPAddr)
	if err := f.Parse([]string{"--nats-url", fmt.Sprintf("tls://localhost:%d", addr.Port),
		"--nats-nkey", filepath.Join(sec, "nats-edge.nk"), "--nats-tls-ca", filepath.Join(sec, "nats-ca.pem"),
		"--nats-tls-cert", filepath.Join(sec, "nats-client.pem"), "--nats-tls-key", filepath.Join(sec, "nats-client-key.pem")}); err != nil {
		t.Fatal(err)
	}
	nc, err := cm.dialNATS("deploy-test", testLogger(t))
	if err != nil {
		t.Fatalf("an edge cannot connect to the compose NATS with the generated credentials: %v", err)
	}
	nc.Close()
	mon := s.MonitorAddr()
	if mon == nil {
		t.Fatal("the compose NATS configuration has no monitoring port")
	}
	if _, err := probe(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/healthz?js-enabled-only=true", mon.Port), 2*time.Second); err != nil {
		t.Errorf("the NATS health check fails: %v", err)
	}

	// docker compose config, where a compose is installed (the file, .env and secrets as made).
	var composeCmd []string
	if exec.Command("docker", "compose", "version").Run() == nil {
		composeCmd = []string{"docker", "compose"}
	} else if p, err := exec.LookPath("docker-compose"); err == nil {
		composeCmd = []string{p}
	} else if p, err := exec.LookPath("podman-compose"); err == nil {
		composeCmd = []string{p}
	}
	if composeCmd == nil {
		t.Log("no docker compose, docker-compose or podman-compose here: `compose config` not run")
		return
	}
	cmd := exec.Command(composeCmd[0], append(composeCmd[1:], "-f", filepath.Join(compose, "compose.yaml"), "config")...)
	cmd.Dir = compose
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s config: %v\n%s", strings.Join(composeCmd, " "), err, out)
	}
	for _, svc := range []string{"nats-1", "migrate", "relay-2", "origin-2", "edge-2"} {
		if !bytes.Contains(out, []byte(svc+":")) {
			t.Errorf("%s config: no service %s in\n%s", strings.Join(composeCmd, " "), svc, out)
		}
	}
}

func readEnvFile(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	return env
}

func readCert(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", name)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(from)
	if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------- Kubernetes

// externalSecrets are Secrets the manifests mount that something else makes, with who does.
var externalSecrets = map[string]string{
	"cockroachdb-node": "the CockroachDB operator (cockroachdb/crdbcluster.yaml, tlsEnabled): its ca.crt verifies the database",
}

// kustomizations are the folders under deploy/kubernetes holding a kustomization.yaml.
func kustomizations(t *testing.T) []string {
	t.Helper()
	var dirs []string
	root := filepath.Join(deployDir, "kubernetes")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "kustomization.yaml" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 4 {
		t.Fatalf("found %d kustomizations under %s", len(dirs), root)
	}
	return dirs
}

// Each kustomization builds (kubectl kustomize) and what it builds is consistent with the
// binary and with itself; without kubectl, the manifests as written are checked alone.
func TestKubernetesMatchesBinary(t *testing.T) {
	t.Parallel()
	c := vitrineCLI(t)
	confVars := natsConfVars(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Log("kubectl is not installed: kustomize builds not run, checking the manifests as written")
		var docs []map[string]any
		for _, dir := range kustomizations(t) {
			k := kustomizationFile(t, dir)
			for _, r := range yStrs(yList(k, "resources")) {
				if b, err := os.ReadFile(filepath.Join(dir, r)); err == nil {
					docs = append(docs, yamlDocs(t, r, b)...)
				}
			}
		}
		checkWorkloads(t, c, "as written", docs, confVars, false)
		return
	}
	base := kustomizationFile(t, filepath.Join(deployDir, "kubernetes", "base"))
	var wantImage string
	for _, img := range yList(base, "images") {
		if yStr(img, "name") == "vitrine" {
			wantImage = yStr(img, "newName") + ":" + yStr(img, "newTag")
		}
	}
	if wantImage == "" {
		t.Fatal("base/kustomization.yaml sets no image for vitrine")
	}
	for _, dir := range kustomizations(t) {
		rel, _ := filepath.Rel(filepath.Join(deployDir, "kubernetes"), dir)
		t.Run(rel, func(t *testing.T) {
			out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
			}
			docs := yamlDocs(t, "kustomize "+rel, out)
			if len(docs) == 0 {
				t.Fatalf("kubectl kustomize %s built nothing", dir)
			}
			for _, d := range docs {
				for _, ctr := range containers(d) {
					if img := yStr(ctr, "image"); img != wantImage && strings.Contains(img, "vitrine") {
						t.Errorf("%s %s: image %q, want %q (base/kustomization.yaml images)", yStr(d, "kind"), yStr(d, "metadata", "name"), img, wantImage)
					}
				}
			}
			checkWorkloads(t, c, rel, docs, confVars, true)
		})
	}
}

func kustomizationFile(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := yamlDocs(t, dir, b)
	if len(docs) != 1 {
		t.Fatalf("%s/kustomization.yaml: %d documents", dir, len(docs))
	}
	return docs[0]
}

// podSpec is a workload's pod spec (Deployment, StatefulSet, DaemonSet, Job), or nil.
func podSpec(d map[string]any) map[string]any {
	switch yStr(d, "kind") {
	case "Deployment", "StatefulSet", "DaemonSet", "Job":
		return yMap(d, "spec", "template", "spec")
	}
	return nil
}

func containers(d map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"initContainers", "containers"} {
		for _, c := range yList(podSpec(d), k) {
			if cm := yMap(c); cm != nil {
				out = append(out, cm)
			}
		}
	}
	return out
}

// checkWorkloads checks a set of Kubernetes objects: every vitrine container's command line,
// variables and probes against the binary; with refs, that every Secret, ConfigMap (and key)
// and Service port named exists in the set, and that Services reach a container port.
func checkWorkloads(t *testing.T, c *cli, where string, docs []map[string]any, confVars map[string]bool, refs bool) {
	t.Helper()
	objects := map[string]map[string]any{} // kind/name
	for _, d := range docs {
		objects[yStr(d, "kind")+"/"+yStr(d, "metadata", "name")] = d
	}
	keysOf := func(kind, name string) (map[string]bool, bool) {
		d, ok := objects[kind+"/"+name]
		if !ok {
			return nil, false
		}
		keys := map[string]bool{}
		for _, field := range []string{"data", "stringData"} {
			for k := range yMap(d, field) {
				keys[k] = true
			}
		}
		return keys, true
	}
	for _, d := range docs {
		spec := podSpec(d)
		if spec == nil {
			continue
		}
		name := yStr(d, "kind") + " " + yStr(d, "metadata", "name")
		if refs {
			for _, v := range yList(spec, "volumes") {
				if s := yStr(v, "secret", "secretName"); s != "" {
					if _, ok := keysOf("Secret", s); !ok && externalSecrets[s] == "" {
						t.Errorf("%s: %s mounts Secret %s, which the kustomization does not make", where, name, s)
					}
				}
				if cmName := yStr(v, "configMap", "name"); cmName != "" {
					if _, ok := keysOf("ConfigMap", cmName); !ok {
						t.Errorf("%s: %s mounts ConfigMap %s, which the kustomization does not make", where, name, cmName)
					}
				}
			}
			if sec := yMap(spec, "securityContext"); yStr(sec, "runAsNonRoot") != "true" || yStr(sec, "seccompProfile", "type") != "RuntimeDefault" {
				t.Errorf("%s: %s: the pod must run as non-root with the RuntimeDefault seccomp profile", where, name)
			}
		}
		for _, ctr := range containers(d) {
			cname := name + " container " + yStr(ctr, "name")
			if refs {
				sc := yMap(ctr, "securityContext")
				if yStr(sc, "readOnlyRootFilesystem") != "true" || yStr(sc, "allowPrivilegeEscalation") != "false" ||
					!slices.Contains(yStrs(yList(sc, "capabilities", "drop")), "ALL") {
					t.Errorf("%s: %s: want a read-only root file system, no privilege escalation, every capability dropped", where, cname)
				}
			}
			if !strings.Contains(yStr(ctr, "image"), "vitrine") {
				continue
			}
			if len(yList(ctr, "command")) > 0 {
				t.Errorf("%s: %s overrides the image's entrypoint; give the command in args", where, cname)
			}
			inv, err := c.parse(yStrs(yList(ctr, "args")))
			if err != nil {
				t.Errorf("%s: %s: %v", where, cname, err)
				continue
			}
			// Its environment: explicit variables and every key of the ConfigMaps and Secrets
			// it takes whole.
			env := map[string]string{}
			for _, e := range yList(ctr, "env") {
				k := yStr(e, "name")
				env[k] = yStr(e, "value")
				if vf := yMap(e, "valueFrom"); vf != nil {
					env[k] = "$ref"
					for kind, ref := range map[string]map[string]any{"Secret": yMap(vf, "secretKeyRef"), "ConfigMap": yMap(vf, "configMapKeyRef")} {
						if ref == nil || !refs {
							continue
						}
						keys, ok := keysOf(kind, yStr(ref, "name"))
						if !ok && externalSecrets[yStr(ref, "name")] == "" {
							t.Errorf("%s: %s: %s names %s %s, which the kustomization does not make", where, cname, k, kind, yStr(ref, "name"))
						} else if ok && !keys[yStr(ref, "key")] {
							t.Errorf("%s: %s: %s names key %s of %s %s, which has no such key", where, cname, k, yStr(ref, "key"), kind, yStr(ref, "name"))
						}
					}
				}
			}
			for _, ef := range yList(ctr, "envFrom") {
				for kind, ref := range map[string]map[string]any{"ConfigMap": yMap(ef, "configMapRef"), "Secret": yMap(ef, "secretRef")} {
					if ref == nil {
						continue
					}
					d, ok := objects[kind+"/"+yStr(ref, "name")]
					if !ok {
						if refs {
							t.Errorf("%s: %s takes %s %s whole, which the kustomization does not make", where, cname, kind, yStr(ref, "name"))
						}
						continue
					}
					for _, field := range []string{"data", "stringData"} {
						for k, v := range yMap(d, field) {
							env[k] = yStr(v)
							if kind == "Secret" {
								env[k] = "$secret"
							}
						}
					}
				}
			}
			for _, p := range checkEnv(inv, env, confVars) {
				t.Errorf("%s: %s: %s", where, cname, p)
			}
			for _, p := range leastPrivilege(inv, env) {
				t.Errorf("%s: %s: %s", where, cname, p)
			}
			// Probes: HTTP GETs on a declared port that is the ops address's (or the NATS
			// monitoring port), /readyz for readiness, /healthz for liveness.
			ports := map[string]string{}
			for _, p := range yList(ctr, "ports") {
				ports[yStr(p, "name")] = yStr(p, "containerPort")
				ports[yStr(p, "containerPort")] = yStr(p, "containerPort")
			}
			for _, kind := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
				pr := yMap(ctr, kind)
				if pr == nil {
					if inv.cmd.name != "migrate" {
						t.Errorf("%s: %s has no %s", where, cname, kind)
					}
					continue
				}
				get := yMap(pr, "httpGet")
				if get == nil {
					t.Errorf("%s: %s: %s is not an HTTP GET", where, cname, kind)
					continue
				}
				port, ok := ports[yStr(get, "port")]
				if !ok {
					t.Errorf("%s: %s: %s on port %s, which the container does not declare", where, cname, kind, yStr(get, "port"))
					continue
				}
				path, _, _ := strings.Cut(yStr(get, "path"), "?")
				if err := checkProbe(inv, port, path, env); err != nil {
					t.Errorf("%s: %s: %s: %v", where, cname, kind, err)
				}
				if want := map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"}[kind]; want != "" && inv.cmd.name != "nats" && path != want {
					t.Errorf("%s: %s: %s asks %s, want %s", where, cname, kind, path, want)
				}
			}
			// Listen addresses match declared ports.
			for _, flag := range []string{"addr", "ops-addr"} {
				if v, ok := inv.flags[flag]; ok {
					_, port, _ := net.SplitHostPort(v)
					if _, declared := ports[port]; !declared {
						t.Errorf("%s: %s: --%s=%s, and the container declares no port %s", where, cname, flag, v, port)
					}
				}
			}
			// Files named by variables are under a mount.
			if slices.Contains([]string{"relay", "origin", "edge"}, inv.cmd.name) {
				for _, k := range []string{"VITRINE_NATS_NKEY", "VITRINE_NATS_TLS_CA", "VITRINE_NATS_TLS_CERT", "VITRINE_NATS_TLS_KEY"} {
					v := env[k]
					if v == "" || !strings.HasPrefix(v, "/") {
						continue
					}
					mounted := false
					for _, vm := range yList(ctr, "volumeMounts") {
						if mp := yStr(vm, "mountPath"); strings.HasPrefix(v, strings.TrimSuffix(mp, "/")+"/") {
							mounted = true
						}
					}
					if !mounted {
						t.Errorf("%s: %s: %s=%s is under no volume mount", where, cname, k, v)
					}
				}
			}
			// An edge's origin URL names a Service port that reaches an origin container.
			if inv.cmd.name == "edge" && refs {
				checkServiceURL(t, where, cname, env["VITRINE_ORIGIN_URL"], objects, docs)
			}
			if raw := env["VITRINE_NATS_URL"]; refs && raw != "" {
				for _, one := range strings.Split(raw, ",") {
					checkServiceURL(t, where, cname, one, objects, docs)
				}
			}
		}
	}
	if !refs {
		return
	}
	// Services reach a container port of the pods they select.
	for _, d := range docs {
		if yStr(d, "kind") != "Service" {
			continue
		}
		if len(serviceTargets(d, docs)) == 0 {
			t.Errorf("%s: Service %s selects no workload of the kustomization", where, yStr(d, "metadata", "name"))
		}
		for _, p := range yList(d, "spec", "ports") {
			if _, err := servicePort(d, yStr(p, "port"), docs); err != nil {
				t.Errorf("%s: Service %s: %v", where, yStr(d, "metadata", "name"), err)
			}
		}
	}
	// HorizontalPodAutoscalers and PodDisruptionBudgets point at workloads of the set.
	for _, d := range docs {
		switch yStr(d, "kind") {
		case "HorizontalPodAutoscaler":
			ref := yMap(d, "spec", "scaleTargetRef")
			if _, ok := objects[yStr(ref, "kind")+"/"+yStr(ref, "name")]; !ok {
				t.Errorf("%s: HorizontalPodAutoscaler %s scales %s %s, which the kustomization does not make", where, yStr(d, "metadata", "name"), yStr(ref, "kind"), yStr(ref, "name"))
			}
		case "PodDisruptionBudget":
			if len(selected(yMap(d, "spec", "selector", "matchLabels"), docs)) == 0 {
				t.Errorf("%s: PodDisruptionBudget %s selects no workload", where, yStr(d, "metadata", "name"))
			}
		}
	}
}

// selected are the workloads whose pod labels include match.
func selected(match map[string]any, docs []map[string]any) []map[string]any {
	var out []map[string]any
	if len(match) == 0 {
		return nil
	}
	for _, d := range docs {
		if podSpec(d) == nil {
			continue
		}
		labels := yMap(d, "spec", "template", "metadata", "labels")
		ok := true
		for k, v := range match {
			if yStr(labels[k]) != yStr(v) {
				ok = false
			}
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

func serviceTargets(svc map[string]any, docs []map[string]any) []map[string]any {
	return selected(yMap(svc, "spec", "selector"), docs)
}

// servicePort returns the container port a Service's port reaches, or why none.
func servicePort(svc map[string]any, port string, docs []map[string]any) (string, error) {
	for _, p := range yList(svc, "spec", "ports") {
		if yStr(p, "port") != port {
			continue
		}
		target := yStr(p, "targetPort")
		if target == "" {
			target = port
		}
		for _, d := range serviceTargets(svc, docs) {
			for _, ctr := range containers(d) {
				for _, cp := range yList(ctr, "ports") {
					if yStr(cp, "name") == target || yStr(cp, "containerPort") == target {
						return yStr(cp, "containerPort"), nil
					}
				}
			}
		}
		return "", fmt.Errorf("port %s: target %s is no container port of the pods it selects", port, target)
	}
	return "", fmt.Errorf("no port %s", port)
}

// checkServiceURL checks a URL naming a Service of the set (<name>, <name>.<namespace>.svc…):
// the Service has the port and it reaches a container; a URL naming none (another cluster, the
// NATS Helm release) is not checked.
func checkServiceURL(t *testing.T, where, cname, raw string, objects map[string]map[string]any, docs []map[string]any) {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		t.Errorf("%s: %s: URL %q: %v", where, cname, raw, err)
		return
	}
	host, _, _ := strings.Cut(u.Hostname(), ".")
	svc, ok := objects["Service/"+host]
	if !ok {
		return
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if _, err := servicePort(svc, port, docs); err != nil {
		t.Errorf("%s: %s: %s: Service %s: %v", where, cname, raw, host, err)
	}
}

// The copies kustomize needs (it reads files inside a kustomization's folder only) are the
// files of deploy/nats.
func TestKubernetesNATSCopies(t *testing.T) {
	for copyName, original := range map[string]string{
		"kubernetes/nats/vitrine-accounts.conf":                      "nats/vitrine-accounts.conf",
		"kubernetes/overlays/region-eu/vitrine-region-accounts.conf": "nats/vitrine-region-accounts.conf",
	} {
		a, err := os.ReadFile(filepath.Join(deployDir, copyName))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(deployDir, original))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("deploy/%s differs from deploy/%s: cp deploy/%[2]s deploy/%[1]s", copyName, original)
		}
	}
	// The Helm values name what the nats kustomization makes.
	b, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", "nats", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values := yamlDocs(t, "nats/values.yaml", b)[0]
	if yStr(values, "config", "cluster", "replicas") != "3" || yStr(values, "config", "jetstream", "enabled") != "true" ||
		yStr(values, "config", "jetstream", "merge", "domain") != "central" {
		t.Errorf("nats/values.yaml: want a 3-node cluster with JetStream in domain central")
	}
	if inc := yStr(values, "config", "merge", "$include"); !strings.HasSuffix(inc, "/vitrine-accounts.conf") {
		t.Errorf("nats/values.yaml: the accounts are not included (config.merge.$include %q)", inc)
	}
	pk, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", "nats", "public-keys.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	keys := yMap(yamlDocs(t, "nats/public-keys.yaml", pk)[0], "data")
	accounts, _ := os.ReadFile(filepath.Join(deployDir, "nats", "vitrine-accounts.conf"))
	for _, mm := range regexp.MustCompile(`\$(VITRINE_[A-Z0-9_]+)`).FindAllStringSubmatch(string(accounts), -1) {
		if _, ok := yMap(values, "container", "env")[mm[1]]; !ok {
			t.Errorf("nats/values.yaml: vitrine-accounts.conf reads $%s, the NATS container has no such variable", mm[1])
		}
		if _, ok := keys[mm[1]]; !ok {
			t.Errorf("nats/public-keys.yaml: no %s", mm[1])
		}
	}
}

// ---------------------------------------------------------------- the image

// The Dockerfile's final stages are FROM scratch, run as uid 65532 (a user /etc/passwd names),
// check their health with `vitrine probe` on the ops address the image sets, and copy only
// files that exist; Dockerfile.dockerignore keeps .git (the build stamps the revision) and the local
// secrets out of nothing else.
func TestDockerfile(t *testing.T) {
	c := vitrineCLI(t)
	b, err := os.ReadFile(filepath.Join(deployDir, "container", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	type stage struct {
		from, name, user, ops string
		health                []string
		entrypoint            string
	}
	var stages []*stage
	var cur *stage
	lines := strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n")
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			f := strings.Fields(rest)
			cur = &stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				cur.name = f[2]
			}
			stages = append(stages, cur)
		case "USER":
			cur.user = strings.TrimSpace(rest)
		case "ENV":
			if mm := regexp.MustCompile(`VITRINE_OPS_ADDR=(\S+)`).FindStringSubmatch(rest); mm != nil {
				cur.ops = mm[1]
			}
		case "ENTRYPOINT":
			cur.entrypoint = strings.TrimSpace(rest)
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(rest, "CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK without CMD: %s", line)
			}
			if err := yaml.Unmarshal([]byte(cmd), &cur.health); err != nil {
				t.Fatalf("HEALTHCHECK CMD is not an exec array (the image has no shell): %s", cmd)
			}
		case "COPY":
			f := strings.Fields(rest)
			if slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "--from=") }) {
				continue
			}
			for _, src := range f[:len(f)-1] {
				if strings.HasPrefix(src, "--") || strings.HasPrefix(src, "bin/") || src == "." {
					continue // options; the prebuilt binary is made by build.sh
				}
				if _, err := os.Stat(filepath.Join(deployDir, "..", src)); err != nil {
					t.Errorf("COPY %s: %v", src, err)
				}
			}
		}
	}
	finals := 0
	for _, s := range stages {
		if s.from != "scratch" {
			continue
		}
		finals++
		if s.user != "65532:65532" {
			t.Errorf("stage %s runs as %q, want 65532:65532", s.name, s.user)
		}
		if s.entrypoint != `["/usr/local/bin/vitrine"]` {
			t.Errorf("stage %s: ENTRYPOINT %s", s.name, s.entrypoint)
		}
		if len(s.health) < 3 || s.health[0] != "/usr/local/bin/vitrine" {
			t.Errorf("stage %s: HEALTHCHECK %q does not run vitrine probe", s.name, s.health)
			continue
		}
		inv, err := c.parse(s.health[1:])
		if err != nil || inv.cmd.name != "probe" {
			t.Errorf("stage %s: HEALTHCHECK: %v", s.name, err)
			continue
		}
		// Any role's ops address is the image's VITRINE_OPS_ADDR unless a flag says otherwise.
		edge, err := c.parse([]string{"edge"})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkProbeURL(edge, inv.positional[0], map[string]string{"VITRINE_OPS_ADDR": s.ops}); err != nil {
			t.Errorf("stage %s: HEALTHCHECK: %v", s.name, err)
		}
	}
	if finals != 2 || stages[len(stages)-1].from != "scratch" {
		t.Errorf("want two final stages FROM scratch (prebuilt, image), the default last; got %d", finals)
	}
	// A binary that runs FROM scratch: no cgo, and nodynamic, without which gen2brain/webp links
	// it against the system's loader and libdl (to dlopen libwebp.so) even with cgo off.
	script, err := os.ReadFile(filepath.Join(deployDir, "container", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"Dockerfile": string(b), "build.sh": string(script)} {
		for _, want := range []string{"CGO_ENABLED=0", "-tags timetzdata,nodynamic"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the binary is not built with %s", name, want)
			}
		}
	}
	passwd, err := os.ReadFile(filepath.Join(deployDir, "container", "rootfs", "etc", "passwd"))
	if err != nil || !regexp.MustCompile(`(?m)^vitrine:x:65532:65532:`).Match(passwd) {
		t.Errorf("rootfs/etc/passwd names no user 65532: %v", err)
	}
	ignore, err := os.ReadFile(filepath.Join(deployDir, "container", "Dockerfile.dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		if strings.TrimSpace(line) == ".git" {
			t.Errorf(".dockerignore excludes .git: the image's binary would carry no revision")
		}
	}
	for _, want := range []string{"deploy/compose/secrets", "deploy/compose/.env", "!bin/container"} {
		if !bytes.Contains(ignore, []byte(want+"\n")) {
			t.Errorf(".dockerignore: no %q", want)
		}
	}
}
