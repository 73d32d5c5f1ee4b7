package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"
	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/edge/replica"
	"vitrine/origin"
	"vitrine/origin/media"
	"vitrine/origin/oembed"
	"vitrine/origin/seed"
	"vitrine/origin/store"
	"vitrine/origin/webhooks"
	"vitrine/schema"
	"vitrine/sync/natsembed"
	"vitrine/sync/relay"
)

// devInfo is written to <data-dir>/dev.json once the system is ready, for tools and tests.
type devInfo struct {
	EdgeURL       string `json:"edge_url"`
	OriginURL     string `json:"origin_url"`
	Tenant        string `json:"tenant"`
	AdminUser     string `json:"admin_user"`
	AdminPassword string `json:"admin_password"`
	// Additive fields.
	TenantURL string `json:"tenant_url"`
	NATSURL   string `json:"nats_url"`
	OpsURL    string `json:"ops_url"`
	GiftCard  string `json:"gift_card"`
}

const devPasswordName = "vitrine-dev"

func runDev(ctx context.Context, args []string) error {
	f := newFlags("dev")
	c := f.common()
	ef := f.edge()
	dataDir := f.String("data-dir", "VITRINE_DATA_DIR", ".vitrine", "where dev keeps its NATS store, secret, media files and dev.json")
	mf := f.media("") // default: fs:<data-dir>/media
	edgeAddr := f.String("edge-addr", "VITRINE_EDGE_ADDR", "127.0.0.1:8080", "edge listen address")
	originAddr := f.String("origin-addr", "VITRINE_ORIGIN_ADDR", "127.0.0.1:8081", "origin listen address")
	opsAddr := f.String("ops-addr", "VITRINE_OPS_ADDR", "127.0.0.1:9090", "address of /metrics, /healthz, /readyz")
	accessLog := f.accessLog()
	natsAddr := f.String("nats-addr", "VITRINE_NATS_ADDR", defaultNATSAddr, "embedded NATS listen address (other processes may join it)")
	tenantSlug := f.String("tenant", "VITRINE_DEV_TENANT", "demo", "slug of the demo tenant")
	products := f.Int("products", "VITRINE_DEV_PRODUCTS", seed.DefaultProducts, "products seeded into a new demo tenant")
	posts := f.Int("posts", "VITRINE_DEV_POSTS", seed.DefaultPosts, "posts seeded into a new demo tenant")
	pay := f.payments(paymentsTest)
	hf := f.siteHealth()
	snapFlags := f.snapshotFlags()
	credentialTTL := f.credentialTTL()
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := pay.check(); err != nil {
		return err
	}
	// The demo store is served at the edge's own address, which is its canonical base: clients
	// reach it, and every URL it renders, without resolving a name or sending a tenant header.
	ds, err := devStoreAt(*edgeAddr, *tenantSlug, *ef.platformDomain)
	if err != nil {
		return err
	}
	tenantURL := ds.base
	log := c.logger("dev")
	alw, closeAccess, err := openAccessLog(*accessLog)
	if err != nil {
		return err
	}
	defer closeAccess()
	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		return err
	}
	key, err := devSecret(filepath.Join(*dataDir, "secret"))
	if err != nil {
		return err
	}
	// Extra edges joining this dev server (`vitrine edge`) need the edge secret: one named with
	// --edge-secret is used, otherwise a random one that only this process knows.
	if *ef.edgeSecret == "" {
		var edgeSecret [32]byte
		rand.Read(edgeSecret[:])
		*ef.edgeSecret = hex.EncodeToString(edgeSecret[:])
	} else if err := checkEdgeSecret(*ef.edgeSecret); err != nil {
		return err
	}

	ns, err := natsembed.Start(natsembed.Options{Addr: *natsAddr, StoreDir: filepath.Join(*dataDir, "nats")})
	if err != nil {
		return fmt.Errorf("embedded NATS on %s: %w", *natsAddr, err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	natsURL := "nats://" + *natsAddr
	nc, err := connectNATS(natsURL, "vitrine-dev", log)
	if err != nil {
		return err
	}
	defer nc.Close()

	set := metrics.NewSet()
	retries := set.NewCounter("vitrine_store_tx_retries_total")
	grouped := set.NewCounter("vitrine_store_grouped_writes_total")
	fc := c.feed()
	var rel *relay.Relay
	credTTL, err := storeCredentialTTL(*credentialTTL)
	if err != nil {
		return err
	}
	db, err := c.openDB(ctx, true, store.Config{OnRetry: retries.Inc, OnGroup: func(n int) { grouped.Add(n) }, OnTx: txTimer(set),
		OnCommit: wakeRelays(nil, fc, func() *relay.Relay { return rel }), CredentialTTL: credTTL, OnCredentialsChange: tellCredentialChanges(nc, fc)})
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer db.Close()
	if _, err := hearCredentialChanges(nc, fc, db); err != nil {
		return err
	}
	if err := db.Migrate(ctx); err != nil {
		return err
	}

	g, gctx := newGroup(ctx)
	if rel, err = relay.New(db, nc, relay.Config{Feed: fc, Logger: log}); err != nil {
		return err
	}
	g.Go("relay", func() error { return rel.Run(gctx) })
	dial := func() (*nats.Conn, error) { return connectNATS(natsURL, "vitrine-dev-snapshots", log) }
	if err := runSnapshots(g, gctx, dial, fc, snapFlags, rel, set, log); err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	orep, ofol, err := followStream(g, gctx, nc, fc, fc.AllFilters(), replica.Config{PlatformDomain: *ef.platformDomain, Private: true}, log.With("replica", "origin"))
	if err != nil {
		return err
	}
	queue, err := labelQueue(gctx, nc, fc, 0)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	client := outbound.New(outbound.Config{UserAgent: outboundUserAgent})
	hooks, err := webhookDispatcher(nc, fc, db, key, webhooks.Config{}, client, log, set)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	payments, err := pay.provider(db, log)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	if *mf.store == "" {
		*mf.store = "fs:" + filepath.Join(*dataDir, "media")
	}
	mediaStore, err := openMediaStore(gctx, *mf.store, *mf.bucket, nc, fc, true)
	if err != nil {
		g.cancel()
		g.Wait()
		return fmt.Errorf("media store: %w", err)
	}
	osrv := origin.New(origin.Config{Secret: key, EdgeSecrets: []string{*ef.edgeSecret}, Logger: log, Metrics: set, LabelQueue: queue, Webhooks: hooks, Payments: payments,
		Media: media.Config{Blobs: mediaStore, MaxUploadBytes: *mf.maxUpload}, OEmbed: oembed.Config{Client: client},
		SiteHealth: hf.config(nc, fc, ofol)}, db, orep)
	observe(set, "origin", orep, ofol, rel)
	observeDB(set, db)
	osrv.SetAccessLog(newAccessLog(alw, "origin"))
	esrv, erep, err := startEdge(g, gctx, ef, "http://"+*originAddr, nc, fc, mediaStore, *mf.maxUpload, set, log)
	if err != nil {
		return err
	}
	defer esrv.Close()
	esrv.SetAccessLog(newAccessLog(alw, "edge"))
	if err := answerProbes(g, gctx, esrv, nc, fc, ef, *edgeAddr); err != nil {
		return err
	}

	password, sample, card, err := ensureDemo(gctx, db, key, *tenantSlug, ds, *products, *posts)
	if err != nil {
		g.cancel()
		g.Wait()
		return err
	}
	g.Go("origin", func() error { return osrv.Run(gctx, *originAddr) })
	g.Go("work", func() error { return osrv.RunWork(gctx) })
	g.Go("maintenance", func() error { return osrv.Maintain(gctx) })
	g.Go("edge", func() error { return esrv.Run(gctx, *edgeAddr) })
	serveOpsDetail(gctx, *opsAddr, *c.profiles, set, func(now time.Time) (int, []byte) {
		// The edge's detail (readiness and staleness per shard); not ready while the origin's
		// replica is not.
		status, detail := esrv.Readiness(now)
		if !orep.Ready() {
			status = fasthttp.StatusServiceUnavailable
		}
		return status, detail
	}, log)

	// Ready when both replicas have the demo tenant.
	deadline := time.Now().Add(2 * time.Minute)
	for !(erep.Ready() && orep.Ready() && erep.TenantBySlug(*tenantSlug) != nil) {
		if time.Now().After(deadline) || gctx.Err() != nil {
			g.cancel()
			if err := g.Wait(); err != nil {
				return err
			}
			return errors.New("the replicas did not become ready within 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	info := devInfo{EdgeURL: "http://" + *edgeAddr, OriginURL: "http://" + *originAddr, Tenant: *tenantSlug,
		AdminUser: "admin", AdminPassword: password, TenantURL: tenantURL, NATSURL: natsURL, OpsURL: "http://" + *opsAddr, GiftCard: card.code}
	b, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(*dataDir, "dev.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	fmt.Printf(`
Vitrine is running.
  edge     %s   store %q (also as Host %s, or with header X-Tenant-Slug: %s)
  cms      %s/index.php?rest_route=/   (WordPress clients: WPAPI.discover('%s/'))
  origin   %s
  metrics  %s/metrics
  nats     %s
  admin    user %q, application password %q
  shopper  gift card %s (balance %s), coupon WELCOME10 (10%% off)

Try:
  curl -s '%s/api/products?per_page=2'
  curl -s '%s/index.php?rest_route=/cms/v2/posts&per_page=3'
  curl -s -u 'admin:%s' -X PATCH %s/api/admin/products/%d -H 'Content-Type: application/json' -d '{"title":"Renamed"}'

Wrote %s. Ctrl-C stops everything.
`, tenantURL, *tenantSlug, ds.alias, *tenantSlug, tenantURL, tenantURL, info.OriginURL, info.OpsURL, natsURL,
		info.AdminUser, schema.ChunkAppPassword(password), card.code, card.balance, tenantURL, tenantURL, password, tenantURL, sample,
		filepath.Join(*dataDir, "dev.json"))
	<-gctx.Done()
	return g.Wait()
}

// devSecret loads the dev server secret, creating it on first use.
func devSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return parseSecret(strings.TrimSpace(string(b)))
	}
	var k [32]byte
	rand.Read(k[:])
	if err := os.WriteFile(path, []byte(hex.EncodeToString(k[:])+"\n"), 0o600); err != nil {
		return nil, err
	}
	return k[:], nil
}

// devStore is where `vitrine dev` serves its demo store: at the edge's own address, which is
// the store's canonical base and one of its domains, so that a client reaches the store and every
// URL it renders without resolving a name (Node and Python do not map *.localhost to the
// loopback) and without a tenant header.
type devStore struct {
	// base is the canonical base URL ("http://127.0.0.1:8080").
	base string
	// host is base's host without the port, a domain of the store ("127.0.0.1").
	host string
	// port is the edge's port.
	port string
	// platformDomain is the edge's platform domain: other stores answer at
	// <slug>.<platformDomain>:<port>.
	platformDomain string
	// alias is the store's host under the platform domain, with the port ("demo.localhost:8080").
	alias string
}

// devStoreAt derives where the demo store is served from the edge's listen address: its host
// (127.0.0.1 when the edge listens on every interface) and port.
func devStoreAt(edgeAddr, slug, platformDomain string) (devStore, error) {
	host, port, err := net.SplitHostPort(edgeAddr)
	if err != nil {
		return devStore{}, fmt.Errorf("-edge-addr %q: %w", edgeAddr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return devStore{}, fmt.Errorf("-edge-addr %q: vitrine dev needs a port number (the demo store's canonical base names it)", edgeAddr)
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		host = "127.0.0.1"
	case ip != nil && ip.To4() != nil:
		host = ip.To4().String()
	case ip != nil:
		return devStore{}, fmt.Errorf("-edge-addr %q: the demo store is named by the edge's address, which must be an IPv4 address or a host name", edgeAddr)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if err := schema.ValidateHostName(host); err != nil {
		return devStore{}, fmt.Errorf("-edge-addr %q: %v", edgeAddr, err)
	}
	return devStore{base: "http://" + net.JoinHostPort(host, port), host: host, port: port, platformDomain: platformDomain,
		alias: slug + "." + platformDomain + ":" + port}, nil
}

// placeDemo serves the demo store at ds: its canonical base becomes ds.base and ds.host one of
// its domains. A database of an earlier start (another port, or from before the store was served
// at the edge's address) is updated. Another store holding ds.host (the demo store of an earlier
// start with another -tenant) loses it, and its base goes back to its host under the platform
// domain if it was on ds.host.
func placeDemo(ctx context.Context, db *store.DB, t *schema.Tenant, ds devStore) (*schema.Tenant, error) {
	all, err := db.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range all {
		if o.Slug == t.Slug || !slices.Contains(o.Domains, ds.host) {
			continue
		}
		_, err := db.UpdateTenant(ctx, o.Slug, func(o *schema.Tenant) error {
			o.Domains = slices.DeleteFunc(o.Domains, func(d string) bool { return d == ds.host })
			if u, err := url.Parse(o.BaseURL); err == nil && u.Hostname() == ds.host && ds.platformDomain != "" {
				o.BaseURL = "http://" + o.Slug + "." + ds.platformDomain + ":" + ds.port
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if t.BaseURL == ds.base && slices.Contains(t.Domains, ds.host) {
		return t, nil
	}
	return db.UpdateTenant(ctx, t.Slug, func(t *schema.Tenant) error {
		t.BaseURL = ds.base
		if !slices.Contains(t.Domains, ds.host) {
			t.Domains = append(t.Domains, ds.host)
		}
		return nil
	})
}

// demoCard is the demo gift card, as the dev banner shows it.
type demoCard struct{ code, balance string }

// ensureDemo creates the demo tenant, its admin and its catalog on first start, serves the tenant
// at ds (placeDemo, also on a database of an earlier start), and returns a new application
// password for the admin (replacing the previous dev one), the id of one of its products, for the
// examples it prints, and its demo gift card.
func ensureDemo(ctx context.Context, db *store.DB, key []byte, slug string, ds devStore, products, posts int) (string, schema.ProductID, demoCard, error) {
	t, err := db.TenantBySlug(ctx, slug)
	if schema.ErrorCode(err) == schema.CodeNotFound {
		t = &schema.Tenant{Slug: slug, Name: "Vitrine Demo Store", BaseURL: ds.base, Timezone: "Europe/Paris", Currencies: []string{"USD"}}
		err = db.CreateTenant(ctx, t)
	}
	if err == nil {
		t, err = placeDemo(ctx, db, t, ds)
	}
	if err != nil {
		return "", 0, demoCard{}, err
	}
	u, err := db.UserByLogin(ctx, t, "admin")
	if schema.ErrorCode(err) == schema.CodeNotFound {
		u = &schema.User{Login: "admin", Email: "admin@" + slug + ".vitrine.dev", DisplayName: "Demo Admin", Role: schema.RoleAdministrator}
		err = db.CreateUser(ctx, t, u)
	}
	if err != nil {
		return "", 0, demoCard{}, err
	}
	err = seedTenant(ctx, db, t, u.ID, seed.Options{Products: products, Posts: posts})
	if err != nil && !errors.Is(err, seed.ErrNotEmpty) {
		return "", 0, demoCard{}, err
	}
	var sample schema.ProductID
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		ps, _, err := tx.ListProducts(ctx, t, string(schema.ProductActive), 0, 1)
		if len(ps) > 0 {
			sample = ps[0].ID
		}
		return err
	}); err != nil {
		return "", 0, demoCard{}, err
	}
	if err := db.DeleteAppPasswords(ctx, t, u.ID, devPasswordName); err != nil {
		return "", 0, demoCard{}, err
	}
	// Shipping, tax, a coupon and a gift card, for trying checkout. The card's code is derived
	// from the dev secret: the same at every start, unguessable without the secret.
	card := demoCard{code: demoGiftCardCode(key)}
	g, err := seed.Commerce(ctx, db, t, seed.CommerceOptions{GiftCardCode: card.code})
	if err != nil {
		return "", 0, demoCard{}, err
	}
	card.balance = schema.FormatMinor(g.Balance, 2) + " " + g.Currency // the demo's currency is USD
	pw, err := newPassword(ctx, db, key, t, u.ID, devPasswordName)
	return pw, sample, card, err
}

// demoGiftCardCode derives the demo gift card's code from the dev secret: "DEMO-" and 64 bits
// of an HMAC, in hex groups of four.
func demoGiftCardCode(key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("vitrine dev demo gift card"))
	h := strings.ToUpper(hex.EncodeToString(mac.Sum(nil)[:8]))
	return "DEMO-" + h[0:4] + "-" + h[4:8] + "-" + h[8:12] + "-" + h[12:16]
}
