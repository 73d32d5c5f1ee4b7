package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	serverkeys "vitrine/origin/keys"
	"vitrine/origin/store"
	"vitrine/schema"
)

// newKey makes a server key through the admin API at the edge and returns its plaintext and id.
func (sh *shop) newKey(host, auth, body string) (string, string) {
	sh.t.Helper()
	r := callFrom(sh.t, "127.0.0.40", "POST", sh.edge, host, "/api/admin/api-keys", body, "Authorization", auth)
	if r.status != 201 {
		sh.t.Fatalf("create key %s: %d %s", body, r.status, r.body)
	}
	m := r.json(sh.t)
	return m["key"].(string), m["id"].(string)
}

// Server keys through an edge: made, listed, rolled and revoked in the admin API; every refusal
// of the spec, word for word and in its order; scopes; store binding; last use; and no key
// material anywhere but the creation's answer.
func TestServerKeys(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	_, otherPW := sh.s.tenant("other")
	kettle := sh.product("Kettle", 3000, 100)
	mug := sh.product("Mug", 1250, 100)
	order := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 2}, lineQty{mug, 1})
	slip := "/api/orders/" + order.Reference + "/packing-slip"
	const jsonAccept = "application/json"

	reader, readerID := sh.newKey(sh.host, sh.auth, `{"name":"warehouse","scopes":["read_orders"]}`)
	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"labels","scopes":["write_orders","read_analytics"]}`)
	none, _ := sh.newKey(sh.host, sh.auth, `{"name":"nothing","scopes":[]}`)
	revoked, revokedID := sh.newKey(sh.host, sh.auth, `{"name":"old","scopes":["read_orders"]}`)
	soon := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	expiring, _ := sh.newKey(sh.host, sh.auth, `{"name":"short","scopes":["read_orders"],"expires_at":"`+soon+`"}`)
	foreign, _ := sh.newKey("other.example.test", basic("admin", otherPW), `{"name":"theirs","scopes":["read_orders"]}`)
	if r := sh.admin("DELETE", "/api/admin/api-keys/"+revokedID, ""); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}

	t.Run("plaintext has the documented shape and is never shown again", func(t *testing.T) {
		if !serverkeys.WellFormed(reader) || !strings.HasPrefix(reader, "esk_") || len(reader) != 50 {
			t.Fatalf("key %q is not esk_ + 46 characters with a valid checksum", reader)
		}
		r := sh.admin("GET", "/api/admin/api-keys", "")
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, k := range []string{reader, writer, none, revoked, expiring} {
			if bytes.Contains(r.body, []byte(k)) || bytes.Contains(r.body, []byte(k[4:20])) {
				t.Fatalf("the list shows a plaintext: %s", r.body)
			}
		}
		var list []map[string]any
		if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 5 {
			t.Fatalf("list of %d keys (other stores' keys must not show): %v %s", len(list), err, r.body)
		}
		byID := map[string]map[string]any{}
		for _, k := range list {
			byID[k["id"].(string)] = k
			if _, has := k["key"]; has {
				t.Fatalf("a listed key has its plaintext: %v", k)
			}
		}
		if got := byID[readerID]["redacted"]; got != "esk_…"+reader[len(reader)-4:] {
			t.Fatalf("redacted form %v", got)
		}
		if byID[revokedID]["status"] != "revoked" || byID[readerID]["status"] != "active" {
			t.Fatalf("statuses: %v %v", byID[revokedID]["status"], byID[readerID]["status"])
		}
	})

	waitFor(t, 5*time.Second, "the short key to expire", func() bool { return time.Now().After(mustTime(t, soon)) })
	customerToken := sh.do("POST", "/api/customer/register", "", `{"email":"kay@example.com","password":"correct horse battery"}`).json(t)["token"].(string)
	// One character changed ('A', or 'B' where it was 'A'): the checksum catches it. (This was
	// "AB"[i+1&1], which is "AB"[i+1] in Go's precedence and ran past the end for a 'B'.)
	typo := reader[:10] + "A" + reader[11:]
	if reader[10] == 'A' {
		typo = reader[:10] + "B" + reader[11:]
	}

	t.Run("refusals in the spec's order and words", func(t *testing.T) {
		tests := []struct {
			name   string
			auth   string
			status int
			msg    string
		}{
			{"no credential", "", 401, "API key required"},
			{"not a bearer", basic("admin", "x"), 401, "API key required"},
			{"staff password", sh.auth, 401, "API key required"},
			{"not a key", "Bearer hello", 401, "API key required"},
			{"customer token", "Bearer " + customerToken, 401, "API key required"},
			{"a typo (checksum)", "Bearer " + typo, 401, "API key required"},
			{"truncated", "Bearer " + reader[:30], 401, "API key required"},
			{"unknown key", "Bearer " + serverkeys.Generate(), 401, "Invalid API key"},
			{"another store's key", "Bearer " + foreign, 401, "Invalid API key"},
			{"revoked", "Bearer " + revoked, 401, "Invalid API key"},
			{"expired", "Bearer " + expiring, 401, "API key has expired"},
			{"wrong scopes", "Bearer " + writer, 403, "Missing required scope: read_orders"},
			{"no scope at all", "Bearer " + none, 403, "Missing required scope: read_orders"},
			{"lowercase scheme", "bearer " + reader, 200, ""},
			{"the right key", "Bearer " + reader, 200, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var hs []string
				if tt.auth != "" {
					hs = []string{"Authorization", tt.auth}
				}
				r := sh.from("127.0.0.41", "GET", slip, "", append(hs, "Accept", jsonAccept)...)
				if r.status != tt.status {
					t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
				}
				if tt.msg != "" {
					if got := r.json(t)["error"]; got != tt.msg {
						t.Fatalf("error %q, want %q", got, tt.msg)
					}
				}
			})
		}
	})

	t.Run("a key is refused on a customer route", func(t *testing.T) {
		if r := sh.do("GET", "/api/customer", "", "", "Authorization", "Bearer "+reader); r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	t.Run("packing slip: JSON by Accept, else a PDF; unknown and foreign orders 404", func(t *testing.T) {
		r := sh.do("GET", slip, "", "", "Authorization", "Bearer "+reader, "Accept", jsonAccept)
		m := r.json(t)
		if m["reference"] != order.Reference || m["units"] != float64(3) || len(m["lines"].([]any)) != 2 {
			t.Fatalf("slip %s", r.body)
		}
		if to := m["ship_to"].(map[string]any); to["name"] != "Ann" || to["city"] != "Springfield" {
			t.Fatalf("ship to %v", to)
		}
		r = sh.do("GET", slip, "", "", "Authorization", "Bearer "+reader)
		if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
			t.Fatalf("PDF: %d %s %.40q", r.status, r.header.Get("Content-Type"), r.body)
		}
		for _, ref := range []string{"0000-0000-0000-0000", "nonsense"} {
			if r := sh.do("GET", "/api/orders/"+ref+"/packing-slip", "", "", "Authorization", "Bearer "+reader); r.status != 404 {
				t.Fatalf("%s: %d %s", ref, r.status, r.body)
			}
		}
	})

	t.Run("last use is written at most once a minute", func(t *testing.T) {
		first := lastUsed(t, sh, readerID)
		if first == nil {
			t.Fatal("a used key has no last_used_at")
		}
		sh.do("GET", slip, "", "", "Authorization", "Bearer "+reader, "Accept", jsonAccept)
		if again := lastUsed(t, sh, readerID); again == nil || !again.Equal(*first) {
			t.Fatalf("last_used_at moved within a minute: %v then %v", first, again)
		}
	})

	t.Run("roll: the new key works at once, the old until the overlap ends, and rolls once", func(t *testing.T) {
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		r := sh.admin("POST", "/api/admin/api-keys/"+readerID+"/roll", `{"overlap_until":"`+until.Format(time.RFC3339)+`"}`)
		if r.status != 201 {
			t.Fatalf("roll: %d %s", r.status, r.body)
		}
		m := r.json(t)
		next := m["key"].(string)
		if m["name"] != "warehouse" || fmt.Sprint(m["scopes"]) != "[read_orders]" {
			t.Fatalf("rolled key %v", m)
		}
		for _, k := range []string{reader, next} {
			if r := sh.do("GET", slip, "", "", "Authorization", "Bearer "+k, "Accept", jsonAccept); r.status != 200 {
				t.Fatalf("after the roll: %d %s", r.status, r.body)
			}
		}
		var old map[string]any
		for _, k := range mustList(t, sh) {
			if k["id"] == readerID {
				old = k
			}
		}
		if old["rolled_to"] != m["id"] || mustTime(t, old["expires_at"].(string)).After(until) {
			t.Fatalf("old key after the roll: %v", old)
		}
		if r := sh.admin("POST", "/api/admin/api-keys/"+readerID+"/roll", ""); r.status != 409 {
			t.Fatalf("second roll: %d %s", r.status, r.body)
		}
	})

	t.Run("bad admin input is a 400, unknown ids 404, and only administrators make keys", func(t *testing.T) {
		for _, body := range []string{`{"name":"x"}`, `{"scopes":["read_orders"]}`, `{"name":"x","scopes":["admin"]}`,
			`{"name":"x","scopes":["read_orders","read_orders"]}`, `{"name":"","scopes":[]}`, `{"name":"x","scopes":[],"expires_at":"2001-01-01T00:00:00Z"}`,
			`{"name":"x","scopes":[],"expires_at":"2999-01-01T00:00:00Z"}`, `{"name":"x","scopes":"read_orders"}`, `[`} {
			if r := sh.admin("POST", "/api/admin/api-keys", body); r.status != 400 {
				t.Fatalf("%s: %d %s", body, r.status, r.body)
			}
		}
		for _, id := range []string{"nope", "00000000-0000-4000-8000-000000000000"} {
			if r := sh.admin("DELETE", "/api/admin/api-keys/"+id, ""); r.status != 404 {
				t.Fatalf("%s: %d %s", id, r.status, r.body)
			}
		}
		if r := sh.do("POST", "/api/admin/api-keys", "", `{"name":"x","scopes":[]}`, "Authorization", "Bearer "+reader); r.status != 401 {
			t.Fatalf("a key making a key: %d %s", r.status, r.body)
		}
	})

	t.Run("concurrent creations each get their own key", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := sh.admin("POST", "/api/admin/api-keys", fmt.Sprintf(`{"name":"k%d","scopes":["read_orders"]}`, i))
				if r.status == 201 {
					got[i] = r.json(t)["key"].(string)
				}
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, k := range got {
			if k == "" || seen[k] {
				t.Fatalf("keys %v", got)
			}
			seen[k] = true
			if r := sh.do("GET", slip, "", "", "Authorization", "Bearer "+k, "Accept", jsonAccept); r.status != 200 {
				t.Fatalf("new key: %d", r.status)
			}
		}
	})

	t.Run("no key material in the state or event streams", func(t *testing.T) {
		all := streamBytes(t, sh.s, sh.s.fc.Stream, sh.s.fc.EventStream)
		if len(all) == 0 {
			t.Fatal("read nothing from the streams")
		}
		for _, k := range []string{reader, writer, none, revoked, expiring} {
			if bytes.Contains(all, []byte(k[4:20])) || bytes.Contains(all, []byte(serverkeys.Last4(k))) && bytes.Contains(all, []byte("esk_")) {
				t.Fatal("a stream carries key material")
			}
		}
	})
}

// streamBytes reads every message of the named streams, subjects, headers and data.
func streamBytes(t testing.TB, s *system, streams ...string) []byte {
	t.Helper()
	nc := s.connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out []byte
	for _, name := range streams {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				continue // deleted by compaction
			}
			out = append(out, m.Subject...)
			out = append(out, fmt.Sprint(m.Header)...)
			out = append(out, m.Data...)
		}
	}
	return out
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustList(t testing.TB, sh *shop) []map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal(sh.admin("GET", "/api/admin/api-keys", "").body, &list); err != nil {
		t.Fatal(err)
	}
	return list
}

func lastUsed(t testing.TB, sh *shop, id string) *time.Time {
	t.Helper()
	var k *store.ServerKey
	if err := sh.s.db.Tx(context.Background(), func(tx *store.Tx) error {
		var err error
		k, err = tx.ServerKeyByID(context.Background(), sh.tn, id, false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return k.LastUsedAt
}

// stdoutOf runs fn and returns what it printed on standard output.
func stdoutOf(t *testing.T, fn func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	runErr := fn()
	os.Stdout = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if runErr != nil {
		t.Fatalf("%v (printed %s)", runErr, out)
	}
	return string(out)
}

// `vitrine key create` prints a key once that works through an edge; `list` shows it redacted;
// `revoke` ends it.
func TestKeyCommand(t *testing.T) {
	sh := newShop(t)
	order := sh.orderAt(sh.host, guest, nil, lineQty{sh.product("Kettle", 3000, 10), 1})
	ctx := context.Background()
	base := []string{"-tenant", "shop", "-database-url", sh.s.dsn}
	secret := []string{"-secret", string(sh.s.key)}
	out := stdoutOf(t, func() error {
		return run(ctx, append(append([]string{"key", "create", "-name", "erp", "-scopes", "read_orders"}, base...), secret...))
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	plain := lines[len(lines)-1]
	if !serverkeys.WellFormed(plain) {
		t.Fatalf("create printed %q", out)
	}
	slip := "/api/orders/" + order.Reference + "/packing-slip"
	if r := sh.do("GET", slip, "", "", "Authorization", "Bearer "+plain, "Accept", "application/json"); r.status != 200 {
		t.Fatalf("the printed key: %d %s", r.status, r.body)
	}
	list := stdoutOf(t, func() error { return run(ctx, append([]string{"key", "list"}, base...)) })
	if strings.Contains(list, plain[4:]) || !strings.Contains(list, "esk_…"+plain[len(plain)-4:]) {
		t.Fatalf("list: %s", list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	stdoutOf(t, func() error { return run(ctx, append([]string{"key", "revoke", "-id", id}, base...)) })
	if r := sh.do("GET", slip, "", "", "Authorization", "Bearer "+plain, "Accept", "application/json"); r.status != 401 {
		t.Fatalf("a revoked key: %d %s", r.status, r.body)
	}
	if err := run(ctx, append(append([]string{"key", "create", "-name", "x", "-scopes", "everything"}, base...), secret...)); err == nil {
		t.Fatal("an unknown scope was accepted")
	}
}

// Every server-key route of the table, scope by scope: a key holding every other scope is
// refused with the route's own scope named, a key holding the route's scope gets past the key
// check (whatever the route then says of the request), and no key is a 401.
func TestKeyRoutesScopeByScope(t *testing.T) {
	sh := newShop(t)
	order := sh.orderAt(sh.host, guest, nil, lineQty{sh.product("Kettle", 3000, 10), 1})
	byScope := map[schema.Scope]string{}
	for _, sc := range schema.Scopes {
		byScope[sc], _ = sh.newKey(sh.host, sh.auth, `{"name":"`+string(sc)+`","scopes":["`+string(sc)+`"]}`)
	}
	routes := 0
	for _, r := range schema.Routes {
		if r.Auth != schema.AuthKey {
			continue
		}
		routes++
		uri := strings.NewReplacer("{reference}", order.Reference, "{batchId}", "00000000-0000-4000-8000-000000000000",
			"{id}", "00000000-0000-4000-8000-000000000000").Replace(r.Path)
		t.Run(r.Name, func(t *testing.T) {
			if got := sh.do(r.Method, uri, "", ""); got.status != 401 || got.json(t)["error"] != "API key required" {
				t.Fatalf("no key: %d %s", got.status, got.body)
			}
			for sc, key := range byScope {
				got := sh.do(r.Method, uri, "", "", "Authorization", "Bearer "+key, "Accept", "application/json", "Idempotency-Key", "scope-test")
				if sc == r.Scope {
					if got.status == 401 || got.status == 403 {
						t.Fatalf("%s with its scope %s: %d %s", r.Name, sc, got.status, got.body)
					}
					continue
				}
				if got.status != 403 || got.json(t)["error"] != "Missing required scope: "+string(r.Scope) {
					t.Fatalf("%s with %s: %d %s", r.Name, sc, got.status, got.body)
				}
			}
		})
	}
	if routes < 8 {
		t.Fatalf("%d key routes in the table", routes)
	}
}
