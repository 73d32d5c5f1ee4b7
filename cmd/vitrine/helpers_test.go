package main

import (
	"encoding/base64"
	"os"
	"os/signal"
	"syscall"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func signalNotify(ch chan os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }
