package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"vitrine/origin/store"
)

// tenantHost is the Host header of the demo tenant `vitrine dev` seeds (slug "demo" under the
// default platform domain).
const tenantHost = "demo.localhost"

// devServer is `vitrine dev` as a child process: the edge, the origin (which answers public reads
// from its own replica), the relay and an embedded NATS in one process, on a fresh database,
// with a demo tenant of a given size. Edge rate limits are off.
type devServer struct {
	proc   *proc
	dbURL  string
	edge   string // host:port of the edge
	origin string // host:port of the origin
	nats   string // host:port of the embedded NATS
	dir    string
	// edgeSecret is this run's edge secret, given to the dev server and every extra edge.
	edgeSecret string
}

// startDev starts `vitrine dev` on a fresh database named vitrine_bench_<random> and waits until
// it has seeded products and posts and both replicas serve them (it writes dev.json then).
func startDev(ctx context.Context, env Env, dir string, products, posts int) (*devServer, error) {
	dbURL, err := freshDatabase(env.DatabaseURL)
	if err != nil {
		return nil, err
	}
	var secret [32]byte
	rand.Read(secret[:])
	d := &devServer{dbURL: dbURL, dir: filepath.Join(dir, "dev"), edgeSecret: hex.EncodeToString(secret[:])}
	addrs := make([]string, 4)
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			return nil, err
		}
	}
	d.edge, d.origin, d.nats = addrs[0], addrs[1], addrs[3]
	d.proc, err = startProc("vitrine-dev", dir, env.ServerCPUs, nil, env.Binary, "dev",
		"-data-dir", d.dir, "-database-url", dbURL, "-log-level", "warn",
		"-edge-addr", d.edge, "-origin-addr", d.origin, "-ops-addr", addrs[2], "-nats-addr", d.nats,
		"-products", strconv.Itoa(products), "-posts", strconv.Itoa(posts), "-rate-limit", "-1",
		"-edge-secret", d.edgeSecret)
	if err != nil {
		store.DropDatabase(context.WithoutCancel(ctx), dbURL)
		return nil, err
	}
	// Seeding ran at 250–1,000 products a second here (10k in ~40 s on a busy machine): allow
	// for the slow end.
	timeout := 2*time.Minute + time.Duration(products)*6*time.Millisecond
	start := time.Now()
	info := filepath.Join(d.dir, "dev.json")
	for {
		if _, err := os.Stat(info); err == nil {
			break
		}
		if err := d.proc.exited(); err != nil {
			d.close(ctx)
			return nil, err
		}
		if time.Since(start) > timeout || ctx.Err() != nil {
			d.close(ctx)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("bench: vitrine dev did not seed %d products within %v: %s", products, timeout, d.proc.tail())
		}
		env.progress("starting vitrine dev: seeding %d products (%s)", products, time.Since(start).Round(time.Second))
		time.Sleep(250 * time.Millisecond)
	}
	env.logger().Info("vitrine dev ready", "products", products, "seconds", time.Since(start).Seconds())
	return d, nil
}

// close stops the server and drops its database.
func (d *devServer) close(ctx context.Context) error {
	d.proc.stop()
	os.RemoveAll(d.dir)
	return store.DropDatabase(context.WithoutCancel(ctx), d.dbURL)
}

// startEdge starts another `vitrine edge` following the dev server's stream, with extra flags
// (e.g. -cache-bytes -1), and waits until it serves the demo tenant.
func (d *devServer) startEdge(ctx context.Context, env Env, dir, name string, flags ...string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	ops, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	argv := append([]string{env.Binary, "edge", "-nats-url", "nats://" + d.nats, "-addr", addr, "-ops-addr", ops,
		"-origin-url", "http://" + d.origin, "-rate-limit", "-1", "-log-level", "warn", "-edge-secret", d.edgeSecret,
		// The dev server's embedded NATS is a bare local one (no credentials, no TLS).
		"-nats-insecure"}, flags...)
	p, err := startProc(name, dir, env.ServerCPUs, nil, argv...)
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP(ctx, p, "http://"+ops+"/readyz", 200, 5*time.Minute); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, addr, nil
}

// freshDatabase returns base (a PostgreSQL URL) naming a new database vitrine_bench_<random>.
// `vitrine dev` creates it; close drops it.
func freshDatabase(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("bench: database URL %q: want postgres://host:port/[db]", base)
	}
	var b [6]byte
	rand.Read(b[:])
	u.Path = "/vitrine_bench_" + hex.EncodeToString(b[:])
	return u.String(), nil
}
