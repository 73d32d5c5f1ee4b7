package edge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"vitrine/edge"
	"vitrine/edge/replica"
	"vitrine/schema"
)

// The fixture's clock: every entity of the fixture is dated from it, so bodies are stable.
var epochTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// feeder builds the change stream a relay would publish, and feeds it to a replica.
type feeder struct {
	rep      *replica.Replica
	versions map[string]int64
}

func (f *feeder) put(log string, kind schema.Kind, id string, vis schema.Visibility, v any) *schema.Change {
	f.versions[log]++
	n := f.versions[log]
	switch e := v.(type) {
	case *schema.Product:
		e.Version = n
	case *schema.Variant:
		e.Version = n
	case *schema.Category:
		e.Version = n
	case *schema.Currency:
		e.Version = n
	case *schema.Post:
		e.Version = n
	case *schema.Tenant:
		e.Version = n
	}
	c := schema.NewChange(log, kind, id, vis, v)
	c.Version, c.TxnFirst, c.TxnLast = n, n, n
	f.rep.Change(&c)
	return &c
}

func (f *feeder) del(log string, kind schema.Kind, id string, vis schema.Visibility) {
	f.versions[log]++
	n := f.versions[log]
	c := schema.NewChange(log, kind, id, vis, nil)
	c.Version, c.TxnFirst, c.TxnLast = n, n, n
	f.rep.Change(&c)
}

// head ends a batch of a log: its changes apply at once.
func (f *feeder) head(log string) {
	c := schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: f.versions[log]}
	f.rep.Change(&c)
}

func product(id int64, slug, title string, usd int64, cats ...schema.CategoryID) *schema.Product {
	p := &schema.Product{ID: schema.ProductID(id), Slug: slug, Title: title, Description: "About " + title + ".",
		Status: schema.ProductActive, Prices: schema.Prices{"USD": usd}, CategoryIDs: cats,
		Images:    []schema.Image{{URL: "https://img.example/" + slug + ".jpg", Alt: title, Width: 800, Height: 800}},
		CreatedAt: epochTime.Add(time.Duration(id) * time.Minute), UpdatedAt: epochTime.Add(time.Duration(id) * time.Minute)}
	p.Normalize()
	return p
}

// seed feeds the fixture's registry and catalogs: tenant "demo" (custom domain
// shop.example.test, canonical base https://api.shop.example) and tenant "other".
func seed(f *feeder) {
	f.rep.Reset("epoch-1")
	demo := &schema.Tenant{ID: "11111111-1111-1111-1111-111111111111", Slug: "demo", Name: "Demo", BaseURL: "https://api.shop.example",
		Domains: []string{"shop.example.test"}, Status: schema.TenantActive, Timezone: "Europe/Paris", Currencies: []string{"USD", "EUR", "JPY"},
		CreatedAt: epochTime, UpdatedAt: epochTime}
	other := &schema.Tenant{ID: "22222222-2222-2222-2222-222222222222", Slug: "other", Name: "Other", BaseURL: "https://api.other.example",
		Status: schema.TenantActive, Timezone: "UTC", Currencies: []string{"EUR"}, CreatedAt: epochTime, UpdatedAt: epochTime}
	f.put(schema.PlatformLog, schema.KindTenant, "demo", schema.Pub, demo)
	f.put(schema.PlatformLog, schema.KindTenant, "other", schema.Pub, other)
	f.head(schema.PlatformLog)

	for _, c := range []*schema.Currency{
		{Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"},
		{Code: "EUR", Name: "Euro", Symbol: "€", Exponent: 2, Rate: "0.92"},
		{Code: "JPY", Name: "Japanese Yen", Symbol: "¥", Exponent: 0, Rate: "151.3"},
	} {
		c.CreatedAt, c.UpdatedAt = epochTime, epochTime
		f.put("demo", schema.KindCurrency, c.Code, schema.Pub, c)
	}
	for _, c := range []*schema.Category{
		{ID: 1, Slug: "apparel", Name: "Apparel", Position: 1},
		{ID: 2, ParentID: 1, Slug: "shirts", Name: "Shirts", Position: 1},
		{ID: 3, Slug: "kitchen", Name: "Kitchen", Position: 2},
	} {
		c.CreatedAt, c.UpdatedAt = epochTime, epochTime
		f.put("demo", schema.KindCategory, schema.IDString(c.ID), schema.Pub, c)
	}
	shirt := product(10, "linen-shirt", "Linen Shirt", 4900, 2, 1)
	shirt.Prices["EUR"] = 4500
	shirt.Featured = true
	f.put("demo", schema.KindProduct, "10", schema.Pub, shirt)
	for i, size := range []string{"M", "L"} {
		v := &schema.Variant{ID: schema.VariantID(11 + i), ProductID: 10, SKU: "LS-" + size, Title: size,
			Options: []schema.Option{{Name: "size", Value: size}}, Availability: schema.InStock, Position: i,
			CreatedAt: epochTime, UpdatedAt: epochTime}
		if size == "L" {
			v.Prices = schema.Prices{"USD": 5200}
			v.Availability = schema.LowStock
		}
		v.Normalize()
		f.put("demo", schema.KindVariant, schema.IDString(v.ID), schema.Pub, v)
	}
	f.put("demo", schema.KindProduct, "20", schema.Pub, product(20, "kettle", "Kettle", 2999, 3))
	for i, title := range []string{"Spring news", "Summer sale"} {
		p := &schema.Post{ID: schema.PostID(100 + i), Type: "post", Slug: schema.Slugify(title), Status: schema.StatusPublish,
			Title: title, Content: "First line.\n\nSecond paragraph of " + title + ".", Author: 1, CommentStatus: "open",
			PingStatus: "open", Format: "standard", DateGMT: epochTime.Add(time.Duration(i) * time.Hour),
			ModifiedGMT: epochTime.Add(time.Duration(i) * time.Hour)}
		p.Normalize()
		f.put("demo", schema.KindPost, schema.IDString(p.ID), schema.Pub, p)
	}
	f.head("demo")

	f.put("other", schema.KindProduct, "7", schema.Pub, product(7, "other-only", "Other Only", 100))
	f.head("other")
	f.rep.Checkpoint()
}

// upstream is a loopback HTTP server standing in the origin's place, recording what reaches it.
type upstream struct {
	mu      sync.Mutex
	last    *fasthttp.Request
	addr    string
	version int64 // Vitrine-Write-Version answered to writes
	delay   time.Duration
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{addr: ln.Addr().String()}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		u.mu.Lock()
		req := new(fasthttp.Request)
		ctx.Request.CopyTo(req)
		u.last = req
		v, delay := u.version, u.delay
		u.mu.Unlock()
		time.Sleep(delay)
		if !ctx.IsGet() && v > 0 {
			ctx.Response.Header.Set("Vitrine-Write-Version", strconv.FormatInt(v, 10))
		}
		ctx.Response.Header.Set("Connection", "X-Hop")
		ctx.Response.Header.Set("X-Hop", "secret-of-the-hop")
		ctx.Response.Header.Set("Keep-Alive", "timeout=5")
		ctx.SetContentType("application/json; charset=utf-8")
		ctx.SetStatusCode(201)
		ctx.SetBodyString(`{"upstream":true}`)
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return u
}

func (u *upstream) lastRequest() *fasthttp.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last
}

