package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench"
	"vitrine/bench/cluster"
	"vitrine/bench/load"
	"vitrine/bench/report"
	"vitrine/origin/store"
	"vitrine/schema"
)

// forwardTargetP50 is the target for the forwarding overhead at p50.
const forwardTargetP50 = 300 * time.Microsecond

// writesPlan sizes the writes scenario.
type writesPlan struct {
	products  int
	cartRate  float64 // cart writes/s on each path
	warmup    time.Duration
	duration  time.Duration
	hot       int   // low-stock variants the checkouts compete for
	stock     int64 // units of each
	checkouts int   // checkouts sent
	conc      int   // checkouts in flight
	pairs     int   // paired cart writes
}

func planWrites(short bool) writesPlan {
	if short {
		return writesPlan{products: 200, cartRate: 100, warmup: 2 * time.Second, duration: 10 * time.Second, hot: 3, stock: 20, checkouts: 150, conc: 32, pairs: 300}
	}
	return writesPlan{products: 2000, cartRate: 200, warmup: 5 * time.Second, duration: 60 * time.Second, hot: 5, stock: 40, checkouts: 600, conc: 64, pairs: 3000}
}

// Writes measures what an edge adds to a forwarded write, and checkout under contention.
func Writes() bench.Scenario {
	return bench.Scenario{
		Name:        "writes",
		Description: "cart writes through an edge against directly at the origin (forwarding overhead); checkouts of a few low-stock variants under contention, no oversell",
		Run:         runWrites,
	}
}

// WritesResult is the machine-readable result of the writes scenario.
type WritesResult struct {
	CartRate    float64      `json:"cart_rate_per_path"`
	ViaEdge     load.Summary `json:"via_edge"`
	Direct      load.Summary `json:"direct"`
	EdgeErrors  uint64       `json:"via_edge_errors"`
	DirectErrs  uint64       `json:"direct_errors"`
	OverheadP50 float64      `json:"overhead_p50_ms"`
	OverheadP99 float64      `json:"overhead_p99_ms"`
	// Paired is the distribution of per-pair differences (edge minus origin, ms) of the same cart
	// write sent one after the other, alternating which goes first.
	Paired     PairedSummary `json:"paired"`
	ForwardMet bool          `json:"forward_target_met"`
	Checkout   CheckoutRun   `json:"checkout"`
	Method     string        `json:"method"`
}

// CheckoutRun is the result of the contended checkouts.
type CheckoutRun struct {
	Variants    int            `json:"variants"`
	StockEach   int64          `json:"stock_each"`
	Sent        int            `json:"sent"`
	Concurrency int            `json:"concurrency"`
	Orders      int            `json:"orders"`
	OrdersInDB  int            `json:"orders_in_db"`
	Refused     int            `json:"refused_409"`
	Other       map[string]int `json:"other_statuses,omitempty"`
	FinalStock  []int64        `json:"final_stock"`
	Oversold    bool           `json:"oversold"`
	Seconds     float64        `json:"seconds"`
	PerSecond   float64        `json:"checkouts_per_s"`
	OrdersPerS  float64        `json:"orders_per_s"`
	Latency     load.Summary   `json:"latency"`
	OrderLat    load.Summary   `json:"order_latency"`
}

const writesMethod = "Forwarding overhead, paired: the same cart write sent to the edge and to the origin one after the other " +
	"from one connection each, alternating which goes first, the overhead being the distribution of the per-pair differences " +
	"(slow drifts of the database cancel out). Open loop: POST /api/cart/items (one unit of an in-stock variant into a new cart, a fresh " +
	"X-Cart-Session per request) sent open loop at the same fixed rate to an edge (which forwards it) and directly to the " +
	"origin, both at the same time, so that both paths see the same database and machine; latency from the intended send " +
	"time. The overhead is the difference of the two distributions' percentiles (not of paired requests). Checkout: low-stock " +
	"variants are created with a known stock, every cart holds one unit of one of them (round robin), and all checkouts are " +
	"sent through the edge with a fixed number in flight; every 201's order is then read back from the database by its " +
	"reference, and the variants' final stock must be the initial stock minus the orders, never negative."

