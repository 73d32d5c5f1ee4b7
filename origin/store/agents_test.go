package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// agentUser makes a user with an application password and returns the user and the password's
// hash.
func agentUser(t *testing.T, db *store.DB, tn *schema.Tenant, login string) (*schema.User, []byte) {
	t.Helper()
	ctx := context.Background()
	u := &schema.User{Login: login, Email: login + "@shop.example", Role: schema.RoleEditor}
	if err := db.CreateUser(ctx, tn, u); err != nil {
		t.Fatal(err)
	}
	hash := schema.HashAppPassword([]byte("secret"), schema.NewAppPassword())
	if _, err := db.CreateAppPassword(ctx, tn, u.ID, "agent", hash); err != nil {
		t.Fatal(err)
	}
	return u, hash
}

// Sessions are bound to their application password and found by their token's hash only in
// their store; claims admit one run per request id; the audit lists calls newest first.
func TestAgentSessions(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	other := storetest.Tenant(t, db, "other")
	u, pwHash := agentUser(t, db, tn, "editor")

	s := &store.AgentSession{UserID: u.ID, Label: "bot", Abilities: []string{"vitrine/get-post"}, CallsPerMinute: 3}
	if err := db.CreateAgentSession(ctx, tn, s, []byte("token-1"), pwHash, time.Hour, 2); err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || s.AppPassword == "" || !s.ExpiresAt.After(s.CreatedAt) {
		t.Fatalf("session %+v", s)
	}
	// Another user's password, or none, makes no session.
	if err := db.CreateAgentSession(ctx, tn, &store.AgentSession{UserID: u.ID, Abilities: []string{}}, []byte("token-x"),
		[]byte("not a password"), time.Hour, 2); schema.ErrorCode(err) != schema.CodeUnauthorized {
		t.Fatalf("session without a password: %v", err)
	}
	// At most maxActive unexpired sessions.
	if err := db.CreateAgentSession(ctx, tn, &store.AgentSession{UserID: u.ID, Abilities: []string{}}, []byte("token-2"), pwHash, time.Hour, 2); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgentSession(ctx, tn, &store.AgentSession{UserID: u.ID, Abilities: []string{}}, []byte("token-3"), pwHash, time.Hour, 2); schema.ErrorCode(err) != schema.CodeConflict {
		t.Fatalf("third session: %v", err)
	}
	got, user, err := db.AgentSessionByToken(ctx, tn, []byte("token-1"))
	if err != nil || got == nil || got.ID != s.ID || user.ID != u.ID || got.CallsPerMinute != 3 || got.Abilities[0] != "vitrine/get-post" {
		t.Fatalf("by token: %+v %+v %v", got, user, err)
	}
	if got, _, err := db.AgentSessionByToken(ctx, other, []byte("token-1")); got != nil || err != nil {
		t.Fatalf("another store's session: %+v %v", got, err)
	}

	// Twenty concurrent claims of one request id: exactly one runs.
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prior, err := db.ClaimAgentRequest(ctx, tn, &store.AgentRequest{SessionID: s.ID, RequestID: "r1", Ability: "a/b",
				InputDigest: []byte{1}, LeaseUntil: time.Now().Add(time.Minute)})
			if err != nil {
				t.Error(err)
			} else if prior == nil {
				won.Add(1)
			} else if prior.State != store.AgentRequestRunning && prior.State != store.AgentRequestDone {
				t.Errorf("prior claim %+v", prior)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claims won", won.Load())
	}
	if err := db.FinishAgentRequest(ctx, tn, s.ID, "r1", 200, []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishAgentRequest(ctx, tn, s.ID, "r1", 500, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	r, err := db.AgentRequest(ctx, tn, s.ID, "r1")
	if err != nil || r.State != store.AgentRequestDone || r.Status != 200 || string(r.Answer) != `{"ok":true}` {
		t.Fatalf("finished claim %+v %v", r, err)
	}

	// The audit, newest first.
	base := time.Now()
	for i, ability := range []string{"a/one", "a/two", "a/three"} {
		if err := db.RecordAgentCall(ctx, tn, s.ID, &store.AgentCall{At: base.Add(time.Duration(i) * time.Millisecond), Ability: ability,
			Status: 200, Duration: 3 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := db.AgentCalls(ctx, tn, s.ID, 2)
	if err != nil || len(calls) != 2 || calls[0].Ability != "a/three" || calls[1].Ability != "a/two" || calls[0].Duration != 3*time.Millisecond {
		t.Fatalf("calls %+v %v", calls, err)
	}

	// The rate limit: three a minute, then refused, with a time to wait.
	for i := range 4 {
		ok, retry, err := db.SpendAgentCall(ctx, tn, s.ID, 3)
		if err != nil || ok != (i < 3) || (!ok && retry <= 0) {
			t.Fatalf("call %d: %v %v %v", i, ok, retry, err)
		}
	}
	if left, err := db.AgentCallsLeft(ctx, tn, s.ID, 3); err != nil || left != 0 {
		t.Fatalf("left %d %v", left, err)
	}

	// Revoking the application password ends its sessions, with their claims and audit.
	if _, err := db.RevokeAppPasswords(ctx, tn, u.ID); err != nil {
		t.Fatal(err)
	}
	if got, _, err := db.AgentSessionByToken(ctx, tn, []byte("token-1")); got != nil || err != nil {
		t.Fatalf("session of a revoked password: %+v %v", got, err)
	}
	if _, err := db.AgentRequest(ctx, tn, s.ID, "r1"); schema.ErrorCode(err) != schema.CodeNotFound {
		t.Fatalf("claim of a deleted session: %v", err)
	}
}

// Expired sessions are swept after their retention, with their audit.
func TestAgentSessionSweep(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	u, pwHash := agentUser(t, db, tn, "editor")
	s := &store.AgentSession{UserID: u.ID, Abilities: []string{}, CallsPerMinute: 1}
	if err := db.CreateAgentSession(ctx, tn, s, []byte("tok"), pwHash, time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordAgentCall(ctx, tn, s.ID, &store.AgentCall{At: time.Now(), Ability: "a/b", Status: 200}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteExpiredAgentSessions(ctx, time.Now(), 100); err != nil || n != 0 {
		t.Fatalf("swept a live session: %d %v", n, err)
	}
	if n, err := db.DeleteExpiredAgentSessions(ctx, time.Now().Add(2*time.Minute), 100); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if calls, err := db.AgentCalls(ctx, tn, s.ID, 10); err != nil || len(calls) != 0 {
		t.Fatalf("audit of a swept session: %v %v", calls, err)
	}
}
