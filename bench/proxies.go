package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ensureTools finds the binaries of nginx and varnish, installing Debian's packages with apt-get
// when one is missing (the bench runs as root on the machines it targets). It returns the paths,
// or an error naming what to install.
func ensureTools(ctx context.Context, env Env) (nginx, varnishd string, err error) {
	look := func() {
		nginx, _ = exec.LookPath("nginx")
		if nginx == "" {
			if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
				nginx = "/usr/sbin/nginx"
			}
		}
		varnishd, _ = exec.LookPath("varnishd")
		if varnishd == "" {
			if _, err := os.Stat("/usr/sbin/varnishd"); err == nil {
				varnishd = "/usr/sbin/varnishd"
			}
		}
	}
	look()
	if nginx != "" && varnishd != "" {
		return nginx, varnishd, nil
	}
	env.progress("installing nginx and varnish (apt-get install -y nginx varnish)")
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "nginx", "varnish")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, aerr := cmd.CombinedOutput()
	look()
	if nginx == "" || varnishd == "" {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 600 {
			tail = "…" + tail[len(tail)-600:]
		}
		return nginx, varnishd, fmt.Errorf("bench: nginx and varnish are needed for the baselines: install them with `apt-get install -y nginx varnish` (apt-get: %v: %s)", aerr, tail)
	}
	return nginx, varnishd, nil
}

// startNginx runs nginx with proxy_cache in front of origin (host:port), configured in dir, one
// worker per server CPU. Every 200 is cached for an hour whatever the origin's Cache-Control
// says (the origin sends "public, no-cache" so that browsers revalidate; a CDN in front of it
// would be configured the same way). It returns the process and its address.
func startNginx(ctx context.Context, env Env, bin, dir, origin string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	dir = filepath.Join(dir, "nginx")
	for _, d := range []string{"cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, "", err
		}
	}
	workers := max(1, len(env.ServerCPUs))
	conf := fmt.Sprintf(`# nginx proxy_cache in front of the Vitrine origin, written by vitrine bench.
user root;
daemon off;
worker_processes %d;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events {
    worker_connections 4096;
}
http {
    access_log off;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    proxy_cache_path %[2]s/cache levels=1:2 keys_zone=vitrine:64m max_size=4g inactive=1h use_temp_path=off;
    upstream origin {
        server %[3]s;
        keepalive 32;
    }
    server {
        listen %[4]s;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_cache vitrine;
            proxy_cache_key $http_host$request_uri;
            proxy_cache_valid 200 1h;
            proxy_ignore_headers Cache-Control Expires Set-Cookie Vary;
            proxy_cache_lock on;
        }
    }
}
`, workers, dir, origin, addr)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, "", err
	}
	p, err := startProc("nginx", dir, env.ServerCPUs, nil, bin, "-p", dir, "-c", path)
	if err != nil {
		return nil, "", err
	}
	if err := waitTCP(ctx, p, addr, 10*time.Second); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, addr, nil
}

// startVarnish runs varnishd in the foreground in front of origin, configured in dir (its VCL
// caches every 200 for an hour, like nginx's configuration). One thread pool per server CPU.
func startVarnish(ctx context.Context, env Env, bin, dir, origin string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	dir = filepath.Join(dir, "varnish")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	host, port, _ := net.SplitHostPort(origin)
	vcl := fmt.Sprintf(`vcl 4.1;
# Varnish in front of the Vitrine origin, written by vitrine bench.
backend origin {
    .host = "%s";
    .port = "%s";
}
sub vcl_recv {
    # Anonymous reads only: cache by URL and Host whatever the request carries.
    return (hash);
}
sub vcl_backend_response {
    if (beresp.status == 200) {
        set beresp.ttl = 1h;
        set beresp.grace = 0s;
        return (deliver);
    }
}
`, host, port)
	path := filepath.Join(dir, "default.vcl")
	if err := os.WriteFile(path, []byte(vcl), 0o644); err != nil {
		return nil, "", err
	}
	pools := max(1, len(env.ServerCPUs))
	p, err := startProc("varnish", dir, env.ServerCPUs, nil, bin, "-F", "-n", filepath.Join(dir, "work"),
		"-a", addr, "-f", path, "-s", "malloc,512m", "-p", "thread_pools="+strconv.Itoa(pools))
	if err != nil {
		return nil, "", err
	}
	if err := waitTCP(ctx, p, addr, 30*time.Second); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, addr, nil
}

// waitTCP waits until addr accepts connections.
func waitTCP(ctx context.Context, p *proc, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if err := p.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s does not listen on %s after %v: %s", p.name, addr, timeout, p.tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