func runWrites(ctx context.Context, env bench.Env) (_ report.Section, err error) {
	plan := planWrites(env.Short)
	sec := report.Section{Name: "writes"}
	progress(env, "writes: starting NATS, a database, the relay, the origin and an edge")
	c, err := cluster.Start(ctx, clusterConfig(env, true, 1))
	if err != nil {
		return sec, err
	}
	defer closeCluster(c, &err)
	shop, err := c.CreateTenant(ctx, "writes", cluster.TenantOptions{Products: plan.products, Progress: seedProgress(env, "writes")})
	if err != nil {
		return sec, err
	}
	edge := c.Edges[0]
	variant, err := inStockVariant(newClient(edge.Addr, shop.Host, 4))
	if err != nil {
		return sec, err
	}
	res := WritesResult{CartRate: plan.cartRate, Method: writesMethod}

	progress(env, "writes: cart writes at %.0f/s through the edge and at %.0f/s directly, for %s", plan.cartRate, plan.cartRate, plan.duration)
	cart := func(addr string, prefix string) load.Config {
		body := []byte(fmt.Sprintf(`{"variant_id":%d,"quantity":1}`, variant))
		return load.Config{Addr: addr, Conns: 16, Rate: plan.cartRate, Warmup: plan.warmup, Duration: plan.duration,
			Next: func(worker int, seq uint64, req *fasthttp.Request) {
				req.Header.SetMethod("POST")
				req.SetRequestURI("/api/cart/items")
				req.Header.SetHost(shop.Host)
				req.Header.Set("X-Cart-Session", prefix+strconv.Itoa(worker)+"-"+strconv.FormatUint(seq, 10))
				req.Header.SetContentType("application/json")
				req.SetBodyRaw(body)
			},
			Check: func(resp *fasthttp.Response) bool { return resp.StatusCode() == 200 },
		}
	}
	var viaEdge, direct load.Result
	var edgeErr, directErr error
	var wg sync.WaitGroup
	wg.Add(2)
	run := randomToken()
	go func() {
		defer wg.Done()
		viaEdge, edgeErr = load.Run(ctx, cart(edge.Addr, "e"+run+"-"), c.PIDs()...)
	}()
	go func() {
		defer wg.Done()
		direct, directErr = load.Run(ctx, cart(c.Origin.Addr, "o"+run+"-"), c.PIDs()...)
	}()
	wg.Wait()
	if edgeErr != nil {
		return sec, fmt.Errorf("cart writes through the edge: %w", edgeErr)
	}
	if directErr != nil {
		return sec, fmt.Errorf("cart writes at the origin: %w", directErr)
	}
	res.ViaEdge, res.Direct = viaEdge.Latency.Summary(), direct.Latency.Summary()
	res.EdgeErrors, res.DirectErrs = viaEdge.Errors, direct.Errors
	res.OverheadP50 = res.ViaEdge.P50 - res.Direct.P50
	res.OverheadP99 = res.ViaEdge.P99 - res.Direct.P99
	progress(env, "writes: %d paired cart writes (edge, origin) one after the other", plan.pairs)
	res.Paired, err = pairedCartWrites(ctx, newClient(edge.Addr, shop.Host, 1), newClient(c.Origin.Addr, shop.Host, 1), variant, plan.pairs)
	if err != nil {
		return sec, err
	}
	res.ForwardMet = res.Paired.P50 <= float64(forwardTargetP50)/1e6 && viaEdge.Errors == 0

	progress(env, "writes: %d checkouts of %d variants with %d units each, %d in flight", plan.checkouts, plan.hot, plan.stock, plan.conc)
	res.Checkout, err = contendedCheckouts(ctx, c, shop, plan)
	if err != nil {
		return sec, err
	}
	if err := c.Err(); err != nil {
		return sec, err
	}
	co := res.Checkout
	sec.Summary = []string{
		fmt.Sprintf("Forwarded write overhead (POST /api/cart/items): **p50 %+.3f ms** over %d pairs of the same write sent through the edge and "+
			"directly, one after the other (p90 %+.3f, p99 %+.3f ms) — target ≤ 0.3 ms at p50: %s. Open loop at %.0f/s on each path at once: "+
			"p50 %+.3f ms, p99 %+.3f ms (differences of unpaired percentiles: within the database's noise).",
			res.Paired.P50, res.Paired.Pairs, res.Paired.P90, res.Paired.P99, verdict(res.ForwardMet), plan.cartRate, res.OverheadP50, res.OverheadP99),
		fmt.Sprintf("Checkout under contention: %d checkouts (%d in flight) for %d variants of %d units each: **%d orders** (%d read back from the database), "+
			"%d refused with 409, final stock %v: %s. %.0f checkouts/s, %.0f orders/s; order latency p50 %s ms, p99 %s ms.",
			co.Sent, co.Concurrency, co.Variants, co.StockEach, co.Orders, co.OrdersInDB, co.Refused, co.FinalStock,
			oversellVerdict(co), co.PerSecond, co.OrdersPerS, msf(co.OrderLat.P50), msf(co.OrderLat.P99)),
		"Method: " + writesMethod,
	}
	sec.Tables = []report.Table{
		{Title: "Cart writes (ms, from the intended send time)", Header: []string{"path", "requests", "p50", "p90", "p99", "p99.9", "max", "errors"},
			Rows: [][]string{
				summaryRow("through the edge", res.ViaEdge, strconv.FormatUint(viaEdge.Errors, 10)),
				summaryRow("directly at the origin", res.Direct, strconv.FormatUint(direct.Errors, 10)),
			}},
		{Title: "Cart writes, paired: edge minus origin for the same write sent one after the other (ms)", Header: []string{"pairs", "p10", "p50", "p90", "p99"},
			Rows: [][]string{{strconv.Itoa(res.Paired.Pairs), fmt.Sprintf("%+.3f", res.Paired.P10), fmt.Sprintf("%+.3f", res.Paired.P50),
				fmt.Sprintf("%+.3f", res.Paired.P90), fmt.Sprintf("%+.3f", res.Paired.P99)}}},
		{Title: "Checkouts under contention (ms, from the send)", Header: []string{"answers", "count", "p50", "p90", "p99", "p99.9", "max"},
			Rows: [][]string{summaryRow("all", co.Latency), summaryRow("201 (orders)", co.OrderLat)}},
	}
	sec.Plots = []report.Plot{{File: "writes-forwarding.svg", Title: "Cart writes: through an edge and directly at the origin", Kind: report.KindPercentiles,
		XLabel: "percentile", YLabel: "ms", Series: []report.Series{percentileSeries("through the edge", viaEdge.Latency), percentileSeries("directly at the origin", direct.Latency)}}}
	sec.Data = res
	return sec, nil
}

