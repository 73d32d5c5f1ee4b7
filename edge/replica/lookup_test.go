package replica_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/schema"
)

// lookupSite bootstraps a replica serving shards 1 and 2 under the platform domain example.test:
// "shop" (shard 1, two custom domains), "other" (shard 2), "sleepy" (suspended) and "faraway"
// (shard 3, not served).
func lookupSite(t testing.TB) *site {
	s := newSite(t, replica.Config{PlatformDomain: "example.test", Shards: []int{1, 2}})
	s.r.Reset("epoch-1")
	feed(s.r,
		s.register(
			tenantEntry("shop", 1, schema.TenantActive, "shop.example.com", "www.shop-custom.test"),
			tenantEntry("other", 2, schema.TenantActive, "other.example.org"),
			tenantEntry("sleepy", 1, schema.TenantSuspended, "sleepy.example.com"),
			tenantEntry("faraway", 3, schema.TenantActive, "faraway.example.com"),
		),
		s.seedShop("shop"),
		s.seedShop("other"),
	)
	s.r.Checkpoint()
	return s
}

func TestBootstrapLookup(t *testing.T) {
	s := lookupSite(t)
	long := strings.Repeat("a", 300) + ".example.test"
	tests := []struct {
		name string
		host string
		slug string
		want string // "" for nil
	}{
		{"slug header", "", "shop", "shop"},
		{"slug header other shard", "", "other", "other"},
		{"platform subdomain", "shop.example.test", "", "shop"},
		{"platform subdomain uppercase", "SHOP.Example.TEST", "", "shop"},
		{"platform subdomain with port", "shop.example.test:8443", "", "shop"},
		{"platform subdomain trailing dot", "shop.example.test.", "", "shop"},
		{"platform subdomain trailing dot and port", "Shop.Example.Test.:443", "", "shop"},
		{"custom domain", "shop.example.com", "", "shop"},
		{"second custom domain uppercase with port", "WWW.Shop-Custom.Test:8080", "", "shop"},
		{"custom domain trailing dot", "other.example.org.", "", "other"},
		{"host wins over slug header", "other.example.test", "shop", "other"},
		{"unknown host falls back to slug header", "unrelated.example.net", "shop", "shop"},
		{"ipv6 literal falls back to slug header", "[::1]:8080", "other", "other"},
		{"oversized host falls back to slug header", long, "shop", "shop"},
		{"unknown slug", "", "nosuch", ""},
		{"unknown subdomain", "nosuch.example.test", "", ""},
		{"unknown host", "unrelated.example.net", "", ""},
		{"nothing", "", "", ""},
		{"bare platform domain", "example.test", "", ""},
		{"nested subdomain", "a.shop.example.test", "", ""},
		{"platform domain as a label", "shop.example.test.evil.com", "", ""},
		{"suffix without a dot", "shopexample.test", "", ""},
		{"suspended by slug", "", "sleepy", ""},
		{"suspended by subdomain", "sleepy.example.test", "", ""},
		{"suspended by custom domain", "sleepy.example.com", "", ""},
		{"foreign shard by slug", "", "faraway", ""},
		{"foreign shard by subdomain", "faraway.example.test", "", ""},
		{"foreign shard by custom domain", "faraway.example.com", "", ""},
		{"slug header is not normalised", "", "SHOP", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.r.Lookup([]byte(tt.host), []byte(tt.slug))
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("Lookup(%q, %q) = %q, want nil", tt.host, tt.slug, got.Slug)
			case tt.want != "" && got == nil:
				t.Fatalf("Lookup(%q, %q) = nil, want %q", tt.host, tt.slug, tt.want)
			case tt.want != "" && got.Slug != tt.want:
				t.Fatalf("Lookup(%q, %q) = %q, want %q", tt.host, tt.slug, got.Slug, tt.want)
			}
			if got != nil && got != s.r.TenantBySlug(tt.want) {
				t.Fatalf("Lookup(%q, %q) returned another object than TenantBySlug(%q)", tt.host, tt.slug, tt.want)
			}
		})
	}
}

