package store

import (
	"testing"
	"time"

	"vitrine/schema"
)

// A verification read while the tenant's credentials changed is not kept; the cache stays
// within its bound, making room from expired entries only.
func TestCredentialCacheKeep(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := newCredentialCache(time.Second, 2)
	u := &schema.User{ID: 7, Login: "ada"}
	hit := func(tenant, hash string) bool {
		got, _, _ := c.lookup(tenant, []byte(hash), "ada", now)
		return got != nil
	}

	_, _, gen := c.lookup("t1", []byte("h1"), "ada", now)
	c.forget("t1") // a change committed while the read was in flight
	c.keep("t1", []byte("h1"), u, nil, gen, now)
	if hit("t1", "h1") {
		t.Fatal("kept a verification read before the tenant's change")
	}
	_, _, gen = c.lookup("t1", []byte("h1"), "ada", now)
	c.forget("t2") // another tenant's change
	c.keep("t1", []byte("h1"), u, nil, gen, now)
	if !hit("t1", "h1") {
		t.Fatal("another tenant's change dropped this one's verification")
	}

	_, _, gen2 := c.lookup("t2", []byte("h2"), "ada", now)
	c.keep("t2", []byte("h2"), u, nil, gen2, now)
	_, _, gen3 := c.lookup("t3", []byte("h3"), "ada", now)
	c.keep("t3", []byte("h3"), u, nil, gen3, now) // full of live entries: not kept
	if c.size() != 2 || hit("t3", "h3") {
		t.Fatalf("size %d past the bound of 2", c.size())
	}
	now = now.Add(time.Second) // both expire
	_, _, gen3 = c.lookup("t3", []byte("h3"), "ada", now)
	c.keep("t3", []byte("h3"), u, nil, gen3, now)
	if c.size() != 1 || !hit("t3", "h3") {
		t.Fatalf("size %d: expired entries not swept for a new one", c.size())
	}
	if newCredentialCache(0, 10) != nil || newCredentialCache(-1, 10) != nil {
		t.Fatal("a cache without a TTL")
	}
	var off *credentialCache
	off.forget("t1") // a store without a cache forgets nothing, without failing
}
