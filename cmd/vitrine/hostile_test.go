package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

// TestHostileInputs sends every route of the route table, through an edge to the origin on
// PostgreSQL, hostile captures, query arguments and bodies, as an administrator and
// anonymously: every answer is a 4xx (or a 2xx) in the interface's own error shape, never a 5xx
// — WordPress's 501 for deleting what has no trash excepted. The requests are drawn from a fixed
// seed, so a failure repeats.
func TestHostileInputs(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{CacheBytes: 4 << 20})
	_, pw := s.tenant("hostile")
	host, admin := "hostile.example.test", basic("admin", pw)
	r := call(t, "POST", e.addr, host, "/index.php?rest_route=/cms/v2/posts", `{"title":"Target","status":"publish"}`, "Authorization", admin)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	postID := fmt.Sprint(int64(r.json(t)["id"].(float64)))

	captures := []string{"999999", "0", "-1", "abc", "1e3", "%00", "%FF%FE", strings.Repeat("9", 40), "..%2F..", postID}
	values := []string{"", "-1", "0", "99999999999999999999", "abc", "[]", "{}", "%00", "%FF", "2026-13-45T99:99:99",
		"1,a,-3", strings.Repeat("x", 3000), strings.Repeat("1,", 800), "true", "null", "%5B%5D"}
	bodies := []string{"", "{", "[]", "null", `"x"`, "{}", `{"a":1e999}`, "{\"title\":\"\xff\xfe\"}",
		strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
		`{"title":{"raw":[1]},"status":7,"date":"2026-13-45T99:99:99","categories":"x","meta":[],"password":{"a":1},"parent":-4}`,
		`{"title":"T","content":"C","status":"publish","slug":"` + strings.Repeat("s", 500) + `","sticky":"yes","menu_order":1e20}`,
		`{"quantity":-1,"variant_id":"x","code":[],"email":"@","prices":{"USD":-5},"variants":[{}]}`,
		`{"requests":[{"path":"/cms/v2/posts","method":"GET"},{"path":"//../x"},{"path":"/cms/v2/posts/999999","method":"DELETE"}]}`,
		`{"requests":"x","validation":"require-all-validate"}`,
	}
	anyArg := []string{"page", "per_page", "context", "force", "reassign", "search", "orderby", "status", "include", "categories[terms]", "_fields", "_embed", "_envelope", "_method"}
	capture := regexp.MustCompile(`\{[a-z_]+\}`)
	rng := rand.New(rand.NewPCG(4, 2))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }

	sent := 0
	for _, rt := range schema.Routes {
		if rt.Name == "cms.batch" && rt.Method != "POST" {
			continue
		}
		for n := 0; n < 6; n++ {
			path := capture.ReplaceAllStringFunc(rt.Path, func(string) string {
				c := pick(captures)
				if c == postID && strings.HasPrefix(rt.Path, "/cms/v2/users") {
					c = "999999" // never the administrator's id: their passwords stay
				}
				return c
			})
			q := url.Values{}
			for _, a := range rt.Args {
				if rng.IntN(3) == 0 {
					q.Set(a.Name, pick(values))
				}
			}
			if rng.IntN(2) == 0 {
				q.Set(pick(anyArg), pick(values))
			}
			var uri string
			if rt.Interface == schema.CMS {
				uri = "/index.php?rest_route=" + path
				if enc := q.Encode(); enc != "" {
					uri += "&" + enc
				}
			} else {
				uri = path
				if enc := q.Encode(); enc != "" {
					uri += "?" + enc
				}
			}
			uri = strings.ReplaceAll(uri, "%25", "%") // captures meant percent-encoded
			body := ""
			if rt.Method != "GET" && rt.Method != "HEAD" {
				body = pick(bodies)
			}
			headers := []string{"Content-Type", "application/json", "X-Cart-Session", "cs_" + pick([]string{"bad", "", strings.Repeat("z", 200)})}
			if n%3 != 0 {
				headers = append(headers, "Authorization", admin)
			}
			if rng.IntN(4) == 0 {
				headers = append(headers, "Idempotency-Key", pick(values))
			}
			resp, err := tryCallFull(rt.Method, e.addr, host, uri, body, headers...)
			if err != nil {
				continue // the client refused to send it (an invalid URL)
			}
			sent++
			what := fmt.Sprintf("%s %s %.300s (%d bytes; body %.80q)", rt.Name, rt.Method, uri, len(uri), body)
			if resp.status >= 500 {
				var cms struct{ Code string }
				json.Unmarshal(resp.body, &cms)
				if !(resp.status == 501 && strings.HasSuffix(cms.Code, "_trash_not_supported")) {
					t.Errorf("%s: %d %.300s", what, resp.status, resp.body)
				}
				continue
			}
			// The embed page (a permalink with embed) is a page for people in an iframe: its 404
			// is WordPress's 404 embed page, in HTML.
			embedPage := rt.Name == "oembed.page" && resp.status == 404 && strings.HasPrefix(resp.header.Get("Content-Type"), "text/html")
			if resp.status >= 400 && !validErrorShape(rt.Interface, resp.body) && !embedPage {
				t.Errorf("%s: %d, not the %v error shape: %.300s", what, resp.status, rt.Interface, resp.body)
			}
		}
	}
	if r := call(t, "GET", e.addr, host, "/index.php?rest_route=/cms/v2/users/me", "", "Authorization", admin); r.status != 200 {
		t.Fatalf("the administrator no longer authenticates (%d): the hostile requests ran anonymously", r.status)
	}
	// Long queries (100 ids to include, through an edge to the origin) are served; a request
	// line past pipeline.MaxHeaderBytes is 431 in a shape both interfaces' clients read.
	long := "/index.php?rest_route=/cms/v2/posts&include=" + strings.TrimSuffix(strings.Repeat("123456789,", 100), ",") + "&search=" + strings.Repeat("a", 900) +
		"&slug=" + strings.TrimSuffix(strings.Repeat("a-rather-long-slug-of-forty-characters-x,", 100), ",")
	for _, auth := range []string{"", admin} {
		if r := call(t, "GET", e.addr, host, long, "", "Authorization", auth); r.status != 200 {
			t.Errorf("a %d-byte query (auth %v): %d %.200s", len(long), auth != "", r.status, r.body)
		}
	}
	huge := "/index.php?rest_route=/cms/v2/posts&search=" + strings.Repeat("a", 20000)
	if r := call(t, "GET", e.addr, host, huge, ""); r.status != 431 || !validErrorShape(schema.CMS, r.body) || !validErrorShape(schema.Commerce, r.body) {
		t.Errorf("a 20 KB request line: %d %s", r.status, r.body)
	}
	t.Logf("%d hostile requests over %d routes", sent, len(schema.Routes))
	if sent < 3*len(schema.Routes) {
		t.Errorf("only %d requests were sent", sent)
	}
}

// validErrorShape reports whether an error body has its interface's shape: commerce
// {"error": "...", "code": "..."}, CMS {"code": "...", "message": "...", "data": {"status": N}}.
func validErrorShape(iface schema.Interface, body []byte) bool {
	var e struct {
		Error, Code, Message string
		Data                 *struct{ Status int }
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	if iface == schema.CMS {
		return e.Code != "" && e.Message != "" && e.Data != nil && e.Data.Status >= 400
	}
	return e.Error != "" && e.Code != ""
}

// tryCallFull sends a request with a body and headers, returning transport errors (an URL the
// client refuses) instead of failing the test.
func tryCallFull(method, addr, host, uri, body string, headers ...string) (*response, error) {
	req, err := http.NewRequest(method, "http://"+addr+uri, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}