func TestBootstrapState(t *testing.T) {
	s := lookupSite(t)
	if !s.r.Ready() {
		t.Fatalf("Ready() = false after the bootstrap checkpoint, want true")
	}
	if got := s.r.Epoch(); got != "epoch-1" {
		t.Fatalf("Epoch() = %q, want epoch-1", got)
	}
	var slugs []string
	for _, tn := range s.r.Tenants() {
		slugs = append(slugs, tn.Slug)
	}
	if got, want := strings.Join(slugs, ","), "other,shop"; got != want {
		t.Fatalf("Tenants() = %s, want %s", got, want)
	}
	shop := s.r.TenantBySlug("shop")
	if !shop.Ready() {
		t.Fatalf("shop.Ready() = false, want true")
	}
	if got, want := shop.Version(), s.logs["shop"].version; got != want {
		t.Fatalf("shop.Version() = %d, want %d", got, want)
	}
	if got, want := shop.Seen(), s.logs["shop"].version; got != want {
		t.Fatalf("shop.Seen() = %d, want %d", got, want)
	}
	info := shop.Info()
	if info == nil || info.Name != "Store shop" || info.Version != s.entries["shop"].Version {
		t.Fatalf("shop.Info() = %+v, want the registry entry at version %d", info, s.entries["shop"].Version)
	}
	if got := shop.Snapshot().ProductCount(); got != 3 {
		t.Fatalf("shop ProductCount() = %d, want 3", got)
	}
	if s.r.TenantBySlug("sleepy") != nil || s.r.TenantBySlug("faraway") != nil {
		t.Fatalf("TenantBySlug serves a suspended or foreign-shard tenant")
	}
}

