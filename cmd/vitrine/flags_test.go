package main

import (
	"bytes"
	"strings"
	"testing"
)

// A secret taken from the environment is used, and never printed by -h (a help screen is
// pasted into tickets and chats).
func TestSecretFlagsNeverPrintTheirValue(t *testing.T) {
	const value = "0123456789abcdef0123456789abcdef-from-env"
	t.Setenv("VITRINE_SECRET", value)
	f := newFlags("test")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret")
	var usage bytes.Buffer
	f.FlagSet.SetOutput(&usage)
	f.FlagSet.PrintDefaults()
	if strings.Contains(usage.String(), value) || !strings.Contains(usage.String(), "$VITRINE_SECRET") {
		t.Fatalf("usage shows the secret or not its variable:\n%s", usage.String())
	}
	if *secret != value {
		t.Fatalf("the environment's secret was not used: %q", *secret)
	}
	if err := f.Parse([]string{"-secret", "from-flag"}); err != nil || *secret != "from-flag" {
		t.Fatalf("the flag did not win: %v %q", err, *secret)
	}
}
