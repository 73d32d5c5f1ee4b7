package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"vitrine/edge"
	"vitrine/sync/relay"
)

// The edge answers unknown routes itself (decision 18), with the origin's answer byte for byte:
// the same status, body (but for the request id), content type and Allow header.
func TestEdgeAnswersUnknownRoutesAsTheOrigin(t *testing.T) {
	s := newSystem(t, systemOptions{})
	originMetrics := metrics.NewSet()
	s.originConfig.Metrics = originMetrics
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	s.tenant("shop")
	host := "shop.example.test"
	requestID := regexp.MustCompile(`"request_id":"[^"]*"`)
	for _, tt := range []struct{ method, uri string }{
		{"GET", "/nope"},
		{"GET", "/api/nope"},
		{"GET", "/api/products/linen/nope/deeper"},
		{"HEAD", "/api/nope"},
		{"POST", "/"},
		{"DELETE", "/api/zz-unknown"},
		{"PATCH", "/api/products"},
		{"PUT", "/api/currencies"},
		{"PROPFIND", "/api/categories"},
		{"OPTIONS", "/api/products"},
		{"GET", "/index.php?rest_route=/cms/v2/nope"},
		{"GET", "/?rest_route=/nope/at/all"},
		{"PUT", "/index.php?rest_route=/cms/v2/search"},
		{"GET", "/index.php?rest_route=/cms/v2/nope&_envelope=1"},
		{"GET", "/index.php?rest_route=/cms/v2/nope&_jsonp=cb"},
		{"POST", "/index.php?rest_route=/cms/v2/nope&_method=GET"},
	} {
		t.Run(tt.method+" "+tt.uri, func(t *testing.T) {
			o := call(t, tt.method, s.originAddr, host, tt.uri, "")
			before := originRequests(originMetrics)
			ed := call(t, tt.method, e.addr, host, tt.uri, "")
			if after := originRequests(originMetrics); after != before {
				t.Fatalf("the edge forwarded an unknown route (%v origin requests, then %v)", before, after)
			}
			ob, eb := requestID.ReplaceAll(o.body, nil), requestID.ReplaceAll(ed.body, nil)
			if ed.status != o.status || !bytes.Equal(eb, ob) {
				t.Fatalf("edge %d %s\norigin %d %s", ed.status, ed.body, o.status, o.body)
			}
			for _, h := range []string{"Content-Type", "Allow", "Cache-Control", "Access-Control-Allow-Origin"} {
				if ed.header.Get(h) != o.header.Get(h) {
					t.Errorf("%s: edge %q, origin %q", h, ed.header.Get(h), o.header.Get(h))
				}
			}
			if o.status >= 500 {
				t.Errorf("the origin answered %d to an unknown route", o.status)
			}
		})
	}
}

// originRequests is the number of requests an origin has answered, from its metrics.
func originRequests(set *metrics.Set) float64 {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	var n float64
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "vitrine_http_requests_total{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			n += v
		}
	}
	return n
}

// With NATS down, an edge keeps serving its replica and says how stale it is: in every read's
// Vitrine-Staleness, in /readyz (200 "degraded" past StaleAfter) and in the metric
// vitrine_feed_staleness_seconds; when NATS is back, it is fresh again.
func TestEdgeStalenessWithNATSDown(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{StaleAfter: time.Second})
	_, pw := s.tenant("shop")
	host := "shop.example.test"
	if r := call(t, "POST", s.originAddr, host, "/api/admin/products", `{"title":"Stale Lamp","status":"active","prices":{"USD":1000}}`,
		"Authorization", basic("admin", pw)); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	type readiness struct {
		Status string `json:"status"`
		Shards []struct {
			Shard     string  `json:"shard"`
			Staleness float64 `json:"staleness_seconds"`
			Stale     bool    `json:"stale"`
		} `json:"shards"`
	}
	ready := func() (int, readiness) {
		r := call(t, "GET", e.addr, host, "/readyz", "")
		var rd readiness
		if err := json.Unmarshal(r.body, &rd); err != nil {
			t.Fatalf("/readyz body: %s", r.body)
		}
		return r.status, rd
	}
	staleness := func() int {
		r := call(t, "GET", e.addr, host, "/api/products/stale-lamp", "")
		if r.status != 200 {
			t.Fatalf("read: %d %s", r.status, r.body)
		}
		n, err := strconv.Atoi(r.header.Get(edge.HeaderStaleness))
		if err != nil {
			t.Fatalf("read without %s: %v", edge.HeaderStaleness, r.header)
		}
		return n
	}
	waitFor(t, 10*time.Second, "the edge to serve the product", func() bool {
		r := call(t, "GET", e.addr, host, "/api/products/stale-lamp", "")
		return r.status == 200
	})
	if st, rd := ready(); st != 200 || rd.Status != "ok" || len(rd.Shards) < 2 {
		t.Fatalf("/readyz with NATS up: %d %+v", st, rd)
	}
	if n := staleness(); n > 1 {
		t.Fatalf("%s %d with NATS up", edge.HeaderStaleness, n)
	}

	s.ns.Server.Shutdown()
	s.ns.Server.WaitForShutdown()
	waitFor(t, 10*time.Second, "the edge to report itself degraded", func() bool {
		_, rd := ready()
		return rd.Status == "degraded"
	})
	st, rd := ready()
	if st != 200 {
		t.Fatalf("/readyz of a stale edge: %d: it must stay ready (it serves its replica)", st)
	}
	for _, sh := range rd.Shards {
		if !sh.Stale || sh.Staleness < 1 {
			t.Errorf("shard %s with NATS down: %+v", sh.Shard, sh)
		}
	}
	time.Sleep(time.Second)
	if n := staleness(); n < 2 {
		t.Fatalf("%s %d with NATS down for over 2s", edge.HeaderStaleness, n)
	}
	set := metrics.NewSet()
	observe(set, "edge", e.rep, e.fol, nil)
	var b bytes.Buffer
	set.WritePrometheus(&b)
	if !regexp.MustCompile(`(?m)^vitrine_feed_staleness_seconds\{process="edge",shard="0"\} [2-9]`).Match(b.Bytes()) {
		t.Fatalf("metrics with NATS down:\n%s", b.String())
	}

	s.ns.Restart(t)
	waitFor(t, 30*time.Second, "the edge to be fresh again", func() bool {
		_, rd := ready()
		return rd.Status == "ok"
	})
	if n := staleness(); n > 1 {
		t.Fatalf("%s %d with NATS back", edge.HeaderStaleness, n)
	}
}
