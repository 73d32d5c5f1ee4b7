package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vitrine/edge"
	"vitrine/origin/store"
	"vitrine/origin/webhooks"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// webhooksPageRun is what testdata/e2e/webhooks.mjs reports.
type webhooksPageRun struct {
	// Secret is the secret the page showed, in the line of step "secret".
	Step, Secret, Error, Body, ID string
	BadURL                        struct {
		Status      int
		Error, Kept string
		KeptKind    bool
	}
	Created, Copied string
	Listed          struct{ Events, Allowlist, Status string }
	AfterReload     int
	SecretAgain     bool
	Queued          string
	Log             struct {
		State, Kind, EventID, Attempts, Summary, Signature, ResponseStatus, ResponseBody, Payload string
		RequestHeaders                                                                            []string
	}
	Disabled struct {
		Status, Reason, Notice string
		CanTest                int
	}
	Enabled struct {
		Status  string
		Notices int
	}
	Rotated, RotateNote string
	CSRF                struct {
		Status int
		Error  string
		Still  int
	}
	Deleted string
}

// TestBrowserWebhooksPage runs the store settings Webhooks page in headless Chromium through an
// edge (testdata/e2e/webhooks.mjs): an administrator signs in, is refused an http URL without an
// allowlist, adds an endpoint for a loopback receiver (its secret shown once), sends it a test
// event that the receiver verifies with that secret, reads the attempt in the delivery log,
// disables and enables the endpoint, rotates its secret and deletes it; a form without its CSRF
// token changes nothing. An editor is refused the page.
func TestBrowserWebhooksPage(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	node, e2e, chromium := e2eTools(t, "playwright-core", true)
	s := newSystem(t, systemOptions{})
	fastWebhooks(s)
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	ctx := context.Background()
	tn, passwords := settingsStore(t, s, "hooks", "Hooks Store")
	rc := newReceiver(t)
	_, port, _ := strings.Cut(e.addr, ":")
	page := "http://hooks.localhost:" + port + schema.WebhooksPagePath
	dir := t.TempDir()
	if d := os.Getenv("VITRINE_SCREENSHOTS"); d != "" {
		dir = d
	}

	// run drives the page as login. When the script has added the endpoint it reports the
	// secret the page showed, and waits: the receiver learns the secret, then the script goes on.
	var shown string // the secret the page showed, as the script reported it mid-run
	run := func(login string) (got webhooksPageRun, err error) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(rctx, node, filepath.Join(e2e, "webhooks.mjs"))
		cmd.Env = append(os.Environ(), "PAGE_URL="+page, "RECEIVER_URL="+rc.url(), "CHROMIUM="+chromium, "LOGIN="+login,
			"PASSWORD="+schema.ChunkAppPassword(passwords[login]),
			"SCREENSHOTS="+dir)
		cmd.Dir = e2e
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		lines.Buffer(nil, 64<<20)
		for lines.Scan() {
			got = webhooksPageRun{}
			if jerr := json.Unmarshal(lines.Bytes(), &got); jerr != nil {
				t.Fatalf("browser output: %v\n%s\nstderr: %s", jerr, lines.Bytes(), stderr.String())
			}
			if got.Step != "secret" {
				break
			}
			rc.mu.Lock()
			rc.secrets, shown = []string{got.Secret}, got.Secret
			rc.mu.Unlock()
			if _, err := stdin.Write([]byte("go\n")); err != nil {
				t.Fatal(err)
			}
		}
		stdin.Close()
		err = cmd.Wait()
		if got.Step == "" && got.Error == "" {
			t.Fatalf("no result from the browser: %v\nstderr: %s", err, stderr.String())
		}
		return got, err
	}

	got, err := run("owner")
	if err != nil || got.Error != "" {
		t.Fatalf("browser run failed: %v %s\n%s", err, got.Error, got.Body)
	}
	t.Run("an http URL without an allowlist is refused in the page", func(t *testing.T) {
		if got.BadURL.Status != 400 || !strings.Contains(got.BadURL.Error, "allowlist names") || got.BadURL.Kept != rc.url() || !got.BadURL.KeptKind {
			t.Fatalf("%+v", got.BadURL)
		}
	})
	t.Run("the secret is shown once", func(t *testing.T) {
		if !strings.HasPrefix(got.Created, webhooks.SecretPrefix) || got.Created != shown || got.Copied == "" || got.AfterReload != 0 || got.SecretAgain {
			t.Fatalf("created %q, copied %q, shown after a reload: %d, in the page: %v", got.Created, got.Copied, got.AfterReload, got.SecretAgain)
		}
		if got.Listed.Events != "customer.created, order.paid" || got.Listed.Allowlist != "127.0.0.1/32" || got.Listed.Status != "enabled" {
			t.Fatalf("listed %+v", got.Listed)
		}
	})
	t.Run("the test event arrives signed and its attempt is in the log", func(t *testing.T) {
		ev := rc.events()
		rc.mu.Lock()
		bad := rc.badSigs
		rc.mu.Unlock()
		if len(ev) != 1 || ev[0].env.Kind != webhooks.TestKind || bad != 0 {
			t.Fatalf("the receiver got %+v (%d bad signatures)", ev, bad)
		}
		l := got.Log
		if !strings.Contains(got.Queued, ev[0].env.ID) || l.State != "delivered" || l.Kind != webhooks.TestKind || l.EventID != ev[0].env.ID ||
			l.Attempts != "1 attempt" || !strings.Contains(l.Summary, "200 OK") || l.ResponseStatus != "200 OK" || l.ResponseBody != `{"ok":true}` {
			t.Fatalf("queued %q, log %+v", got.Queued, l)
		}
		headers := strings.Join(l.RequestHeaders, ",")
		for _, h := range []string{webhooks.HeaderSignature, webhooks.HeaderTimestamp, webhooks.HeaderEventID} {
			if !strings.Contains(headers, h) {
				t.Errorf("request headers %s lack %s", headers, h)
			}
		}
		if !strings.HasPrefix(l.Signature, "sha256=") || !strings.Contains(l.Payload, `"test": true`) {
			t.Fatalf("signature %q, payload %s", l.Signature, l.Payload)
		}
	})
	t.Run("disable and enable", func(t *testing.T) {
		d := got.Disabled
		if d.Status != "disabled" || !strings.Contains(d.Reason, "disabled by staff") || !strings.Contains(d.Notice, "disabled by staff") || d.CanTest != 0 {
			t.Fatalf("disabled %+v", d)
		}
		if got.Enabled.Status != "enabled" || got.Enabled.Notices != 0 {
			t.Fatalf("enabled %+v", got.Enabled)
		}
	})
	t.Run("rotation shows a new secret once", func(t *testing.T) {
		if !strings.HasPrefix(got.Rotated, webhooks.SecretPrefix) || got.Rotated == got.Created || !strings.Contains(got.RotateNote, "previous secret") {
			t.Fatalf("rotated %q (created %q): %s", got.Rotated, got.Created, got.RotateNote)
		}
	})
	t.Run("a form without its CSRF token is refused", func(t *testing.T) {
		if got.CSRF.Status != 403 || !strings.Contains(got.CSRF.Error, "session expired") || got.CSRF.Still != 1 {
			t.Fatalf("%+v", got.CSRF)
		}
	})
	t.Run("delete", func(t *testing.T) {
		left, err := store.TxValue(ctx, s.db, func(tx *store.Tx) ([]*store.WebhookEndpoint, error) { return tx.WebhookEndpoints(ctx, tn) })
		if err != nil || len(left) != 0 || got.Deleted != "Endpoint deleted." {
			t.Fatalf("endpoints left %d (%v); message %q", len(left), err, got.Deleted)
		}
	})

	// An editor signs in and is refused the page.
	if got, _ := run("editor"); !strings.Contains(got.Error, "Only administrators manage webhooks.") {
		t.Fatalf("an editor reached the page: %+v", got.Error)
	}
}