// PairedSummary is a distribution of per-pair differences in ms (negative: the edge was faster).
type PairedSummary struct {
	Pairs int     `json:"pairs"`
	P10   float64 `json:"p10_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
}

// pairedCartWrites sends n pairs of the same cart write (a new cart each) through the edge and
// directly, and returns the distribution of the differences.
func pairedCartWrites(ctx context.Context, edge, origin *client, variant int64, n int) (PairedSummary, error) {
	body := []byte(fmt.Sprintf(`{"variant_id":%d,"quantity":1}`, variant))
	prefix := "p" + randomToken() + "-"
	send := func(c *client, i int, which string) (time.Duration, error) {
		t0 := time.Now()
		status, out, _, err := c.do("POST", "/api/cart/items", body, "X-Cart-Session", prefix+which+strconv.Itoa(i))
		d := time.Since(t0)
		if err != nil || status != 200 {
			return 0, fmt.Errorf("paired cart write: %d %.200s %v", status, out, err)
		}
		return d, nil
	}
	diffs := make([]float64, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return PairedSummary{}, err
		}
		var de, do time.Duration
		var err error
		if i%2 == 0 {
			if de, err = send(edge, i, "e"); err == nil {
				do, err = send(origin, i, "o")
			}
		} else {
			if do, err = send(origin, i, "o"); err == nil {
				de, err = send(edge, i, "e")
			}
		}
		if err != nil {
			return PairedSummary{}, err
		}
		diffs = append(diffs, float64(de-do)/1e6)
	}
	sort.Float64s(diffs)
	at := func(q float64) float64 { return diffs[min(len(diffs)-1, int(q*float64(len(diffs))))] }
	return PairedSummary{Pairs: n, P10: at(0.10), P50: at(0.50), P90: at(0.90), P99: at(0.99)}, nil
}

func oversellVerdict(co CheckoutRun) string {
	if co.Oversold {
		return "**OVERSOLD**"
	}
	return "**no oversell**"
}

// inStockVariant returns the id of an in-stock variant of the tenant's first products.
func inStockVariant(c *client) (int64, error) {
	list, err := products(c, 20)
	if err != nil {
		return 0, err
	}
	for _, p := range list {
		status, body, _, err := c.do("GET", "/api/products/"+p.Slug+"/variants", nil)
		if err != nil || status != 200 {
			continue
		}
		var vs struct {
			Data []struct {
				ID           int64  `json:"id"`
				Availability string `json:"availability"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &vs) != nil {
			continue
		}
		for _, v := range vs.Data {
			if v.Availability == "in_stock" {
				return v.ID, nil
			}
		}
	}
	return 0, fmt.Errorf("no in-stock variant among the first products")
}

const checkoutBody = `{"email":"bench@example.com","shipping_address":{"name":"Bench","line1":"1 Main St","city":"Springfield","postal_code":"12345","country":"US"},"payment_token":"tok_visa"}`

