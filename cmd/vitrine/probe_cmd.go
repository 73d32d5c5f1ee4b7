package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

// defaultProbeTimeout bounds a probe: shorter than the shortest health check interval the
// shipped manifests use (5 s), so that probes never pile up.
const defaultProbeTimeout = 2 * time.Second

// runProbe is `vitrine probe <url>`: a health check for an image that has no shell and no curl
// (deploy/container). It sends one GET to url, without a proxy and without following redirects,
// and succeeds only on a 2xx answer within the timeout; anything else (another status, a refused
// connection, a timeout, a malformed URL) is an error, so the process exits 1. The status line
// goes to standard output, where Docker keeps the last health checks' output.
func runProbe(ctx context.Context, args []string) error {
	f := newFlags("probe")
	timeout := f.Duration("timeout", "VITRINE_PROBE_TIMEOUT", defaultProbeTimeout, "bound of the whole request, connection included")
	f.FlagSet.Usage = func() {
		fmt.Fprintf(f.FlagSet.Output(), "Usage: vitrine probe [flags] <url>\n  GET url; exit 0 on a 2xx answer, 1 otherwise (e.g. http://127.0.0.1:9090/readyz)\n")
		f.FlagSet.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() != 1 {
		return fmt.Errorf("probe: want exactly one URL, e.g. `vitrine probe http://127.0.0.1:9090/healthz`")
	}
	status, err := probe(ctx, f.Arg(0), *timeout)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, status)
	return nil
}

// errProbeStatus is wrapped by probe when the endpoint answered with a status other than 2xx.
var errProbeStatus = errors.New("probe: unhealthy answer")

// probe GETs raw within timeout and returns the answer's status line when it is a 2xx.
func probe(ctx context.Context, raw string, timeout time.Duration) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("probe: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("probe: %q is not an http:// or https:// URL", raw)
	}
	if timeout <= 0 {
		return "", fmt.Errorf("probe: --timeout must be positive, not %v", timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("probe: %w", err)
	}
	req.Header.Set("User-Agent", "vitrine-probe")
	// A health check asks the process itself: no proxy from the environment, no connection
	// kept for a next probe, no redirect followed (a redirect is not health).
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("probe: %w", err)
	}
	defer resp.Body.Close()
	// The ops endpoints answer a few hundred bytes; read at most 4 KiB so the connection closes
	// cleanly, and ignore the rest.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("%w: %s from %s", errProbeStatus, resp.Status, u.Redacted())
	}
	return resp.Status, nil
}
