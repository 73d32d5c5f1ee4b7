package reads_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"vitrine/edge/reads"
	"vitrine/edge/replica"
	"vitrine/schema"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// shop returns a replica serving tenant "shop" (USD, EUR, JPY) with a small catalog over a
// category tree, and posts.
func shop(t testing.TB) *replica.Tenant {
	t.Helper()
	r := replica.New(replica.Config{Logger: slog.New(slog.DiscardHandler)})
	r.Reset("e")
	versions := map[string]int64{}
	put := func(log string, kind schema.Kind, id string, v any) {
		versions[log]++
		c := schema.NewChange(log, kind, id, schema.Pub, v)
		c.Version, c.TxnFirst, c.TxnLast = versions[log], versions[log], versions[log]
		r.Change(&c)
	}
	head := func(log string) {
		r.Change(&schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: versions[log]})
	}
	put(schema.PlatformLog, schema.KindTenant, "shop", &schema.Tenant{ID: "t", Slug: "shop", Name: "Shop", BaseURL: "https://api.shop.test",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"USD", "EUR", "JPY"}})
	head(schema.PlatformLog)
	for _, c := range []*schema.Currency{{Code: "USD", Exponent: 2, Rate: "1"}, {Code: "EUR", Exponent: 2, Rate: "0.92"}, {Code: "JPY", Exponent: 0, Rate: "151.3"}} {
		put("shop", schema.KindCurrency, c.Code, c)
	}
	for _, c := range []*schema.Category{{ID: 1, Slug: "home"}, {ID: 2, ParentID: 1, Slug: "kitchen"}, {ID: 3, ParentID: 2, Slug: "cups"}, {ID: 4, Slug: "garden"}} {
		put("shop", schema.KindCategory, schema.IDString(c.ID), c)
	}
	words := []string{"brass lamp", "oak chair", "tea cup", "linen towel", "garden hose", "red kettle", "blue mug", "lamp shade"}
	avail := []schema.Availability{schema.InStock, schema.LowStock, schema.OutOfStock}
	for i := range 40 {
		id := int64(i + 1)
		p := &schema.Product{ID: schema.ProductID(id), Slug: fmt.Sprintf("p-%d", id), Title: words[i%len(words)] + " " + words[(i/3)%len(words)],
			Description: "About " + words[(i*5)%len(words)], Status: schema.ProductActive, Prices: schema.Prices{"USD": int64(100 + (i*977)%9000)},
			CategoryIDs: []schema.CategoryID{schema.CategoryID(1 + i%4)}, CreatedAt: t0.Add(time.Duration(i%13) * time.Hour)}
		if i%3 == 0 {
			p.Prices["EUR"] = int64(50 + (i*613)%8000)
		}
		p.Normalize()
		put("shop", schema.KindProduct, schema.IDString(id), p)
		if i%5 != 0 {
			v := &schema.Variant{ID: schema.VariantID(1000 + id), ProductID: p.ID, SKU: "s", Availability: avail[i%3]}
			v.Normalize()
			put("shop", schema.KindVariant, schema.IDString(int64(v.ID)), v)
		}
	}
	for i := range 5 {
		p := &schema.Post{ID: schema.PostID(100 + i), Slug: fmt.Sprintf("post-%d", i), Status: schema.StatusPublish, Title: "Post",
			Content: "Hello <b>world</b>.", Format: "standard", CommentStatus: "open", PingStatus: "open", DateGMT: t0.Add(time.Duration(i) * time.Hour)}
		p.Normalize()
		put("shop", schema.KindPost, schema.IDString(int64(p.ID)), p)
	}
	head("shop")
	r.Checkpoint()
	return r.TenantBySlug("shop")
}

func answer(tn *replica.Tenant, route string, q url.Values) reads.Response {
	return reads.Answer(&reads.Request{Route: schema.RouteByName(route), Tenant: tn, Param: func(string) string { return "" },
		Query: func(name string) (string, bool) {
			v, ok := q[name]
			if !ok || len(v) == 0 {
				return "", false
			}
			return v[0], true
		}})
}

type listBody struct {
	Data []struct {
		ID    int64 `json:"id"`
		Price struct {
			Amount int64 `json:"amount"`
		} `json:"price"`
	} `json:"data"`
	PerPage int `json:"per_page"`
	Total   int `json:"total"`
}

// FuzzCatalogArguments: any query string given to the catalog routes answers a 200 or a 400 in
// the interface's error shape, never a panic; a page holds at most per_page items of its total;
// shown prices respect the price bounds; and /api/search without q lists what /api/products
// lists for the same filters and sort.
func FuzzCatalogArguments(f *testing.F) {
	for _, s := range []string{
		"", "q=lamp", "q=lmap&sort=price_asc", "category=home&sort=title", "category=2&min_price=500&max_price=4000",
		"currency=EUR&sort=price_desc&max_price=3000", "currency=JPY&min_price=100000", "availability=in_stock,low_stock&per_page=3&page=2",
		"per_page=0", "min_price=abc", "sort=cheapest", "category=nope", "min_price=9&max_price=1", "q=%00%ff&limit=3",
		"availability=in_stock,in_stock,in_stock", "page=100000&per_page=100", "currency=XXX", "q=tea+cup+&sort=newest",
	} {
		f.Add(s)
	}
	tn := shop(f)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, route := range []string{"products.list", "search", "search.autocomplete", "posts.list"} {
			resp := answer(tn, route, q)
			if resp.Err != nil {
				var e *schema.Error
				if !errors.As(resp.Err, &e) || e.Code != schema.CodeInvalid || e.Message == "" || e.Field == "" {
					t.Fatalf("%s?%s: error %v, want an invalid-argument error naming its field", route, raw, resp.Err)
				}
				continue
			}
			if resp.Status != 200 || !resp.Cacheable() || !json.Valid(resp.Body) {
				t.Fatalf("%s?%s: status %d, cacheable %v, body %s", route, raw, resp.Status, resp.Cacheable(), resp.Body)
			}
			var b listBody
			if err := json.Unmarshal(resp.Body, &b); err != nil {
				t.Fatal(err)
			}
			if route == "search.autocomplete" {
				continue
			}
			if len(b.Data) > b.PerPage || len(b.Data) > b.Total {
				t.Fatalf("%s?%s: %d items of %d with per_page %d", route, raw, len(b.Data), b.Total, b.PerPage)
			}
			if route == "posts.list" {
				continue
			}
			args, _ := schema.ParseArgs(schema.RouteByName(route), func(n string) (string, bool) { return q.Get(n), q.Has(n) })
			for _, d := range b.Data {
				if d.Price.Amount < args.Int("min_price") || d.Price.Amount > args.Int("max_price") {
					t.Fatalf("%s?%s: product %d shown at %d, outside the bounds", route, raw, d.ID, d.Price.Amount)
				}
			}
		}
		if q.Get("q") == "" && q.Get("sort") != "relevance" {
			a, b := answer(tn, "products.list", q), answer(tn, "search", q)
			var la, lb listBody
			json.Unmarshal(a.Body, &la)
			json.Unmarshal(b.Body, &lb)
			if (a.Err == nil) != (b.Err == nil) || fmt.Sprint(la) != fmt.Sprint(lb) {
				t.Fatalf("?%s: /api/products and /api/search without q differ:\n%s\n%s", raw, a.Body, b.Body)
			}
		}
	})
}