func TestTenantReadyOnlyAfterHead(t *testing.T) {
	s := newSite(t, replica.Config{PlatformDomain: "example.test"})
	s.r.Reset("e")
	feed(s.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
	batch := s.seedShop("shop")
	feed(s.r, body(batch))

	tn := s.r.Lookup(nil, []byte("shop"))
	if tn == nil {
		t.Fatalf("Lookup(shop) = nil once the registry names it, want the (not ready) tenant")
	}
	if tn.Ready() {
		t.Fatalf("Ready() = true before the log's first head, want false")
	}
	if got := tn.Snapshot().ProductCount(); got != 0 {
		t.Fatalf("ProductCount() = %d before the head, want 0", got)
	}
	if got, want := tn.Seen(), s.logs["shop"].version; got != want {
		t.Fatalf("Seen() = %d before the head, want %d (buffered changes count as seen)", got, want)
	}
	s.r.Checkpoint()
	if tn.Ready() || s.r.Ready() {
		t.Fatalf("after a checkpoint without head: tenant ready=%v replica ready=%v, want both false", tn.Ready(), s.r.Ready())
	}
	feed(s.r, batch[len(batch)-1:])
	if !tn.Ready() {
		t.Fatalf("Ready() = false after the head, want true")
	}
	if got := tn.Snapshot().ProductCount(); got != 3 {
		t.Fatalf("ProductCount() = %d after the head, want 3", got)
	}
	if !s.r.Ready() {
		t.Fatalf("replica Ready() = false with every tenant ready after a checkpoint, want true")
	}
}

func TestRegistryChanges(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *site) []*schema.Change
		host string
		slug string
		want bool
	}{
		{"suspension hides the tenant", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Status = schema.TenantSuspended
			return s.register(&e)
		}, "", "shop", false},
		{"reactivation serves it again", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Status = schema.TenantSuspended
			out := s.register(&e)
			e2 := e
			e2.Status = schema.TenantActive
			return append(out, s.register(&e2)...)
		}, "", "shop", true},
		{"moving to a foreign shard hides it", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Shard = 9
			return s.register(&e)
		}, "shop.example.test", "", false},
		{"a new domain resolves", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Domains = []string{"new.example.net"}
			return s.register(&e)
		}, "new.example.net", "", true},
		{"a removed domain no longer resolves", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Domains = []string{"new.example.net"}
			return s.register(&e)
		}, "shop.example.com", "", false},
		{"a registry tombstone removes the tenant", func(s *site) []*schema.Change {
			tx := s.platform.begin()
			tx.deleteTenant("shop")
			return tx.commit()
		}, "", "shop", false},
		{"an older registry entry is ignored", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Status = schema.TenantSuspended
			stale := chg(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, &e, 1)
			return []*schema.Change{stale, head(schema.PlatformLog, s.platform.version)}
		}, "", "shop", true},
		{"an unreadable registry entry is skipped", func(s *site) []*schema.Change {
			s.platform.version++
			bad := chg(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, map[string]any{"slug": 42}, s.platform.version)
			return []*schema.Change{bad, head(schema.PlatformLog, s.platform.version)}
		}, "", "shop", true},
		{"an entry whose slug differs from its id is skipped", func(s *site) []*schema.Change {
			e := *s.entries["shop"]
			e.Slug = "intruder"
			e.Status = schema.TenantSuspended
			s.platform.version++
			bad := chg(schema.PlatformLog, schema.KindTenant, "shop", schema.Pub, &e, s.platform.version)
			return []*schema.Change{bad, head(schema.PlatformLog, s.platform.version)}
		}, "", "shop", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, replica.Config{PlatformDomain: "example.test", Shards: []int{1}})
			s.bootstrap("e")
			feed(s.r, tt.edit(s))
			got := s.r.Lookup([]byte(tt.host), []byte(tt.slug))
			if (got != nil) != tt.want {
				t.Fatalf("Lookup(%q, %q) = %v, want found=%v", tt.host, tt.slug, got, tt.want)
			}
			if got != nil && got.Slug != "shop" {
				t.Fatalf("Lookup(%q, %q) = %q, want shop", tt.host, tt.slug, got.Slug)
			}
		})
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	s := lookupSite(t)
	tests := []struct {
		name       string
		host, slug []byte
		found      bool
	}{
		{"hit by slug header", nil, []byte("shop"), true},
		{"hit by subdomain", []byte("Shop.Example.Test:8443"), nil, true},
		{"hit by custom domain", []byte("WWW.SHOP-CUSTOM.TEST."), nil, true},
		{"miss", []byte("nosuch.example.test"), []byte("nosuch"), false},
		{"miss oversized host", []byte(strings.Repeat("x", 400)), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *replica.Tenant
			allocs := testing.AllocsPerRun(200, func() { got = s.r.Lookup(tt.host, tt.slug) })
			if (got != nil) != tt.found {
				t.Fatalf("Lookup(%q, %q) found=%v, want %v", tt.host, tt.slug, got != nil, tt.found)
			}
			if allocs != 0 {
				t.Fatalf("Lookup(%q, %q) allocates %v times per call, want 0", tt.host, tt.slug, allocs)
			}
		})
	}
}

func FuzzLookupHost(f *testing.F) {
	s := lookupSite(f)
	for _, seed := range [][2]string{
		{"shop.example.test", ""}, {"SHOP.EXAMPLE.TEST.:80", "x"}, {"[::1]:80", "shop"}, {"[", ""}, {"]", "other"},
		{":", ""}, {".", ""}, {"..example.test", ""}, {".example.test", ""}, {"example.test.", ""},
		{strings.Repeat("a", 256), "shop"}, {strings.Repeat("a", 255) + ".", ""}, {"\x00\xff", "\x00"},
		{"shop.example.com", ""}, {"a.b.c:1:2:3", "faraway"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, host, slug []byte) {
		got := s.r.Lookup(host, slug)
		if got == nil {
			return
		}
		if got.Slug != "shop" && got.Slug != "other" {
			t.Fatalf("Lookup(%q, %q) = %q, a tenant the replica does not serve", host, slug, got.Slug)
		}
		if e := got.Info(); e == nil || e.Status != schema.TenantActive {
			t.Fatalf("Lookup(%q, %q) = %q with registry entry %+v, want an active entry", host, slug, got.Slug, e)
		}
	})
}

