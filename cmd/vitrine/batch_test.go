package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"vitrine/edge"
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