// contendedCheckouts creates plan.hot variants of plan.stock units, fills one cart per checkout
// through the edge, sends every checkout through the edge with plan.conc in flight, and checks
// the orders and the stock in the database.
func contendedCheckouts(ctx context.Context, c *cluster.Cluster, shop *cluster.Tenant, plan writesPlan) (CheckoutRun, error) {
	run := CheckoutRun{Variants: plan.hot, StockEach: plan.stock, Sent: plan.checkouts, Concurrency: plan.conc, Other: map[string]int{}}
	var ids []schema.VariantID
	commits, err := c.DB.WriteTx(ctx, func(tx *store.Tx) error {
		ids = ids[:0]
		for i := range plan.hot {
			p := &schema.Product{Slug: fmt.Sprintf("hot-item-%d", i), Title: fmt.Sprintf("Hot Item %d", i), Status: schema.ProductActive,
				Prices: schema.Prices{"USD": 2500}}
			if err := tx.CreateProduct(ctx, shop.Tenant, p); err != nil {
				return err
			}
			v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: fmt.Sprintf("HOT-%d", i), Title: "Default"}, Stock: plan.stock}
			if err := tx.CreateVariant(ctx, shop.Tenant, v); err != nil {
				return err
			}
			ids = append(ids, v.ID)
		}
		return nil
	})
	if err != nil {
		return run, err
	}
	for _, lc := range commits {
		if lc.Log == shop.Slug {
			if err := c.WaitServed(ctx, shop, lc.Version); err != nil {
				return run, err
			}
		}
	}
	edge := newClient(c.Edges[0].Addr, shop.Host, plan.conc)
	sessions := make([]string, plan.checkouts)
	prefix := randomToken()
	for i := range sessions {
		sessions[i] = "co-" + prefix + "-" + strconv.Itoa(i)
		body := []byte(fmt.Sprintf(`{"variant_id":%d,"quantity":1}`, ids[i%len(ids)]))
		status, out, _, err := edge.do("POST", "/api/cart/items", body, "X-Cart-Session", sessions[i])
		if err != nil || status != 200 {
			return run, fmt.Errorf("filling cart %d: %d %.200s %v", i, status, out, err)
		}
	}

	all, orders := load.NewHistogram(), load.NewHistogram()
	var mu sync.Mutex
	var refs []string
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range plan.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				status, out, _, err := edge.do("POST", "/api/checkout", []byte(checkoutBody), "X-Cart-Session", sessions[i], "Idempotency-Key", sessions[i])
				d := time.Since(t0)
				mu.Lock()
				all.Record(d)
				switch {
				case err == nil && status == 201:
					orders.Record(d)
					var o struct {
						Reference string `json:"reference"`
					}
					json.Unmarshal(out, &o)
					refs = append(refs, o.Reference)
				case err == nil && status == 409:
					run.Refused++
				default:
					run.Other[fmt.Sprintf("%d %.80s %v", status, out, err)]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range sessions {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return run, err
	}
	run.Seconds = time.Since(start).Seconds()
	run.Orders = len(refs)
	run.PerSecond = float64(plan.checkouts) / run.Seconds
	run.OrdersPerS = float64(run.Orders) / run.Seconds
	run.Latency, run.OrderLat = all.Summary(), orders.Summary()

	sort.Strings(refs)
	err = c.DB.Tx(ctx, func(tx *store.Tx) error {
		run.OrdersInDB, run.FinalStock = 0, nil
		for i, ref := range refs {
			if ref == "" || (i > 0 && ref == refs[i-1]) {
				continue
			}
			if _, err := tx.OrderByReference(ctx, shop.Tenant, ref); err == nil {
				run.OrdersInDB++
			}
		}
		for _, id := range ids {
			v, err := tx.Variant(ctx, shop.Tenant, id)
			if err != nil {
				return err
			}
			run.FinalStock = append(run.FinalStock, v.Stock)
		}
		return nil
	})
	if err != nil {
		return run, err
	}
	var left int64
	for _, s := range run.FinalStock {
		left += s
		if s < 0 {
			run.Oversold = true
		}
	}
	total := int64(plan.hot) * plan.stock
	run.Oversold = run.Oversold || int64(run.Orders) > total
	if int64(run.Orders)+left != total || run.OrdersInDB != run.Orders {
		return run, fmt.Errorf("checkout: %d orders (%d in the database) and %d units left of %d: orders and stock disagree", run.Orders, run.OrdersInDB, left, total)
	}
	return run, nil
}

// randomToken returns 32 random hex digits: cart sessions must be 22 to 128 base64url characters.
func randomToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
