package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/valyala/fasthttp"
)

// catalog is what the workloads request, discovered from a server's public lists.
type catalog struct {
	products   []string // product page paths, most popular first (a seeded shuffle of the list)
	categories []string // category slugs
	words      []string // distinct words of product titles, lowercase, 3 letters or more
	postPages  int      // pages of /api/posts
}

// discoverCatalog reads every product (100 a page), the categories and the number of post pages
// from addr, as an anonymous client of the tenant host.
func discoverCatalog(ctx context.Context, addr, host string) (*catalog, error) {
	c := &catalog{}
	words := map[string]bool{}
	client := &fasthttp.HostClient{Addr: addr, MaxResponseBodySize: 64 << 20}
	var list struct {
		Data []struct {
			Slug, Title string
		} `json:"data"`
	}
	for page := 1; ; page++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := getJSON(client, host, "/api/products?per_page=100&page="+strconv.Itoa(page), &list); err != nil {
			return nil, err
		}
		if len(list.Data) == 0 {
			break
		}
		for _, p := range list.Data {
			c.products = append(c.products, "/api/products/"+p.Slug)
			for _, w := range strings.FieldsFunc(strings.ToLower(p.Title), func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(w) >= 3 && !words[w] {
					words[w] = true
					c.words = append(c.words, w)
				}
			}
		}
		if len(list.Data) < 100 {
			break
		}
	}
	if len(c.products) == 0 {
		return nil, fmt.Errorf("bench: the tenant at %s has no products", addr)
	}
	// Popularity is independent of the list order (newest first): a fixed shuffle.
	rng := rand.New(rand.NewPCG(5, 5))
	rng.Shuffle(len(c.products), func(i, j int) { c.products[i], c.products[j] = c.products[j], c.products[i] })
	rng.Shuffle(len(c.words), func(i, j int) { c.words[i], c.words[j] = c.words[j], c.words[i] })
	var cats struct {
		Data []category `json:"data"`
	}
	if err := getJSON(client, host, "/api/categories", &cats); err != nil {
		return nil, err
	}
	var walk func([]category)
	walk = func(cs []category) {
		for _, k := range cs {
			c.categories = append(c.categories, k.Slug)
			walk(k.Children)
		}
	}
	walk(cats.Data)
	for c.postPages = 0; c.postPages < 1000; c.postPages++ {
		var posts struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := getJSON(client, host, "/api/posts?page="+strconv.Itoa(c.postPages+1), &posts); err != nil || len(posts.Data) == 0 {
			break
		}
	}
	return c, nil
}

// category is a node of /api/categories.
type category struct {
	Slug     string     `json:"slug"`
	Children []category `json:"children"`
}

// getJSON GETs path from client with Host host and decodes a 200 answer into v.
func getJSON(client *fasthttp.HostClient, host, path string, v any) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(path)
	req.SetHost(host)
	if err := client.DoTimeout(req, resp, 30*time.Second); err != nil {
		return fmt.Errorf("bench: GET %s: %w", path, err)
	}
	if resp.StatusCode() != 200 {
		return fmt.Errorf("bench: GET %s: status %d", path, resp.StatusCode())
	}
	return json.Unmarshal(resp.Body(), v)
}

// zipfS is the exponent of product and word popularity (s = 1.1: the top 1% of 10k products
// draw about 60% of requests).
const zipfS = 1.1

// Request classes of the read mix, with their share of requests.
var readMix = [...]struct {
	name  string
	share int // percent
}{
	{"product page", 50},
	{"product list", 15},
	{"search", 15},
	{"autocomplete", 15},
	{"posts", 5},
}

// workload builds requests: per worker random state (Next is called concurrently by workers,
// each with its own index).
type workload struct {
	cat     *catalog
	host    string
	mix     bool // false: product pages only
	mu      sync.Mutex
	workers []*workerRand
}

type workerRand struct {
	rng      *rand.Rand
	products *rand.Zipf
	words    *rand.Zipf
}

func newWorkload(cat *catalog, host string, mix bool) *workload {
	return &workload{cat: cat, host: host, mix: mix}
}

// worker returns worker i's random state, creating it (seeded by i) on first use.
func (w *workload) worker(i int) *workerRand {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.workers) <= i {
		n := len(w.workers)
		rng := rand.New(rand.NewPCG(uint64(n)+1, 42))
		wr := &workerRand{rng: rng, products: rand.NewZipf(rng, zipfS, 1, uint64(len(w.cat.products)-1))}
		if len(w.cat.words) > 1 {
			wr.words = rand.NewZipf(rng, zipfS, 1, uint64(len(w.cat.words)-1))
		}
		w.workers = append(w.workers, wr)
	}
	return w.workers[i]
}

// next is a load.Config.Next: a product page by Zipf popularity or, in the mix, a request of the
// read mix.
func (w *workload) next(worker int, _ uint64, req *fasthttp.Request) {
	r := w.worker(worker)
	if w.mix {
		req.SetRequestURI(w.path(r))
	} else {
		req.SetRequestURI(w.cat.products[r.products.Uint64()])
	}
	req.SetHost(w.host) // after the URI, which would reset it
}

// path draws one request of the read mix.
func (w *workload) path(r *workerRand) string {
	n := r.rng.IntN(100)
	class := 0
	for ; class < len(readMix)-1 && n >= readMix[class].share; class++ {
		n -= readMix[class].share
	}
	word := func() string {
		if r.words == nil {
			return "bag"
		}
		return w.cat.words[r.words.Uint64()]
	}
	switch readMix[class].name {
	case "product list":
		if len(w.cat.categories) > 0 && r.rng.IntN(2) == 0 {
			return "/api/products?category=" + url.QueryEscape(w.cat.categories[r.rng.IntN(len(w.cat.categories))]) + "&page=" + strconv.Itoa(1+r.rng.IntN(3))
		}
		return "/api/products?page=" + strconv.Itoa(1+int(r.products.Uint64()%50))
	case "search":
		return "/api/search?q=" + url.QueryEscape(word())
	case "autocomplete":
		wd := word()
		return "/api/search/autocomplete?q=" + url.QueryEscape(wd[:min(len(wd), 2+r.rng.IntN(3))])
	case "posts":
		return "/api/posts?page=" + strconv.Itoa(1+r.rng.IntN(max(1, w.cat.postPages)))
	}
	return w.cat.products[r.products.Uint64()]
}

// isOK is a load.Config.Check: a 200 with a body.
func isOK(resp *fasthttp.Response) bool {
	return resp.StatusCode() == 200 && len(resp.Body()) > 0
}

// fetchAll GETs every path through addr with conns connections (to fill a cache), failing on
// the first answer other than 200.
func fetchAll(ctx context.Context, addr, host string, paths []string, conns int) error {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, MaxResponseBodySize: 64 << 20}
	defer client.CloseIdleConnections()
	next := make(chan string)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for p := range next {
				req.Reset()
				req.SetRequestURI(p)
				req.SetHost(host)
				if err := client.DoTimeout(req, resp, 30*time.Second); err != nil {
					errs <- fmt.Errorf("bench: GET %s from %s: %w", p, addr, err)
					return
				}
				if resp.StatusCode() != 200 {
					errs <- fmt.Errorf("bench: GET %s from %s: status %d", p, addr, resp.StatusCode())
					return
				}
			}
		}()
	}
	var err error
feed:
	for _, p := range paths {
		select {
		case next <- p:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}