type fixture struct {
	t       testing.TB
	feed    *feeder
	rep     *replica.Replica
	srv     *edge.Server
	up      *upstream
	client  *fasthttp.Client
	dial    func() (net.Conn, error)
	metrics *metrics.Set
}

func newFixture(t testing.TB, cfg edge.Config) *fixture {
	t.Helper()
	rep := replica.New(replica.Config{PlatformDomain: "vitrine.test"})
	f := &fixture{t: t, rep: rep, feed: &feeder{rep: rep, versions: map[string]int64{}}, metrics: metrics.NewSet()}
	seed(f.feed)
	f.up = startUpstream(t)
	if cfg.Origin == "" {
		cfg.Origin = "http://" + f.up.addr
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = -1
	}
	cfg.Metrics = f.metrics
	cfg.EdgeSecret = "edge-secret"
	var err error
	f.srv, err = edge.New(cfg, rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	ln := fasthttputil.NewInmemoryListener()
	hs := f.srv.HTTPServer()
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Shutdown() })
	f.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }, DisablePathNormalizing: true}
	f.dial = ln.Dial
	return f
}

// doEarly sends a request over a raw connection and reads the answer whatever becomes of the
// write: for answers the server sends (413) and closes on before the body is fully read.
func (f *fixture) doEarly(r req) *fasthttp.Response {
	f.t.Helper()
	conn, err := f.dial()
	if err != nil {
		f.t.Fatal(err)
	}
	rq := new(fasthttp.Request) // owned by the writer goroutine
	rq.Header.SetMethod(r.method)
	rq.SetRequestURI("http://shop.example.test" + r.uri)
	rq.SetBodyString(r.body)
	written := make(chan struct{})
	go func() {
		defer close(written)
		w := bufio.NewWriter(conn)
		rq.Write(w)
		w.Flush()
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp := new(fasthttp.Response)
	err = resp.Read(bufio.NewReader(conn))
	conn.Close() // ends a write the server stopped reading
	<-written
	if err != nil {
		f.t.Fatalf("%s %s: reading the answer: %v", r.method, r.uri, err)
	}
	return resp
}

// req describes a test request.
type req struct {
	method  string
	uri     string // path and query
	host    string // default shop.example.test
	headers map[string]string
	body    string
}

func (f *fixture) do(r req) *fasthttp.Response {
	f.t.Helper()
	rq := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(rq)
	if r.method == "" {
		r.method = "GET"
	}
	if r.host == "" {
		r.host = "shop.example.test"
	}
	rq.Header.SetMethod(r.method)
	rq.SetRequestURI("http://" + r.host + r.uri)
	for k, v := range r.headers {
		if k == "Host" {
			rq.Header.SetHost(v)
			continue
		}
		rq.Header.Set(k, v)
	}
	if r.body != "" {
		rq.SetBodyString(r.body)
	}
	resp := new(fasthttp.Response)
	if err := f.client.DoTimeout(rq, resp, 10*time.Second); err != nil {
		f.t.Fatalf("%s %s: %v", r.method, r.uri, err)
	}
	return resp
}

// metric returns the value of a counter of the fixture's metrics set.
func (f *fixture) metric(name string) float64 {
	var b bytes.Buffer
	f.metrics.WritePrometheus(&b)
	for _, line := range bytes.Split(b.Bytes(), []byte{'\n'}) {
		if bytes.HasPrefix(line, []byte(name+" ")) {
			v, _ := strconv.ParseFloat(string(line[len(name)+1:]), 64)
			return v
		}
	}
	return 0
}

func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b)
	}
	return m
}
