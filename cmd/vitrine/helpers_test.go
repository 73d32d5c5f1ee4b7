package main

import (
	"encoding/base64"
	"os"
	"os/signal"
	"syscall"
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
