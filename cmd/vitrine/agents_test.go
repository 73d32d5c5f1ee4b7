package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/origin/agents"
	"vitrine/origin/store"
	"vitrine/schema"
)

// agent calls an agent route through the edge with a session token (none when token is "").
func (c *cmsSite) agent(token, method, route, body string) *response {
	c.t.Helper()
	uri := "/index.php?rest_route=" + route
	if r, q, ok := strings.Cut(route, "?"); ok {
		uri = "/index.php?rest_route=" + r + "&" + q
	}
	var h []string
	if token != "" {
		h = append(h, "Authorization", "Bearer "+token)
	}
	return call(c.t, method, c.edge, c.host, uri, body, h...)
}

// connect makes an agent session as role and returns the connect answer.
func (c *cmsSite) connect(role schema.Role, body string) map[string]any {
	c.t.Helper()
	r := c.rest(role, "POST", "/agent/v1/connect", body)
	c.want(r, 201, "")
	return r.json(c.t)
}

// result checks an execute answer: its status, the code of its error ("" for an output) and
// whether it was replayed, and returns it.
func (c *cmsSite) result(r *response, status int, code string, replayed bool) map[string]any {
	c.t.Helper()
	if r.status != status {
		c.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	m := r.json(c.t)
	if m["status"] != float64(status) || m["replayed"] != replayed || (r.header.Get("Agent-Replayed") == "true") != replayed {
		c.t.Fatalf("result %s (Agent-Replayed %q), want status %d replayed %v", r.body, r.header.Get("Agent-Replayed"), status, replayed)
	}
	if code == "" {
		if m["output"] == nil || m["error"] != nil {
			c.t.Fatalf("no output: %s", r.body)
		}
		return m
	}
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != code {
		c.t.Fatalf("error %s, want code %s", r.body, code)
	}
	return m
}

// drafts lists the titles of the editor's drafts titled title.
func (c *cmsSite) drafts(title string) int {
	c.t.Helper()
	r := c.rest(schema.RoleEditor, "GET", "/cms/v2/posts?status=draft&per_page=100&search="+url.QueryEscape(title), "")
	c.want(r, 200, "")
	var posts []struct {
		Title struct{ Rendered string } `json:"title"`
	}
	if err := json.Unmarshal(r.body, &posts); err != nil {
		c.t.Fatal(err)
	}
	n := 0
	for _, p := range posts {
		if p.Title.Rendered == title {
			n++
		}
	}
	return n
}

// TestAbilities drives cms-abilities/v1 through an edge with WordPress's statuses, codes and
// messages: list, describe, categories, and runs with their method, input and permission checks.
func TestAbilities(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newCMSSite(t)
	editor, subscriber := schema.RoleEditor, schema.RoleSubscriber

	c.want(c.rest("", "GET", "/cms-abilities/v1/abilities", ""), 401, "rest_forbidden")
	c.want(c.rest("", "GET", "/cms-abilities/v1/abilities?per_page=0", ""), 400, "rest_invalid_param") // arguments first
	r := c.rest(subscriber, "GET", "/cms-abilities/v1/abilities", "")
	c.want(r, 200, "")
	var list []agents.AbilityView
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 9 || r.header.Get("X-WP-Total") != "9" || r.header.Get("X-WP-TotalPages") != "1" {
		t.Fatalf("list: %v %s %v", r.header, r.body, err)
	}
	r = c.rest(subscriber, "GET", "/cms-abilities/v1/abilities?per_page=4&page=2", "")
	c.want(r, 200, "")
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 4 || r.header.Get("X-WP-TotalPages") != "3" ||
		!strings.Contains(r.header.Get("Link"), `page=3>; rel="next"`) || !strings.Contains(r.header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 2: %v %s", r.header, r.body)
	}
	r = c.rest(subscriber, "GET", "/cms-abilities/v1/abilities?category=Commerce", "")
	if json.Unmarshal(r.body, &list); len(list) != 4 || list[0].Category != "commerce" {
		t.Fatalf("commerce: %s", r.body)
	}
	r = c.rest(subscriber, "GET", "/cms-abilities/v1/abilities/vitrine/search-content", "")
	c.want(r, 200, "")
	m := r.json(t)
	meta, _ := m["meta"].(map[string]any)
	if m["name"] != "vitrine/search-content" || m["category"] != "content" || meta["show_in_rest"] != true ||
		fmt.Sprint(meta["annotations"]) != "map[destructive:false idempotent:true readonly:true]" ||
		!strings.Contains(string(r.body), `"required":["search"]`) ||
		!strings.Contains(string(r.body), `/index.php?rest_route=/cms-abilities/v1/abilities/vitrine/search-content/run"`) {
		t.Fatalf("describe: %s", r.body)
	}
	if m := c.rest(subscriber, "GET", "/cms-abilities/v1/abilities/vitrine/get-post?context=embed", "").json(t); m["name"] != "vitrine/get-post" || m["description"] != nil || m["input_schema"] != nil {
		t.Fatalf("embed context: %v", m)
	}
	c.want(c.rest(subscriber, "GET", "/cms-abilities/v1/abilities/vitrine/nope", ""), 404, "rest_ability_not_found")
	c.want(c.rest("", "GET", "/cms-abilities/v1/abilities/vitrine/nope", ""), 401, "rest_forbidden")
	r = c.rest(subscriber, "GET", "/cms-abilities/v1/categories", "")
	if c.want(r, 200, ""); r.header.Get("X-WP-Total") != "2" || !strings.Contains(string(r.body), `"slug":"content"`) {
		t.Fatalf("categories: %s", r.body)
	}
	c.want(c.rest(subscriber, "GET", "/cms-abilities/v1/categories/commerce", ""), 200, "")
	c.want(c.rest(subscriber, "GET", "/cms-abilities/v1/categories/nope", ""), 404, "rest_ability_category_not_found")

	// Runs: unknown 404, wrong method 405, bad input 400, no permission 401/403, in that order.
	const run = "/cms-abilities/v1/abilities/vitrine/"
	c.want(c.rest(editor, "GET", "/cms-abilities/v1/abilities/vitrine/nope/run", ""), 404, "rest_ability_not_found")
	r = c.rest(editor, "POST", run+"search-content/run", `{"input":{"search":"tea"}}`)
	if c.want(r, 405, "rest_ability_invalid_method"); r.json(t)["message"] != "Read-only abilities require GET method." {
		t.Errorf("405 message: %s", r.body)
	}
	c.want(c.rest(editor, "GET", run+"create-draft-post/run?input[title]=x", ""), 405, "rest_ability_invalid_method")
	c.want(c.rest(editor, "PUT", run+"create-draft-post/run", `{"input":{"title":"x"}}`), 405, "rest_ability_invalid_method")
	c.want(c.rest(editor, "POST", run+"trash-draft-post/run", `{"input":{"id":1}}`), 405, "rest_ability_invalid_method")
	r = c.rest(editor, "POST", run+"create-draft-post/run", `{"input":{"title":7}}`)
	if c.want(r, 400, "ability_invalid_input"); r.json(t)["message"] != `Ability "vitrine/create-draft-post" has invalid input. Reason: input[title] is not of type string.` {
		t.Errorf("invalid input message: %s", r.body)
	}
	c.want(c.rest(editor, "POST", run+"create-draft-post/run", `{"input":`), 400, "rest_invalid_json")
	c.want(c.rest(editor, "GET", run+"search-content/run", ""), 400, "ability_invalid_input") // no input at all
	c.want(c.rest("", "GET", run+"search-content/run?input[search]=tea", ""), 401, "rest_ability_cannot_execute")
	c.want(c.rest(editor, "POST", run+"update-product-price/run", `{"input":{"variant_id":1,"currency":"USD","amount":100}}`), 403, "rest_ability_cannot_execute")
	c.want(c.rest(subscriber, "POST", run+"create-draft-post/run", `{"input":{"title":"x"}}`), 403, "rest_ability_cannot_execute")

	c.want(c.rest(schema.RoleAdministrator, "POST", "/cms/v2/posts", `{"title":"Tea notes","content":"Green tea, brewed cool.","status":"publish"}`), 201, "")
	r = c.rest(subscriber, "GET", run+"search-content/run?input[search]=tea&input[per_page]=5", "")
	if m := r.json(t); r.status != 200 || fmt.Sprint(m["total"]) != "1" || !strings.Contains(string(r.body), `"title":"Tea notes"`) {
		t.Fatalf("search run: %s", r.body)
	}
	r = c.rest(editor, "POST", run+"create-draft-post/run", `{"input":{"title":"Run draft","excerpt":"Short."}}`)
	if m := r.json(t); r.status != 200 || m["status"] != "draft" || r.header.Get("Vitrine-Write-Version") == "" {
		t.Fatalf("draft run: %v %s", r.header, r.body)
	}
	if n := c.drafts("Run draft"); n != 1 {
		t.Fatalf("%d drafts made by the run", n)
	}
}

// TestAgentSessions drives agent/v1 through an edge: an editor's session with a grant it may
// only partly use, reads and writes, replays of a request id, refusals, the audit in status, a
// rate limit, an administrator's price change the storefront shows, a write cut off mid-run, and
// twenty concurrent duplicates of one write.
func TestAgentSessions(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	c := newCMSSite(t)
	admin, editor, subscriber := schema.RoleAdministrator, schema.RoleEditor, schema.RoleSubscriber
	ctx := context.Background()

	c.want(c.rest(admin, "POST", "/cms/v2/posts", `{"title":"Tea notes","content":"Green tea, brewed cool.","status":"publish"}`), 201, "")
	r := call(t, "POST", c.edge, c.host, "/api/admin/products", `{"title":"Kettle","slug":"kettle","status":"active","prices":{"USD":2500}}`,
		"Authorization", c.auth[admin])
	if r.status != 201 {
		t.Fatalf("product: %d %s", r.status, r.body)
	}
	r = call(t, "POST", c.edge, c.host, fmt.Sprintf("/api/admin/products/%d/variants", id(r.json(t))), `{"sku":"KETTLE-1","title":"Default","stock":7}`,
		"Authorization", c.auth[admin])
	if r.status != 201 {
		t.Fatalf("variant: %d %s", r.status, r.body)
	}
	variant := id(r.json(t))

	// Connect: an application password, a known non-empty grant, bounded lifetime and rate.
	c.want(c.rest("", "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post"]}`), 401, "rest_not_logged_in")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{}`), 400, "rest_missing_callback_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":[]}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":["vitrine/nope"]}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post","vitrine/get-post"]}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post"],"expires_in":86401}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post"],"calls_per_minute":601}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post"],"scopes":[]}`), 400, "rest_invalid_param")
	sess := c.connect(editor, `{"abilities":["vitrine/search-content","vitrine/create-draft-post","vitrine/update-product-price"],"label":"Writer bot","calls_per_minute":100}`)
	tok, _ := sess["token"].(string)
	expires, _ := time.Parse(time.RFC3339, fmt.Sprint(sess["expires_at"]))
	if !agents.WellFormed(tok) || sess["label"] != "Writer bot" || time.Until(expires) < 59*time.Minute || time.Until(expires) > 61*time.Minute ||
		fmt.Sprint(sess["limits"]) != "map[calls_per_minute:100 window_seconds:60]" {
		t.Fatalf("connect: %v", sess)
	}
	c.want(c.agent(tok, "POST", "/agent/v1/connect", `{"abilities":["vitrine/get-post"]}`), 401, "rest_not_logged_in") // a session makes no sessions

	// Status lists the grant, with what the editor may run.
	r = c.agent(tok, "GET", "/agent/v1/status", "")
	var st agents.Status
	if c.want(r, 200, ""); json.Unmarshal(r.body, &st) != nil || len(st.Session.Abilities) != 3 || st.Session.User.Name != "The editor" {
		t.Fatalf("status: %s", r.body)
	}
	for _, g := range st.Session.Abilities {
		if g.Permitted != (g.Name != "vitrine/update-product-price") {
			t.Errorf("%s permitted %v", g.Name, g.Permitted)
		}
	}

	exec := func(token, body string) *response { return c.agent(token, "POST", "/agent/v1/execute", body) }
	// A read, then a write, replayed by its request id.
	m := c.result(exec(tok, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 200, "", false)
	if !strings.Contains(fmt.Sprint(m["output"]), "title:Tea notes") || m["request_id"] != nil {
		t.Fatalf("search: %v", m)
	}
	const draft = `{"ability":"vitrine/create-draft-post","input":{"title":"Agent draft","content":"<p>By a bot.</p>"},"request_id":"draft-1"}`
	r = exec(tok, draft)
	first := c.result(r, 200, "", false)
	if r.header.Get("Vitrine-Write-Version") == "" || first["request_id"] != "draft-1" {
		t.Fatalf("write: %v %s", r.header, r.body)
	}
	again := c.result(exec(tok, draft), 200, "", true)
	if fmt.Sprint(again["output"]) != fmt.Sprint(first["output"]) {
		t.Fatalf("replay %v, first %v", again["output"], first["output"])
	}
	if n := c.drafts("Agent draft"); n != 1 {
		t.Fatalf("%d drafts after a replay", n)
	}
	c.want(exec(tok, `{"ability":"vitrine/create-draft-post","input":{"title":"Other"},"request_id":"draft-1"}`), 422, "agent_request_id_reused")
	c.want(exec(tok, `{"ability":"vitrine/create-draft-post","input":{"title":"No id"}}`), 400, "agent_request_id_required")
	c.want(exec(tok, `{"ability":"vitrine/get-post","input":{"id":1}}`), 403, "agent_ability_not_granted")
	c.want(exec(tok, `{"ability":"vitrine/nope"}`), 404, "rest_ability_not_found")
	c.want(exec(tok, `{"input":{}}`), 400, "rest_missing_callback_param")
	c.want(exec(tok, `{"ability":"vitrine/search-content","inputs":{}}`), 400, "rest_invalid_param")
	c.want(exec(tok, `{"ability":`), 400, "rest_invalid_json")
	c.result(exec(tok, `{"ability":"vitrine/create-draft-post","input":{"title":""},"request_id":"draft-2"}`), 400, "ability_invalid_input", false)
	c.result(exec(tok, fmt.Sprintf(`{"ability":"vitrine/update-product-price","input":{"variant_id":%d,"currency":"USD","amount":100},"request_id":"p1"}`, variant)),
		403, "rest_ability_cannot_execute", false)

	// Credentials: none, garbage, unknown, expired, revoked.
	c.want(exec("", `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 401, "agent_token_required")
	c.want(exec("garbage", `{}`), 401, "agent_invalid_token")
	c.want(exec(agents.NewToken(), `{}`), 401, "agent_invalid_token")
	pw := schema.NewAppPassword()
	ed := c.users[editor]
	ap, err := c.s.db.CreateAppPassword(ctx, c.tn, ed.ID, "second", schema.HashAppPassword(c.s.key, pw))
	if err != nil {
		t.Fatal(err)
	}
	expired := agents.NewToken()
	if err := c.s.db.CreateAgentSession(ctx, c.tn, &store.AgentSession{UserID: ed.ID, Abilities: []string{"vitrine/search-content"}, CallsPerMinute: 5},
		agents.HashToken(c.s.key, expired), schema.HashAppPassword(c.s.key, pw), -time.Minute, 100); err != nil {
		t.Fatal(err)
	}
	c.want(exec(expired, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 401, "agent_session_expired")
	r = call(t, "POST", c.edge, c.host, "/index.php?rest_route=/agent/v1/connect", `{"abilities":["vitrine/search-content"]}`,
		"Authorization", basic(ed.Login, pw))
	if r.status != 201 {
		t.Fatalf("connect with the second password: %d %s", r.status, r.body)
	}
	revoked := r.json(t)["token"].(string)
	c.result(exec(revoked, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 200, "", false)
	if err := c.s.db.RevokeAppPassword(ctx, c.tn, ed.ID, ap.UUID); err != nil {
		t.Fatal(err)
	}
	c.want(exec(revoked, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 401, "agent_invalid_token")

	// The audit, newest first, refusals included.
	r = c.agent(tok, "GET", "/agent/v1/status", "")
	if c.want(r, 200, ""); json.Unmarshal(r.body, &st) != nil {
		t.Fatal(r.body)
	}
	var got []string
	for _, call := range st.Calls {
		code := ""
		if call.Code != nil {
			code = *call.Code
		}
		got = append(got, fmt.Sprintf("%s %d %s %v", call.Ability, call.Status, code, call.Replayed))
	}
	want := []string{
		"vitrine/update-product-price 403 rest_ability_cannot_execute false",
		"vitrine/create-draft-post 400 ability_invalid_input false",
		" 400 rest_invalid_json false",
		" 400 rest_invalid_param false",
		" 400 rest_missing_callback_param false",
		"vitrine/nope 404 rest_ability_not_found false",
		"vitrine/get-post 403 agent_ability_not_granted false",
		"vitrine/create-draft-post 400 agent_request_id_required false",
		"vitrine/create-draft-post 422 agent_request_id_reused false",
		"vitrine/create-draft-post 200  true",
		"vitrine/create-draft-post 200  false",
		"vitrine/search-content 200  false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Every call counts, refused or not (a minute boundary on the way only lowers the estimate).
	if st.Limits.Remaining == nil || *st.Limits.Remaining < 100-12 || *st.Limits.Remaining >= 100 {
		t.Errorf("remaining %v after 12 calls", st.Limits.Remaining)
	}
	// Status by id, with an application password: the session's user or an administrator.
	c.want(c.rest(editor, "GET", "/agent/v1/status?session="+fmt.Sprint(sess["id"]), ""), 200, "")
	c.want(c.rest(admin, "GET", "/agent/v1/status?session="+fmt.Sprint(sess["id"]), ""), 200, "")
	c.want(c.rest(subscriber, "GET", "/agent/v1/status?session="+fmt.Sprint(sess["id"]), ""), 404, "agent_session_not_found")
	c.want(c.rest("", "GET", "/agent/v1/status", ""), 401, "agent_token_required")

	// A write cut off mid-run (its origin died after the claim): never run again.
	sessID := fmt.Sprint(sess["id"])
	crashed := `{"title":"Crashed draft"}`
	sum := sha256.Sum256([]byte(crashed))
	if prior, err := c.s.db.ClaimAgentRequest(ctx, c.tn, &store.AgentRequest{SessionID: sessID, RequestID: "crashed",
		Ability: "vitrine/create-draft-post", InputDigest: sum[:], LeaseUntil: time.Now().Add(-time.Second)}); err != nil || prior != nil {
		t.Fatalf("claim: %v %v", prior, err)
	}
	c.want(exec(tok, `{"ability":"vitrine/create-draft-post","input":`+crashed+`,"request_id":"crashed"}`), 409, "agent_outcome_unknown")
	if n := c.drafts("Crashed draft"); n != 0 {
		t.Fatalf("a cut-off write ran again: %d drafts", n)
	}
	// A duplicate of a write still running waits for its answer.
	pending := `{"title":"Pending draft"}`
	sum = sha256.Sum256([]byte(pending))
	if _, err := c.s.db.ClaimAgentRequest(ctx, c.tn, &store.AgentRequest{SessionID: sessID, RequestID: "pending",
		Ability: "vitrine/create-draft-post", InputDigest: sum[:], LeaseUntil: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		c.s.db.FinishAgentRequest(ctx, c.tn, sessID, "pending", 200,
			[]byte(`{"ability":"vitrine/create-draft-post","request_id":"pending","status":200,"output":{"id":1,"status":"draft","title":"Pending draft","link":"x"},"replayed":false}`))
	}()
	c.result(exec(tok, `{"ability":"vitrine/create-draft-post","input":`+pending+`,"request_id":"pending"}`), 200, "", true)

	// The rate limit holds per session.
	slow := c.connect(editor, `{"abilities":["vitrine/search-content"],"calls_per_minute":2}`)["token"].(string)
	for range 2 {
		c.result(exec(slow, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`), 200, "", false)
	}
	r = exec(slow, `{"ability":"vitrine/search-content","input":{"search":"tea"}}`)
	if c.want(r, 429, "agent_rate_limited"); r.header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After: %v", r.header)
	}

	// An administrator's session sets a price, and the storefront shows it.
	price := c.connect(admin, `{"abilities":["vitrine/update-product-price","vitrine/update-product-stock"]}`)["token"].(string)
	r = exec(price, fmt.Sprintf(`{"ability":"vitrine/update-product-price","input":{"variant_id":%d,"currency":"USD","amount":1234},"request_id":"price-1"}`, variant))
	if m := c.result(r, 200, "", false); fmt.Sprint(m["output"].(map[string]any)["amount"]) != "1234" {
		t.Fatalf("price: %s", r.body)
	}
	r = call(t, "GET", c.edge, c.host, "/api/products/kettle/variants?vitrine_min_version="+r.header.Get("Vitrine-Write-Version"), "")
	if r.status != 200 || !strings.Contains(string(r.body), `"amount":1234`) {
		t.Fatalf("storefront after the price change: %d %s", r.status, r.body)
	}
	c.result(exec(price, fmt.Sprintf(`{"ability":"vitrine/update-product-stock","input":{"variant_id":%d,"stock":0},"request_id":"stock-1"}`, variant)), 200, "", false)

	// Twenty concurrent executes of one write: one draft.
	busy := c.connect(editor, `{"abilities":["vitrine/create-draft-post"],"calls_per_minute":600}`)["token"].(string)
	var wg sync.WaitGroup
	answers := make([]*response, 20)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = exec(busy, `{"ability":"vitrine/create-draft-post","input":{"title":"Parallel draft"},"request_id":"same"}`)
		}()
	}
	wg.Wait()
	ran := 0
	for _, a := range answers {
		if a.status != 200 {
			t.Fatalf("concurrent duplicate: %d %s", a.status, a.body)
		}
		if a.json(t)["replayed"] == false {
			ran++
		}
	}
	if n := c.drafts("Parallel draft"); ran != 1 || n != 1 {
		t.Fatalf("%d runs, %d drafts of twenty concurrent duplicates", ran, n)
	}
}

