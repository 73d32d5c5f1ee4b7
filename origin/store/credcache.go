package store

import (
	"strings"
	"sync"
	"time"

	"vitrine/schema"
)

// credentialCache remembers the application passwords this process verified against the
// database, so that a client sending many requests costs one authentication query per TTL
// rather than one per request (on the freshness bench's price writes, that query was about a
// quarter of the origin's CPU).
//
// Invariants:
//   - Only a successful verification is kept, keyed by tenant and keyed hash (never the
//     password): a wrong password or an unknown user always reaches the database.
//   - A change this process makes to a tenant's users or application passwords forgets every
//     entry of that tenant once the change has committed (Tx.credentialsChanged, the
//     Revoke*/Delete* methods), and an entry read from the database before that commit is
//     not kept (the tenant's generation moved while the read was in flight). So on the process
//     that revoked it, a password is refused on the next request.
//   - Another process learns of the change from DB.ForgetCredentials (the caller's own
//     broadcast), and whatever it does not learn of expires after the TTL: that is the longest
//     a revoked password or a demoted user's old role can outlive the change there.
type credentialCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[string]*credentialEntry
	gens    map[string]uint64 // per tenant id: bumped by every forget (one per tenant ever changed)
	stats   CredentialStats
}

// CredentialStats counts what the credential cache answered (DB.CredentialStats).
type CredentialStats struct {
	// Hits are requests authenticated from the cache; Misses asked the database.
	Hits, Misses uint64
	// Forgets counts the tenants' entries dropped after a change to their credentials.
	Forgets uint64
	// Entries is how many verified passwords are held now.
	Entries int
}

// credentialEntry is one verified application password.
type credentialEntry struct {
	tenant   string
	user     schema.User
	lastUsed *time.Time
	expires  time.Time
}

// newCredentialCache returns a cache of at most max entries kept ttl each; nil (no caching)
// when ttl is not positive.
func newCredentialCache(ttl time.Duration, max int) *credentialCache {
	if ttl <= 0 {
		return nil
	}
	return &credentialCache{ttl: ttl, max: max, entries: map[string]*credentialEntry{}, gens: map[string]uint64{}}
}

func credentialKey(tenantID string, hash []byte) string {
	return tenantID + "\x00" + string(hash)
}

// lookup returns a copy of the user of an unexpired entry whose user the login names, and the
// tenant's generation to hand to keep on a miss. A nil cache (off) has no entries.
func (c *credentialCache) lookup(tenantID string, hash []byte, login string, now time.Time) (u *schema.User, lastUsed *time.Time, gen uint64) {
	if c == nil {
		return nil, nil, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[credentialKey(tenantID, hash)]
	if e == nil || !now.Before(e.expires) || !(e.user.Login == login || strings.EqualFold(e.user.Email, login)) {
		c.stats.Misses++
		return nil, nil, c.gens[tenantID]
	}
	c.stats.Hits++
	cp := e.user
	return &cp, e.lastUsed, 0
}

// keep stores a verification read from the database, unless the tenant's credentials changed
// since lookup returned gen.
func (c *credentialCache) keep(tenantID string, hash []byte, u *schema.User, lastUsed *time.Time, gen uint64, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[tenantID] != gen {
		return
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			return // full of live entries: this one is verified again next time
		}
	}
	c.entries[credentialKey(tenantID, hash)] = &credentialEntry{tenant: tenantID, user: *u, lastUsed: lastUsed, expires: now.Add(c.ttl)}
}

// used records that the password's use was written at now.
func (c *credentialCache) used(tenantID string, hash []byte, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[credentialKey(tenantID, hash)]; e != nil {
		e.lastUsed = &now
	}
}

// forget drops every entry of the tenants and moves their generations.
func (c *credentialCache) forget(tenantIDs ...string) {
	if c == nil || len(tenantIDs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range tenantIDs {
		c.gens[id]++
	}
	c.stats.Forgets += uint64(len(tenantIDs))
	for k, e := range c.entries {
		for _, id := range tenantIDs {
			if e.tenant == id {
				delete(c.entries, k)
				break
			}
		}
	}
}

// size returns how many entries the cache holds.
func (c *credentialCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// snapshot returns the cache's counters (zero for no cache).
func (c *credentialCache) snapshot() CredentialStats {
	if c == nil {
		return CredentialStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Entries = len(c.entries)
	return st
}
