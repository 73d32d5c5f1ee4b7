package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func signalNotify(ch chan os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }

// relayLogLevel is the log level of relay processes ($VITRINE_TEST_RELAY_LOG, default warn).
func relayLogLevel() string {
	if l := os.Getenv("VITRINE_TEST_RELAY_LOG"); l != "" {
		return l
	}
	return "warn"
}

// e2eTools returns node and the e2e folder for the tests that run real clients (testdata/e2e/*.mjs),
// and the Chromium binary when browser is set, after checking that the npm package module is
// installed there. Without them the test is skipped with the reason, or fails under
// VITRINE_REQUIRE_BROWSER=1 (make test installs everything first: a missing piece is a failure).
func e2eTools(t *testing.T, module string, browser bool) (node, e2e, chromium string) {
	t.Helper()
	skip := t.Skip
	if os.Getenv("VITRINE_REQUIRE_BROWSER") == "1" {
		skip = t.Fatal
	}
	e2e, _ = filepath.Abs(filepath.Join("testdata", "e2e"))
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed (make test installs it)")
	}
	if browser {
		if chromium = os.Getenv("CHROMIUM"); chromium == "" {
			chromium = "/usr/bin/chromium"
		}
		if _, err := os.Stat(chromium); err != nil {
			skip("Chromium is not installed at " + chromium + " (make test installs it)")
		}
	}
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", module)); err != nil {
		skip("testdata/e2e/node_modules/" + module + " is missing: run npm ci --prefix cmd/vitrine/testdata/e2e (make test does)")
	}
	return node, e2e, chromium
}