// TestAgentOrdersAwaitingFulfilment: staff's order list filters by status and fulfilment status
// in either order of time, and the orders ability lists the paid orders not yet shipped, oldest
// first, through a session and through its run route.
func TestAgentOrdersAwaitingFulfilment(t *testing.T) {
	t.Parallel() // a system of its own (see system)
	sh := newShop(t)
	writer, _ := sh.newKey(sh.host, sh.auth, `{"name":"erp","scopes":["write_orders"]}`)
	kettle := sh.product("Kettle", 3000, 100)
	a := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 2})
	b := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 1})
	refunded := sh.orderAt(sh.host, guest, nil, lineQty{kettle, 1})
	if r := sh.do("POST", "/api/orders/"+refunded.Reference+"/refund", "", `{"lines":[{"line":1,"quantity":1}]}`,
		"Authorization", "Bearer "+writer, "Idempotency-Key", "all"); r.status != 201 {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}

	list := func(query string, status ...int) []string {
		t.Helper()
		want := 200
		if len(status) > 0 {
			want = status[0]
		}
		r := call(t, "GET", sh.edge, sh.host, "/api/admin/orders"+query, "", "Authorization", sh.auth)
		if r.status != want {
			t.Fatalf("%s: %d %s", query, r.status, r.body)
		}
		if want != 200 {
			return nil
		}
		var refs []string
		for _, o := range decode[schema.Page[schema.OrderView]](t, r).Data {
			refs = append(refs, o.Reference)
		}
		return refs
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{refunded.Reference, b.Reference, a.Reference}},
		{"?order=asc&per_page=2", []string{a.Reference, b.Reference}},
		{"?status=paid,partially_refunded&fulfillment_status=unfulfilled,partially_fulfilled&order=asc", []string{a.Reference, b.Reference}},
		{"?status=refunded", []string{refunded.Reference}},
		{"?fulfillment_status=delivered", nil},
	} {
		if got := list(tc.query); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
	}
	list("?status=shipped", 400)
	list("?order=sideways", 400)
	if r := call(t, "GET", sh.edge, sh.host, "/api/admin/orders", ""); r.status != 401 {
		t.Fatalf("anonymous: %d %s", r.status, r.body)
	}

	cms := func(method, route, body string, auth string) *response {
		t.Helper()
		uri := "/index.php?rest_route=" + route
		if r, q, ok := strings.Cut(route, "?"); ok {
			uri = "/index.php?rest_route=" + r + "&" + q
		}
		return call(t, method, sh.edge, sh.host, uri, body, "Authorization", auth)
	}
	r := cms("POST", "/agent/v1/connect", `{"abilities":["vitrine/list-orders-awaiting-fulfilment","vitrine/search-products"]}`, sh.auth)
	if r.status != 201 {
		t.Fatalf("connect: %d %s", r.status, r.body)
	}
	tok := "Bearer " + r.json(t)["token"].(string)
	r = cms("POST", "/agent/v1/execute", `{"ability":"vitrine/list-orders-awaiting-fulfilment"}`, tok)
	var res struct {
		Status int
		Output struct {
			Total  int
			Orders []struct {
				Reference string
				Total     schema.Money
				Items     []struct{ Quantity int64 }
			}
		}
	}
	if err := json.Unmarshal(r.body, &res); err != nil || r.status != 200 || res.Output.Total != 2 || len(res.Output.Orders) != 2 ||
		res.Output.Orders[0].Reference != a.Reference || res.Output.Orders[0].Items[0].Quantity != 2 || res.Output.Orders[0].Total.Amount == 0 {
		t.Fatalf("awaiting fulfilment: %d %s", r.status, r.body)
	}
	r = cms("POST", "/agent/v1/execute", `{"ability":"vitrine/search-products","input":{"query":"kettle"}}`, tok)
	if r.status != 200 || !strings.Contains(string(r.body), `"title":"Kettle"`) || !strings.Contains(string(r.body), `"amount":3000`) {
		t.Fatalf("search products: %d %s", r.status, r.body)
	}
	r = cms("GET", "/cms-abilities/v1/abilities/vitrine/list-orders-awaiting-fulfilment/run?input[per_page]=1", "", sh.auth)
	if err := json.Unmarshal(r.body, &res.Output); err != nil || r.status != 200 || res.Output.Total != 2 || len(res.Output.Orders) != 1 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
}
