package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"vitrine/edge"
	"vitrine/schema"
	"vitrine/sync/relay"
)

type batchAnswer struct {
	Failed    string `json:"failed"`
	Responses []*struct {
		Body    json.RawMessage   `json:"body"`
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
	} `json:"responses"`
}

func TestCMSBatch(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	_, pw := s.tenant("shop")
	host, auth := "shop.example.test", basic("admin", pw)
	batch := func(body string, headers ...string) *response {
		return call(t, "POST", e.addr, host, "/index.php?rest_route=/batch/v1", body, headers...)
	}
	count := func() int {
		r := call(t, "GET", s.originAddr, host, "/index.php?rest_route=/cms/v2/posts&status=any&per_page=100", "", "Authorization", auth)
		var list []json.RawMessage
		if err := json.Unmarshal(r.body, &list); err != nil {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		return len(list)
	}

	t.Run("normal validation runs each request and reports each outcome", func(t *testing.T) {
		r := batch(`{"requests":[
			{"path":"/cms/v2/posts","body":{"title":"One","status":"publish"}},
			{"method":"POST","path":"/cms/v2/posts","body":{"title":"Two","status":"bogus"}},
			{"path":"/cms/v2/nothing-here","body":{}},
			{"path":"/batch/v1","body":{"requests":[]}},
			{"path":"not a path"}
		]}`, "Authorization", auth)
		if r.status != 207 {
			t.Fatalf("status %d %s", r.status, r.body)
		}
		a := decode[batchAnswer](t, r)
		want := []int{201, 400, 404, 400, 400}
		for i, w := range want {
			if a.Responses[i].Status != w {
				t.Errorf("request %d: %d %s, want %d", i, a.Responses[i].Status, a.Responses[i].Body, w)
			}
		}
		if a.Responses[0].Headers["Location"] == "" || !strings.Contains(string(a.Responses[3].Body), "rest_batch_not_allowed") ||
			!strings.Contains(string(a.Responses[2].Body), "rest_no_route") || !strings.Contains(string(a.Responses[4].Body), "parse_path_failed") {
			t.Fatalf("responses %s", r.body)
		}
		var created struct{ ID int64 }
		json.Unmarshal(a.Responses[0].Body, &created)
		// A path with a query string, and an update: both in one batch.
		r = batch(fmt.Sprintf(`{"requests":[{"method":"PUT","path":"/cms/v2/posts/%d","body":{"title":"One, renamed"}},
			{"method":"DELETE","path":"/cms/v2/posts/%d?force=true"}]}`, created.ID, created.ID), "Authorization", auth)
		a = decode[batchAnswer](t, r)
		if r.status != 207 || a.Responses[0].Status != 200 || a.Responses[1].Status != 200 || !strings.Contains(string(a.Responses[1].Body), `"deleted":true`) {
			t.Fatalf("update and force delete: %d %s", r.status, r.body)
		}
	})

	t.Run("require-all-validate runs nothing when one request is invalid", func(t *testing.T) {
		before := count()
		r := batch(`{"validation":"require-all-validate","requests":[
			{"path":"/cms/v2/posts","body":{"title":"Valid"}},
			{"path":"/cms/v2/posts","body":{"title":"Invalid","status":"bogus"}}
		]}`, "Authorization", auth)
		a := decode[batchAnswer](t, r)
		if r.status != 207 || a.Failed != "validation" || a.Responses[0] != nil || a.Responses[1] == nil || a.Responses[1].Status != 400 {
			t.Fatalf("require-all-validate: %d %s", r.status, r.body)
		}
		if n := count(); n != before {
			t.Fatalf("%d posts after a failed validation, %d before", n, before)
		}
		// Every post type's writes are validated, not only posts'.
		for _, path := range []string{"/cms/v2/pages", "/cms/v2/blocks", "/cms/v2/navigation"} {
			r := batch(`{"validation":"require-all-validate","requests":[
				{"path":"/cms/v2/posts","body":{"title":"Valid"}},
				{"path":"`+path+`","body":{"title":"Invalid","status":"bogus"}}
			]}`, "Authorization", auth)
			a := decode[batchAnswer](t, r)
			if r.status != 207 || a.Failed != "validation" || a.Responses[1] == nil || a.Responses[1].Status != 400 {
				t.Fatalf("require-all-validate with %s: %d %s", path, r.status, r.body)
			}
		}
		if n := count(); n != before {
			t.Fatalf("%d posts after failed validations, %d before", n, before)
		}
		r = batch(`{"validation":"require-all-validate","requests":[{"path":"/cms/v2/posts","body":{"title":"A"}},{"path":"/cms/v2/posts","body":{"title":"B"}}]}`, "Authorization", auth)
		a = decode[batchAnswer](t, r)
		if r.status != 207 || a.Failed != "" || a.Responses[0].Status != 201 || a.Responses[1].Status != 201 || r.header.Get("Vitrine-Write-Version") == "" {
			t.Fatalf("all valid: %d %s", r.status, r.body)
		}
		if n := count(); n != before+2 {
			t.Fatalf("%d posts, want %d", n, before+2)
		}
	})

	t.Run("the batch's credentials apply to every request", func(t *testing.T) {
		r := batch(`{"requests":[{"path":"/cms/v2/posts","body":{"title":"Anonymous"}}]}`)
		a := decode[batchAnswer](t, r)
		if r.status != 207 || a.Responses[0].Status != 401 {
			t.Fatalf("anonymous batch: %d %s", r.status, r.body)
		}
	})

	t.Run("top-level errors run nothing", func(t *testing.T) {
		many := make([]string, 26)
		for i := range many {
			many[i] = `{"path":"/cms/v2/posts","body":{"title":"x"}}`
		}
		cases := []struct{ body, code string }{
			{`{"requests":[` + strings.Join(many, ",") + `]}`, "rest_invalid_param"},
			{`{}`, "rest_missing_callback_param"},
			{`{"requests":[{"method":"GET","path":"/cms/v2/posts"}]}`, "rest_invalid_param"},
			{`{"validation":"sometimes","requests":[]}`, "rest_invalid_param"},
			{`{"requests":`, "rest_invalid_json"},
		}
		for _, c := range cases {
			r := batch(c.body, "Authorization", auth)
			if r.status != 400 || !strings.Contains(string(r.body), c.code) {
				t.Errorf("%.60s: %d %s, want 400 %s", c.body, r.status, r.body, c.code)
			}
		}
	})
}

// TestCMSBatchRefusesRoutesWithoutBatch sends, through an edge, a batch request to every route of
// the table that may not be batched (every CMS route with a method a batch allows and no
// allow_batch), in both validation modes: each is 400 rest_batch_not_allowed with WordPress's
// message, and in require-all-validate mode nothing runs.
func TestCMSBatchRefusesRoutesWithoutBatch(t *testing.T) {
	s := newSystem(t, systemOptions{})
	s.startRelay(relay.Config{})
	s.startOrigin()
	e := s.startEdge(edge.Config{})
	_, pw := s.tenant("shop")
	host, auth := "shop.example.test", basic("admin", pw)

	// The requests, derived from the route table: captures are filled with ids (a uuid for an
	// application password), which the batch check comes before.
	capture := regexp.MustCompile(`\{[a-z_]+\*?\}`)
	var requests []string
	for _, r := range schema.Routes {
		if r.Interface != schema.CMS || r.Batch || r.Method == "GET" {
			continue
		}
		path := capture.ReplaceAllStringFunc(r.Path, func(c string) string {
			switch c {
			case "{uuid}":
				return "6f1e7c2a-1b2c-4d3e-8f90-a1b2c3d4e5f6"
			case "{id*}", "{parent*}": // a template id
				return "vitrine-blocks//index"
			case "{name*}": // an ability name
				return "vitrine/get-post"
			}
			return "1"
		})
		requests = append(requests, fmt.Sprintf(`{"method":%q,"path":%q,"body":{"title":"Not run"}}`, r.Method, path))
	}
	if len(requests) < 10 {
		t.Fatalf("only %d routes without batch in the table: %v", len(requests), requests)
	}
	const notAllowed = `{"code":"rest_batch_not_allowed","message":"The requested route does not support batch requests.","data":{"status":400}}`
	valid := `{"path":"/cms/v2/posts","body":{"title":"Valid, never run","status":"publish"}}`
	posts := func() int {
		r := call(t, "GET", s.originAddr, host, "/index.php?rest_route=/cms/v2/posts&status=any", "", "Authorization", auth)
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		n, _ := strconv.Atoi(r.header.Get("X-WP-Total"))
		return n
	}
	before := posts()
	for _, mode := range []string{"normal", "require-all-validate"} {
		for _, who := range []string{"admin", "anonymous"} {
			// At most 25 requests per batch: the refused ones in chunks, the last request valid.
			for start := 0; start < len(requests); start += batchChunk {
				chunk := requests[start:min(start+batchChunk, len(requests))]
				body := `{"validation":"` + mode + `","requests":[` + strings.Join(chunk, ",") + `,` + valid + `]}`
				var h []string
				if who == "admin" {
					h = []string{"Authorization", auth}
				}
				if mode == "normal" {
					body = strings.Replace(body, valid, `{"method":"DELETE","path":"/cms/v2/posts/999999?force=true"}`, 1)
				}
				r := call(t, "POST", e.addr, host, "/index.php?rest_route=/batch/v1", body, h...)
				a := decode[batchAnswer](t, r)
				if r.status != 207 || len(a.Responses) != len(chunk)+1 {
					t.Fatalf("%s %s: %d %s", mode, who, r.status, r.body)
				}
				if wantFailed := map[string]string{"normal": "", "require-all-validate": "validation"}[mode]; a.Failed != wantFailed {
					t.Errorf("%s %s: failed %q, want %q", mode, who, a.Failed, wantFailed)
				}
				for i, sub := range chunk {
					got := a.Responses[i]
					if got == nil || got.Status != 400 || string(got.Body) != notAllowed {
						t.Errorf("%s %s: %s answered %+v, want 400 %s", mode, who, sub, got, notAllowed)
					}
				}
				last := a.Responses[len(chunk)]
				switch {
				case mode == "require-all-validate" && last != nil:
					t.Errorf("%s %s: the valid request answered %d %s, want null (nothing runs)", mode, who, last.Status, last.Body)
				case mode == "normal" && who == "admin" && (last == nil || last.Status != 404):
					t.Errorf("%s %s: the batch-capable request answered %+v, want it run (404 rest_post_invalid_id)", mode, who, last)
				}
			}
		}
	}
	if n := posts(); n != before {
		t.Fatalf("%d posts after the batches, %d before: a refused or unvalidated request ran", n, before)
	}
}

// batchChunk is how many refused requests a batch of the test carries, besides its last one.
const batchChunk = 24
