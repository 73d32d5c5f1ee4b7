package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"vitrine/bench/report"
)

func TestRegistry(t *testing.T) {
	run := func(context.Context, Env) (report.Section, error) { return report.Section{}, nil }
	var r Registry
	if err := r.Add(Scenario{Name: "a", Run: run}, Scenario{Name: "b", Run: run}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Scenario{{Name: "a", Run: run}, {Name: "", Run: run}, {Name: "all", Run: run}, {Name: "c"}} {
		if err := r.Add(bad); err == nil {
			t.Errorf("Add(%q) accepted", bad.Name)
		}
	}
	if all := r.All(); len(all) != 2 || all[0].Name != "a" || all[1].Name != "b" {
		t.Errorf("All() = %v", all)
	}
	if _, ok := r.Lookup("c"); ok {
		t.Error("Lookup found a scenario that was refused")
	}
}

// TestWorkload checks the read mix's shares and the Zipf skew of product pages on a synthetic
// catalog, and that every request carries the tenant's Host.
func TestWorkload(t *testing.T) {
	cat := &catalog{categories: []string{"lamps", "rugs"}, words: []string{"oak", "lamp", "linen"}, postPages: 3}
	for i := 0; i < 1000; i++ {
		cat.products = append(cat.products, "/api/products/p"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
	}
	w := newWorkload(cat, tenantHost, true)
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	classes := map[string]int{}
	top := 0
	const n = 20000
	for i := 0; i < n; i++ {
		req.Reset()
		w.next(i%4, uint64(i), req)
		if string(req.Host()) != tenantHost {
			t.Fatalf("host %q", req.Host())
		}
		p := string(req.URI().Path())
		switch {
		case p == "/api/products":
			classes["product list"]++
		case p == "/api/search":
			classes["search"]++
		case p == "/api/search/autocomplete":
			classes["autocomplete"]++
		case p == "/api/posts":
			classes["posts"]++
		case strings.HasPrefix(p, "/api/products/"):
			classes["product page"]++
			if p == cat.products[0] {
				top++
			}
		default:
			t.Fatalf("unexpected path %q", p)
		}
	}
	for _, m := range readMix {
		got := float64(classes[m.name]) / n * 100
		if got < float64(m.share)-2 || got > float64(m.share)+2 {
			t.Errorf("%s: %.1f%% of requests, want %d%%", m.name, got, m.share)
		}
	}
	// Zipf: the most popular product draws far more than a uniform 1/1000 of product pages.
	if share := float64(top) / float64(classes["product page"]); share < 0.1 {
		t.Errorf("the top product draws %.3f of product pages: no Zipf skew", share)
	}
}

func TestSamplePaths(t *testing.T) {
	var paths []string
	for i := 0; i < 100; i++ {
		paths = append(paths, string(rune('a'+i%26))+strings.Repeat("x", i/26))
	}
	got := samplePaths(paths, 10)
	if len(got) != 10 || got[0] != paths[0] || got[4] != paths[4] {
		t.Errorf("samplePaths = %v", got)
	}
	if got := samplePaths(paths[:5], 10); len(got) != 5 {
		t.Errorf("short list: %v", got)
	}
}
