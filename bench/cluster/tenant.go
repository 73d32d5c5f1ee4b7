package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/origin/seed"
	"vitrine/schema"
)

// TenantOptions says how to fill a tenant.
type TenantOptions struct {
	// Products to seed with origin/seed's demo catalog (0: none, an empty store).
	Products int
	// Posts to seed (0: seed's default when Products is set).
	Posts int
	// Shard is the tenant's shard (default 0).
	Shard int
	// Progress, when set, is called after each seed transaction.
	Progress func(done, total int, stage string)
}

// Tenant is a tenant of the cluster with an administrator.
type Tenant struct {
	*schema.Tenant
	// Host is the Host header that selects the tenant on any edge or origin of the cluster.
	Host string
	// Auth is the administrator's Authorization header value (Basic, an application password).
	Auth string
	// Seeded counts what the seed wrote, and SeedTime is how long it took.
	Seeded   seed.Summary
	SeedTime time.Duration
	// Version is the tenant's log version once seeded: every edge served it when CreateTenant
	// returned.
	Version int64
}

// CreateTenant registers a tenant (USD, host <slug>.localhost) with an administrator "admin"
// holding an application password, seeds it with opt.Products products through origin/store
// (the code of `vitrine seed`), and waits until the origin and every edge serve it at the
// version the seed reached.
func (c *Cluster) CreateTenant(ctx context.Context, slug string, opt TenantOptions) (*Tenant, error) {
	tn := &schema.Tenant{Slug: slug, Name: "Bench " + slug, BaseURL: "https://" + slug + ".bench.example", Timezone: "UTC",
		Currencies: []string{"USD"}, Shard: opt.Shard}
	if err := c.DB.CreateTenant(ctx, tn); err != nil {
		return nil, fmt.Errorf("cluster: create tenant %s: %w", slug, err)
	}
	u := &schema.User{Login: "admin", Email: "admin@" + slug + ".bench.example", Role: schema.RoleAdministrator}
	if err := c.DB.CreateUser(ctx, tn, u); err != nil {
		return nil, fmt.Errorf("cluster: create the administrator of %s: %w", slug, err)
	}
	pw := schema.NewAppPassword()
	if _, err := c.DB.CreateAppPassword(ctx, tn, u.ID, "bench", schema.HashAppPassword(c.Secret, pw)); err != nil {
		return nil, fmt.Errorf("cluster: application password: %w", err)
	}
	t := &Tenant{Tenant: tn, Host: slug + ".localhost", Auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+pw))}
	if opt.Products > 0 {
		start := time.Now()
		sum, err := seed.Demo(ctx, c.DB, tn, seed.Options{Products: opt.Products, Posts: opt.Posts, Author: u.ID, Progress: opt.Progress})
		if err != nil {
			return nil, fmt.Errorf("cluster: seed %s: %w", slug, err)
		}
		t.Seeded, t.SeedTime = sum, time.Since(start)
	}
	log, err := c.DB.LogBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	t.Version = log.Version
	if err := c.WaitServed(ctx, t, t.Version); err != nil {
		return nil, err
	}
	return t, nil
}

// WaitServed waits until the origin and every edge answer the tenant's product list at version
// v or later (the first answers of a new tenant are 404s until its registry entry arrives).
func (c *Cluster) WaitServed(ctx context.Context, t *Tenant, v int64) error {
	procs := append([]*Process(nil), c.Edges...)
	if c.Origin != nil {
		procs = append(procs, c.Origin)
	}
	for _, p := range procs {
		var last string
		if err := c.poll(ctx, p, func() bool {
			ok, status := c.serves(p.Addr, t.Host, v)
			last = status
			return ok
		}); err != nil {
			return fmt.Errorf("cluster: waiting for %s to serve %s at version %d (last answer: %s): %w", p.Name, t.Slug, v, last, err)
		}
	}
	return nil
}

// serves reports whether addr answers the tenant's product list at version v or later, and
// describes the answer.
func (c *Cluster) serves(addr, host string, v int64) (bool, string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/api/products?per_page=1")
	req.Header.SetHost(host)
	req.UseHostHeader = true
	req.Header.Set("Vitrine-Min-Version", strconv.FormatInt(v, 10))
	if err := c.client.DoTimeout(req, resp, 5*time.Second); err != nil {
		return false, err.Error()
	}
	body := resp.Body()
	if len(body) > 200 {
		body = body[:200]
	}
	return resp.StatusCode() == fasthttp.StatusOK, fmt.Sprintf("%d %s", resp.StatusCode(), body)
}
