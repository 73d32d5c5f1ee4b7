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

// credentialRig is two origins' stores on one database (a and b), a staff user with an
// application password, and a clock the test moves.
type credentialRig struct {
	a, b   *store.DB
	count  *storetest.Counter // a's statements
	tn     *schema.Tenant
	user   *schema.User
	hash   []byte
	uuid   string
	now    time.Time
	toldBy []string // what a told the other origins (OnCredentialsChange)
}

func newCredentialRig(t *testing.T, ttl time.Duration) *credentialRig {
	ctx := context.Background()
	r := &credentialRig{count: &storetest.Counter{}, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	a, dsn := storetest.Open(t, store.Config{Tracer: r.count, CredentialTTL: ttl, OnCredentialsChange: func(ids []string) {
		mu.Lock()
		defer mu.Unlock()
		r.toldBy = append(r.toldBy, ids...)
	}})
	b, err := store.Open(ctx, dsn, store.Config{CredentialTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	r.a, r.b = a, b
	r.tn = storetest.Tenant(t, a, "shop")
	r.user = &schema.User{Login: "ada", Email: "ada@example.test", Role: schema.RoleAdministrator}
	if err := a.CreateUser(ctx, r.tn, r.user); err != nil {
		t.Fatal(err)
	}
	r.hash = schema.HashAppPassword([]byte("0123456789abcdef0123456789abcdef"), "the password")
	ap, err := a.NewAppPassword(ctx, r.tn, r.user.ID, "phone", "", r.hash)
	if err != nil {
		t.Fatal(err)
	}
	r.uuid = ap.UUID
	return r
}

// auth authenticates the rig's password on db as login; it returns the user (nil when refused)
// and how many statements a sent meanwhile.
func (r *credentialRig) auth(t *testing.T, db *store.DB, login string) (*schema.User, int) {
	t.Helper()
	r.count.Reset()
	u, err := db.AuthenticateUse(context.Background(), r.tn, login, r.hash, "192.0.2.1", r.now)
	_, stmts := r.count.Counts()
	if err != nil {
		if schema.ErrorCode(err) != schema.CodeUnauthorized {
			t.Fatalf("authenticate: %v", err)
		}
		return nil, stmts
	}
	return u, stmts
}

// A verified password is trusted for the TTL without a query; what is not verified never is.
func TestCredentialCacheSavesTheQuery(t *testing.T) {
	r := newCredentialRig(t, time.Second)
	u, stmts := r.auth(t, r.a, "ada")
	if u == nil || u.ID != r.user.ID || stmts == 0 {
		t.Fatalf("first use: %+v after %d statements", u, stmts)
	}
	r.now = r.now.Add(time.Minute) // the first use was recorded: no write for a day
	if u, _ = r.auth(t, r.a, "ada"); u == nil {
		t.Fatal("refused")
	}
	tests := []struct {
		name     string
		login    string
		after    time.Duration
		accepted bool
		queried  bool
	}{
		{"the same credential within the TTL", "ada", 500 * time.Millisecond, true, false},
		{"by e-mail address, any case", "ADA@example.test", 0, true, false},
		{"another login with this password", "grace", 0, false, true},
		{"after the TTL", "ada", time.Second, true, true},
		{"again within the new TTL", "ada", 100 * time.Millisecond, true, false},
	}
	for _, tc := range tests {
		r.now = r.now.Add(tc.after)
		u, stmts := r.auth(t, r.a, tc.login)
		if (u != nil) != tc.accepted || (stmts > 0) != tc.queried {
			t.Errorf("%s: accepted %v after %d statements, want accepted %v, queried %v", tc.name, u != nil, stmts, tc.accepted, tc.queried)
		}
	}
	// A wrong password asks the database every time.
	for range 3 {
		r.count.Reset()
		_, err := r.a.AuthenticateUse(context.Background(), r.tn, "ada", []byte("not the hash"), "192.0.2.1", r.now)
		if _, stmts := r.count.Counts(); schema.ErrorCode(err) != schema.CodeUnauthorized || stmts == 0 {
			t.Fatalf("wrong password: %v after %d statements", err, stmts)
		}
	}
	if st := r.a.CredentialStats(); st.Hits != 3 || st.Misses != 7 || st.Entries != 1 || st.Forgets != 0 {
		t.Errorf("stats %+v", st)
	}
	// A user handed out is a copy: a caller changing it changes nothing cached.
	u, _ = r.auth(t, r.a, "ada")
	u.Role = schema.RoleSubscriber
	if u, _ = r.auth(t, r.a, "ada"); u.Role != schema.RoleAdministrator {
		t.Fatalf("cached user changed through a copy: %s", u.Role)
	}
}

// A change to a tenant's credentials is seen at once by the origin that made it, by another
// once told, and by one never told once its entry expires.
func TestCredentialCacheForgetsChanges(t *testing.T) {
	ctx := context.Background()
	r := newCredentialRig(t, time.Second)
	for _, db := range []*store.DB{r.a, r.b} {
		if u, _ := r.auth(t, db, "ada"); u == nil {
			t.Fatal("refused")
		}
	}

	// A role change: a's next request sees it; b, told nothing, sees the old role until its
	// entry expires.
	if _, err := r.a.WriteTx(ctx, func(tx *store.Tx) error {
		u := *r.user
		u.Role = schema.RoleEditor
		return tx.UpdateUser(ctx, r.tn, &u)
	}); err != nil {
		t.Fatal(err)
	}
	if u, stmts := r.auth(t, r.a, "ada"); u == nil || u.Role != schema.RoleEditor || stmts == 0 {
		t.Fatalf("a after the role change: %+v after %d statements", u, stmts)
	}
	if u, _ := r.auth(t, r.b, "ada"); u == nil || u.Role != schema.RoleAdministrator {
		t.Fatalf("b, untold, within the TTL: %+v", u)
	}
	if len(r.toldBy) != 1 || r.toldBy[0] != r.tn.ID {
		t.Fatalf("a told the others %v, want the tenant once", r.toldBy)
	}
	r.now = r.now.Add(time.Second)
	if u, _ := r.auth(t, r.b, "ada"); u == nil || u.Role != schema.RoleEditor {
		t.Fatalf("b after the TTL: %+v", u)
	}

	// A revocation: refused at once by a, and by b once told.
	if err := r.a.RevokeAppPassword(ctx, r.tn, r.user.ID, r.uuid); err != nil {
		t.Fatal(err)
	}
	if u, _ := r.auth(t, r.a, "ada"); u != nil {
		t.Fatal("a accepted the password it revoked")
	}
	if u, _ := r.auth(t, r.b, "ada"); u == nil {
		t.Fatal("b, untold, refused within the TTL: the test's premise is wrong")
	}
	r.b.ForgetCredentials(r.toldBy[len(r.toldBy)-1])
	if u, _ := r.auth(t, r.b, "ada"); u != nil {
		t.Fatal("b accepted a revoked password after being told")
	}
}

// Requests in parallel with a revocation: once the revocation returned, no request of that
// origin is accepted, whichever way the ones in flight went.
func TestCredentialCacheRevocationUnderLoad(t *testing.T) {
	ctx := context.Background()
	r := newCredentialRig(t, time.Hour)
	var revoked atomic.Bool
	var acceptedAfter atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				done := revoked.Load() // read before the request starts
				u, err := r.a.AuthenticateUse(ctx, r.tn, "ada", r.hash, "192.0.2.1", r.now)
				if err != nil && schema.ErrorCode(err) != schema.CodeUnauthorized {
					t.Error(err)
					return
				}
				if done && u != nil {
					acceptedAfter.Add(1)
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := r.a.RevokeAppPassword(ctx, r.tn, r.user.ID, r.uuid); err != nil {
		t.Fatal(err)
	}
	revoked.Store(true)
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := acceptedAfter.Load(); n > 0 {
		t.Fatalf("%d requests begun after the revocation returned were accepted", n)
	}
}

// With the cache off, every request asks the database.
func TestCredentialCacheOff(t *testing.T) {
	r := newCredentialRig(t, -1)
	for range 3 {
		if u, stmts := r.auth(t, r.a, "ada"); u == nil || stmts == 0 {
			t.Fatalf("accepted %v after %d statements", u != nil, stmts)
		}
	}
}
