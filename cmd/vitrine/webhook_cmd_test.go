package main

import (
	"context"
	"strings"
	"testing"

	"vitrine/origin/webhooks"
)

// `vitrine webhook`: an endpoint made on the command line gets deliveries signed with the secret
// it printed once; list, test, deliveries, rotate, update and delete work as the admin API.
func TestWebhookCommand(t *testing.T) {
	t.Parallel()
	sh := newShopWith(t, fastWebhooks)
	rc := newReceiver(t)
	ctx := context.Background()
	base := []string{"-tenant", "shop", "-database-url", sh.s.dsn, "-secret", string(sh.s.key)}
	cmd := func(args ...string) string {
		t.Helper()
		return stdoutOf(t, func() error { return run(ctx, append(append([]string{"webhook"}, args...), base...)) })
	}
	// webhook.test is not a kind one subscribes to: every endpoint may be sent one.
	if err := run(ctx, append([]string{"webhook", "create", "-url", rc.url(), "-allowlist", "127.0.0.1/32", "-events", "webhook.test"}, base...)); err == nil {
		t.Fatal("create accepted the kind webhook.test")
	}
	out := cmd("create", "-url", rc.url(), "-allowlist", "127.0.0.1/32", "-events", "product.created", "-description", "cli")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	secret := lines[len(lines)-1]
	id := strings.Fields(lines[0])[1]
	if !strings.HasPrefix(secret, webhooks.SecretPrefix) {
		t.Fatalf("create printed %q", out)
	}
	rc.secrets = []string{secret}
	if list := cmd("list"); !strings.Contains(list, id) || strings.Contains(list, secret) || !strings.Contains(list, "product.created") {
		t.Fatalf("list: %s", list)
	}
	sh.product("Kettle", 3000, 10)
	cmd("test", "-id", id)
	waitUntil(t, "the product event and the test event", func() bool {
		k := rc.kinds()
		return k["product.created"] == 1 && k[webhooks.TestKind] == 1
	})
	sh.waitAnswered(id)
	if d := cmd("deliveries", "-id", id); !strings.Contains(d, "2 deliveries") || strings.Count(d, "delivered") != 2 {
		t.Fatalf("deliveries: %s", d)
	}
	rot := cmd("rotate", "-id", id, "-overlap", "0s")
	next := strings.TrimSpace(rot[strings.LastIndex(strings.TrimSpace(rot), "\n")+1:])
	if next == secret || !strings.HasPrefix(next, webhooks.SecretPrefix) {
		t.Fatalf("rotate printed %q", rot)
	}
	if up := cmd("update", "-id", id, "-enabled", "false"); !strings.Contains(up, "enabled: false") || strings.Contains(up, webhooks.SecretPrefix) {
		t.Fatalf("update: %s", up)
	}
	cmd("delete", "-id", id)
	if list := cmd("list"); strings.Contains(list, id) {
		t.Fatalf("deleted endpoint still listed: %s", list)
	}
	for _, bad := range [][]string{{"create", "-url", "http://127.0.0.1:1/"}, {"update", "-id", "nope"}, {"update", "-id", id, "-enabled", "maybe"}} {
		if err := run(ctx, append(append([]string{"webhook"}, bad...), base...)); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}