// TestConcurrentReadsDuringResets runs registry changes, data batches and re-bootstraps of both
// kinds while readers resolve hosts and read whatever they resolve. Run with -race.
func TestConcurrentReadsDuringResets(t *testing.T) {
	s := newSite(t, replica.Config{PlatformDomain: "example.test"})
	s.bootstrap("e1")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = s.r.Ready()
				_ = s.r.Epoch()
				for _, tn := range s.r.Tenants() {
					_ = tn.Info()
				}
				tn := s.r.Lookup([]byte("shop.example.test"), nil)
				if tn == nil {
					continue
				}
				sn := tn.Snapshot()
				ps, total := sn.Products(0, 10)
				if len(ps) > total {
					panic("more products than the total")
				}
				_ = tn.Counter(replica.Site).Load()
				_ = tn.ItemCounter(schema.KindProduct, 10).Load()
				_ = tn.Retired.Load()
				_ = tn.Version() + tn.Seen()
				_ = tn.WaitFor(tn.Version(), time.Millisecond)
			}
		}()
	}
	epochs := []string{"e1", "e1", "e2", "e2", "e3"}
	for round := range 40 {
		epoch := epochs[round%len(epochs)]
		s.r.Reset(epoch)
		fresh := newSite(t, replica.Config{})
		e := tenantEntry("shop", 0, schema.TenantActive, "shop.example.com")
		e.Name = "round " + strconv.Itoa(round)
		feed(s.r, fresh.register(e, tenantEntry("other", 0, schema.TenantActive)), fresh.seedShop("shop"), fresh.seedShop("other"))
		s.r.Checkpoint()
		w := fresh.log("shop")
		for i := range 5 {
			tx := w.begin()
			tx.putProduct(nil, product(int64(100+i), "n"+strconv.Itoa(i), t0))
			feed(s.r, tx.commit())
		}
		e2 := *e
		e2.Domains = append(e2.Domains, "round"+strconv.Itoa(round)+".example.net")
		feed(s.r, fresh.register(&e2))
		if tn := s.r.Lookup(nil, []byte("shop")); tn == nil || !tn.Ready() || tn.Info().Name != e.Name {
			t.Fatalf("round %d: Lookup(shop) = %v, want the ready tenant named %q", round, tn, e.Name)
		}
	}
	close(stop)
	wg.Wait()
}

// TestEmptyLogHead: a new tenant's log has no changes; the relay publishes its head at version 0,
// which must make it ready (and the replica with it) with an empty catalog.
func TestEmptyLogHead(t *testing.T) {
	s := newSite(t, replica.Config{})
	s.r.Reset("e")
	feed(s.r, s.register(tenantEntry("empty", 0, schema.TenantActive)))
	s.r.Checkpoint()
	if s.r.Ready() {
		t.Fatalf("Ready() = true before the empty log's head, want false")
	}
	feed(s.r, []*schema.Change{head("empty", 0)})
	tn := s.r.TenantBySlug("empty")
	if !tn.Ready() || tn.Version() != 0 || tn.Snapshot().ProductCount() != 0 {
		t.Fatalf("after a head at 0: ready=%v version=%d products=%d, want true, 0, 0", tn.Ready(), tn.Version(), tn.Snapshot().ProductCount())
	}
	if !s.r.Ready() {
		t.Fatalf("Ready() = false after the empty log's head, want true")
	}
	if !tn.WaitFor(0, time.Millisecond) {
		t.Fatalf("WaitFor(0) = false, want true")
	}
	if got, total := tn.Snapshot().Products(0, 10); len(got) != 0 || total != 0 {
		t.Fatalf("Products(0, 10) = %d products (total %d), want none", len(got), total)
	}
	if got, total := tn.Snapshot().Posts(replica.PostQuery{Limit: 10}); len(got) != 0 || total != 0 {
		t.Fatalf("Posts = %d posts (total %d), want none", len(got), total)
	}
}
